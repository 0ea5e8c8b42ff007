import { describe, expect, it } from 'vitest';
import type { ExtendedDeploymentStatus } from '../api/extended-deployment.js';
import { REVISION_LABEL } from '../labels.js';
import { regionBudgets } from './budgets.js';
import { MARK_SETTLE_MS, stepRegion } from './region-step.js';
import { OLD_MARK_COST } from './removal-marks.js';
import { SLACK_MS } from './requeue.js';
import { planRollout, type RolloutControls, type RolloutInput } from './planner.js';
import { decide } from './decision.js';
import { simulateFrom, type SimulatedRegion } from '../simulate/test-support.js';
import type { PodState, RegionState } from './snapshot.js';
import { webEd } from './test-support.js';

const T0 = Date.UTC(2026, 0, 1);

function ed(
  strategy: Record<string, unknown> = {},
  regions = [
    { name: 'a', replicas: 5 },
    { name: 'b', replicas: 2 },
  ],
) {
  return webEd(regions, strategy);
}

let uid = 0;
function pod(revision: string, overrides: Partial<PodState> = {}): PodState {
  uid++;
  return {
    name: `p${uid}`,
    uid: `u${uid}`,
    revision,
    assigned: true,
    running: true,
    ready: true,
    readySince: T0 - 3_600_000,
    terminating: false,
    markedOld: revision !== 'new',
    ...overrides,
  };
}

function region(name: string, desired: number, pods: PodState[], replicas = pods.length, templateRevision = 'new'): RegionState {
  return { name, desired, targetRevision: 'new', workload: { name: `web-${name}`, templateRevision, replicas }, pods };
}

const noControls: RolloutControls = { paused: false, aborted: false, approvedThrough: undefined, resumedAt: undefined };
function input(partial: Partial<RolloutInput> & Pick<RolloutInput, 'regions'>): RolloutInput {
  return { ed: ed(), generation: 3, rolloutRevision: 'R1', status: undefined, controls: noControls, now: T0, ...partial };
}
const olds = (n: number) => Array.from({ length: n }, () => pod('old'));
const news = (n: number, o: Partial<PodState> = {}) => Array.from({ length: n }, () => pod('new', o));
const scalesDown = (plan: ReturnType<typeof planRollout>) => plan.actions.filter((a) => a.kind === 'scale' && a.replicas < a.from);
const scales = (plan: ReturnType<typeof planRollout>) =>
  plan.actions.filter((a) => a.kind === 'scale').map((a) => (a.kind === 'scale' ? `${a.region}:${a.from}->${a.replicas}` : ''));

describe('planRollout: groups match the plan exactly (simulated cluster)', () => {
  const start = (names: [string, number][]): SimulatedRegion[] =>
    names.map(([name, desired]) => ({ name, desired, targetRevision: 'new', running: { old: desired } }));
  const run = (strategy: Record<string, unknown>, regions: [string, number][]) =>
    simulateFrom(
      ed(
        strategy,
        regions.map(([name, replicas]) => ({ name, replicas })),
      ),
      'R1',
      start(regions),
    ).groups.map((g) => g.regions.map((r) => r.updated));

  it.each([
    [
      'Beta, batch 2, Parallel',
      { batchSize: 2 },
      [
        [1, 1, 1],
        [3, 3, 2],
        [5, 4, 2],
        [6, 4, 2],
      ],
    ],
    [
      'Group, batch 2, Parallel',
      { rolloutStrategy: 'Group', batchSize: 2 },
      [
        [2, 2, 2],
        [4, 4, 2],
        [6, 4, 2],
      ],
    ],
    [
      'Group, batch 50%, Parallel',
      { rolloutStrategy: 'Group', batchSize: '50%' },
      [
        [3, 2, 1],
        [6, 4, 2],
      ],
    ],
    [
      'Beta, batch 50%, Parallel',
      { batchSize: '50%' },
      [
        [1, 1, 1],
        [4, 3, 2],
        [6, 4, 2],
      ],
    ],
    [
      'Beta, batch 3, Sequential',
      { batchSize: 3, regionOrder: 'Sequential' },
      [
        [1, 0, 0],
        [4, 0, 0],
        [6, 0, 0],
        [6, 1, 0],
        [6, 4, 0],
        [6, 4, 1],
        [6, 4, 2],
      ],
    ],
  ])('%s', (_name, strategy, expected) => {
    expect(
      run(strategy, [
        ['a', 6],
        ['b', 4],
        ['c', 2],
      ]),
    ).toEqual(expected);
  });

  it('waits, as the agent does, for marks to settle before a removal relies on them', () => {
    // scaleInPriority removes an old pod first. Both old pods are marked at 00:00:00; the first removal waits until the
    // marks count (MARK_SETTLE_MS, and the agent's look SLACK_MS after that). Then each group takes 0.5 s for the old pod to
    // go and 1 s for its replacement to start (core/simulate/timing.ts): complete at 00:00:05.001, where a mark that
    // counted at once would complete at 00:00:03.
    // The pods lack the mark a completed rollout leaves (the agent was installed since).
    const spec = ed({ upgradeMode: 'scaleInPriority', minReadySeconds: 0 }, [{ name: 'a', replicas: 2 }]);
    const sim = simulateFrom(spec, 'R1', start([['a', 2]]), {}, { standingMarks: false });
    expect(sim.newPodsRemoved).toBe(0);
    expect(sim.finalStatus.conditions?.find((c) => c.reason === 'RolloutComplete')?.lastTransitionTime).toBe(
      new Date(Date.parse('2026-01-01T00:00:05Z') + SLACK_MS).toISOString(),
    );
    // With it, as the agent leaves every pod of a rollout it completed, the first removal goes at once.
    const prepared = simulateFrom(spec, 'R1', start([['a', 2]]));
    expect(prepared.newPodsRemoved).toBe(0);
    expect(prepared.finalStatus.conditions?.find((c) => c.reason === 'RolloutComplete')?.lastTransitionTime).toBe('2026-01-01T00:00:03.000Z');
  });

  it.each(['scaleOutPriority', 'scaleInPriority', 'scaleSimultaneously'] as const)('%s stays within its envelope and never removes a new pod', (mode) => {
    for (const batchSize of [1, 2, 3, '40%']) {
      for (const desired of [1, 2, 5, 8]) {
        const sim = simulateFrom(ed({ batchSize, upgradeMode: mode }, [{ name: 'a', replicas: desired }]), 'R1', start([['a', desired]]));
        const batch = typeof batchSize === 'number' ? batchSize : Math.max(1, Math.ceil((desired * 40) / 100));
        const [a] = sim.extremes;
        expect(sim.newPodsRemoved).toBe(0);
        expect(sim.finalStatus.phase).toBe('Healthy');
        if (mode === 'scaleOutPriority') {
          expect(a?.minAvailable).toBe(desired);
          expect(a?.maxPods).toBeLessThanOrEqual(desired + batch);
        } else if (mode === 'scaleInPriority') {
          expect(a?.maxPods).toBe(desired);
          expect(a?.minAvailable).toBeGreaterThanOrEqual(desired - batch);
        } else {
          expect(a?.minAvailable).toBeGreaterThanOrEqual(desired - batch);
          expect(a?.maxPods).toBeLessThanOrEqual(desired + batch);
        }
      }
    }
  });

  it('RollingUpdate respects maxSurge and maxUnavailable inside each group', () => {
    const sim = simulateFrom(
      ed({ batchSize: 4, updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } } }, [{ name: 'a', replicas: 8 }]),
      'R1',
      start([['a', 8]]),
    );
    expect(sim.extremes[0]).toEqual({ name: 'a', maxPods: 9, minAvailable: 8 });
    expect(sim.groups.map((g) => g.regions[0]?.updated)).toEqual([1, 5, 8]);
  });

  it('DeleteAllFirst removes every old pod before creating new ones', () => {
    const sim = simulateFrom(
      ed({ rolloutStrategy: 'Group', batchSize: 100, updateStrategy: { type: 'DeleteAllFirst' } }, [{ name: 'a', replicas: 4 }]),
      'R1',
      start([['a', 4]]),
    );
    expect(sim.extremes[0]).toEqual({ name: 'a', maxPods: 4, minAvailable: 0 });
    expect(sim.groups.map((g) => g.regions[0]?.updated)).toEqual([4]);
  });

  it('asks for approval at every gate, or only the first with needFirstConfirm', () => {
    const regions: [string, number][] = [['a', 5]];
    const every = simulateFrom(ed({ batchSize: 2, needWaitingForConfirm: true }, [{ name: 'a', replicas: 5 }]), 'R1', start(regions));
    const first = simulateFrom(ed({ batchSize: 2, needWaitingForConfirm: true, needFirstConfirm: true }, [{ name: 'a', replicas: 5 }]), 'R1', start(regions));
    expect(every.approvals).toEqual([2, 3]);
    expect(first.approvals).toEqual([2]);
  });
});

