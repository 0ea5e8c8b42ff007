import { describe, expect, it } from 'vitest';
import {
  APPROVED_ANNOTATION,
  GROUP_RECORD_ANNOTATION,
  KEEPER_LABEL,
  MARKED_AT_ANNOTATION,
  NAME_LABEL,
  OLD_POD_DELETION_COST,
  PAUSED_ANNOTATION,
  POD_DELETION_COST_ANNOTATION,
  REGION_LABEL,
  REVISION_LABEL,
  REVISIONS_ANNOTATION,
  ROLLOUT_REVISION_ANNOTATION,
} from '../labels.js';
import type { OwnerReference } from '../ownership.js';
import { renderSet } from '../render.js';
import { formatGroupRecord } from '../rollout/group-record.js';
import { planRollout } from '../rollout/planner.js';
import type { ContainerStatus, DeployRegionObject, ExtendedDeploymentObject, PodObject, WorkloadObject } from '../kube/objects.js';
import { controlledBy } from '../kube/test-support.js';
import { initTrouble, observe, podsByRegion, podState, wantsMoves } from './observe.js';
import { replicaSetReads } from './replicaset-reads.js';

const done = (name: string): ContainerStatus => ({ name, state: { terminated: { reason: 'Completed', exitCode: 0 } } });
const waiting = (name: string, reason: string, message?: string): ContainerStatus => ({ name, state: { waiting: { reason, ...(message && { message }) } } });

const NOW = Date.UTC(2026, 0, 1, 12);

const regions: DeployRegionObject[] = [
  { apiVersion: 'extendeddeployment.io/v1beta1', kind: 'DeployRegion', metadata: { name: 'amd' }, spec: { matchLabels: { 'kubernetes.io/arch': 'amd64' } } },
  { apiVersion: 'extendeddeployment.io/v1beta1', kind: 'DeployRegion', metadata: { name: 'arm' }, spec: { matchLabels: { 'kubernetes.io/arch': 'arm64' } } },
];

function edObject(annotations: Record<string, string> | undefined, spec: Record<string, unknown> = {}): ExtendedDeploymentObject {
  return {
    apiVersion: 'extendeddeployment.io/v1beta1',
    kind: 'ExtendedDeployment',
    metadata: { name: 'web', namespace: 'shop', uid: 'ed-uid', resourceVersion: '42', generation: 7, ...(annotations && { annotations }) },
    spec: {
      replicas: 5,
      selector: { matchLabels: { app: 'web' } },
      template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'app', image: 'shop/web:1' }] } },
      regions: [{ name: 'amd', replicas: '60%' }, { name: 'arm' }],
      ...spec,
    },
  };
}

/** The ExtendedDeployment as `edctl render` writes it, with its annotations, and its rendered revisions. */
function rendered() {
  const result = renderSet([...regions, edObject(undefined)]);
  if (!result.ok) throw new Error(JSON.stringify(result.problems));
  const r = result.value.extendedDeployments[0];
  if (!r) throw new Error('nothing rendered');
  return r;
}

function rs(name: string, revision: string | undefined, replicas: number | undefined, namespace = 'shop'): WorkloadObject {
  return {
    metadata: { name, namespace, labels: { [NAME_LABEL]: 'web' } },
    spec: { ...(replicas !== undefined && { replicas }), template: { metadata: { labels: { app: 'web', ...(revision && { [REVISION_LABEL]: revision }) } } } },
  };
}

/** A pod of region `region`'s ReplicaSet `web-<region>` (its controller), unless `owners` says otherwise. */
function pod(
  name: string,
  region: string,
  revision: string,
  extra: {
    ready?: boolean;
    since?: string | Date;
    marked?: boolean;
    deleting?: boolean;
    node?: string;
    phase?: string;
    namespace?: string;
    edName?: string;
    owners?: OwnerReference[];
  } = {},
): PodObject {
  return {
    metadata: {
      name,
      namespace: extra.namespace ?? 'shop',
      uid: `uid-${name}`,
      labels: { app: 'web', [NAME_LABEL]: extra.edName ?? 'web', [REGION_LABEL]: region, [REVISION_LABEL]: revision },
      ...(extra.marked && { annotations: { [POD_DELETION_COST_ANNOTATION]: OLD_POD_DELETION_COST } }),
      ...(extra.deleting && { deletionTimestamp: '2026-01-01T11:59:00Z' }),
      ownerReferences: extra.owners ?? controlledBy(`web-${region}`),
    },
    spec: extra.node === '' ? {} : { nodeName: extra.node ?? 'node-1' },
    status: {
      phase: extra.phase ?? 'Running',
      conditions: [{ type: 'Ready', status: extra.ready === false ? 'False' : 'True', lastTransitionTime: extra.since ?? '2026-01-01T11:00:00Z' }],
    },
  };
}

