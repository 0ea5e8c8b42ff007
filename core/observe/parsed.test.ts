import { describe, expect, it } from 'vitest';
import { retainedBytes } from '../heap-test-support.js';
import type { ExtendedDeploymentObject } from '../kube/objects.js';
import { REMEMBERED_SPEC_PARSES, parsedDeployRegion, parsedExtendedDeployment, parsedMovesEnabled, parsedStatus } from './parsed.js';

const ed = (resourceVersion: string | undefined, replicas = 5): ExtendedDeploymentObject => ({
  apiVersion: 'extendeddeployment.io/v1beta1',
  kind: 'ExtendedDeployment',
  metadata: { name: 'web', namespace: 'shop', ...(resourceVersion !== undefined && { resourceVersion }) },
  spec: {
    replicas,
    selector: { matchLabels: { app: 'web' } },
    template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'app', image: 'shop/web:1' }] } },
    regions: [{ name: 'amd' }],
  },
  status: { phase: 'Healthy', currentGroup: 2 },
});

const valueOf = <T>(result: { ok: true; value: T } | { ok: false }): T => {
  if (!result.ok) throw new Error('expected a valid object');
  return result.value;
};

describe('parsed objects, per object and resourceVersion', () => {
  it('parses an object once per resourceVersion, and again once the object is at another', () => {
    const object = ed('7');
    const first = parsedExtendedDeployment(object);
    expect(parsedExtendedDeployment(object)).toBe(first);
    expect(parsedStatus(object)).toBe(parsedStatus(object));
    expect(parsedStatus(object)).toMatchObject({ phase: 'Healthy', currentGroup: 2 });
    // The same object changed in place with a new resourceVersion (as a test fixture may be): parsed again.
    Object.assign(object.metadata!, { resourceVersion: '8' });
    Object.assign(object.spec!, { replicas: 9 });
    expect(valueOf(parsedExtendedDeployment(object)).spec.replicas).toBe(9);
    // Another object at the same resourceVersion has results of its own.
    expect(valueOf(parsedExtendedDeployment(ed('8', 3))).spec.replicas).toBe(3);
  });

  it('decides whether moves are on once per resourceVersion, also for an invalid spec', () => {
    const object = ed('3');
    expect(parsedMovesEnabled(object)).toBe(false);
    // Changed in place at the same version (nothing the cache does): the answer of that version stands.
    Object.assign(object.spec!, { strategy: { autoReschedule: { enable: true } } });
    expect(parsedMovesEnabled(object)).toBe(false);
    Object.assign(object.metadata!, { resourceVersion: '4' });
    expect(parsedMovesEnabled(object)).toBe(true);
    const invalid = { ...ed('5'), spec: { replicas: 'many', strategy: { faultMove: { enable: true } } } } as ExtendedDeploymentObject;
    expect(parsedExtendedDeployment(invalid).ok).toBe(false);
    expect(parsedMovesEnabled(invalid)).toBe(true);
  });

  it('parses an ExtendedDeployment once per content: a version that changed only its status shares the parse', () => {
    const before = ed('20');
    const statusOnly = { ...ed('21'), status: { phase: 'Progressing', currentGroup: 1 } };
    const first = valueOf(parsedExtendedDeployment(before));
    const second = valueOf(parsedExtendedDeployment(statusOnly));
    expect(second.spec).toBe(first.spec);
    expect(second.metadata.resourceVersion).toBe('21');
    expect(first.metadata.resourceVersion).toBe('20');
    // Another spec, or other metadata (an annotation: an approval), is parsed anew.
    expect(valueOf(parsedExtendedDeployment(ed('22', 7))).spec.replicas).toBe(7);
    const annotated = ed('23');
    const withApproval = { ...annotated, metadata: { ...annotated.metadata, annotations: { note: 'x' } } };
    expect(valueOf(parsedExtendedDeployment(withApproval)).metadata.annotations).toEqual({ note: 'x' });
    expect(valueOf(parsedExtendedDeployment(withApproval)).spec).not.toBe(first.spec);
  });

  it("remembers one parse per object: a new spec replaces the old one's", () => {
    const named = (name: string, resourceVersion: string, replicas: number): ExtendedDeploymentObject => {
      const object = ed(resourceVersion, replicas);
      return { ...object, metadata: { ...object.metadata, name } };
    };
    const v1 = valueOf(parsedExtendedDeployment(named('cart', '40', 1))).spec;
    const other = valueOf(parsedExtendedDeployment(named('shelf', '41', 1))).spec;
    // Another object with the same content has a parse of its own, and keeps it while the first one changes.
    expect(other).not.toBe(v1);
    const v2 = valueOf(parsedExtendedDeployment(named('cart', '42', 2))).spec;
    expect(v2.replicas).toBe(2);
    expect(valueOf(parsedExtendedDeployment(named('shelf', '43', 1))).spec).toBe(other);
    // The rollout's spec replaced the first one's: back to it (a revert), it is parsed anew.
    expect(valueOf(parsedExtendedDeployment(named('cart', '44', 1))).spec).not.toBe(v1);
  });

  it('remembers parses of at most REMEMBERED_SPEC_PARSES objects, the least recently used going first', () => {
    const named = (name: string, resourceVersion: string): ExtendedDeploymentObject => {
      const object = ed(resourceVersion, 3);
      return { ...object, metadata: { ...object.metadata, name } };
    };
    const first = valueOf(parsedExtendedDeployment(named('first', '50'))).spec;
    for (let i = 0; i < REMEMBERED_SPEC_PARSES; i++) parsedExtendedDeployment(named(`other-${i}`, '51'));
    expect(valueOf(parsedExtendedDeployment(named('first', '52'))).spec).not.toBe(first);
    // Looked at again now and then, an object stays while others come.
    const kept = valueOf(parsedExtendedDeployment(named('kept', '53'))).spec;
    for (let i = 0; i < REMEMBERED_SPEC_PARSES + 10; i++) {
      parsedExtendedDeployment(named(`more-${i}`, '54'));
      if (i % 100 === 0) parsedExtendedDeployment(named('kept', `55-${i}`));
    }
    expect(valueOf(parsedExtendedDeployment(named('kept', '56'))).spec).toBe(kept);
  });

  it('keeps what it remembers of a content as a digest: the parse holds the content once, not again as JSON', () => {
    const count = 100;
    const note = 'n'.repeat(20_000);
    const noted = (i: number): ExtendedDeploymentObject => {
      const object = ed('60', 3);
      // Each object's own text (as a watch cache has it), read by the parse and by the content's JSON.
      return { ...object, metadata: { ...object.metadata, name: `noted-${i}`, annotations: { note: `${i}${note}` } } };
    };
    const held = retainedBytes(() => {
      for (let i = 0; i < count; i++) parsedExtendedDeployment(noted(i));
    });
    // The annotations the remembered parses hold are count × 20 kB (less what the parses they push out held); their
    // JSON again would double it.
    expect(held).toBeGreaterThan(count * note.length * 0.5);
    expect(held).toBeLessThan(count * note.length * 1.5);
  });

  it('parses objects without a resourceVersion every time', () => {
    const object = ed(undefined);
    expect(parsedExtendedDeployment(object)).not.toBe(parsedExtendedDeployment(object));
    expect(parsedExtendedDeployment(object)).toEqual(parsedExtendedDeployment(object));
  });

  it('freezes what it shares, so that no look can change the next one', () => {
    const spec = valueOf(parsedExtendedDeployment(ed('1'))).spec;
    expect(() => {
      (spec.regions as { name: string }[]).push({ name: 'arm' });
    }).toThrow(TypeError);
    expect(() => Object.assign(spec.template.metadata!, { name: 'x' })).toThrow(TypeError);
    const region = valueOf(
      parsedDeployRegion({
        apiVersion: 'extendeddeployment.io/v1beta1',
        kind: 'DeployRegion',
        metadata: { name: 'amd', resourceVersion: '3' },
        spec: { matchLabels: { zone: 'a' } },
      }),
    );
    expect(Object.isFrozen(region.spec.matchLabels)).toBe(true);
  });

  it('reads an unreadable status as none, and a missing one too', () => {
    expect(parsedStatus({ ...ed('2'), status: { phase: 42 } })).toBeUndefined();
    const { status: _status, ...withoutStatus } = ed('3');
    expect(parsedStatus(withoutStatus)).toBeUndefined();
  });
});
