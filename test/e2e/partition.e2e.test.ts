// Issue 18's grey phase, end to end on the lab with the agent in-process and the invariant watcher beside it: a rollout
// stops at the regions' partitions, Healthy with both revisions running; Git then moves the new count and the
// partition on their own (a raise, a cut that takes new pods and never a kept old one, a kept pod evicted and made again
// at the old revision by the region's keeper, a partition raised above the old pods left, a lower partition), and
// removing the partitions finishes the rollout and deletes the keeper. The kept old pods are the same pods throughout (their uids), and the cluster
// matches Git at every stop (git-match.ts accepts the old pods a partition keeps). The test prints the pods of each
// revision at every step: the closing figure of a grey phase.
import { describe, expect } from 'vitest';
import type { RenderedExtendedDeployment } from '../../core/render.js';
import { KEEPER_LABEL, REGION_LABEL, REVISION_LABEL } from '../../core/labels.js';
import { waitMatchesGit } from './git-match.js';
import { clients, test, waitFor } from './helpers.js';
import { apply, edPods, fill, isLive, podCounts, readStatus, withRolloutEnv, type EdOptions } from './rollout-kit.js';

const V1 = 'registry.example/web:1';
const V2 = 'registry.example/web:2';

/** Uids of the live pods of `region` that do not run its rendered revision. */
async function oldPodUids(ns: string, rendered: RenderedExtendedDeployment, region: number): Promise<string[]> {
  const r = rendered.regions[region];
  const pods = (await edPods(ns)).filter((p) => isLive(p) && p.metadata?.labels?.[REGION_LABEL] === r?.name);
  return pods
    .filter((p) => p.metadata?.labels?.[REVISION_LABEL] !== r?.revision)
    .map((p) => p.metadata?.uid ?? '')
    .sort();
}

/** Region `region`'s keeper (core/rollout/keeper.ts): its count and the revision it keeps; undefined when it has none. */
async function keeperOf(
  ns: string,
  rendered: RenderedExtendedDeployment,
  region: number,
): Promise<{ replicas: number; revision: string | undefined } | undefined> {
  const name = rendered.regions[region]?.name ?? '';
  const { items } = await clients().apps.listNamespacedReplicaSet({ namespace: ns, labelSelector: `${KEEPER_LABEL}=true,${REGION_LABEL}=${name}` });
  const [keeper] = items;
  return keeper && { replicas: keeper.spec?.replicas ?? 1, revision: keeper.spec?.template?.metadata?.labels?.[REVISION_LABEL] };
}

