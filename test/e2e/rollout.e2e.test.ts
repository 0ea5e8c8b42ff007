// Issue 4's rollout semantics end to end (ReplicaSet mode), on the lab cluster with the agent in-process and the
// invariant watcher (invariants.ts) beside every test: no region ever above its ceiling or (after the fill) below its
// floor, no new-revision pod removed during a rollout, no region ahead of its group, no group started before the
// previous one was done. Every test has its own namespace and DeployRegions. Waits are generous; nothing asserts on
// speed.
import { describe, expect } from 'vitest';
import { test, clients, sleep, waitFor } from './helpers.js';
import {
  agentMetrics,
  apiRequests,
  apply,
  assertHolds,
  counterSum,
  ED_NAME,
  completedEvent,
  edEvents,
  edPods,
  isLive,
  observedExtremes,
  edctl,
  fill,
  podCounts,
  readEd,
  readStatus,
  rollThroughGates,
  simulateFromCluster,
  waitForPhase,
  waitForPods,
  withRolloutEnv,
  type ObservedGroup,
} from './rollout-kit.js';
import { NAME_LABEL, POD_DELETION_COST_ANNOTATION, REGION_LABEL, REVISION_LABEL } from '../../core/labels.js';
import type { RenderedExtendedDeployment } from '../../core/render.js';
import { OLD_MARK_COST } from '../../core/rollout/removal-marks.js';

const table = (groups: readonly ObservedGroup[]) =>
  groups.map((g) => `group ${g.group}: ${g.regions.map((r) => `${r.name.split('-')[0]} ${r.updated}/${r.updated + r.old}`).join(', ')}`).join(' | ');

describe('rollout group by group, as simulateRollout predicts', () => {
  // `racing`: the mode removes old pods and creates new ones in the same step, so whether a leaving pod still counts
  // while its replacement starts depends on how long the pod takes to terminate (the simulation's TERMINATION_MS
  // against the lab's kwok, which removes a pod with no grace period at once). There the cluster must stay within the
  // simulated extremes, which are the worst case; everywhere else it must show exactly them.
  const cases: { name: string; replicas: number[]; strategy: Record<string, unknown>; racing?: true }[] = [
    { name: 'Beta, integer batch 2', replicas: [4, 2, 3], strategy: { rolloutStrategy: 'Beta', batchSize: 2 } },
    { name: 'Group, batch 40%', replicas: [4, 2, 3], strategy: { rolloutStrategy: 'Group', batchSize: '40%' } },
    { name: 'Sequential region order, Beta batch 2', replicas: [3, 2, 2], strategy: { regionOrder: 'Sequential', batchSize: 2 } },
    { name: 'scaleInPriority, Beta batch 1', replicas: [3, 2, 2], strategy: { upgradeMode: 'scaleInPriority', batchSize: 1 } },
    {
      name: 'scaleSimultaneously, Group batch 2',
      replicas: [4, 2, 3],
      strategy: { upgradeMode: 'scaleSimultaneously', rolloutStrategy: 'Group', batchSize: 2 },
      racing: true,
    },
    {
      name: 'RollingUpdate, maxSurge 1 maxUnavailable 1, batch 2',
      replicas: [4, 2, 3],
      strategy: { batchSize: 2, updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 1 } } },
      racing: true,
    },
    { name: 'DeleteAllFirst, batch 2', replicas: [4, 2, 3], strategy: { batchSize: 2, updateStrategy: { type: 'DeleteAllFirst' } } },
  ];
  for (const c of cases) {
    test(c.name, async ({ ns }) => {
      await withRolloutEnv(ns, c.name, async (env) => {
        await fill(env, { image: 'registry.example/web:1', replicas: c.replicas, strategy: { ...c.strategy, needWaitingForConfirm: true } });
        const v2 = env.render({ image: 'registry.example/web:2', replicas: c.replicas, strategy: { ...c.strategy, needWaitingForConfirm: true } });
        const sim = await simulateFromCluster(ns, v2);
        const started = Date.now();
        await apply(v2);
        const observed = await rollThroughGates(ns, v2, sim, 1, env.watch);
        const extremes = observedExtremes(
          env.watch,
          started,
          v2.regions.map((r) => r.name),
        );
        console.log(`[rollout] ${c.name}: ${sim.totalGroups} groups; observed ${table(observed)}`);
        console.log(`[rollout] ${c.name}: extremes observed ${JSON.stringify(extremes)}; simulated ${JSON.stringify(sim.extremes)}`);
        // The watcher saw every transient: the surge (or its absence) and the availability dip are the simulated ones.
        if (c.racing) {
          const within = extremes.map((e, i) => e.maxPods <= (sim.extremes[i]?.maxPods ?? 0) && e.minAvailable >= (sim.extremes[i]?.minAvailable ?? Infinity));
          expect(within).toEqual(extremes.map(() => true));
        } else expect(extremes).toEqual(sim.extremes);
        expect(observed.map((g) => ({ group: g.group, regions: g.regions }))).toEqual(
          sim.groups.map((g) => ({ group: g.group, regions: g.regions.map((r) => ({ name: r.name, updated: r.updated, old: r.old })) })),
        );
        expect(sim.totalGroups).toBeGreaterThanOrEqual(2);
        const final = await readStatus(ns);
        expect(final.phase).toBe('Healthy');
        expect(final.regions?.map((r) => [r.updated, r.available])).toEqual(c.replicas.map((n) => [n, n]));
      });
    });
  }
});