describe('planRollout: decisions from one snapshot', () => {
  it('starts a rollout with group 1: one new pod per region (Beta), and records the intent in status', () => {
    const plan = planRollout(input({ regions: [region('a', 5, olds(5)), region('b', 2, olds(2))] }));
    expect(scales(plan)).toEqual(['a:5->6', 'b:2->3']);
    expect(plan.status).toMatchObject({
      phase: 'Progressing',
      currentGroup: 1,
      totalGroups: 5,
      groups: '1/5',
      revision: 'R1',
      rolloutRegions: ['a', 'b'],
      observedGeneration: 3,
    });
    // One Event for the transition: the rollout's start names its first group's.
    expect(plan.events.map((e) => [e.reason, e.message])).toEqual([['RolloutStarted', 'rollout R1 started: 5 groups over a, b; group 1 started']]);
  });

  it('marks old pods for removal first and unmarks pods that are new again (rollback)', () => {
    const plan = planRollout(input({ regions: [region('a', 2, [pod('old', { markedOld: false }), pod('new', { markedOld: true })])] }));
    expect(plan.actions.filter((a) => a.kind !== 'scale').map((a) => a.kind)).toEqual(['markOld', 'unmark']);
  });

  it('marks the old pods the current group and the next replace (maxUnavailable 0), those the ReplicaSet removes first anyway first', () => {
    const unready = pod('old', { markedOld: false, ready: false, readySince: undefined });
    const olders = olds(4).map((p) => ({ ...p, markedOld: false }));
    const strategy = ed({ batchSize: 2 }, [{ name: 'a', replicas: 5 }]);
    const plan = planRollout(input({ ed: strategy, regions: [region('a', 5, [...olders, unready])] }));
    // Group 1 (Beta) replaces one pod of five, group 2 two more: three marks, first on the pod that is not Ready, then
    // by name, each stamped with the time it is made. The rest wait for their groups.
    const at = new Date(T0).toISOString();
    expect(plan.actions.filter((a) => a.kind === 'markOld')).toEqual(
      [unready, ...olders.slice(0, 2)].map((p) => ({ kind: 'markOld', region: 'a', pod: p.name, uid: p.uid, at, cost: -2147483648 })),
    );
    // Group 2 then marks what group 3 replaces: the pods it removes itself were marked a group earlier.
    const inGroup2 = planRollout(
      input({
        ed: strategy,
        regions: [
          region('a', 5, [...olders.map((p, i) => ({ ...p, markedOld: i < 2, markedAt: T0 })), { ...unready, markedOld: true, markedAt: T0 }, ...news(1)], 6),
        ],
        status: inGroup(1, 5000),
        now: T0 + 5000,
      }),
    );
    expect(inGroup2.status.currentGroup).toBe(2);
    expect(inGroup2.actions.filter((a) => a.kind === 'markOld').map((a) => 'pod' in a && a.pod)).toEqual(olders.slice(2).map((p) => p.name));
  });

  it.each([
    ['scaleInPriority', { upgradeMode: 'scaleInPriority', batchSize: 2 }],
    ['DeleteAllFirst', { updateStrategy: { type: 'DeleteAllFirst' } }],
    ['RollingUpdate with maxUnavailable', { updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 1 } } }],
  ])('%s (old pods may leave at once) marks every old pod at the rollout start, and removes none before the marks settle', (_name, strategy) => {
    const unmarked = olds(5).map((p) => ({ ...p, markedOld: false }));
    const spec = ed(strategy, [{ name: 'a', replicas: 5 }]);
    const start = planRollout(input({ ed: spec, regions: [region('a', 5, unmarked)] }));
    expect(start.actions.filter((a) => a.kind === 'markOld')).toHaveLength(5);
    expect(scalesDown(start)).toEqual([]);
    const status = start.status;
    const marked = (at: number) => unmarked.map((p) => ({ ...p, markedOld: true, markedAt: at }));
    const early = planRollout(input({ ed: spec, regions: [region('a', 5, marked(T0))], status, now: T0 + MARK_SETTLE_MS - 1 }));
    expect(scalesDown(early)).toEqual([]);
    expect(early.status.conditions?.[0]?.message).toMatch(/a mark counts 2 s after it is made/);
    const settled = planRollout(input({ ed: spec, regions: [region('a', 5, marked(T0))], status, now: T0 + MARK_SETTLE_MS }));
    expect(scalesDown(settled)).not.toEqual([]);
  });

  it('removes old pods only when as many of them as leave are marked and settled, or not Ready', () => {
    const status: ExtendedDeploymentStatus = { revision: 'R1', rolloutRegions: ['a'], currentGroup: 3, lastGroupStartTime: new Date(T0).toISOString() };
    const strategy = ed({ batchSize: 2 }, [{ name: 'a', replicas: 5 }]);
    // The last group's 5 new pods are available; both old pods leave. One mark is old, the other just made.
    const oldPods = [pod('old', { markedAt: T0 - 60_000 }), pod('old', { markedAt: T0 - 500 })];
    const waiting = planRollout(input({ ed: strategy, regions: [region('a', 5, [...news(5), ...oldPods])], status }));
    expect(scales(waiting)).toEqual([]);
    expect(waiting.status.conditions?.[0]?.message).toMatch(/1 of the 2 old pods to remove are marked/);
    // Settled, or made before marks carried their time, or not Ready (the ReplicaSet removes it first anyway): both go.
    for (const second of [{ markedAt: T0 - MARK_SETTLE_MS }, { markedAt: undefined }, { markedOld: false, ready: false, readySince: undefined }]) {
      const pods = [...news(5), oldPods[0]!, { ...oldPods[1]!, ...second }];
      expect(scales(planRollout(input({ ed: strategy, regions: [region('a', 5, pods)], status })))).toEqual(['a:7->5']);
    }
    // An unmarked old pod is marked now, and removed once its mark has settled.
    const unmarked = planRollout(
      input({ ed: strategy, regions: [region('a', 5, [...news(5), oldPods[0]!, { ...oldPods[1]!, markedOld: false, markedAt: undefined }])], status }),
    );
    expect(unmarked.actions.map((a) => a.kind)).toEqual(['markOld']);
  });

  it('keeps new pods beyond the group (an old pod deleted by hand came back new): nothing to remove', () => {
    // A region's step toward 1 new pod of 5 while it runs 2 new and 3 unmarked old ones: ahead of its group, not over
    // its count. Scaled to 4, the ReplicaSet would remove the most recently Ready pod, a new one, and the region would
    // run a pod short of desired until the next group.
    const strategy = ed({ batchSize: 2 }, [{ name: 'a', replicas: 5 }]).spec.strategy;
    const step = stepRegion(region('a', 5, [...news(2), ...olds(3).map((p) => ({ ...p, markedOld: false }))]), 1, regionBudgets(strategy, 5), 0, T0);
    expect(step.blocked).toBeUndefined();
    expect(step.actions).toEqual([]);
    expect([step.available, step.done]).toEqual([true, true]);
  });

  it('removes no old pod while a new pod still carries the mark (the ReplicaSet would pick it first)', () => {
    const status: ExtendedDeploymentStatus = { revision: 'R1', rolloutRegions: ['a'], currentGroup: 3, lastGroupStartTime: new Date(T0).toISOString() };
    const pods = [...news(4), pod('new', { markedOld: true }), ...olds(2)];
    const plan = planRollout(input({ ed: ed({ batchSize: 2 }, [{ name: 'a', replicas: 5 }]), regions: [region('a', 5, pods)], status }));
    expect(plan.actions.map((a) => a.kind)).toEqual(['unmark']);
    expect(plan.status.conditions?.[0]?.message).toMatch(/still carries the mark/);
  });

  it('never scales down while a new pod is not Ready (the ReplicaSet would pick it)', () => {
    // group 2 of scaleInPriority with batch 2 may remove one available old pod, but a new pod is not Ready
    const status: ExtendedDeploymentStatus = { revision: 'R1', rolloutRegions: ['a'], currentGroup: 2, lastGroupStartTime: new Date(T0).toISOString() };
    const pods = [...olds(4), ...news(1, { ready: false, readySince: undefined })];
    const plan = planRollout(
      input({ ed: ed({ upgradeMode: 'scaleInPriority', batchSize: 2 }, [{ name: 'a', replicas: 5 }]), regions: [region('a', 5, pods)], status }),
    );
    expect(scales(plan)).toEqual([]);
    expect(plan.status.conditions?.[0]?.message).toMatch(/is not Ready yet/);
  });

  it('never lowers the count under a ReplicaSet replacing an evicted old pod while a new pod is not Ready (it would remove a new one)', () => {
    // Group 2 of 3 (Beta, batch 1): an old pod was evicted; the ReplicaSet (4 replicas, surge) is creating its
    // replacement, which the agent does not see yet: 1 old, 2 new (one not Ready) seen.
    const status: ExtendedDeploymentStatus = { revision: 'R1', rolloutRegions: ['a'], currentGroup: 2, lastGroupStartTime: new Date(T0).toISOString() };
    const pods = [...olds(1), ...news(1), ...news(1, { ready: false, readySince: undefined })];
    const plan = planRollout(input({ ed: ed({ batchSize: 1 }, [{ name: 'a', replicas: 3 }]), regions: [region('a', 3, pods, 4)], status }));
    expect(scalesDown(plan)).toEqual([]);
  });

  it('makes no writes in steady state', () => {
    const plan = planRollout(input({ regions: [region('a', 5, news(5)), region('b', 2, news(2))] }));
    expect(plan.actions).toEqual([]);
    expect(plan.status.phase).toBe('Healthy');
    expect(plan.status.overview).toBe('[Normal]a: 5/5; b: 2/2');
  });

  it('scales a region that is not part of a rollout straight to its count', () => {
    const healthy: ExtendedDeploymentStatus = {
      revision: 'R1',
      phase: 'Healthy',
      regions: [
        { name: 'a', desired: 5 },
        { name: 'b', desired: 2 },
      ],
    };
    const plan = planRollout(input({ regions: [region('a', 7, news(5)), region('b', 1, news(2))], status: healthy }));
    // b's cut waits until a's new pods are available (make-before-break, handoff.ts).
    expect(scales(plan)).toEqual(['a:5->7']);
    expect(scales(planRollout(input({ regions: [region('a', 7, news(7), 7), region('b', 1, news(2))], status: healthy })))).toEqual(['b:2->1']);
  });

  it('acts only when the workloads come from the same render as the ExtendedDeployment', () => {
    const plan = planRollout(input({ regions: [region('a', 5, olds(5), 5, 'stale'), region('b', 2, olds(2))] }));
    expect(plan.actions).toEqual([]);
    expect(plan.status.conditions?.[0]).toMatchObject({ reason: 'WaitingForSync', status: 'True' });
  });

  it('starts a new rollout at group 1 when its ExtendedDeployment was seen before its workloads synced', () => {
    // R0 finished in group 3. Git renders R1; the agent sees the ExtendedDeployment before the ReplicaSets (the usual
    // GitOps order), then the ReplicaSets. The grouping must restart at 1, not continue at R0's group 3.
    const done: ExtendedDeploymentStatus = { revision: 'R0', rolloutRegions: ['a'], currentGroup: 3, totalGroups: 3, phase: 'Healthy' };
    const waiting = planRollout(input({ regions: [region('a', 5, olds(5), 5, 'stale')], status: done }));
    expect(waiting.actions).toEqual([]);
    expect(waiting.status.currentGroup).toBe(0);
    expect(waiting.status.lastGroupStartTime).toBeUndefined();
    const synced = planRollout(input({ regions: [region('a', 5, olds(5))], status: waiting.status }));
    expect(synced.status).toMatchObject({ revision: 'R1', currentGroup: 1, phase: 'Progressing' });
    expect(scales(synced)).toEqual(['a:5->6']);
    expect([...waiting.events, ...synced.events].map((e) => e.reason)).toEqual(['RolloutStarted', 'GroupStarted']);
  });

  const inGroup = (group: number, startedAgoMs = 0): ExtendedDeploymentStatus => ({
    revision: 'R1',
    rolloutRegions: ['a'],
    currentGroup: group,
    totalGroups: 3,
    phase: 'Progressing',
    lastGroupStartTime: new Date(T0 - startedAgoMs).toISOString(),
  });
  const afterGroup1 = () => [region('a', 5, [...olds(4), ...news(1)])];

  it('holds after a group until approved (edctl approve), then starts the next group', () => {
    const strategy = ed({ batchSize: 2, needWaitingForConfirm: true }, [{ name: 'a', replicas: 5 }]);
    const waiting = planRollout(input({ ed: strategy, regions: afterGroup1(), status: inGroup(1) }));
    expect(waiting.status.phase).toBe('WaitingForConfirmation');
    expect(scales(waiting)).toEqual([]);
    const approved = planRollout(input({ ed: strategy, regions: afterGroup1(), status: waiting.status, controls: { ...noControls, approvedThrough: 2 } }));
    expect(approved.status).toMatchObject({ phase: 'Progressing', currentGroup: 2 });
    expect(scales(approved)).toEqual(['a:5->7']);
  });

  // Group 1 of a (5, batch 2) is available: its new pod is Ready, and the old pod it replaces has not left yet.
  const group1Available = () => [region('a', 5, [...olds(5), ...news(1)])];

  it("starts the next group once every region's group is available: the old pods it replaced leave in its first step", () => {
    const strategy = ed({ batchSize: 2 }, [{ name: 'a', replicas: 5 }]);
    const plan = planRollout(input({ ed: strategy, regions: group1Available(), status: inGroup(1, 5000) }));
    expect(plan.status).toMatchObject({ phase: 'Progressing', currentGroup: 2, lastGroupStartTime: new Date(T0).toISOString() });
    // One Event for the transition: the group that completed is named by the one that starts.
    expect(plan.events.map((e) => [e.reason, e.message])).toEqual([['GroupStarted', 'group 2 of 3 started; group 1 completed']]);
    // Within the same budgets: the surge is used up until the old pod is gone, so group 2 first scales down.
    expect(scales(plan)).toEqual(['a:6->5']);
    const notYet = planRollout(
      input({ ed: strategy, regions: [region('a', 5, [...olds(5), ...news(1, { readySince: T0 - 500 })], 6)], status: inGroup(1, 5000) }),
    );
    expect(notYet.status.currentGroup).toBe(1);
    expect(scales(notYet)).toEqual([]);
  });

  it("asks for a group's missing pods at once once the terminating pods holding the room are gone, not one by one", () => {
    const strategy = ed({ batchSize: 2 }, [{ name: 'a', replicas: 5 }]);
    const leaving = [...olds(4), ...olds(1).map((p) => ({ ...p, terminating: true })), ...news(1)];
    // Room for one of the two missing pods: a partial scale would cost a write and a ReplicaSet controller round more.
    expect(scales(planRollout(input({ ed: strategy, regions: [region('a', 5, leaving, 5)], status: inGroup(2) })))).toEqual([]);
    // A pod deleted by someone else: the ReplicaSet (at 6) replaces it; its count is not lowered to the pods left.
    expect(scales(planRollout(input({ ed: strategy, regions: [region('a', 5, leaving, 6)], status: inGroup(2) })))).toEqual([]);
    expect(scales(planRollout(input({ ed: strategy, regions: [region('a', 5, [...olds(4), ...news(1)], 5)], status: inGroup(2) })))).toEqual(['a:5->7']);
    // Room for every missing pod: no need to wait for the terminating ones.
    const roomy = ed({ batchSize: 2, rolloutStrategy: 'Group', updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 4, maxUnavailable: 0 } } }, [
      { name: 'a', replicas: 5 },
    ]);
    expect(scales(planRollout(input({ ed: roomy, regions: [region('a', 5, leaving, 5)], status: inGroup(2) })))).toEqual(['a:5->8']);
  });

  it('asks for new pods only once the ReplicaSet controller has reported the last count and the pods that left', () => {
    const strategy = ed({ batchSize: 2 }, [{ name: 'a', replicas: 5 }]);
    const after = (reported: { generation: number; observedGeneration: number; terminatingReplicas: number | undefined }): RegionState => ({
      ...region('a', 5, [...olds(4), ...news(1)], 5),
      workload: { name: 'web-a', templateRevision: 'new', replicas: 5, reported },
    });
    // Its status write for the old pod that just left is on its way: a count written now would make it conflict.
    expect(
      scales(planRollout(input({ ed: strategy, regions: [after({ generation: 3, observedGeneration: 3, terminatingReplicas: 1 })], status: inGroup(2) }))),
    ).toEqual([]);
    expect(
      scales(planRollout(input({ ed: strategy, regions: [after({ generation: 3, observedGeneration: 2, terminatingReplicas: 0 })], status: inGroup(2) }))),
    ).toEqual([]);
    expect(
      scales(planRollout(input({ ed: strategy, regions: [after({ generation: 3, observedGeneration: 3, terminatingReplicas: 0 })], status: inGroup(2) }))),
    ).toEqual(['a:5->7']);
    // A cluster that does not report terminating pods (before Kubernetes 1.33): the generation alone.
    expect(
      scales(
        planRollout(input({ ed: strategy, regions: [after({ generation: 3, observedGeneration: 3, terminatingReplicas: undefined })], status: inGroup(2) })),
      ),
    ).toEqual(['a:5->7']);
  });

  it('settles a group (its old pods gone) before it waits for approval, and starts the next one at once when already approved', () => {
    const strategy = ed({ batchSize: 2, needWaitingForConfirm: true }, [{ name: 'a', replicas: 5 }]);
    const settling = planRollout(input({ ed: strategy, regions: group1Available(), status: inGroup(1) }));
    expect(settling.status).toMatchObject({ phase: 'Progressing', currentGroup: 1 });
    expect(scales(settling)).toEqual(['a:6->5']);
    expect(planRollout(input({ ed: strategy, regions: afterGroup1(), status: settling.status })).status.phase).toBe('WaitingForConfirmation');
    const approved = planRollout(input({ ed: strategy, regions: group1Available(), status: inGroup(1), controls: { ...noControls, approvedThrough: 2 } }));
    expect(approved.status).toMatchObject({ phase: 'Progressing', currentGroup: 2 });
  });

  it("completes the rollout only once the last group's old pods are gone", () => {
    const strategy = ed({ batchSize: 2 }, [{ name: 'a', replicas: 5 }]);
    const lastAvailable = planRollout(input({ ed: strategy, regions: [region('a', 5, [...olds(1), ...news(5)])], status: inGroup(3) }));
    expect(lastAvailable.status).toMatchObject({ phase: 'Progressing', currentGroup: 3 });
    expect(scales(lastAvailable)).toEqual(['a:6->5']);
    expect(planRollout(input({ ed: strategy, regions: [region('a', 5, news(5))], status: inGroup(3) })).status.phase).toBe('Healthy');
  });

  it('every new pod gets the mark for the next rollout, where the agent asks for it (standingMarks), during the rollout too', () => {
    const strategy = ed({ batchSize: 2 }, [{ name: 'a', replicas: 3 }]);
    const marks = (plan: ReturnType<typeof planRollout>) => plan.actions.filter((a) => a.kind === 'markOld').length;
    const complete = { ed: strategy, regions: [region('a', 3, [...news(2), pod('new', { markedOld: true, markedAt: T0 - 60_000 })])], status: inGroup(2) };
    const prepared = planRollout(input({ ...complete, standingMarks: true }));
    expect(prepared.status.phase).toBe('Healthy');
    expect(marks(prepared)).toBe(2);
    // Without it (edctl plan's simulation), nothing.
    expect(marks(planRollout(input(complete)))).toBe(0);
    // During the rollout the new pods get it as they come, one above the old pods' marks, and nothing waits for it.
    const fresh = news(2);
    const at = new Date(T0).toISOString();
    const standing = (p: PodState) => ({ kind: 'markOld', region: 'a', pod: p.name, uid: p.uid, at, cost: OLD_MARK_COST + 1, standing: true });
    for (const status of [inGroup(1), { ...inGroup(1), phase: 'Paused' as const }]) {
      const pause = status.phase === 'Paused' ? { controls: { ...noControls, paused: true } } : {};
      const during = planRollout(input({ ed: strategy, regions: [region('a', 3, [...olds(2), ...fresh])], status, standingMarks: true, ...pause }));
      expect(during.status.phase).toBe(status.phase);
      expect(during.actions.filter((a) => a.kind === 'markOld' && fresh.some((p) => p.name === a.pod))).toEqual(fresh.map(standing));
    }
    // In-place regions keep none: a swapped pod keeps its annotations, and its mark would be cleared in every rollout.
    const inPlace = webEd([{ name: 'a', replicas: 3 }], { batchSize: 2, updateStrategy: { type: 'InPlaceIfPossible' } }, 'InplaceSet');
    expect(marks(planRollout(input({ ...complete, ed: inPlace, standingMarks: true })))).toBe(0);
  });

  it('takes a declarative approval from Git only for its own rollout revision', () => {
    const approve = (revision: string) =>
      ed({ batchSize: 2, needWaitingForConfirm: true, approval: { revision, throughGroup: 2 } }, [{ name: 'a', replicas: 5 }]);
    expect(planRollout(input({ ed: approve('R1'), regions: afterGroup1(), status: inGroup(1) })).status.currentGroup).toBe(2);
    expect(planRollout(input({ ed: approve('R0'), regions: afterGroup1(), status: inGroup(1) })).status.phase).toBe('WaitingForConfirmation');
  });

  it('pauses by strategy.pause or edctl pause, and aborts in place', () => {
    const regions = [region('a', 5, olds(5))];
    const bySpec = planRollout(input({ ed: ed({ pause: true }, [{ name: 'a', replicas: 5 }]), regions, status: inGroup(1) }));
    const byControl = planRollout(input({ ed: ed({}, [{ name: 'a', replicas: 5 }]), regions, status: inGroup(1), controls: { ...noControls, paused: true } }));
    const aborted = planRollout(input({ ed: ed({}, [{ name: 'a', replicas: 5 }]), regions, status: inGroup(1), controls: { ...noControls, aborted: true } }));
    for (const plan of [bySpec, byControl, aborted]) {
      expect(plan.actions).toEqual([]);
      expect(plan.status.phase).toBe('Paused');
    }
    expect(aborted.status.conditions?.[0]?.reason).toBe('Aborted');
    expect(bySpec.events.map((e) => e.reason)).toEqual(['Paused']);
  });

  it('stops as Degraded when a group misses the progress deadline, and resume restarts the clock', () => {
    const strategy = ed({ syncWaitTimeout: 60 }, [{ name: 'a', replicas: 5 }]);
    const stuck = [region('a', 5, [...olds(5), ...news(1, { name: 'web-a-new', ready: false, readySince: undefined })], 6)];
    const late = planRollout(input({ ed: strategy, regions: stuck, status: inGroup(1, 61_000) }));
    expect(late.status.phase).toBe('Degraded');
    expect(late.actions).toEqual([]);
    expect(late.status.conditions?.[0]).toMatchObject({ type: 'Progressing', status: 'False', reason: 'ProgressDeadlineExceeded' });
    expect(late.events).toEqual([
      {
        type: 'Warning',
        reason: 'ProgressDeadlineExceeded',
        message:
          'group 1 did not finish within 60s; the rollout stopped; not Ready: web-a-new; to keep what runs Ready instead (forced exit), set in Git: region a replicas 5 partition 5',
      },
    ]);
    const resumed = planRollout(input({ ed: strategy, regions: stuck, status: late.status, controls: { ...noControls, resumedAt: T0 - 1000 } }));
    expect(resumed.status.phase).toBe('Progressing');
    expect(planRollout(input({ ed: strategy, regions: stuck, status: inGroup(1, 59_000) })).status.phase).toBe('Progressing');
  });

  it('releases Degraded when the spec changes in Git: the group starts its deadline again from the change', () => {
    const strategy = ed({ syncWaitTimeout: 60 }, [{ name: 'a', replicas: 5 }]);
    const stuck = [region('a', 5, [...olds(5), ...news(1, { ready: false, readySince: undefined })], 6)];
    const degraded = planRollout(input({ ed: strategy, regions: stuck, status: { ...inGroup(1, 61_000), observedGeneration: 3 } }));
    expect(degraded.status.phase).toBe('Degraded');
    const changed = planRollout(input({ ed: strategy, regions: stuck, status: degraded.status, generation: 4 }));
    expect(changed.status).toMatchObject({ phase: 'Progressing', currentGroup: 1, lastGroupStartTime: new Date(T0).toISOString(), observedGeneration: 4 });
    // From then on the new start holds: the same spec looked at again later does not restart it.
    const later = planRollout(input({ ed: strategy, regions: stuck, status: changed.status, generation: 4, now: T0 + 61_000 }));
    expect(later.status.phase).toBe('Degraded');
  });

  it('defaults the deadline to 300 s when syncWaitTimeout is 0', () => {
    const stuck = [region('a', 5, [...olds(5), ...news(1, { ready: false, readySince: undefined })], 6)];
    const strategy = ed({}, [{ name: 'a', replicas: 5 }]);
    expect(planRollout(input({ ed: strategy, regions: stuck, status: inGroup(1, 299_000) })).status.phase).toBe('Progressing');
    expect(planRollout(input({ ed: strategy, regions: stuck, status: inGroup(1, 301_000) })).status.phase).toBe('Degraded');
  });

  it('continues the group the pods show when the status write was lost (leader died after scaling)', () => {
    const strategy = ed({ batchSize: 2 }, [{ name: 'a', replicas: 5 }]);
    const pods = [...olds(4), ...news(1), ...news(2, { ready: false, readySince: undefined })];
    const plan = planRollout(input({ ed: strategy, regions: [region('a', 5, pods, 7)], status: inGroup(1) }));
    expect(plan.status.currentGroup).toBe(2);
    expect(scales(plan)).toEqual([]);
  });

  it('treats pods of both older revisions as old when a third revision arrives mid-rollout', () => {
    const pods = [pod('r1'), pod('r1'), pod('r2'), pod('r2')];
    const plan = planRollout(input({ ed: ed({}, [{ name: 'a', replicas: 4 }]), rolloutRevision: 'R3', regions: [region('a', 4, pods)], status: inGroup(2) }));
    expect(plan.status).toMatchObject({ revision: 'R3', currentGroup: 1, rolloutRegions: ['a'] });
    expect(scales(plan)).toEqual(['a:4->5']);
  });

  it('serves a raise mid-rollout at once: the missing pods come at the new revision, the only template there is', () => {
    const plan = planRollout(
      input({ ed: ed({ batchSize: 2 }, [{ name: 'a', replicas: 8 }]), regions: [region('a', 8, [...olds(4), ...news(1)], 5)], status: inGroup(1) }),
    );
    expect(plan.status.currentGroup).toBe(2);
    expect(scales(plan)).toEqual(['a:5->8']);
  });

  it('keeps the group and its gates when a region shrinks below the new pods it runs (surplus, not progress)', () => {
    // Group 2 of 4 waits for approval; a and c run 2 new + 2 old each. Git shrinks a to 1: its 2 new pods exceed every
    // target a 1-replica region has, which must not read as "the pods show the last group" (c would roll to the end
    // without approval).
    const confirm = { needWaitingForConfirm: true };
    const status: ExtendedDeploymentStatus = { ...inGroup(2), rolloutRegions: ['a', 'c'], totalGroups: 4, phase: 'WaitingForConfirmation' };
    const shrunk = ed(confirm, [
      { name: 'a', replicas: 1 },
      { name: 'c', replicas: 4 },
    ]);
    const plan = planRollout(input({ ed: shrunk, regions: [region('a', 1, [...olds(2), ...news(2)]), region('c', 4, [...olds(2), ...news(2)])], status }));
    expect(plan.status).toMatchObject({ currentGroup: 2, totalGroups: 4 });
    // a sheds its old pods, then its surplus new pod (a hold still follows Git's counts); c waits at its gate.
    expect(scales(plan)).toEqual(['a:4->2']);
    const shed = [region('a', 1, news(2)), region('c', 4, [...olds(2), ...news(2)])];
    const after = planRollout(input({ ed: shrunk, regions: shed, status: plan.status }));
    expect(after.status).toMatchObject({ phase: 'WaitingForConfirmation', currentGroup: 2, totalGroups: 4 });
    expect(scales(after)).toEqual(['a:2->1']);
    // Approved: group 3 starts, and a drops its surplus.
    const approved = planRollout(input({ ed: shrunk, regions: shed, status: after.status, controls: { ...noControls, approvedThrough: 3 } }));
    expect(approved.status).toMatchObject({ phase: 'Progressing', currentGroup: 3 });
    expect(scales(approved)).toEqual(['a:2->1', 'c:4->5']);
  });
});

