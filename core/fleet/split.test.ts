import { describe, expect, it } from 'vitest';
import { distributeReplicas } from '../distribution.js';
import { formatProblem } from '../problems.js';
import { splitFleet, type FleetClusters, type FleetSpec } from './split.js';

const object = { kind: 'ExtendedDeployment', name: 'web', namespace: 'shop' };

/** Clusters by name with the DeployRegions each has; every DeployRegion of the render is one of them. */
function clusters(members: Record<string, string[]>, extra: string[] = []): FleetClusters {
  const regions = new Map(Object.entries(members).map(([name, has]) => [name, new Set(has)]));
  return { regions, known: new Set([...Object.values(members).flat(), ...extra]), invalid: new Set() };
}

const both = clusters({ 'canary-1': ['amd64'], 'eu-1': ['amd64', 'arm64'], 'us-1': ['amd64', 'arm64'] });
const twoRegions = [{ name: 'amd64' }, { name: 'arm64' }];

const lines = (spec: FleetSpec, members: FleetClusters = both) => splitFleet(spec, members, object).problems.map(formatProblem);
const shares = (spec: FleetSpec, members: FleetClusters = both) =>
  splitFleet(spec, members, object).members.map((m) => [m.cluster, m.replicas, m.regions, m.regionReplicas]);