const V1 = 'registry.example/web:1';
const V2 = 'registry.example/web:2';
const V3 = 'registry.example/web:3';

/** Waits until the agent has reconciled the ExtendedDeployment's current generation. */
async function waitObserved(ns: string): Promise<void> {
  await waitFor(
    'the agent observed the current generation',
    async () => {
      const ed = await readEd(ns);
      return ed.status?.observedGeneration === ed.metadata?.generation;
    },
    { describe: () => readEd(ns) },
  );
}

/** Each live pod's pod-deletion-cost, as `new <cost>` or `old <cost>` by `rendered`'s revisions, sorted. */
async function deletionCosts(ns: string, rendered: RenderedExtendedDeployment): Promise<string[]> {
  const revisions = new Set(rendered.regions.map((r) => r.revision));
  const side = (revision: string | undefined) => (revisions.has(revision ?? '') ? 'new' : 'old');
  return (await edPods(ns))
    .filter(isLive)
    .map((p) => `${side(p.metadata?.labels?.[REVISION_LABEL])} ${p.metadata?.annotations?.[POD_DELETION_COST_ANNOTATION] ?? 'none'}`)
    .sort();
}

/** `n` times `entry`. */
const times = (n: number, entry: string) => Array.from({ length: n }, () => entry);

/** Waits until the live pods' costs (deletionCosts) are `expected`. */
async function waitForCosts(ns: string, rendered: RenderedExtendedDeployment, expected: readonly string[], what: string): Promise<void> {
  const want = [...expected].sort();
  await waitFor(what, async () => JSON.stringify(await deletionCosts(ns, rendered)) === JSON.stringify(want), {
    describe: async () => ({ want, have: await deletionCosts(ns, rendered) }),
  });
}

/** The simulated pods per region after group `group`. */
function simGroup(sim: Awaited<ReturnType<typeof simulateFromCluster>>, group: number) {
  const g = sim.groups.find((x) => x.group === group);
  if (!g) throw new Error(`the simulation has no group ${group}`);
  return g.regions.map((r) => ({ name: r.name, updated: r.updated, old: r.old }));
}

