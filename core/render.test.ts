import { describe, expect, it } from 'vitest';
import { DEFAULT_NAMESPACE } from './api/common.js';
import { API_VERSION } from './api/identity.js';
import type { PodTemplate } from './kube/objects.js';
import { formatProblem } from './problems.js';
import { dashPrefixes, renderSet, workloadNamesMayCollide, type RenderedExtendedDeployment } from './render.js';

const regions = [
  { apiVersion: API_VERSION, kind: 'DeployRegion', metadata: { name: 'amd' }, spec: { matchLabels: { 'kubernetes.io/arch': 'amd64' } } },
  { apiVersion: API_VERSION, kind: 'DeployRegion', metadata: { name: 'arm' }, spec: { matchLabels: { 'kubernetes.io/arch': 'arm64' } } },
];

/**
 * A valid ExtendedDeployment over both regions; `metadata` replaces its metadata (so a namespace can be left out). Its
 * pods are labelled `app: <name>`, so that ExtendedDeployments of different names select different pods.
 */
function ed(metadata: { name: string; namespace?: string }, subsetType: 'ReplicaSet' | 'Deployment' = 'ReplicaSet') {
  return {
    apiVersion: API_VERSION,
    kind: 'ExtendedDeployment',
    metadata,
    spec: {
      replicas: 4,
      subsetType,
      selector: { matchLabels: { app: metadata.name } },
      template: { metadata: { labels: { app: metadata.name } }, spec: { containers: [{ name: 'app', image: 'shop/web:1.0' }] } },
      regions: [{ name: 'amd' }, { name: 'arm' }],
    },
  };
}

function renderOne(object: unknown): RenderedExtendedDeployment {
  const result = renderSet([...regions, object]);
  if (!result.ok) throw new Error(result.problems.map(formatProblem).join('\n'));
  const [rendered] = result.value.extendedDeployments;
  if (!rendered) throw new Error('nothing rendered');
  return rendered;
}

/** The namespace of the ExtendedDeployment manifest, then of each regional workload, as `kind/name namespace`. */
function namespaces(rendered: RenderedExtendedDeployment): string[] {
  return [rendered.manifest, ...rendered.regions.map((r) => r.workload)].map((o) => {
    const metadata = o['metadata'] as { name: string; namespace?: string };
    return `${String(o['kind'])}/${metadata.name} ${metadata.namespace ?? '(none)'}`;
  });
}

describe('renderExtendedDeployment namespaces', () => {
  it("is kubectl's default namespace", () => {
    expect(DEFAULT_NAMESPACE).toBe('default');
  });

  it.each(['ReplicaSet', 'Deployment'] as const)(
    'gives an ExtendedDeployment without a namespace, and each %s, the default namespace (GitOps tools have no fallback)',
    (subsetType) => {
      const object = ed({ name: 'web' }, subsetType);
      expect(namespaces(renderOne(object))).toEqual(['ExtendedDeployment/web default', `${subsetType}/web-amd default`, `${subsetType}/web-arm default`]);
      // The input is left as written: the namespace is added to the rendered copy only.
      expect(object.metadata).toEqual({ name: 'web' });
    },
  );

  it.each(['ReplicaSet', 'Deployment'] as const)('keeps the namespace an ExtendedDeployment names, on it and each %s', (subsetType) => {
    expect(namespaces(renderOne(ed({ name: 'web', namespace: 'shop' }, subsetType)))).toEqual([
      'ExtendedDeployment/web shop',
      `${subsetType}/web-amd shop`,
      `${subsetType}/web-arm shop`,
    ]);
  });
});

