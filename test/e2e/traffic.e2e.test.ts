// Traffic shifting and analysis gates (#22) on the traffic lab: Traefik routing the agent's HTTPRoute through the real
// Services and EndpointSlices to the pod runner's pods, Prometheus scraping the pod runner. The agent runs as the
// rendered install with AgentInstall's `traffic` on. Weights follow the groups to within one pick (2,000 requests at
// each gate; Traefik's weighted round robin: roundRobinCounts) with no 5xx over the whole rollout; without requests an
// analysis has no data and its barrier waits; a canary whose pods answer 500 fails its analysis and holds the rollout
// (Hold: its weight stays; ShiftBack: its weight goes to 0). With Prometheus stopped, an analysis errs past its
// errorLimit and holds the rollout Paused (AnalysisInconclusive) until Prometheus is back and `edctl resume` runs it
// again. The agent killed (SIGKILL) between its route write and the status write recording that step applied writes no
// step twice and skips none once restarted (the compiled agent as a child process, its writes recorded by a proxy:
// write-recorder.ts). A Git edit of the route template alone reaches the route in one write, without a rollout.
//
//   CI=true LAB_DIR=/tmp/lab-traffic npx vitest run --config vitest.e2e.config.ts test/e2e/traffic.e2e.test.ts
//
// The first run builds Traefik (minutes; see test/cluster/README.md). Figures are printed, never asserted.
import { KubeConfig, Watch } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ExtendedDeploymentStatus } from '../../core/api/extended-deployment.js';
import { up } from '../cluster/lab.js';
import { gatewayParentRef } from '../cluster/traefik.js';
import { prometheusUrl, restartLabPrometheus, startTrafficLab, stopLabPrometheus, stopTrafficLab, webUrl, type TrafficState } from '../cluster/traffic.js';
import { renderedIdentity } from './agent-identity.js';
import { AgentProcess } from './agent-process.js';
import { auditEvents, isWrite, type AuditEvent } from './audit-log.js';
import { gatewayClient, roundRobinCounts, type GatewayClient } from './gateway-client.js';
import { clients, createNamespace, deleteNamespace, serverSideApply, sleep, uniqueName, waitFor } from './helpers.js';
import { start as startWatcher, stopAndReport } from './invariants.js';
import {
  ED_NAME,
  apply,
  approveIfWaiting,
  deployRegions,
  edEvents,
  edctl,
  extendedDeployment,
  installCrds,
  podCounts,
  readEd,
  readStatus,
  render,
  withRolloutEnv,
  type EdOptions,
  type RolloutEnv,
} from './rollout-kit.js';
import { recordWrites, type RecordedWrite, type WriteRecorder } from './write-recorder.js';

const log = (s: string) => console.error(s);
/** A cold Traefik build on 2 busy cores took 18.5 min (../shared/reference/fleet-and-traffic.md §6.4). */
const SETUP_TIMEOUT_MS = 60 * 60_000;

let lab: TrafficState;

beforeAll(async () => {
  // The e2e global setup starts (or reuses) a lab without a network namespace; this suite needs one.
  await up(log, { netNamespace: true });
  lab = await startTrafficLab(log);
}, SETUP_TIMEOUT_MS);

afterAll(async () => {
  await stopTrafficLab(log);
}, 120_000);

/** The ExtendedDeployment of a test: 4 pods in region a, groups of 2 behind confirmations, mode Weighted for `host`. */
function options(host: string, image: string, traffic: Record<string, unknown> = {}, strategy: Record<string, unknown> = {}): EdOptions {
  return {
    image,
    replicas: [4],
    container: { ports: [{ name: 'http', containerPort: 8080 }] },
    // Pods answer until their grace period ends, as an application finishing its requests after SIGTERM (the lab's kwok
    // keeps them running that long: test/cluster/kwok.yaml), while their endpoints are already out of the gateway.
    pod: { labels: { 'lab.extendeddeployment.io/graceful': 'true' }, spec: { terminationGracePeriodSeconds: 5 } },
    strategy: {
      batchSize: 2,
      traffic: {
        mode: 'Weighted',
        service: { port: 80, targetPort: 'http' },
        route: { parentRefs: [gatewayParentRef()], hostnames: [host] },
        drainSeconds: 2,
        ...traffic,
      },
      ...strategy,
    },
  };
}

/** The revision → weight (of 10,000) the status records, once the route carrying them is accepted. */
async function appliedWeights(ns: string, group: number): Promise<Record<string, number>> {
  const status = await waitFor(
    `the weights of group ${group} accepted`,
    async () => {
      const s = await readStatus(ns);
      const step = s.traffic?.revision === s.revision && s.traffic?.group === group && s.currentGroup === group;
      return step && s.traffic?.appliedGeneration !== undefined ? s : undefined;
    },
    { describe: () => readStatus(ns) },
  );
  return Object.fromEntries((status.traffic?.weights ?? []).map((w) => [w.revision, w.weight]));
}