test('approval gates hold until approved: edctl approve, then strategy.approval from Git', async ({ ns }) => {
  await withRolloutEnv(ns, 'approvals', async (env) => {
    const base = { replicas: [3, 2, 2], strategy: { needWaitingForConfirm: true } };
    const v1 = await fill(env, { image: V1, ...base });
    // Standing marks (removal-marks.ts): v1's pods, created with no old pods, one above a rollout's own marks.
    await waitForCosts(ns, v1, times(7, `new ${OLD_MARK_COST + 1}`), "v1's pods carry standing marks");
    const v2 = env.render({ image: V2, ...base });
    const sim = await simulateFromCluster(ns, v2);
    expect(sim.totalGroups).toBe(3);
    await apply(v2);

    // Gate 1 holds.
    await waitForPhase(ns, v2.rolloutRevision, 1, 'WaitingForConfirmation', 180_000, v2);
    await waitForPods(ns, v2, simGroup(sim, 1), 'group 1');
    await assertHolds(ns, v2, 5_000, (s) => expect([s.phase, s.currentGroup]).toEqual(['WaitingForConfirmation', 1]));
    // Group 1's new pods are marked for the next rollout while the old pods still run, one above their marks.
    const group1 = simGroup(sim, 1);
    await waitForCosts(
      ns,
      v2,
      group1.flatMap((r) => [...times(r.updated, `new ${OLD_MARK_COST + 2}`), ...times(r.old, `old ${OLD_MARK_COST + 1}`)]),
      "group 1's new pods carry standing marks above the old pods'",
    );

    // A Git approval naming another rollout revision is ignored.
    const wrong = env.render({ image: V2, ...base, strategy: { ...base.strategy, approval: { revision: '0123456789', throughGroup: 3 } } });
    expect(wrong.rolloutRevision).toBe(v2.rolloutRevision);
    await apply(wrong, 'ed');
    await waitObserved(ns);
    await assertHolds(ns, v2, 4_000, (s) => expect([s.phase, s.currentGroup]).toEqual(['WaitingForConfirmation', 1]));

    // edctl approve lets exactly one group start.
    expect(await edctl(ns, 'approve')).toBe(0);
    await waitForPhase(ns, v2.rolloutRevision, 2, 'WaitingForConfirmation', 180_000, v2);
    await waitForPods(ns, v2, simGroup(sim, 2), 'group 2');
    await assertHolds(ns, v2, 4_000, (s) => expect([s.phase, s.currentGroup]).toEqual(['WaitingForConfirmation', 2]));

    // A pull request approves the rest: strategy.approval with the status' revision. Only spec.strategy changes, so the
    // rollout revision (and every region's) stays the same.
    const revision = (await readStatus(ns)).revision ?? '';
    expect(revision).toBe(v2.rolloutRevision);
    const approved = env.render({ image: V2, ...base, strategy: { ...base.strategy, approval: { revision, throughGroup: 3 } } });
    expect(approved.rolloutRevision).toBe(v2.rolloutRevision);
    expect(approved.regions.map((r) => r.revision)).toEqual(v2.regions.map((r) => r.revision));
    await apply(approved);
    await waitForPhase(ns, v2.rolloutRevision, 3, 'Healthy', 180_000, v2);
    await waitForPods(ns, v2, simGroup(sim, 3), 'group 3');
    await waitForCosts(ns, v2, times(7, `new ${OLD_MARK_COST + 2}`), "v2's pods carry standing marks");
    const reasons = (await edEvents(ns, { until: completedEvent(v2.rolloutRevision) })).map((e) => e.reason);
    expect(reasons.filter((r) => r === 'WaitingForConfirmation').length).toBeGreaterThanOrEqual(2);
    expect(reasons).toContain('RolloutCompleted');
  });
});

