/**
 * bench/soak: the agent (compiled `edctl agent`, a child process) under a fleet of N ExtendedDeployments × R regions × P
 * pods on the lab, all rolled out at once, then left idle. Prints figures; asserts nothing about time.
 *
 *   npm run bench:soak -- [--eds 500] [--regions 3] [--replicas 4] [--batch 1] [--min-ready 10] [--workers 2]
 *                         [--idle-seconds 600] [--rss-every 15] [--rollout-timeout 3600]
 *
 * The fleet, the bench nodes (own kwok nodes, tainted) and the run's setup and cleanup are bench/agent's
 * (lab-kit.ts, rollout-fleet.ts). Beta groups of `--batch` pods, scaleOutPriority, no gates.
 *
 * Figures:
 * - completion: from the first write of the rollout (v2 applied to every ExtendedDeployment) until every one is Healthy
 *   with exactly its pods, all Ready at the new revision; against the planned minimum, the groups core's
 *   simulateRollout plans × minReadySeconds (each group's pods must stay available that long before the next group
 *   starts: no agent can be faster), and their ratio;
 * - agent CPU (user + system seconds from /proc, and the mean cores used) and RSS (VmHWM, VmRSS) over the rollout;
 * - API requests, from the agent's own counter (extendeddeployment_agent_api_requests_total), per rollout;
 * - queue latency: extendeddeployment_agent_queue_wait_seconds observed during the rollout (p50, p99, mean);
 * - idle: RSS sampled every `--rss-every` seconds for `--idle-seconds` once everything is Healthy; the least-squares
 *   slope (MiB per minute) and the change first → last; writes other than Lease renewals.
 */
import { startFromRender } from '../core/simulate/from-render.js';
import { simulateRollout } from '../core/simulate/simulate.js';
import {
  AgentChild,
  ED_CONTROLLER,
  QUEUE_WAIT,
  diffCounts,
  histogram,
  histogramDelta,
  histogramQuantile,
  isLease,
  isWrite,
  metricValue,
  requestCounts,
  sum,
} from './agent-child.js';
import { benchFlags, integerFlag, runBench } from './command-line.js';
import { BenchRun, PODS_PER_NODE, log, sleep } from './lab-kit.js';
import { applyFleet, FLEET_SHAPE_FLAGS, fleetObjects, Observer, waitFleet } from './rollout-fleet.js';

interface Options {
  readonly eds: number;
  readonly regions: number;
  readonly replicas: number;
  readonly batch: number;
  readonly minReady: number;
  readonly workers: number;
  readonly idleSeconds: number;
  readonly rssEvery: number;
  readonly rolloutTimeoutSeconds: number;
}

function parseOptions(argv: readonly string[]): Options {
  const values = benchFlags(argv, {
    ...FLEET_SHAPE_FLAGS,
    'min-ready': { type: 'string' },
    workers: { type: 'string' },
    'idle-seconds': { type: 'string' },
    'rss-every': { type: 'string' },
    'rollout-timeout': { type: 'string' },
  });
  const int = (flag: keyof typeof values, fallback: number, min = 1) => integerFlag(flag, values[flag], fallback, min);
  return {
    eds: int('eds', 500),
    regions: int('regions', 3),
    replicas: int('replicas', 4),
    batch: int('batch', 1),
    minReady: int('min-ready', 10, 0),
    workers: int('workers', 2),
    idleSeconds: int('idle-seconds', 600, 0),
    rssEvery: int('rss-every', 15),
    rolloutTimeoutSeconds: int('rollout-timeout', 3600),
  };
}

/** Least-squares slope of y over x. */
function slope(points: readonly (readonly [number, number])[]): number {
  const n = points.length;
  if (n < 2) return Number.NaN;
  const mx = points.reduce((s, [x]) => s + x, 0) / n;
  const my = points.reduce((s, [, y]) => s + y, 0) / n;
  const sxy = points.reduce((s, [x, y]) => s + (x - mx) * (y - my), 0);
  const sxx = points.reduce((s, [x]) => s + (x - mx) ** 2, 0);
  return sxx === 0 ? Number.NaN : sxy / sxx;
}

