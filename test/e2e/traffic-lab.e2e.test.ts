// The traffic lab itself (test/cluster/traffic.ts), before any product code uses it: the lab in its own network
// namespace, the pod runner answering on the pods' IPs, Traefik v3.6.12 routing an HTTPRoute's weighted backendRefs
// through the real Services and EndpointSlices, and Prometheus scraping Traefik. What the traffic-shifting suites
// will build on: weights are followed to within one pick (Traefik's weighted round robin: roundRobinCounts), a weight
// change reaches traffic, a backend without ready pods answers 503 for its share, and Prometheus sees Traefik's counts.
//
//   CI=true LAB_DIR=/tmp/lab-traffic npx vitest run --config vitest.e2e.config.ts test/e2e/traffic-lab.e2e.test.ts
//
// The first run builds Traefik (minutes; see test/cluster/README.md). Figures are printed, never asserted.
import type { KubernetesObject, V1ReplicaSet, V1Service } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REVISION_LABEL } from '../../core/labels.js';
import { up } from '../cluster/lab.js';
import { instantQuery } from '../cluster/prometheus.js';
import { gatewayParentRef } from '../cluster/traefik.js';
import { prometheusUrl, startTrafficLab, stopTrafficLab, webUrl, type TrafficState } from '../cluster/traffic.js';
import { gatewayClient, roundRobinCounts, type Answer, type GatewayClient } from './gateway-client.js';
import { clients, createNamespace, deleteNamespace, serverSideApply, waitFor } from './helpers.js';

const log = (s: string) => console.error(s);
/** A cold Traefik build on 2 busy cores took 18.5 min (../shared/reference/fleet-and-traffic.md §6.4). */
const SETUP_TIMEOUT_MS = 60 * 60_000;
const APP = 'web';
/** Readiness gate nobody sets: the pods of a revision that uses it run (and the pod runner serves them) but are never Ready. */
const NEVER_READY = 'lab.extendeddeployment.io/never-ready';

let traffic: TrafficState;
let ns: string;
let host: string;
/** Requests through the gateway; `client.sent` counts every answer, by `revision code`: what Prometheus must count. */
let client: GatewayClient;
const get = () => client.get();
const send = (n: number, concurrency?: number) => client.send(n, concurrency);