test('pause (strategy.pause from Git, edctl pause) and abort hold; resume continues and completes', async ({ ns }) => {
  await withRolloutEnv(ns, 'pause-abort', async (env) => {
    const base = { replicas: [4, 2, 2], strategy: { needWaitingForConfirm: true } };
    await fill(env, { image: V1, ...base });
    const v2 = env.render({ image: V2, ...base });
    const sim = await simulateFromCluster(ns, v2);
    expect(sim.totalGroups).toBe(4);
    await apply(v2);
    await waitForPhase(ns, v2.rolloutRevision, 1, 'WaitingForConfirmation', 180_000, v2);
    await waitForPods(ns, v2, simGroup(sim, 1), 'group 1');

    // 1. Git pauses; an approval arrives; nothing moves.
    const paused = env.render({ image: V2, ...base, strategy: { ...base.strategy, pause: true } });
    expect(paused.rolloutRevision).toBe(v2.rolloutRevision);
    await apply(paused, 'ed');
    await waitForPhase(ns, v2.rolloutRevision, 1, 'Paused');
    expect(await edctl(ns, 'approve')).toBe(0);
    await waitObserved(ns);
    await assertHolds(ns, v2, 5_000, (s) => {
      expect([s.phase, s.currentGroup]).toEqual(['Paused', 1]);
      expect(s.conditions?.find((c) => c.type === 'Progressing')?.reason).toBe('Paused');
    });
    // Git unpauses: the approved group 2 runs to its gate.
    await apply(v2, 'ed');
    await waitForPhase(ns, v2.rolloutRevision, 2, 'WaitingForConfirmation', 180_000, v2);
    await waitForPods(ns, v2, simGroup(sim, 2), 'group 2');

    // 2. edctl pause; an approval arrives; nothing moves; edctl resume continues.
    expect(await edctl(ns, 'pause')).toBe(0);
    await waitForPhase(ns, v2.rolloutRevision, 2, 'Paused');
    expect(await edctl(ns, 'approve')).toBe(0);
    await waitObserved(ns);
    await assertHolds(ns, v2, 5_000, (s) => expect([s.phase, s.currentGroup]).toEqual(['Paused', 2]));
    expect(await edctl(ns, 'resume')).toBe(0);
    await waitForPhase(ns, v2.rolloutRevision, 3, 'WaitingForConfirmation', 180_000, v2);
    await waitForPods(ns, v2, simGroup(sim, 3), 'group 3');

    // 3. edctl abort holds exactly where the rollout is, even once the next group is approved.
    expect(await edctl(ns, 'abort')).toBe(0);
    await waitForPhase(ns, v2.rolloutRevision, 3, 'Paused');
    expect((await readStatus(ns)).conditions?.find((c) => c.type === 'Progressing')?.reason).toBe('Aborted');
    expect(await edctl(ns, 'approve')).toBe(0);
    await waitObserved(ns);
    const held = await assertHolds(ns, v2, 6_000, (s) => expect([s.phase, s.currentGroup]).toEqual(['Paused', 3]));
    expect(held).toEqual(simGroup(sim, 3));

    // edctl resume: the approved last group runs and the rollout completes.
    expect(await edctl(ns, 'resume')).toBe(0);
    await waitForPhase(ns, v2.rolloutRevision, 4, 'Healthy', 180_000, v2);
    await waitForPods(ns, v2, simGroup(sim, 4), 'group 4');
    const reasons = (await edEvents(ns, { until: completedEvent(v2.rolloutRevision) })).map((e) => e.reason);
    expect(reasons).toEqual(expect.arrayContaining(['Paused', 'Aborted', 'Resumed', 'RolloutCompleted']));
  });
});

