// Issue 16 on the lab: pods evicted in the middle of rollouts, in every mode (regional ReplicaSets replacing pods, in
// each upgrade mode and update strategy, regional ReplicaSets swapping images in place, regional native Deployments in
// compat mode), with the real ReplicaSet
// and Deployment controllers of the lab's kube-controller-manager and kwok nodes.
//
// Each test fills v1, then runs two rollouts with confirmation gates (the gates only pin down where the evictions
// happen; they are approved right away):
// - v1 → v2: while a group is Progressing, an old-revision pod and a new-revision pod are evicted the way the kubelet
//   evicts under node pressure (status phase Failed, reason Evicted: the pod object stays);
// - v2 → v3: starts with those two Failed pods left over (both now old), and while a group is Progressing an old and a
//   new pod are evicted through the Eviction API (policy/v1, which deletes them).
// Every rollout must reach Healthy at its revision with exactly the desired pods per region, all at the new revision,
// the status counting no Failed pod, and the invariant watcher (told which pods the test evicts: they are disruptions
// from outside, see invariants.ts) must see no violation. The pods evicted are the oldest settled ones of their kind
// (see settled), so every run evicts the same pods of the same groups; nothing asserts on speed.
import type { V1Pod } from '@kubernetes/client-node';
import { describe, expect } from 'vitest';
import { parseSwapState } from '../../core/inplace/swap-state.js';
import { REGION_LABEL, REVISION_LABEL, SWAP_STATE_ANNOTATION } from '../../core/labels.js';
import type { RenderedExtendedDeployment } from '../../core/render.js';
import { clients, errorCode, patchPodStatus, test, waitFor } from './helpers.js';
import { apply, edctl, edPods, fill, isLive, readStatus, waitForPhase, waitForPods, withRolloutEnv, type EdOptions, type RolloutEnv } from './rollout-kit.js';

const IMAGES = ['registry.example/web:1', 'registry.example/web:2', 'registry.example/web:3'] as const;
/** Gates after every group; minReadySeconds 2 keeps a group Progressing for a while after its new pods start. */
const STRATEGY = { batchSize: 1, minReadySeconds: 2, needWaitingForConfirm: true };

type Way = 'node-pressure' | 'api';

/** The kubelet's eviction message (pkg/kubelet/eviction/helpers.go), for a memory threshold. */
const PRESSURE_MESSAGE =
  'The node was low on resource: memory. Threshold quantity: 100Mi, available: 51200Ki. Container app was using 40Mi, request is 32Mi, has larger consumption of memory. ';

/**
 * Evicts a pod the way the kubelet's eviction manager does under node pressure: its status becomes phase Failed,
 * reason Evicted, with the DisruptionTarget condition (TerminationByKubelet), not Ready, its containers terminated
 * (exit code 137). The pod object stays until someone deletes it or PodGC collects it. Every pod stage of the lab's
 * kwok selects Pending or Running pods, or deleted ones (test/cluster/kwok.yaml), so nothing writes over this status:
 * the test checks the pod's resourceVersion has not moved at the end.
 */
async function evictUnderPressure(ns: string, pod: V1Pod): Promise<V1Pod> {
  const now = new Date().toISOString();
  const notReady = (type: string) => ({ type, status: 'False', reason: 'PodFailed', lastTransitionTime: now });
  return patchPodStatus(ns, pod.metadata?.name ?? '', {
    status: {
      phase: 'Failed',
      reason: 'Evicted',
      message: PRESSURE_MESSAGE,
      conditions: [
        { type: 'DisruptionTarget', status: 'True', reason: 'TerminationByKubelet', message: PRESSURE_MESSAGE, lastTransitionTime: now },
        notReady('Ready'),
        notReady('ContainersReady'),
      ],
      containerStatuses: (pod.status?.containerStatuses ?? []).map((c) => ({
        ...c,
        ready: false,
        started: false,
        state: { terminated: { exitCode: 137, reason: 'Error', startedAt: c.state?.running?.startedAt ?? now, finishedAt: now, containerID: c.containerID } },
      })),
    },
  });
}

/** Evicts a pod through the Eviction API (what `kubectl drain` does): no PodDisruptionBudget here, so it is deleted. */
async function evictThroughApi(ns: string, pod: V1Pod): Promise<void> {
  const name = pod.metadata?.name ?? '';
  await clients().core.createNamespacedPodEviction({
    name,
    namespace: ns,
    body: { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name, namespace: ns } },
  });
}