beforeAll(async () => {
  const t0 = Date.now();
  // The e2e global setup starts (or reuses) a lab without a namespace; this suite needs one, and the restart is cheap.
  await up(log, { netNamespace: true });
  traffic = await startTrafficLab(log);
  log(`traffic-lab: lab in its network namespace with Traefik, pod runner and Prometheus ready after ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  ns = await createNamespace('traffic');
  host = `${ns}.traffic.lab`;
  client = gatewayClient(webUrl(traffic), host);
}, SETUP_TIMEOUT_MS);

afterAll(async () => {
  client?.close();
  if (ns) await deleteNamespace(ns);
  await stopTrafficLab(log);
}, 120_000);

// ---------------------------------------------------------------------------------------------------------------
// objects

function replicaSet(revision: string, replicas: number, extra: { readinessGate?: string; image?: string } = {}): V1ReplicaSet {
  const labels = { app: APP, [REVISION_LABEL]: revision };
  return {
    apiVersion: 'apps/v1',
    kind: 'ReplicaSet',
    metadata: { name: `${APP}-${revision}`, namespace: ns },
    spec: {
      replicas,
      selector: { matchLabels: labels },
      template: {
        metadata: { labels },
        spec: {
          containers: [{ name: 'app', image: extra.image ?? `registry.example/${APP}:${revision}`, ports: [{ name: 'http', containerPort: 8080 }] }],
          terminationGracePeriodSeconds: 0,
          ...(extra.readinessGate ? { readinessGates: [{ conditionType: extra.readinessGate }] } : {}),
        },
      },
    },
  };
}

function service(revision: string): V1Service {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: `${APP}-${revision}`, namespace: ns },
    spec: { selector: { app: APP, [REVISION_LABEL]: revision }, ports: [{ name: 'http', port: 80, targetPort: 'http' }] },
  };
}

function route(weights: Record<string, number>): KubernetesObject & { spec: unknown } {
  return {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'HTTPRoute',
    metadata: { name: APP, namespace: ns },
    spec: {
      parentRefs: [gatewayParentRef()],
      hostnames: [host],
      rules: [
        {
          matches: [{ path: { type: 'PathPrefix', value: '/' } }],
          // Fully defaulted (group, kind) as the API server would store them.
          backendRefs: Object.entries(weights).map(([revision, weight]) => ({ group: '', kind: 'Service', name: `${APP}-${revision}`, port: 80, weight })),
        },
      ],
    },
  };
}

interface RouteStatus {
  metadata: { generation: number };
  status?: { parents?: { conditions?: { type: string; status: string; observedGeneration?: number }[] }[] };
}

/** A route's status shows the current generation Accepted with its refs resolved (what the planner will wait for). */
function routeApplied(r: RouteStatus): boolean {
  const conds = r.status?.parents?.[0]?.conditions ?? [];
  return ['Accepted', 'ResolvedRefs'].every((t) => conds.some((c) => c.type === t && c.status === 'True' && c.observedGeneration === r.metadata.generation));
}

async function readRoute(): Promise<RouteStatus> {
  return (await clients().objects.read({
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'HTTPRoute',
    metadata: { name: APP, namespace: ns },
  })) as unknown as RouteStatus;
}

async function applyRoute(weights: Record<string, number>): Promise<number> {
  const applied = await serverSideApply(route(weights));
  return applied.metadata?.generation ?? 0;
}

async function readyPods(revision: string): Promise<number> {
  const pods = await clients().core.listNamespacedPod({ namespace: ns, labelSelector: `${REVISION_LABEL}=${revision}` });
  return pods.items.filter((p) => p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')).length;
}

// ---------------------------------------------------------------------------------------------------------------
// traffic

/** Single requests until `seen` says the last ones show the new configuration; returns ms since `since`. */
async function waitTraffic(what: string, since: number, seen: (last: Answer[]) => boolean): Promise<number> {
  const last: Answer[] = [];
  await waitFor(
    what,
    async () => {
      for (let i = 0; i < 20; i++) {
        last.push(await get());
        if (last.length > 10) last.shift();
        if (seen(last)) return true;
      }
      return false;
    },
    { timeoutMs: 60_000, intervalMs: 1, describe: async () => last },
  );
  return Date.now() - since;
}

const count = (last: Answer[], revision: string, code = 200) => last.filter((a) => a.revision === revision && a.code === code).length;

// ---------------------------------------------------------------------------------------------------------------

describe('traffic lab: Traefik, pod runner and Prometheus on a lab in its own network namespace', () => {
  it('splits 2000 requests 90/10, to within one pick', async () => {
    for (const obj of [replicaSet('v1', 2), replicaSet('v2', 1), service('v1'), service('v2')]) await serverSideApply(obj);
    await waitFor('v1 and v2 pods Ready', async () => (await readyPods('v1')) === 2 && (await readyPods('v2')) === 1);
    const t0 = Date.now();
    const generation = await applyRoute({ v1: 90, v2: 10 });
    await waitFor(`HTTPRoute generation ${generation} Accepted with ResolvedRefs`, async () => routeApplied(await readRoute()), { describe: readRoute });
    const statusMs = Date.now() - t0;
    const trafficMs = await waitTraffic('both revisions answering through Traefik', t0, (last) => count(last, 'v1') > 0 && count(last, 'v2') > 0);
    console.log(`traffic-lab: new route: status applied after ${statusMs} ms, both revisions answering after ${trafficMs} ms`);

    // Earliest-deadline round robin repeats every (sum of weights / gcd) = 10 picks here, up to float rounding where
    // deadlines meet: any 2000 consecutive picks hold 1800 and 200 to within one, whatever the probes above left the
    // scheduler at (roundRobinCounts).
    const counts = await send(2000);
    console.log(`traffic-lab: weights 90/10 → ${JSON.stringify(counts)}`);
    const exact = { 'v1 200': 1800, 'v2 200': 200 };
    expect(roundRobinCounts(counts, exact)).toEqual(exact);
  });

  it('follows a weight change to 50/50', async () => {
    const t0 = Date.now();
    const generation = await applyRoute({ v1: 50, v2: 50 });
    // Under 90/10 no 4 consecutive picks hold two v2 answers; under 50/50 every 2 do.
    const trafficMs = await waitTraffic('traffic to follow 50/50', t0, (last) => last.length >= 4 && count(last.slice(-4), 'v2') >= 2);
    const route = await readRoute();
    console.log(
      `traffic-lab: weights 90/10 → 50/50: traffic followed ${trafficMs} ms after the apply began; route status then ` +
        `${routeApplied(route) ? 'showed' : 'did not yet show'} generation ${generation} applied`,
    );
    const counts = await send(2000);
    console.log(`traffic-lab: weights 50/50 → ${JSON.stringify(counts)}`);
    const exact = { 'v1 200': 1000, 'v2 200': 1000 };
    expect(roundRobinCounts(counts, exact)).toEqual(exact);
  });

  it('answers 503 for the share of a backend without ready pods', async () => {
    for (const obj of [replicaSet('v3', 1, { readinessGate: NEVER_READY }), service('v3')]) await serverSideApply(obj);
    await waitFor('the v3 pod Running (served by the pod runner, never Ready)', async () => {
      const pods = await clients().core.listNamespacedPod({ namespace: ns, labelSelector: `${REVISION_LABEL}=v3` });
      return pods.items.some((p) => p.status?.phase === 'Running' && p.status.podIP);
    });
    expect(await readyPods('v3')).toBe(0);
    const t0 = Date.now();
    await applyRoute({ v1: 50, v3: 50 });
    const trafficMs = await waitTraffic(
      '503s for the v3 share',
      t0,
      (last) => last.length >= 4 && count(last.slice(-4), '-', 503) >= 2 && count(last.slice(-4), 'v2') === 0,
    );
    console.log(`traffic-lab: weights v1 50 / v3 50 (v3: 0 ready pods): 503s ${trafficMs} ms after the apply began`);
    const counts = await send(400);
    console.log(`traffic-lab: v1 50 / v3 50 with v3 not ready → ${JSON.stringify(counts)}`);
    const exact = { 'v1 200': 200, '- 503': 200 };
    expect(roundRobinCounts(counts, exact)).toEqual(exact);
  });

  it("answers Traefik's per-service counts from Prometheus", async () => {
    // Traefik drops a service's series from /metrics when the service leaves its configuration (v2 left the route in
    // the previous test), so the counts come from the stored samples: the last value of each series over the suite.
    const perService = `sum by (service, code) (max_over_time(traefik_service_requests_total{service=~"${ns}-.*"}[30m]))`;
    // A backend without endpoints gets no service of its own in Traefik: its 503s count only per router (and entry point).
    const perRouter = `sum by (code) (max_over_time(traefik_router_requests_total{router=~"httproute-${ns}-.*"}[30m]))`;
    const podQuery = `sum by (revision, code) (lab_pod_requests_total{namespace="${ns}"})`;
    const ours = (revision: string, code: number) => client.sent.get(`${revision} ${code}`) ?? 0;
    const backend = (rev: string) => `${ns}-${APP}-${rev}-http-80@kubernetesgateway`;
    const t0 = Date.now();
    const samples = await waitFor(
      'Prometheus to count every request of this suite',
      async () => {
        const s = await instantQuery(prometheusUrl(traffic), perService);
        const r = await instantQuery(prometheusUrl(traffic), perRouter);
        const of = (service: string) => s.find((x) => x.metric.service === service && x.metric.code === '200')?.value;
        const routed = (code: string) => r.find((x) => x.metric.code === code)?.value;
        const complete =
          of(backend('v1')) === ours('v1', 200) &&
          of(backend('v2')) === ours('v2', 200) &&
          routed('200') === ours('v1', 200) + ours('v2', 200) &&
          routed('503') === ours('-', 503);
        return complete && [...s, ...r];
      },
      {
        timeoutMs: 30_000,
        describe: async () => ({
          services: await instantQuery(prometheusUrl(traffic), perService),
          routers: await instantQuery(prometheusUrl(traffic), perRouter),
          sent: Object.fromEntries(client.sent),
        }),
      },
    );
    console.log(`traffic-lab: Prometheus matched the suite's own counts ${Date.now() - t0} ms after the last request: ${perService}; ${perRouter}`);
    for (const s of samples) console.log(`traffic-lab:   ${s.metric.service ?? 'route'} ${s.metric.code} = ${s.value}`);
    const live = await instantQuery(prometheusUrl(traffic), `sum by (service, code) (traefik_service_requests_total{service=~"${ns}-.*"})`);
    console.log(
      `traffic-lab: the plain instant query (the series Traefik still exports; a service that left the route drops out): ${live.map((x) => `${x.metric.service} ${x.metric.code} = ${x.value}`).join('; ')}`,
    );
    expect(live.some((x) => x.metric.service === backend('v1') && x.metric.code === '200')).toBe(true);
    // The pod runner's own counter agrees: every 200 through Traefik was answered by a pod of that revision.
    const pods = await waitFor('the pod runner counts in Prometheus', async () => {
      const s = await instantQuery(prometheusUrl(traffic), podQuery);
      const of = (rev: string) => s.find((x) => x.metric.revision === rev && x.metric.code === '200')?.value ?? 0;
      return of('v1') === ours('v1', 200) && of('v2') === ours('v2', 200) && s;
    });
    for (const s of pods) console.log(`traffic-lab:   pod runner ${s.metric.revision} ${s.metric.code} = ${s.value}`);
  });

  it('lets the image tag choose error rate and latency (pod runner)', async () => {
    // One pod, so the pod runner's per-server counter sees every request: any 4 consecutive requests hold one 500.
    for (const obj of [replicaSet('v4', 1, { image: `registry.example/${APP}:v4-err-25-slow-20` }), service('v4')]) await serverSideApply(obj);
    await waitFor('the v4 pod Ready', async () => (await readyPods('v4')) === 1);
    await applyRoute({ v4: 100 });
    await waitTraffic('traffic to reach v4', Date.now(), (last) => last.length >= 4 && last.slice(-4).every((a) => a.revision === 'v4'));
    const t0 = Date.now();
    const counts = await send(400, 4);
    const perRequestMs = ((Date.now() - t0) * 4) / 400;
    console.log(`traffic-lab: :err-25-slow-20 → ${JSON.stringify(counts)}, ${perRequestMs.toFixed(1)} ms per request (4 at a time)`);
    expect(counts).toEqual({ 'v4 200': 300, 'v4 500': 100 });
    // A floor the pod runner enforces (setTimeout), not a speed expectation; a timer may fire a millisecond early.
    expect(perRequestMs).toBeGreaterThanOrEqual(18);
  });
});