/** Counts of `n` answers by revision (`revision code`): each weight's exact share of `n` (Traefik gives it to within one pick). */
function expectedCounts(weights: Record<string, number>, n: number): Record<string, number> {
  return Object.fromEntries(
    Object.entries(weights)
      .filter(([, w]) => w > 0)
      .map(([revision, w]) => [`${revision} 200`, (n * w) / 10_000]),
  );
}

/**
 * Requests all along, until stopped: every answer counted by `revision code`. `quiet` pauses them while `measure` runs
 * (the gateway's round robin is shared by every client: a measurement beside other requests is not exact), once the
 * gateway has had the moment it takes to act on a route its status already shows accepted (148-725 ms in the lab).
 */
function background(client: GatewayClient) {
  let on = true;
  let paused: Promise<void> | undefined;
  const done = (async () => {
    while (on) {
      if (paused) await paused;
      await client.send(20, 2).catch(() => undefined);
      await sleep(50);
    }
  })();
  return {
    quiet: async <T>(measure: () => Promise<T>): Promise<T> => {
      let resume = () => {};
      paused = new Promise((r) => (resume = r));
      try {
        await sleep(2_000);
        return await measure();
      } finally {
        paused = undefined;
        resume();
      }
    },
    stop: async () => {
      on = false;
      await done;
    },
  };
}

/**
 * Runs `body` in a namespace of its own with a gateway client for its host, and the agent with the traffic role (with
 * `recorder`, through a proxy that records its writes).
 */
async function withTraffic(
  label: string,
  body: (env: RolloutEnv, client: GatewayClient, host: string) => Promise<void>,
  recorder?: WriteRecorder,
): Promise<void> {
  const ns = await createNamespace(label);
  const host = `${ns}.traffic.lab`;
  const client = gatewayClient(webUrl(lab), host);
  try {
    let agentKubeConfig: KubeConfig | undefined;
    if (recorder) {
      agentKubeConfig = new KubeConfig();
      agentKubeConfig.loadFromFile(recorder.kubeconfig);
    }
    await withRolloutEnv(ns, label, (env) => body(env, client, host), { traffic: true, ...(agentKubeConfig && { agentKubeConfig }) });
  } finally {
    client.close();
    await deleteNamespace(ns);
  }
}

describe('traffic shifting (mode Weighted)', () => {
  it('follows the groups: counts within one pick of the weights over 2,000 requests at every gate, and not one 5xx over the whole rollout', async () => {
    await withTraffic('traffic-weights', async (env, client, host) => {
      const gated = { needWaitingForConfirm: true };
      const v1 = env.render(options(host, 'registry.example/web:v1', { steps: [10, 50] }, gated));
      await apply(v1);
      await waitFor('v1 Healthy, its route accepted', async () => {
        if ((await readStatus(env.ns)).phase === 'WaitingForConfirmation') expect(await edctl(env.ns, 'approve')).toBe(0);
        const s = await readStatus(env.ns);
        return s.phase === 'Healthy' && s.traffic?.appliedGeneration !== undefined;
      });
      const [revision1] = v1.regions.map((r) => r.revision);
      expect(await client.send(200)).toEqual({ [`${revision1} 200`]: 200 });

      const traffic = background(client);
      const before = new Map(client.sent);
      const v2 = env.render(options(host, 'registry.example/web:v2', { steps: [10, 50] }, gated));
      await apply(v2);
      const gates: string[] = [];
      let status: ExtendedDeploymentStatus;
      for (let group = 1; ; group++) {
        // The group's gate (it waits for an approval, or the rollout is done), with the weights it holds there applied:
        // before the last group those are the drained ones, not the group's step. v2's: until the agent takes the new
        // generation up (it may hold a short wait for the workloads back), the status still reads v1 Healthy.
        status = await waitFor(`group ${group} at its gate`, async () => {
          const s = await readStatus(env.ns);
          return s.revision === v2.rolloutRevision && (s.phase === 'WaitingForConfirmation' || s.phase === 'Healthy') ? s : undefined;
        });
        const weights = await appliedWeights(env.ns, group);
        const counts = await traffic.quiet(() => client.send(2000));
        gates.push(`group ${group}: weights ${JSON.stringify(weights)} → ${JSON.stringify(counts)}`);
        const exact = expectedCounts(weights, 2000);
        expect(roundRobinCounts(counts, exact), `group ${group}`).toEqual(exact);
        if (group === 1) expect(weights[v2.regions[0]!.revision], 'the first step').toBe(1000);
        if (status.phase !== 'WaitingForConfirmation') break;
        expect(await edctl(env.ns, 'approve')).toBe(0);
        await waitFor(
          `group ${group + 1} starts`,
          async () => ((await readStatus(env.ns)).currentGroup ?? 0) > group || (await readStatus(env.ns)).phase === 'Healthy',
        );
      }
      await waitFor(
        'v2 Healthy',
        async () => {
          const s = await readStatus(env.ns);
          return s.revision === v2.rolloutRevision && s.phase === 'Healthy';
        },
        { describe: () => readStatus(env.ns) },
      );
      expect(await client.send(200)).toEqual({ [`${v2.regions[0]!.revision} 200`]: 200 });
      await traffic.stop();
      const errors = [...client.sent].filter(([key, n]) => !key.endsWith(' 200') && n > (before.get(key) ?? 0));
      for (const line of gates) console.log(`traffic: ${line}`);
      console.log(`traffic: answers during the rollout: ${JSON.stringify(Object.fromEntries(client.sent))}`);
      expect(errors, 'no answer but 200 during the whole rollout').toEqual([]);
    });
  }, 600_000);
});

