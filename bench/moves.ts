/**
 * bench/moves: how soon the agent moves replicas away from a region that runs out of room (shortage) or whose nodes all
 * stop heartbeating (fault), what it writes to the API server for it, and how soon the service is whole again; on the
 * lab cluster. Prints figures; asserts nothing about time.
 *
 *   npm run bench:moves -- [--runs 3] [--replicas 2] [--timeout-seconds 3] [--toleration-seconds 5]
 *                          [--stabilization-seconds 3] [--scenarios shortage,fault] [--wait-timeout 180] [--agent-log <file>]
 *
 * Setup: the lab is reused when healthy, else started (`npm run lab:up`); the CRDs are applied; a namespace, three
 * DeployRegions on the lab's general-pool node sets (a, b: amd64 zone-a/zone-b; c: arm64 zone-c, two nodes) and one
 * ExtendedDeployment of `--replicas` pods per region (autoReschedule, faultMove and moveBack on, with the flags' times;
 * returns in one batch) are created, and deleted at the end. The agent runs in this process (startAgent, the code
 * `edctl agent` runs, leader election on a Lease of the namespace); its API requests are read from its /metrics
 * (extendeddeployment_agent_api_requests_total, moved_replicas_total) and, for the instants of its writes, from a
 * request log kept by the same client-side hook the counter uses.
 *
 * Each run starts from every pod Ready and no move, and ends after the moved replicas are back home.
 * - shortage: one filler pod per node of c, pinned there, requesting the node's whole CPU, with a PriorityClass above
 *   the service's: the scheduler preempts c's pods, their ReplicaSet recreates them, and they stay PodScheduled=False
 *   (Unschedulable). The move is allowed `timeoutSeconds` after the latest instant of the condition's whole second
 *   (core's rule, WHOLE_SECOND_SLACK_MS). Then the fillers are deleted.
 * - fault: `lab:fail-nodes` on c's nodes (kwok stops their heartbeats; the node-lifecycle controller marks them
 *   NotReady after the lab's node-monitor-grace-period). The move is allowed `tolerationSeconds` after the last node
 *   started failing, as core's region health reads it from the node objects. Then `lab:heal-nodes`.
 *
 * Figures, per scenario, median and max over the runs:
 * - detection → first move write: from the bench's watch seeing the first stuck pod Unschedulable (shortage) or the last
 *   node of c NotReady (fault), to the agent sending the status write that records the move (the last
 *   extendeddeployments/status write it sent before the bench's watch showed the move). The planned minimum is the
 *   timeout or toleration; the ratio is measured over it. The API keeps whole seconds: a condition set at t.9 s reads t,
 *   so a shortage move may come up to 1 s before detection + timeout (core counts fault times from the end of their
 *   second, so a fault move never does).
 * - earliest allowed → first move write: the agent's own delay past the instant core allows the move.
 * - first move write → first ReplicaSet scale, → the service's Ready pods back at the desired total; and how long the
 *   service had fewer Ready pods than that (capacity lost: first drop → back).
 * - API writes per move: the agent's writes (verb and resource, Leases apart) from the trigger until it has been quiet
 *   for 2 s after the service was whole, over the replicas it moved (moved_replicas_total{kind="move"}) and over the
 *   moves it recorded (status.moves entries); the same for the return.
 */
import { randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { KubeConfig, type KubernetesObject, type V1Node, type V1Pod } from '@kubernetes/client-node';
import { startAgent, type Agent } from '../agent/agent.js';
import { countingKubeConfig } from '../agent/runtime/api-requests.js';
import { jsonLogger } from '../agent/runtime/log.js';
import { nodeView } from '../agent/node-view.js';
import { WHOLE_SECOND_SLACK_MS } from '../core/moves/nodes.js';
import type { ExtendedDeploymentStatus } from '../core/api/extended-deployment.js';
import { NAME_LABEL, REGION_LABEL } from '../core/labels.js';
import { regionHealth } from '../core/moves/region-health.js';
import { renderSet, type RenderedExtendedDeployment } from '../core/render.js';
import { benchFlags, positiveInt, runBench, UsageError } from './command-line.js';
import { median, textTable } from './figures.js';
import { diffCounts, isLease, isWrite, metricValue, requestCounts, sum } from './agent-child.js';
import {
  Api,
  GROUP,
  LAB_NODE_SETS,
  VERSION,
  ensureLab,
  installCrds,
  kubeconfigPath,
  labCli,
  labDeployRegions,
  listWatch,
  log,
  relists,
  sleep,
  waitUntil,
} from './lab-kit.js';

// ---------------------------------------------------------------------------------------------------------------
// options

type Scenario = 'shortage' | 'fault';
const SCENARIOS: readonly Scenario[] = ['shortage', 'fault'];
const MOVE_REASONS = ['Shortage', 'Fault'] as const;

interface Options {
  readonly runs: number;
  readonly replicas: number;
  readonly timeoutSeconds: number;
  readonly tolerationSeconds: number;
  readonly stabilizationSeconds: number;
  readonly scenarios: readonly Scenario[];
  readonly waitTimeoutSeconds: number;
  /** Write the agent's log lines to this file. */
  readonly agentLog: string | undefined;
}

function parseOptions(argv: readonly string[]): Options {
  const values = benchFlags(argv, {
    runs: { type: 'string' },
    replicas: { type: 'string' },
    'timeout-seconds': { type: 'string' },
    'toleration-seconds': { type: 'string' },
    'stabilization-seconds': { type: 'string' },
    scenarios: { type: 'string' },
    'wait-timeout': { type: 'string' },
    'agent-log': { type: 'string' },
  });
  const scenarios = (values.scenarios ?? SCENARIOS.join(',')).split(',').map((s) => s.trim());
  const unknown = scenarios.filter((s) => !SCENARIOS.includes(s as Scenario));
  if (unknown.length > 0 || scenarios.length === 0)
    throw new UsageError(`--scenarios: expected a list of ${SCENARIOS.join(', ')}, not ${JSON.stringify(values.scenarios)}`);
  return {
    runs: positiveInt('runs', values.runs, 3),
    replicas: positiveInt('replicas', values.replicas, 2),
    timeoutSeconds: positiveInt('timeout-seconds', values['timeout-seconds'], 3),
    tolerationSeconds: positiveInt('toleration-seconds', values['toleration-seconds'], 5),
    stabilizationSeconds: positiveInt('stabilization-seconds', values['stabilization-seconds'], 3),
    scenarios: scenarios as Scenario[],
    waitTimeoutSeconds: positiveInt('wait-timeout', values['wait-timeout'], 180),
    agentLog: values['agent-log'],
  };
}

const ED_NAME = 'web';
/** Region c: the one that loses its capacity. */
const SOURCE_LABELS = LAB_NODE_SETS[2];
const SOURCE_SELECTOR = Object.entries(SOURCE_LABELS)
  .map(([k, v]) => `${k}=${v}`)
  .join(',');
/** The agent counts as done once it has written nothing (Leases aside) for this long. */
const QUIET_MS = 2_000;

// ---------------------------------------------------------------------------------------------------------------
// objects

function renderEd(ns: string, regions: readonly KubernetesObject[], o: Options): RenderedExtendedDeployment {
  const ed = {
    apiVersion: `${GROUP}/${VERSION}`,
    kind: 'ExtendedDeployment',
    metadata: { name: ED_NAME, namespace: ns },
    spec: {
      selector: { matchLabels: { app: ED_NAME } },
      template: {
        metadata: { labels: { app: ED_NAME } },
        spec: {
          terminationGracePeriodSeconds: 0,
          containers: [{ name: 'app', image: 'registry.example/web:1', resources: { requests: { cpu: '50m', memory: '32Mi' } } }],
        },
      },
      regions: regions.map((r) => ({ name: r.metadata?.name, replicas: o.replicas })),
      strategy: {
        minReadySeconds: 1,
        // Returns come back `batchSize` of a region's replicas at a time: all at once here.
        batchSize: o.replicas,
        autoReschedule: { enable: true, timeoutSeconds: o.timeoutSeconds },
        faultMove: { enable: true, tolerationSeconds: o.tolerationSeconds },
        moveBack: { enable: true, stabilizationSeconds: o.stabilizationSeconds },
      },
    },
  };
  const result = renderSet([...regions, ed]);
  if (!result.ok) throw new Error(`render failed: ${JSON.stringify(result.problems)}`);
  const rendered = result.value.extendedDeployments[0];
  if (!rendered) throw new Error('nothing rendered');
  return rendered;
}

function priorityClass(name: string): KubernetesObject {
  return {
    apiVersion: 'scheduling.k8s.io/v1',
    kind: 'PriorityClass',
    metadata: { name },
    value: 1_000_000,
    preemptionPolicy: 'PreemptLowerPriority',
    description: 'bench:moves fillers',
  } as KubernetesObject;
}

/** A pod pinned to `node` that takes its whole CPU and may preempt the service's pods there. */
function filler(ns: string, node: V1Node, priorityClassName: string): V1Pod {
  const name = node.metadata?.name ?? '';
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: `filler-${name}`, namespace: ns, labels: { app: 'filler' } },
    spec: {
      priorityClassName,
      nodeSelector: { 'kubernetes.io/hostname': name },
      terminationGracePeriodSeconds: 0,
      containers: [{ name: 'filler', image: 'registry.example/filler:1', resources: { requests: { cpu: node.status?.allocatable?.['cpu'] ?? '4' } } }],
    },
  };
}

