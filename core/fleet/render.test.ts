import { describe, expect, it } from 'vitest';
import type { DeployRegion } from '../api/deploy-region.js';
import { formatProblem } from '../problems.js';
import { renderExtendedDeployment, renderSet } from '../render.js';
import { renderFleet, type ClusterRender, type FleetRender } from './render.js';

const V = 'extendeddeployment.io/v1beta1';
const region = (name: string) => ({ apiVersion: V, kind: 'DeployRegion', metadata: { name }, spec: { matchLabels: { 'kubernetes.io/arch': name } } });
const cluster = (name: string, spec: Record<string, unknown> = {}) => ({ apiVersion: V, kind: 'Cluster', metadata: { name }, spec });
const fleet = (name = 'prod') => ({
  apiVersion: V,
  kind: 'Fleet',
  metadata: { name },
  spec: { source: { repoURL: 'https://git.example.com/p.git' }, argocd: {} },
});
const namespace = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'shop' } };

function ed(name: string, spec: Record<string, unknown> = {}) {
  return {
    apiVersion: V,
    kind: 'ExtendedDeployment',
    metadata: { name, namespace: 'shop' },
    spec: {
      replicas: 24,
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'app', image: 'shop/web:1' }] } },
      regions: [{ name: 'amd64' }, { name: 'arm64', overrides: { images: { app: 'shop/web:1-arm64' } } }],
      ...spec,
    },
  };
}

const members = [{ name: 'canary-1', replicas: 2 }, { name: 'eu-1' }, { name: 'us-1' }];
const example = () => [
  region('amd64'),
  region('arm64'),
  fleet(),
  cluster('canary-1', { regions: ['amd64'] }),
  cluster('eu-1'),
  cluster('us-1'),
  namespace,
  ed('web', { clusters: members, strategy: { fleet: { waves: [['canary-1'], ['eu-1', 'us-1']] } } }),
];

function clustersOf(result: ReturnType<typeof renderFleet>): readonly ClusterRender[] {
  if (!result.ok) throw new Error(result.problems.map(formatProblem).join('\n'));
  if (result.value.layout !== 'clusters') throw new Error('rendered flat');
  return result.value.clusters;
}

const problemsOf = (objects: unknown[]) => {
  const result = renderFleet(objects);
  return result.ok ? [] : result.problems.map(formatProblem);
};

const kindsOf = (c: ClusterRender) => c.objects.map((o) => `${(o as { kind: string }).kind}/${(o as { metadata: { name: string } }).metadata.name}`);

