// Removing a region (docs/operating.md "Removing a region") end to end, on the lab with the agent in-process and the
// invariant watcher beside it: step 1 sets the region's count to 0 with the total unchanged, so the other regions grow
// and the drained region's pods leave only as theirs become available (core/rollout/handoff.ts); step 2 deletes the
// region from the ExtendedDeployment and prunes its ReplicaSet, as Argo CD would. No pod is lost below the total at any
// moment the watcher saw, and the watcher's floor over all regions (invariants.ts) reports nothing.
import type { KubernetesObject } from '@kubernetes/client-node';
import { describe, expect } from 'vitest';
import { PROGRESSING_CONDITION } from '../../core/api/conditions.js';
import { waitMatchesGit } from './git-match.js';
import { clients, test, waitFor } from './helpers.js';
import { apply, fill, podCounts, readStatus, withRolloutEnv, type RolloutEnv } from './rollout-kit.js';

const IMAGE = 'registry.example/web:1';
/** New pods take this long to count as available after Ready: long enough to see the drained region wait for them. */
const STRATEGY = { minReadySeconds: 5 };
const TOTAL = 6;

/** Per region in declared order, over the watcher's distinct states since `since`: [pods, available] (see summarize). */
function states(env: RolloutEnv, since: number, regions: readonly string[]): { at: number; pods: number[]; available: number[] }[] {
  return env.watch.samples
    .filter((s) => s.at >= since)
    .map((s) => {
      const parts = regions.map((name) => s.regions[name]?.split('/').map(Number) ?? [0, 0, 0]);
      return { at: s.at, pods: parts.map((p) => p[0] ?? 0), available: parts.map((p) => p[2] ?? 0) };
    });
}

const sum = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0);

describe('removing a region: drain it to 0, then delete it', () => {
  test("the drained region's pods leave only as the other regions' pods become available, and removing it loses none", async ({ ns }) => {
    await withRolloutEnv(ns, 'region-removal', async (env) => {
      await fill(env, { image: IMAGE, replicas: [2, 2, 2], strategy: STRATEGY });
      const names = env.regions.map((r) => r.metadata?.name ?? '');

      // Step 1: region c to 0, the total unchanged (a and b take its share).
      const drained = env.render({ image: IMAGE, replicas: [3, 3, 0], strategy: STRATEGY });
      const started = Date.now();
      await apply(drained);
      const messages = new Set<string>();
      await waitFor(
        'region c drained: a and b at 3 pods, c at none, Healthy',
        async () => {
          const status = await readStatus(ns);
          const message = status.conditions?.find((c) => c.type === PROGRESSING_CONDITION)?.message;
          if (message) messages.add(message);
          const pods = await podCounts(ns, drained);
          return status.phase === 'Healthy' && JSON.stringify(pods.map((p) => p.updated + p.old)) === JSON.stringify([3, 3, 0]);
        },
        { timeoutMs: 120_000, describe: async () => ({ status: await readStatus(ns), pods: await podCounts(ns, drained) }) },
      );
      // The watcher replays events a moment after they happen: wait until it has seen the drain to its end.
      const drain = await waitFor('the watcher saw region c drained', async () => {
        const seen = states(env, started, names);
        return JSON.stringify(seen.at(-1)?.pods) === JSON.stringify([3, 3, 0]) ? seen : undefined;
      });
      console.log(`[region-removal] drain: ${drain.map((s) => `${s.pods.join('/')} (${s.available.join('/')} available)`).join(' → ')}`);
      // Never fewer pods available than the total, and c kept both its pods while a and b had fewer than 3 available.
      expect(Math.min(...drain.map((s) => sum(s.available)))).toBeGreaterThanOrEqual(TOTAL);
      expect(drain.some((s) => s.pods[2] === 2 && (s.available[0] ?? 0) + (s.available[1] ?? 0) < 6)).toBe(true);
      // `edctl status` said why c still ran its pods.
      expect([...messages].some((m) => m.includes(`region ${names[2]} keeps`) && m.includes('(make-before-break)'))).toBe(true);

      // Step 2: c deleted from the ExtendedDeployment; Argo CD prunes its ReplicaSet, which has no pods left.
      const removed = env.render({ image: IMAGE, replicas: [3, 3, undefined], strategy: STRATEGY });
      const pruned = drained.regions.find((r) => !removed.regions.some((x) => x.name === r.name));
      expect(pruned?.name).toBe(names[2]);
      const removing = Date.now();
      await apply(removed);
      await clients().objects.delete(pruned?.workload as KubernetesObject);
      const status = await waitFor(
        'region c gone from the status, a and b Healthy at 3 pods',
        async () => {
          const s = await readStatus(ns);
          const pods = await podCounts(ns, removed);
          const healthy = s.phase === 'Healthy' && s.regions?.length === 2 && JSON.stringify(pods.map((p) => p.updated + p.old)) === JSON.stringify([3, 3]);
          return healthy ? s : undefined;
        },
        { timeoutMs: 60_000, describe: async () => ({ status: await readStatus(ns), pods: await podCounts(ns, removed) }) },
      );
      expect(status.regions?.map((r) => [r.name, r.desired, r.available])).toEqual([
        [names[0], 3, 3],
        [names[1], 3, 3],
      ]);
      expect(await waitMatchesGit(env.watch, removed), 'the cluster matches Git').toEqual([]);
      await waitFor('the watcher saw region c removed', async () => !((names[2] ?? '') in (env.watch.samples.at(-1)?.regions ?? {})));
      const removal = states(env, removing, names);
      expect(Math.min(...removal.map((s) => sum(s.available)))).toBeGreaterThanOrEqual(TOTAL);
    });
  });
});