describe('regional workload labels', () => {
  it.each(['ReplicaSet', 'Deployment'] as const)(
    "are the ExtendedDeployment's and the region's only, so that no Deployment selecting the pods' labels adopts the %s",
    (subsetType) => {
      const rendered = renderOne(ed({ name: 'web', namespace: 'shop' }, subsetType));
      const labels = rendered.regions.map((r) => (r.workload['metadata'] as { labels: Record<string, string> }).labels);
      expect(labels).toEqual([
        { 'extendeddeployment.io/name': 'web', 'extendeddeployment.io/region': 'amd' },
        { 'extendeddeployment.io/name': 'web', 'extendeddeployment.io/region': 'arm' },
      ]);
      // The pods keep theirs: Services select them.
      const template = (rendered.regions[0]?.workload['spec'] as { template: { metadata: { labels: Record<string, string> } } }).template;
      expect(template.metadata.labels['app']).toBe('web');
    },
  );
});

describe('renderSet', () => {
  it('takes an ExtendedDeployment without a namespace for the same object as one of that name in the default namespace', () => {
    const result = renderSet([...regions, ed({ name: 'web' }), ed({ name: 'web', namespace: 'default' })]);
    expect(result.ok ? [] : result.problems.map(formatProblem)).toEqual(['ExtendedDeployment default/web: metadata.name: is defined twice in this render']);
  });

  it('renders ExtendedDeployments of one name in the default namespace and another side by side', () => {
    const result = renderSet([...regions, ed({ name: 'web' }), ed({ name: 'web', namespace: 'shop' })]);
    expect(result.ok && result.value.extendedDeployments.flatMap(namespaces)).toEqual([
      'ExtendedDeployment/web default',
      'ReplicaSet/web-amd default',
      'ReplicaSet/web-arm default',
      'ExtendedDeployment/web shop',
      'ReplicaSet/web-amd shop',
      'ReplicaSet/web-arm shop',
    ]);
  });
});

describe('renderSet: the inputs of each problem', () => {
  const invalidRegion = { apiVersion: API_VERSION, kind: 'DeployRegion', metadata: { name: 'gpu' }, spec: { matchLabels: {} } };
  const problemsOf = (objects: unknown[]) => {
    const result = renderSet(objects);
    return result.ok ? [] : result.problems.map((p) => [formatProblem(p), p.inputs]);
  };

  it('names the position of the object each problem is about', () => {
    const bad = { ...ed({ name: 'web' }), spec: { ...ed({ name: 'web' }).spec, replicas: -1 } };
    expect(problemsOf([...regions, { kind: 'ConfigMap' }, bad])).toEqual([['ExtendedDeployment web: spec.replicas: must not be negative', [3]]]);
  });

  it('reports an object defined three times once, with every position, and the same problem of identical copies once', () => {
    expect(problemsOf([invalidRegion, ...regions, invalidRegion, invalidRegion])).toEqual([
      ['DeployRegion gpu: metadata.name: is defined 3 times in this render', [0, 3, 4]],
      ['DeployRegion gpu: spec.matchLabels: must name at least one label (or a requirement in matchExpressions)', [0, 3, 4]],
    ]);
  });

  it('keeps apart the problems of copies that differ', () => {
    const other = { ...invalidRegion, spec: { matchLabels: {}, tolerations: 'gpu' } };
    expect(problemsOf([invalidRegion, other])).toEqual([
      ['DeployRegion gpu: metadata.name: is defined twice in this render', [0, 1]],
      ['DeployRegion gpu: spec.matchLabels: must name at least one label (or a requirement in matchExpressions)', [0, 1]],
      ['DeployRegion gpu: spec.tolerations: must be a list, not the string "gpu"', [1]],
    ]);
  });

  it('gives a problem between two objects the position of each', () => {
    const api = { ...ed({ name: 'api' }), spec: { ...ed({ name: 'api' }).spec, selector: { matchLabels: { app: 'web' } } } };
    api.spec.template = { ...api.spec.template, metadata: { labels: { app: 'web' } } };
    expect(problemsOf([...regions, ed({ name: 'web' }), api]).map(([line, inputs]) => [String(line).split(':')[0], inputs])).toEqual([
      ['ExtendedDeployment web', [2]],
      ['ExtendedDeployment api', [3]],
    ]);
  });
});