async function main(argv: readonly string[]): Promise<void> {
  const o = parseOptions(argv);
  const started = Date.now();
  const pods = o.eds * o.regions * o.replicas;
  const nodesPerRegion = Math.ceil((o.eds * (o.replicas + o.batch) * 1.1) / PODS_PER_NODE);
  const nodeCount = nodesPerRegion * o.regions;
  const run = await BenchRun.open('soak');
  const { api, runId, ns } = run;
  log(`run ${runId}: ${o.eds} ExtendedDeployments × ${o.regions} regions × ${o.replicas} pods = ${pods} pods on ${nodeCount} bench nodes`);
  const shape = { ...o, minReadySeconds: o.minReady };
  const v1 = fleetObjects(runId, ns, shape, 'registry.example/soak:1');
  const v2 = fleetObjects(runId, ns, shape, 'registry.example/soak:2');

  // The planned minimum, from core's simulation of one ExtendedDeployment (they are all alike).
  const sample = v2.eds[0]!;
  const from = v1.eds[0]!;
  const sim = simulateRollout(
    startFromRender(
      sample,
      (name) => {
        const old = from.regions.find((r) => r.name === name)!;
        return { replicas: old.replicas, running: { [old.revision]: old.replicas } };
      },
      from,
    ),
  );
  const plannedSeconds = sim.totalGroups * o.minReady;

  let agent: AgentChild | undefined;
  let observer: Observer | undefined;
  try {
    await run.setUp(nodeCount, o.regions);
    for (const region of v1.regions) await api.apply(region, 'deployregions', false);
    log(`setup: ${nodeCount} nodes Ready, namespace ${ns} (${((Date.now() - started) / 1000).toFixed(0)} s)`);
    agent = new AgentChild(run.agentArgs(o.workers));
    await agent.waitLeading(60_000);
    observer = new Observer(api, ns);
    await observer.synced();

    const t1 = Date.now();
    await applyFleet(api, v1.eds);
    if (!(await waitFleet(observer, v1.eds, 'v1', o.rolloutTimeoutSeconds * 1000))) throw new Error('v1 never became Healthy');
    const v1Seconds = (Date.now() - t1) / 1000;
    await sleep(3000);

    // ---- the rollout, every ExtendedDeployment at once
    const before = await agent.metrics();
    const cpuBefore = agent.cpuSeconds();
    const t2 = Date.now();
    await applyFleet(api, v2.eds);
    const applySeconds = (Date.now() - t2) / 1000;
    log(`v2 applied in ${applySeconds.toFixed(1)} s; rolling out`);
    const finished = await waitFleet(observer, v2.eds, 'v2', o.rolloutTimeoutSeconds * 1000);
    const rolloutSeconds = (Date.now() - t2) / 1000;
    const cpu = agent.cpuSeconds() - cpuBefore;
    const after = await agent.metrics();
    const memory = agent.memory();
    const requests = diffCounts(requestCounts(after), requestCounts(before));
    const wait = histogramDelta(histogram(after, QUEUE_WAIT, ED_CONTROLLER), histogram(before, QUEUE_WAIT, ED_CONTROLLER));
    const reconciles =
      metricValue(after, 'extendeddeployment_agent_reconcile_duration_seconds_count', `${ED_CONTROLLER},result="synced"`) -
      metricValue(before, 'extendeddeployment_agent_reconcile_duration_seconds_count', `${ED_CONTROLLER},result="synced"`);

    // ---- idle: RSS over time
    log(`idle for ${o.idleSeconds} s, RSS every ${o.rssEvery} s`);
    const idleStart = Date.now();
    const idleBefore = requestCounts(await agent.metrics());
    const cpuIdleBefore = agent.cpuSeconds();
    const rss: [number, number][] = [];
    for (;;) {
      const at = (Date.now() - idleStart) / 60_000;
      rss.push([at, agent.memory().nowMiB]);
      if (Date.now() - idleStart >= o.idleSeconds * 1000) break;
      await sleep(Math.min(o.rssEvery * 1000, Math.max(0, idleStart + o.idleSeconds * 1000 - Date.now())));
    }
    const idleRequests = diffCounts(requestCounts(await agent.metrics()), idleBefore);
    const idleCpu = agent.cpuSeconds() - cpuIdleBefore;
    const idleWrites = sum(idleRequests, (k) => isWrite(k) && !isLease(k));

    const per = (n: number) => (n / o.eds).toFixed(1);
    const quantileMs = (q: number) => {
      const v = histogramQuantile(wait, q);
      const top = Math.max(...[...wait.buckets.keys()].filter(Number.isFinite));
      return v >= top ? `> ${top * 1000} ms (above the largest bucket)` : `${(v * 1000).toFixed(0)} ms`;
    };
    const rssValues = rss.map(([, v]) => v);
    const s = (v: number) => v.toFixed(1);
    console.log(
      [
        `bench:soak — ${o.eds} ExtendedDeployments × ${o.regions} regions × ${o.replicas} pods = ${pods} pods; Beta, batch ${o.batch}, scaleOutPriority, minReadySeconds ${o.minReady}; agent --workers ${o.workers}; ${nodeCount} bench kwok nodes`,
        `  v1 sync (ReplicaSets 1 → ${o.replicas}, ${pods} pods Ready): ${s(v1Seconds)} s`,
        `  rollout of all ${o.eds} at once: applied in ${s(applySeconds)} s, complete after ${s(rolloutSeconds)} s${finished ? '' : ' (TIMED OUT: figures are partial)'}`,
        `  planned minimum: ${sim.totalGroups} groups × minReadySeconds ${o.minReady} = ${plannedSeconds} s (core's simulateRollout); ratio ${(rolloutSeconds / plannedSeconds).toFixed(2)}× the plan`,
        `  agent CPU during the rollout: ${s(cpu)} s (${(cpu / rolloutSeconds).toFixed(2)} cores on average); RSS peak (VmHWM) ${memory.peakMiB.toFixed(0)} MiB, at the end ${memory.nowMiB.toFixed(0)} MiB`,
        `  API requests: ${sum(requests, (k) => !isLease(k))} (${per(sum(requests, (k) => !isLease(k)))} per rollout; writes ${per(sum(requests, (k) => isWrite(k) && !isLease(k)))}, reads ${per(sum(requests, (k) => !isWrite(k) && !isLease(k)))}); Lease ${sum(requests, isLease)}`,
        `    by verb and resource: ${[...requests]
          .filter(([k]) => !isLease(k))
          .sort((a, b) => b[1] - a[1])
          .map(([k, v]) => `${k} ${v}`)
          .join(', ')}`,
        `  queue latency (${QUEUE_WAIT}, ${wait.count} waits): p50 ${quantileMs(0.5)}, p99 ${quantileMs(0.99)}, mean ${((wait.sum / Math.max(1, wait.count)) * 1000).toFixed(0)} ms; reconciles ${reconciles}`,
        `  idle ${o.idleSeconds} s: RSS ${s(rssValues[0] ?? Number.NaN)} → ${s(rssValues[rssValues.length - 1] ?? Number.NaN)} MiB (min ${s(Math.min(...rssValues))}, max ${s(Math.max(...rssValues))}, ${rss.length} samples), slope ${slope(rss).toFixed(3)} MiB/min; CPU ${s(idleCpu)} s; writes besides the Lease ${idleWrites}${
          idleWrites > 0
            ? ` (${[...idleRequests]
                .filter(([k]) => isWrite(k) && !isLease(k))
                .map(([k, v]) => `${k} ${v}`)
                .join(', ')})`
            : ''
        }; agent warnings/errors ${agent.warnings}`,
      ].join('\n'),
    );
  } finally {
    observer?.stop();
    await agent?.stop();
    await run.tearDown(v1.regions);
    log(`done in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  }
}

await runBench(import.meta.url, main);