// ---------------------------------------------------------------------------------------------------------------
// what the bench sees

interface PodSeen {
  readonly region: string;
  readonly ready: boolean;
  readonly terminating: boolean;
}

/** A pod first seen PodScheduled=False/Unschedulable: the condition's time (whole seconds) and when the watch saw it. */
interface StuckPod {
  readonly region: string;
  readonly since: number;
  readonly seenAt: number;
}

type EdObject = KubernetesObject & { status?: ExtendedDeploymentStatus };

/**
 * The service's pods, its ExtendedDeployment's status and region c's nodes, from three watches; and "moments": the
 * receive time of the first event after which a condition holds, so that figures carry event times, not poll times.
 */
class Observer {
  readonly pods = new Map<string, PodSeen>();
  readonly stuck: StuckPod[] = [];
  readonly sourceNodes = new Map<string, V1Node>();
  status: ExtendedDeploymentStatus = {};
  private readonly stuckUids = new Set<string>();
  private readonly moments = new Map<string, { readonly check: () => boolean; at?: number }>();
  private readonly watches: ReturnType<typeof listWatch>[];

  constructor(api: Api, ns: string) {
    this.watches = [
      listWatch<V1Pod & KubernetesObject>(api, `/api/v1/namespaces/${ns}/pods?labelSelector=${encodeURIComponent(NAME_LABEL)}`, (type, pod, at) => {
        const uid = pod.metadata?.uid ?? '';
        if (type === 'DELETED') this.pods.delete(uid);
        else {
          this.pods.set(uid, {
            region: pod.metadata?.labels?.[REGION_LABEL] ?? '',
            ready: pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true,
            terminating: !!pod.metadata?.deletionTimestamp,
          });
          const scheduled = pod.status?.conditions?.find((c) => c.type === 'PodScheduled');
          if (!pod.spec?.nodeName && scheduled?.status === 'False' && scheduled.reason === 'Unschedulable' && !this.stuckUids.has(uid)) {
            this.stuckUids.add(uid);
            this.stuck.push({ region: pod.metadata?.labels?.[REGION_LABEL] ?? '', since: Date.parse(String(scheduled.lastTransitionTime)), seenAt: at });
          }
        }
        this.poke(at);
      }),
      listWatch<EdObject>(api, `/apis/${GROUP}/${VERSION}/namespaces/${ns}/extendeddeployments`, (type, ed, at) => {
        if (ed.metadata?.name !== ED_NAME) return;
        this.status = type === 'DELETED' ? {} : (ed.status ?? {});
        this.poke(at);
      }),
      listWatch<V1Node & KubernetesObject>(api, `/api/v1/nodes?labelSelector=${encodeURIComponent(SOURCE_SELECTOR)}`, (type, node, at) => {
        if (type === 'DELETED') this.sourceNodes.delete(node.metadata?.name ?? '');
        else this.sourceNodes.set(node.metadata?.name ?? '', node);
        this.poke(at);
      }),
    ];
  }

  synced(): Promise<void> {
    return Promise.all(this.watches.map((w) => w.synced)).then(() => undefined);
  }

  stop(): void {
    for (const w of this.watches) w.stop();
  }

  /** Records the receive time of the first event after which `check` holds (now, if it holds already). */
  watchFor(name: string, check: () => boolean): void {
    const moment: { check: () => boolean; at?: number } = { check };
    if (check()) moment.at = Date.now();
    this.moments.set(name, moment);
  }