describe('planRollout: regions that start from zero are created by groups (Beta: one pod first)', () => {
  const confirm = ed({ batchSize: 2, needWaitingForConfirm: true });
  const created = (readyPods: number) => [region('a', 5, news(readyPods), readyPods), region('b', 2, news(readyPods), readyPods)];

  it('a new ExtendedDeployment starts with the first group: the one pod its ReplicaSets were created with', () => {
    // Git creates each ReplicaSet without spec.replicas: Kubernetes makes it 1, which is Beta's first pod.
    const plan = planRollout(input({ ed: confirm, regions: [region('a', 5, news(1, { ready: false })), region('b', 2, news(1, { ready: false }))] }));
    expect(plan.status).toMatchObject({ phase: 'Progressing', revision: 'R1', currentGroup: 1, totalGroups: 3, rolloutRegions: ['a', 'b'] });
    expect(scales(plan)).toEqual([]);
    expect(plan.events.map((e) => e.reason)).toContain('RolloutStarted');
  });

  it('in Sequential order, every region keeps the pod Kubernetes gave its ReplicaSet, even before the pod exists, and the first group starts', () => {
    // Git created every ReplicaSet, each got Kubernetes' 1 replica; c's pod is not there yet. Read as progress, b's and
    // c's pods would make the rollout start in group 5 (a and b at once at their full count); c's target in group 1 is
    // 0, but scaling it to 0 would remove the pod being created, for group 5 to create it again.
    const sequential = ed({ batchSize: 2, needWaitingForConfirm: true, regionOrder: 'Sequential' }, [
      { name: 'a', replicas: 3 },
      { name: 'b', replicas: 2 },
      { name: 'c', replicas: 2 },
    ]);
    const seen = (cPods: number) => [region('a', 3, news(1)), region('b', 2, news(1)), region('c', 2, news(cPods), 1)];
    for (const cPods of [1, 0]) {
      const plan = planRollout(input({ ed: sequential, regions: seen(cPods) }));
      expect(plan.status).toMatchObject({ currentGroup: 1, totalGroups: 6 });
      expect(scales(plan)).toEqual([]);
    }
    const groups = simulateFrom(sequential, 'R1', [
      { name: 'a', desired: 3, targetRevision: 'new', running: {}, replicas: undefined },
      { name: 'b', desired: 2, targetRevision: 'new', running: {}, replicas: undefined },
      { name: 'c', desired: 2, targetRevision: 'new', running: {}, replicas: undefined },
    ]).groups.map((g) => g.regions.map((r) => r.updated));
    expect(groups).toEqual([
      [1, 1, 1],
      [3, 1, 1],
      [3, 1, 1],
      [3, 2, 1],
      [3, 2, 1],
      [3, 2, 2],
    ]);
  });

  it('waits for approval once the first pods are available, and grows by the batch when approved', () => {
    const first = planRollout(input({ ed: confirm, regions: created(1) }));
    const waiting = planRollout(input({ ed: confirm, regions: created(1), status: first.status }));
    expect(waiting.status).toMatchObject({ phase: 'WaitingForConfirmation', currentGroup: 1 });
    expect(scales(waiting)).toEqual([]);
    const approved = planRollout(input({ ed: confirm, regions: created(1), status: waiting.status, controls: { ...noControls, approvedThrough: 2 } }));
    expect(approved.status).toMatchObject({ phase: 'Progressing', currentGroup: 2 });
    expect(scales(approved)).toEqual(['a:1->3', 'b:1->2']);
  });

  it('a region added to a running ExtendedDeployment is created by groups; the others are not touched', () => {
    const healthy: ExtendedDeploymentStatus = { revision: 'R0', phase: 'Healthy', regions: [{ name: 'a', desired: 5 }] };
    const plan = planRollout(input({ ed: confirm, regions: [region('a', 5, news(5)), region('b', 2, [], 0)], status: healthy }));
    expect(plan.status).toMatchObject({ revision: 'R1', currentGroup: 1, totalGroups: 2, rolloutRegions: ['b'] });
    expect(scales(plan)).toEqual(['b:0->1']);
  });

  it('a region whose ReplicaSet Git scaled to 0 is created by groups too', () => {
    const plan = planRollout(input({ ed: ed({ rolloutStrategy: 'Group', batchSize: 2 }, [{ name: 'a', replicas: 6 }]), regions: [region('a', 6, [], 0)] }));
    expect(scales(plan)).toEqual(['a:0->2']);
  });

  it('a plan shows the groups of a creation (the simulated cluster starts without pods)', () => {
    const groups = simulateFrom(confirm, 'R1', [
      { name: 'a', desired: 5, targetRevision: 'new', running: {} },
      { name: 'b', desired: 2, targetRevision: 'new', running: {} },
    ]).groups.map((g) => g.regions.map((r) => r.updated));
    expect(groups).toEqual([
      [1, 1],
      [3, 2],
      [5, 2],
    ]);
  });
});

