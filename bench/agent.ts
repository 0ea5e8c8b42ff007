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
 *     k being the group's target. "by condition" (the figure the target is judged on) = its Ready condition's
 *     lastTransitionTime (whole seconds) + minReadySeconds, never before the bench saw it Ready: the instant Kubernetes'
 *     own minReadySeconds rule (and the agent) call it available, as soon as the cluster shows it. "observed" = the
 *     bench's pod watch saw it Ready, + minReadySeconds: up to a second later whenever the watch was late, so it
 *     flatters the agent. The next group's first write is the first increase of a regional ReplicaSet's spec.replicas
 *     (ReplicaSet watch) ordered after the status write that records the next group (the agent writes the status
 *     first): resourceVersions of one etcd order them. Also shown: the delay to that status write itself. p50/p99 over
 *     every group transition of every rollout.
 *     That delay is a chain of three, printed apart: under scaleOutPriority a group is complete only once its old pods
 *     are gone, so (a1) the agent sees the region's new pods available and scales the ReplicaSet down (the first
 *     scale-down to the desired count ordered after the k-th new pod's Ready update); (a') the ReplicaSet controller
 *     takes the old pods away (not the agent: the scale-down → the region's k-th old pod seen terminating); (a2) the
 *     agent sees the group complete (every region: k new pods available and k old pods terminating, as the bench's
 *     watch saw them) and starts the next group. (a1) and (a2) are the agent's own reaction times.
 * (b) API requests per rollout: the agent's own client-side counter (extendeddeployment_agent_api_requests_total,
 *     every request its API clients send, watches included, by verb and resource) read from its /metrics before and
 *     after the rollouts; Lease traffic is time-driven and shown apart.
 * (c) the agent's peak RSS (VmHWM of /proc/<pid>/status) after the rollouts, and its writes during `--idle-seconds` of
 *     idle once everything is Healthy (Lease renewals shown apart).
 */
