// Traffic shifting and analysis gates (#22) on the traffic lab: Traefik routing the agent's HTTPRoute through the real
// Services and EndpointSlices to the pod runner's pods, Prometheus scraping the pod runner. The agent runs as the
// rendered install with AgentInstall's `traffic` on. Weights follow the groups exactly (2,000 requests at each gate,
// Traefik's weighted round robin is deterministic) with no 5xx over the whole rollout; without requests an analysis has
// no data and its barrier waits; a canary whose pods answer 500 fails its analysis and holds the rollout (Hold: its
// weight stays; ShiftBack: its weight goes to 0).
//
//   CI=true LAB_DIR=/tmp/lab-traffic npx vitest run --config vitest.e2e.config.ts test/e2e/traffic.e2e.test.ts
//
// The first run builds Traefik (minutes; see test/cluster/README.md). Figures are printed, never asserted.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ExtendedDeploymentStatus } from '../../core/api/extended-deployment.js';
import { up } from '../cluster/lab.js';
import { gatewayParentRef } from '../cluster/traefik.js';
import { prometheusUrl, startTrafficLab, stopTrafficLab, webUrl, type TrafficState } from '../cluster/traffic.js';
import { gatewayClient, type GatewayClient } from './gateway-client.js';
import { createNamespace, deleteNamespace, sleep, waitFor } from './helpers.js';
import { apply, edctl, readStatus, withRolloutEnv, type EdOptions, type RolloutEnv } from './rollout-kit.js';

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

/** Counts `n` answers by revision (`revision code`), each weight's exact share of `n` as Traefik's round robin gives it. */
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

/** Runs `body` in a namespace of its own with a gateway client for its host, and the agent with the traffic role. */
async function withTraffic(label: string, body: (env: RolloutEnv, client: GatewayClient, host: string) => Promise<void>): Promise<void> {
  const ns = await createNamespace(label);
  const host = `${ns}.traffic.lab`;
  const client = gatewayClient(webUrl(lab), host);
  try {
    await withRolloutEnv(ns, label, (env) => body(env, client, host), { traffic: true });
  } finally {
    client.close();
    await deleteNamespace(ns);
  }
}

describe('traffic shifting (mode Weighted)', () => {
  it('follows the groups: exact counts over 2,000 requests at every gate, and not one 5xx over the whole rollout', async () => {
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
        // before the last group those are the drained ones, not the group's step.
        status = await waitFor(`group ${group} at its gate`, async () => {
          const s = await readStatus(env.ns);
          return s.phase === 'WaitingForConfirmation' || s.phase === 'Healthy' ? s : undefined;
        });
        const weights = await appliedWeights(env.ns, group);
        const counts = await traffic.quiet(() => client.send(2000));
        gates.push(`group ${group}: weights ${JSON.stringify(weights)} → ${JSON.stringify(counts)}`);
        expect(counts, `group ${group}`).toEqual(expectedCounts(weights, 2000));
        if (group === 1) expect(weights[v2.regions[0]!.revision], 'the first step').toBe(1000);
        if (status.phase !== 'WaitingForConfirmation') break;
        expect(await edctl(env.ns, 'approve')).toBe(0);
        await waitFor(
          `group ${group + 1} starts`,
          async () => ((await readStatus(env.ns)).currentGroup ?? 0) > group || (await readStatus(env.ns)).phase === 'Healthy',
        );
      }
      await waitFor('v2 Healthy', async () => (await readStatus(env.ns)).phase === 'Healthy', { describe: () => readStatus(env.ns) });
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
          expect(toCanary, onFailure === 'Hold' ? 'the canary keeps its step (25 %)' : 'the canary is shifted back to 0').toBe(onFailure === 'Hold' ? 100 : 0);
        } finally {
          await traffic.stop();
        }
      });
    },
    600_000,
  );
});