describe('planRollout: a held rollout still serves capacity and Git', () => {
  // Group 1 of 3 in region a (5 replicas, Beta, batch 2) is done and waits for approval: 4 old pods and 1 new.
  const confirm = (replicas: number) => ed({ batchSize: 2, needWaitingForConfirm: true }, [{ name: 'a', replicas }]);
  const held = (phase: ExtendedDeploymentStatus['phase']): ExtendedDeploymentStatus => ({
    revision: 'R1',
    rolloutRegions: ['a'],
    currentGroup: 1,
    totalGroups: 3,
    phase,
    observedGeneration: 3,
    lastGroupStartTime: new Date(T0).toISOString(),
    regions: [{ name: 'a', desired: 5 }],
  });

  it.each([
    ['waiting for approval', 'WaitingForConfirmation' as const, noControls],
    ['paused', 'Paused' as const, { ...noControls, paused: true }],
    ['aborted', 'Paused' as const, { ...noControls, aborted: true }],
  ])('%s: a raise is served at once (at the new revision) and the gate still holds', (_, phase, controls) => {
    const plan = planRollout(input({ ed: confirm(8), regions: [region('a', 8, [...olds(4), ...news(1)])], status: held(phase), controls }));
    expect(plan.status).toMatchObject({ phase, currentGroup: 1 });
    expect(scales(plan)).toEqual(['a:5->8']);
  });

  it('a cut while held removes old pods first and keeps the new one', () => {
    const paused = { ...noControls, paused: true };
    const plan = planRollout(input({ ed: confirm(3), regions: [region('a', 3, [...olds(4), ...news(1)])], status: held('Paused'), controls: paused }));
    expect(plan.status).toMatchObject({ phase: 'Paused', currentGroup: 1 });
    expect(scales(plan)).toEqual(['a:5->3']);
  });

  it('a completed rollout stays complete: a raise is served at once, its groups do not reopen behind a gate', () => {
    const done: ExtendedDeploymentStatus = {
      revision: 'R1',
      phase: 'Healthy',
      rolloutRegions: ['a'],
      currentGroup: 3,
      totalGroups: 3,
      observedGeneration: 2,
      regions: [{ name: 'a', desired: 5 }],
    };
    const plan = planRollout(input({ ed: confirm(8), regions: [region('a', 8, news(5))], status: done }));
    expect(scales(plan)).toEqual(['a:5->8']);
    expect(plan.status).toMatchObject({ phase: 'Progressing', currentGroup: 3, totalGroups: 3 });
    expect(plan.status.conditions?.[0]?.reason).toBe('Scaling');
    const settled = planRollout(input({ ed: confirm(8), regions: [region('a', 8, news(8))], status: plan.status }));
    expect(settled.status).toMatchObject({ phase: 'Healthy', currentGroup: 3, totalGroups: 3 });
    expect(settled.events).toEqual([]);
  });

  it('a region emptied while held (its replicas moved away) sheds its pods although its new pod is not Ready', () => {
    const failing = [...olds(3).map((p) => ({ ...p, ready: false })), ...news(1, { ready: false })];
    const plan = planRollout(input({ ed: confirm(5), regions: [region('a', 0, failing)], status: held('WaitingForConfirmation') }));
    expect(scales(plan)).toEqual(['a:4->1']);
    const next = planRollout(input({ ed: confirm(5), regions: [region('a', 0, news(1, { ready: false }))], status: plan.status }));
    expect(scales(next)).toEqual(['a:1->0']);
  });
});

