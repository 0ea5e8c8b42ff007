// The traffic lab: what the traffic-shifting suites need next to a lab running in its own network namespace
// (`npm run lab:up -- --traffic`, or startTrafficLab() from a suite):
//
//   Gateway API v1.4.0 standard CRDs      gateway-api.ts
//   pod-runner                            pod-runner.ts: HTTP on every running pod's IP and port
//   traefik                               traefik.ts: GatewayClass `traefik`, Gateway gateways/public, listener http :8000
//   prometheus                            prometheus.ts: scrapes Traefik and the pod runner every second
//   netns-traffic, netns-host-traffic     the bridge to the host (netns.ts): Traefik's web and metrics entry points,
//                                         Prometheus and the pod runner's metrics on free 127.0.0.1 ports of the host
//
// The host ports are in <labDir>/traffic.json (trafficState()); `lab:down` stops these processes with the rest.
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { clusterDir, ensureGatewayBinaries } from './build.js';
import { installGatewayApiCrds } from './gateway-api.js';
import { applyServerSide, kubectl, waitHttp } from './gitops.js';
import { freePorts, kubeconfigPath, labDir, livePid, processLogPath, readState, stopProcess } from './lab.js';
import { bridgeToHost, startTsxProcess } from './netns.js';
import { PROMETHEUS, instantQuery, startPrometheus, type ScrapeTargets } from './prometheus.js';
import { GATEWAY_NAME, GATEWAY_NAMESPACE, TRAEFIK, WEB_PORT, gatewayManifests, startTraefik } from './traefik.js';

type Log = (s: string) => void;
const defaultLog: Log = (s) => console.error(s);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export const POD_RUNNER = 'pod-runner';
const BRIDGE = 'traffic';
export const TRAFFIC_PROCESSES = [POD_RUNNER, TRAEFIK, PROMETHEUS, `netns-${BRIDGE}`, `netns-host-${BRIDGE}`] as const;

/** Where the host reaches the traffic processes (127.0.0.1 ports, bridged into the namespace). */
export interface TrafficState {
  /** Traefik's `web` entry point (8000 inside the namespace). */
  readonly web: number;
  /** Traefik's `metrics` entry point: /metrics, /ping. */
  readonly traefikMetrics: number;
  readonly prometheus: number;
  /** The pod runner's own /metrics. */
  readonly podRunnerMetrics: number;
}

const stateFile = () => join(labDir(), 'traffic.json');

/** The running traffic lab's ports, or undefined when it is not (completely) running. */
export function trafficState(): TrafficState | undefined {
  if (!existsSync(stateFile()) || TRAFFIC_PROCESSES.some((p) => livePid(p) === undefined)) return undefined;
  return JSON.parse(readFileSync(stateFile(), 'utf8')) as TrafficState;
}

/** Base URLs on the host. */
export const webUrl = (s: TrafficState) => `http://127.0.0.1:${s.web}`;
export const prometheusUrl = (s: TrafficState) => `http://127.0.0.1:${s.prometheus}`;

/**
 * Starts the traffic processes next to a running lab that has its own network namespace, or returns the running ones.
 * Builds Traefik first when its cache is cold (minutes; see test/cluster/README.md).
 */
export async function startTrafficLab(log: Log = defaultLog): Promise<TrafficState> {
  const lab = readState();
  if (!lab?.netNamespace) throw new Error('the traffic lab needs the lab in its own network namespace: `npm run lab:up -- --traffic`');
  const running = trafficState();
  if (running) return running;
  for (const p of TRAFFIC_PROCESSES) await stopProcess(p, log);
  const t0 = Date.now();
  // The long part on a cold cache, before anything starts (startTraefik finds it built).
  await ensureGatewayBinaries('traefik', log);
  await installGatewayApiCrds(log);
  applyServerSide({ objects: gatewayManifests() });

  const [web, traefikMetrics, prometheus, podRunnerMetrics] = (await freePorts(4)) as [number, number, number, number];
  const state: TrafficState = { web, traefikMetrics, prometheus, podRunnerMetrics };
  await bridgeToHost(BRIDGE, [
    { host: web, ns: WEB_PORT },
    { host: traefikMetrics, ns: traefikMetrics },
    { host: prometheus, ns: prometheus },
    { host: podRunnerMetrics, ns: podRunnerMetrics },
  ]);
  startTsxProcess(POD_RUNNER, join(clusterDir, 'pod-runner.ts'), ['--metrics', `127.0.0.1:${podRunnerMetrics}`], { KUBECONFIG: kubeconfigPath() });
  await startTraefik(traefikMetrics, log);
  startPrometheus(prometheus, scrapeTargets(state), log);

  await waitHttp(POD_RUNNER, `http://127.0.0.1:${podRunnerMetrics}/healthz`, 60_000, processLogPath(POD_RUNNER));
  await waitHttp(TRAEFIK, `http://127.0.0.1:${traefikMetrics}/ping`, 60_000, processLogPath(TRAEFIK));
  await waitHttp(PROMETHEUS, `http://127.0.0.1:${prometheus}/-/ready`, 60_000, processLogPath(PROMETHEUS));
  await waitGatewayProgrammed(60_000);
  await waitTargetsUp(prometheusUrl(state), 2, 30_000);
  writeFileSync(stateFile(), `${JSON.stringify(state, null, 2)}\n`);
  log(
    `lab: traffic lab up in ${((Date.now() - t0) / 1000).toFixed(1)} s: gateway ${webUrl(state)} (Traefik web :${WEB_PORT} in the namespace), ` +
      `Prometheus ${prometheusUrl(state)}`,
  );
  return state;
}