describe('analysis gates', () => {
  /** Error rate of the canary's pods over the window, from the pod runner's own counter. */
  const errorRate = {
    name: 'error-rate',
    // `or vector(0)`: without a single 5xx there is no 5xx series, and the ratio would have no data at all.
    query:
      '(sum(rate(lab_pod_requests_total{namespace="{{namespace}}",revision=~"{{revision}}",code=~"5.."}[{{window}}])) or vector(0)) / ' +
      'sum(rate(lab_pod_requests_total{namespace="{{namespace}}",revision=~"{{revision}}"}[{{window}}]))',
    threshold: { op: '<', value: 0.05 },
    consecutiveSuccesses: 2,
    noData: 'Wait',
  };
  const analysis = (onFailure: 'Hold' | 'ShiftBack') => ({
    steps: [25, 50],
    analysis: { prometheus: { address: prometheusUrl(lab) }, intervalSeconds: 3, window: '10s', onFailure, metrics: [errorRate] },
  });

  it('no traffic, no data: the barrier waits (WaitingForData, Progressing) without passing, and goes on once requests come', async () => {
    await withTraffic('traffic-nodata', async (env, client, host) => {
      await apply(env.render(options(host, 'registry.example/web:v1', analysis('Hold'))));
      const waiting = await waitFor(
        'the first barrier waits for data',
        async () => {
          const s = await readStatus(env.ns);
          return s.analysis?.outcome === 'WaitingForData' && (s.analysis.metrics?.[0]?.samples?.length ?? 0) >= 3 ? s : undefined;
        },
        { timeoutMs: 90_000, describe: () => readStatus(env.ns) },
      );
      expect(waiting.phase).toBe('Progressing');
      expect(waiting.conditions?.find((c) => c.type === 'Progressing')?.reason).toBe('Analyzing');
      expect(waiting.currentGroup, 'no later group without data').toBe(1);
      expect(waiting.analysis?.metrics?.[0]?.consecutiveSuccesses).toBe(0);
      const traffic = background(client);
      try {
        await waitFor('Healthy once requests come', async () => (await readStatus(env.ns)).phase === 'Healthy', {
          timeoutMs: 180_000,
          describe: () => readStatus(env.ns),
        });
      } finally {
        await traffic.stop();
      }
      const samples = waiting.analysis?.metrics?.[0]?.samples ?? [];
      console.log(`traffic: no traffic: ${samples.length} samples ${samples.map((x) => x.verdict).join(', ')} before requests came`);
    });
  }, 600_000);

  it.each(['Hold', 'ShiftBack'] as const)(
    'a canary whose pods answer 500 fails its analysis: the rollout holds Paused (%s)',
    async (onFailure) => {
      await withTraffic(`traffic-${onFailure.toLowerCase()}`, async (env, client, host) => {
        // Traffic all along: the analysis of every barrier (those of v1's creation too) needs requests to measure.
        const traffic = background(client);
        try {
          const v1 = env.render(options(host, 'registry.example/web:v1', analysis(onFailure)));
          await apply(v1);
          await waitFor('v1 Healthy', async () => (await readStatus(env.ns)).phase === 'Healthy', { timeoutMs: 180_000, describe: () => readStatus(env.ns) });
          const bad = env.render(options(host, 'registry.example/web:v2-err-50', analysis(onFailure)));
          await apply(bad);
          const failed = await waitFor(
            'the analysis fails',
            async () => {
              const s = await readStatus(env.ns);
              return s.phase === 'Paused' && s.conditions?.some((c) => c.type === 'Progressing' && c.reason === 'AnalysisFailed') ? s : undefined;
            },
            { timeoutMs: 180_000, describe: () => readStatus(env.ns) },
          );
          const canary = bad.regions[0]!.revision;
          const samples = failed.analysis?.metrics?.[0]?.samples ?? [];
          console.log(`traffic: ${onFailure}: samples ${samples.map((x) => `${x.value ?? '-'} ${x.verdict}`).join(', ')}`);
          expect(samples.at(-1)?.verdict).toBe('Failure');
          expect(failed.currentGroup, 'no later group started').toBe(1);
          const wanted = onFailure === 'Hold' ? 2500 : 0;
          await waitFor(`the route carries the canary at ${wanted / 100}%, accepted`, async () => {
            const s = await readStatus(env.ns);
            return s.traffic?.appliedGeneration !== undefined && s.traffic.weights?.find((w) => w.revision === canary)?.weight === wanted;
          });
          const counts = await traffic.quiet(() => client.send(400));
          const toCanary = (counts[`${canary} 200`] ?? 0) + (counts[`${canary} 500`] ?? 0);
          console.log(`traffic: ${onFailure}: 400 requests after the failure → ${JSON.stringify(counts)}`);
          const share = onFailure === 'Hold' ? 100 : 0;
          const picks = roundRobinCounts({ canary: toCanary, stable: 400 - toCanary }, { canary: share, stable: 400 - share });
          expect(picks.canary, onFailure === 'Hold' ? 'the canary keeps its step (25 %)' : 'the canary is shifted back to 0').toBe(share);
        } finally {
          await traffic.stop();
        }
      });
    },
    600_000,
  );

  it('Prometheus stopped → Inconclusive → Paused; restarted and resumed, the rollout completes Healthy', async () => {
    await withTraffic('traffic-inconclusive', async (env, client, host) => {
      // Two errors in a row make the analysis Inconclusive (errorLimit 1); a query gets 2 s.
      const spec = analysis('Hold');
      const small = {
        ...spec,
        analysis: {
          ...spec.analysis,
          prometheus: { ...spec.analysis.prometheus, timeoutSeconds: 2 },
          metrics: [{ ...errorRate, consecutiveSuccesses: 3, errorLimit: 1, inconclusiveLimit: 10 }],
        },
      };
      const traffic = background(client);
      let stopped = false;
      try {
        const v1 = env.render(options(host, 'registry.example/web:v1', small));
        await apply(v1);
        await waitFor('v1 Healthy', async () => (await readStatus(env.ns)).phase === 'Healthy', { timeoutMs: 180_000, describe: () => readStatus(env.ns) });
        const v2 = env.render(options(host, 'registry.example/web:v2', small));
        await apply(v2);
        // Prometheus goes as soon as the rollout starts: the analysis of group 1's barrier gets no answer at all.
        await waitFor('the rollout of v2 starts', async () => (await readStatus(env.ns)).revision === v2.rolloutRevision, {
          timeoutMs: 60_000,
          intervalMs: 50,
          describe: () => readStatus(env.ns),
        });
        await stopLabPrometheus(log);
        stopped = true;
        const stoppedAt = Date.now();
        const held = await waitFor(
          'the analysis is inconclusive, the rollout Paused',
          async () => {
            const s = await readStatus(env.ns);
            return s.phase === 'Paused' && s.conditions?.some((c) => c.type === 'Progressing' && c.reason === 'AnalysisInconclusive') ? s : undefined;
          },
          { timeoutMs: 180_000, describe: () => readStatus(env.ns) },
        );
        const inconclusiveAfterMs = Date.now() - stoppedAt;
        const metric = held.analysis?.metrics?.[0];
        const samples = metric?.samples ?? [];
        console.log(
          `traffic: Prometheus stopped: Paused (AnalysisInconclusive) ${(inconclusiveAfterMs / 1000).toFixed(1)} s later; ` +
            `samples ${samples.map((x) => `${x.verdict}${x.message ? ` (${x.message})` : ''}`).join(', ')}`,
        );
        expect(held.analysis?.revision).toBe(v2.rolloutRevision);
        expect(held.analysis?.group).toBe(1);
        expect(held.analysis?.outcome).toBe('Inconclusive');
        expect(metric?.outcome).toBe('Inconclusive');
        expect(metric?.consecutiveErrors, 'errors in a row past errorLimit 1').toBeGreaterThanOrEqual(2);
        expect(samples.slice(-2).map((x) => x.verdict)).toEqual(['Error', 'Error']);
        expect(held.currentGroup, 'no later group started').toBe(1);
        expect(held.traffic?.shiftedBack, 'an inconclusive analysis holds the weights, it does not shift back').not.toBe(true);
        const events = await edEvents(env.ns, { until: (all) => all.some((e) => e.reason === 'AnalysisInconclusive') });
        expect(
          events.some((e) => e.reason === 'AnalysisInconclusive'),
          JSON.stringify(events),
        ).toBe(true);
        // It holds: no later group while Prometheus is away.
        for (let i = 0; i < 10; i++) {
          await sleep(1_000);
          const s = await readStatus(env.ns);
          expect(s.currentGroup, 'no later group started').toBe(1);
          expect(s.phase).toBe('Paused');
        }

        await restartLabPrometheus(log);
        stopped = false;
        expect(await edctl(env.ns, 'resume')).toBe(0);
        const resumedAt = Date.now();
        const done = await waitFor(
          'v2 Healthy after the resume',
          async () => {
            const s = await readStatus(env.ns);
            return s.revision === v2.rolloutRevision && s.phase === 'Healthy' ? s : undefined;
          },
          { timeoutMs: 240_000, describe: () => readStatus(env.ns) },
        );
        console.log(`traffic: Prometheus back, resumed: Healthy ${((Date.now() - resumedAt) / 1000).toFixed(1)} s later (${done.totalGroups} groups)`);
        expect(await podCounts(env.ns, v2)).toEqual(v2.regions.map((r) => ({ name: r.name, updated: r.replicas, old: 0 })));
      } finally {
        await traffic.stop();
        // Later tests need it, whatever happened here.
        if (stopped) await restartLabPrometheus(log);
      }
    });
  }, 600_000);
});