describe('observe', () => {
  it('builds the planner input from a rendered ExtendedDeployment, its ReplicaSets and pods', () => {
    const r = rendered();
    const [amd, arm] = r.regions;
    const ed = { ...(r.manifest as ExtendedDeploymentObject), metadata: { ...(r.manifest as ExtendedDeploymentObject).metadata, generation: 7 } };
    const reporting = { ...rs('web-amd', amd?.revision, 3), status: { observedGeneration: 4, terminatingReplicas: 1 } };
    reporting.metadata!.generation = 5;
    // The group the agent recorded with its last scale (core/rollout/group-record.ts).
    const record = { revision: r.rolloutRevision, rolloutStart: '2026-01-01T11:00:00.000Z', group: 2, groupStart: '2026-01-01T11:30:00.000Z' };
    reporting.metadata!.annotations = { [GROUP_RECORD_ANNOTATION]: formatGroupRecord(record) };
    const workloads = { replicaSets: [reporting, rs('web-arm', arm?.revision, undefined), rs('web-amd', 'x', 9, 'other')], deployments: [] };
    const pods = [
      pod('web-amd-b', 'amd', 'old', { marked: true }),
      pod('web-amd-a', 'amd', amd?.revision ?? ''),
      pod('web-arm-a', 'arm', 'old', { ready: false, node: '', phase: 'Pending' }),
      pod('other-ns', 'amd', 'old', { namespace: 'other' }),
      pod('other-ed', 'amd', 'old', { edName: 'api' }),
    ];
    const snapshot = observe(ed, regions, workloads, pods, NOW);
    if (!snapshot.ok) throw new Error(JSON.stringify(snapshot.problems));
    const input = snapshot.input;
    expect(input.generation).toBe(7);
    expect(input.rolloutRevision).toBe(r.rolloutRevision);
    expect(input.now).toBe(NOW);
    expect(input.status).toBeUndefined();
    expect(input.controls).toEqual({ paused: false, aborted: false, approvedThrough: undefined, resumedAt: undefined });
    expect(input.regions.map((x) => [x.name, x.desired, x.targetRevision])).toEqual([
      ['amd', 3, amd?.revision],
      ['arm', 2, arm?.revision],
    ]);
    // What the ReplicaSet controller reported, so new pods are asked for only once it is in (region-step.ts).
    expect(input.regions[0]?.workload).toEqual({
      name: 'web-amd',
      templateRevision: amd?.revision,
      replicas: 3,
      reported: { generation: 5, observedGeneration: 4, terminatingReplicas: 1 },
      groupRecord: record,
    });
    expect(input.regions[1]?.workload).toEqual({
      name: 'web-arm',
      templateRevision: arm?.revision,
      replicas: 1,
      reported: { generation: 0, observedGeneration: 0, terminatingReplicas: undefined },
    });
    // Pods of the region only, sorted by name.
    expect(input.regions[0]?.pods.map((p) => p.name)).toEqual(['web-amd-a', 'web-amd-b']);
    expect(input.regions[0]?.pods[1]).toEqual({
      name: 'web-amd-b',
      uid: 'uid-web-amd-b',
      revision: 'old',
      assigned: true,
      running: true,
      phase: 'Running',
      ready: true,
      readySince: Date.UTC(2026, 0, 1, 11),
      terminating: false,
      markedOld: true,
      markCost: -2147483648,
      gated: false,
      gateOpen: false,
      resourceVersion: '',
      containers: [],
    });
    expect(input.regions[1]?.pods).toEqual([
      {
        name: 'web-arm-a',
        uid: 'uid-web-arm-a',
        revision: 'old',
        assigned: false,
        running: false,
        phase: 'Pending',
        ready: false,
        readySince: Date.UTC(2026, 0, 1, 11),
        terminating: false,
        markedOld: false,
        gated: false,
        gateOpen: false,
        resourceVersion: '',
        containers: [],
      },
    ]);
  });

  it("makes the same input of ReplicaSet versions that differ only in the controller's counts (what replicaSetReads skips)", () => {
    const r = rendered();
    const counts = (status: Record<string, number>) => [{ ...rs('web-amd', r.regions[0]?.revision, 3), status: { observedGeneration: 0, ...status } }];
    const inputOf = (replicaSets: WorkloadObject[]) => {
      const snapshot = observe(r.manifest, regions, { replicaSets, deployments: [] }, [], NOW);
      if (!snapshot.ok) throw new Error(JSON.stringify(snapshot.problems));
      return snapshot.input;
    };
    const counting = counts({ replicas: 3, readyReplicas: 1, availableReplicas: 0, fullyLabeledReplicas: 3 });
    expect(inputOf(counts({ replicas: 2, readyReplicas: 3, availableReplicas: 3, fullyLabeledReplicas: 2 }))).toEqual(inputOf(counting));
    expect(replicaSetReads(counting[0]!)).toBe(replicaSetReads(counts({ replicas: 2, readyReplicas: 3 })[0]!));
  });

  it('renders an ExtendedDeployment applied without annotations against the cached DeployRegions', () => {
    const r = rendered();
    const snapshot = observe(edObject(undefined), regions, { replicaSets: [], deployments: [] }, [], NOW);
    if (!snapshot.ok) throw new Error(JSON.stringify(snapshot.problems));
    expect(snapshot.input.rolloutRevision).toBe(r.rolloutRevision);
    expect(snapshot.input.regions.map((x) => x.targetRevision)).toEqual(r.regions.map((x) => x.revision));
    expect(snapshot.input.regions.every((x) => x.workload === undefined && x.pods.length === 0)).toBe(true);
  });

  it('shrinks fixed region counts in proportion when spec.replicas is set below them (kubectl scale, an autoscaler)', () => {
    const fixed = {
      regions: [
        { name: 'amd', replicas: 6 },
        { name: 'arm', replicas: 3 },
      ],
    };
    const scaled = observe(edObject(undefined, { ...fixed, replicas: 6 }), regions, { replicaSets: [], deployments: [] }, [], NOW);
    if (!scaled.ok) throw new Error(JSON.stringify(scaled.problems));
    expect(scaled.input.regions.map((r) => r.desired)).toEqual([4, 2]);
    // In Git the same spec is refused: edctl validate and the render keep Git's counts exact.
    expect(renderSet([...regions, edObject(undefined, { ...fixed, replicas: 6 })]).ok).toBe(false);
  });

  it("a fleet member distributes its recorded part of lost members' replicas over its regions too (failover Additive)", () => {
    const fleet = { name: 'prod', cluster: 'eu-1', wave: 0, release: '0123456789', members: [{ cluster: 'eu-1', replicas: 5, wave: 0 }] };
    const ed = {
      ...edObject(undefined, { fleet }),
      status: { fleet: { additions: [{ cluster: 'us-1', replicas: 5, since: new Date(NOW).toISOString() }] } },
    };
    const observed = observe(ed, regions, { replicaSets: [], deployments: [] }, [], NOW);
    if (!observed.ok) throw new Error(JSON.stringify(observed.problems));
    expect(observed.input.regions.map((r) => r.desired)).toEqual([6, 4]);
    const alone = observe({ ...ed, status: {} }, regions, { replicaSets: [], deployments: [] }, [], NOW);
    expect(alone.ok && alone.input.regions.map((r) => r.desired)).toEqual([3, 2]);
  });

  it('a fleet member whose share dropped distributes its recorded, larger share until the handover ends (make-before-break)', () => {
    const fleet = { name: 'prod', cluster: 'eu-1', wave: 0, release: '0123456789', members: [{ cluster: 'eu-1', replicas: 5, wave: 0 }] };
    const ed = { ...edObject(undefined, { fleet }), status: { fleet: { share: 10 } } };
    const held = observe(ed, regions, { replicaSets: [], deployments: [] }, [], NOW);
    expect(held.ok && held.input.regions.map((r) => r.desired)).toEqual([6, 4]);
    const grown = observe({ ...ed, status: { fleet: { share: 3 } } }, regions, { replicaSets: [], deployments: [] }, [], NOW);
    expect(grown.ok && grown.input.regions.map((r) => r.desired)).toEqual([3, 2]);
  });

  it("marks a region whose DeployRegion's status says Failed", () => {
    const failedArm = regions.map((r) => (r.metadata?.name === 'arm' ? { ...r, status: { phase: 'Failed' } } : r));
    const observed = observe(edObject(undefined), failedArm, { replicaSets: [], deployments: [] }, [], NOW);
    expect(observed.ok && observed.input.regions.map((r) => r.failed)).toEqual([undefined, true]);
  });

  it('derives the rollout revision from the revisions annotation when only that one is present', () => {
    const r = rendered();
    const annotations = { [REVISIONS_ANNOTATION]: JSON.stringify(Object.fromEntries(r.regions.map((x) => [x.name, x.revision]))) };
    const snapshot = observe(edObject(annotations), regions, { replicaSets: [], deployments: [] }, [], NOW);
    expect(snapshot.ok && snapshot.input.rolloutRevision).toBe(r.rolloutRevision);
  });

  it('reads the controls for the current rollout revision only', () => {
    const annotations = {
      [REVISIONS_ANNOTATION]: JSON.stringify({ amd: 'a1', arm: 'b1' }),
      [ROLLOUT_REVISION_ANNOTATION]: 'R2',
      [PAUSED_ANNOTATION]: 'true',
      [APPROVED_ANNOTATION]: 'R2/3',
    };
    const snapshot = observe(edObject(annotations), regions, { replicaSets: [], deployments: [] }, [], NOW);
    expect(snapshot.ok && snapshot.input.controls).toEqual({ paused: true, aborted: false, approvedThrough: 3, resumedAt: undefined });
    const stale = observe(edObject({ ...annotations, [APPROVED_ANNOTATION]: 'R1/3' }), regions, { replicaSets: [], deployments: [] }, [], NOW);
    expect(stale.ok && stale.input.controls.approvedThrough).toBeUndefined();
  });

  it('uses Deployments in compat mode, ReplicaSets otherwise', () => {
    const annotations = { [REVISIONS_ANNOTATION]: JSON.stringify({ amd: 'a1', arm: 'b1' }), [ROLLOUT_REVISION_ANNOTATION]: 'R' };
    const workloads = { replicaSets: [rs('web-amd', 'from-rs', 2)], deployments: [rs('web-amd', 'from-deploy', 2)] };
    const plain = observe(edObject(annotations), regions, workloads, [], NOW);
    const compat = observe(edObject(annotations, { subsetType: 'Deployment' }), regions, workloads, [], NOW);
    expect(plain.ok && plain.input.regions[0]?.workload?.templateRevision).toBe('from-rs');
    expect(compat.ok && compat.input.regions[0]?.workload?.templateRevision).toBe('from-deploy');
  });

  it('keeps a readable status and drops one it cannot read', () => {
    const annotations = { [REVISIONS_ANNOTATION]: JSON.stringify({ amd: 'a1', arm: 'b1' }), [ROLLOUT_REVISION_ANNOTATION]: 'R' };
    const good = observe({ ...edObject(annotations), status: { phase: 'Healthy', currentGroup: 2 } }, regions, { replicaSets: [], deployments: [] }, [], NOW);
    expect(good.ok && good.input.status).toEqual({ phase: 'Healthy', currentGroup: 2 });
    const bad = observe({ ...edObject(annotations), status: { phase: 'Exploded' } }, regions, { replicaSets: [], deployments: [] }, [], NOW);
    expect(bad.ok && bad.input.status).toBeUndefined();
  });

  it('reports an invalid spec with field paths instead of an input', () => {
    const snapshot = observe(
      edObject(undefined, { replicas: -1, regions: [{ name: 'amd', replicas: 'lots' }] }),
      regions,
      { replicaSets: [], deployments: [] },
      [],
      NOW,
    );
    expect(snapshot.ok).toBe(false);
    if (snapshot.ok) return;
    expect(snapshot.generation).toBe(7);
    const paths = snapshot.problems.map((p) => p.path.join('.'));
    expect(paths).toContain('spec.replicas');
    expect(paths).toContain('spec.regions.0.replicas');
  });

  it('reports the cross-field problems of a spec that also breaks the schema, all at once (as edctl validate does)', () => {
    const annotations = { [REVISIONS_ANNOTATION]: JSON.stringify({ amd: 'a1', arm: 'b1' }), [ROLLOUT_REVISION_ANNOTATION]: 'R' };
    const spec = { historyLimit: 'many', regions: [{ name: 'amd', replicas: '60%' }, { name: 'amd' }] };
    const snapshot = observe(edObject(annotations, spec), regions, { replicaSets: [], deployments: [] }, [], NOW);
    expect(!snapshot.ok && snapshot.problems.map((p) => p.path.join('.'))).toEqual(['spec.historyLimit', 'spec.regions.1.name']);
  });

  it('reports replica counts that cannot be distributed', () => {
    const annotations = { [REVISIONS_ANNOTATION]: JSON.stringify({ amd: 'a1', arm: 'b1' }), [ROLLOUT_REVISION_ANNOTATION]: 'R' };
    const snapshot = observe(
      edObject(annotations, {
        replicas: 2,
        regions: [
          { name: 'amd', replicas: '70%' },
          { name: 'arm', replicas: '40%' },
        ],
      }),
      regions,
      { replicaSets: [], deployments: [] },
      [],
      NOW,
    );
    expect(snapshot.ok).toBe(false);
    expect(!snapshot.ok && snapshot.problems.map((p) => p.path.join('.'))).toContain('spec.regions');
  });

  it('reports a missing DeployRegion when it has to render', () => {
    const snapshot = observe(edObject(undefined), regions.slice(0, 1), { replicaSets: [], deployments: [] }, [], NOW);
    expect(!snapshot.ok && snapshot.problems.map((p) => `${p.path.join('.')}: ${p.message}`)).toEqual([
      'spec.regions.1.name: DeployRegion "arm" not found (known: amd)',
    ]);
  });

  it("reports a rendered object's region whose DeployRegion is gone or invalid since the render (no nodes is no failure)", () => {
    const annotations = (rendered().manifest as ExtendedDeploymentObject).metadata?.annotations ?? {};
    const gone = observe(edObject(annotations), regions.slice(0, 1), { replicaSets: [], deployments: [] }, [], NOW, { nodes: [], usageKnown: true });
    expect(!gone.ok && gone.problems.map((p) => `${p.path.join('.')}: ${p.message}`)).toEqual([
      'spec.regions.1.name: DeployRegion "arm" not found (known: amd)',
    ]);
    const broken = { ...regions[1]!, spec: { matchLabels: 'arm64' } };
    const invalid = observe(edObject(annotations), [regions[0]!, broken], { replicaSets: [], deployments: [] }, [], NOW);
    expect(!invalid.ok && invalid.problems.map((p) => p.message)).toEqual(['DeployRegion "arm" is invalid (see its own problems)']);
    // Reported with a revision missing as well: the object shows every problem at once.
    const both = observe(edObject({ [REVISIONS_ANNOTATION]: '{"arm": "b1"}' }), regions.slice(1), { replicaSets: [], deployments: [] }, [], NOW);
    expect(!both.ok && both.problems.map((p) => p.message)).toEqual([
      'has no revision for region amd (render the object again)',
      'DeployRegion "amd" not found (known: arm)',
    ]);
  });

  it('reports a malformed or incomplete revisions annotation', () => {
    for (const [value, message] of [
      ['{', 'is not JSON (expected a map of region name to revision)'],
      ['["a"]', 'must be a JSON map of region name to revision'],
      ['{"amd": 3}', 'must be a JSON map of region name to revision'],
      ['{"amd": "a1"}', 'has no revision for region arm (render the object again)'],
    ] as const) {
      const snapshot = observe(edObject({ [REVISIONS_ANNOTATION]: value }), regions, { replicaSets: [], deployments: [] }, [], NOW);
      expect(!snapshot.ok && snapshot.problems.map((p) => p.message), value).toEqual([message]);
      expect(!snapshot.ok && snapshot.problems[0]?.path).toEqual(['metadata', 'annotations', REVISIONS_ANNOTATION]);
    }
  });
});