test('progress deadline: a group that cannot finish makes the rollout Degraded, and then nothing moves', async ({ ns }) => {
  await withRolloutEnv(ns, 'deadline', async (env) => {
    const base = { replicas: [3, 2, 2], strategy: { syncWaitTimeout: 10 } };
    await fill(env, { image: V1, ...base });
    // Region c's new pods ask for more CPU than any node has: they stay Pending (Unschedulable).
    const v2 = env.render({ image: V2, ...base, overrides: { c: { resources: { app: { requests: { cpu: '64' } } } } } });
    await apply(v2);
    const degraded = await waitForPhase(ns, v2.rolloutRevision, 1, 'Degraded', 120_000, v2);
    const progressing = degraded.conditions?.find((c) => c.type === 'Progressing');
    expect(progressing?.status).toBe('False');
    expect(progressing?.reason).toBe('ProgressDeadlineExceeded');
    await waitFor(
      'Warning Event ProgressDeadlineExceeded',
      async () => (await edEvents(ns)).some((e) => e.type === 'Warning' && e.reason === 'ProgressDeadlineExceeded'),
      {
        describe: () => edEvents(ns),
      },
    );
    // Regions a and b finished group 1; c has its old pods and one new pod that cannot be scheduled.
    await waitForPods(
      ns,
      v2,
      [
        { name: `a-${env.suffix}`, updated: 1, old: 2 },
        { name: `b-${env.suffix}`, updated: 1, old: 1 },
        { name: `c-${env.suffix}`, updated: 1, old: 2 },
      ],
      'degraded in group 1',
    );

    // Nothing more happens: no scaling, no pod created or removed, no action, over more than another deadline.
    const snapshot = async () => {
      const rs = (await clients().apps.listNamespacedReplicaSet({ namespace: ns, labelSelector: `${NAME_LABEL}=${ED_NAME}` })).items;
      const pods = (await clients().core.listNamespacedPod({ namespace: ns, labelSelector: `${NAME_LABEL}=${ED_NAME}` })).items;
      return {
        replicas: Object.fromEntries(rs.map((r) => [r.metadata?.name, r.spec?.replicas])),
        pods: pods.map((p) => p.metadata?.name).sort(),
        actions: counterSum(await agentMetrics(env.agent), 'extendeddeployment_agent_actions_total'),
      };
    };
    const before = await snapshot();
    await sleep(15_000);
    const after = await snapshot();
    console.log(
      `[rollout] degraded: replicas ${JSON.stringify(before.replicas)}, ${before.pods.length} pods, ${before.actions} actions; 15 s later: ${after.actions} actions`,
    );
    expect(after).toEqual(before);
    const status = await readStatus(ns);
    expect([status.phase, status.currentGroup]).toEqual(['Degraded', 1]);

    // A change of the spec from Git releases it (here a longer deadline; the templates and so the rollout stay the
    // same): the group starts its deadline again from the change.
    const changedAt = Date.now();
    const longer = env.render({
      image: V2,
      ...base,
      strategy: { syncWaitTimeout: 600 },
      overrides: { c: { resources: { app: { requests: { cpu: '64' } } } } },
    });
    expect(longer.rolloutRevision).toBe(v2.rolloutRevision);
    await apply(longer, 'ed');
    const released = await waitForPhase(ns, v2.rolloutRevision, 1, 'Progressing', 60_000, v2);
    expect(Date.parse(released.lastGroupStartTime ?? '')).toBeGreaterThanOrEqual(Math.floor(changedAt / 1000) * 1000);
    expect(released.conditions?.find((c) => c.type === 'Progressing')?.status).toBe('True');
  });
});