describe('route template', () => {
  it('a Git edit of the route template reaches the agent’s route in one reconcile', async () => {
    const recorder = await recordWrites('traffic-template');
    try {
      await withTraffic(
        'traffic-template',
        async (env, client, host) => {
          const v1 = env.render(options(host, 'registry.example/web:v1'));
          await apply(v1);
          const healthy = await waitFor(
            'v1 Healthy, its route accepted',
            async () => {
              const s = await readStatus(env.ns);
              return s.phase === 'Healthy' && s.traffic?.appliedGeneration !== undefined ? s : undefined;
            },
            { timeoutMs: 180_000, describe: () => readStatus(env.ns) },
          );
          const revision = v1.regions[0]!.revision;
          const altHost = `alt-${host}`;
          const alt = gatewayClient(webUrl(lab), altHost);
          try {
            expect(await client.send(50)).toEqual({ [`${revision} 200`]: 50 });
            const replicaSets = async () =>
              (await clients().apps.listNamespacedReplicaSet({ namespace: env.ns })).items.map((r) => `${r.metadata?.name}/${r.metadata?.uid}`).sort();
            const replicaSetsBefore = await replicaSets();
            const routeBefore = await readRoute(env.ns);

            // Git changes the route template only: one more hostname.
            const edited = env.render(options(host, 'registry.example/web:v1', { route: { parentRefs: [gatewayParentRef()], hostnames: [host, altHost] } }));
            expect(edited.rolloutRevision, 'the same rollout revision').toBe(v1.rolloutRevision);
            const since = Date.now();
            const writesBefore = recorder.writes.length;
            await apply(edited);
            const generation = (await readEd(env.ns)).metadata?.generation;
            const route = await waitFor(
              'the route carries the new hostname, accepted, and the status describes the new generation',
              async () => {
                const r = await readRoute(env.ns);
                const s = await readStatus(env.ns);
                const done =
                  (r.spec?.hostnames ?? []).includes(altHost) && s.observedGeneration === generation && s.traffic?.appliedGeneration === r.metadata?.generation;
                return done ? r : undefined;
              },
              { timeoutMs: 120_000, describe: async () => ({ route: await readRoute(env.ns), status: await readStatus(env.ns) }) },
            );
            // Any further write would come within moments of the first.
            await sleep(5_000);
            const writes = routeWrites(recorder.writes.slice(writesBefore), env.ns);
            const edUpdates = auditEvents().filter(
              (e) =>
                isWrite(e) &&
                e.objectRef?.resource === 'extendeddeployments' &&
                e.objectRef.subresource === undefined &&
                e.objectRef.namespace === env.ns &&
                auditTime(e.stageTimestamp) >= since - 1_000,
            );
            const updatedAt = auditTime(edUpdates[0]?.stageTimestamp);
            console.log(
              `traffic: route template edit: ED generation ${generation} updated (audit ${edUpdates[0]?.stageTimestamp}), ${writes.length} route write(s): ` +
                `${writes.map((w) => `${ms(w.answeredAt, updatedAt)} after the update`).join(', ')}; route generation ${routeBefore.metadata?.generation} → ${route.metadata?.generation}`,
            );
            expect(edUpdates, 'one ExtendedDeployment update').toHaveLength(1);
            expect(writes, 'exactly one agent write to the route').toHaveLength(1);
            expect(writes[0]!.sentAt, 'after the update').toBeGreaterThanOrEqual(updatedAt - 5);
            expect((writes[0]!.body as RouteObject).spec?.hostnames).toEqual([host, altHost]);
            expect(route.metadata?.generation, 'one spec change of the route').toBe((routeBefore.metadata?.generation ?? 0) + 1);
            expect(weightKey(routeWeightsOf(route)), 'the same weights').toBe(weightKey(routeWeightsOf(routeBefore)));

            // No rollout: the same revision, the same ReplicaSets.
            const after = await readStatus(env.ns);
            expect(after.revision).toBe(healthy.revision);
            expect(after.phase).toBe('Healthy');
            expect(await replicaSets()).toEqual(replicaSetsBefore);

            // Both host names reach the pods through Traefik.
            const counts = await alt.send(200);
            console.log(`traffic: route template edit: 200 requests for ${altHost} → ${JSON.stringify(counts)}`);
            expect(counts).toEqual({ [`${revision} 200`]: 200 });
            expect(await client.send(50)).toEqual({ [`${revision} 200`]: 50 });
          } finally {
            alt.close();
          }
        },
        recorder,
      );
    } finally {
      await recorder.close();
    }
  }, 600_000);
});