describe('planRollout: Failed (evicted) and Succeeded pods count nowhere, as for the ReplicaSet controller', () => {
  // One region of 3, scaleOutPriority, batch 1 (Beta): groups of 1, 2 and 3 new pods; at most 4 pods.
  const spec = ed({}, [{ name: 'a', replicas: 3 }]);
  const at = (group: number, phase = 'Progressing'): ExtendedDeploymentStatus => ({
    revision: 'R1',
    rolloutRegions: ['a'],
    currentGroup: group,
    totalGroups: 3,
    phase: phase as ExtendedDeploymentStatus['phase'],
    lastGroupStartTime: new Date(T0).toISOString(),
  });
  // As the kubelet leaves an evicted pod (phase Failed, reason Evicted): containers stopped, Ready False; the object
  // stays until someone deletes it or PodGC collects it.
  const evicted = (revision: string) => pod(revision, { phase: 'Failed', running: false, ready: false });
  const succeeded = (revision: string) => pod(revision, { phase: 'Succeeded', running: false, ready: false });

  it.each<
    [string, PodState[], number, ExtendedDeploymentStatus | undefined, { phase: string; group: number; scales: string[]; current: number; updated: number }]
  >([
    // The ReplicaSet (at 4) has replaced the evicted new pod: group 2 is available, so group 3 starts and the old pod
    // group 2 replaced leaves. Counted, the dead pod kept the count at 4 as if an old pod had gone: nothing moved.
    [
      'an evicted new pod its ReplicaSet replaced does not hold the group',
      [...news(2), evicted('new'), ...olds(2)],
      4,
      at(2),
      { phase: 'Progressing', group: 3, scales: ['a:4->3'], current: 4, updated: 2 },
    ],
    // Not replaced yet: the group waits for the replacement, which the ReplicaSet creates (4 asked for, 3 active).
    // Counted, the dead pod stood in for the group's second new pod.
    [
      'an evicted new pod not replaced yet leaves its group waiting for the replacement',
      [...news(1), evicted('new'), ...olds(2)],
      4,
      at(2),
      { phase: 'Progressing', group: 2, scales: [], current: 3, updated: 1 },
    ],
    // A rollout's start with an evicted old pod: the first new pod is asked for. Counted, the dead pod filled the surge
    // room (4 of 4) and looked like the old pod to remove: no action at all, until the progress deadline.
    [
      'an evicted old pod does not take the surge room of a starting rollout',
      [...olds(3), evicted('old')],
      3,
      undefined,
      { phase: 'Progressing', group: 1, scales: ['a:3->4'], current: 3, updated: 0 },
    ],
    // A leftover evicted old pod after the rollout: Healthy. Counted, it was an old pod left: Progressing for good.
    [
      'a leftover evicted old pod does not keep the rollout from Healthy',
      [...news(3), evicted('old')],
      3,
      at(3),
      { phase: 'Healthy', group: 3, scales: [], current: 3, updated: 3 },
    ],
    [
      'a leftover evicted old pod starts no rollout',
      [...news(3), evicted('old')],
      3,
      at(3, 'Healthy'),
      { phase: 'Healthy', group: 3, scales: [], current: 3, updated: 3 },
    ],
    // A Succeeded pod is not one of the region's pods either: the region does not show 4 of 3.
    ['a Succeeded pod is not counted', [...news(3), succeeded('new')], 3, at(3, 'Healthy'), { phase: 'Healthy', group: 3, scales: [], current: 3, updated: 3 }],
  ])('%s', (_what, pods, replicas, status, expected) => {
    const plan = planRollout(input({ ed: spec, regions: [region('a', 3, pods, replicas)], status }));
    expect({ phase: plan.status.phase, group: plan.status.currentGroup, scales: scales(plan) }).toEqual({
      phase: expected.phase,
      group: expected.group,
      scales: expected.scales,
    });
    expect(plan.status.regions?.[0]).toMatchObject({ current: expected.current, updated: expected.updated });
    // No write ever touches a terminal pod (no mark, swap or deletion of a pod that is gone already).
    const terminal = new Set(pods.filter((p) => p.phase === 'Failed' || p.phase === 'Succeeded').map((p) => p.name));
    expect(plan.actions.filter((a) => 'pod' in a && terminal.has(a.pod))).toEqual([]);
  });

  it('a terminating pod is not available and still holds its room; a terminal one being deleted holds none', () => {
    // Group 2 of 3: one new pod available, one new pod terminating (deleted by someone), two old pods.
    const terminating = pod('new', { terminating: true });
    const step = stepRegion(region('a', 3, [...news(1), terminating, ...olds(2)], 4), 2, regionBudgets(spec.spec.strategy, 3), 0, T0);
    expect(step.counts).toMatchObject({ current: 3, updated: 1, updatedAvailable: 1, available: 3, terminating: 1 });
    expect(step.available).toBe(false);
    // The same pod evicted before its deletion: it holds no room, and the replacement is asked for at once.
    const gone = stepRegion(
      region('a', 3, [...news(1), { ...terminating, phase: 'Failed', running: false, ready: false }, ...olds(2)], 3),
      2,
      regionBudgets(spec.spec.strategy, 3),
      0,
      T0,
    );
    expect(gone.counts).toMatchObject({ current: 3, updated: 1, terminating: 0 });
    expect(gone.actions).toEqual([{ kind: 'scale', region: 'a', workload: 'web-a', from: 3, replicas: 4 }]);
  });
});