describe('renderSet: the upstream InplaceSet kind', () => {
  const inplaceSet = (apiVersion: string) => ({ apiVersion, kind: 'InplaceSet', metadata: { name: 'web-amd' }, spec: {} });

  it('is a problem that says what to write instead', () => {
    const result = renderSet([...regions, inplaceSet(API_VERSION)]);
    expect(result.ok ? [] : result.problems.map(formatProblem)).toEqual([
      "InplaceSet web-amd: kind: is the upstream operator's regional workload, which edctl and the agent do not use: write an ExtendedDeployment with spec.subsetType: InplaceSet instead, which renders a ReplicaSet per region with in-place updates on (see docs/migrating-from-upstream.md)",
    ]);
  });

  it('of another API group is left to the caller like any other kind', () => {
    expect(renderSet([...regions, inplaceSet('apps.example.com/v1')]).ok).toBe(true);
  });
});

describe('workload name collisions', () => {
  /** A valid ExtendedDeployment running in the given regions (each a DeployRegion of zoneRegions). */
  function inRegions(metadata: { name: string; namespace?: string }, regionNames: string[], replicas = 2) {
    return { ...ed(metadata), spec: { ...ed(metadata).spec, replicas, regions: regionNames.map((name) => ({ name })) } };
  }
  /** DeployRegions that never overlap: each selects its own zone. */
  const zoneRegions = (...names: string[]) =>
    names.map((name) => ({ apiVersion: API_VERSION, kind: 'DeployRegion', metadata: { name }, spec: { matchLabels: { zone: name } } }));

  it('reports `a` with region b-c and `a-b` with region c (both render a-b-c) on both objects, at the region entry', () => {
    const result = renderSet([
      ...zoneRegions('b-c', 'c'),
      inRegions({ name: 'a', namespace: 'shop' }, ['b-c']),
      inRegions({ name: 'a-b', namespace: 'shop' }, ['c']),
    ]);
    expect(result.ok ? [] : result.problems.map(formatProblem)).toEqual([
      "ExtendedDeployment shop/a: spec.regions[0].name: workload a-b-c collides with ExtendedDeployment shop/a-b's region c",
      "ExtendedDeployment shop/a-b: spec.regions[0].name: workload a-b-c collides with ExtendedDeployment shop/a's region b-c",
    ]);
  });

  it("reports every collision at once, next to the objects' other problems", () => {
    const result = renderSet([
      ...zoneRegions('b-c', 'x-y', 'c', 'y', 'z'),
      inRegions({ name: 'a', namespace: 'shop' }, ['b-c', 'z', 'x-y']),
      inRegions({ name: 'a-b', namespace: 'shop' }, ['c']),
      // Invalid for another reason too: still compared, and both problems are reported.
      inRegions({ name: 'a-x', namespace: 'shop' }, ['y'], -1),
    ]);
    expect(result.ok ? [] : result.problems.map(formatProblem)).toEqual([
      'ExtendedDeployment shop/a-x: spec.replicas: must not be negative',
      "ExtendedDeployment shop/a: spec.regions[0].name: workload a-b-c collides with ExtendedDeployment shop/a-b's region c",
      "ExtendedDeployment shop/a: spec.regions[2].name: workload a-x-y collides with ExtendedDeployment shop/a-x's region y",
      "ExtendedDeployment shop/a-b: spec.regions[0].name: workload a-b-c collides with ExtendedDeployment shop/a's region b-c",
      "ExtendedDeployment shop/a-x: spec.regions[0].name: workload a-x-y collides with ExtendedDeployment shop/a's region x-y",
    ]);
  });

  it('names every other object when three render the same workload', () => {
    const result = renderSet([
      ...zoneRegions('b-c-d', 'c-d', 'd'),
      inRegions({ name: 'a', namespace: 'shop' }, ['b-c-d']),
      inRegions({ name: 'a-b', namespace: 'shop' }, ['c-d']),
      inRegions({ name: 'a-b-c', namespace: 'shop' }, ['d']),
    ]);
    const problems = result.ok ? [] : result.problems.map(formatProblem);
    expect(problems).toHaveLength(6);
    expect(problems.filter((p) => p.startsWith('ExtendedDeployment shop/a-b: '))).toEqual([
      "ExtendedDeployment shop/a-b: spec.regions[0].name: workload a-b-c-d collides with ExtendedDeployment shop/a's region b-c-d",
      "ExtendedDeployment shop/a-b: spec.regions[0].name: workload a-b-c-d collides with ExtendedDeployment shop/a-b-c's region d",
    ]);
  });

  it('allows the same workload name in different namespaces', () => {
    const result = renderSet([
      ...zoneRegions('b-c', 'c'),
      inRegions({ name: 'a', namespace: 'shop' }, ['b-c']),
      inRegions({ name: 'a-b', namespace: 'web' }, ['c']),
    ]);
    expect(result.ok ? [] : result.problems.map(formatProblem)).toEqual([]);
  });

  it('compares an ExtendedDeployment without a namespace with those of the default namespace, where it is rendered', () => {
    const result = renderSet([...zoneRegions('b-c', 'c'), inRegions({ name: 'a' }, ['b-c']), inRegions({ name: 'a-b', namespace: 'default' }, ['c'])]);
    expect(result.ok ? [] : result.problems.map(formatProblem)).toEqual([
      "ExtendedDeployment a: spec.regions[0].name: workload a-b-c collides with ExtendedDeployment default/a-b's region c",
      "ExtendedDeployment default/a-b: spec.regions[0].name: workload a-b-c collides with ExtendedDeployment a's region b-c",
    ]);
  });

  it("leaves a region listed twice in one object to that object's own check", () => {
    const result = renderSet([...zoneRegions('c'), inRegions({ name: 'a', namespace: 'shop' }, ['c', 'c'])]);
    expect(result.ok ? [] : result.problems.map(formatProblem)).toEqual([
      'ExtendedDeployment shop/a: spec.regions[1].name: region "c" is listed twice (first at spec.regions[0])',
    ]);
  });
});