/** The agent's HTTPRoute `<ed>` as the suite reads it. */
interface RouteObject {
  metadata?: { generation?: number; resourceVersion?: string };
  spec?: { hostnames?: string[]; rules?: { backendRefs?: { name?: string; weight?: number }[] }[] };
  status?: unknown;
}

const routesPath = (ns: string) => `/apis/gateway.networking.k8s.io/v1/namespaces/${ns}/httproutes`;

async function readRoute(ns: string): Promise<RouteObject> {
  return clients().objects.read<RouteObject>({ apiVersion: 'gateway.networking.k8s.io/v1', kind: 'HTTPRoute', metadata: { name: ED_NAME, namespace: ns } });
}

/** A route's weights by revision (its backendRefs name the Services `<ed>-<revision>`; every rule sends the same). */
function routeWeightsOf(route: RouteObject | undefined): Record<string, number> {
  const refs = route?.spec?.rules?.[0]?.backendRefs ?? [];
  return Object.fromEntries(refs.map((r) => [(r.name ?? '').slice(ED_NAME.length + 1), r.weight ?? 1]));
}

/** Weights by revision as one comparable string, e.g. `v1:9000 v2:1000` (revisions sorted). */
function weightKey(weights: Record<string, number> | readonly { revision: string; weight: number }[] | undefined): string {
  const entries = Array.isArray(weights)
    ? (weights as readonly { revision: string; weight: number }[]).map((w) => [w.revision, w.weight] as const)
    : Object.entries(weights ?? {});
  return [...entries]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([revision, weight]) => `${revision.slice(0, 6)}:${weight}`)
    .join(' ');
}