import { parseArgs } from 'node:util';
import type { RenderedExtendedDeployment } from '../core/render.js';
import { groupTarget, regionGroups } from '../core/rollout/groups.js';
import { DEFAULT_WORKERS } from '../agent/options.js';
import { AgentChild, agentNodeOptions, diffCounts, isLease, isWrite, metricValue, requestCounts, sum } from './agent-child.js';
import { positiveInt } from './figures.js';
import { BenchRun, PODS_PER_NODE, log, percentile, relists, sleep, stats } from './lab-kit.js';
import { applyFleet, fleetObjects, Observer, waitFleet, type PodSeen } from './rollout-fleet.js';

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
  const { values } = parseArgs({
    args: [...argv],
    options: {
      eds: { type: 'string' },
      regions: { type: 'string' },
      replicas: { type: 'string' },
      batch: { type: 'string' },
      workers: { type: 'string' },
      'idle-seconds': { type: 'string' },
      'rollout-timeout': { type: 'string' },
      nodes: { type: 'string' },
      'agent-log': { type: 'string' },
    },
    strict: true,
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
  /** Group complete: available, and in every region k old pods seen terminating. */
  complete: number;
  statusAt: number;
  scaleAt: number | undefined;
}

/** A region's k-th new pod available (by condition) → the agent's scale-down of that region to its desired count. */
interface RegionReaction {
  ed: string;
  group: number;
  available: number;
  scaleDownAt: number | undefined;
  /** When the region's k-th old pod was seen terminating: the ReplicaSet controller acted on the scale-down. */
  oldGoneAt: number | undefined;
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

/** (a1): every region and group of the rollout to `eds`, the agent's reaction to the group's new pods being available. */
function regionReactions(obs: Observer, eds: readonly RenderedExtendedDeployment[], podsAtTarget: Map<string, PodSeen[]>): RegionReaction[] {
  const out: RegionReaction[] = [];
  const goneOld = oldPodsGone(obs, eds);
  for (const ed of eds) {
    const name = ed.parsed.metadata.name;
    const strategy = ed.parsed.spec.strategy;
    for (const region of ed.regions) {
      const pods = (podsAtTarget.get(`${name}/${region.name}`) ?? []).filter((p) => p.readyAt !== undefined).sort((a, b) => availableByCondition(a) - availableByCondition(b));
      for (let g = 1; g <= regionGroups(strategy, region.replicas); g++) {
        const k = groupTarget(strategy, region.replicas, g);
        const kthPod = pods[k - 1];
        if (!kthPod) continue;
        // The first scale-down to the desired count that the etcd order puts after the pod showed Ready.
        const down = (obs.scales.get(`${name}-${region.name}`) ?? []).filter((s) => s.rv > (kthPod.readyRv ?? 0) && s.to < s.from && s.to <= region.replicas).sort((a, b) => a.rv - b.rv)[0];
        out.push({ ed: name, group: g, available: availableByCondition(kthPod), scaleDownAt: down?.at, oldGoneAt: kth(goneOld.get(`${name}/${region.name}`) ?? [], k) });
      }
    }
  }
  return out;
}

/** Every group → next group transition of the rollout to `eds` (see the header for the definitions). */
function transitions(obs: Observer, eds: readonly RenderedExtendedDeployment[], podsAtTarget: Map<string, PodSeen[]>): Transition[] {
  const out: Transition[] = [];
  const minReadyMs = MIN_READY_SECONDS * 1000;
  const goneOld = oldPodsGone(obs, eds);
  for (const ed of eds) {
    const name = ed.parsed.metadata.name;
    const strategy = ed.parsed.spec.strategy;
    const groups = Math.max(...ed.regions.map((r) => regionGroups(strategy, r.replicas)));
    const statuses = (obs.statuses.get(name) ?? []).filter((s) => s.revision === ed.rolloutRevision);
    for (let g = 1; g < groups; g++) {
      let availableObserved = 0;
      let availableByCond = 0;
      let completeAt = 0;
      let complete = true;
      for (const region of ed.regions) {
        const k = groupTarget(strategy, region.replicas, g);
        const pods = (podsAtTarget.get(`${name}/${region.name}`) ?? []).filter((p) => p.readyAt !== undefined);
        const observed = pods.map((p) => p.readyAt! + minReadyMs).sort((a, b) => a - b);
        const byCondition = pods.map(availableByCondition).sort((a, b) => a - b);
        const oldGone = kth(goneOld.get(`${name}/${region.name}`) ?? [], k);
        if (observed.length < k || oldGone === undefined) {
          complete = false;
          break;
        }
        availableObserved = Math.max(availableObserved, observed[k - 1]!);
        availableByCond = Math.max(availableByCond, byCondition[k - 1]!);
        completeAt = Math.max(completeAt, byCondition[k - 1]!, oldGone);
      }
      const status = statuses.find((s) => s.group >= g + 1);
      if (!complete || !status) continue;
      const scale = ed.regions
        .flatMap((r) => (obs.scales.get(`${name}-${r.name}`) ?? []).filter((s) => s.rv > status.rv && s.to > s.from))
        .sort((a, b) => a.rv - b.rv)[0];
      out.push({ ed: name, group: g, availableObserved, availableByCondition: availableByCond, complete: completeAt, statusAt: status.at, scaleAt: scale?.at });
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------------------

// main

async function main(): Promise<void> {
  const o = parseOptions(process.argv.slice(2));
  const started = Date.now();
  const pods = o.eds * o.regions * o.replicas;
  const peakPods = o.eds * o.regions * (o.replicas + o.batch);
  const nodesPerRegion = o.nodes ? Math.ceil(o.nodes / o.regions) : Math.ceil((o.eds * (o.replicas + o.batch) * 1.1) / PODS_PER_NODE);
  const nodeCount = nodesPerRegion * o.regions;
  const run = await BenchRun.open('agent');
  const { api, runId, ns } = run;
  log(`run ${runId}: ${o.eds} ExtendedDeployments × ${o.regions} regions × ${o.replicas} pods = ${pods} pods (up to ${peakPods} with surge) on ${nodeCount} bench nodes`);
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
    const t2 = Date.now();
    await applyFleet(api, v2.eds);
    const applySeconds = (Date.now() - t2) / 1000;
    log(`v2 applied in ${applySeconds.toFixed(1)} s; rolling out`);
    const finished = await waitFleet(observer, v2.eds, 'v2', o.rolloutTimeoutSeconds * 1000);
    const rolloutSeconds = (Date.now() - t2) / 1000;
    const afterMetrics = await agent.metrics();
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
    const ts = transitions(observer, v2.eds, podsAtTarget);
    const reactions = regionReactions(observer, v2.eds, podsAtTarget).filter((r) => r.scaleDownAt !== undefined);
    const debugEd = process.env['BENCH_DEBUG_ED'];
    if (debugEd) dumpTimeline(observer, v2.eds.find((e) => e.parsed.metadata.name === debugEd), podsAtTarget, t2, ts);
    const withScale = ts.filter((t) => t.scaleAt !== undefined);
    const expectedTransitions = v2.eds.reduce((s, ed) => s + Math.max(...ed.regions.map((r) => regionGroups(ed.parsed.spec.strategy, r.replicas))) - 1, 0);
    const reconciles = (m: string) => metricValue(m, 'extendeddeployment_agent_reconcile_duration_seconds_count', 'result="synced"');
    const reconcileSeconds = (m: string) => metricValue(m, 'extendeddeployment_agent_reconcile_duration_seconds_sum', 'result="synced"');
    const nReconciles = reconciles(afterMetrics) - reconciles(reconcilesBefore);
    const reconcileMs = ((reconcileSeconds(afterMetrics) - reconcileSeconds(reconcilesBefore)) * 1000) / Math.max(1, nReconciles);
    const perRollout = (keep: (k: string) => boolean) => (sum(during, keep) / o.eds).toFixed(1);
    const breakdown = [...during].filter(([k]) => !isLease(k)).sort((a, b) => b[1] - a[1]).map(([k, v]) => `${k} ${(v / o.eds).toFixed(2)}`);
    const idleWrites = sum(idle, (k) => isWrite(k) && !isLease(k));
    const idleLease = sum(idle, (k) => isWrite(k) && isLease(k));
    const ok = (good: boolean) => (good ? 'met' : 'NOT met');
    const p99o = percentile(withScale.map((t) => t.scaleAt! - t.availableObserved).sort((a, b) => a - b), 99);
    const p99 = percentile(withScale.map((t) => t.scaleAt! - t.availableByCondition).sort((a, b) => a - b), 99);

    console.log(
      [
        `bench:agent — ${o.eds} ExtendedDeployments × ${o.regions} regions × ${o.replicas} pods = ${pods} pods; Beta, batch ${o.batch} (surge ${o.batch}), scaleOutPriority, minReadySeconds ${MIN_READY_SECONDS}; agent --workers ${o.workers ?? `${DEFAULT_WORKERS} (default)`}; ${nodeCount} bench kwok nodes × ${PODS_PER_NODE} pods`,
        `  v1 sync (ReplicaSets 1 → ${o.replicas}, ${pods} pods Ready): ${v1Seconds.toFixed(1)} s; v2 rollout of all ${o.eds} at once: applied in ${applySeconds.toFixed(1)} s, complete after ${rolloutSeconds.toFixed(1)} s${finished ? '' : ' (TIMED OUT: figures are partial)'}`,
        `(a) group available → next group's first ReplicaSet write (${withScale.length} of ${expectedTransitions} transitions measured):`,
        `    from Ready condition time + minReadySeconds: ${stats(withScale.map((t) => t.scaleAt! - t.availableByCondition))}`,
        `    from observed Ready + minReadySeconds:      ${stats(withScale.map((t) => t.scaleAt! - t.availableObserved))}`,
        `    to the status write recording the group (by condition): ${stats(ts.map((t) => t.statusAt - t.availableByCondition))}`,
        `    by group: ${[...new Set(withScale.map((t) => t.group))].map((g) => `${g}→${g + 1}: p50 ${Math.round(percentile(withScale.filter((t) => t.group === g).map((t) => t.scaleAt! - t.availableByCondition).sort((a, b) => a - b), 50))} ms`).join(', ')}`,
        `    target p99 < 500 ms: ${ok(p99 < 500)} (by condition ${Math.round(p99)} ms; observed ${Math.round(p99o)} ms)`,
        `  the chain, apart: (a1) region's group pods available → the agent's scale-down of its old pods (${reactions.length} region-groups): ${stats(reactions.map((r) => r.scaleDownAt! - r.available))}`,
        `    (a') the agent's scale-down → the region's old pods seen terminating (the ReplicaSet controller, not the agent): ${stats(reactions.filter((r) => r.oldGoneAt !== undefined).map((r) => r.oldGoneAt! - r.scaleDownAt!))}`,
        `    (a2) group complete (old pods terminating too) → next group's status write: ${stats(ts.map((t) => t.statusAt - t.complete))}`,
        `    (a2) group complete → next group's first ReplicaSet write:                 ${stats(withScale.map((t) => t.scaleAt! - t.complete))}`,
        `    reconciles during the rollout: ${nReconciles} (mean ${reconcileMs.toFixed(1)} ms each)`,
        `(b) API requests per rollout (agent's client-side counter, ${o.eds} rollouts): ${perRollout((k) => !isLease(k))} (writes ${perRollout((k) => isWrite(k) && !isLease(k))}, reads ${perRollout((k) => !isWrite(k) && !isLease(k))})`,
        `    per rollout by verb and resource: ${breakdown.join(', ')}`,
        `    Lease (time-driven, whole rollout window of ${rolloutSeconds.toFixed(0)} s): ${sum(during, isLease)} requests`,
        `(c) agent peak RSS (VmHWM) after the rollouts: ${memory.peakMiB.toFixed(0)} MiB (RSS then ${memory.nowMiB.toFixed(0)} MiB, after idle ${memoryIdle.nowMiB.toFixed(0)} MiB); target < 250 MB (238 MiB): ${ok(memory.peakMiB * 1.048576 < 250)}`,
        `    V8 heap after the rollouts: used ${mib(metricValue(afterMetrics, 'nodejs_heap_size_used_bytes'))} of ${mib(metricValue(afterMetrics, 'nodejs_heap_size_total_bytes'))} MiB, external ${mib(metricValue(afterMetrics, 'nodejs_external_memory_bytes'))} MiB; agent node options: ${agentNodeOptions || '(none)'}`,
        `    idle ${o.idleSeconds} s once Healthy: ${idleWrites} writes besides the Lease${idleWrites > 0 ? ` (${[...idle].filter(([k]) => isWrite(k) && !isLease(k)).map(([k, v]) => `${k} ${v}`).join(', ')})` : ''}; Lease renewals ${idleLease}; all requests ${sum(idle)}; target 0 writes: ${ok(idleWrites === 0)}`,
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

/** BENCH_DEBUG_ED=<name>: one ExtendedDeployment's rollout as the bench saw it, ms after v2 was applied. */
function dumpTimeline(obs: Observer, ed: RenderedExtendedDeployment | undefined, podsAtTarget: Map<string, PodSeen[]>, t0: number, ts: readonly Transition[]): void {
  if (!ed) return;
  const name = ed.parsed.metadata.name;
  const rows: [number, string][] = [];
  for (const s of obs.statuses.get(name) ?? []) if (s.at >= t0) rows.push([s.at, `status rv ${s.rv} ${s.revision} group ${s.group} ${s.phase}`]);
  for (const r of ed.regions) {
    for (const s of obs.scales.get(`${name}-${r.name}`) ?? []) if (s.at >= t0) rows.push([s.at, `scale ${r.name} ${s.from}→${s.to} rv ${s.rv}`]);
    for (const p of podsAtTarget.get(`${name}/${r.name}`) ?? []) rows.push([p.readyAt ?? 0, `new pod Ready in ${r.name} (condition ${p.readyLtt !== undefined ? p.readyLtt - t0 : '-'})`]);
  }
  for (const t of ts.filter((x) => x.ed === name)) rows.push([t.availableObserved, `group ${t.group} available (observed); by condition at ${t.availableByCondition - t0}`]);
  for (const [at, what] of rows.sort((a, b) => a[0] - b[0])) process.stderr.write(`  ${String(at - t0).padStart(7)} ${what}\n`);
}

await main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error instanceof Error ? error.stack : String(error));
    process.exit(1);
  },
);