  at(name: string): number | undefined {
    return this.moments.get(name)?.at;
  }

  wait(name: string, timeoutMs: number, describe: () => unknown): Promise<number> {
    return waitUntil(name, timeoutMs, () => this.at(name) !== undefined, 50).then(
      () => this.at(name)!,
      (e: unknown) => {
        throw new Error(`${e instanceof Error ? e.message : String(e)}; status ${JSON.stringify(this.status)}; pods ${JSON.stringify(describe())}`);
      },
    );
  }

  clearMoments(): void {
    this.moments.clear();
  }

  /** Pods that serve: Ready and not terminating. */
  readyPods(): number {
    return [...this.pods.values()].filter((p) => p.ready && !p.terminating).length;
  }

  /** Live pods per region: [all, ready], terminating ones apart. */
  perRegion(): Record<string, [number, number]> & { terminating?: [number, number] } {
    const out: Record<string, [number, number]> = {};
    for (const p of this.pods.values()) {
      const key = p.terminating ? 'terminating' : p.region;
      const [all, ready] = out[key] ?? [0, 0];
      out[key] = [all + 1, ready + (p.ready ? 1 : 0)];
    }
    return out;
  }

  /** Replicas away from `region` (not returning) for `reason`. */
  away(region: string, reason: string): number {
    return (this.status.moves ?? []).filter((m) => m.from === region && m.reason === reason).reduce((s, m) => s + m.count, 0);
  }

  /** Every region at its own count, every pod Ready, nothing moved or terminating. */
  steady(regions: readonly string[], replicas: number): boolean {
    const per = this.perRegion();
    return (
      this.status.phase === 'Healthy' &&
      (this.status.moves ?? []).length === 0 &&
      per.terminating === undefined &&
      regions.every((r) => per[r]?.[0] === replicas && per[r]?.[1] === replicas)
    );
  }

  private poke(at: number): void {
    for (const m of this.moments.values()) if (m.at === undefined && m.check()) m.at = at;
  }
}

// ---------------------------------------------------------------------------------------------------------------
// the agent, in process

/** A write the agent sent: when, and `VERB resource`. */
interface WriteSent {
  readonly at: number;
  readonly key: string;
}

class InProcessAgent {
  private constructor(
    readonly agent: Agent,
    /** Every write the agent sent, in order. */
    readonly writes: readonly WriteSent[],
    private readonly logged: { warnings: number },
  ) {}

  static async start(ns: string, id: string, logFile: string | undefined): Promise<InProcessAgent> {
    const kc = new KubeConfig();
    kc.loadFromFile(kubeconfigPath);
    const file = logFile === undefined ? undefined : createWriteStream(logFile);
    const writes: WriteSent[] = [];
    const logged = { warnings: 0 };
    // The same hook as the agent's own request counter: every request its clients send passes here first.
    const recorded = countingKubeConfig(kc, (verb, resource) => {
      const key = `${verb} ${resource}`;
      if (isWrite(key)) writes.push({ at: Date.now(), key });
    });
    const agent = await startAgent({
      kubeConfig: recorded,
      namespaces: [ns],
      leaseNamespace: ns,
      identity: `bench-moves-${id}`,
      metricsBindAddress: '127.0.0.1:0',
      healthProbeBindAddress: '127.0.0.1:0',
      log: jsonLogger({
        write: (line) => {
          if (/"level":"(warn|error)"/.test(line)) logged.warnings++;
          file?.write(line);
        },
      }),
    });
    return new InProcessAgent(agent, writes, logged);
  }

  /** Warning and error lines the agent logged. */
  warnings(): number {
    return this.logged.warnings;
  }

  async metrics(): Promise<string> {
    const { host, port } = this.agent.address;
    return (await fetch(`http://${host}:${port}/metrics`)).text();
  }

  /** Request counts and moved replicas, once no write (Leases aside) has come for QUIET_MS. */
  async quiet(timeoutMs = 30_000): Promise<Sample> {
    const deadline = Date.now() + timeoutMs;
    let last = await this.sample();
    let since = Date.now();
    while (Date.now() - since < QUIET_MS && Date.now() < deadline) {
      await sleep(250);
      const next = await this.sample();
      if (writesOf(next.requests) !== writesOf(last.requests)) since = Date.now();
      last = next;
    }
    return last;
  }