/** The agent's server-side applies of its route `<ed>` that the API server answered with success, in order. */
function routeWrites(writes: readonly RecordedWrite[], ns: string): RecordedWrite[] {
  return writes.filter((w) => w.method === 'PATCH' && w.path === `${routesPath(ns)}/${ED_NAME}` && (w.code ?? 0) >= 200 && (w.code ?? 0) < 300);
}

/** An audit timestamp (RFC 3339 with microseconds) in ms. */
const auditTime = (t: string | undefined): number => Date.parse((t ?? '').replace(/(\.\d{3})\d*Z$/, '$1Z'));

/** A status write of the ExtendedDeployment as the audit log shows it. */
interface StatusWrite {
  readonly at: number;
  readonly userAgent: string;
  readonly status: ExtendedDeploymentStatus;
}

/** The successful status writes of the test's ExtendedDeployment in the audit log (the agent is the only writer). */
function statusWrites(ns: string): StatusWrite[] {
  return auditEvents()
    .filter(
      (e: AuditEvent) =>
        isWrite(e) &&
        e.objectRef?.resource === 'extendeddeployments' &&
        e.objectRef.subresource === 'status' &&
        e.objectRef.namespace === ns &&
        e.objectRef.name === ED_NAME &&
        e.responseStatus?.code === 200,
    )
    .map((e) => ({
      at: auditTime(e.stageTimestamp),
      userAgent: e.userAgent ?? '',
      status: (e.requestObject as { status?: ExtendedDeploymentStatus }).status ?? {},
    }))
    .sort((a, b) => a.at - b.at);
}

/** Calls `seen` with the route `<ed>` at every watch event until the returned stop is called. */
async function watchRoute(ns: string, seen: (route: RouteObject) => void): Promise<() => void> {
  const abort = await new Watch(clients().kc).watch(
    routesPath(ns),
    {},
    (_phase: string, route: RouteObject & { metadata?: { name?: string } }) => {
      if (route.metadata?.name === ED_NAME) seen(route);
    },
    () => undefined,
  );
  return () => abort.abort();
}

const ms = (t: number | undefined, from: number) => (t === undefined ? '-' : `${t - from >= 0 ? '+' : ''}${t - from} ms`);