test('forced exit: a Degraded region set in Git to the counts its status names sheds its Pending new pod; the rollout completes around it', async ({ ns }) => {
  await withRolloutEnv(ns, 'forced-exit', async (env) => {
    const base = { replicas: [3, 2, 2], strategy: { syncWaitTimeout: 20 } };
    // Region c's pool is full for the new revision: its new pods ask for more CPU than any node has.
    const full = { c: { resources: { app: { requests: { cpu: '64' } } } } };
    await fill(env, { image: V1, ...base });
    const v2 = env.render({ image: V2, ...base, overrides: full });
    await apply(v2);
    const degraded = await waitForPhase(ns, v2.rolloutRevision, 1, 'Degraded', 120_000, v2);
    const c = v2.regions[2]!.name;
    // scaleOutPriority: c runs its 2 old pods Ready beside the new one that cannot start, so the counts that keep what it
    // runs Ready are its count and a partition of both old pods (deployment-upgrade's two targets).
    const message = degraded.conditions?.find((x) => x.type === 'Progressing')?.message ?? '';
    expect(new RegExp(`region ${c} replicas (\\d+) partition (\\d+)`).exec(message)?.slice(1).map(Number), message).toEqual([2, 2]);
    const stuck = (await edPods(ns)).filter((p) => isLive(p) && p.metadata?.labels?.[REGION_LABEL] === c && !p.spec?.nodeName);
    expect(stuck).toHaveLength(1);

    // Git writes them. The template stays the same, and so does the rollout: it goes on from group 1 without c.
    const forced = env.render({ image: V2, ...base, partitions: { c: 2 }, overrides: full });
    expect(forced.rolloutRevision).toBe(v2.rolloutRevision);
    await apply(forced, 'ed');
    const healthy = await waitFor(
      'Healthy with c kept at its old pods',
      async () => {
        const status = await readStatus(ns);
        return (
          status.revision === v2.rolloutRevision &&
          status.phase === 'Healthy' &&
          (await podCounts(ns, forced)).every((r) => r.updated + r.old === (r.name === c ? 2 : r.name.startsWith('a-') ? 3 : 2)) &&
          status
        );
      },
      { timeoutMs: 180_000, describe: async () => ({ status: await readStatus(ns), pods: await podCounts(ns, forced) }) },
    );
    const progressing = healthy.conditions?.find((x) => x.type === 'Progressing');
    console.log(`[rollout] forced exit: ${progressing?.message}; groups ${healthy.currentGroup}/${healthy.totalGroups}`);
    expect(progressing?.message).toContain('the 2 pods partitions keep');
    expect(await podCounts(ns, forced)).toEqual([
      { name: forced.regions[0]!.name, updated: 3, old: 0 },
      { name: forced.regions[1]!.name, updated: 2, old: 0 },
      { name: c, updated: 0, old: 2 },
    ]);
    // The stuck pod went, and no pod of c is Pending any more; its old pods are the ones it ran all along.
    const left = (await edPods(ns)).filter((p) => isLive(p) && p.metadata?.labels?.[REGION_LABEL] === c);
    expect(left.every((p) => p.spec?.nodeName)).toBe(true);
    expect(left.map((p) => p.metadata?.uid)).not.toContain(stuck[0]!.metadata?.uid);
  });
});