describe('planRollout: an old pod evicted mid-group comes back at the new revision (the ReplicaSet replaces it)', () => {
  // One region of 3, scaleOutPriority, Beta batch 1 (targets 1, 2, 3; at most 4 pods), confirmation after each group.
  // Group 2 runs: the ReplicaSet (at 4) made its new pod n, then one old pod was evicted and it replaced that one at the
  // template's revision too: 3 new pods, 1 old, 1 Failed.
  const spec = ed({ needWaitingForConfirm: true }, [{ name: 'a', replicas: 3 }]);
  const group2: ExtendedDeploymentStatus = {
    revision: 'R1',
    rolloutRegions: ['a'],
    currentGroup: 2,
    totalGroups: 3,
    phase: 'Progressing',
    lastGroupStartTime: new Date(T0).toISOString(),
  };
  const evicted = pod('old', { phase: 'Failed', running: false, ready: false });
  const starting = { ready: false, readySince: undefined };
  const unmarkedOld = () => pod('old', { markedOld: false });

  it('the group stays the one the status records: the pods run ahead of it, but its gate has not been passed', () => {
    const pods = [...news(1), ...news(2, starting), unmarkedOld(), evicted];
    const plan = planRollout(input({ ed: spec, regions: [region('a', 3, pods, 4)], status: group2 }));
    // Read from the pods (3 new exceed group 2's target), group 3 would start here, past the gate after group 2.
    expect(plan.status).toMatchObject({ phase: 'Progressing', currentGroup: 2 });
    expect(scalesDown(plan)).toEqual([]);
    // Once the new pods are available, group 2 is done and its gate holds.
    const ready = planRollout(input({ ed: spec, regions: [region('a', 3, [...news(3), unmarkedOld(), evicted], 4)], status: group2 }));
    expect(ready.status).toMatchObject({ phase: 'WaitingForConfirmation', currentGroup: 2 });
  });

  it('the old pod leaves, marked first, rather than a new one (the ReplicaSet removes an unmarked new pod first)', () => {
    const old = unmarkedOld();
    const budgets = regionBudgets(spec.spec.strategy, 3);
    const first = stepRegion(region('a', 3, [...news(3), old, evicted], 4), 2, budgets, 0, T0);
    expect(first.actions).toEqual([{ kind: 'markOld', region: 'a', pod: old.name, uid: old.uid, at: new Date(T0).toISOString(), cost: -2147483648 }]);
    expect(first.blocked).toMatch(/marked for removal/);
    const settled = stepRegion(region('a', 3, [...news(3), { ...old, markedOld: true, markedAt: T0 }, evicted], 4), 2, budgets, 0, T0 + MARK_SETTLE_MS);
    expect(settled.actions).toEqual([{ kind: 'scale', region: 'a', workload: 'web-a', from: 4, replicas: 3 }]);
    expect([settled.available, settled.done]).toEqual([true, true]);
  });
});