  async sample(): Promise<Sample> {
    const text = await this.metrics();
    // Summed over the reasons; a series appears once something was counted in it.
    const moved = (kind: string) =>
      MOVE_REASONS.reduce((n, reason) => n + (metricValue(text, 'extendeddeployment_agent_moved_replicas_total', `kind="${kind}",reason="${reason}"`) || 0), 0);
    return { requests: requestCounts(text), moved: moved('move'), returned: moved('return') };
  }

  /** The last status write sent in [from, to]. */
  lastStatusWrite(from: number, to: number): number | undefined {
    return this.writes.filter((w) => w.at >= from && w.at <= to && w.key.endsWith(' extendeddeployments/status')).at(-1)?.at;
  }

  /** The first ReplicaSet write sent at or after `from`. */
  firstScale(from: number): number | undefined {
    return this.writes.find((w) => w.at >= from && w.key.endsWith(' replicasets'))?.at;
  }
}

interface Sample {
  readonly requests: Map<string, number>;
  readonly moved: number;
  readonly returned: number;
}

const writesOf = (m: Map<string, number>) => sum(m, (k) => isWrite(k) && !isLease(k));

// ---------------------------------------------------------------------------------------------------------------
// one run

interface Run {
  /** Seconds. */
  readonly triggerToDetect: number;
  readonly detectToMove: number;
  readonly allowedToMove: number;
  readonly seenLag: number;
  readonly moveToScale: number;
  readonly moveToReady: number;
  readonly capacityLost: number;
  readonly moveWrites: Map<string, number>;
  readonly moved: number;
  readonly moveRecords: number;
  readonly returnSeconds: number;
  readonly returnWrites: Map<string, number>;
  readonly returned: number;
}

interface Env {
  readonly api: Api;
  readonly ns: string;
  readonly o: Options;
  readonly regions: readonly string[];
  readonly source: string;
  readonly total: number;
  readonly observer: Observer;
  readonly agent: InProcessAgent;
  readonly priorityClassName: string;
  /** Set while the source region's nodes are failed, so that a failing bench heals them. */
  failed: boolean;
}

const seconds = (from: number | undefined, to: number | undefined) => (from === undefined || to === undefined ? Number.NaN : (to - from) / 1000);

async function waitSteady(env: Env, what: string): Promise<void> {
  await waitUntil(
    `${what}: every region at ${env.o.replicas} Ready pods, no move`,
    env.o.waitTimeoutSeconds * 1000,
    () => env.observer.steady(env.regions, env.o.replicas),
    100,
  ).catch((e: unknown) => {
    throw new Error(
      `${e instanceof Error ? e.message : String(e)}; status ${JSON.stringify(env.observer.status)}; pods ${JSON.stringify(env.observer.perRegion())}`,
    );
  });
}

/** Triggers the loss of region c's capacity; returns what "detected" means and when the move became allowed. */
type Trigger = (env: Env, t0: number) => Promise<{ detectedAt: () => number | undefined; allowedAt: () => number }>;

const shortage: Trigger = async (env, t0) => {
  const nodes = [...env.observer.sourceNodes.values()];
  for (const node of nodes) await env.api.request('POST', `/api/v1/namespaces/${env.ns}/pods`, filler(env.ns, node, env.priorityClassName));
  const stuck = () => env.observer.stuck.filter((p) => p.region === env.source && p.seenAt >= t0);
  return {
    detectedAt: () => stuck()[0]?.seenAt,
    allowedAt: () => Math.min(...stuck().map((p) => p.since)) + WHOLE_SECOND_SLACK_MS + env.o.timeoutSeconds * 1000,
  };
};

const fault: Trigger = async (env) => {
  env.failed = true;
  env.observer.watchFor('source nodes NotReady', () => {
    const nodes = [...env.observer.sourceNodes.values()];
    return nodes.length > 0 && nodes.every((n) => n.status?.conditions?.find((c) => c.type === 'Ready')?.status !== 'True');
  });
  await labCli(['fail-nodes', SOURCE_SELECTOR]);
  return {
    detectedAt: () => env.observer.at('source nodes NotReady'),
    // Core's own reading of the node objects (Ready transition, controller taints, whole seconds) decides the instant.
    allowedAt: () => {
      const views = [...env.observer.sourceNodes.values()].map((n) => nodeView(n, {}));
      return regionHealth(views, { failureThreshold: '100%', tolerationSeconds: env.o.tolerationSeconds }, Date.now()).failsAt ?? Number.NaN;
    },
  };
};