describe("observe: a region's pods are those its workload controls, not any pod with its labels", () => {
  const annotations = { [REVISIONS_ANNOTATION]: JSON.stringify({ amd: 'a1', arm: 'b1' }), [ROLLOUT_REVISION_ANNOTATION]: 'R' };
  const withUid = (w: WorkloadObject, uid: string, owners?: OwnerReference[]): WorkloadObject => ({
    ...w,
    metadata: { ...w.metadata, uid, ...(owners && { ownerReferences: owners }) },
  });
  /**
   * Names of region amd's pods in the snapshot; podsByRegion (which reads no spec) must find the same ones for an
   * object whose spec does not parse at all.
   */
  const amdPods = (workloads: { replicaSets: WorkloadObject[]; deployments: WorkloadObject[] }, pods: PodObject[], spec: Record<string, unknown> = {}) => {
    const snapshot = observe(edObject(annotations, spec), regions, workloads, pods, NOW);
    if (!snapshot.ok) throw new Error(JSON.stringify(snapshot.problems));
    const names = snapshot.input.regions[0]?.pods.map((p) => p.name);
    const unparsed = { ...edObject(annotations), spec: 'replicas: 3' };
    expect(
      podsByRegion(unparsed, workloads, pods)
        .find((r) => r.name === 'amd')
        ?.pods.map((p) => p.name) ?? [],
    ).toEqual(names);
    return names;
  };
  const fromGit = { replicaSets: [rs('web-amd', 'a1', 2)], deployments: [] };
  const stored = { replicaSets: [withUid(rs('web-amd', 'a1', 2), 'rs-uid')], deployments: [] };

  it.each([
    ['controlled by its ReplicaSet (kind and name decide while the ReplicaSet has no uid)', true, fromGit, controlledBy('web-amd')],
    ['controlled by its ReplicaSet, uid and all', true, stored, controlledBy('web-amd', 'rs-uid')],
    ['without ownerReferences (a bare pod, or one its ReplicaSet released)', false, fromGit, []],
    ['controlled by a Job', false, fromGit, controlledBy('backfill', 'job-uid', 'Job')],
    ['controlled by another ReplicaSet (a copy that kept the labels)', false, fromGit, controlledBy('web-amd-debug')],
    ['owned by its ReplicaSet, but not as controller', false, fromGit, [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-amd', controller: false }]],
    ['controlled by a deleted namesake of its ReplicaSet (another uid)', false, stored, controlledBy('web-amd', 'gone-uid')],
  ])("a pod with the region's labels %s: counted %s", (_what, counted, workloads, owners) => {
    expect(amdPods(workloads, [pod('p', 'amd', 'a1', { owners })])).toEqual(counted ? ['p'] : []);
  });

  it("podsByRegion: the regions the pods name, each with the pods its workload controls, and no one else's", () => {
    const workloads = { replicaSets: [rs('web-arm', 'b1', 1), rs('web-amd', 'a1', 2), rs('web-gone', 'x', 1, 'other')], deployments: [] };
    const pods = [
      pod('b', 'amd', 'a1'),
      pod('a', 'amd', 'a1'),
      pod('c', 'arm', 'b1'),
      pod('stray', 'gone', 'x'), // its workload is in another namespace
      pod('elsewhere', 'amd', 'a1', { namespace: 'other' }),
      pod('api', 'amd', 'a1', { edName: 'api' }),
    ];
    const found = podsByRegion({ ...edObject(annotations), spec: 'replicas: 3' }, workloads, pods);
    expect(found.map((r) => [r.name, r.pods.map((p) => p.name)])).toEqual([
      ['amd', ['a', 'b']],
      ['arm', ['c']],
    ]);
  });

  it("finds a region's keeper (controlled by the ExtendedDeployment itself) and its pods apart, and the history's templates", () => {
    const keeper = (name: string, owners: OwnerReference[]): WorkloadObject => ({
      metadata: {
        name,
        namespace: 'shop',
        uid: `${name}-uid`,
        labels: { [NAME_LABEL]: 'web', [REGION_LABEL]: 'amd', [KEEPER_LABEL]: 'true' },
        ownerReferences: owners,
      },
      spec: { replicas: 1, template: { metadata: { labels: { app: 'web', [REVISION_LABEL]: 'a0' } } } },
    });
    const byEd = controlledBy('web', 'ed-uid', 'ExtendedDeployment');
    const workloads = {
      replicaSets: [
        withUid(rs('web-amd', 'a1', 2), 'rs-uid'),
        keeper('web-amd-a0', byEd),
        keeper('web-amd-zz', controlledBy('web', 'other-uid', 'ExtendedDeployment')),
      ],
      deployments: [],
      controllerRevisions: [
        {
          metadata: { name: 'web-r0', namespace: 'shop', labels: { [NAME_LABEL]: 'web' }, ownerReferences: byEd },
          revision: 1,
          data: { regions: [{ region: 'amd', revision: 'a0', template: { metadata: { labels: { [REVISION_LABEL]: 'a0' } } } }] },
        },
      ],
    };
    const pods = [
      pod('p', 'amd', 'a1', { owners: controlledBy('web-amd', 'rs-uid') }),
      pod('k', 'amd', 'a0', { owners: controlledBy('web-amd-a0', 'web-amd-a0-uid') }),
    ];
    const partitioned = { regions: [{ name: 'amd', replicas: '60%', partition: 1 }, { name: 'arm' }] };
    const snapshot = observe(edObject(annotations, partitioned), regions, workloads, pods, NOW);
    if (!snapshot.ok) throw new Error(JSON.stringify(snapshot.problems));
    const amd = snapshot.input.regions[0]!;
    expect(amd.pods.map((p) => p.name)).toEqual(['p']);
    expect(amd.keeper).toMatchObject({ name: 'web-amd-a0', uid: 'web-amd-a0-uid', revision: 'a0', replicas: 1, pods: [{ name: 'k', revision: 'a0' }] });
    expect(amd.keptTemplates).toEqual({ a0: { metadata: { labels: { [REVISION_LABEL]: 'a0' } } } });
    expect(snapshot.input.uid).toBe('ed-uid');
    // The readiness gate's fail-safe opens the keeper's pods too.
    const unparsed = { ...edObject(annotations), spec: 'replicas: 3' };
    expect(
      podsByRegion(unparsed, workloads, pods)
        .find((r) => r.name === 'amd')
        ?.pods.map((p) => p.name),
    ).toEqual(['k', 'p']);
    // Without a partition the history's templates are not read.
    const plain = observe(edObject(annotations), regions, workloads, pods, NOW);
    expect(plain.ok && plain.input.regions[0]?.keptTemplates).toBeUndefined();
  });

  it('gives a region without its workload no pods, whatever carries its labels', () => {
    expect(amdPods({ replicaSets: [], deployments: [] }, [pod('p', 'amd', 'a1')])).toEqual([]);
  });

  it('compat mode: the pods of the ReplicaSets the regional Deployment controls', () => {
    const deployment = withUid(rs('web-amd', 'a1', 2), 'deploy-uid');
    const replicaSets = [
      withUid(rs('web-amd-5d8f', 'a1', 2), 'rs-new', controlledBy('web-amd', 'deploy-uid', 'Deployment')),
      withUid(rs('web-amd-77c4', 'old', 0), 'rs-old', controlledBy('web-amd', 'deploy-uid', 'Deployment')),
      withUid(rs('web-amd-0bad', 'a1', 1), 'rs-other', controlledBy('api-amd', 'api-uid', 'Deployment')),
    ];
    const pods = [
      pod('new', 'amd', 'a1', { owners: controlledBy('web-amd-5d8f', 'rs-new') }),
      pod('old', 'amd', 'old', { owners: controlledBy('web-amd-77c4', 'rs-old') }),
      pod('foreign', 'amd', 'a1', { owners: controlledBy('web-amd-0bad', 'rs-other') }),
      pod('named-deployment', 'amd', 'a1', { owners: controlledBy('web-amd', 'deploy-uid', 'Deployment') }),
      pod('bare', 'amd', 'a1', { owners: [] }),
    ];
    expect(amdPods({ replicaSets, deployments: [deployment] }, pods, { subsetType: 'Deployment' })).toEqual(['new', 'old']);
  });

  it('an old pod evicted after the rollout, as the kubelet leaves it, keeps no region from Healthy', () => {
    const r = rendered();
    const [amd, arm] = r.regions;
    const workloads = { replicaSets: [rs('web-amd', amd?.revision, 3), rs('web-arm', arm?.revision, 2)], deployments: [] };
    const status = {
      phase: 'Failed',
      reason: 'Evicted',
      message: 'The node was low on resource: memory. Threshold quantity: 100Mi, available: 91Mi.',
      conditions: [
        { type: 'DisruptionTarget', status: 'True', reason: 'TerminationByKubelet', lastTransitionTime: '2026-01-01T11:30:00Z' },
        { type: 'Ready', status: 'False', reason: 'PodCompleted', lastTransitionTime: '2026-01-01T11:30:00Z' },
      ],
    };
    const evicted = { ...pod('web-amd-old', 'amd', 'old', { marked: true }), status };
    const current = [
      ...['x', 'y', 'z'].map((n) => pod(`web-amd-${n}`, 'amd', amd?.revision ?? '')),
      ...['x', 'y'].map((n) => pod(`web-arm-${n}`, 'arm', arm?.revision ?? '')),
    ];
    const snapshot = observe(r.manifest, regions, workloads, [...current, evicted], NOW);
    if (!snapshot.ok) throw new Error(JSON.stringify(snapshot.problems));
    const plan = planRollout(snapshot.input);
    expect(plan.status.phase).toBe('Healthy');
    expect(plan.status.overview).toBe('[Normal]amd: 3/3; arm: 2/2');
    expect(plan.actions).toEqual([]);
  });

  it('keeps a terminal pod of the workload, with its phase: core decides that it counts nowhere', () => {
    const snapshot = observe(edObject(annotations), regions, fromGit, [pod('evicted', 'amd', 'a1', { phase: 'Failed', ready: false })], NOW);
    expect(snapshot.ok && snapshot.input.regions[0]?.pods.map((p) => [p.name, p.phase])).toEqual([['evicted', 'Failed']]);
  });
});

describe('podState', () => {
  it('reads timestamps as Date objects (client-node lists) and as strings (watch events) alike', () => {
    const fromList = podState(pod('p', 'amd', 'r', { since: new Date(Date.UTC(2026, 0, 1, 11)) }));
    const fromWatch = podState(pod('p', 'amd', 'r', { since: '2026-01-01T11:00:00Z' }));
    expect(fromList).toEqual(fromWatch);
    expect(fromList.readySince).toBe(Date.UTC(2026, 0, 1, 11));
  });

  it('reads a pod once per object and resourceVersion, frozen; one without a resourceVersion every time', () => {
    const versioned = { ...pod('p', 'amd', 'r'), metadata: { ...pod('p', 'amd', 'r').metadata, resourceVersion: '4' } };
    const first = podState(versioned);
    expect(podState(versioned)).toBe(first);
    expect(Object.isFrozen(first)).toBe(true);
    // The same object at another version (a fixture changed in place; a cache makes a new object) is read again.
    versioned.metadata = { ...versioned.metadata, resourceVersion: '5', deletionTimestamp: '2026-01-01T11:59:00Z' };
    expect(podState(versioned).terminating).toBe(true);
    const hand = pod('q', 'amd', 'r');
    expect(podState(hand)).not.toBe(podState(hand));
    expect(podState(hand)).toEqual(podState(hand));
  });

  it('sees terminating pods, and every negative deletion cost as a mark for removal, with its cost', () => {
    expect(podState(pod('p', 'amd', 'r', { deleting: true })).terminating).toBe(true);
    const withCost = (cost: string) => {
      const p = pod('p', 'amd', 'r');
      p.metadata = { ...p.metadata, annotations: { [POD_DELETION_COST_ANNOTATION]: cost } };
      const state = podState(p);
      return [state.markedOld, state.markCost];
    };
    expect(withCost('5')).toEqual([false, undefined]);
    expect(withCost('0')).toEqual([false, undefined]);
    expect(withCost('-100')).toEqual([true, -100]); // an earlier release's mark
    expect(withCost('-2147483647')).toEqual([true, -2147483647]);
    expect(withCost('-2147483649')).toEqual([false, undefined]); // not an int32: the ReplicaSet controller reads 0
  });

  it('reads when the agent marked a pod, and nothing for a mark without its time or a time without the mark', () => {
    const at = (annotations: Record<string, string>) => {
      const p = pod('p', 'amd', 'r');
      p.metadata = { ...p.metadata, annotations };
      return podState(p).markedAt;
    };
    expect(at({ [POD_DELETION_COST_ANNOTATION]: OLD_POD_DELETION_COST, [MARKED_AT_ANNOTATION]: '2026-01-01T11:00:00.250Z' })).toBe(
      Date.UTC(2026, 0, 1, 11, 0, 0, 250),
    );
    expect(at({ [POD_DELETION_COST_ANNOTATION]: OLD_POD_DELETION_COST })).toBeUndefined();
    expect(at({ [MARKED_AT_ANNOTATION]: '2026-01-01T11:00:00.250Z' })).toBeUndefined();
  });

  it('handles a pod without status', () => {
    expect(podState({ metadata: { name: 'p', uid: 'u' } })).toEqual({
      name: 'p',
      uid: 'u',
      revision: undefined,
      assigned: false,
      running: false,
      ready: false,
      readySince: undefined,
      terminating: false,
      markedOld: false,
      gated: false,
      gateOpen: false,
      resourceVersion: '',
      containers: [],
    });
  });

  it('reads the InPlaceUpdateReady readiness gate and its condition', () => {
    const gated = (status: string) =>
      podState({
        metadata: { name: 'p', uid: 'u' },
        spec: { readinessGates: [{ conditionType: 'InPlaceUpdateReady' }] },
        status: { conditions: [{ type: 'InPlaceUpdateReady', status }] },
      });
    expect([gated('False'), gated('True')].map((p) => [p.gated, p.gateOpen])).toEqual([
      [true, false],
      [true, true],
    ]);
  });

  it('reads when the gate closed (the grace period of a swap counts from it)', () => {
    const gate = (status: string) =>
      podState({
        metadata: { name: 'p', uid: 'u' },
        status: { conditions: [{ type: 'InPlaceUpdateReady', status, lastTransitionTime: '2026-01-01T12:00:07Z' }] },
      });
    expect([gate('False').gateClosedAt, gate('True').gateClosedAt]).toEqual([Date.UTC(2026, 0, 1, 12, 0, 7), undefined]);
  });

  it.each([
    ['none', [], [], undefined],
    ['all completed', ['init', 'migrate'], [done('init'), done('migrate')], undefined],
    [
      'the second waits in a crash loop',
      ['init', 'migrate'],
      [done('init'), waiting('migrate', 'CrashLoopBackOff', 'back-off 10s')],
      'Init:CrashLoopBackOff (back-off 10s)',
    ],
    ['the first failed', ['init', 'migrate'], [{ name: 'init', state: { terminated: { reason: 'Error', exitCode: 1 } } }], 'Init:Error'],
    ['a failure without a reason', ['init'], [{ name: 'init', state: { terminated: { exitCode: 137 } } }], 'Init:ExitCode:137'],
    ['the second runs', ['init', 'migrate'], [done('init'), { name: 'migrate', state: { running: {} } }], 'Init:1/2'],
    ['not started yet (PodInitializing, no status)', ['init', 'migrate'], [waiting('init', 'PodInitializing')], 'Init:0/2'],
  ])("reads what an init container holds the pod back with, as kubectl's STATUS says it: %s", (_, names, statuses, expected) => {
    const pod = {
      metadata: { name: 'p', uid: 'u' },
      spec: { initContainers: names.map((name) => ({ name })), containers: [{ name: 'app' }] },
      status: { initContainerStatuses: statuses },
    };
    expect(initTrouble(pod)).toBe(expected);
    expect(podState(pod).initTrouble).toBe(expected);
  });

  it("reads why a container does not run: the kubelet's waiting reason and message, or the reason it terminated", () => {
    const containers = podState({
      metadata: { name: 'p', uid: 'u' },
      spec: { containers: [{ name: 'app' }, { name: 'proxy' }, { name: 'log' }] },
      status: {
        containerStatuses: [
          { name: 'app', state: { waiting: { reason: 'CrashLoopBackOff', message: 'back-off 5m0s restarting failed container=app' } } },
          { name: 'proxy', state: { terminated: { reason: 'OOMKilled' } } },
          { name: 'log', state: { running: {} } },
        ],
      },
    }).containers;
    expect(containers?.map((c) => [c.name, c.waiting, c.terminated])).toEqual([
      ['app', { reason: 'CrashLoopBackOff', message: 'back-off 5m0s restarting failed container=app' }, undefined],
      ['proxy', undefined, 'OOMKilled'],
      ['log', undefined, undefined],
    ]);
  });
});

describe('observe reports every problem at once', () => {
  it('rendering: distribution and missing region together', () => {
    const ed = edObject(undefined, {
      replicas: 2,
      regions: [
        { name: 'amd', replicas: '70%' },
        { name: 'nowhere', replicas: '40%' },
      ],
    });
    const snapshot = observe(ed, regions, { replicaSets: [], deployments: [] }, [], NOW);
    expect(!snapshot.ok && snapshot.problems.map((p) => p.path.join('.')).sort()).toEqual(['spec.regions', 'spec.regions.1.name']);
  });

  it('annotated: distribution and annotation together', () => {
    const ed = edObject(
      { [REVISIONS_ANNOTATION]: '{' },
      {
        replicas: 2,
        regions: [
          { name: 'amd', replicas: '70%' },
          { name: 'arm', replicas: '40%' },
        ],
      },
    );
    const snapshot = observe(ed, regions, { replicaSets: [], deployments: [] }, [], NOW);
    expect(!snapshot.ok && snapshot.problems.map((p) => p.path.join('.'))).toEqual(['spec.regions', `metadata.annotations.${REVISIONS_ANNOTATION}`]);
  });
});

describe('wantsMoves', () => {
  const rows: { name: string; strategy: unknown; status?: unknown; wants: boolean }[] = [
    { name: 'no strategy: the schema defaults leave moves off', strategy: undefined, wants: false },
    { name: 'shortage moves on', strategy: { autoReschedule: { enable: true } }, wants: true },
    { name: 'fault moves on', strategy: { faultMove: { enable: true } }, wants: true },
    { name: 'both explicitly off', strategy: { autoReschedule: { enable: false }, faultMove: { enable: false } }, wants: false },
    { name: 'a malformed setting turns nothing on', strategy: { autoReschedule: { enable: 'yes' } }, wants: false },
    {
      name: 'moves off but replicas still away: the agent keeps looking at nodes to bring them back',
      strategy: undefined,
      status: { moves: [{ from: 'a', to: 'b', count: 1 }] },
      wants: true,
    },
  ];
  for (const row of rows) {
    it(row.name, () => {
      const ed = edObject(undefined, row.strategy === undefined ? {} : { strategy: row.strategy });
      expect(wantsMoves({ ...ed, ...(row.status !== undefined && { status: row.status }) })).toBe(row.wants);
    });
  }
});
