import { describe, expect, it } from 'vitest';
import { parseExtendedDeployment } from '../parse.js';
import { memberObject } from './member.js';

const object = { kind: 'ExtendedDeployment', name: 'web', namespace: 'shop' };
const raw = {
  apiVersion: 'extendeddeployment.io/v1beta1',
  kind: 'ExtendedDeployment',
  metadata: { name: 'web', namespace: 'shop' },
  spec: {
    replicas: 10,
    selector: { matchLabels: { app: 'web' } },
    template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'web', image: 'web:1' }] } },
    regions: [{ name: 'amd64' }, { name: 'arm64' }, { name: 'gpu' }],
    overriders: [
      { name: 'gpu', overriders: [{ op: 'add', path: '/metadata/labels/gpu', value: 'yes' }] },
      { name: 'amd64', overriders: [{ op: 'add', path: '/metadata/labels/amd', value: 'yes' }] },
    ],
    clusters: [{ name: 'eu-1', overrides: { labels: { geo: 'eu' } } }, { name: 'us-1' }],
  },
};
const parsed = parseExtendedDeployment(raw);
const ed = parsed.ok ? parsed.value : undefined;

describe('memberObject', () => {
  it("cuts spec.regions and spec.overriders to the cluster's regions, and tells where each came from", () => {
    const made = memberObject(raw, ed, { cluster: 'eu-1', index: 0, replicas: 4, regions: [0, 2] }, undefined, object);
    const spec = made.object['spec'] as Record<string, unknown>;
    expect(spec['regions']).toEqual([{ name: 'amd64' }, { name: 'gpu' }]);
    expect((spec['overriders'] as { name: string }[]).map((o) => o.name)).toEqual(['gpu', 'amd64']);
    expect([made.regions, made.overriders]).toEqual([
      [0, 2],
      [0, 1],
    ]);
    expect(spec['replicas']).toBe(4);
    expect(spec).not.toHaveProperty('clusters');
  });

  it('drops spec.overriders when none of its regions is left', () => {
    const made = memberObject(raw, ed, { cluster: 'us-1', index: 1, replicas: 6, regions: [1] }, undefined, object);
    expect([made.object['spec'], made.overriders]).toEqual([expect.not.objectContaining({ overriders: expect.anything() }), []]);
  });

  it("applies the cluster's overrides to the pod template, and only its own", () => {
    const eu = memberObject(raw, ed, { cluster: 'eu-1', index: 0, replicas: 4, regions: [0] }, undefined, object);
    const us = memberObject(raw, ed, { cluster: 'us-1', index: 1, replicas: 6, regions: [0] }, undefined, object);
    expect((eu.object['spec'] as { template: unknown }).template).toEqual({ metadata: { labels: { app: 'web', geo: 'eu' } }, spec: raw.spec.template.spec });
    expect((us.object['spec'] as { template: unknown }).template).toEqual(raw.spec.template);
  });

  it('keeps spec.replicas as written when the split failed, and drops a spec.fleet written in Git', () => {
    const withFleet = { ...raw, spec: { ...raw.spec, fleet: { name: 'x' } } };
    const made = memberObject(withFleet, undefined, { cluster: 'eu-1', index: 0, regions: [0] }, undefined, object);
    expect((made.object['spec'] as { replicas: number }).replicas).toBe(10);
    expect(made.object['spec']).not.toHaveProperty('fleet');
  });

  it('leaves its input alone', () => {
    const copy = structuredClone(raw);
    memberObject(raw, ed, { cluster: 'eu-1', index: 0, replicas: 4, regions: [0] }, undefined, object);
    expect(raw).toEqual(copy);
  });
});
