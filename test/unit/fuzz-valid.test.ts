// Property: every valid set of specs validates, renders, and renders deterministically: the same input twice gives
// byte-identical YAML (through the constructs' emitters, as `cdk8s synth` and `edctl render` write it), and neither
// the order of keys in any object nor the order of the documents changes a revision, a replica count or a byte of it.
import { App, Chart } from 'cdk8s';
import { Construct } from 'constructs';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { emitRenderedDeployRegion, emitRenderedExtendedDeployment } from '../../constructs/emit.js';
import { appYaml } from '../../constructs/synth.js';
import { parseDeployRegion, parseExtendedDeployment } from '../../core/parse.js';
import { renderSet, type RenderedSet } from '../../core/render.js';
import { formatProblem } from '../../core/problems.js';
import { fuzz, FUZZ_TIMEOUT_MS, Tally } from './fuzz-settings.js';
import { objectsOf, validSpecSet, type Json } from './spec-arbitraries.js';

const tally = new Tally();
afterAll(() => tally.print('valid specs'));

function rendered(objects: readonly unknown[]): RenderedSet {
  const result = renderSet(objects);
  if (!result.ok) throw new Error(`a valid set did not render:\n${result.problems.map(formatProblem).join('\n')}`);
  return result.value;
}

/** The rendered objects as YAML, through the constructs' emitters, in name order (so document order cannot matter). */
function synthesized(set: RenderedSet): string {
  const app = new App();
  const chart = new Chart(app, 'fuzz');
  const byName = <T extends { parsed: { metadata: { name: string } } }>(items: readonly T[]) =>
    [...items].sort((a, b) => (a.parsed.metadata.name < b.parsed.metadata.name ? -1 : 1));
  for (const region of byName(set.deployRegions)) emitRenderedDeployRegion(chart, `region-${region.parsed.metadata.name}`, region);
  for (const ed of byName(set.extendedDeployments)) emitRenderedExtendedDeployment(new Construct(chart, `ed-${ed.parsed.metadata.name}`), ed);
  return appYaml(app);
}

/** The same JSON value with the keys of every object in reverse order. */
function reversedKeys(value: Json): Json {
  if (Array.isArray(value)) return value.map(reversedKeys);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.keys(value)
      .reverse()
      .map((k) => [k, reversedKeys(value[k]!)]),
  );
}

describe('valid specs (generated)', { timeout: FUZZ_TIMEOUT_MS }, () => {
  it('always validate: each object parses, and parsing the parsed object again changes nothing', () => {
    fc.assert(
      fc.property(validSpecSet, (set) => {
        tally.add('parse');
        for (const region of set.regions) expect(parseDeployRegion(region).ok).toBe(true);
        for (const ed of set.extendedDeployments) {
          const once = parseExtendedDeployment(ed);
          if (!once.ok) throw new Error(once.problems.map(formatProblem).join('\n'));
          expect(parseExtendedDeployment(once.value)).toEqual(once);
        }
      }),
      fuzz(0.5),
    );
  });

  it('always render: one workload per region, replicas as distributed, a revision per region', () => {
    fc.assert(
      fc.property(validSpecSet, (set) => {
        tally.add('render');
        const out = rendered(objectsOf(set));
        expect(out.deployRegions).toHaveLength(set.regions.length);
        expect(out.extendedDeployments).toHaveLength(set.extendedDeployments.length);
        for (const ed of out.extendedDeployments) {
          expect(ed.regions.map((r) => r.name)).toEqual(ed.parsed.spec.regions.map((r) => r.name));
          expect(ed.regions.reduce((sum, r) => sum + r.replicas, 0)).toBe(ed.replicas);
          for (const region of ed.regions) {
            expect(region.revision).toMatch(/^[0-9a-f]{10}$/);
            expect(region.workload['kind']).toBe(ed.parsed.spec.subsetType === 'InplaceSet' ? 'ReplicaSet' : ed.parsed.spec.subsetType);
            expect((region.workload['spec'] as { replicas?: unknown }).replicas).toBeUndefined();
          }
        }
      }),
      fuzz(0.5),
    );
  });

  it('render deterministically: the same input twice gives byte-identical YAML', () => {
    fc.assert(
      fc.property(validSpecSet, (set) => {
        tally.add('same input twice');
        const first = synthesized(rendered(structuredClone(objectsOf(set))));
        const second = synthesized(rendered(structuredClone(objectsOf(set))));
        expect(second).toBe(first);
      }),
      fuzz(0.3),
    );
  });

  it('do not depend on key order or document order: same revisions, counts and YAML', () => {
    fc.assert(
      fc.property(validSpecSet, (set) => {
        tally.add('reordered input');
        const original = rendered(objectsOf(set));
        // Every object's keys reversed, ExtendedDeployments before the DeployRegions they use, both lists reversed.
        const shuffled = [...set.extendedDeployments]
          .reverse()
          .concat([...set.regions].reverse())
          .map((o) => reversedKeys(o));
        const reordered = rendered(shuffled);
        const summary = (s: RenderedSet) =>
          Object.fromEntries(
            s.extendedDeployments.map((ed) => [
              ed.parsed.metadata.name,
              { rollout: ed.rolloutRevision, regions: ed.regions.map((r) => [r.name, r.replicas, r.revision]) },
            ]),
          );
        expect(summary(reordered)).toEqual(summary(original));
        expect(synthesized(reordered)).toBe(synthesized(original));
      }),
      fuzz(0.3),
    );
  });
});