describe('regionBudgets', () => {
  it.each<[string, Record<string, unknown>, number, [number, number]]>([
    [
      'RollingUpdate 25%/25% of 10: surge rounds up, unavailable down',
      { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: '25%' } },
      10,
      [3, 2],
    ],
    [
      'RollingUpdate budgets that both round to 0 make unavailable 1',
      { type: 'RollingUpdate', rollingUpdate: { maxSurge: '0%', maxUnavailable: '10%' } },
      5,
      [0, 1],
    ],
    ['RollingUpdate without budgets defaults to 25%/25%', { type: 'RollingUpdate' }, 4, [1, 1]],
    ['DeleteAllFirst may remove all', { type: 'DeleteAllFirst' }, 6, [0, 6]],
  ])('%s', (_n, updateStrategy, desired, expected) => {
    const budgets = regionBudgets(ed({ updateStrategy }).spec.strategy, desired);
    expect([budgets.maxSurge, budgets.maxUnavailable]).toEqual(expected);
  });

  it.each<[string, number | string, [number, number, boolean]]>([
    ['scaleOutPriority', 2, [2, 0, false]],
    ['scaleInPriority', 2, [0, 2, false]],
    ['scaleSimultaneously', '50%', [3, 3, true]],
  ])('ReCreate with %s uses the group size', (upgradeMode, batchSize, expected) => {
    const budgets = regionBudgets(ed({ upgradeMode, batchSize }).spec.strategy, 5);
    expect([budgets.maxSurge, budgets.maxUnavailable, budgets.replaceDirectly]).toEqual(expected);
  });
});

describe('planRollout: partitions keep old pods (a grey phase)', () => {
  const grey = (strategy: Record<string, unknown>, replicas = 5, partition: number | string = 2) =>
    ed(strategy, [{ name: 'a', replicas, partition } as { name: string; replicas: number }]);
  const held = (n: number, at = T0 - 60_000) => Array.from({ length: n }, () => pod('old', { markedOld: false, held: true, markedAt: at }));
  const partitioned = (desired: number, pods: PodState[], partition = 2, replicas = pods.length): RegionState => ({
    ...region('a', desired, pods, replicas),
    partition,
  });

  it.each([
    ['Beta, batch 2', { batchSize: 2 }, [1, 3]],
    ['Group, batch 2, DeleteAllFirst', { rolloutStrategy: 'Group', batchSize: 2, updateStrategy: { type: 'DeleteAllFirst' } }, [2, 3]],
    ['Beta, batch 4, RollingUpdate (the last batch stops at the partition)', { batchSize: 4, updateStrategy: { type: 'RollingUpdate' } }, [1, 3]],
  ])('%s: the rollout stops at the partition, Healthy, with both revisions running', (_, strategy, updated) => {
    const sim = simulateFrom(grey(strategy), 'R1', [{ name: 'a', desired: 5, targetRevision: 'new', running: { old: 5 } }]);
    expect(sim.groups.map((g) => g.regions.map((r) => r.updated))).toEqual(updated.map((u) => [u]));
    expect(sim.groups.at(-1)?.regions).toMatchObject([{ updated: 3, old: 2 }]);
    expect(sim.finalStatus).toMatchObject({ phase: 'Healthy' });
    expect(sim.finalStatus.conditions?.find((c) => c.type === 'Progressing')?.message).toContain('2 pods partitions keep');
    expect(sim.newPodsRemoved).toBe(0);
  });

  it('a percentage partition is of the region, rounded up', () => {
    const sim = simulateFrom(grey({ rolloutStrategy: 'Group', batchSize: '100%' }, 10, '25%'), 'R1', [
      { name: 'a', desired: 10, targetRevision: 'new', running: { old: 10 } },
    ]);
    expect(sim.groups.map((g) => g.regions.map((r) => [r.updated, r.old]))).toEqual([[[7, 3]]]);
  });

  it('marks the old pods to leave and holds those the partition keeps, so no scale-down takes a kept one', () => {
    // maxUnavailable > 0 marks every leaving old pod at the start; the kept ones get the opposite mark instead.
    const plan = planRollout(
      input({
        ed: grey({ batchSize: 2, updateStrategy: { type: 'RollingUpdate' } }),
        regions: [
          partitioned(
            5,
            olds(5).map((p) => ({ ...p, markedOld: false })),
          ),
        ],
      }),
    );
    const kinds = plan.actions.filter((a) => a.kind !== 'scale').map((a) => a.kind);
    expect(kinds.filter((k) => k === 'holdOld')).toHaveLength(2);
    expect(kinds.filter((k) => k === 'markOld')).toHaveLength(3);
    // A pod marked to leave is taken for the partition only when no other is left (here: the partition grew to 3).
    const marked = [...held(2), ...olds(3)];
    const grown = planRollout(input({ ed: grey({ batchSize: 2 }, 5, 3), regions: [partitioned(5, marked, 3)] }));
    expect(grown.actions.filter((a) => a.kind === 'holdOld').map((a) => ('pod' in a ? a.pod : ''))).toEqual([marked[2]!.name]);
  });

  const completed: ExtendedDeploymentStatus = {
    revision: 'R1',
    phase: 'Healthy',
    rolloutRegions: ['a'],
    currentGroup: 2,
    totalGroups: 2,
    observedGeneration: 3,
    regions: [{ name: 'a', desired: 5 }],
    conditions: [{ type: 'Progressing', status: 'True', reason: 'RolloutComplete', lastTransitionTime: new Date(T0).toISOString() }],
  };

  it('Git lowers the count: new pods leave and the kept old ones stay, once their holds have settled', () => {
    const lowered = (at: number) =>
      planRollout(input({ ed: grey({ batchSize: 2 }, 4), regions: [partitioned(4, [...news(3), ...held(2, at)], 2, 5)], status: completed }));
    expect(scales(lowered(T0 - 60_000))).toEqual(['a:5->4']);
    // Held a moment ago: the ReplicaSet controller may not have seen the marks yet, and would take an old pod.
    const fresh = lowered(T0 - MARK_SETTLE_MS / 2);
    expect(fresh.actions).toEqual([]);
  });

  it('Git raises the count: the new pods come at once; the kept old pods stay', () => {
    const plan = planRollout(input({ ed: grey({ batchSize: 2 }, 8), regions: [partitioned(8, [...news(3), ...held(2)], 2, 5)], status: completed }));
    expect(scales(plan)).toEqual(['a:5->8']);
    expect(plan.actions.filter((a) => a.kind !== 'scale')).toEqual([]);
  });

  it('a lower partition moves the difference on within the budgets; without one the rollout finishes', () => {
    const lowered = planRollout(input({ ed: grey({ batchSize: 2 }, 5, 1), regions: [partitioned(5, [...news(3), ...held(2)], 1)], status: completed }));
    // One hold is released, then marked to leave on a later look; the old pod goes once a new one is available.
    expect(lowered.actions.map((a) => a.kind)).toEqual(['unmark', 'scale']);
    expect(scales(lowered)).toEqual(['a:5->6']);
    const none = planRollout(
      input({ ed: ed({ batchSize: 2 }, [{ name: 'a', replicas: 5 }]), regions: [region('a', 5, [...news(3), ...held(2)])], status: completed }),
    );
    expect(none.actions.filter((a) => a.kind === 'unmark')).toHaveLength(2);
    expect(scales(none)).toEqual(['a:5->7']);
    expect(none.status.phase).toBe('Progressing');
  });

  // The keeper (keeper.ts): old-revision pods made again from the history's template.
  const template = { metadata: { labels: { app: 'web', [REVISION_LABEL]: 'old' } }, spec: { containers: [{ name: 'c', image: 'i:1' }] } };
  const withKeeper = (r: RegionState, replicas: number, pods: PodState[]): RegionState => ({
    ...r,
    keptTemplates: { old: template },
    keeper: { name: 'web-a-old', uid: 'k', revision: 'old', replicas, pods },
  });

  it("a kept pod that died comes back at the old revision; the status counts the keeper's pods with the region", () => {
    // One of the two kept pods died; the ReplicaSet replaced it at its own (new) template.
    const died = planRollout(
      input({ ed: grey({ batchSize: 2 }), uid: 'ed', regions: [withKeeper(partitioned(5, [...news(4), ...held(1)]), 0, [])], status: completed }),
    );
    expect(died.actions).toEqual([{ kind: 'scale', region: 'a', workload: 'web-a-old', from: 0, replicas: 1 }]);
    expect(died.status.phase).toBe('Healthy');
    // Its pod is available: the regional ReplicaSet sheds the extra new pod; the region counts 5 pods, 2 of them old.
    const back = planRollout(
      input({ ed: grey({ batchSize: 2 }), uid: 'ed', regions: [withKeeper(partitioned(5, [...news(4), ...held(1)]), 1, olds(1))], status: completed }),
    );
    expect(scales(back)).toEqual(['a:5->4']);
    expect(back.status.regions).toMatchObject([{ name: 'a', desired: 5, current: 6, updated: 4 }]);
    const settled = planRollout(
      input({ ed: grey({ batchSize: 2 }), uid: 'ed', regions: [withKeeper(partitioned(5, [...news(3), ...held(1)], 2, 4), 1, olds(1))], status: completed }),
    );
    expect(settled.actions).toEqual([]);
    expect(settled.status).toMatchObject({ phase: 'Healthy', regions: [{ desired: 5, current: 5, updated: 3, available: 5 }] });
    expect(settled.status.conditions?.find((c) => c.type === 'Progressing')?.message).toContain('the 2 pods partitions keep');
    // Healthy with nothing to do, yet a keeper pod about to be available: the agent looks again then.
    const waiting = decide(
      input({
        ed: grey({ batchSize: 2, minReadySeconds: 10 }),
        uid: 'ed',
        regions: [withKeeper(partitioned(5, [...news(4), ...held(1)]), 1, [pod('old', { readySince: T0 - 4_000 })])],
        status: completed,
      }),
      undefined,
    );
    expect(waiting.plan.status.phase).toBe('Healthy');
    expect(waiting.lookAgainInMs).toBeGreaterThanOrEqual(6_000);
    expect(waiting.lookAgainInMs).toBeLessThan(6_100);
  });

  it('a partition raised above the old pods left adds old pods; the keeper is made when the rollout first finds old pods', () => {
    const raised = planRollout(
      input({ ed: grey({ batchSize: 2 }, 5, 3), uid: 'ed', regions: [withKeeper(partitioned(5, [...news(3), ...held(2)], 3), 0, [])], status: completed }),
    );
    expect(raised.actions.filter((a) => a.kind === 'scale' && a.workload === 'web-a-old')).toEqual([
      { kind: 'scale', region: 'a', workload: 'web-a-old', from: 0, replicas: 1 },
    ]);
    const first = planRollout(input({ ed: grey({ batchSize: 2 }), uid: 'ed', regions: [{ ...partitioned(5, olds(5)), keptTemplates: { old: template } }] }));
    expect(first.actions[0]).toMatchObject({ kind: 'createKeeper', workload: 'web-a-old', replicas: 0, revision: 'old', owner: { name: 'web', uid: 'ed' } });
  });
});

