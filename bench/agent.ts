/**
 * bench/agent: the agent (the compiled `edctl agent`, as a child process) driving N ExtendedDeployments × R regions × P
 * pods on the lab cluster, all rolling out at once. Prints figures; asserts nothing about time.
 *
 *   npm run bench:agent -- [--eds 200] [--regions 3] [--replicas 5] [--batch 2] [--workers <agent default>] [--idle-seconds 60]
 *                          [--rollout-timeout 600] [--nodes auto] [--agent-log <file>]
 *
 * Setup: the lab is reused when healthy, else started with its own CLI (`tsx test/cluster/cli.ts up`). The bench adds
 * its own kwok nodes (110 pods each, enough for desired + surge of every region), labelled like the lab's nodes
 * (hostname, os, arch, zone, pool, type, lab.extendeddeployment.io/kwok=managed so kwok runs their kubelets) plus
 * bench.extendeddeployment.io/agent=<run id>, and tainted with that key so nothing else lands on them; its R
 * DeployRegions select only them (run id + a bench zone). Everything lives in one namespace; ExtendedDeployments use
 * Beta groups of `--batch` pods, scaleOutPriority, minReadySeconds 1, no gates. Nodes, DeployRegions and the namespace
 * are deleted at the end.
 *
 * Phases: (1) v1 applied like a GitOps tool would (server-side apply of the rendered ExtendedDeployments and
 * ReplicaSets; the agent scales each ReplicaSet from Kubernetes' default 1 to its count); (2) once every pod is Ready,
 * v2 (a new image) is applied to every ExtendedDeployment at once and rolled out; (3) then idle.
 *
 * Figures:
 * (a) group → next group delay. A group is available when, in every region, the k-th new-revision pod is available,
 *     k being the group's target. The next group's first write is the status write that records it (the agent records
 *     a group before acting on it). The figure the target is judged on is measured at the API server alone, from its
 *     audit log (microseconds; the lab audits only status writes of ExtendedDeployments and pods): from the Ready
 *     condition's lastTransitionTime (whole seconds) + minReadySeconds, the instant Kubernetes' own rule (and the
 *     agent) call the pod available, but never before the pod status write that made it Ready completed (kwok may write
 *     it late in that second or after it), to the API server completing the status write. Without an audit log (a lab
 *     started before it had one), the bench's watch times are used instead. Also shown, as the bench's watch saw them:
 *     "by condition" = the same availability, never before the bench saw the pod Ready, to the bench seeing the write
 *     (its own lag included whenever it is busy);
 *     "observed" = the bench saw the pod Ready, + minReadySeconds: up to a second later whenever the watch was late,
 *     so it flatters the agent. Also shown: its first ReplicaSet write (spec.replicas, ordered after that status write by
 *     resourceVersion: under scaleOutPriority the old pods the previous group replaced leave first) and its first
 *     ReplicaSet increase (its new pods asked for). p50/p99 over every group transition of every rollout; the judged
 *     figure also split by whether the group became available while the bench was still applying v2.
 *     The rest of a transition is printed apart: (a') the first ReplicaSet write → the previous group's k old pods seen
 *     terminating in every region (the ReplicaSet controller's deletions, not the agent); (a2) those old pods gone → the
 *     increase (the agent again, once the surge budget has room). And each rollout's duration, v2 applied → Healthy.
 * (b) API requests per rollout: the agent's own client-side counter (extendeddeployment_agent_api_requests_total,
 *     every request its API clients send, watches included, by verb and resource) read from its /metrics before and
 *     after the rollouts; Lease traffic is time-driven and shown apart.
 * (c) the agent's peak RSS (VmHWM of /proc/<pid>/status) after the rollouts, and its writes during `--idle-seconds` of
 *     idle once everything is Healthy (Lease renewals shown apart).
 */
import { availableParallelism } from 'node:os';
import type { RenderedExtendedDeployment } from '../core/render.js';
import { groupTarget, regionGroups } from '../core/rollout/groups.js';
import { DEFAULT_WORKERS } from '../agent/options.js';
import {
  AgentChild,
  ED_CONTROLLER,
  agentNodeOptions,
  agentShare,
  clusterRequestCounts,
  diffCounts,
  histogramQuantile,
  isLease,
  isWrite,
  metricValue,
  requestCounts,
  sum,
  type HistogramSnapshot,
} from './agent-child.js';
import { benchFlags, positiveInt, runBench } from './command-line.js';
import { BenchRun, PODS_PER_NODE, log, percentile, relists, sleep, stats, statusWritesCompleted } from './lab-kit.js';
import { applyFleet, FLEET_SHAPE_FLAGS, fleetObjects, Observer, waitFleet, type PodSeen } from './rollout-fleet.js';