describe('a grey phase: partitions keep old pods while Git moves both counts', () => {
  test('stops Healthy at the partitions, serves a raise and a cut around the kept pods, moves a lower partition on, finishes without one', async ({ ns }) => {
    await withRolloutEnv(ns, 'grey-phase', async (env) => {
      const started = Date.now();
      const timeline: string[] = [];
      const strategy = { rolloutStrategy: 'Beta', batchSize: 2 };
      const v1 = await fill(env, { image: V1, replicas: [4, 3, undefined], strategy });

      /** Applies `o`, waits until the pods per region are `expected` ([new, old] each) and the status Healthy for it. */
      const step = async (what: string, o: EdOptions, expected: readonly (readonly [number, number])[]): Promise<RenderedExtendedDeployment> => {
        const rendered = env.render(o);
        await apply(rendered);
        const want = expected.map(([updated, old], i) => ({ name: rendered.regions[i]?.name ?? '', updated, old }));
        await waitFor(
          `${what}: Healthy with pods per region ${JSON.stringify(want)}`,
          async () => {
            const s = await readStatus(ns);
            const counts = await podCounts(ns, rendered);
            return s.phase === 'Healthy' && s.revision === rendered.rolloutRevision && JSON.stringify(counts) === JSON.stringify(want);
          },
          { timeoutMs: 120_000, describe: async () => ({ status: await readStatus(ns), pods: await podCounts(ns, rendered) }) },
        );
        expect(await waitMatchesGit(env.watch, rendered), `${what}: the cluster matches Git`).toEqual([]);
        const counts = await podCounts(ns, rendered);
        timeline.push(
          `t=${((Date.now() - started) / 1000).toFixed(0).padStart(3)} s  ${what.padEnd(36)} ${counts.map((c) => `${c.name.split('-')[0]}: ${c.updated} new ${c.old} old`).join(' | ')}`,
        );
        return rendered;
      };

      // The rollout stops at the partitions: a keeps 2 of 4, b keeps 34% of 3 (rounded up: 2).
      const grey = await step('v2, partitions a 2, b 34%', { image: V2, replicas: [4, 3, undefined], strategy, partitions: { a: 2, b: '34%' } }, [
        [2, 2],
        [1, 2],
      ]);
      expect((await readStatus(ns)).conditions?.find((c) => c.type === 'Progressing')?.message).toContain('the 4 pods partitions keep');
      const keptA = await oldPodUids(ns, grey, 0);
      const keptB = await oldPodUids(ns, grey, 1);
      expect([keptA.length, keptB.length]).toEqual([2, 2]);

      // A traffic peak: a to 7 replicas, partition unchanged: 5 new pods, the same 2 old ones.
      const raised = await step('a raised to 7', { image: V2, replicas: [7, 3, undefined], strategy, partitions: { a: 2, b: '34%' } }, [
        [5, 2],
        [1, 2],
      ]);
      expect(await oldPodUids(ns, raised, 0)).toEqual(keptA);

      // After the peak: a cut to 3 takes new pods only; the kept old pods stay.
      const cut = await step('a cut to 3', { image: V2, replicas: [3, 3, undefined], strategy, partitions: { a: 2, b: '34%' } }, [
        [1, 2],
        [1, 2],
      ]);
      expect(await oldPodUids(ns, cut, 0)).toEqual(keptA);

      // A kept pod dies (evicted): it comes back at the old revision, made by a's keeper from the history's template;
      // the new pod the regional ReplicaSet made in its place leaves once the old one is available.
      const [victim] = keptA;
      const dead = (await edPods(ns)).find((p) => p.metadata?.uid === victim)!;
      env.watch.disrupt(victim ?? '');
      await clients().core.createNamespacedPodEviction({
        name: dead.metadata!.name!,
        namespace: ns,
        body: { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: dead.metadata!.name!, namespace: ns } },
      });
      const healed = await step('a kept pod evicted', { image: V2, replicas: [3, 3, undefined], strategy, partitions: { a: 2, b: '34%' } }, [
        [1, 2],
        [1, 2],
      ]);
      const keptAgain = await oldPodUids(ns, healed, 0);
      expect(keptAgain).toContain(keptA[1]);
      expect(keptAgain).not.toContain(victim);
      expect(await keeperOf(ns, healed, 0)).toEqual({ replicas: 1, revision: v1.regions[0]?.revision });

      // The old count raised on its own: a partition of 3 adds an old-revision pod, the count stays 3.
      const raisedOld = await step('a partition 3', { image: V2, replicas: [3, 3, undefined], strategy, partitions: { a: 3, b: '34%' } }, [
        [0, 3],
        [1, 2],
      ]);
      expect((await keeperOf(ns, raisedOld, 0))?.replicas).toBe(2);

      // A lower partition moves the difference on: a keeps 1 of its old pods.
      const lowered = await step('a partition 1', { image: V2, replicas: [3, 3, undefined], strategy, partitions: { a: 1, b: '34%' } }, [
        [2, 1],
        [1, 2],
      ]);
      const [stays] = await oldPodUids(ns, lowered, 0);
      expect(keptA).toContain(stays);
      expect(await oldPodUids(ns, lowered, 1)).toEqual(keptB);

      // Without partitions the rollout finishes: every pod at the new revision.
      const finished = await step('partitions removed', { image: V2, replicas: [3, 3, undefined], strategy }, [
        [3, 0],
        [3, 0],
      ]);
      // With nothing left to keep, the keeper goes.
      await waitFor('a keeps no keeper', async () => (await keeperOf(ns, finished, 0)) === undefined, { timeoutMs: 30_000 });
      console.log(`[grey-phase] pods per revision while Git moves the counts:\n${timeline.join('\n')}`);
    });
  });
});
