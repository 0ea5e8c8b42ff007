// Issue 18's creation rollouts and holds, end to end on the lab with the agent in-process and the invariant watcher
// beside every test: a new ExtendedDeployment, a region added and a region grown from 0 are created by groups (Beta:
// one pod per region first) through the same gates as an upgrade, exactly as `edctl plan` simulates them; and a rollout
// held at a gate still serves a capacity raise from Git at once.
import { describe, expect } from 'vitest';
import type { RenderedExtendedDeployment } from '../../core/render.js';
import { test } from './helpers.js';
import {
  apply,
  assertHolds,
  edctl,
  fill,
  podCounts,
  readStatus,
  rollThroughGates,
  simulateCreation,
  waitForPhase,
  waitForPods,
  withRolloutEnv,
} from './rollout-kit.js';

/** Pods per region of `rendered`, in its order: [new, old] each. */
const podsPer = (rendered: RenderedExtendedDeployment, counts: readonly (readonly [number, number])[]) =>
  counts.map(([updated, old], i) => ({ name: rendered.regions[i]?.name ?? '', updated, old }));

const V1 = 'registry.example/web:1';
const V2 = 'registry.example/web:2';
const gated = { rolloutStrategy: 'Beta', batchSize: 2, needWaitingForConfirm: true };

describe('regions that start from zero are created by groups', () => {
  test('a new ExtendedDeployment: one pod per region first, held at the gate, then the batches, as edctl plan shows', async ({ ns }) => {
    await withRolloutEnv(ns, 'create', async (env) => {
      const v1 = env.render({ image: V1, replicas: [5, 2, undefined], strategy: gated });
      const sim = simulateCreation(v1);
      expect(sim.groups.map((g) => g.regions.map((r) => r.updated))).toEqual([
        [1, 1],
        [3, 2],
        [5, 2],
      ]);
      await apply(v1);
      await waitForPhase(ns, v1.rolloutRevision, 1, 'WaitingForConfirmation', 120_000, v1);
      await waitForPods(
        ns,
        v1,
        [1, 1].map((n, i) => ({ name: v1.regions[i]?.name ?? '', updated: n, old: 0 })),
        'first pods',
      );
      await assertHolds(ns, v1, 4_000, (s) => expect([s.phase, s.currentGroup, s.rolloutRegions?.length]).toEqual(['WaitingForConfirmation', 1, 2]));
      await rollThroughGates(ns, v1, sim, 1, env.watch);
    });
  });

  test('a region added to a running ExtendedDeployment is created by groups; the other regions keep their pods', async ({ ns }) => {
    await withRolloutEnv(ns, 'add-region', async (env) => {
      const v1 = await fill(env, { image: V1, replicas: [3, 2, undefined], strategy: gated });
      const v2 = env.render({ image: V1, replicas: [3, 2, 3], strategy: gated });
      expect(v2.rolloutRevision).not.toBe(v1.rolloutRevision);
      await apply(v2);
      await waitForPhase(ns, v2.rolloutRevision, 1, 'WaitingForConfirmation', 120_000, v2);
      const c = v2.regions[2]?.name ?? '';
      expect((await readStatus(ns)).rolloutRegions).toEqual([c]);
      await waitForPods(
        ns,
        v2,
        podsPer(v2, [
          [3, 0],
          [2, 0],
          [1, 0],
        ]),
        'the new region runs one pod',
      );
      await assertHolds(ns, v2, 4_000, (s) => expect([s.phase, s.currentGroup]).toEqual(['WaitingForConfirmation', 1]));
      expect(await edctl(ns, 'approve')).toBe(0);
      await waitForPhase(ns, v2.rolloutRevision, 2, 'Healthy', 120_000, v2);
      await waitForPods(
        ns,
        v2,
        [3, 2, 3].map((n, i) => ({ name: v2.regions[i]?.name ?? '', updated: n, old: 0 })),
        'every region filled',
      );
    });
  });

  test('a region grown from 0 in Git is a rollout of its own (<revision>+1): approvals of the earlier one do not pass it', async ({ ns }) => {
    await withRolloutEnv(ns, 'grow-from-zero', async (env) => {
      const v1 = await fill(env, { image: V1, replicas: [3, 2, 0], strategy: gated });
      // The earlier rollout's approval stays on the object; it names the rollout revision alone.
      const approvedBefore = (await readStatus(ns)).revision;
      expect(approvedBefore).toBe(v1.rolloutRevision);
      const grown = env.render({ image: V1, replicas: [3, 2, 4], strategy: gated });
      expect(grown.rolloutRevision).toBe(v1.rolloutRevision);
      await apply(grown);
      const key = `${v1.rolloutRevision}+1`;
      await waitForPhase(ns, key, 1, 'WaitingForConfirmation', 120_000, grown);
      await waitForPods(
        ns,
        grown,
        podsPer(grown, [
          [3, 0],
          [2, 0],
          [1, 0],
        ]),
        'one pod in the grown region',
      );
      await assertHolds(ns, grown, 4_000, (s) => expect([s.revision, s.phase, s.currentGroup]).toEqual([key, 'WaitingForConfirmation', 1]));
      expect(await edctl(ns, 'approve')).toBe(0);
      await waitForPhase(ns, key, 2, 'WaitingForConfirmation', 120_000, grown);
      expect(await edctl(ns, 'approve')).toBe(0);
      await waitForPhase(ns, key, 3, 'Healthy', 120_000, grown);
      expect(await podCounts(ns, grown)).toEqual(
        podsPer(grown, [
          [3, 0],
          [2, 0],
          [4, 0],
        ]),
      );
    });
  });
});

describe('a held rollout serves capacity', () => {
  test('a raise from Git while group 1 waits for approval is served at once; the gate still holds', async ({ ns }) => {
    await withRolloutEnv(ns, 'raise-while-held', async (env) => {
      await fill(env, { image: V1, replicas: [3, 2, undefined], strategy: gated });
      const v2 = env.render({ image: V2, replicas: [3, 2, undefined], strategy: gated });
      await apply(v2);
      await waitForPhase(ns, v2.rolloutRevision, 1, 'WaitingForConfirmation', 120_000, v2);
      await waitForPods(
        ns,
        v2,
        podsPer(v2, [
          [1, 2],
          [1, 1],
        ]),
        'group 1',
      );

      // A traffic peak: region a goes from 3 to 6 while the rollout waits. Its old pods stay; the missing ones come now.
      const peak = env.render({ image: V2, replicas: [6, 2, undefined], strategy: gated });
      expect(peak.rolloutRevision).toBe(v2.rolloutRevision);
      await apply(peak);
      await waitForPods(
        ns,
        peak,
        podsPer(peak, [
          [4, 2],
          [1, 1],
        ]),
        'a raised to 6 during the hold',
      );
      await assertHolds(ns, peak, 4_000, (s) => expect([s.phase, s.currentGroup]).toEqual(['WaitingForConfirmation', 1]));
      const status = await readStatus(ns);
      expect(status.regions?.map((r) => [r.desired, r.available])).toEqual([
        [6, 6],
        [2, 2],
      ]);
    });
  });
});
