// The agent behind a faulty API. It runs in-process with its kubeconfig pointed at api-proxy.ts, which injects faults
// by a seeded schedule (fault-injector.ts): 500s, 429s with Retry-After, 409s on writes, slow responses, watches cut
// mid-stream and watches answered `410 Gone`. The invariant watcher (invariants.ts) talks to the API server directly.
//
// 1. Random faults (12 windows over 30 s, half of the matching requests hit) while 3-region rollouts follow each
//    other; each must complete. A watch fault's window starts by cutting the open watches, so that the informers
//    open new ones into it.
// 2. Saturation windows, one endpoint failing every request for W ms at a quiet moment (the ExtendedDeployment changes,
//    its workloads come after the window, so hardly any event re-queues it): status writes answered 500, then 429 with
//    Retry-After; pod watches answered 410 Gone after the open one is cut. The requests to the endpoint in the window
//    are counted and bounded by the agent's own policies (backoff-bounds.ts): the work queue's rate limiter for
//    reconciles, or the Retry-After the 429s ask for, plus one per watch event delivered meanwhile (an event queues
//    the key at once; the queue holds one delayed retry per key, so events add no retry chains); the informer restart
//    backoff for watches. A count bound, not a timing threshold: a retry loop without backoff makes hundreds.
// 3. Never double-acting: no pod is deleted twice, a rollout's group never goes back in the status the agent wrote and
//    keeps its start time, no invariant breaks, and every rollout ends Healthy with exactly the desired pods.
//
// FAULT_SEED=<n> repeats a schedule (printed at the start).
import { randomInt } from 'node:crypto';
import { KubeConfig } from '@kubernetes/client-node';
import { expect } from 'vitest';
import type { ExtendedDeploymentStatus } from '../../core/api/extended-deployment.js';
import type { RenderedExtendedDeployment } from '../../core/render.js';
import { startApiProxy } from './api-proxy.js';
import { maxInformerStartsWithin, maxRetriesWithin } from './backoff-bounds.js';
import { endpointOf, FAULT_KINDS, FaultInjector, faultSchedule, RETRY_AFTER_SECONDS, type FaultKind } from './fault-injector.js';
import { sleep, test, waitFor } from './helpers.js';
import { apply, fill, readEd, readStatus, waitForPods, withRolloutEnv, type EdOptions, type RolloutEnv } from './rollout-kit.js';

/** Saturation window length (ms). */
const W = 8_000;
/**
 * How long every Lease request fails: the renew deadline (10 s) less two retry periods with jitter (2 × 2.4 s), so the
 * last renewal before the outage plus the outage stay within the deadline whatever the phase.
 */
const LEASE_OUTAGE_MS = 5_000;
/** The kinds the agent's informers watch (ExtendedDeployments, their workloads and pods; DeployRegions and nodes). */
const WATCHED_KINDS = ['extendeddeployments', 'replicasets', 'deployments', 'pods', 'deployregions', 'nodes'];
const REPLICAS = [3, 2, 2];
/** Version n of the ExtendedDeployment. Odd versions roll scaleSimultaneously, where the agent evicts old pods itself. */
const version = (n: number): EdOptions => ({
  image: `registry.example/web:${n}`,
  replicas: REPLICAS,
  strategy: { batchSize: 1, minReadySeconds: 2, upgradeMode: n % 2 === 1 ? 'scaleSimultaneously' : 'scaleOutPriority' },
});
/** Random-fault phase: its length and number of windows (two of each kind). */
const RANDOM_MS = 30_000;
const RANDOM_WINDOWS = 12;

/** Waits until `to` runs everywhere, alone, and the status says so. */
async function converged(env: RolloutEnv, to: RenderedExtendedDeployment, what: string): Promise<ExtendedDeploymentStatus> {
  await waitForPods(
    env.ns,
    to,
    to.regions.map((r) => ({ name: r.name, updated: r.replicas, old: 0 })),
    what,
    240_000,
  );
  return waitFor(
    `${what}: Healthy`,
    async () => {
      const s = await readStatus(env.ns);
      return s.phase === 'Healthy' && s.revision === to.rolloutRevision ? s : undefined;
    },
    { timeoutMs: 120_000, describe: () => readStatus(env.ns) },
  );
}