describe('planRollout: the forced exit (a stuck region set to what it runs Ready) ends its group', () => {
  const pending = (n: number) => news(n, { assigned: false, running: false, ready: false, readySince: undefined });
  const degradedIn = (group: number, regions: string[]): ExtendedDeploymentStatus => ({
    revision: 'R1',
    phase: 'Degraded',
    rolloutRegions: regions,
    currentGroup: group,
    totalGroups: 9,
    observedGeneration: 3,
    lastGroupStartTime: new Date(T0 - 900_000).toISOString(),
  });
  type Case = [string, Record<string, unknown>, number, () => PodState[], number, number, [number, number]];
  // Region a's new pods cannot be scheduled (a GPU pool that is full); the counts its Degraded status names keep exactly
  // the pods it runs Ready, at their revisions.
  it.each<Case>([
    ['scaleOutPriority: the surge pod is stuck', { rolloutStrategy: 'Group', batchSize: 3 }, 10, () => [...olds(7), ...news(3), ...pending(3)], 13, 2, [10, 7]],
    [
      'scaleInPriority: an old pod left for a stuck new one',
      { upgradeMode: 'scaleInPriority', batchSize: 1 },
      5,
      () => [...olds(4), ...pending(1)],
      5,
      1,
      [4, 4],
    ],
    ['scaleSimultaneously', { upgradeMode: 'scaleSimultaneously', batchSize: 2 }, 6, () => [...olds(4), ...news(1), ...pending(1)], 6, 2, [5, 4]],
    ['RollingUpdate', { batchSize: 2, updateStrategy: { type: 'RollingUpdate' } }, 4, () => [...olds(3), ...pending(1)], 4, 1, [3, 3]],
    ['a region being created', { batchSize: 2 }, 5, () => [...news(1), ...pending(2)], 3, 2, [1, 0]],
  ])('%s', (_, strategy, desired, podsOf, rsReplicas, group, counts) => {
    const pods = podsOf();
    const stuck = planRollout(
      input({ ed: ed(strategy, [{ name: 'a', replicas: desired }]), regions: [region('a', desired, pods, rsReplicas)], status: degradedIn(group, ['a']) }),
    );
    expect(stuck.status.phase).toBe('Degraded');
    const [replicas, partition] = counts;
    expect(stuck.status.conditions?.[0]?.message).toContain(`set in Git: region a replicas ${replicas} partition ${partition}`);

    // Git writes them: the kept old pods are marked to stay, then the ReplicaSet is cut to the Ready pods, which takes
    // the not-Ready new pods (it removes those first); no Ready pod is deleted.
    const forced = ed(strategy, [{ name: 'a', replicas, partition } as { name: string; replicas: number }]);
    const look = (at: number, regionPods: PodState[], rs: number, status: ExtendedDeploymentStatus | undefined) =>
      planRollout(input({ ed: forced, generation: 4, now: at, regions: [{ ...region('a', replicas, regionPods, rs), partition }], status }));
    const marking = look(T0, pods, rsReplicas, stuck.status);
    expect(marking.status.phase).not.toBe('Degraded');
    // Outside a running group: the group record is written empty (group-record.ts).
    const cutTo = { kind: 'scale', region: 'a', workload: 'web-a', from: rsReplicas, replicas, record: null };
    // With no old pod to keep, the cut comes at once; else after the marks have settled.
    expect(marking.actions.map((a) => a.kind)).toEqual(partition === 0 ? ['scale'] : Array.from({ length: partition }, () => 'holdOld'));
    const held = pods.map((p) => (p.revision === 'old' ? { ...p, markedOld: false, held: true, markedAt: T0 } : p));
    const cut = partition === 0 ? marking : look(T0 + MARK_SETTLE_MS, held, rsReplicas, marking.status);
    expect(cut.actions).toEqual(rsReplicas === replicas ? [] : [cutTo]);
    const left = held.filter((p) => p.ready);
    const done = look(T0 + MARK_SETTLE_MS + 1000, left, replicas, cut.status);
    expect(done.actions).toEqual([]);
    expect(done.status.phase).toBe('Healthy');
    expect(done.status.regions?.[0]).toMatchObject({ desired: replicas, current: replicas, updated: replicas - partition, available: replicas });
  });

  it('the rollout goes on with the other regions: here the next region in Sequential order starts its first group', () => {
    const strategy = { batchSize: 1, regionOrder: 'Sequential' };
    const a = [...olds(2), ...news(1), ...pending(1)];
    const regions = (aPods: PodState[], partition?: number) => [
      { ...region('a', 3, aPods, 4), ...(partition !== undefined && { partition }) },
      region('b', 3, olds(3)),
    ];
    const stuck = planRollout(
      input({
        ed: ed(strategy, [
          { name: 'a', replicas: 3 },
          { name: 'b', replicas: 3 },
        ]),
        regions: regions(a),
        status: degradedIn(2, ['a', 'b']),
      }),
    );
    expect(stuck.status.conditions?.[0]?.message).toContain('set in Git: region a replicas 3 partition 2');
    const forced = ed(strategy, [{ name: 'a', replicas: 3, partition: 2 } as { name: string; replicas: number }, { name: 'b', replicas: 3 }]);
    const held = a.map((p) => (p.revision === 'old' ? { ...p, markedOld: false, held: true, markedAt: T0 - MARK_SETTLE_MS } : p));
    const next = planRollout(input({ ed: forced, generation: 4, regions: regions(held, 2), status: stuck.status }));
    expect(scales(next)).toEqual(['a:4->3', 'b:3->4']);
    expect(next.status).toMatchObject({ phase: 'Progressing', currentGroup: 2 });
  });
});

describe('planRollout while a region adopts (core/adoption)', () => {
  const adoptionPlan = (open: boolean): NonNullable<RolloutInput['adoption']> => ({
    entries: [{ region: 'a', source: 'Deployment/web', phase: open ? 'Moving' : 'Adopted', ...(open && { frozen: ['old-uid'] }), moved: 2 }],
    actions: open ? [{ kind: 'verifyFreeze', region: 'a', owner: { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-5d8f', uid: 'old-uid' } }] : [],
    open,
    message: open ? 'region a adopting Deployment/web: 2 pods moved, 3 to go' : '',
    events: [],
  });
  // Region a holds 2 adopted pods of its count of 5: on its own it would grow by 3.
  const regions = [region('a', 5, news(2)), region('b', 2, [])];
  const previous: ExtendedDeploymentStatus = { revision: 'R0', rolloutRegions: ['b'], phase: 'Healthy' };

  it("makes the adoption's steps the only writes, says so, and records no rollout yet", () => {
    const plan = planRollout(input({ regions, status: previous, adoption: adoptionPlan(true) }));
    expect(plan.actions.filter((a) => a.kind !== 'openGate')).toEqual(adoptionPlan(true).actions);
    expect(plan.status.phase).toBe('Progressing');
    expect(plan.status.conditions?.find((c) => c.type === 'Progressing')).toMatchObject({
      reason: 'Adopting',
      message: 'region a adopting Deployment/web: 2 pods moved, 3 to go',
    });
    expect(plan.status).toMatchObject({ revision: 'R0', rolloutRegions: ['b'], adoptions: adoptionPlan(true).entries });
    expect(plan.events).toEqual([]);
  });

  it('once adopted, rolls out as ever and keeps the entries in the status (the freeze policy reads them)', () => {
    const plan = planRollout(input({ regions, status: previous, adoption: adoptionPlan(false) }));
    const without = planRollout(input({ regions, status: previous }));
    expect(scales(without).length).toBeGreaterThan(0);
    expect(plan.actions).toEqual(without.actions);
    expect(plan.status).toEqual({ ...without.status, adoptions: adoptionPlan(false).entries });
    expect(plan.status.revision).toBe('R1');
  });
});