describe('renderExtendedDeployment: raw patches', () => {
  it("place a copy of their values in each region: the ExtendedDeployment's own overriders stay as written", () => {
    const affinity = { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [] }] } } };
    const object = ed({ name: 'web' });
    const patched = {
      ...object,
      spec: { ...object.spec, overriders: [{ name: 'amd', overriders: [{ op: 'add', path: '/spec/affinity', value: affinity }] }] },
    };
    const written = structuredClone(patched.spec.overriders);
    const rendered = renderOne(patched);
    expect(rendered.parsed.spec.overriders).toEqual(written);
    expect(patched.spec.overriders).toEqual(written);
    expect(renderOne(patched).regions.map((r) => r.revision)).toEqual(rendered.regions.map((r) => r.revision));
  });
});

describe('renderExtendedDeployment: what the regions share', () => {
  const sharingRegions = [
    ...regions,
    {
      apiVersion: API_VERSION,
      kind: 'DeployRegion',
      metadata: { name: 'gpu' },
      spec: { matchLabels: { 'kubernetes.io/arch': 'riscv64' }, tolerations: [{ key: 'gpu', operator: 'Exists', effect: 'NoSchedule' }] },
    },
  ];
  type Entry = { name: string; replicas: number; overrides?: object };
  /** An in-place ExtendedDeployment (so each region gets a readiness gate) whose template has every part a region changes. */
  const sharing = (entries: Entry[]) => ({
    apiVersion: API_VERSION,
    kind: 'ExtendedDeployment',
    metadata: { name: 'web', namespace: 'shop' },
    spec: {
      replicas: 2 * entries.length,
      subsetType: 'InplaceSet',
      selector: { matchLabels: { app: 'web' } },
      template: {
        metadata: { labels: { app: 'web' }, annotations: { team: 'shop' } },
        spec: {
          nodeSelector: { disk: 'ssd' },
          tolerations: [{ key: 'base', operator: 'Exists' }],
          affinity: {
            nodeAffinity: {
              requiredDuringSchedulingIgnoredDuringExecution: {
                nodeSelectorTerms: [{ matchExpressions: [{ key: 'zone', operator: 'In', values: ['a', 'b'] }] }],
              },
            },
          },
          readinessGates: [{ conditionType: 'example.com/warm' }],
          initContainers: [{ name: 'init', image: 'init:1', env: [{ name: 'MODE', value: 'init' }] }],
          containers: [
            { name: 'app', image: 'web:1', env: [{ name: 'A', value: '1' }], resources: { requests: { cpu: '1' } } },
            { name: 'side', image: 'side:1' },
          ],
        },
      },
      regions: entries,
      overriders: entries.some((e) => e.name === 'gpu')
        ? [{ name: 'gpu', overriders: [{ op: 'add', path: '/spec/containers/1/args', value: ['--gpu'] }] }]
        : [],
    },
  });
  const entries: Entry[] = [
    {
      name: 'amd',
      replicas: 2,
      overrides: {
        images: { app: 'web:1-amd', init: 'init:1-amd' },
        env: { app: { A: '2', B: '3' }, init: { MODE: 'amd' } },
        resources: { app: { limits: { cpu: '2' } } },
        labels: { tier: 'amd' },
        annotations: { note: 'amd' },
        nodeSelector: { disk: 'nvme' },
        tolerations: [{ key: 'amd', operator: 'Exists' }],
      },
    },
    { name: 'arm', replicas: 2 },
    { name: 'gpu', replicas: 2 },
  ];
  const render = (object: unknown): RenderedExtendedDeployment => {
    const result = renderSet([...sharingRegions, object]);
    if (!result.ok) throw new Error(result.problems.map(formatProblem).join('\n'));
    return result.value.extendedDeployments[0]!;
  };

  it("gives each region the workload it gets rendered alone: no region's overrides, patches, placement or gate reach another", () => {
    const together = render(sharing(entries));
    for (const entry of entries) {
      const alone = render(sharing([entry]));
      const region = together.regions.find((r) => r.name === entry.name);
      expect(region?.workload).toEqual(alone.regions[0]?.workload);
      expect(region?.revision).toBe(alone.regions[0]?.revision);
    }
  });

  it('changes neither the input nor the parsed template, and shares only what no region changes', () => {
    const object = sharing(entries);
    const written = structuredClone(object);
    const rendered = render(object);
    expect(object).toEqual(written);
    expect(rendered.parsed.spec.template).toEqual(written.spec.template);
    const containers = rendered.regions.map((r) => (r.workload as { spec: { template: PodTemplate } }).spec.template.spec?.containers ?? []);
    const [amd, arm, gpu] = containers;
    // The sidecar no override names is one object in amd and arm; gpu's patch gives gpu a copy of its own.
    expect(amd?.[1]).toBe(arm?.[1]);
    expect(gpu?.[1]).not.toBe(arm?.[1]);
    expect(amd?.[0]).not.toBe(arm?.[0]);
    expect(rendered.parsed.spec.template.spec.containers[1]).not.toBe(arm?.[1]);
  });
});

