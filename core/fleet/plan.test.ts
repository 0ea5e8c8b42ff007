import { describe, expect, it } from 'vitest';
import { renderSet, type RenderedSet } from '../render.js';
import { fleetPlanOf, inDeclaredOrder, type PlannedCluster } from './plan.js';
import { renderFleet } from './render.js';

const V = 'extendeddeployment.io/v1beta1';
const region = (name: string) => ({ apiVersion: V, kind: 'DeployRegion', metadata: { name }, spec: { matchLabels: { 'kubernetes.io/arch': name } } });
const cluster = (name: string, regions?: string[]) => ({ apiVersion: V, kind: 'Cluster', metadata: { name }, spec: regions ? { regions } : {} });
const ed = (image: string, spec: Record<string, unknown> = {}) => ({
  apiVersion: V,
  kind: 'ExtendedDeployment',
  metadata: { name: 'web', namespace: 'shop' },
  spec: {
    replicas: 6,
    selector: { matchLabels: { app: 'web' } },
    template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'app', image }] } },
    regions: [{ name: 'amd64' }, { name: 'arm64' }],
    ...spec,
  },
});

/** The member clusters of a render with Cluster objects. */
function members(objects: unknown[]): PlannedCluster[] {
  const result = renderFleet(objects);
  if (!result.ok || result.value.layout !== 'clusters') throw new Error('expected a render per cluster');
  return result.value.clusters.map((c) => ({ name: c.cluster.metadata.name, rendered: c.rendered }));
}

function flat(objects: unknown[]): RenderedSet {
  const result = renderSet(objects);
  if (!result.ok) throw new Error('expected a render');
  return result.value;
}

describe('inDeclaredOrder', () => {
  it.each<[string, string[][], string[]]>([
    ['one member', [['amd64', 'arm64']], ['amd64', 'arm64']],
    ['a member with fewer regions first', [['arm64'], ['amd64', 'arm64']], ['amd64', 'arm64']],
    [
      'regions only some members have, each after its predecessor',
      [
        ['a', 'c'],
        ['a', 'b', 'c'],
        ['c', 'd'],
      ],
      ['a', 'b', 'c', 'd'],
    ],
    ['no members', [], []],
  ])('%s', (_, lists, expected) => {
    expect(inDeclaredOrder(lists)).toEqual(expected);
  });
});

describe('fleetPlanOf', () => {
  const fleetObjects = (image: string) => [
    region('amd64'),
    region('arm64'),
    cluster('a', ['amd64']),
    cluster('b'),
    ed(image, { clusters: [{ name: 'a', replicas: 2 }, { name: 'b' }] }),
  ];

  it('plans each member as one cluster, with the members in spec.clusters order and one wave each by default', () => {
    const plan = fleetPlanOf(members(fleetObjects('web:1')));
    expect(plan.clusters.map((c) => [c.name, c.extendedDeployments.map((e) => e.replicas)])).toEqual([
      ['a', [2]],
      ['b', [4]],
    ]);
    const [web] = plan.extendedDeployments;
    expect(web?.regions).toEqual(['amd64', 'arm64']);
    expect(web?.clusters.map((m) => [m.cluster, m.wave, m.regions.map((r) => r.replicas)])).toEqual([
      ['a', 0, [2]],
      ['b', 1, [2, 2]],
    ]);
    expect(web?.waves.map((w) => [w.wave, w.clusters, w.after, w.soakSeconds])).toEqual([
      [0, ['a'], [], 300],
      [1, ['b'], ['a'], 300],
    ]);
    expect(plan.risks).toBeUndefined();
  });

  it('a base without Cluster objects is what every cluster got; a cluster new to a base per cluster starts from nothing', () => {
    const flatBase = flat([region('amd64'), region('arm64'), ed('web:1')]);
    const fromFlat = fleetPlanOf(members(fleetObjects('web:1')), { layout: 'flat', rendered: flatBase });
    expect(fromFlat.extendedDeployments[0]?.clusters.map((m) => [m.cluster, m.fromReplicas, m.replicas])).toEqual([
      ['a', 6, 2],
      ['b', 6, 4],
    ]);
    expect(fromFlat.extendedDeployments[0]?.fromRelease).toBeUndefined();

    const onlyA = members([region('amd64'), region('arm64'), cluster('a'), ed('web:1', { clusters: [{ name: 'a' }] })]);
    const grown = fleetPlanOf(members(fleetObjects('web:2')), { layout: 'clusters', clusters: onlyA });
    const [web] = grown.extendedDeployments;
    expect(web?.fromRelease).toMatch(/^[0-9a-f]{10}$/);
    expect(web?.clusters.map((m) => [m.cluster, m.fromReplicas])).toEqual([
      ['a', 6],
      ['b', undefined],
    ]);
    expect(grown.clusters[1]?.extendedDeployments[0]?.regions.map((r) => r.change)).toEqual(['new', 'new']);
  });

  it('a cluster only the base has is planned as its removal, with the risk', () => {
    const before = members(fleetObjects('web:1'));
    const after = members([region('amd64'), region('arm64'), cluster('a'), ed('web:1', { clusters: [{ name: 'a' }] })]);
    const plan = fleetPlanOf(after, { layout: 'clusters', clusters: before });
    expect(plan.clusters.map((c) => [c.name, c.removed])).toEqual([
      ['a', undefined],
      ['b', true],
    ]);
    expect(plan.risks?.map((r) => [r.kind, r.clusters])).toContainEqual(['extended-deployment-removed', ['b']]);
  });
});
