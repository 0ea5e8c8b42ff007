import { describe, expect, it } from 'vitest';
import type { ExtendedDeploymentStatus } from '../api/extended-deployment.js';
import type { RolloutAction } from './actions.js';
import { planRollout, type RolloutInput } from './planner.js';
import type { PodState, RegionState, StatefulSetProgress } from './snapshot.js';
import { downNode, node } from '../moves/nodes-test-support.js';
import { podState, rolloutInput, webEd } from './test-support.js';

const T0 = Date.UTC(2026, 0, 1);
const LONG_AGO = T0 - 60_000;

const ed = (strategy: Record<string, unknown> = {}) =>
  webEd(
    [
      { name: 'a', replicas: 3 },
      { name: 'b', replicas: 2 },
    ],
    { minReadySeconds: 0, ...strategy },
    'StatefulSet',
  );

/** Pods `web-<region>-<ordinal>`: the highest `updated` ordinals at the new revision, the rest old; all available. */
function pods(region: string, count: number, updated: number, overrides: Partial<PodState> = {}): PodState[] {
  return Array.from({ length: count }, (_, i) =>
    podState(`web-${region}-${i}`, { revision: i >= count - updated ? 'new' : 'old', ready: true, readySince: LONG_AGO, ...overrides }),
  );
}

/**
 * Region `name`: its StatefulSet at the new template with `replicas` and `partition`, its controller's revisions
 * (`rolled`: current and update revision equal), and its pods.
 */
function region(name: string, desired: number, regionPods: PodState[], sts: Partial<StatefulSetProgress> & { replicas?: number } = {}): RegionState {
  const { replicas = desired, ...progress } = sts;
  const statefulSet: StatefulSetProgress = {
    partition: desired,
    generation: 2,
    observedGeneration: 2,
    currentRevision: 'sts-old',
    updateRevision: 'sts-new',
    ...progress,
  };
  return { name, desired, targetRevision: 'new', workload: { name: `web-${name}`, templateRevision: 'new', replicas, statefulSet }, pods: regionPods };
}

const input = (
  regions: RegionState[],
  status?: ExtendedDeploymentStatus,
  strategy: Record<string, unknown> = {},
  controls: Partial<RolloutInput['controls']> = {},
): RolloutInput => rolloutInput(ed(strategy), regions, T0, status, controls);

const written = (actions: readonly RolloutAction[]) =>
  actions.map((a) => {
    if (a.kind === 'setPartition') return `${a.workload} partition ${a.from}->${a.partition}`;
    if (a.kind === 'scale') return `${a.workload} replicas ${a.from}->${a.replicas}`;
    return `${a.kind}`;
  });

/** The status of this rollout in `group`, started at T0 − 1 s. */
const inGroup = (group: number, phase: ExtendedDeploymentStatus['phase'] = 'Progressing'): ExtendedDeploymentStatus => ({
  observedGeneration: 1,
  revision: 'R1',
  rolloutRegions: ['a', 'b'],
  currentGroup: group,
  totalGroups: 3,
  phase,
  lastGroupStartTime: new Date(T0 - 1000).toISOString(),
});