/**
 * Whether the lab's kwok is done with a pod: Running, its containers ready at their spec images, Ready (its readiness
 * gates True), no in-place swap under way. No kwok stage matches such a pod, so none is queued for it either. That
 * matters: kwok v0.8.0 leaves a queued stage in place when the pod changes into a state no stage matches, and plays it
 * on the pod as it was (pkg/kwok/controllers/pod_controller.go, preprocess). A pod turned Failed a moment after its
 * creation came back Running when lab-pod-start played. Failed matches no stage, so a settled pod evicted stays Failed.
 */
function settled(pod: V1Pod): boolean {
  const condition = (type: string) => pod.status?.conditions?.find((c) => c.type === type)?.status;
  const images = new Map((pod.status?.containerStatuses ?? []).map((c) => [c.name, c.image]));
  const swap = parseSwapState(pod.metadata?.annotations?.[SWAP_STATE_ANNOTATION])?.phase;
  return (
    isLive(pod) &&
    pod.status?.phase === 'Running' &&
    condition('Ready') === 'True' &&
    condition('ContainersReady') === 'True' &&
    pod.spec?.containers.every((c) => images.get(c.name) === c.image) === true &&
    (swap === undefined || swap === 'done')
  );
}

/** Settled pods of a region, at the rendered revision (new) or not (old), oldest first (then by name): the one evicted. */
async function settledPods(ns: string, rendered: RenderedExtendedDeployment, region: number, which: 'old' | 'new'): Promise<V1Pod[]> {
  const r = rendered.regions[region];
  const created = (p: V1Pod) => `${p.metadata?.creationTimestamp?.toISOString() ?? ''}/${p.metadata?.name ?? ''}`;
  return (await edPods(ns))
    .filter((p) => settled(p) && p.metadata?.labels?.[REGION_LABEL] === r?.name && (p.metadata?.labels?.[REVISION_LABEL] === r?.revision) === (which === 'new'))
    .sort((a, b) => (created(a) < created(b) ? -1 : 1));
}

/** Pods of the ExtendedDeployment in phase Failed. */
async function failedPods(ns: string): Promise<V1Pod[]> {
  return (await edPods(ns)).filter((p) => p.status?.phase === 'Failed');
}

interface Mode {
  readonly name: string;
  readonly options: Omit<EdOptions, 'image'>;
  /** The group during which the test evicts: an old pod of region `oldIn` and a new pod of region `newIn` (indexes). */
  readonly group: number;
  readonly oldIn: number;
  readonly newIn: number;
  /** Image changes are swapped in place: the status counts swapped and replaced pods. */
  readonly inPlace?: boolean;
}

const short = (name: string) => name.split('-')[0];

const MODES: readonly Mode[] = [
  // Parallel, Beta: a 1/3, 2/3, 3/3 and b 1/2, 2/2 over three groups. In group 2, a's old pod goes while a's group-2 pod
  // starts (its ReplicaSet replaces it at the new revision), and b's group-1 pod goes.
  { name: 'ReplicaSet regions, replacement', options: { replicas: [3, 2], strategy: STRATEGY }, group: 2, oldIn: 0, newIn: 1 },
  // The other ways to replace pods, over the same groups (a 1/3, 2/3, 3/3; b 1/2, 2/2): old pods first, both at once
  // (the agent deletes old pods through the Eviction API itself), Deployment-style budgets, and every old pod of a
  // group's share allowed to go before its new ones start.
  ...(
    [
      ['scaleInPriority', { upgradeMode: 'scaleInPriority' }],
      ['scaleSimultaneously', { upgradeMode: 'scaleSimultaneously' }],
      ['RollingUpdate', { updateStrategy: { type: 'RollingUpdate' } }],
      ['DeleteAllFirst', { updateStrategy: { type: 'DeleteAllFirst' } }],
    ] as const
  ).map(([name, mode]): Mode => ({
    name: `ReplicaSet regions, ${name}`,
    options: { replicas: [3, 2], strategy: { ...STRATEGY, ...mode } },
    group: 2,
    oldIn: 0,
    newIn: 1,
  })),
  // The same groups by image swaps (pods carry the InPlaceUpdateReady gate); a pod mid-swap is not settled, so the old
  // pod evicted in group 2 is one no swap has begun on when the test looks.
  {
    name: 'ReplicaSet regions, in place',
    options: { replicas: [3, 2], strategy: { ...STRATEGY, updateStrategy: { type: 'InPlaceIfPossible', gracePeriodSeconds: 1 } } },
    group: 2,
    oldIn: 0,
    newIn: 1,
    inPlace: true,
  },
  // Sequential, one region per group: in group 1, a new pod of a (rolling under its Deployment) and an old pod of b
  // (waiting, its Deployment paused) go.
  { name: 'compat mode, regional Deployments', options: { replicas: [3, 2], subsetType: 'Deployment', strategy: STRATEGY }, group: 1, oldIn: 1, newIn: 0 },
];