describe('Git changes during a rollout', () => {
  const base = { replicas: [3, 2, 2], strategy: { needWaitingForConfirm: true } };

  test('a third revision while group 1 waits restarts at group 1 toward it; pods of both earlier revisions are old', async ({ ns }) => {
    await withRolloutEnv(ns, 'third-revision', async (env) => {
      await fill(env, { image: V1, ...base });
      const v2 = env.render({ image: V2, ...base });
      const sim2 = await simulateFromCluster(ns, v2);
      await apply(v2);
      await waitForPhase(ns, v2.rolloutRevision, 1, 'WaitingForConfirmation', 180_000, v2);
      await waitForPods(ns, v2, simGroup(sim2, 1), 'v2 group 1');

      const v3 = env.render({ image: V3, ...base });
      const sim3 = await simulateFromCluster(ns, v3);
      expect(sim3.groups[0]?.group).toBe(1);
      await apply(v3);
      const observed = await rollThroughGates(ns, v3, sim3, 1, env.watch);
      console.log(`[rollout] third revision: ${table(observed)}`);
      const reasons = (await edEvents(ns)).filter((e) => e.reason === 'RolloutStarted').map((e) => e.message);
      expect(reasons.some((m) => m.includes(v3.rolloutRevision))).toBe(true);
      expect(await podCounts(ns, v3)).toEqual(v3.regions.map((r) => ({ name: r.name, updated: r.replicas, old: 0 })));
    });
  });

  test('a replica count change mid-rollout resizes both revisions and completes at the new count', async ({ ns }) => {
    await withRolloutEnv(ns, 'resize', async (env) => {
      await fill(env, { image: V1, ...base });
      const v2 = env.render({ image: V2, ...base });
      await apply(v2);
      await waitForPhase(ns, v2.rolloutRevision, 1, 'WaitingForConfirmation', 180_000, v2);

      // Region a shrinks 3 → 2 (its old pods go), region c grows 2 → 4; the rollout revision stays the same.
      const resized = env.render({ image: V2, ...base, replicas: [2, 2, 4] });
      expect(resized.rolloutRevision).toBe(v2.rolloutRevision);
      const sim = await simulateFromCluster(ns, resized);
      await apply(resized);
      await waitObserved(ns);
      const observed = await rollThroughGates(ns, resized, sim, 1, env.watch);
      console.log(`[rollout] resize: ${sim.totalGroups} groups; ${table(observed)}`);
      expect(await podCounts(ns, resized)).toEqual([2, 2, 4].map((n, i) => ({ name: resized.regions[i]?.name, updated: n, old: 0 })));
      expect((await readStatus(ns)).regions?.map((r) => [r.desired, r.available])).toEqual([
        [2, 2],
        [2, 2],
        [4, 4],
      ]);
    });
  });

  test('a region shrunk below the new pods it runs keeps the group and its gates', async ({ ns }) => {
    await withRolloutEnv(ns, 'shrink-below-new', async (env) => {
      const wide = { replicas: [4, 2, 4], strategy: { needWaitingForConfirm: true } };
      await fill(env, { image: V1, ...wide });
      const v2 = env.render({ image: V2, ...wide });
      await apply(v2);
      await waitForPhase(ns, v2.rolloutRevision, 1, 'WaitingForConfirmation', 180_000, v2);
      expect(await edctl(ns, 'approve')).toBe(0);
      await waitForPhase(ns, v2.rolloutRevision, 2, 'WaitingForConfirmation', 180_000, v2);
      await waitForPods(
        ns,
        v2,
        v2.regions.map((r) => ({ name: r.name, updated: 2, old: r.replicas - 2 })),
        'group 2',
      );

      // Region a shrinks 4 -> 1 while it runs 2 new pods: it sheds its old pods; the rollout stays at gate 2 of 4.
      const shrunk = env.render({ image: V2, ...wide, replicas: [1, 2, 4] });
      expect(shrunk.rolloutRevision).toBe(v2.rolloutRevision);
      const sim = await simulateFromCluster(ns, shrunk);
      expect(sim.groups[0]?.group).toBe(2);
      await apply(shrunk);
      await waitObserved(ns);
      const observed = await rollThroughGates(ns, shrunk, sim, 2, env.watch);
      console.log(`[rollout] shrink below new: ${table(observed)}`);
      expect(observed.map((g) => g.group)).toEqual([2, 3, 4]);
      expect(await podCounts(ns, shrunk)).toEqual([1, 2, 4].map((n, i) => ({ name: shrunk.regions[i]?.name, updated: n, old: 0 })));
    });
  });

  test('a revert to the original revision while pods still run it rolls back through the same gates', async ({ ns }) => {
    await withRolloutEnv(ns, 'revert', async (env) => {
      const v1 = await fill(env, { image: V1, ...base });
      const v2 = env.render({ image: V2, ...base });
      await apply(v2);
      await waitForPhase(ns, v2.rolloutRevision, 1, 'WaitingForConfirmation', 180_000, v2);

      const sim = await simulateFromCluster(ns, v1);
      await apply(v1);
      const observed = await rollThroughGates(ns, v1, sim, 1, env.watch);
      console.log(`[rollout] revert: groups ${sim.groups.map((g) => g.group).join(', ')} of ${sim.totalGroups}; ${table(observed)}`);
      expect(await podCounts(ns, v1)).toEqual(v1.regions.map((r) => ({ name: r.name, updated: r.replicas, old: 0 })));
      expect((await readStatus(ns)).revision).toBe(v1.rolloutRevision);
    });
  });
});