describe('StatefulSet regions: groups are partition steps', () => {
  it.each([
    {
      name: 'a new template starts group 1: the Beta pod is the highest ordinal of each region',
      regions: [region('a', 3, pods('a', 3, 0)), region('b', 2, pods('b', 2, 0))],
      status: undefined,
      group: 1,
      writes: ['web-a partition 3->2', 'web-b partition 2->1'],
    },
    {
      name: 'group 1 not yet available: the partition stays, nothing else is written',
      regions: [region('a', 3, pods('a', 3, 1, { ready: false, readySince: undefined }), { partition: 2 }), region('b', 2, pods('b', 2, 1), { partition: 1 })],
      status: inGroup(1),
      group: 1,
      writes: [],
    },
    {
      name: 'group 1 available everywhere: group 2 moves the partitions one batch lower',
      regions: [region('a', 3, pods('a', 3, 1), { partition: 2 }), region('b', 2, pods('b', 2, 1), { partition: 1 })],
      status: inGroup(1),
      group: 2,
      writes: ['web-a partition 2->1', 'web-b partition 1->0'],
    },
    {
      name: 'batchSize 2 after the Beta pod: a region takes two ordinals at once',
      regions: [region('a', 3, pods('a', 3, 1), { partition: 2 }), region('b', 2, pods('b', 2, 1), { partition: 1 })],
      status: inGroup(1),
      strategy: { batchSize: 2 },
      group: 2,
      writes: ['web-a partition 2->0', 'web-b partition 1->0'],
    },
  ])('$name', ({ regions, status, strategy, group, writes }) => {
    const plan = planRollout(input(regions, status, strategy));
    expect(plan.status.currentGroup).toBe(group);
    expect(written(plan.actions)).toEqual(writes);
  });

  it('a completed rollout covers every pod with the partition again once the controller has rolled', () => {
    const done = [
      region('a', 3, pods('a', 3, 3), { partition: 0, currentRevision: 'sts-new' }),
      region('b', 2, pods('b', 2, 2), { partition: 0, currentRevision: 'sts-new' }),
    ];
    const plan = planRollout(input(done, inGroup(3)));
    expect(plan.status.phase).toBe('Healthy');
    expect(written(plan.actions)).toEqual(['web-a partition 0->3', 'web-b partition 0->2']);
  });

  it("keeps the partition at 0 while the controller's current revision lags behind: pods a raise adds would be old", () => {
    const lagging = [region('a', 3, pods('a', 3, 3), { partition: 0 }), region('b', 2, pods('b', 2, 2), { partition: 0, currentRevision: 'sts-new' })];
    const plan = planRollout(input(lagging, inGroup(3)));
    expect(written(plan.actions)).toEqual(['web-b partition 0->2']);
    expect(plan.status.phase).toBe('Healthy');
  });

  it('a template Git has synced while the ExtendedDeployment still names the old revision waits, and writes nothing', () => {
    const synced = region('a', 3, pods('a', 3, 0));
    const ahead = { ...synced, workload: { ...synced.workload!, templateRevision: 'newer' } };
    const plan = planRollout(input([ahead, region('b', 2, pods('b', 2, 0))]));
    expect(plan.status.conditions?.find((c) => c.type === 'Progressing')?.reason).toBe('WaitingForSync');
    expect(plan.actions).toEqual([]);
  });

  it('waits for confirmation at a gate with the partition over every pod: a template Git syncs meanwhile waits for the next group', () => {
    const regions = [region('a', 3, pods('a', 3, 1), { partition: 2 }), region('b', 2, pods('b', 2, 1), { partition: 1 })];
    const plan = planRollout(input(regions, inGroup(1), { needWaitingForConfirm: true }));
    expect(plan.status.phase).toBe('WaitingForConfirmation');
    expect(written(plan.actions)).toEqual(['web-a partition 2->3', 'web-b partition 1->2']);
    // Approved, the next group lowers it again, one pod below the group before.
    const covered = regions.map((r) => ({ ...r, workload: { ...r.workload!, statefulSet: { ...r.workload!.statefulSet!, partition: r.desired } } }));
    const next = planRollout(input(covered, { ...plan.status, observedGeneration: 1 }, { needWaitingForConfirm: true }, { approvedThrough: 2 }));
    expect(written(next.actions)).toEqual(['web-a partition 3->1', 'web-b partition 2->0']);
  });

  it.each([
    { name: 'pause', controls: { paused: true }, phase: 'Paused' },
    { name: 'abort', controls: { aborted: true }, phase: 'Paused' },
  ])('a hold ($name) leaves the partition while a pod is replaced (the controller finishes it and goes no further)', ({ controls, phase }) => {
    // a's ordinal 2 is being replaced (terminating); b has nothing in flight, and is covered.
    const aPods = pods('a', 3, 0).map((p, i) => (i === 2 ? { ...p, terminating: true } : p));
    const regions = [region('a', 3, aPods, { partition: 2 }), region('b', 2, pods('b', 2, 1), { partition: 1 })];
    const plan = planRollout(input(regions, inGroup(1), {}, controls));
    expect(plan.status.phase).toBe(phase);
    expect(written(plan.actions)).toEqual(['web-b partition 1->2']);
  });

  it('a group past its deadline is Degraded, its partition over every pod (a fix waits for its own first group)', () => {
    const stuck = [
      region('a', 3, pods('a', 3, 1, { ready: false, readySince: undefined }), { partition: 2 }),
      region('b', 2, pods('b', 2, 1), { partition: 1 }),
    ];
    const late = { ...inGroup(1), lastGroupStartTime: new Date(T0 - 301_000).toISOString() };
    const plan = planRollout(input(stuck, late));
    expect(plan.status.phase).toBe('Degraded');
    expect(written(plan.actions)).toEqual(['web-a partition 2->3', 'web-b partition 1->2']);
    // It names the pod that holds it, and no forced exit: StatefulSet regions take no partition.
    const message = plan.status.conditions?.find((c) => c.type === 'Progressing')?.message ?? '';
    expect(message).toMatch(/not Ready: web-a-2/);
    expect(message).not.toMatch(/forced exit/);
  });

  it('a Git revert mid-rollout replaces the pods it leaves behind group by group, from the highest ordinal', () => {
    // v2 had reached ordinals 3 and 4 of a (partition 3); the revert's revision is the one ordinals 0–2 run (`new` here).
    const a = region(
      'a',
      5,
      pods('a', 5, 3).map((p, i) => ({ ...p, revision: i < 3 ? 'new' : 'v2' })),
      { partition: 3 },
    );
    const b = region('b', 2, pods('b', 2, 2), { partition: 2, currentRevision: 'sts-new' });
    const gated = { needWaitingForConfirm: true };
    // The pods show group 3 (Beta: 3 of a's 5 run the revision): the gate holds there, and the partition rises so that
    // the controller replaces neither v2 pod meanwhile.
    const start = planRollout(input([a, b], undefined, gated));
    expect([start.status.currentGroup, start.status.phase]).toEqual([3, 'WaitingForConfirmation']);
    expect(written(start.actions)).toEqual(['web-a partition 3->5']);
    // Approved, group 4 replaces one pod: the highest.
    const held = { ...a, workload: { ...a.workload!, statefulSet: { ...a.workload!.statefulSet!, partition: 5 } } };
    const next = planRollout(input([held, b], { ...start.status, observedGeneration: 1 }, gated, { approvedThrough: 4 }));
    expect(next.status.currentGroup).toBe(4);
    expect(written(next.actions)).toEqual(['web-a partition 5->4']);
  });

  it('a raise mid-rollout: the partition moves first, so the pods it adds below it come from the current revision and the group keeps its size', () => {
    const regions = [region('a', 5, pods('a', 3, 1), { partition: 2, replicas: 3 }), region('b', 2, pods('b', 2, 1), { partition: 1 })];
    const plan = planRollout(input(regions, inGroup(2)));
    // a runs ordinal 2 new; group 2 asks 2 new of 5: ordinal 4 new, ordinal 3 made at the current revision.
    expect(written(plan.actions)).toEqual(['web-a partition 2->4', 'web-a replicas 3->5', 'web-b partition 1->0']);
  });

  it('a cut mid-rollout: the count goes first, so the controller does not update pods it then removes', () => {
    const regions = [region('a', 2, pods('a', 3, 1), { partition: 2, replicas: 3 }), region('b', 2, pods('b', 2, 1), { partition: 1 })];
    const plan = planRollout(input(regions, inGroup(2)));
    expect(written(plan.actions)).toEqual(['web-a replicas 3->2', 'web-a partition 2->0', 'web-b partition 1->0']);
  });

  it('a hold still follows the count (capacity is served during a hold), at the revision the held pods run', () => {
    const regions = [region('a', 4, pods('a', 3, 1), { partition: 2, replicas: 3 }), region('b', 2, pods('b', 2, 1), { partition: 1 })];
    const plan = planRollout(input(regions, inGroup(1), {}, { paused: true }));
    // The partition rises over the pod the raise adds: it is made at the current revision, not ahead of the held group.
    expect(written(plan.actions)).toEqual(['web-a partition 2->4', 'web-a replicas 3->4', 'web-b partition 1->2']);
  });

  it('a region not yet created by Git makes the rollout wait for the sync', () => {
    const missing: RegionState = { name: 'b', desired: 2, targetRevision: 'new', workload: undefined, pods: [] };
    const plan = planRollout(input([region('a', 3, pods('a', 3, 0)), missing]));
    expect(plan.status.conditions?.find((c) => c.type === 'Progressing')?.message).toMatch(/waiting for workload of region b/);
    expect(plan.actions).toEqual([]);
  });

  it.each([
    { name: 'in its group', controls: {}, status: undefined, strategy: {} },
    {
      name: 'at a gate',
      controls: {},
      status: { ...inGroup(1, 'WaitingForConfirmation'), rolloutRegions: ['b'], totalGroups: 2 },
      strategy: { needWaitingForConfirm: true },
    },
    { name: 'paused', controls: { paused: true }, status: { ...inGroup(1), rolloutRegions: ['b'], totalGroups: 2 }, strategy: {} },
  ])('a region created from zero keeps the pod of its first group $name: no more pods before the next group', ({ controls, status, strategy }) => {
    const fresh = region('b', 2, pods('b', 1, 1), { replicas: 1, partition: 0, currentRevision: 'sts-new', updateRevision: 'sts-new' });
    const a = region('a', 3, pods('a', 3, 3), { currentRevision: 'sts-new', updateRevision: 'sts-new' });
    const plan = planRollout(input([a, { ...fresh, pods: pods('b', 1, 1, { ready: false, readySince: undefined }) }], status, strategy, controls));
    expect(plan.status.rolloutRegions).toEqual(['b']);
    expect(plan.status.currentGroup).toBe(1);
    expect(written(plan.actions)).toEqual(['web-b partition 0->1']);
  });

  it('a region created from zero grows by the groups: its first pod is the Beta pod, group 2 adds the next ordinal', () => {
    const fresh = region('b', 2, pods('b', 1, 1), { replicas: 1, partition: 0, currentRevision: 'sts-new', updateRevision: 'sts-new' });
    const plan = planRollout(input([region('a', 3, pods('a', 3, 3), { currentRevision: 'sts-new', updateRevision: 'sts-new' }), fresh]));
    expect(plan.status.rolloutRegions).toEqual(['b']);
    expect(plan.status.currentGroup).toBe(2);
    // The partition covers every pod (b has one revision), then the count: the controller makes ordinal 1 from it.
    expect(written(plan.actions)).toEqual(['web-b partition 0->2', 'web-b replicas 1->2']);
  });

  it('a fault move: a failed region scales down from its highest ordinals, the others scale up, and the rollout goes on', () => {
    const failed = [downNode('a-1', T0 - 60_000)];
    const regions = [
      // The node-lifecycle controller marks the pods of a NotReady node not Ready.
      { ...region('a', 3, pods('a', 3, 1, { ready: false, readySince: undefined }), { partition: 2 }), nodes: failed, room: 0 },
      { ...region('b', 2, pods('b', 2, 1), { partition: 1 }), nodes: [node('b-1')], room: 10 },
    ];
    const plan = planRollout(input(regions, inGroup(1), { faultMove: { enable: true } }));
    expect(plan.status.regions?.map((r) => [r.name, r.desired])).toEqual([
      ['a', 0],
      ['b', 5],
    ]);
    // b is in group 2 (a, at 0, has nothing left to do): 2 of its 5 pods new, its new ordinal 1 kept below the partition.
    expect(written(plan.actions)).toEqual(['web-a replicas 3->0', 'web-a partition 2->0', 'web-b partition 1->4', 'web-b replicas 2->5']);
  });
});
