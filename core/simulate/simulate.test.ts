import { describe, expect, it } from 'vitest';
import { extendedDeployment } from '../api/extended-deployment.js';
import { SimulationTooLarge } from './simulate.js';
import { simulateFrom } from './test-support.js';

function ed(sizes: readonly number[], strategy: Record<string, unknown> = {}, subsetType = 'ReplicaSet', more: Record<string, unknown> = {}) {
  return extendedDeployment.parse({
    apiVersion: 'extendeddeployment.io/v1beta1',
    kind: 'ExtendedDeployment',
    metadata: { name: 'web', namespace: 'shop' },
    spec: {
      ...more,
      subsetType,
      selector: { matchLabels: { app: 'web' } },
      template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'i' }] } },
      regions: sizes.map((replicas, i) => ({ name: `r${i}`, replicas })),
      strategy,
    },
  });
}
const from = (sizes: readonly number[]) => sizes.map((n, i) => ({ name: `r${i}`, desired: n, targetRevision: 'new', running: { old: n } }));
const updated = (s: ReturnType<typeof simulateFrom>) => s.groups.map((g) => g.regions.map((r) => r.updated));

describe('simulateRollout: compat mode (native Deployments)', () => {
  it('rolls whole regions, one after another by default, each within its Deployment budgets, and ends paused', () => {
    const sim = simulateFrom(ed([4, 2], {}, 'Deployment'), 'R1', from([4, 2]));
    expect(sim.finalStatus.phase).toBe('Healthy');
    expect(updated(sim)).toEqual([
      [4, 0],
      [4, 2],
    ]);
    expect(sim.newPodsRemoved).toBe(0);
    expect(sim.podsCreated).toBe(6);
    // batchSize 1 of scaleOutPriority renders maxSurge 1, maxUnavailable 0: never a pod less available.
    expect(sim.extremes.map((e) => e.minAvailable)).toEqual([4, 2]);
  });

  it('rolls every region at once with regionOrder Parallel', () => {
    expect(updated(simulateFrom(ed([4, 2], { regionOrder: 'Parallel' }, 'Deployment'), 'R1', from([4, 2])))).toEqual([[4, 2]]);
  });

  it('stops Degraded when a region takes longer than the progress deadline', () => {
    const sim = simulateFrom(ed([100], {}, 'Deployment'), 'R1', from([100]));
    expect(sim.stopped).toMatchObject({ group: 1, phase: 'Degraded' });
    expect(simulateFrom(ed([100], { syncWaitTimeout: 3600 }, 'Deployment'), 'R1', from([100])).finalStatus.phase).toBe('Healthy');
  });
});

describe('simulateRollout: cost', () => {
  it('plans 1,000 replicas in batches of one in a few dozen looks, the groups between collapsed into one run', () => {
    const sim = simulateFrom(ed([1_000]), 'R1', from([1_000]));
    expect(sim.totalGroups).toBe(1_000);
    expect(sim.groups).toHaveLength(1_000);
    expect(sim.runs.map((r) => [r.from, r.to])).toEqual([
      [1, 999],
      [1_000, 1_000],
    ]);
    expect(sim.looks).toBeLessThan(100);
    expect(sim.extremes).toEqual([{ name: 'r0', maxPods: 1_001, minAvailable: 1_000 }]);
  });

  it('plans a billion replicas exactly, with the groups listed bounded', () => {
    const sim = simulateFrom(ed([1_000_000_000]), 'R1', from([1_000_000_000]));
    expect(sim.totalGroups).toBe(1_000_000_000);
    expect(sim.finalStatus.regions?.[0]).toMatchObject({ updated: 1_000_000_000, available: 1_000_000_000 });
    expect(sim.groups.length).toBeLessThan(10);
    expect(sim.looks).toBeLessThan(100);
  });

  it('fails with a clear message rather than hold too many pods one by one', () => {
    // RollingUpdate marks every old pod at once (pods without the mark a completed rollout leaves): the planner acts on
    // each, so each must be an object.
    const rolling = ed([5_000], { updateStrategy: { type: 'RollingUpdate' } });
    expect(() => simulateFrom(rolling, 'R1', from([5_000]), { maxListedPods: 1_000 }, { standingMarks: false })).toThrow(SimulationTooLarge);
    // Marked already, as the agent leaves them, they are counted.
    expect(simulateFrom(rolling, 'R1', from([5_000]), { maxListedPods: 1_000 }).finalStatus.phase).toBe('Healthy');
    expect(() => simulateFrom(ed([500], {}, 'Deployment'), 'R1', from([500]), { maxLooks: 100 })).toThrow(/too long to plan: more than 100 looks/);
  });
});

