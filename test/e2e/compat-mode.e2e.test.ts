// Compat mode (subsetType Deployment) end to end: the native Deployment controller rolls inside a region, the agent
// gates whole regions (Sequential by default) by keeping every other region's Deployment paused, owns replicas and
// paused, stops between regions until approved, and leaves every Deployment paused at the new revision. The invariant
// watcher runs beside it (a waiting region keeps its Deployment paused and its pods; no region above desired +
// maxSurge or, once filled, below desired; no new-revision pod removed; a region starts only once the previous one is
// done).
import type { V1Deployment } from '@kubernetes/client-node';
import { expect } from 'vitest';
import { NAME_LABEL, REGION_LABEL, REVISION_LABEL } from '../../core/labels.js';
import { clients, sleep, test, waitFor } from './helpers.js';
import { apply, ED_NAME, edctl, podCounts, readStatus, waitForPhase, waitForPods, withRolloutEnv } from './rollout-kit.js';

async function deployments(ns: string): Promise<V1Deployment[]> {
  return (await clients().apps.listNamespacedDeployment({ namespace: ns, labelSelector: `${NAME_LABEL}=${ED_NAME}` })).items;
}

/** Names and uids of a region's live pods, sorted. */
async function regionPods(ns: string, region: string): Promise<string[]> {
  const pods = (await clients().core.listNamespacedPod({ namespace: ns, labelSelector: `${NAME_LABEL}=${ED_NAME},${REGION_LABEL}=${region}` })).items;
  return pods
    .filter((p) => !p.metadata?.deletionTimestamp)
    .map((p) => `${p.metadata?.name}/${p.metadata?.uid}/${p.metadata?.labels?.[REVISION_LABEL]}`)
    .sort();
}

test('compat mode: an image change rolls one region at a time, the waiting region paused and untouched, with a gate between', async ({ ns }) => {
  await withRolloutEnv(ns, 'compat', async (env) => {
    const base = { replicas: [3, 2], subsetType: 'Deployment' as const, strategy: { needWaitingForConfirm: true } };
    const v1 = env.render({ image: 'registry.example/web:1', ...base });
    expect(v1.regions.map((r) => r.workload['kind'])).toEqual(['Deployment', 'Deployment']);
    await apply(v1);
    await waitForPods(
      ns,
      v1,
      v1.regions.map((r) => ({ name: r.name, updated: r.replicas, old: 0 })),
      'v1 filled',
      120_000,
    );
    await waitFor(
      'v1 Healthy, every Deployment paused',
      async () => {
        const s = await readStatus(ns);
        const ds = await deployments(ns);
        return s.phase === 'Healthy' && s.revision === v1.rolloutRevision && ds.length === 2 && ds.every((d) => d.spec?.paused === true);
      },
      {
        timeoutMs: 60_000,
        describe: async () => ({ status: await readStatus(ns), paused: (await deployments(ns)).map((d) => [d.metadata?.name, d.spec?.paused]) }),
      },
    );

    const [a, b] = v1.regions.map((r) => r.name) as [string, string];
    const bBefore = await regionPods(ns, b);
    const v2 = env.render({ image: 'registry.example/web:2', ...base });
    await apply(v2);

    // Group 1 is region a: its Deployment rolls; region b's stays paused and its pods are the same pods throughout.
    const bSeen = new Set<string>();
    await waitFor(
      'region a rolling, b paused',
      async () => {
        const s = await readStatus(ns);
        const ds = await deployments(ns);
        const paused = (r: string) => ds.find((d) => d.metadata?.name === `${ED_NAME}-${r}`)?.spec?.paused;
        bSeen.add(JSON.stringify(await regionPods(ns, b)));
        return s.revision === v2.rolloutRevision && s.currentGroup === 1 && paused(b) === true && (s.phase === 'WaitingForConfirmation' || paused(a) === false);
      },
      { timeoutMs: 60_000, describe: () => readStatus(ns) },
    );
    expect([...bSeen]).toEqual([JSON.stringify(bBefore)]);
    const gate = await waitForPhase(ns, v2.rolloutRevision, 1, 'WaitingForConfirmation', 180_000, v2);
    expect(gate.totalGroups).toBe(2);
    expect(gate.rolloutRegions).toEqual([a, b]);
    await waitForPods(
      ns,
      v2,
      [
        { name: a, updated: 3, old: 0 },
        { name: b, updated: 0, old: 2 },
      ],
      'region a rolled, b waits',
    );
    expect(await regionPods(ns, b)).toEqual(bBefore);

    // The agent stops between regions until approved: nothing moves, every Deployment paused.
    const until = Date.now() + 6_000;
    while (Date.now() < until) {
      await sleep(500);
      const s = await readStatus(ns);
      expect([s.phase, s.currentGroup]).toEqual(['WaitingForConfirmation', 1]);
      expect(await regionPods(ns, b)).toEqual(bBefore);
      expect((await deployments(ns)).map((d) => d.spec?.paused)).toEqual([true, true]);
    }

    expect(await edctl(ns, 'approve')).toBe(0);
    const done = await waitForPhase(ns, v2.rolloutRevision, 2, 'Healthy', 180_000, v2);
    expect(done.regions?.map((r) => [r.name, r.desired, r.updated, r.available])).toEqual([
      [a, 3, 3, 3],
      [b, 2, 2, 2],
    ]);
    await waitForPods(
      ns,
      v2,
      v2.regions.map((r) => ({ name: r.name, updated: r.replicas, old: 0 })),
      'v2 everywhere',
    );
    expect((await regionPods(ns, b)).some((p) => bBefore.includes(p))).toBe(false);

    // Every Deployment paused again, at the new revision, its rollout finished.
    await waitFor(
      'every Deployment paused at the new revision',
      async () => {
        const ds = await deployments(ns);
        return v2.regions.every((r) => {
          const d = ds.find((x) => x.metadata?.name === `${ED_NAME}-${r.name}`);
          return (
            d?.spec?.paused === true &&
            d.spec.replicas === r.replicas &&
            d.spec.template.metadata?.labels?.[REVISION_LABEL] === r.revision &&
            d.status?.observedGeneration === d.metadata?.generation &&
            d.status?.updatedReplicas === r.replicas &&
            d.status?.replicas === r.replicas &&
            d.status?.availableReplicas === r.replicas
          );
        });
      },
      {
        describe: async () =>
          (await deployments(ns)).map((d) => ({ name: d.metadata?.name, paused: d.spec?.paused, spec: d.spec?.replicas, status: d.status })),
      },
    );
    expect(await podCounts(ns, v2)).toEqual(v2.regions.map((r) => ({ name: r.name, updated: r.replicas, old: 0 })));
  });
});