async function restore(env: Env, scenario: Scenario): Promise<void> {
  if (scenario === 'fault') {
    await labCli(['heal-nodes', SOURCE_SELECTOR]);
    env.failed = false;
    return;
  }
  for (const node of env.observer.sourceNodes.keys())
    await env.api.deleteIgnoringMissing(`/api/v1/namespaces/${env.ns}/pods/filler-${node}?gracePeriodSeconds=0`);
}

async function fillersGone(env: Env): Promise<void> {
  await waitUntil('the filler pods gone', 60_000, async () => {
    const pods = await env.api.request<{ items: unknown[] }>('GET', `/api/v1/namespaces/${env.ns}/pods?labelSelector=app%3Dfiller`);
    return pods.items.length === 0;
  });
}

async function oneRun(env: Env, scenario: Scenario, run: number): Promise<Run> {
  const { observer, agent, o } = env;
  const timeoutMs = o.waitTimeoutSeconds * 1000;
  const reason = MOVE_REASONS[SCENARIOS.indexOf(scenario)]!;
  await waitSteady(env, `before ${scenario} run ${run}`);
  observer.clearMoments();
  const before = await agent.quiet();
  observer.watchFor('capacity lost', () => observer.readyPods() < env.total);
  observer.watchFor('move seen', () => observer.away(env.source, reason) > 0);

  const t0 = Date.now();
  const trigger = await (scenario === 'shortage' ? shortage : fault)(env, t0);
  const seenAt = await observer.wait('move seen', timeoutMs, () => observer.perRegion());
  const allowedAt = trigger.allowedAt();
  const detectedAt = trigger.detectedAt();
  // The agent wrote the move before the watch showed it: its last status write up to then is the one.
  const movedAt = agent.lastStatusWrite(t0, seenAt) ?? seenAt;
  observer.watchFor('service whole', () => observer.at('capacity lost') !== undefined && observer.readyPods() >= env.total);
  const wholeAt = await observer.wait('service whole', timeoutMs, () => observer.perRegion());
  await waitUntil(
    'the status to show the service whole',
    timeoutMs,
    () => observer.status.phase === 'Healthy' && (observer.status.regions ?? []).reduce((s, r) => s + (r.ready ?? 0), 0) >= env.total,
    100,
  );
  const moveRecords = (observer.status.moves ?? []).filter((m) => m.from === env.source && m.reason === reason).length;
  const afterMove = await agent.quiet();

  const freedAt = Date.now();
  await restore(env, scenario);
  await waitSteady(env, `${scenario} run ${run}: replicas back home`);
  const homeAt = Date.now();
  const afterReturn = await agent.quiet();
  if (scenario === 'shortage') await fillersGone(env);

  const result: Run = {
    triggerToDetect: seconds(t0, detectedAt),
    detectToMove: seconds(detectedAt, movedAt),
    allowedToMove: seconds(allowedAt, movedAt),
    seenLag: seconds(movedAt, seenAt),
    moveToScale: seconds(movedAt, agent.firstScale(movedAt)),
    moveToReady: seconds(movedAt, wholeAt),
    capacityLost: seconds(observer.at('capacity lost'), wholeAt),
    moveWrites: diffCounts(afterMove.requests, before.requests),
    moved: afterMove.moved - before.moved,
    moveRecords,
    returnSeconds: seconds(freedAt, homeAt),
    returnWrites: diffCounts(afterReturn.requests, afterMove.requests),
    returned: afterReturn.returned - afterMove.returned,
  };
  log(
    `${scenario} run ${run}: detected ${result.triggerToDetect.toFixed(2)} s after the trigger, moved ${result.detectToMove.toFixed(2)} s later ` +
      `(${result.allowedToMove.toFixed(2)} s after allowed); ${result.moved} replicas in ${moveRecords} moves, ${writesOf(result.moveWrites)} writes; ` +
      `whole ${result.moveToReady.toFixed(2)} s after the move; back home ${result.returnSeconds.toFixed(1)} s after restoring`,
  );
  return result;
}

// ---------------------------------------------------------------------------------------------------------------
// report