describe('workloadNamesMayCollide', () => {
  it('holds only for equal names and names that extend the other after a dash', () => {
    expect(workloadNamesMayCollide('a', 'a-b')).toBe(true);
    expect(workloadNamesMayCollide('a-b', 'a')).toBe(true);
    expect(workloadNamesMayCollide('a', 'a')).toBe(true);
    expect(workloadNamesMayCollide('a', 'ab')).toBe(false);
    expect(workloadNamesMayCollide('web', 'api')).toBe(false);
    expect(workloadNamesMayCollide('a-b', 'a-c')).toBe(false);
  });
});

describe('dashPrefixes', () => {
  it('gives each name the name extends with a dash, shortest first: exactly the shorter names it may collide with', () => {
    expect(dashPrefixes('a-b-c')).toEqual(['a', 'a-b']);
    expect(dashPrefixes('a--b')).toEqual(['a', 'a-']);
    expect(dashPrefixes('web')).toEqual([]);
    expect(dashPrefixes('')).toEqual([]);
    for (const name of ['a-b-c', 'a--b', 'shop-web-1'])
      for (let length = 1; length < name.length; length++) {
        const shorter = name.slice(0, length);
        expect(dashPrefixes(name).includes(shorter), `${name} / ${shorter}`).toBe(workloadNamesMayCollide(name, shorter));
      }
  });
});