interface Evicted {
  readonly pod: V1Pod;
  readonly region: string;
  readonly revision: 'old' | 'new';
}

/**
 * Rolls out to `to`, approving every gate; while group `mode.group` is Progressing, evicts the oldest settled old pod
 * of region `oldIn` and the oldest settled new pod of region `newIn`, `way`. Returns what was evicted once `to` is
 * Healthy with exactly the desired pods per region, all at its revision.
 */
async function rollOutEvicting(env: RolloutEnv, mode: Mode, to: RenderedExtendedDeployment, way: Way): Promise<Evicted[]> {
  const { ns } = env;
  await apply(to);
  for (let g = 1; g < mode.group; g++) {
    await waitForPhase(ns, to.rolloutRevision, g, 'WaitingForConfirmation', 120_000, to);
    expect(await edctl(ns, 'approve')).toBe(0);
  }
  await waitFor(
    `group ${mode.group} Progressing with a settled old pod in region ${mode.oldIn} and a settled new one in region ${mode.newIn}`,
    async () => {
      const s = await readStatus(ns);
      if (s.revision !== to.rolloutRevision || s.currentGroup !== mode.group || s.phase !== 'Progressing') return undefined;
      const [old] = await settledPods(ns, to, mode.oldIn, 'old');
      const [young] = await settledPods(ns, to, mode.newIn, 'new');
      return old && young;
    },
    { timeoutMs: 120_000, intervalMs: 100, describe: () => readStatus(ns) },
  );
  const evicted: Evicted[] = [];
  for (const [region, revision] of [
    [mode.oldIn, 'old'],
    [mode.newIn, 'new'],
  ] as const) {
    // The oldest settled pod of its kind, taken again if the rollout removed it first (old pods leave during the group:
    // with scaleInPriority first of all, and pods created in the same second rank alike for the ReplicaSet).
    const done = await waitFor(
      `${revision} pod of region ${region} evicted`,
      async () => {
        const [pod] = await settledPods(ns, to, region, revision);
        if (!pod) return undefined;
        // The group is still running when each eviction goes out: minReadySeconds keeps it from finishing this soon.
        expect(await readStatus(ns)).toMatchObject({ revision: to.rolloutRevision, currentGroup: mode.group, phase: 'Progressing' });
        env.watch.disrupt(pod.metadata?.uid ?? '');
        try {
          // Under node pressure the pod stays: what the patch returned is kept, to see at the end that nothing wrote over it.
          const kept = way === 'node-pressure' ? await evictUnderPressure(ns, pod) : (await evictThroughApi(ns, pod), pod);
          return { pod: kept, region: to.regions[region]?.name ?? '', revision };
        } catch (error) {
          if (errorCode(error) === 404) return undefined;
          throw error;
        }
      },
      { timeoutMs: 30_000, intervalMs: 100 },
    );
    evicted.push(done);
  }
  const total = (await readStatus(ns)).totalGroups ?? 0;
  for (let g = mode.group; g < total; g++) {
    await waitForPhase(ns, to.rolloutRevision, g, 'WaitingForConfirmation', 120_000, to);
    expect(await edctl(ns, 'approve')).toBe(0);
  }
  await waitForPhase(ns, to.rolloutRevision, total, 'Healthy', 120_000, to);
  await waitForPods(
    ns,
    to,
    to.regions.map((r) => ({ name: r.name, updated: r.replicas, old: 0 })),
    `${way} evictions, Healthy`,
  );
  return evicted;
}

/**
 * The status once Healthy counts exactly the desired pods per region, all updated, ready and available: no Failed pod
 * counts as running. With in-place updates, every pod was either swapped or created by this rollout.
 */
