// Issue 5 on the lab: in-place image swaps (updateStrategy InPlaceIfPossible). The renderer puts the InPlaceUpdateReady
// readiness gate on every pod; a Service selects the app's pods, so kube-controller-manager's EndpointSlice controller
// shows which pods receive traffic. A journal (inplace-journal.ts) watches pods and EndpointSlices: pods created or
// removed, UIDs, nodes, images, the agent's swap-state annotation, the gate, and each pod's endpoint readiness.
//
// - image-only change over three regions: no pod created or removed, every pod keeps UID and node, group sizes as
//   `edctl plan` (core's planOf) shows them, frozen at every gate; every pod out of the Service's ready endpoints from
//   before its images changed until its swap was done, ready again after; status and Event count the swaps;
// - image + env in one region: that region replaces its pods, the others swap;
// - a swap to an image that cannot start (the lab crash-loops images marked ":broken"): the group misses its deadline,
//   Degraded, the failed pods keep their gate False, nothing else moves; a Git fix swaps them again and completes;
// - the agent (a child process) killed with SIGKILL while a pod is draining and while a pod is swapping: the next
//   leader finishes those pods (same UID, new image, gate True) and the rollout;
// - a Git revert mid-rollout swaps the pods back in place.
// Every test has its own namespace, DeployRegions and Service; nothing asserts on speed.
import type { V1Pod } from '@kubernetes/client-node';
import { describe, expect } from 'vitest';
import { IN_PLACE_READINESS_GATE, NAME_LABEL, SWAP_STATE_ANNOTATION } from '../../core/labels.js';
import { parseSwapState } from '../../core/inplace/swap-state.js';
import { planOf } from '../../core/plan.js';
import type { RenderedExtendedDeployment } from '../../core/render.js';
import { startFromRender } from '../../core/simulate/from-render.js';
import { simulateRollout, type Simulation } from '../../core/simulate/simulate.js';
import { renderedIdentity } from './agent-identity.js';
import { AgentProcess } from './agent-process.js';
import { startApiProxy, type ProxiedRequest } from './api-proxy.js';
import { clients, serverSideApply, sleep, test, uniqueName, waitFor } from './helpers.js';
import { Journal, type PodRecord } from './inplace-journal.js';
import { start as startWatcher, stopAndReport } from './invariants.js';
import {
  agentMetrics,
  apply,
  counterSum,
  deployRegions,
  ED_NAME,
  edctl,
  completedEvent,
  completedEventOf,
  edEvents,
  extendedDeployment,
  installCrds,
  readStatus,
  render,
  rollThroughGates,
  runningByRevision,
  waitFilled,
  waitForPhase,
  withRolloutEnv,
  type EdOptions,
  type RolloutEnv,
} from './rollout-kit.js';

const V1 = 'registry.example/web:1';
const V2 = 'registry.example/web:2';
const V3 = 'registry.example/web:3';
/** The lab's kwok crash-loops every image whose name contains ":broken" (test/cluster/kwok.yaml, lab-container-crash). */
const BROKEN = 'registry.example/web:broken-2';
const SERVICE = 'web';
/** Two seconds between taking a pod out of endpoints and swapping its images: room for the EndpointSlice controller. */
const IN_PLACE = { updateStrategy: { type: 'InPlaceIfPossible', gracePeriodSeconds: 2 } };

/** A Service selecting the app's pods: its EndpointSlices list them, ready or not. */
async function createService(ns: string): Promise<void> {
  await clients().core.createNamespacedService({
    namespace: ns,
    body: { metadata: { name: SERVICE }, spec: { selector: { app: 'web' }, ports: [{ port: 80, targetPort: 8080 }] } },
  });
}

async function listPods(ns: string): Promise<V1Pod[]> {
  return (await clients().core.listNamespacedPod({ namespace: ns, labelSelector: `${NAME_LABEL}=${ED_NAME}` })).items.filter(
    (p) => !p.metadata?.deletionTimestamp,
  );
}