test('API faults by seeded schedule: the agent converges, never double-acts, and its retries back off', { timeout: 900_000 }, async ({ ns }) => {
  const seed = process.env.FAULT_SEED ? Number(process.env.FAULT_SEED) : randomInt(2 ** 31);
  console.log(`api-faults: seed ${seed} (FAULT_SEED=${seed} repeats the schedule)`);
  const injector = new FaultInjector(seed);
  const watchEvents: number[] = [];
  const podDeletes = new Map<string, number>();
  const statusWritten: ExtendedDeploymentStatus[] = [];
  const proxy = await startApiProxy(ns, injector.verdict, {
    onWatchEvent: () => watchEvents.push(Date.now()),
    onResponse: ({ request, status }) => {
      if (status < 200 || status >= 300) return;
      const endpoint = endpointOf(request);
      const path = request.path.split('?')[0] ?? '';
      // Old pods are replaced through the Eviction API: a POST to the pod's eviction subresource deletes it.
      if (endpoint === 'POST pods/eviction') {
        const pod = path.replace(/\/eviction$/, '');
        podDeletes.set(pod, (podDeletes.get(pod) ?? 0) + 1);
      }
      if (endpoint === 'PUT extendeddeployments/status')
        statusWritten.push((JSON.parse(request.body.toString()) as { status: ExtendedDeploymentStatus }).status);
    },
  });
  const agentKubeConfig = new KubeConfig();
  agentKubeConfig.loadFromFile(proxy.kubeconfig);
  const report: string[] = [];

  /** Runs `during` with one endpoint failing every request by `kind` for `ms`; returns the requests and watch events in the window. */
  /**
   * Resolves right after the agent's next Lease renewal went through the proxy unfaulted. A Lease outage that starts
   * there bounds the time since the last renewal by the outage plus one retry period (+20 % jitter): 5 + 2.4 s, well
   * inside the 10 s renew deadline. Started at a random moment it could begin up to a retry period after a renewal
   * and end up to one before the next: 9.8 s, which a loaded machine's late timers pushed past the deadline once.
   */
  const renewed = async () => {
    const since = Date.now();
    await waitFor('a Lease renewal', async () => injector.seen.some((r) => r.endpoint === 'PUT leases' && r.at >= since && !r.fault), {
      timeoutMs: 30_000,
      intervalMs: 10,
    });
  };
  const saturate = async (kind: FaultKind, endpoints: string[], during: () => Promise<void>, ms = W) => {
    if (endpoints.some((e) => e.endsWith(' leases'))) await renewed();
    const from = Date.now();
    injector.schedule([{ kind, from: 0, to: ms, probability: 1, endpoints }]);
    await during();
    await sleep(from + ms + 200 - Date.now());
    const requests = Object.fromEntries(endpoints.map((e) => [e, injector.count(e, from, from + ms)]));
    return { requests, total: Object.values(requests).reduce((a, b) => a + b, 0), events: watchEvents.filter((t) => t >= from && t < from + ms).length };
  };

  try {
    await withRolloutEnv(
      ns,
      'api-faults',
      async (env) => {
        await fill(env, version(1));

        // 2c (first: the informers' backoff is fresh; a restart within the last minute would carry its backoff on).
        // The pod watch cut, and every new one answered 410 Gone.
        const gone = await saturate('watchGone', ['LIST pods', 'WATCH pods'], async () => {
          expect(proxy.cutWatches((r) => endpointOf(r) === 'WATCH pods')).toBeGreaterThan(0);
        });
        const goneBound = 2 * (maxInformerStartsWithin(W) + 1);
        report.push(
          `410 Gone on pod watches for ${W} ms: ${JSON.stringify(gone.requests)}; bound ${goneBound} (one LIST and one WATCH per start, the restart right after the cut included)`,
        );

        // 1. Random faults through rollouts that follow each other until the schedule has run out.
        const schedule = faultSchedule(seed, RANDOM_MS, RANDOM_WINDOWS);
        report.push(`schedule: ${schedule.map((w) => `${w.kind} ${(w.from / 1000).toFixed(1)}-${(w.to / 1000).toFixed(1)} s`).join(', ')}`);
        const scheduleEnds = Date.now() + RANDOM_MS;
        const before = new Map(injector.injected);
        injector.schedule(schedule);
        const cuts = schedule.filter((w) => w.kind === 'watchCut' || w.kind === 'watchGone').map((w) => setTimeout(() => proxy.cutWatches(() => true), w.from));
        let v = 1;
        try {
          while (Date.now() < scheduleEnds) {
            const next = env.render(version(++v));
            await apply(next);
            await converged(env, next, `v${v} under random faults`);
          }
        } finally {
          for (const timer of cuts) clearTimeout(timer);
        }
        const injectedSince = (k: FaultKind) => (injector.injected.get(k) ?? 0) - (before.get(k) ?? 0);
        const scheduled = new Map(FAULT_KINDS.map((k) => [k, injectedSince(k)]));
        // A window can fall where the agent sent nothing it applies to (backing off under an earlier window, or waiting
        // out minReadySeconds): every kind that hit nothing gets one more window spanning a whole rollout of its own, so
        // each kind is exercised whatever the timing of this machine.
        injector.clear();
        for (const kind of FAULT_KINDS.filter((k) => injectedSince(k) === 0)) {
          injector.schedule([{ kind, from: 0, to: 60_000, probability: 0.5 }]);
          if (kind === 'watchCut' || kind === 'watchGone') proxy.cutWatches(() => true);
          const next = env.render(version(++v));
          await apply(next);
          await converged(env, next, `v${v} under ${kind}`);
          injector.clear();
        }
        const randomFaults = new Map(FAULT_KINDS.map((k) => [k, injectedSince(k)]));
        report.push(
          `random faults injected over ${v - 1} rollouts: ${FAULT_KINDS.map((k) => `${k} ${randomFaults.get(k)}${randomFaults.get(k) !== scheduled.get(k) ? ` (${scheduled.get(k)} in the schedule, the rest in a rollout of its own)` : ''}`).join(', ')}`,
        );

        // The random phase may end with informers backing off after repeated 410s; a change they do not see would
        // make no status write to fault. Each step below starts once the agent watches every kind it reads again.
        await waitFor(
          'the agent watching every kind again',
          async () => WATCHED_KINDS.every((kind) => proxy.openWatches((r) => endpointOf(r) === `WATCH ${kind}`) > 0),
          { timeoutMs: 120_000, intervalMs: 200 },
        );

        // 2a. Every status write answered 500 while v3 arrives.
        const v3 = env.render(version(++v));
        const errors = await saturate('serverError', ['PUT extendeddeployments/status'], () => apply(v3, 'ed'));
        const errorBound = maxRetriesWithin(W) + errors.events;
        report.push(`500 on status writes for ${W} ms: ${errors.total} writes tried, ${errors.events} watch events; bound ${errorBound}`);
        await apply(v3, 'workloads');
        await converged(env, v3, 'after 500s');

        // 2b. Every status write answered 429, Retry-After 1 s, while v4 arrives.
        const v4 = env.render(version(++v));
        const throttled = await saturate('throttled', ['PUT extendeddeployments/status'], () => apply(v4, 'ed'));
        const throttleBound = 1 + Math.floor(W / (RETRY_AFTER_SECONDS * 1000)) + throttled.events;
        report.push(
          `429 (Retry-After ${RETRY_AFTER_SECONDS} s) on status writes for ${W} ms: ${throttled.total} writes tried, ${throttled.events} watch events; bound ${throttleBound}`,
        );
        await apply(v4, 'workloads');
        await converged(env, v4, 'after 429s');

        // 2d. Every Lease request answered 500 for LEASE_OUTAGE_MS, from right after a renewal: with the retry period
        // (+20 % jitter) after it, still within the renew deadline (10 s). The leader keeps leading, and nothing it does
        // stops meanwhile (v5 arrives and rolls).
        const v5 = env.render(version(++v));
        const leaseErrors = await saturate('serverError', ['GET leases', 'PUT leases'], () => apply(v5), LEASE_OUTAGE_MS);
        report.push(`500 on Lease requests for ${LEASE_OUTAGE_MS} ms (renew deadline 10 s): ${leaseErrors.total} tried; still leader: ${env.agent.isLeader()}`);
        expect(leaseErrors.total).toBeGreaterThan(1);
        expect(env.agent.isLeader()).toBe(true);
        await converged(env, v5, 'after Lease 500s');

        // 2e. The other ways a Lease request fails short of an outage, each for LEASE_OUTAGE_MS: throttled (429, told to
        // wait RETRY_AFTER_SECONDS), refused as written by someone else (409 on the renewal), and slow (each renewal
        // answered 0.3–2 s late: well within a try's 5 s, so every renewal still succeeds; slowing its read as well made a
        // try up to 4 s, and on a loaded machine a try that outlasted its timeout cost the Lease, as it should). The
        // leader keeps leading and rolls on meanwhile.
        for (const [kind, endpoints] of [
          ['throttled', ['GET leases', 'PUT leases']],
          ['conflict', ['PUT leases']],
          ['slow', ['PUT leases']],
        ] as const) {
          const next = env.render(version(++v));
          const faulted = await saturate(kind, [...endpoints], () => apply(next), LEASE_OUTAGE_MS);
          report.push(`${kind} on Lease requests for ${LEASE_OUTAGE_MS} ms: ${faulted.total} tried; still leader: ${env.agent.isLeader()}`);
          expect(faulted.total, `Lease requests while ${kind}`).toBeGreaterThan(0);
          expect(env.agent.isLeader(), `leader after ${kind} Lease requests`).toBe(true);
          await converged(env, next, `after ${kind} Lease requests`);
        }

        injector.clear();

        // The agent still works: one more rollout, no faults.
        const v6 = env.render(version(v + 1));
        await apply(v6);
        const final = await converged(env, v6, 'after every fault');
        expect(final.observedGeneration).toBe((await readEd(ns)).metadata?.generation);
        expect(final.regions?.map((r) => [r.name, r.desired, r.updated, r.available])).toEqual(
          v6.regions.map((r) => [r.name, r.replicas, r.replicas, r.replicas]),
        );

        report.push(`faults injected in all: ${FAULT_KINDS.map((k) => `${k} ${injector.injected.get(k)}`).join(', ')}`);
        report.push(
          `requests through the proxy: ${injector.seen.length} (${Object.entries(injector.totals())
            .map(([e, n]) => `${e} ${n}`)
            .join(', ')})`,
        );
        report.push(`status writes accepted: ${statusWritten.length}; pod evictions accepted: ${[...podDeletes.values()].reduce((a, b) => a + b, 0)}`);
        console.log(`[api-faults] seed ${seed}\n  ${report.join('\n  ')}`);

        for (const kind of FAULT_KINDS) expect(randomFaults.get(kind), `random ${kind} faults`).toBeGreaterThan(0);
        expect(errors.total).toBeGreaterThan(1);
        expect(errors.total).toBeLessThanOrEqual(errorBound);
        expect(throttled.total).toBeGreaterThan(1);
        expect(throttled.total).toBeLessThanOrEqual(throttleBound);
        expect(gone.total).toBeGreaterThan(1);
        expect(gone.total).toBeLessThanOrEqual(goneBound);
        // No pod deleted twice.
        expect(podDeletes.size).toBeGreaterThan(0);
        for (const [pod, n] of podDeletes) expect(n, pod).toBe(1);
        // Within a rollout the group never goes back, and a group keeps the start time it was first written with.
        const started = new Map<string, string>();
        const lastGroup = new Map<string, number>();
        for (const s of statusWritten) {
          if (!s.revision || s.currentGroup === undefined) continue;
          expect(s.currentGroup, `rollout ${s.revision}`).toBeGreaterThanOrEqual(lastGroup.get(s.revision) ?? 0);
          lastGroup.set(s.revision, s.currentGroup);
          // (A finished rollout's status carries no start time.)
          const key = `${s.revision}/${s.currentGroup}`;
          if (s.lastGroupStartTime === undefined) continue;
          if (!started.has(key)) started.set(key, s.lastGroupStartTime);
          expect(s.lastGroupStartTime, key).toBe(started.get(key));
        }
      },
      { agentKubeConfig },
    );
  } finally {
    await proxy.close();
  }
});