describe('renderFleet', () => {
  it('gives each cluster its DeployRegions, the other objects and its cut of each fleet ExtendedDeployment', () => {
    const clusters = clustersOf(renderFleet(example()));
    expect(clusters.map((c) => [c.cluster.metadata.name, c.inputs, kindsOf(c)])).toEqual([
      ['canary-1', [0, 6, 7], ['DeployRegion/amd64', 'Namespace/shop', 'ExtendedDeployment/web']],
      ['eu-1', [0, 1, 6, 7], ['DeployRegion/amd64', 'DeployRegion/arm64', 'Namespace/shop', 'ExtendedDeployment/web']],
      ['us-1', [0, 1, 6, 7], ['DeployRegion/amd64', 'DeployRegion/arm64', 'Namespace/shop', 'ExtendedDeployment/web']],
    ]);
    const web = clusters.map((c) => c.rendered.extendedDeployments[0]!);
    expect(web.map((e) => [e.replicas, e.regions.map((r) => [r.name, r.replicas])])).toEqual([
      [2, [['amd64', 2]]],
      [
        11,
        [
          ['amd64', 6],
          ['arm64', 5],
        ],
      ],
      [
        11,
        [
          ['amd64', 6],
          ['arm64', 5],
        ],
      ],
    ]);
    for (const e of web) {
      expect(e.manifest['spec']).not.toHaveProperty('clusters');
      expect((e.manifest['spec'] as { replicas: number }).replicas).toBe(e.replicas);
    }
  });

  it('writes spec.fleet into every member, with one release for all', () => {
    const web = clustersOf(renderFleet(example())).map((c) => c.rendered.extendedDeployments[0]!);
    const fleets = web.map((e) => (e.manifest['spec'] as { fleet: Record<string, unknown> }).fleet);
    const release = fleets[0]!['release'];
    expect(release).toMatch(/^[0-9a-f]{10}$/);
    expect(fleets).toEqual(
      ['canary-1', 'eu-1', 'us-1'].map((cluster, i) => ({
        name: 'prod',
        cluster,
        wave: i === 0 ? 0 : 1,
        release,
        members: [
          { cluster: 'canary-1', replicas: 2, wave: 0 },
          { cluster: 'eu-1', replicas: 11, wave: 1 },
          { cluster: 'us-1', replicas: 11, wave: 1 },
        ],
      })),
    );
    expect(web.map((e) => e.parsed.spec.fleet)).toEqual(fleets);
  });

  it('writes strategy.fleet out with its defaults and waves, which the member cannot work out alone', () => {
    const objects = example();
    objects[7] = ed('web', { clusters: members });
    const web = clustersOf(renderFleet(objects))[1]!.rendered.extendedDeployments[0]!;
    expect((web.manifest['spec'] as { strategy: unknown }).strategy).toEqual({
      fleet: {
        waves: [['canary-1'], ['eu-1'], ['us-1']],
        minSuccessSeconds: 300,
        maxFailures: 0,
        onUnreachable: { action: 'Wait', afterSeconds: 600 },
        failover: { mode: 'Off', toleranceSeconds: 120, stabilizationSeconds: 600 },
      },
    });
    expect((web.manifest['spec'] as { fleet: { wave: number } }).fleet.wave).toBe(1);
  });

  it('names the fleet after the ExtendedDeployment when the render has no Fleet', () => {
    const objects = example().filter((o) => o.kind !== 'Fleet');
    const web = clustersOf(renderFleet(objects))[0]!.rendered.extendedDeployments[0]!;
    expect((web.manifest['spec'] as { fleet: { name: string } }).fleet.name).toBe('web');
  });

  it('renders each member so that the agent, rendering it again in its cluster, gets the same workloads', () => {
    for (const c of clustersOf(renderFleet(example()))) {
      const regions = new Map<string, DeployRegion>(c.rendered.deployRegions.map((r) => [r.parsed.metadata.name, r.parsed]));
      for (const rendered of c.rendered.extendedDeployments) {
        const again = renderExtendedDeployment(rendered.manifest, regions, { belowNeeds: 'scaleDown' });
        expect(again.ok).toBe(true);
        if (again.ok) expect(again.value.regions).toEqual(rendered.regions);
      }
    }
  });

  it("applies a cluster's overrides before each region's own", () => {
    const objects = example();
    objects[7] = ed('web', {
      clusters: [
        { name: 'canary-1', replicas: 2, overrides: { env: { app: { CANARY: 'true' } }, images: { app: 'shop/web:2' } } },
        { name: 'eu-1', overrides: { images: { app: 'shop/web:2' } } },
        { name: 'us-1' },
      ],
    });
    const clusters = clustersOf(renderFleet(objects));
    const containers = (c: ClusterRender) =>
      c.rendered.extendedDeployments[0]!.regions.map((r) => [
        r.name,
        (r.workload as { spec: { template: { spec: { containers: { image: string; env?: unknown }[] } } } }).spec.template.spec.containers[0],
      ]);
    expect(containers(clusters[0]!)).toEqual([['amd64', { name: 'app', image: 'shop/web:2', env: [{ name: 'CANARY', value: 'true' }] }]]);
    // The region's image override comes after the cluster's.
    expect(containers(clusters[1]!)).toEqual([
      ['amd64', { name: 'app', image: 'shop/web:2' }],
      ['arm64', { name: 'app', image: 'shop/web:1-arm64' }],
    ]);
    expect(containers(clusters[2]!)[0]).toEqual(['amd64', { name: 'app', image: 'shop/web:1' }]);
  });

  it("applies a cluster's claim overrides to StatefulSet claim templates", () => {
    const objects = example();
    objects[7] = ed('db', {
      subsetType: 'StatefulSet',
      statefulSet: {
        volumeClaimTemplates: [{ metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } }],
      },
      regions: [{ name: 'amd64' }, { name: 'arm64', overrides: { volumeClaims: { data: { storage: '5Gi' } } } }],
      clusters: [{ name: 'eu-1', overrides: { volumeClaims: { data: { storageClassName: 'eu-ssd', storage: '2Gi' } } } }],
    });
    const db = clustersOf(renderFleet(objects))[1]!.rendered.extendedDeployments[0]!;
    const claims = db.regions.map((r) => (r.workload as { spec: { volumeClaimTemplates: { spec: unknown }[] } }).spec.volumeClaimTemplates[0]!.spec);
    expect(claims).toEqual([
      { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '2Gi' } }, storageClassName: 'eu-ssd', volumeMode: 'Filesystem' },
      { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '5Gi' } }, storageClassName: 'eu-ssd', volumeMode: 'Filesystem' },
    ]);
  });

  it('gives every cluster an ExtendedDeployment without clusters as written, and no cluster the Cluster and Fleet objects', () => {
    const objects = [...example(), ed('api', { replicas: 2, regions: [{ name: 'amd64' }] })];
    const clusters = clustersOf(renderFleet(objects));
    for (const c of clusters) {
      expect(c.objects.at(-1)).toBe(objects.at(-1));
      expect(c.objects.some((o) => ['Cluster', 'Fleet'].includes((o as { kind: string }).kind))).toBe(false);
      expect(c.rendered.extendedDeployments[1]!.manifest['spec']).not.toHaveProperty('fleet');
    }
  });

  it("leaves other API groups' Cluster kind alone (Cluster API)", () => {
    const capi = { apiVersion: 'cluster.x-k8s.io/v1beta1', kind: 'Cluster', metadata: { name: 'mgmt', namespace: 'capi' } };
    const flat = renderFleet([region('amd64'), capi]);
    expect(flat.ok && flat.value.layout).toBe('flat');
    expect(clustersOf(renderFleet([...example(), capi]))[0]!.objects.at(-1)).toBe(capi);
  });

  it('without Cluster objects, is renderSet', () => {
    const objects = [region('amd64'), region('arm64'), namespace, ed('web')];
    expect(renderFleet(objects)).toEqual({ ok: true, value: { layout: 'flat', rendered: (renderSet(objects) as { value: unknown }).value } });
  });

  it('is deterministic and leaves its input alone', () => {
    const objects = example();
    const copy = structuredClone(objects);
    const first = renderFleet(objects);
    expect(renderFleet(structuredClone(objects))).toEqual(first);
    expect(objects).toEqual(copy);
  });

  it('changes the release with a revision or a share, in every member', () => {
    const release = (objects: unknown[]) =>
      clustersOf(renderFleet(objects)).map((c) => (c.rendered.extendedDeployments[0]!.parsed.spec.fleet ?? { release: '' }).release);
    const base = release(example());
    expect(new Set(base).size).toBe(1);
    const image = example();
    image[7] = ed('web', {
      clusters: members,
      template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'app', image: 'shop/web:2' }] } },
    });
    const share = example();
    share[7] = ed('web', { clusters: [{ name: 'canary-1', replicas: 4 }, { name: 'eu-1' }, { name: 'us-1' }] });
    for (const changed of [release(image), release(share)]) {
      expect(new Set(changed).size).toBe(1);
      expect(changed[0]).not.toBe(base[0]);
    }
  });

  it.each<[string, (objects: unknown[]) => unknown[], string[]]>([
    [
      'a member name of no Cluster',
      (o) => [...o.slice(0, 7), ed('web', { clusters: [{ name: 'eu-1' }, { name: 'eu-9' }] })],
      ['ExtendedDeployment shop/web: spec.clusters[1].name: "eu-9" names no Cluster of this render (clusters: canary-1, eu-1, us-1)'],
    ],
    [
      'spec.fleet written in Git',
      (o) => [...o.slice(0, 7), ed('web', { clusters: members, fleet: { name: 'x', cluster: 'eu-1', wave: 0, release: '0123456789', members: [] } })],
      ['ExtendedDeployment shop/web: spec.fleet: is written by edctl render, not in Git: remove it (spec.clusters names the members)'],
    ],
    [
      'a Cluster region of no DeployRegion',
      (o) => [...o.slice(0, 3), cluster('canary-1', { regions: ['amd64', 'gpu'] }), ...o.slice(4)],
      ['Cluster canary-1: spec.regions[1]: "gpu" names no DeployRegion of this render (DeployRegions: amd64, arm64)'],
    ],
    ['a Cluster defined twice', (o) => [...o, cluster('eu-1')], ['Cluster eu-1: metadata.name: is defined twice in this render']],
    [
      'a second Fleet',
      (o) => [...o, fleet('staging')],
      [
        'Fleet prod: is one of 2 Fleets in this render (also staging): a render takes at most one',
        'Fleet staging: is one of 2 Fleets in this render (also prod): a render takes at most one',
      ],
    ],
    [
      'a Cluster of another version',
      (o) => [...o, { ...cluster('ap-1'), apiVersion: 'extendeddeployment.io/v1alpha1' }],
      ['Cluster ap-1: apiVersion: must be extendeddeployment.io/v1beta1, not "extendeddeployment.io/v1alpha1"'],
    ],
    [
      'a Cluster that breaks the schema',
      (o) => [...o, cluster('ap-1', { region: ['amd64'] })],
      ['Cluster ap-1: spec.region: unknown field (did you mean "regions"?)'],
    ],
    [
      'a Fleet for Argo CD without a repository',
      (o) => [...o.slice(0, 2), { ...fleet(), spec: { argocd: {} } }, ...o.slice(3)],
      ['Fleet prod: spec.source.repoURL: is required with spec.argocd: the Applications read the output from there'],
    ],
    [
      'invalid waves',
      (o) => [...o.slice(0, 7), ed('web', { clusters: members, strategy: { fleet: { waves: [['canary-1'], ['eu-1']], approveWaves: [4] } } })],
      [
        'ExtendedDeployment shop/web: spec.strategy.fleet.waves: leave out "us-1": every cluster of spec.clusters must be in exactly one wave',
        'ExtendedDeployment shop/web: spec.strategy.fleet.approveWaves[0]: names wave 4, but the waves are 0 to 1',
      ],
    ],
    [
      "a problem of a region, at its index as written (not in the cluster's cut)",
      (o) => [
        ...o.slice(0, 7),
        ed('web', { clusters: [{ name: 'canary-1' }], regions: [{ name: 'arm64' }, { name: 'amd64', overrides: { images: { nope: 'x' } } }] }),
      ],
      [
        'ExtendedDeployment shop/web: spec.regions[0].name: DeployRegion "arm64" is in no cluster of spec.clusters',
        'ExtendedDeployment shop/web: spec.regions[1].overrides.images.nope: no container named "nope" in the template (containers: app)',
      ],
    ],
    [
      "a cluster's overrides naming no container",
      (o) => [...o.slice(0, 7), ed('web', { clusters: [{ name: 'eu-1', overrides: { images: { nope: 'x' } } }, { name: 'us-1' }] })],
      ['ExtendedDeployment shop/web: spec.clusters[0].overrides.images.nope: no container named "nope" in the template (containers: app)'],
    ],
    [
      'a problem only some clusters find, naming them',
      (o) => [...o, ed('api', { replicas: 2, regions: [{ name: 'arm64' }] })],
      ['ExtendedDeployment shop/api: spec.regions[0].name: in cluster canary-1: DeployRegion "arm64" not found (known: amd64)'],
    ],
    [
      'the split and the template at once, without echoing the split in each cluster',
      (o) => [
        ...o.slice(0, 7),
        ed('web', {
          replicas: 4,
          clusters: [{ name: 'eu-1', replicas: 6 }],
          template: { metadata: { labels: { app: 'other' } }, spec: { containers: [{ name: 'app', image: 'x' }] } },
        }),
      ],
      [
        'ExtendedDeployment shop/web: spec.clusters: integer replicas add up to 6, more than spec.replicas (4)',
        'ExtendedDeployment shop/web: spec.template.metadata.labels: do not match spec.selector',
      ],
    ],
  ])('reports %s', (_name, change, expected) => {
    expect(problemsOf(change(example()))).toEqual(expected);
  });

  it.each<[string, unknown[], string[]]>([
    [
      'spec.clusters without any Cluster object',
      [region('amd64'), region('arm64'), ed('web', { clusters: members })],
      ['ExtendedDeployment shop/web: spec.clusters: names clusters, but this render holds no Cluster object'],
    ],
    [
      'a Fleet without any Cluster object',
      [region('amd64'), region('arm64'), ed('web'), fleet()],
      ['Fleet prod: needs the Cluster objects of its members in this render'],
    ],
    [
      'strategy.fleet without spec.clusters',
      [region('amd64'), region('arm64'), ed('web', { strategy: { fleet: {} } })],
      ['ExtendedDeployment shop/web: spec.strategy.fleet: applies only with spec.clusters'],
    ],
  ])('without Cluster objects, reports %s', (_name, objects, expected) => {
    expect(problemsOf(objects)).toEqual(expected);
  });

  it('gives each problem the input positions of its object', () => {
    const objects = [...example().slice(0, 7), ed('web', { clusters: [{ name: 'eu-9' }, { name: 'eu-1' }] })];
    const result = renderFleet(objects) as Extract<ReturnType<typeof renderFleet>, { ok: false }>;
    expect(result.problems.map((p) => p.inputs)).toEqual([[7]]);
  });

  it('types the layout', () => {
    const layout = (r: FleetRender) => r.layout;
    expect(layout({ layout: 'flat', rendered: { deployRegions: [], extendedDeployments: [] } })).toBe('flat');
  });
});