// ---------------------------------------------------------------------------------------------------------------
// options

interface Options {
  readonly eds: number;
  readonly regions: number;
  readonly replicas: number;
  readonly batch: number;
  /** Undefined: the agent's default. */
  readonly workers: number | undefined;
  readonly idleSeconds: number;
  readonly rolloutTimeoutSeconds: number;
  readonly nodes: number | undefined;
  /** Write the agent's log lines to this file. */
  readonly agentLog: string | undefined;
}

function parseOptions(argv: readonly string[]): Options {
  const values = benchFlags(argv, {
    ...FLEET_SHAPE_FLAGS,
    workers: { type: 'string' },
    'idle-seconds': { type: 'string' },
    'rollout-timeout': { type: 'string' },
    nodes: { type: 'string' },
    'agent-log': { type: 'string' },
  });
  return {
    eds: positiveInt('eds', values.eds, 200),
    regions: positiveInt('regions', values.regions, 3),
    replicas: positiveInt('replicas', values.replicas, 5),
    batch: positiveInt('batch', values.batch, 2),
    workers: values.workers === undefined ? undefined : positiveInt('workers', values.workers, 1),
    idleSeconds: positiveInt('idle-seconds', values['idle-seconds'], 60),
    rolloutTimeoutSeconds: positiveInt('rollout-timeout', values['rollout-timeout'], 600),
    nodes: values.nodes === undefined || values.nodes === 'auto' ? undefined : positiveInt('nodes', values.nodes, 1),
    agentLog: values['agent-log'],
  };
}

const MIN_READY_SECONDS = 1;
const mib = (bytes: number) => (bytes / 2 ** 20).toFixed(0);

interface Transition {
  ed: string;
  group: number;
  /** Group available: observed Ready + minReadySeconds. */
  availableObserved: number;
  /** Group available by the Ready condition's time + minReadySeconds (never before it was seen Ready). */
  availableByCondition: number;
  /**
   * Group available at the API server: the Ready condition's time + minReadySeconds (Kubernetes' rule, which the agent
   * follows), never before the write that made the pod Ready completed (audit log; without it, the bench saw it).
   */
  availableAtServer: number;
  /** The status write recording the next group (its first write), as the bench's watch saw it. */
  statusAt: number;
  /** The same write as the API server completed it (its audit log); undefined without one. */
  statusWrittenAt: number | undefined;
  /** When the agent decided to start the next group (its status.lastGroupStartTime, the agent's clock). */
  decidedAt: number;
  /** The first ReplicaSet spec.replicas change after that status write, in any region. */
  firstScaleAt: number | undefined;
  /** The first ReplicaSet increase after that status write, in any region: the next group's new pods asked for. */
  scaleUpAt: number | undefined;
  /** Per region, the rest of the transition. */
  regions: RegionTransition[];
}

/** One region's part of a transition after the status write. */
interface RegionTransition {
  /** Its first ReplicaSet write after the status write (the old pods the previous group replaced leave first). */
  firstScaleAt: number | undefined;
  /** When the previous group's k-th old pod was seen terminating: the ReplicaSet controller's deletions. */
  oldGoneAt: number | undefined;
  /** Its first ReplicaSet increase after the status write. */
  scaleUpAt: number | undefined;
}

/** `ed/region` → when each of the region's old pods (not at the rollout's target revision) was first seen terminating. */
function oldPodsGone(obs: Observer, eds: readonly RenderedExtendedDeployment[]): Map<string, number[]> {
  const goneOld = new Map<string, number[]>();
  const targets = new Map<string, string>(eds.flatMap((ed) => ed.regions.map((r) => [`${ed.parsed.metadata.name}/${r.name}`, r.revision] as const)));
  for (const g of obs.gone.values()) {
    const key = `${g.ed}/${g.region}`;
    if (targets.has(key) && g.revision !== targets.get(key)) goneOld.set(key, [...(goneOld.get(key) ?? []), g.at]);
  }
  return goneOld;
}