test('steady state makes no writes', async ({ ns }) => {
  await withRolloutEnv(ns, 'idle', async (env) => {
    const base = { replicas: [3, 2, 2] };
    await fill(env, { image: V1, ...base });
    const v2 = env.render({ image: V2, ...base });
    await apply(v2);
    await waitForPhase(ns, v2.rolloutRevision, 3, 'Healthy', 180_000, v2);
    await waitForPods(
      ns,
      v2,
      v2.regions.map((r) => ({ name: r.name, updated: r.replicas, old: 0 })),
      'v2 everywhere',
    );
    await waitFor(
      'status shows every pod available',
      async () => {
        const s = await readStatus(ns);
        return s.regions?.every((r) => r.available === r.desired && r.current === r.desired) ?? false;
      },
      { describe: () => readStatus(ns) },
    );
    await sleep(3_000);

    const look = async () => {
      const metrics = await agentMetrics(env.agent);
      const ed = await readEd(ns);
      const rs = (await clients().apps.listNamespacedReplicaSet({ namespace: ns, labelSelector: `${NAME_LABEL}=${ED_NAME}` })).items;
      const pods = (await clients().core.listNamespacedPod({ namespace: ns, labelSelector: `${NAME_LABEL}=${ED_NAME}` })).items;
      return {
        requests: apiRequests(metrics),
        actions: counterSum(metrics, 'extendeddeployment_agent_actions_total'),
        statusWrites: counterSum(metrics, 'extendeddeployment_agent_status_writes_total'),
        reconciles: counterSum(metrics, 'extendeddeployment_agent_reconcile_duration_seconds_count'),
        events: (await edEvents(ns)).length,
        versions: {
          ed: ed.metadata?.resourceVersion,
          ...Object.fromEntries(rs.map((r) => [r.metadata?.name, r.metadata?.resourceVersion])),
          ...Object.fromEntries(pods.map((p) => [p.metadata?.name, p.metadata?.resourceVersion])),
        },
      };
    };
    const before = await look();
    await sleep(60_000);
    const after = await look();
    const delta = Object.fromEntries(
      Object.keys(after.requests)
        .map((k) => [k, (after.requests[k] ?? 0) - (before.requests[k] ?? 0)])
        .filter(([, n]) => n !== 0),
    );
    const isWrite = (k: string) => /^(POST|PUT|PATCH|DELETE) /.test(k);
    const writes = Object.entries(delta).filter(([k]) => isWrite(k) && !k.endsWith(' leases'));
    console.log(`[idle] API requests the agent sent over 60 s (by verb and resource): ${JSON.stringify(delta)}`);
    console.log(
      `[idle] over 60 s: actions ${before.actions} -> ${after.actions}, status writes ${before.statusWrites} -> ${after.statusWrites}, ` +
        `reconciles ${before.reconciles} -> ${after.reconciles}, Events on the ED ${before.events} -> ${after.events}, ` +
        `resourceVersions of ${Object.keys(before.versions).length} objects (ED, ${3} ReplicaSets, pods) changed: ${Object.keys(before.versions).filter((k) => before.versions[k] !== after.versions[k as keyof typeof after.versions]).length}`,
    );
    expect(before.statusWrites).toBeGreaterThan(0);
    // Writes other than the leader election's Lease renewals: none.
    expect(writes).toEqual([]);
    expect(after.actions).toBe(before.actions);
    expect(after.statusWrites).toBe(before.statusWrites);
    expect(after.events).toBe(before.events);
    expect(after.versions).toEqual(before.versions);
  });
}, 300_000);