/** uid → node, image of container app, revision label, swap state, gate, restartCount. */
async function podTable(ns: string) {
  return new Map(
    (await listPods(ns)).map((p) => [
      p.metadata?.uid ?? '',
      {
        name: p.metadata?.name ?? '',
        node: p.spec?.nodeName,
        image: p.spec?.containers.find((c) => c.name === 'app')?.image,
        revision: p.metadata?.labels?.['extendeddeployment.io/revision'],
        swap: parseSwapState(p.metadata?.annotations?.[SWAP_STATE_ANNOTATION]),
        gate: p.status?.conditions?.find((c) => c.type === IN_PLACE_READINESS_GATE)?.status,
        ready: p.status?.conditions?.find((c) => c.type === 'Ready')?.status,
        restarts: p.status?.containerStatuses?.find((c) => c.name === 'app')?.restartCount,
        waiting: p.status?.containerStatuses?.find((c) => c.name === 'app')?.state?.waiting?.reason,
      },
    ]),
  );
}

/** Applies v1 and waits until every region runs it, Healthy, every pod's gate True (approving the creation's gates). */
async function fill(ns: string, v1: RenderedExtendedDeployment): Promise<void> {
  await apply(v1);
  await waitFilled(ns, v1, 'v1 filled');
  await waitFor(
    'v1 Healthy, every pod Ready',
    async () => {
      const s = await readStatus(ns);
      const pods = await podTable(ns);
      return s.phase === 'Healthy' && s.revision === v1.rolloutRevision && [...pods.values()].every((p) => p.gate === 'True' && p.ready === 'True');
    },
    { timeoutMs: 90_000, describe: async () => ({ status: await readStatus(ns), pods: [...(await podTable(ns)).values()] }) },
  );
}

/**
 * The rollout from `from` to `to` as `edctl plan` shows it (core's planOf: the planner on a simulated cluster, with
 * swaps for regions whose templates differ only in images), checked against simulateRollout started from what the
 * pods run now. Returns the simulation (rollThroughGates follows it gate by gate).
 */
async function planned(
  ns: string,
  from: RenderedExtendedDeployment,
  to: RenderedExtendedDeployment,
): Promise<{ sim: Simulation; plan: ReturnType<typeof planOf>['extendedDeployments'][number] }> {
  const plan = planOf([to], [from]).extendedDeployments[0]!;
  const running = await runningByRevision(ns);
  const sim = simulateRollout(
    startFromRender(
      to,
      (name) => {
        const pods = running[name] ?? {};
        return { replicas: Object.values(pods).reduce((a, b) => a + b, 0), running: pods };
      },
      from,
    ),
  );
  expect(plan.groups).toEqual(sim.groups);
  return { sim, plan };
}

const summary = (sim: Simulation) =>
  sim.groups.map((g) => `group ${g.group}: ${g.regions.map((r) => `${r.name.split('-')[0]} ${r.updated}/${r.updated + r.old}`).join(', ')}`).join(' | ');

/** Every pod's swap toward its region's revision in `to` as the Service saw it; prints how long each was out of endpoints. */
function expectEndpoints(journal: Journal, uids: readonly string[], to: RenderedExtendedDeployment, label: string): void {
  const revisionOf = (uid: string) => to.regions.find((r) => r.name === journal.pods.get(uid)?.region)?.revision ?? '';
  const problems = uids.flatMap((uid) => journal.endpointProblems(uid, revisionOf(uid)));
  const out = uids.map((uid) => journal.outOfEndpointsMs(uid, revisionOf(uid))).filter((ms): ms is number => ms !== undefined);
  console.log(`[inplace] ${label}: ${uids.length} pods swapped, each out of the Service's ready endpoints for ${Math.min(...out)}–${Math.max(...out)} ms`);
  expect(problems).toEqual([]);
}

const uidsOf = (records: readonly PodRecord[]) => records.map((r) => r.uid).sort();

/** Runs `body` with the rollout environment, a Service and a started journal. */
async function withInPlaceEnv(ns: string, label: string, body: (env: RolloutEnv, journal: Journal) => Promise<void>): Promise<void> {
  await withRolloutEnv(ns, label, async (env) => {
    await createService(ns);
    const journal = new Journal(ns, ED_NAME, SERVICE);
    await journal.start();
    try {
      await body(env, journal);
    } finally {
      journal.stop();
    }
  });
}