/** The agent's writes in one window of every run: per unit (`per`: a label and how many units a run had), and by kind. */
function writesLine(label: string, runs: readonly Run[], pick: (r: Run) => Map<string, number>, per: readonly [string, (r: Run) => number][]): string {
  const total = new Map<string, number>();
  for (const r of runs) for (const [k, v] of pick(r)) if (isWrite(k)) total.set(k, (total.get(k) ?? 0) + v);
  const writes = writesOf(total);
  const ratios = per.map(([unit, count]) => {
    const n = runs.reduce((s, r) => s + count(r), 0);
    return `${n > 0 ? (writes / n).toFixed(2) : 'n/a'} per ${unit}`;
  });
  const kinds = [...total]
    .filter(([k]) => !isLease(k))
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    .map(([k, v]) => `${k} ${(v / runs.length).toFixed(1)}`);
  return `  ${label}: ${ratios.join(', ')}; a run: ${(writes / runs.length).toFixed(1)} writes = ${kinds.join(' + ') || 'none'} (Lease writes apart: ${(sum(total, isLease) / runs.length).toFixed(1)})`;
}

function report(o: Options, results: ReadonlyMap<Scenario, Run[]>, startedAt: number, extra: string[]): string {
  const total = 3 * o.replicas;
  const f = (v: number) => (Number.isNaN(v) ? 'n/a' : v.toFixed(2));
  const out = [
    `bench:moves — one ExtendedDeployment, 3 regions × ${o.replicas} replicas (${total} pods); region c (2 nodes) loses its capacity; ${o.runs} runs per scenario; seconds, median and max over the runs`,
    `  shortage: c's nodes taken by higher-priority filler pods (preemption), c's pods recreated Unschedulable; autoReschedule.timeoutSeconds ${o.timeoutSeconds}`,
    `  fault: c's nodes stop heartbeating (lab:fail-nodes; the lab's node-monitor-grace-period is 10 s); faultMove.tolerationSeconds ${o.tolerationSeconds}`,
    `  after each run the capacity is restored (fillers deleted / lab:heal-nodes) and the replicas return: moveBack.stabilizationSeconds ${o.stabilizationSeconds}, one batch`,
    'lab caveat: kwok has no image pulls; a pod is Ready ~0.2-1 s after it is bound',
  ];
  for (const [scenario, runs] of results) {
    const minimum = scenario === 'shortage' ? o.timeoutSeconds : o.tolerationSeconds;
    const what = scenario === 'shortage' ? `timeoutSeconds ${o.timeoutSeconds}` : `tolerationSeconds ${o.tolerationSeconds}`;
    const row = (label: string, values: number[], planned?: number): string[] => {
      const med = median(values);
      return [label, f(med), f(Math.max(...values)), values.map(f).join(' '), planned === undefined ? '' : `${planned}`, planned ? f(med / planned) : ''];
    };
    const detection = scenario === 'shortage' ? 'first stuck pod seen Unschedulable' : 'last node of c seen NotReady';
    out.push('', `${scenario} (${what})`);
    out.push(
      ...textTable(
        ['figure', 'median', 'max', 'runs', 'planned min', 'median/min'],
        [
          row(
            `trigger → ${detection}`,
            runs.map((r) => r.triggerToDetect),
          ),
          row(
            `${detection} → first move write`,
            runs.map((r) => r.detectToMove),
            minimum,
          ),
          row(
            `earliest allowed (${scenario === 'shortage' ? 'PodScheduled time + timeout' : 'failing since + toleration'}) → first move write`,
            runs.map((r) => r.allowedToMove),
          ),
          row(
            'first move write → first ReplicaSet scale',
            runs.map((r) => r.moveToScale),
          ),
          row(
            `first move write → ${total} pods Ready again`,
            runs.map((r) => r.moveToReady),
          ),
          row(
            `capacity lost (Ready < ${total}) → ${total} Ready again`,
            runs.map((r) => r.capacityLost),
          ),
          row(
            `capacity restored → every replica back home (stabilization ${o.stabilizationSeconds} s)`,
            runs.map((r) => r.returnSeconds),
          ),
        ].map((r) => r.map((c) => `${c}`)),
      ),
    );
    const over = runs.map((r) => r.detectToMove - minimum);
    if (scenario === 'fault') out.push(`  over the toleration: median ${f(median(over))} s, max ${f(Math.max(...over))} s (target: under 1 s)`);
    else {
      out.push(
        `  over the timeout: median ${f(median(over))} s, max ${f(Math.max(...over))} s (the condition's time has whole seconds: the agent waits out the latest instant of that second)`,
      );
    }
    out.push(`  move write seen on the bench's watch: median ${(median(runs.map((r) => r.seenLag)) * 1000).toFixed(0)} ms after the agent sent it`);
    out.push(
      `  moved: ${runs.map((r) => r.moved).join(' / ')} replicas in ${runs.map((r) => r.moveRecords).join(' / ')} moves (status.moves entries); returned: ${runs.map((r) => r.returned).join(' / ')}`,
    );
    out.push(
      writesLine('API writes for the move', runs, (r) => r.moveWrites, [
        ['moved replica', (r) => r.moved],
        ['move', (r) => r.moveRecords],
      ]),
    );
    out.push(writesLine('API writes for the return', runs, (r) => r.returnWrites, [['returned replica', (r) => r.returned]]));
  }
  out.push('', ...extra, `total bench time ${((Date.now() - startedAt) / 1000).toFixed(0)} s`);
  return out.join('\n');
}