/** What the lab's Prometheus scrapes: Traefik's metrics entry point and the pod runner's /metrics. */
function scrapeTargets(state: TrafficState): ScrapeTargets {
  return { traefik: [`127.0.0.1:${state.traefikMetrics}`], [POD_RUNNER]: [`127.0.0.1:${state.podRunnerMetrics}`] };
}

/**
 * Stops the traffic lab's Prometheus, as an outage of the monitoring an analysis queries: its host port stays bridged,
 * so a query reaches the bridge and gets no answer from Prometheus. The rest of the traffic lab keeps running;
 * {@link restartLabPrometheus} brings it back.
 */
export async function stopLabPrometheus(log: Log = defaultLog): Promise<void> {
  await stopProcess(PROMETHEUS, log);
}

/**
 * Starts the traffic lab's Prometheus again after {@link stopLabPrometheus} (nothing when it runs): on the same port,
 * with the same targets and fresh data, once it is ready and has scraped every target.
 */
export async function restartLabPrometheus(log: Log = defaultLog): Promise<void> {
  if (livePid(PROMETHEUS) !== undefined) return;
  if (!existsSync(stateFile())) throw new Error('the traffic lab is not running (no traffic.json)');
  const state = JSON.parse(readFileSync(stateFile(), 'utf8')) as TrafficState;
  startPrometheus(state.prometheus, scrapeTargets(state), log);
  await waitHttp(PROMETHEUS, `${prometheusUrl(state)}/-/ready`, 60_000, processLogPath(PROMETHEUS));
  await waitTargetsUp(prometheusUrl(state), 2, 30_000);
}

/** Stops the traffic processes (the lab keeps running). */
export async function stopTrafficLab(log: Log = defaultLog): Promise<void> {
  for (const p of TRAFFIC_PROCESSES) await stopProcess(p, log);
  rmSync(stateFile(), { force: true });
}

/** Until the lab's Gateway is Accepted and Programmed by Traefik. */
export async function waitGatewayProgrammed(timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const gw = JSON.parse(kubectl(['get', 'gateway', '-n', GATEWAY_NAMESPACE, GATEWAY_NAME, '-o', 'json'])) as {
      status?: { conditions?: { type: string; status: string }[] };
    };
    const c = gw.status?.conditions ?? [];
    const conditions = c.map((x) => `${x.type}=${x.status}`).join(', ');
    if (['Accepted', 'Programmed'].every((t) => c.some((x) => x.type === t && x.status === 'True'))) return;
    if (Date.now() > deadline)
      throw new Error(`Gateway ${GATEWAY_NAMESPACE}/${GATEWAY_NAME} not Accepted and Programmed within ${timeoutMs / 1000} s (${conditions || 'no status'})`);
    await sleep(250);
  }
}

/** Until Prometheus has scraped every target successfully once (`up == 1`). */
async function waitTargetsUp(baseUrl: string, targets: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    let last: string;
    try {
      const up = await instantQuery(baseUrl, 'up == 1');
      if (up.length >= targets) return;
      last = `${up.length} of ${targets} targets up`;
    } catch (e) {
      last = (e as Error).message;
    }
    if (Date.now() > deadline) throw new Error(`Prometheus targets not up within ${timeoutMs / 1000} s (${last})`);
    await sleep(250);
  }
}