describe('renderExtendedDeployment: StatefulSet regions', () => {
  const stateful = {
    ...ed({ name: 'db', namespace: 'shop' }),
    spec: {
      ...ed({ name: 'db' }).spec,
      subsetType: 'StatefulSet',
      statefulSet: {
        serviceName: 'db',
        podManagementPolicy: 'Parallel',
        persistentVolumeClaimRetentionPolicy: { whenScaled: 'Delete' },
        volumeClaimTemplates: [
          { metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], storageClassName: 'standard', resources: { requests: { storage: '1Gi' } } } },
        ],
      },
      regions: [{ name: 'amd' }, { name: 'arm', overrides: { volumeClaims: { data: { storageClassName: 'arm-local', storage: '5Gi' } } } }],
    },
  };

  it("renders a StatefulSet per region without replicas or partition, its claims with the region's overrides", () => {
    const rendered = renderOne(stateful);
    const [amd, arm] = rendered.regions.map((r) => r.workload as { kind: string; metadata: { name: string }; spec: Record<string, unknown> });
    expect(amd?.kind).toBe('StatefulSet');
    expect(amd?.metadata.name).toBe('db-amd');
    const { template: _template, ...spec } = amd?.spec ?? {};
    expect(spec).toEqual({
      serviceName: 'db',
      podManagementPolicy: 'Parallel',
      updateStrategy: { type: 'RollingUpdate' },
      revisionHistoryLimit: 2,
      minReadySeconds: 5,
      selector: { matchLabels: { 'extendeddeployment.io/name': 'db', 'extendeddeployment.io/region': 'amd' } },
      persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Retain', whenScaled: 'Delete' },
      // As the API server stores them (an atomic list: Argo CD compares each entry whole).
      volumeClaimTemplates: [
        {
          apiVersion: 'v1',
          kind: 'PersistentVolumeClaim',
          metadata: { name: 'data' },
          spec: { accessModes: ['ReadWriteOnce'], storageClassName: 'standard', resources: { requests: { storage: '1Gi' } }, volumeMode: 'Filesystem' },
          status: { phase: 'Pending' },
        },
      ],
    });
    expect(arm?.spec['volumeClaimTemplates']).toEqual([
      {
        apiVersion: 'v1',
        kind: 'PersistentVolumeClaim',
        metadata: { name: 'data' },
        spec: { accessModes: ['ReadWriteOnce'], storageClassName: 'arm-local', resources: { requests: { storage: '5Gi' } }, volumeMode: 'Filesystem' },
        status: { phase: 'Pending' },
      },
    ]);
    // The input is left as written.
    expect(stateful.spec.statefulSet.volumeClaimTemplates[0]?.spec.storageClassName).toBe('standard');
  });

  it('gives the same pod template, and so the same revision, as a ReplicaSet region: the claims are not part of it', () => {
    const asReplicaSet = {
      ...stateful,
      spec: { ...stateful.spec, subsetType: 'ReplicaSet', statefulSet: undefined, regions: [{ name: 'amd' }, { name: 'arm' }] },
    };
    expect(renderOne(stateful).regions.map((r) => r.revision)).toEqual(renderOne(asReplicaSet).regions.map((r) => r.revision));
  });
});