describe('the agent killed between the route write and the status write', () => {
  it('a SIGKILL of the agent between the route write and the status write causes no double step', async () => {
    const label = 'traffic-kill';
    const ns = await createNamespace(label);
    const host = `${ns}.traffic.lab`;
    const client = gatewayClient(webUrl(lab), host);
    await installCrds();
    const suffix = uniqueName('t').slice(2);
    const regions = deployRegions(suffix);
    for (const region of regions) await serverSideApply(region);
    const renderEd = (image: string) =>
      render([...regions, extendedDeployment(ns, suffix, options(host, image, { steps: [10, 50] }, { needWaitingForConfirm: true }))]);
    // The agent is the compiled one, as a child process that can be frozen and killed, as the install's ServiceAccount
    // with the traffic role, through a proxy that records its writes (the audit log has its status writes, not its route's).
    const recorder = await recordWrites(ns);
    const identity = await renderedIdentity(ns, suffix, { traffic: true });
    const kubeconfig = identity.kubeconfigFile(recorder.kubeconfig);
    const watch = await startWatcher({ kubeConfig: clients().kc, namespace: ns, name: ED_NAME });
    const agents: AgentProcess[] = [];
    const startAgentProcess = () => {
      const next = new AgentProcess({
        kubeconfig,
        identity: `traffic-kill-${agents.length + 1}`,
        namespace: ns,
        leaseNamespace: ns,
        leaseDurationSeconds: 4,
        echo: !!process.env.AGENT_ECHO,
      });
      agents.push(next);
      return next;
    };
    let stopRouteWatch: (() => void) | undefined;
    let failed = false;
    try {
      let agent = startAgentProcess();
      const v1 = renderEd('registry.example/web:v1');
      await apply(v1);
      await waitFor(
        'v1 Healthy, its route accepted',
        async () => {
          await approveIfWaiting(ns);
          const s = await readStatus(ns);
          return s.phase === 'Healthy' && s.traffic?.appliedGeneration !== undefined;
        },
        { timeoutMs: 180_000, describe: () => readStatus(ns) },
      );

      // Every change of the route's weights during the rollouts: the first one that gives the canary weight freezes the
      // agent; if the status write recording that step (its weights with the route's generation as appliedGeneration)
      // has not reached the API server, the agent is killed there, else it goes on and the next step is tried.
      interface Kill {
        readonly weights: string;
        readonly generation: number;
        readonly seenAt: number;
        readonly killedAt: number;
      }
      const tries: string[] = [];
      let kill: Kill | undefined;
      let canary = '';
      let lastKey: string | undefined;
      let deciding: Promise<void> | undefined;
      const recorded = (key: string, generation: number) =>
        statusWrites(ns).find((w) => weightKey(w.status.traffic?.weights) === key && w.status.traffic?.appliedGeneration === generation);
      const decide = async (victim: AgentProcess, key: string, generation: number, seenAt: number) => {
        // What the agent sent before it froze reaches the API server (and its audit log) meanwhile.
        await sleep(1_000);
        const before = recorded(key, generation);
        if (before) {
          tries.push(`${key}: the status write recording it came first (${ms(before.at, seenAt)} from the watch event): resumed`);
          victim.freeze(false);
          return;
        }
        victim.killHard();
        kill = { weights: key, generation, seenAt, killedAt: Date.now() };
        tries.push(`${key}: no status write recording it yet: killed`);
        await victim.exited;
        agent = startAgentProcess();
      };
      const generations = new Map<number, string>();
      stopRouteWatch = await watchRoute(ns, (route) => {
        const weights = routeWeightsOf(route);
        const key = weightKey(weights);
        const generation = route.metadata?.generation ?? -1;
        if (!generations.has(generation)) generations.set(generation, key);
        if (key === lastKey) return;
        lastKey = key;
        if (kill || deciding || !canary || !((weights[canary] ?? 0) > 0) || !agent.alive()) return;
        agent.freeze(true);
        deciding = decide(agent, key, route.metadata?.generation ?? -1, Date.now()).finally(() => (deciding = undefined));
      });

      // Rollouts until a kill landed between the two writes (each has two canary steps and the final weights).
      const since = Date.now();
      const sinceWrites = recorder.writes.length;
      const routeBefore = weightKey(routeWeightsOf(await readRoute(ns)));
      let last = v1;
      for (let v = 2; v <= 4 && !kill; v++) {
        const next = renderEd(`registry.example/web:v${v}`);
        canary = next.regions[0]!.revision;
        await apply(next);
        await waitFor(
          `v${v} Healthy, its route accepted`,
          async () => {
            if (!deciding) await approveIfWaiting(ns);
            const s = await readStatus(ns);
            return s.revision === next.rolloutRevision && s.phase === 'Healthy' && s.traffic?.appliedGeneration !== undefined && !deciding;
          },
          { timeoutMs: 300_000, describe: async () => ({ status: await readStatus(ns), tries }) },
        );
        last = next;
      }
      // The end: status.traffic as the route. The last route write (the drained revision's backendRef gone) can come after Healthy: the status follows once
      // the gateway accepted it.
      const healthyAt = Date.now();
      const { end, route } = await waitFor(
        'status.traffic records the route’s weights and generation',
        async () => {
          const [s, r] = [await readStatus(ns), await readRoute(ns)];
          const same = weightKey(s.traffic?.weights) === weightKey(routeWeightsOf(r)) && s.traffic?.appliedGeneration === r.metadata?.generation;
          return same ? { end: s, route: r } : undefined;
        },
        { timeoutMs: 60_000, describe: async () => ({ status: (await readStatus(ns)).traffic, route: await readRoute(ns) }) },
      );
      console.log(
        `traffic: the end: status.traffic ${weightKey(end.traffic?.weights)} generation ${end.traffic?.appliedGeneration} = the route's, ` +
          `${Date.now() - healthyAt} ms after Healthy`,
      );
      expect(end.phase).toBe('Healthy');
      expect(end.revision).toBe(last.rolloutRevision);
      await waitFor('the route watch saw the last generation', async () => generations.has(route.metadata?.generation ?? -1));
      stopRouteWatch();
      stopRouteWatch = undefined;
      for (const line of tries) console.log(`traffic: kill try: ${line}`);
      expect(kill, `a kill between the route write and the status write (tries: ${tries.join('; ')})`).toBeDefined();

      // When the kill landed, from the writes of the step it hit: the intent (status.traffic.weights first), the route,
      // the status recording it applied (by the next agent).
      const statuses = statusWrites(ns).filter((w) => w.at >= since - 1_000);
      const routes = routeWrites(recorder.writes.slice(sinceWrites), ns);
      const k = kill!;
      const intent = statuses.find((w) => weightKey(w.status.traffic?.weights) === k.weights);
      const routeWrite = routes.find((w) => weightKey(routeWeightsOf(w.body as RouteObject)) === k.weights);
      const applied = statuses.find((w) => weightKey(w.status.traffic?.weights) === k.weights && w.status.traffic?.appliedGeneration === k.generation);
      const t0 = routeWrite?.answeredAt ?? k.seenAt;
      console.log(
        `traffic: kill at ${k.weights} (route generation ${k.generation}): intent status write ${ms(intent?.at, t0)}, route write answered 0 ms, ` +
          `watch event ${ms(k.seenAt, t0)}, SIGKILL ${ms(k.killedAt, t0)}, status write recording it ${ms(applied?.at, t0)}` +
          `${applied ? ` (${applied.at > k.killedAt ? 'after the kill, by the next agent' : 'before the kill'})` : ''}; ${tries.length} tries, ${agents.length} agent processes`,
      );
      expect(applied && applied.at > k.killedAt, 'the step is recorded applied only after the kill').toBe(true);

      // The weights the agent wrote to the route: each planned step (the weights its status recorded as intended, in
      // order) exactly once, none twice, none skipped. An apply of the route exactly as it is already (a look on a
      // cache that does not show the agent's last write yet: agent/reconciler.ts accepts it) changes nothing, not even
      // the generation: the route's generations are counted from the watch.
      const written = routes.map((w) => weightKey(routeWeightsOf(w.body as RouteObject)));
      const distinct = written.filter((key, i) => key !== written[i - 1]);
      const byGeneration = [...generations].sort(([a], [b]) => a - b).map(([, key]) => key);
      const planned = statuses
        .map((w) => weightKey(w.status.traffic?.weights))
        .filter((key) => key !== '')
        .filter((key, i, all) => key !== all[i - 1]);
      // The rollout starts from the weights the route already carries: those are not written again.
      if (planned[0] === routeBefore) planned.shift();
      console.log(`traffic: planned steps:     ${planned.join(' → ')}`);
      console.log(`traffic: route writes:      ${routes.map((w, i) => `${written[i]} (${ms(w.answeredAt, since)})`).join(' → ')}`);
      console.log(`traffic: route generations: ${[...generations].map(([g, key]) => `${g} ${key}`).join(' → ')}`);
      console.log(`traffic: ${written.length - distinct.length} of ${written.length} route writes applied the route as it already was`);
      expect(distinct, 'the route writes are the planned steps, each once, in order').toEqual(planned);
      expect(new Set(distinct).size, 'no weights written again after others').toBe(distinct.length);
      expect(byGeneration.slice(1), 'each generation of the route carries the next planned step').toEqual(planned);

      // Healthy with exactly the pods wanted, every request to the last revision.
      expect(await podCounts(ns, last)).toEqual(last.regions.map((r) => ({ name: r.name, updated: r.replicas, old: 0 })));
      const revision = last.regions[0]!.revision;
      expect(await client.send(200)).toEqual({ [`${revision} 200`]: 200 });
    } catch (e) {
      failed = true;
      throw e;
    } finally {
      stopRouteWatch?.();
      for (const a of agents) {
        a.freeze(false);
        await a.stop();
      }
      await recorder.close();
      await identity.remove();
      const violations = await stopAndReport(watch, label, failed);
      for (const region of regions)
        await clients()
          .objects.delete(region)
          .catch(() => undefined);
      client.close();
      await deleteNamespace(ns);
      if (!failed) expect(violations).toEqual([]);
    }
  }, 900_000);
});