/** When pod `p` is available by Kubernetes' rule, as soon as the cluster shows it Ready (see the header). */
const availableByCondition = (p: PodSeen) => Math.max(p.readyAt!, (p.readyLtt ?? p.readyAt!) + MIN_READY_SECONDS * 1000);

/** The k-th instant of `instants` (ascending), or undefined when there are fewer. */
const kth = (instants: readonly number[], k: number) => [...instants].sort((a, b) => a - b)[k - 1];

/** Every group → next group transition of the rollout to `eds` (see the header for the definitions). */
function transitions(
  obs: Observer,
  eds: readonly RenderedExtendedDeployment[],
  podsAtTarget: Map<string, PodSeen[]>,
  written: ReadonlyMap<string, number>,
): Transition[] {
  const out: Transition[] = [];
  const minReadyMs = MIN_READY_SECONDS * 1000;
  const goneOld = oldPodsGone(obs, eds);
  const first = (instants: readonly (number | undefined)[]) => instants.filter((t): t is number => t !== undefined).sort((a, b) => a - b)[0];
  for (const ed of eds) {
    const name = ed.parsed.metadata.name;
    const strategy = ed.parsed.spec.strategy;
    const groups = Math.max(...ed.regions.map((r) => regionGroups(strategy, r.replicas)));
    const statuses = (obs.statuses.get(name) ?? []).filter((s) => s.revision === ed.rolloutRevision);
    for (let g = 1; g < groups; g++) {
      const status = statuses.find((s) => s.group >= g + 1);
      if (!status) continue;
      let availableObserved = 0;
      let availableByCond = 0;
      let availableAtServer = 0;
      const regions: RegionTransition[] = [];
      for (const region of ed.regions) {
        const k = groupTarget(strategy, region.replicas, g);
        const pods = (podsAtTarget.get(`${name}/${region.name}`) ?? []).filter((p) => p.readyAt !== undefined);
        const observed = pods.map((p) => p.readyAt! + minReadyMs).sort((a, b) => a - b);
        const byCondition = pods.map(availableByCondition).sort((a, b) => a - b);
        if (observed.length < k) break;
        availableObserved = Math.max(availableObserved, observed[k - 1]!);
        availableByCond = Math.max(availableByCond, byCondition[k - 1]!);
        const atServer = pods.map((p) => Math.max((p.readyLtt ?? p.readyAt!) + minReadyMs, written.get(`pods/${p.name}/${p.readyRv}`) ?? p.readyAt!));
        availableAtServer = Math.max(availableAtServer, atServer.sort((a, b) => a - b)[k - 1]!);
        const after = (obs.scales.get(`${name}-${region.name}`) ?? []).filter((s) => s.rv > status.rv).sort((a, b) => a.rv - b.rv);
        regions.push({
          firstScaleAt: after[0]?.at,
          oldGoneAt: kth(goneOld.get(`${name}/${region.name}`) ?? [], k),
          scaleUpAt: after.find((s) => s.to > s.from)?.at,
        });
      }
      if (regions.length < ed.regions.length) continue;
      out.push({
        ed: name,
        group: g,
        availableObserved,
        availableByCondition: availableByCond,
        availableAtServer,
        statusAt: status.at,
        statusWrittenAt: written.get(`extendeddeployments/${name}/${status.rv}`),
        decidedAt: status.groupStart,
        firstScaleAt: first(regions.map((r) => r.firstScaleAt)),
        scaleUpAt: first(regions.map((r) => r.scaleUpAt)),
        regions,
      });
    }
  }
  return out;
}

/** `to − from` of every item where both instants are known (ms). */
function spans<T>(items: readonly T[], from: (item: T) => number | undefined, to: (item: T) => number | undefined): number[] {
  return items.flatMap((item) => {
    const [a, b] = [from(item), to(item)];
    return a === undefined || b === undefined ? [] : [b - a];
  });
}

/** Each ExtendedDeployment's rollout, from `since` to the first status the bench saw Healthy at `eds`' revision (ms). */
function rolloutDurations(obs: Observer, eds: readonly RenderedExtendedDeployment[], since: number): number[] {
  return eds.flatMap((ed) => {
    const healthy = (obs.statuses.get(ed.parsed.metadata.name) ?? []).find((s) => s.revision === ed.rolloutRevision && s.phase === 'Healthy' && s.at >= since);
    return healthy ? [healthy.at - since] : [];
  });
}