describe('simulateRollout: a region set to 0 drains make-before-break', () => {
  const regions = [
    { name: 'r0', desired: 6, targetRevision: 'new', running: { new: 4 } },
    { name: 'r1', desired: 6, targetRevision: 'new', running: { new: 4 } },
    { name: 'r2', desired: 0, targetRevision: 'new', running: { new: 4 } },
  ];
  const sim = simulateFrom(ed([6, 6, 0], { minReadySeconds: 10 }), 'R1', regions, { trace: true });
  const available = (look: NonNullable<typeof sim.trace>[number]) => (look.status.regions ?? []).reduce((n, r) => n + (r.available ?? 0), 0);

  it('ends with the pods in the regions that grew', () => {
    expect(sim.finalStatus.phase).toBe('Healthy');
    expect(sim.finalStatus.regions?.map((r) => [r.name, r.current, r.available])).toEqual([
      ['r0', 6, 6],
      ['r1', 6, 6],
      ['r2', 0, 0],
    ]);
  });

  it('never has fewer pods available than desired: the regions that grow lose none, and the one drained keeps its pods until then', () => {
    expect(sim.extremes).toEqual([
      { name: 'r0', maxPods: 6, minAvailable: 4 },
      { name: 'r1', maxPods: 6, minAvailable: 4 },
      { name: 'r2', maxPods: 4, minAvailable: 0 },
    ]);
    expect(Math.min(...(sim.trace ?? []).map(available))).toBe(12);
  });

  it("says why the drained region still runs pods while the others' start", () => {
    const messages = (sim.trace ?? []).map((l) => l.status.conditions?.find((c) => c.type === 'Progressing')?.message ?? '');
    expect(messages.some((m) => m.includes('region r2 keeps 4 pods until 4 more are available in other regions'))).toBe(true);
  });
});

describe('simulateRollout: StatefulSet regions roll in partition steps', () => {
  const sizes = [3, 2];
  it.each([
    {
      batchSize: 1,
      policy: 'OrderedReady',
      groups: [
        [1, 1],
        [2, 2],
        [3, 2],
      ],
      partitions: [
        [2, 1, 0, 3],
        [1, 0, 2],
      ],
    },
    {
      batchSize: 2,
      policy: 'OrderedReady',
      groups: [
        [1, 1],
        [3, 2],
      ],
      partitions: [
        [2, 0, 3],
        [1, 0, 2],
      ],
    },
    {
      batchSize: 2,
      policy: 'Parallel',
      groups: [
        [1, 1],
        [3, 2],
      ],
      partitions: [
        [2, 0, 3],
        [1, 0, 2],
      ],
    },
  ])('Beta, batchSize $batchSize, $policy: new pods $groups per group', ({ batchSize, policy, groups, partitions }) => {
    const sim = simulateFrom(
      ed(sizes, { rolloutStrategy: 'Beta', batchSize }, 'StatefulSet', { statefulSet: { podManagementPolicy: policy } }),
      'R1',
      from(sizes),
      { trace: true },
    );
    expect(sim.finalStatus.phase).toBe('Healthy');
    expect(updated(sim)).toEqual(groups);
    // Every partition the agent set, per region: one step per group (Beta: 1, then +batchSize), then back to the count.
    const set = (region: string) =>
      (sim.trace ?? []).flatMap((l) => l.actions.flatMap((a) => (a.kind === 'setPartition' && a.region === region ? [a.partition] : [])));
    expect(sizes.map((_, i) => set(`r${i}`))).toEqual(partitions);
    // The StatefulSet controller replaces one pod at a time: no region is ever short of more than one Ready pod.
    for (const look of sim.trace ?? []) for (const [i, r] of (look.status.regions ?? []).entries()) expect(r.ready).toBeGreaterThanOrEqual((sizes[i] ?? 0) - 1);
    expect(sim.extremes).toEqual(sizes.map((n, i) => ({ name: `r${i}`, maxPods: n, minAvailable: n - 1 })));
    expect(sim.podsCreated).toBe(5);
    expect(sim.newPodsRemoved).toBe(0);
  });

  it('creates StatefulSet regions from zero', () => {
    const sim = simulateFrom(ed(sizes, {}, 'StatefulSet'), 'R1', [
      { name: 'r0', desired: 3, targetRevision: 'new', running: {}, replicas: undefined },
      { name: 'r1', desired: 2, targetRevision: 'new', running: {}, replicas: undefined },
    ]);
    expect(sim.finalStatus.phase).toBe('Healthy');
    expect(sim.finalStatus.regions?.map((r) => [r.name, r.current, r.updated, r.available])).toEqual([
      ['r0', 3, 3, 3],
      ['r1', 2, 2, 2],
    ]);
    expect(sim.podsCreated).toBe(5);
  });
});

describe('simulateRollout: the pods a group leaves', () => {
  it('counts the new pods a region gets while its gate holds (its count rose), whether or not they are available yet', () => {
    // At gate 1 (one new and one old pod per region) region r2 rises from 2 to 4: the hold gives it the missing pods at
    // once, and group 2 starts 1 s later (the simulated approval), before they are available.
    const resized = ed([2, 2, 4], { needWaitingForConfirm: true });
    const atGate1 = [2, 2, 4].map((n, i) => ({ name: `r${i}`, desired: n, targetRevision: 'new', running: { old: 1, new: 1 } }));
    const sim = simulateFrom(resized, 'R1', atGate1);
    expect(sim.groups[0]?.regions.map((r) => [r.name, r.updated, r.old])).toEqual([
      ['r0', 1, 1],
      ['r1', 1, 1],
      ['r2', 3, 1],
    ]);
    expect(sim.finalStatus.regions?.map((r) => r.updated)).toEqual([2, 2, 4]);
  });
});