describe('splitFleet', () => {
  it.each([
    [
      'the example: 2 to the canary, the rest evenly, then over each cluster’s regions',
      { replicas: 24, regions: twoRegions, clusters: [{ name: 'canary-1', replicas: 2 }, { name: 'eu-1' }, { name: 'us-1' }] },
      [
        ['canary-1', 2, [0], [2]],
        ['eu-1', 11, [0, 1], [6, 5]],
        ['us-1', 11, [0, 1], [6, 5]],
      ],
    ],
    [
      'percentages of spec.replicas, largest remainder, ties to the earlier',
      {
        replicas: 5,
        regions: [{ name: 'amd64' }],
        clusters: [
          { name: 'eu-1', replicas: '50%' },
          { name: 'us-1', replicas: '50%' },
        ],
      },
      [
        ['eu-1', 3, [0], [3]],
        ['us-1', 2, [0], [2]],
      ],
    ],
    [
      'minReplicas first, maxReplicas caps and hands the rest on',
      {
        replicas: 10,
        regions: [{ name: 'amd64' }],
        clusters: [
          { name: 'eu-1', maxReplicas: 2 },
          { name: 'us-1', minReplicas: 1 },
        ],
      },
      [
        ['eu-1', 2, [0], [2]],
        ['us-1', 8, [0], [8]],
      ],
    ],
    [
      'no spec.replicas: the sum of the integer counts',
      {
        regions: [{ name: 'amd64' }],
        clusters: [
          { name: 'eu-1', replicas: 3 },
          { name: 'us-1', replicas: 4 },
        ],
      },
      [
        ['eu-1', 3, [0], [3]],
        ['us-1', 4, [0], [4]],
      ],
    ],
    [
      "a region's percentage takes a share of its cluster's share",
      { replicas: 20, regions: [{ name: 'amd64', replicas: '25%' }, { name: 'arm64' }], clusters: [{ name: 'eu-1' }, { name: 'us-1' }] },
      [
        ['eu-1', 10, [0, 1], [2, 8]],
        ['us-1', 10, [0, 1], [2, 8]],
      ],
    ],
    [
      "a region's integer count applies in every cluster that has it",
      { replicas: 8, regions: [{ name: 'amd64', replicas: 1 }, { name: 'arm64' }], clusters: [{ name: 'eu-1' }, { name: 'us-1' }] },
      [
        ['eu-1', 4, [0, 1], [1, 3]],
        ['us-1', 4, [0, 1], [1, 3]],
      ],
    ],
  ] as const)('%s', (_name, spec, expected) => {
    expect(lines(spec as FleetSpec)).toEqual([]);
    expect(shares(spec as FleetSpec)).toEqual(expected);
  });

  it('splits over clusters exactly as distributeReplicas splits over regions', () => {
    const cases = [
      { total: 7, entries: [{ replicas: '30%' }, { replicas: '30%' }, {}] },
      { total: 13, entries: [{ minReplicas: 5 }, { maxReplicas: 3 }, {}] },
      { total: 9, entries: [{ replicas: 2 }, { replicas: '50%', maxReplicas: 3 }, { maxReplicas: 10 }] },
      { total: 0, entries: [{}, {}] },
    ];
    for (const { total, entries } of cases) {
      const names = entries.map((_, i) => `c${i}`);
      const members = clusters(Object.fromEntries(names.map((n) => [n, ['amd64']])));
      const spec = { replicas: total, regions: [{ name: 'amd64' }], clusters: entries.map((e, i) => ({ ...e, name: names[i]! })) };
      const byRegions = distributeReplicas(total, entries);
      expect(byRegions.ok).toBe(true);
      expect(splitFleet(spec, members, object).members.map((m) => m.replicas)).toEqual(byRegions.ok ? byRegions.replicas : []);
    }
  });

  it.each([
    [
      'a name of no Cluster',
      { replicas: 4, regions: twoRegions, clusters: [{ name: 'eu-1' }, { name: 'eu-9' }] },
      ['ExtendedDeployment shop/web: spec.clusters[1].name: "eu-9" names no Cluster of this render (clusters: canary-1, eu-1, us-1)'],
    ],
    [
      'a cluster named twice',
      { replicas: 4, regions: twoRegions, clusters: [{ name: 'eu-1' }, { name: 'eu-1' }] },
      ['ExtendedDeployment shop/web: spec.clusters[1].name: cluster "eu-1" is listed twice (first at spec.clusters[0])'],
    ],
    [
      'a member with none of the regions',
      { replicas: 4, regions: [{ name: 'arm64' }], clusters: [{ name: 'canary-1' }, { name: 'eu-1' }] },
      ['ExtendedDeployment shop/web: spec.clusters[0].name: cluster "canary-1" has none of the regions of spec.regions'],
    ],
    [
      'a region no member has',
      { replicas: 4, regions: twoRegions, clusters: [{ name: 'canary-1' }] },
      ['ExtendedDeployment shop/web: spec.regions[1].name: DeployRegion "arm64" is in no cluster of spec.clusters'],
    ],
    [
      'a region of no DeployRegion at all',
      { replicas: 4, regions: [{ name: 'amd64' }, { name: 'gpu' }], clusters: [{ name: 'eu-1' }] },
      ['ExtendedDeployment shop/web: spec.regions[1].name: DeployRegion "gpu" not found (known: amd64, arm64)'],
    ],
    [
      'cluster percentages without spec.replicas',
      {
        regions: twoRegions,
        clusters: [
          { name: 'eu-1', replicas: '50%' },
          { name: 'us-1', replicas: 2 },
        ],
      },
      ['ExtendedDeployment shop/web: spec.clusters[0].replicas: "50%" needs spec.replicas to take a share of'],
    ],
    [
      'cluster counts over spec.replicas',
      {
        replicas: 4,
        regions: twoRegions,
        clusters: [
          { name: 'eu-1', replicas: 3 },
          { name: 'us-1', replicas: 3 },
        ],
      },
      ['ExtendedDeployment shop/web: spec.clusters: integer replicas add up to 6, more than spec.replicas (4)'],
    ],
    [
      'every cluster fixed, short of spec.replicas',
      {
        replicas: 8,
        regions: twoRegions,
        clusters: [
          { name: 'eu-1', replicas: 3 },
          { name: 'us-1', replicas: 3 },
        ],
      },
      ['ExtendedDeployment shop/web: spec.clusters: every cluster has a fixed count, but they add up to 6, not spec.replicas (8)'],
    ],
    [
      'cluster minReplicas over spec.replicas',
      {
        replicas: 4,
        regions: twoRegions,
        clusters: [
          { name: 'eu-1', minReplicas: 3 },
          { name: 'us-1', minReplicas: 3 },
        ],
      },
      ['ExtendedDeployment shop/web: spec.clusters: minReplicas add up to 6, more than the 4 replicas these clusters share'],
    ],
    [
      'a cluster count outside its bounds',
      { replicas: 4, regions: twoRegions, clusters: [{ name: 'eu-1', replicas: 1, minReplicas: 2 }, { name: 'us-1' }] },
      ['ExtendedDeployment shop/web: spec.clusters[0].replicas: 1 is below minReplicas 2'],
    ],
    [
      "region counts over a cluster's share, by that cluster",
      { replicas: 6, regions: [{ name: 'amd64', replicas: 4 }, { name: 'arm64' }], clusters: [{ name: 'eu-1', replicas: 2 }, { name: 'us-1' }] },
      ["ExtendedDeployment shop/web: spec.regions: integer replicas add up to 4, more than cluster eu-1's share (2)"],
    ],
    [
      "a region's own bounds, once for every cluster that has it",
      { replicas: 16, regions: [{ name: 'amd64' }, { name: 'arm64', replicas: 5, maxReplicas: 1 }], clusters: [{ name: 'eu-1' }, { name: 'us-1' }] },
      ['ExtendedDeployment shop/web: spec.regions[1].replicas: 5 is above maxReplicas 1'],
    ],
  ] as const)('reports %s', (_name, spec, expected) => {
    expect(lines(spec as FleetSpec)).toEqual(expected);
  });

  it('maps a region problem inside a cluster to the region as written', () => {
    const spec: FleetSpec = {
      replicas: 4,
      regions: [
        { name: 'arm64', minReplicas: 9 },
        { name: 'amd64', minReplicas: 9 },
      ],
      clusters: [{ name: 'canary-1' }],
    };
    expect(lines(spec, clusters({ 'canary-1': ['amd64'] }, ['arm64']))).toEqual([
      'ExtendedDeployment shop/web: spec.regions[0].name: DeployRegion "arm64" is in no cluster of spec.clusters',
      'ExtendedDeployment shop/web: spec.regions: minReplicas add up to 9, more than the 4 replicas these regions share',
    ]);
  });

  it('reports every problem at once and still names the members it could read', () => {
    const spec: FleetSpec = { replicas: 2, regions: twoRegions, clusters: [{ name: 'eu-1', replicas: 3 }, { name: 'eu-9' }] };
    const split = splitFleet(spec, both, object);
    expect(split.problems.map(formatProblem)).toEqual([
      'ExtendedDeployment shop/web: spec.clusters[1].name: "eu-9" names no Cluster of this render (clusters: canary-1, eu-1, us-1)',
      'ExtendedDeployment shop/web: spec.clusters: integer replicas add up to 3, more than spec.replicas (2)',
    ]);
    expect(split.members).toEqual([{ cluster: 'eu-1', index: 0, regions: [0, 1] }]);
  });

  it('is deterministic', () => {
    const spec: FleetSpec = { replicas: 31, regions: twoRegions, clusters: [{ name: 'canary-1', replicas: '10%' }, { name: 'eu-1' }, { name: 'us-1' }] };
    expect(splitFleet(spec, both, object)).toEqual(splitFleet(structuredClone(spec), both, object));
  });
});