// ---------------------------------------------------------------------------------------------------------------
// main

async function main(argv: readonly string[]): Promise<void> {
  const o = parseOptions(argv);
  const startedAt = Date.now();
  ensureLab();
  const api = new Api(kubeconfigPath);
  await installCrds(api);
  const id = randomBytes(3).toString('hex');
  const ns = `bench-moves-${id}`;
  const regionObjects = labDeployRegions(`bm-${id}`, 3);
  const regions = regionObjects.map((r) => r.metadata?.name ?? '');
  const pc = priorityClass(`bench-moves-${id}`);
  const ed = renderEd(ns, regionObjects, o);
  log(`namespace ${ns}; ${o.scenarios.join(' and ')} × ${o.runs} runs`);
  await api.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } }, 'namespaces', false);
  await waitUntil('the namespace default ServiceAccount', 60_000, () =>
    api.request('GET', `/api/v1/namespaces/${ns}/serviceaccounts/default`).then(() => true),
  );
  for (const r of regionObjects) await api.apply(r, 'deployregions', false);
  await api.apply(pc, 'priorityclasses', false);

  const observer = new Observer(api, ns);
  let agent: InProcessAgent | undefined;
  let env: Env | undefined;
  const results = new Map<Scenario, Run[]>();
  try {
    await observer.synced();
    if (observer.sourceNodes.size === 0) throw new Error(`no node matches ${SOURCE_SELECTOR}`);
    agent = await InProcessAgent.start(ns, id, o.agentLog);
    const a = agent;
    await waitUntil('the agent to lead', 60_000, () => a.agent.isLeader());
    await api.apply(ed.manifest, 'extendeddeployments', true);
    for (const region of ed.regions) await api.apply(region.workload, 'replicasets', true);
    env = { api, ns, o, regions, source: regions[2]!, total: 3 * o.replicas, observer, agent, priorityClassName: pc.metadata!.name!, failed: false };
    await waitSteady(env, 'first rollout');
    for (const scenario of o.scenarios) {
      const runs: Run[] = [];
      results.set(scenario, runs);
      for (let run = 1; run <= o.runs; run++) runs.push(await oneRun(env, scenario, run));
    }
  } finally {
    if (env?.failed) await labCli(['heal-nodes', SOURCE_SELECTOR]).catch((e: unknown) => log(`heal-nodes failed: ${String(e)}`));
    await agent?.agent.stop();
    observer.stop();
    await api.deleteIgnoringMissing(`/apis/${GROUP}/${VERSION}/namespaces/${ns}/extendeddeployments/${ED_NAME}`).catch(() => undefined);
    await api.deleteIgnoringMissing(`/api/v1/namespaces/${ns}`).catch(() => undefined);
    for (const r of regions) await api.deleteIgnoringMissing(`/apis/${GROUP}/${VERSION}/deployregions/${r}`).catch(() => undefined);
    await api.deleteIgnoringMissing(`/apis/scheduling.k8s.io/v1/priorityclasses/${pc.metadata?.name}`).catch(() => undefined);
  }
  const extra = [`agent: ${agent?.warnings() ?? 0} warning/error log lines; bench watch re-lists: ${relists.count}`];
  process.stdout.write(`${report(o, results, startedAt, extra)}\n`);
}

await runBench(import.meta.url, main);