async function expectStatusCounts(ns: string, to: RenderedExtendedDeployment, inPlace: boolean): Promise<string> {
  const want = to.regions.map((r) => ({ name: r.name, current: r.replicas, updated: r.replicas, ready: r.replicas, available: r.replicas }));
  const status = await waitFor(
    'status counts settled',
    async () => {
      const s = await readStatus(ns);
      const got = s.regions?.map((r) => ({ name: r.name, current: r.current, updated: r.updated, ready: r.ready, available: r.available }));
      return JSON.stringify(got) === JSON.stringify(want) ? s : undefined;
    },
    { describe: () => readStatus(ns) },
  );
  expect(status.replicas).toBe(to.regions.reduce((sum, r) => sum + r.replicas, 0));
  if (inPlace) expect(status.regions?.map((r) => (r.swappedInPlace ?? 0) + (r.replaced ?? 0))).toEqual(to.regions.map((r) => r.replicas));
  return (status.regions ?? [])
    .map((r) => `${short(r.name)} ${r.current}/${r.desired}${inPlace ? ` (${r.swappedInPlace} swapped, ${r.replaced} replaced)` : ''}`)
    .join(', ');
}

/** Pods evicted under node pressure are still there, Failed and Evicted, untouched since (kwok did not write over them). */
async function expectKeptFailed(ns: string, evicted: readonly Evicted[]): Promise<void> {
  for (const { pod } of evicted) {
    const now = await clients().core.readNamespacedPod({ name: pod.metadata?.name ?? '', namespace: ns });
    expect({ phase: now.status?.phase, reason: now.status?.reason, resourceVersion: now.metadata?.resourceVersion }).toEqual({
      phase: 'Failed',
      reason: 'Evicted',
      resourceVersion: pod.metadata?.resourceVersion,
    });
  }
}

/** Pods evicted through the API are gone. */
async function expectGone(ns: string, evicted: readonly Evicted[]): Promise<void> {
  for (const { pod } of evicted) {
    const code = await clients()
      .core.readNamespacedPod({ name: pod.metadata?.name ?? '', namespace: ns })
      .then(
        () => 200,
        (e: unknown) => errorCode(e),
      );
    expect(code, `${pod.metadata?.name} deleted by its eviction`).toBe(404);
  }
}

const described = (evicted: readonly Evicted[]) => evicted.map((e) => `${e.revision} ${e.pod.metadata?.name} (${short(e.region)})`).join(', ');

describe('evictions in the middle of rollouts: every rollout completes Healthy', () => {
  for (const mode of MODES) {
    test(mode.name, { timeout: 420_000 }, async ({ ns }) => {
      await withRolloutEnv(ns, `evictions ${mode.name}`, async (env) => {
        const inPlace = mode.inPlace === true;
        const [v2, v3] = IMAGES.slice(1).map((image) => env.render({ image, ...mode.options })) as [RenderedExtendedDeployment, RenderedExtendedDeployment];
        await fill(env, { image: IMAGES[0], ...mode.options });

        // v1 → v2, evicted under node pressure: the Failed pods stay, and do not count.
        const pressure = await rollOutEvicting(env, mode, v2, 'node-pressure');
        const kept = await failedPods(ns);
        expect(kept.map((p) => p.metadata?.uid).sort()).toEqual(pressure.map((e) => e.pod.metadata?.uid).sort());
        const countsV2 = await expectStatusCounts(ns, v2, inPlace);
        await expectKeptFailed(ns, pressure);
        console.log(
          `[evictions] ${mode.name}: v1→v2 evicted under node pressure in group ${mode.group}: ${described(pressure)}; Healthy, status ${countsV2}; ${kept.length} Failed pods kept, not counted`,
        );

        // v2 → v3 starts with both Failed pods left over (old for v3), and evicts through the API.
        expect((await failedPods(ns)).length).toBe(2);
        const api = await rollOutEvicting(env, mode, v3, 'api');
        const countsV3 = await expectStatusCounts(ns, v3, inPlace);
        await expectGone(ns, api);
        await expectKeptFailed(ns, pressure);
        console.log(
          `[evictions] ${mode.name}: v2→v3 with ${kept.length} Failed pods left over, evicted through the API in group ${mode.group}: ${described(api)}; Healthy, status ${countsV3}`,
        );
      });
    });
  }
});