describe('in-place swaps (InPlaceIfPossible)', () => {
  test('an image-only change over three regions swaps every pod in place: no pod created or removed, UIDs and nodes kept, groups as planned, each pod out of the Service while swapped', async ({
    ns,
  }) => {
    await withInPlaceEnv(ns, 'inplace-image-only', async (env, journal) => {
      const replicas = [4, 2, 3];
      const strategy = { batchSize: 2, needWaitingForConfirm: true, ...IN_PLACE };
      const v1 = env.render({ image: V1, replicas, strategy });
      // The renderer gives every pod the readiness gate the agent drives.
      for (const r of v1.regions)
        expect((r.workload['spec'] as { template: { spec: { readinessGates?: unknown } } }).template.spec.readinessGates).toEqual([
          { conditionType: IN_PLACE_READINESS_GATE },
        ]);
      await fill(ns, v1);
      const before = await podTable(ns);

      const v2 = env.render({ image: V2, replicas, strategy });
      const { sim, plan } = await planned(ns, v1, v2);
      expect(plan.regions.map((r) => r.update)).toEqual(['in-place', 'in-place', 'in-place']);
      expect([plan.swapped, plan.created]).toEqual([9, 0]);
      expect(sim.totalGroups).toBeGreaterThanOrEqual(3);
      console.log(`[inplace] plan: ${sim.totalGroups} groups, ${summary(sim)}; ${plan.swapped} swapped, ${plan.created} created`);

      const changed = Date.now();
      await apply(v2);
      // Each gate freezes the rollout at a group boundary: status group and pods per region exactly as planned.
      const observed = await rollThroughGates(ns, v2, sim, 1, env.watch);
      expect(observed.map((g) => g.regions)).toEqual(sim.groups.map((g) => g.regions.map((r) => ({ name: r.name, updated: r.updated, old: r.old }))));
      await waitFor('every gate True and every pod Ready', async () =>
        [...(await podTable(ns)).values()].every((p) => p.gate === 'True' && p.ready === 'True'),
      );

      // No pod was created or removed; every pod kept its UID and node, runs V2 and restarted its container once.
      expect(journal.createdSince(changed).map((p) => p.name)).toEqual([]);
      expect(journal.removedSince(changed).map((p) => p.name)).toEqual([]);
      const after = await podTable(ns);
      expect([...after.keys()].sort()).toEqual([...before.keys()].sort());
      for (const [uid, pod] of after) {
        const was = before.get(uid)!;
        expect({ node: pod.node, image: pod.image, swap: pod.swap?.phase, restarts: pod.restarts }).toEqual({
          node: was.node,
          image: V2,
          swap: 'done',
          restarts: (was.restarts ?? 0) + 1,
        });
      }
      // The Service never sent traffic to a pod while its images changed.
      expectEndpoints(journal, [...after.keys()], v2, 'image-only');

      const status = await readStatus(ns);
      expect(status.regions?.map((r) => [r.name, r.swappedInPlace, r.replaced])).toEqual(v2.regions.map((r) => [r.name, r.replicas, 0]));
      // (the fill is a rollout too: its creation completed first)
      const completed = await completedEventOf(ns, v2.rolloutRevision);
      expect(completed?.message).toBe(`rollout ${v2.rolloutRevision} completed (9 swapped in place, 0 replaced)`);
    });
  });

  test('image plus env in one region (a region override): that region replaces its pods, the others swap in place', async ({ ns }) => {
    await withInPlaceEnv(ns, 'inplace-mixed', async (env, journal) => {
      const replicas = [3, 2, 3];
      const strategy = { batchSize: 1, needWaitingForConfirm: true, ...IN_PLACE };
      const v1 = env.render({ image: V1, replicas, strategy });
      await fill(ns, v1);
      const before = await podTable(ns);
      const regionOf = (uid: string) => journal.pods.get(uid)?.region ?? '';
      const [a, b, c] = v1.regions.map((r) => r.name) as [string, string, string];

      const v2 = env.render({ image: V2, replicas, strategy, overrides: { a: { env: { app: { FEATURE: 'on' } } } } });
      const { sim, plan } = await planned(ns, v1, v2);
      expect(plan.regions.map((r) => r.update)).toEqual(['replace', 'in-place', 'in-place']);
      expect([plan.swapped, plan.created]).toEqual([5, 3]);
      console.log(`[inplace] plan: ${sim.totalGroups} groups, ${summary(sim)}; region a ${plan.regions[0]?.updateReason}`);

      const changed = Date.now();
      await apply(v2);
      await rollThroughGates(ns, v2, sim, 1, env.watch);
      await waitFor('every gate True and every pod Ready', async () =>
        [...(await podTable(ns)).values()].every((p) => p.gate === 'True' && p.ready === 'True'),
      );
      const after = await podTable(ns);

      // Region a: every old pod removed, three new ones created (new UIDs) with the env; b and c: the same pods, swapped.
      const created = journal.createdSince(changed);
      const removed = journal.removedSince(changed);
      expect(new Set(created.map((p) => p.region))).toEqual(new Set([a]));
      expect(created).toHaveLength(3);
      expect(uidsOf(removed)).toEqual([...before.keys()].filter((uid) => regionOf(uid) === a).sort());
      for (const region of [b, c]) {
        const kept = [...before.keys()].filter((uid) => regionOf(uid) === region).sort();
        expect([...after.keys()].filter((uid) => regionOf(uid) === region).sort()).toEqual(kept);
        for (const uid of kept) expect([after.get(uid)?.node, after.get(uid)?.image, after.get(uid)?.swap?.phase]).toEqual([before.get(uid)?.node, V2, 'done']);
      }
      const newInA = [...after.entries()].filter(([uid]) => regionOf(uid) === a);
      expect(newInA.map(([uid]) => before.has(uid))).toEqual([false, false, false]);
      for (const [, pod] of newInA) expect([pod.image, pod.swap]).toEqual([V2, undefined]);
      const envOfA = (await listPods(ns)).filter((p) => regionOf(p.metadata?.uid ?? '') === a).map((p) => p.spec?.containers[0]?.env);
      expect(envOfA).toEqual([[{ name: 'FEATURE', value: 'on' }], [{ name: 'FEATURE', value: 'on' }], [{ name: 'FEATURE', value: 'on' }]]);
      expectEndpoints(
        journal,
        [...after.keys()].filter((uid) => regionOf(uid) !== a),
        v2,
        'mixed',
      );

      const status = await readStatus(ns);
      expect(status.regions?.map((r) => [r.swappedInPlace, r.replaced])).toEqual([
        [0, 3],
        [2, 0],
        [3, 0],
      ]);
      expect((await completedEventOf(ns, v2.rolloutRevision))?.message).toBe(`rollout ${v2.rolloutRevision} completed (5 swapped in place, 3 replaced)`);
    });
  });

  test('a swap to an image that cannot start: the group misses its deadline, Degraded, the failed pods stay out (gate False), nothing else moves; a Git fix swaps them again', async ({
    ns,
  }) => {
    await withInPlaceEnv(ns, 'inplace-broken', async (env, journal) => {
      const replicas = [3, 2, 3];
      const strategy = { batchSize: 1, syncWaitTimeout: 15, ...IN_PLACE };
      const v1 = env.render({ image: V1, replicas, strategy });
      await fill(ns, v1);
      const before = await podTable(ns);

      const broken = env.render({ image: BROKEN, replicas, strategy });
      const changed = Date.now();
      await apply(broken);
      const degraded = await waitForPhase(ns, broken.rolloutRevision, 1, 'Degraded', 120_000, broken);
      expect(degraded.conditions?.find((c) => c.type === 'Progressing')?.reason).toBe('ProgressDeadlineExceeded');
      await waitFor('Warning Event ProgressDeadlineExceeded', async () =>
        (await edEvents(ns)).some((e) => e.type === 'Warning' && e.reason === 'ProgressDeadlineExceeded'),
      );

      // Group 1 swapped one pod per region; each crash-loops on the broken image, its gate closed, out of the Service.
      const snapshot = async () => {
        const pods = await podTable(ns);
        const rs = (await clients().apps.listNamespacedReplicaSet({ namespace: ns, labelSelector: `${NAME_LABEL}=${ED_NAME}` })).items;
        return {
          pods: [...pods.entries()]
            .map(([uid, p]) => ({
              uid,
              image: p.image,
              revision: p.revision,
              swap: p.swap && `${p.swap.phase}/${p.swap.revision}`,
              gate: p.gate,
              ready: p.ready,
              waiting: p.waiting,
            }))
            .sort((x, y) => (x.uid < y.uid ? -1 : 1)),
          replicas: rs.map((r) => r.spec?.replicas),
          actions: counterSum(await agentMetrics(env.agent), 'extendeddeployment_agent_actions_total'),
        };
      };
      const held = await snapshot();
      const failed = held.pods.filter((p) => p.image === BROKEN);
      expect(failed.map((p) => journal.pods.get(p.uid)?.region).sort()).toEqual(broken.regions.map((r) => r.name).sort());
      for (const p of failed)
        expect(p).toMatchObject({
          swap: `swapping/${broken.regions.find((r) => r.name === journal.pods.get(p.uid)?.region)?.revision}`,
          gate: 'False',
          ready: 'False',
          waiting: 'CrashLoopBackOff',
        });
      for (const p of held.pods.filter((x) => x.image !== BROKEN))
        expect([p.image, p.revision, p.swap, p.gate]).toEqual([V1, before.get(p.uid)?.revision, undefined, 'True']);
      for (const p of failed) expect(journal.endpointAt(p.uid, Date.now())).toBe('notReady');

      // Over more than another deadline nothing happens: no swap starts, no write, no pod created or removed.
      await sleep(20_000);
      expect(await snapshot()).toEqual(held);
      expect(journal.createdSince(changed)).toEqual([]);
      expect(journal.removedSince(changed)).toEqual([]);
      expect(await readStatus(ns)).toMatchObject({ phase: 'Degraded', currentGroup: 1 });
      console.log(
        `[inplace] broken image: Degraded in group 1 with ${failed.length} pods crash-looping behind a closed gate; 20 s later nothing changed (${held.actions} agent actions)`,
      );

      // Git fixes the image: the failed pods are swapped again (first, they cost no availability), then the rest.
      const fixed = env.render({ image: V3, replicas, strategy });
      await apply(fixed);
      await waitForPhase(ns, fixed.rolloutRevision, 3, 'Healthy', 180_000, fixed);
      await waitFor('every gate True and every pod Ready', async () =>
        [...(await podTable(ns)).values()].every((p) => p.gate === 'True' && p.ready === 'True'),
      );
      const after = await podTable(ns);
      expect([...after.keys()].sort()).toEqual([...before.keys()].sort());
      for (const p of after.values()) expect([p.image, p.swap?.phase, p.waiting]).toEqual([V3, 'done', undefined]);
      expect(journal.createdSince(changed)).toEqual([]);
      expect(journal.removedSince(changed)).toEqual([]);
      expect((await completedEventOf(ns, fixed.rolloutRevision))?.message).toBe(`rollout ${fixed.rolloutRevision} completed (8 swapped in place, 0 replaced)`);
    });
  });

  test('a Git revert in the middle of a rollout swaps the pods back in place', async ({ ns }) => {
    await withInPlaceEnv(ns, 'inplace-revert', async (env, journal) => {
      const replicas = [3, 2, 3];
      const strategy = { batchSize: 1, needWaitingForConfirm: true, ...IN_PLACE };
      const v1 = env.render({ image: V1, replicas, strategy });
      await fill(ns, v1);
      const before = await podTable(ns);
      const v2 = env.render({ image: V2, replicas, strategy });
      const changed = Date.now();
      await apply(v2);
      await waitForPhase(ns, v2.rolloutRevision, 1, 'WaitingForConfirmation', 180_000, v2);
      expect(await edctl(ns, 'approve')).toBe(0);
      await waitForPhase(ns, v2.rolloutRevision, 2, 'WaitingForConfirmation', 180_000, v2);
      const mid = await podTable(ns);
      const onV2 = [...mid.entries()]
        .filter(([, p]) => p.image === V2)
        .map(([uid]) => uid)
        .sort();
      expect(onV2).toHaveLength(2 + 2 + 2);

      // The revert: Git holds v1 again. Its pods never left v1; the v2 pods are swapped back, gate by gate.
      const { sim } = await planned(ns, v2, v1);
      console.log(`[inplace] revert plan from the pods: ${summary(sim)}`);
      await apply(v1);
      await rollThroughGates(ns, v1, sim, 1, env.watch);
      await waitFor('every gate True and every pod Ready', async () =>
        [...(await podTable(ns)).values()].every((p) => p.gate === 'True' && p.ready === 'True'),
      );
      const after = await podTable(ns);
      expect([...after.keys()].sort()).toEqual([...before.keys()].sort());
      for (const [uid, p] of after) expect([p.node, p.image, p.revision]).toEqual([before.get(uid)?.node, V1, before.get(uid)?.revision]);
      expect(journal.createdSince(changed)).toEqual([]);
      expect(journal.removedSince(changed)).toEqual([]);
      expectEndpoints(journal, onV2, v1, 'revert');
      const status = await readStatus(ns);
      expect(status.regions?.map((r) => r.swappedInPlace)).toEqual([2, 2, 2]);
      expect(
        (await edEvents(ns, { until: completedEvent(v1.rolloutRevision) })).filter((e) => e.reason === 'RolloutCompleted').map((e) => e.message),
      ).toContain(`rollout ${v1.rolloutRevision} completed (6 swapped in place, 0 replaced)`);
    });
  });

  test('edctl pause while a pod drains: the pod is released back into the Service at its old image, nothing is swapped while paused; resume finishes', async ({
    ns,
  }) => {
    await withInPlaceEnv(ns, 'inplace-pause', async (env, journal) => {
      const replicas = [3, 2, 3];
      const strategy = { batchSize: 1, minReadySeconds: 1, updateStrategy: { type: 'InPlaceIfPossible', gracePeriodSeconds: 5 } };
      const v1 = env.render({ image: V1, replicas, strategy });
      await fill(ns, v1);
      const before = await podTable(ns);
      const v2 = env.render({ image: V2, replicas, strategy });
      const changed = Date.now();
      await apply(v2);
      const [uid, draining] = await waitFor(
        'a pod draining with its gate closed',
        async () => [...(await podTable(ns)).entries()].find(([, p]) => p.swap?.phase === 'draining' && p.gate === 'False'),
        { timeoutMs: 120_000, intervalMs: 50 },
      );
      expect(await edctl(ns, 'pause')).toBe(0);
      await waitForPhase(ns, v2.rolloutRevision, 1, 'Paused', 60_000, v2);
      // Released: back in the Service, old image, swap state done (it will be swapped again after the resume); every
      // other swap under way finished; then nothing moves while paused.
      await waitFor(
        'every pod Ready with its gate True while paused',
        async () => [...(await podTable(ns)).values()].every((p) => p.gate === 'True' && p.ready === 'True'),
        {
          describe: async () => [...(await podTable(ns)).values()],
        },
      );
      const released = (await podTable(ns)).get(uid);
      expect([released?.image, released?.swap?.phase, released?.revision]).toEqual([V1, 'done', before.get(uid)?.revision]);
      // The EndpointSlice controller follows the pod's Ready condition a moment later (the journal watches its slices).
      await waitFor('the released pod ready in the Service again', async () => journal.endpointAt(uid, Date.now()) === 'ready', {
        timeoutMs: 30_000,
        describe: async () => journal.endpointAt(uid, Date.now()),
      });
      const paused = await podTable(ns);
      await sleep(8_000);
      const later = await podTable(ns);
      expect([...later.entries()].map(([u, p]) => [u, p.image, p.swap?.phase, p.gate])).toEqual(
        [...paused.entries()].map(([u, p]) => [u, p.image, p.swap?.phase, p.gate]),
      );
      expect((await readStatus(ns)).phase).toBe('Paused');
      console.log(
        `[inplace] paused while ${draining.name} drained: released at ${released?.image}, ${[...paused.values()].filter((p) => p.image === V2).length} pods at V2 held for 8 s`,
      );

      expect(await edctl(ns, 'resume')).toBe(0);
      await waitForPhase(ns, v2.rolloutRevision, 3, 'Healthy', 180_000, v2);
      await waitFor('every gate True and every pod Ready', async () =>
        [...(await podTable(ns)).values()].every((p) => p.gate === 'True' && p.ready === 'True'),
      );
      const after = await podTable(ns);
      expect([...after.keys()].sort()).toEqual([...before.keys()].sort());
      for (const p of after.values()) expect([p.image, p.swap?.phase]).toEqual([V2, 'done']);
      expect(journal.createdSince(changed)).toEqual([]);
      expect(journal.removedSince(changed)).toEqual([]);
    });
  });

  test(
    'the agent killed (SIGKILL) mid-swap, right after a swap began (gate still open) and while a pod is swapping: the next leader finishes those pods and the rollout',
    { timeout: 420_000 },
    async ({ ns }) => {
      await installCrds();
      const suffix = uniqueName('k').slice(2);
      const regions = deployRegions(suffix);
      for (const region of regions) await serverSideApply(region);
      const watch = await startWatcher({ kubeConfig: clients().kc, namespace: ns, name: ED_NAME });
      await createService(ns);
      const journal = new Journal(ns, ED_NAME, SERVICE);
      await journal.start();
      const renderAt = (o: EdOptions) => render([...regions, extendedDeployment(ns, suffix, o)]);
      const replicas = [3, 2, 3];
      const strategy = { batchSize: 1, ...IN_PLACE, updateStrategy: { type: 'InPlaceIfPossible', gracePeriodSeconds: 3 } };

      // Kill 1 is armed through the API proxy: the agent's first swapBegin patch goes through, its next pod writes
      // (closing the gate among them) are dropped and the agent killed: a pod is left draining with its gate still open.
      let armed = false;
      let agent: AgentProcess | undefined;
      const kills: { agent: string; pod: string; uid: string; phase: string; gate: string | undefined; at: number }[] = [];
      let begun: { pod: string } | undefined;
      // A swapBegin counts once the API server accepted it (a 409 on a pod the kubelet just updated is retried).
      const beginning = new Map<ProxiedRequest, string>();
      const proxy = await startApiProxy(
        ns,
        (r) => {
          if (!armed || r.method !== 'PATCH' || !agent?.alive()) return 'forward';
          const path = r.path.split('?')[0] ?? '';
          const pod = /\/pods\/([^/]+)(\/status)?$/.exec(path);
          if (!pod) return 'forward';
          if (!begun && !pod[2] && r.body.toString().includes('draining')) {
            beginning.set(r, pod[1]!);
            return 'forward';
          }
          // Every pod write after it is dropped until the process is gone: the agent writes several pods at once, and
          // one sent between SIGKILL and the process's end (the gate's close) would otherwise go through.
          if (begun) {
            agent.killHard();
            return 'drop';
          }
          return 'forward';
        },
        {
          onResponse: ({ request, status }) => {
            const pod = beginning.get(request);
            if (pod !== undefined && status < 300) begun ??= { pod };
          },
        },
      );
      // The agents run as the rendered install's ServiceAccount, under its RBAC and admission policies (through the
      // proxy, which forwards the Impersonate-User header).
      const account = await renderedIdentity(ns, suffix);
      const kubeconfig = account.kubeconfigFile(proxy.kubeconfig);
      let n = 0;
      const startAgentProcess = () => {
        n += 1;
        agent = new AgentProcess({
          kubeconfig,
          identity: `inplace-${n}`,
          namespace: ns,
          leaseNamespace: ns,
          leaseDurationSeconds: 4,
          echo: !!process.env.AGENT_ECHO,
        });
        return agent;
      };
      try {
        const v1 = renderAt({ image: V1, replicas, strategy });
        await startAgentProcess().waitForLog('became leader', 120_000);
        await fill(ns, v1);
        const before = await podTable(ns);
        const v2 = renderAt({ image: V2, replicas, strategy });
        const changed = Date.now();
        armed = true;
        await apply(v2);

        // Kill 1: as soon as the swapBegin went through.
        const first = agent!;
        await first.exited;
        armed = false;
        const [k1uid, k1] = [...(await podTable(ns)).entries()].find(([, p]) => p.name === begun?.pod) ?? ['', undefined];
        kills.push({ agent: first.identity, pod: begun?.pod ?? '', uid: k1uid, phase: k1?.swap?.phase ?? '-', gate: k1?.gate, at: Date.now() });
        expect([k1?.swap?.phase, k1?.gate]).toEqual(['draining', 'True']);

        // Kill 2: the next leader runs until a pod is swapping (images patched, not done), polled on the annotation.
        const second = startAgentProcess();
        await second.waitForLog('became leader', 120_000);
        const swapping = await waitFor(
          'a pod in state swapping',
          async () => [...(await podTable(ns)).entries()].find(([, p]) => p.swap?.phase === 'swapping' && p.image === V2),
          { timeoutMs: 120_000, intervalMs: 50 },
        );
        second.killHard();
        await second.exited;
        const k2 = (await podTable(ns)).get(swapping[0]);
        kills.push({ agent: second.identity, pod: swapping[1].name, uid: swapping[0], phase: k2?.swap?.phase ?? '-', gate: k2?.gate, at: Date.now() });

        // A third agent takes over after the Lease expires and finishes everything.
        const third = startAgentProcess();
        await third.waitForLog('became leader', 120_000);
        await waitForPhase(ns, v2.rolloutRevision, 3, 'Healthy', 240_000, v2);
        await waitFor('every gate True and every pod Ready', async () =>
          [...(await podTable(ns)).values()].every((p) => p.gate === 'True' && p.ready === 'True'),
        );
        const after = await podTable(ns);
        for (const k of kills) {
          const pod = after.get(k.uid);
          expect({
            pod: k.pod,
            image: pod?.image,
            swap: pod?.swap?.phase,
            gate: pod?.gate,
            ready: pod?.ready,
            node: pod?.node,
            restarts: pod?.restarts,
          }).toEqual({
            pod: k.pod,
            image: V2,
            swap: 'done',
            gate: 'True',
            ready: 'True',
            node: before.get(k.uid)?.node,
            restarts: (before.get(k.uid)?.restarts ?? 0) + 1,
          });
        }
        expect([...after.keys()].sort()).toEqual([...before.keys()].sort());
        for (const p of after.values()) expect([p.image, p.swap?.phase]).toEqual([V2, 'done']);
        expect(journal.createdSince(changed)).toEqual([]);
        expect(journal.removedSince(changed)).toEqual([]);
        // The pod whose swap began under the killed agent was in endpoints until the next leader closed its gate, and out
        // for the whole grace period from then on: its images changed only once it was out.
        expectEndpoints(journal, [...after.keys()], v2, 'agent killed mid-swap');
        const status = await readStatus(ns);
        expect(status.regions?.map((r) => [r.swappedInPlace, r.replaced])).toEqual(v2.regions.map((r) => [r.replicas, 0]));
        console.log(
          [
            `[inplace] agent killed mid-swap: ${n} agent processes, lease 4 s`,
            ...kills.map((k) => `  ${k.agent} killed with ${k.pod} ${k.phase} (gate ${k.gate}); ${k.pod} finished by a later leader`),
          ].join('\n'),
        );
      } finally {
        armed = false;
        await agent?.stop();
        journal.stop();
        const violations = await stopAndReport(watch, 'inplace-kill');
        await proxy.close();
        await account.remove();
        for (const region of regions)
          await clients()
            .objects.delete(region)
            .catch(() => undefined);
        expect(violations).toEqual([]);
      }
    },
  );
});