// ---------------------------------------------------------------------------------------------------------------

// main

async function main(argv: readonly string[]): Promise<void> {
  const o = parseOptions(argv);
  const started = Date.now();
  const pods = o.eds * o.regions * o.replicas;
  const peakPods = o.eds * o.regions * (o.replicas + o.batch);
  const nodesPerRegion = o.nodes ? Math.ceil(o.nodes / o.regions) : Math.ceil((o.eds * (o.replicas + o.batch) * 1.1) / PODS_PER_NODE);
  const nodeCount = nodesPerRegion * o.regions;
  const run = await BenchRun.open('agent');
  const { api, runId, ns } = run;
  log(
    `run ${runId}: ${o.eds} ExtendedDeployments × ${o.regions} regions × ${o.replicas} pods = ${pods} pods (up to ${peakPods} with surge) on ${nodeCount} bench nodes`,
  );
  const shape = { ...o, minReadySeconds: MIN_READY_SECONDS };
  const v1 = fleetObjects(runId, ns, shape, 'registry.example/bench:1');
  const v2 = fleetObjects(runId, ns, shape, 'registry.example/bench:2');
  let agent: AgentChild | undefined;
  let observer: Observer | undefined;
  try {
    await run.setUp(nodeCount, o.regions);
    for (const region of v1.regions) await api.apply(region, 'deployregions', false);
    log(`setup: ${nodeCount} nodes Ready, namespace ${ns}, ${o.regions} DeployRegions (${((Date.now() - started) / 1000).toFixed(0)} s)`);

    agent = new AgentChild(run.agentArgs(o.workers), o.agentLog);
    await agent.waitLeading(60_000);
    observer = new Observer(api, ns);
    await observer.synced();

    // ---- phase 1: v1 synced, the agent scales every ReplicaSet from 1 to its count
    const t1 = Date.now();
    await applyFleet(api, v1.eds);
    log(`v1 applied (${v1.eds.length} ExtendedDeployments + ${v1.eds.length * o.regions} ReplicaSets) in ${((Date.now() - t1) / 1000).toFixed(1)} s`);
    await waitFleet(observer, v1.eds, 'v1', o.rolloutTimeoutSeconds * 1000);
    const v1Seconds = (Date.now() - t1) / 1000;
    await sleep(3000);

    // ---- phase 2: the rollout to v2, every ExtendedDeployment at once
    const before = requestCounts(await agent.metrics());
    const reconcilesBefore = await agent.metrics();
    const clusterBefore = clusterRequestCounts(await api.text('/metrics'));
    const cpuBefore = agent.cpuSeconds();
    const t2 = Date.now();
    await applyFleet(api, v2.eds);
    const applySeconds = (Date.now() - t2) / 1000;
    log(`v2 applied in ${applySeconds.toFixed(1)} s; rolling out`);
    const finished = await waitFleet(observer, v2.eds, 'v2', o.rolloutTimeoutSeconds * 1000);
    const rolloutSeconds = (Date.now() - t2) / 1000;
    const agentCpu = agent.cpuSeconds() - cpuBefore;
    const afterMetrics = await agent.metrics();
    const cluster = diffCounts(clusterRequestCounts(await api.text('/metrics')), clusterBefore);
    const during = diffCounts(requestCounts(afterMetrics), before);
    const memory = agent.memory();

    // ---- phase 3: idle
    await sleep(5000);
    const idleBefore = requestCounts(await agent.metrics());
    log(`idle for ${o.idleSeconds} s`);
    await sleep(o.idleSeconds * 1000);
    const idleAfterMetrics = await agent.metrics();
    const idle = diffCounts(requestCounts(idleAfterMetrics), idleBefore);
    const memoryIdle = agent.memory();

    // ---- figures
    const podsAtTarget = new Map<string, PodSeen[]>();
    const targetOf = new Map<string, string>(v2.eds.flatMap((ed) => ed.regions.map((r) => [`${ed.parsed.metadata.name}/${r.name}`, r.revision] as const)));
    for (const p of observer.pods.values()) {
      const key = `${p.ed}/${p.region}`;
      if (p.revision !== targetOf.get(key)) continue;
      const list = podsAtTarget.get(key) ?? [];
      list.push(p);
      podsAtTarget.set(key, list);
    }
    const written = statusWritesCompleted(ns);
    const ts = transitions(observer, v2.eds, podsAtTarget, written);
    const debugEd = process.env['BENCH_DEBUG_ED'];
    if (debugEd)
      dumpTimeline(
        observer,
        v2.eds.find((e) => e.parsed.metadata.name === debugEd),
        podsAtTarget,
        t2,
        ts,
      );
    dumpSlowest(ts, Number(process.env['BENCH_SLOWEST'] ?? 0), t2);
    const durations = rolloutDurations(observer, v2.eds, t2);
    const expectedTransitions = v2.eds.reduce((s, ed) => s + Math.max(...ed.regions.map((r) => regionGroups(ed.parsed.spec.strategy, r.replicas))) - 1, 0);
    const reconciles = (m: string, result = 'synced') =>
      metricValue(m, 'extendeddeployment_agent_reconcile_duration_seconds_count', `${ED_CONTROLLER},result="${result}"`);
    const nStale = (reconciles(afterMetrics, 'stale') || 0) - (reconciles(reconcilesBefore, 'stale') || 0);
    const reconcileSeconds = (m: string) => metricValue(m, 'extendeddeployment_agent_reconcile_duration_seconds_sum', `${ED_CONTROLLER},result="synced"`);
    const nReconciles = reconciles(afterMetrics) - reconciles(reconcilesBefore);
    const reconcileMs = ((reconcileSeconds(afterMetrics) - reconcileSeconds(reconcilesBefore)) * 1000) / Math.max(1, nReconciles);
    const perRollout = (keep: (k: string) => boolean) => (sum(during, keep) / o.eds).toFixed(1);
    const breakdown = [...during]
      .filter(([k]) => !isLease(k))
      .sort((a, b) => b[1] - a[1])
      .map(([k, v]) => `${k} ${(v / o.eds).toFixed(2)}`);
    const idleWrites = sum(idle, (k) => isWrite(k) && !isLease(k));
    const idleLease = sum(idle, (k) => isWrite(k) && isLease(k));
    const ok = (good: boolean) => (good ? 'met' : 'NOT met');
    const delays = (from: (t: Transition) => number | undefined, to: (t: Transition) => number | undefined) => spans(ts, from, to);
    const byCondition = delays(
      (t) => t.availableByCondition,
      (t) => t.statusAt,
    );
    const regionSteps = ts.flatMap((t) => t.regions);
    const regionDelays = (from: (r: RegionTransition) => number | undefined, to: (r: RegionTransition) => number | undefined) => spans(regionSteps, from, to);
    const { queueWait: wait, synced: took } = agentShare(reconcilesBefore, afterMetrics);
    const quantiles = (h: HistogramSnapshot) => [0.5, 0.9, 0.99].map((q) => `p${q * 100} ${Math.round(histogramQuantile(h, q) * 1000)} ms`).join(', ');
    const atServer = delays(
      (t) => t.availableAtServer,
      (t) => t.statusWrittenAt,
    );
    const watchLag = [...observer.pods.values()].flatMap((p) => {
      const completed = written.get(`pods/${p.name}/${p.readyRv}`);
      return completed === undefined || p.readyAt === undefined ? [] : [p.readyAt - completed];
    });
    const judged = atServer.length > 0 ? atServer : byCondition;
    const applyEnd = t2 + applySeconds * 1000;
    const inApplyWindow = (during: boolean) =>
      delays(
        (t) => (t.availableAtServer < applyEnd === during ? t.availableAtServer : undefined),
        (t) => t.statusWrittenAt,
      );
    const applyWindow = { during: inApplyWindow(true), after: inApplyWindow(false) };
    const p99 = percentile(
      [...judged].sort((a, b) => a - b),
      99,
    );
    const p99o = percentile(
      delays(
        (t) => t.availableObserved,
        (t) => t.statusAt,
      ).sort((a, b) => a - b),
      99,
    );

    console.log(
      [
        `bench:agent — ${o.eds} ExtendedDeployments × ${o.regions} regions × ${o.replicas} pods = ${pods} pods; Beta, batch ${o.batch} (surge ${o.batch}), scaleOutPriority, minReadySeconds ${MIN_READY_SECONDS}; agent --workers ${o.workers ?? `${DEFAULT_WORKERS} (default)`}; ${nodeCount} bench kwok nodes × ${PODS_PER_NODE} pods`,
        `  v1 sync (ReplicaSets 1 → ${o.replicas}, ${pods} pods Ready): ${v1Seconds.toFixed(1)} s; v2 rollout of all ${o.eds} at once: applied in ${applySeconds.toFixed(1)} s, complete after ${rolloutSeconds.toFixed(1)} s${finished ? '' : ' (TIMED OUT: figures are partial)'}`,
        `(a) group available → next group's first write, the status write recording it (${ts.length} of ${expectedTransitions} transitions measured):`,
        `    from Ready condition time + minReadySeconds (once the Ready write completed) to the API server completing the write (audit log): ${atServer.length > 0 ? stats(atServer) : 'no audit log (restart the lab)'}`,
        `    from Ready condition time + minReadySeconds to the bench's watch seeing it: ${stats(byCondition)}`,
        `    from observed Ready + minReadySeconds:      ${stats(
          delays(
            (t) => t.availableObserved,
            (t) => t.statusAt,
          ),
        )}`,
        `    by group: ${[...new Set(ts.map((t) => t.group))]
          .map(
            (g) =>
              `${g}→${g + 1}: p50 ${Math.round(
                percentile(
                  ts
                    .filter((t) => t.group === g)
                    .map((t) => t.statusAt - t.availableByCondition)
                    .sort((a, b) => a - b),
                  50,
                ),
              )} ms`,
          )
          .join(', ')}`,
        `    split at the API server: available while the bench was still applying v2 (${applyWindow.during.length}): ${stats(applyWindow.during)}; after (${applyWindow.after.length}): ${stats(applyWindow.after)}`,
        `    target p99 < 500 ms: ${ok(p99 < 500)} (${atServer.length > 0 ? 'at the API server' : 'by condition, as the bench saw it'} ${Math.round(p99)} ms; observed ${Math.round(p99o)} ms)`,
        `    to the agent's decision (status.lastGroupStartTime; no write latency), from the same instant: ${stats(
          delays(
            (t) => (atServer.length > 0 ? t.availableAtServer : t.availableByCondition),
            (t) => t.decidedAt,
          ),
        )}`,
        `    the API server's watch delay: a pod status write that made a pod Ready completed → the bench's watch saw it: ${watchLag.length > 0 ? stats(watchLag) : 'no audit log'}`,
        `    to its first ReplicaSet write (by condition):   ${stats(
          delays(
            (t) => t.availableByCondition,
            (t) => t.firstScaleAt,
          ),
        )}`,
        `    to its first ReplicaSet increase (by condition): ${stats(
          delays(
            (t) => t.availableByCondition,
            (t) => t.scaleUpAt,
          ),
        )}`,
        `  the rest, per region (${regionSteps.length} region-transitions): (a') its first ReplicaSet write → the previous group's old pods seen terminating (the ReplicaSet controller): ${stats(
          regionDelays(
            (r) => r.firstScaleAt,
            (r) => r.oldGoneAt,
          ),
        )}`,
        `    (a2) those old pods gone → its increase (the agent): ${stats(
          regionDelays(
            (r) => r.oldGoneAt,
            (r) => r.scaleUpAt,
          ),
        )}`,
        `  rollout duration per ExtendedDeployment, v2 applied → Healthy (${durations.length}): ${stats(durations)}`,
        `  agent CPU during the rollout: ${agentCpu.toFixed(1)} s (${(agentCpu / rolloutSeconds).toFixed(2)} cores on average, of the lab's ${availableParallelism()} shared)`,
        `    reconciles during the rollout: ${nReconciles} (mean ${reconcileMs.toFixed(1)} ms each; ${quantiles(took)}, histogram buckets), and ${nStale} put off until the caches showed the agent's own writes; queue wait ${quantiles(wait)}`,
        `(b) API requests per rollout (agent's client-side counter, ${o.eds} rollouts): ${perRollout((k) => !isLease(k))} (writes ${perRollout((k) => isWrite(k) && !isLease(k))}, reads ${perRollout((k) => !isWrite(k) && !isLease(k))})`,
        `    per rollout by verb and resource: ${breakdown.join(', ')}`,
        `    Lease (time-driven, whole rollout window of ${rolloutSeconds.toFixed(0)} s): ${sum(during, isLease)} requests`,
        `    the cluster's work per rollout (API server requests for pods and ReplicaSets, every client): ${[...cluster]
          .filter(([k]) => !k.startsWith('WATCH') && !k.startsWith('LIST'))
          .sort((a, b) => b[1] - a[1])
          .map(([k, v]) => `${k} ${(v / o.eds).toFixed(2)}`)
          .join(', ')}`,
        `(c) agent peak RSS (VmHWM) after the rollouts: ${memory.peakMiB.toFixed(0)} MiB (RSS then ${memory.nowMiB.toFixed(0)} MiB, after idle ${memoryIdle.nowMiB.toFixed(0)} MiB); target < 250 MB (238 MiB): ${ok(memory.peakMiB * 1.048576 < 250)}`,
        `    V8 heap after the rollouts: used ${mib(metricValue(afterMetrics, 'nodejs_heap_size_used_bytes'))} of ${mib(metricValue(afterMetrics, 'nodejs_heap_size_total_bytes'))} MiB, external ${mib(metricValue(afterMetrics, 'nodejs_external_memory_bytes'))} MiB; agent node options: ${agentNodeOptions || '(none)'}`,
        `    idle ${o.idleSeconds} s once Healthy: ${idleWrites} writes besides the Lease${
          idleWrites > 0
            ? ` (${[...idle]
                .filter(([k]) => isWrite(k) && !isLease(k))
                .map(([k, v]) => `${k} ${v}`)
                .join(', ')})`
            : ''
        }; Lease renewals ${idleLease}; all requests ${sum(idle)}; target 0 writes: ${ok(idleWrites === 0)}`,
        `    agent warnings/errors logged: ${agent.warnings}; bench watch re-lists: ${relists.count}; bench wall time ${((Date.now() - started) / 1000).toFixed(0)} s`,
      ].join('\n'),
    );
  } finally {
    observer?.stop();
    await agent?.stop();
    await run.tearDown(v1.regions);
    log(`done in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  }
}

/**
 * BENCH_SLOWEST=<n>: the n slowest transitions (by the judged figure), with the instants to look up in the agent's log
 * (`--agent-log`): when the group became available, and how long after it the agent decided, the API server completed
 * the write and the bench saw it.
 */
function dumpSlowest(ts: readonly Transition[], n: number, applied: number): void {
  const judged = (t: Transition) => (t.statusWrittenAt ?? t.statusAt) - t.availableAtServer;
  for (const t of [...ts].sort((a, b) => judged(b) - judged(a)).slice(0, n)) {
    const after = (at: number | undefined) => (at === undefined ? '-' : `+${at - t.availableAtServer} ms`);
    process.stderr.write(
      `  ${t.ed} group ${t.group}→${t.group + 1}: available ${new Date(t.availableAtServer).toISOString()} (${((t.availableAtServer - applied) / 1000).toFixed(1)} s after v2's apply began); decided ${after(t.decidedAt)}, written ${after(t.statusWrittenAt)}, seen ${after(t.statusAt)}\n`,
    );
  }
}

/** BENCH_DEBUG_ED=<name>: one ExtendedDeployment's rollout as the bench saw it, ms after v2 was applied. */
function dumpTimeline(
  obs: Observer,
  ed: RenderedExtendedDeployment | undefined,
  podsAtTarget: Map<string, PodSeen[]>,
  t0: number,
  ts: readonly Transition[],
): void {
  if (!ed) return;
  const name = ed.parsed.metadata.name;
  const rows: [number, string][] = [];
  for (const s of obs.statuses.get(name) ?? []) if (s.at >= t0) rows.push([s.at, `status rv ${s.rv} ${s.revision} group ${s.group} ${s.phase}`]);
  for (const r of ed.regions) {
    for (const s of obs.scales.get(`${name}-${r.name}`) ?? []) if (s.at >= t0) rows.push([s.at, `scale ${r.name} ${s.from}→${s.to} rv ${s.rv}`]);
    for (const p of podsAtTarget.get(`${name}/${r.name}`) ?? [])
      rows.push([p.readyAt ?? 0, `new pod Ready in ${r.name} (condition ${p.readyLtt !== undefined ? p.readyLtt - t0 : '-'})`]);
  }
  for (const t of ts.filter((x) => x.ed === name))
    rows.push([t.availableObserved, `group ${t.group} available (observed); by condition at ${t.availableByCondition - t0}`]);
  for (const [at, what] of rows.sort((a, b) => a[0] - b[0])) process.stderr.write(`  ${String(at - t0).padStart(7)} ${what}\n`);
}

await runBench(import.meta.url, main);
