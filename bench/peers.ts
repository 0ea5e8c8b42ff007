/**
 * bench/peers: the same image rollouts driven by this project's agent and by Argo Rollouts, alternating, in one run on
 * the lab cluster. Prints figures per controller and the ratios ours / theirs; asserts nothing about time.
 *
 *   npm run bench:peers -- [--scales 200,50,1] [--rounds 2,2,5] [--replicas 10] [--batch 2] [--argo-qps 1000]
 *                          [--argo-burst 2000] [--rollout-timeout 900] [--agent-log <file>] [--agent-workers <n>]
 *                          [--argo-log <file>]
 *
 * The work: `n` rollouts at once (n of --scales) of one image change, each of --replicas pods in one region.
 *   ours:   an ExtendedDeployment with one DeployRegion, Beta groups of --batch (surge --batch, scaleOutPriority, the
 *           defaults), minReadySeconds 1, no gates, rendered by core (bench/rollout-fleet.ts) and applied server-side
 *           with its ReplicaSet, as a GitOps tool does; the agent is the compiled `edctl agent` with its defaults
 *           (leader election on, its Lease in the namespace; no client-side rate limit), on the Node.js the header
 *           names: the agent image's release unless BENCH_AGENT_NODE says otherwise (bench/agent-child.ts).
 *   theirs: an Argo Rollouts Rollout (argoproj.io/v1alpha1), the basic canary with no traffic router (it scales
 *           ReplicaSets), the same pod template, replicas and minReadySeconds 1, maxSurge --batch, maxUnavailable 0,
 *           and one `setWeight` step per ExtendedDeployment group, no pauses. The mapping is exact: the agent's group g
 *           targets groupTarget(g) new pods (Beta, batch 2, 10 pods: 1, 3, 5, 7, 9, 10); Argo Rollouts, without a
 *           traffic router, scales the canary to the pod count nearest to weight × replicas, so setWeight
 *           target × 100 / replicas moves exactly as many (10, 30, 50, 70, 90, 100); the bench refuses shapes where
 *           that is not whole (bench/peers-figures.ts canaryWeights). Both scale the new ReplicaSet up by the step
 *           (surge), then the old one down once the new pods are available.
 *           The controller is `rollouts-controller` built from its Go module (test/cluster/go/argo-rollouts, v1.10.1,
 *           `npm run lab:build -- argo-rollouts`, on demand), with --namespaced (its kubeconfig context's namespace)
 *           and --qps/--burst raised from its 40/80 to --argo-qps/--argo-burst (default 1000/2000) because the agent
 *           has no client-side limit; its defaults otherwise: leader election on (its Lease in the namespace, from
 *           POD_NAMESPACE), logs at info, 10 rollout threads.
 * Fairness: both are local processes of this machine, started fresh for each scale and controller, each as it is
 * installed (leader election on, a Lease renewed every 2 s; logs at info, which the bench reads from their pipes and
 * keeps only with --agent-log / --argo-log), with the same kind of kubeconfig (a bearer token of their own
 * ServiceAccount in namespace `bench-peers`, bound to cluster-admin; the lab's CA), each watching only its own fresh
 * namespace. Each scale runs on a clean namespace pair per round, and which controller goes first alternates between
 * scales and rounds. A scale runs --rounds times (one count per scale, or one for all; default 5 for a scale under 10
 * rollouts, whose wall time is otherwise one rollout's single draw, else 2, so that each controller goes first once:
 * the one that goes second meets an API server grown by the first's rollouts, and one round's CPU seconds at 200
 * rollouts moved the ratio between 0.91 and 1.06 over ten runs): the rounds' rollouts and steps are pooled before
 * percentiles, requests per rollout averaged, and CPU and peak RSS are the median of the rounds' (each round's printed
 * too). Scales run in the order given, the largest first by default: the lab's API server grows with every
 * rollout it serves (1.6 GB after one run of the three) and the reactions of both controllers slow with it (the agent's
 * p99 at 200 rollouts: 227 ms on a fresh lab, 380 ms after the other scales). A running lab is reused; runs to compare
 * want BENCH_FRESH_LAB=1, which starts each on a fresh one (bench/lab-kit.ts labSteps).
 * v1 is applied and waited for untimed (the agent scales its ReplicaSet from 1 to --replicas, Argo Rollouts creates its
 * first ReplicaSet), then v2 (a new image) to every rollout at once.
 *
 * Figures, per scale and controller:
 *   wall        per rollout, from the start of its v2 apply to the bench seeing it done: ExtendedDeployment status
 *               Healthy at the new rollout revision, or Rollout status phase Healthy with stableRS == currentPodHash;
 *               and, for both, exactly --replicas pods, all of the new image, Ready, none terminating; for ours also
 *               every pod carrying the mark a rollout leaves for the next (standing marks: the agent writes one on
 *               each new pod as it sees it, so that the next rollout's first scale-down need not wait; counted in the
 *               rollout that writes them, and v2 starts from v1's). p50, p99. Each side's v2 apply starts 50 ms past a
 *               whole second of the clock (V2_START_OFFSET_MS: the step's pods turn available on whole seconds). Below
 *               it, its two ends (p50): v2 apply → the controller's first scaling (its first new pods asked for), and the
 *               last step's pods available → done; the steps between are mostly the lab's (pods started, made Ready,
 *               minReadySeconds) and the reactions below.
 *   reaction    per step of each rollout: from its pods being available at the API server to the controller's next
 *               write to that rollout (its ExtendedDeployment or Rollout, any subresource, or one of its ReplicaSets;
 *               Events left out), the instant the API server received it (audit log: the controller's ServiceAccount).
 *               A step's pods are available when its target-th new pod is, each new pod at its Ready condition's
 *               time + minReadySeconds (Kubernetes' rule) but never before the pod status write that made it Ready
 *               completed (audit log), as bench/agent computes it. Every step counts, the last one too (the answer to
 *               it is scaling the old ReplicaSet to 0 or recording the end). p50, p99. Any write counts, so a status
 *               write that only records counts answers as early as the decision; hence also "to its next scaling":
 *               the same, to the first write that changed one of the rollout's ReplicaSets' spec.replicas (the lab
 *               audits these controllers' ReplicaSet writes in full), the step's real consequence on both sides (the old
 *               ReplicaSet scaled down once the new pods are available, or the next step's scale-up).
 *   requests    the controller's API requests received during the rollout window (v2 apply → all done; audit log:
 *               every verb, reads and watches included, Leases shown apart), per rollout, by verb and resource.
 *               The lab audits these users at Metadata level (test/cluster/lab.ts: its first rule, for group
 *               system:serviceaccounts:bench-peers only); a lab started before that rule existed has none (restart it).
 *   cpu         the controller process' user + system CPU seconds over the rollout window (/proc/<pid>/stat).
 *   peak RSS    the controller process' VmHWM (/proc/<pid>/status) at the end of the window: its peak since it
 *               started for this scale (v1 included). Below it, what the highest of its RSS readings (every 200 ms,
 *               /proc/<pid>/status) was made of: anonymous pages (heaps, stacks, buffers) and file-backed ones (the
 *               touched pages of its program's binary and libraries, which other processes of the same program share
 *               and the kernel may reclaim); their ratios are shown, not counted in the goal.
 *   own share   ours only, from the agent's /metrics over the window: reconciles and status writes per rollout (those
 *               recording a transition, and those of counts alone, which the agent paces), and how long keys waited in
 *               its work queue and reconciles that acted took (p50, p99 interpolated within histogram buckets), the
 *               part of a reaction that is the agent's; the rest is the API server delivering the pod update.
 * Then ours / theirs for each. The goal the issue sets: every ratio at most 1, and the agent's reaction p99 under
 * 250 ms at 200 rollouts; the bench prints whether the figures met it, nothing more.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { KubernetesObject, V1Pod } from '@kubernetes/client-node';
import { stringify } from 'yaml';
import { POD_DELETION_COST_ANNOTATION } from '../core/labels.js';
import { removalMarkCost } from '../core/rollout/removal-marks.js';
import type { RenderedExtendedDeployment } from '../core/render.js';
import { groupTarget, regionGroups } from '../core/rollout/groups.js';
import { MAX_WORKERS } from '../agent/options.js';
import {
  AgentChild,
  PeakRssWatch,
  addShares,
  agentNodeVersion,
  agentShare,
  reconcileCount,
  histogramQuantile,
  processCpuSeconds,
  processMemory,
  type AgentShare,
  type HistogramSnapshot,
  type RssSplit,
} from './agent-child.js';
import { benchFlags, positiveInt, runBench, UsageError } from './command-line.js';
import { median, textTable } from './figures.js';
import {
  Api,
  ApiError,
  BenchRun,
  PODS_PER_NODE,
  auditLines,
  auditPolicy,
  installCrds,
  labBuild,
  listWatch,
  log,
  namespacedAgentArgs,
  pool,
  sleep,
  statusWritesCompleted,
  waitUntil,
  type EventType,
} from './lab-kit.js';
import {
  AUDIT_WRITE_VERBS,
  belongsTo,
  canaryWeights,
  parseAuditEvent,
  perRollout,
  poolRounds,
  ratio,
  requestsByVerbResource,
  scaleWrites,
  stepReactions,
  untilSecondOffset,
  wallEnds,
  type AuditEvent,
  type PooledFigures,
  type RoundSamples,
} from './peers-figures.js';
import { fleetObjects } from './rollout-fleet.js';

// ---------------------------------------------------------------------------------------------------------------
// options

interface Options {
  readonly scales: number[];
  /** Rounds per scale, one for each of `scales`. */
  readonly rounds: number[];
  readonly replicas: number;
  readonly batch: number;
  readonly argoQps: number;
  readonly argoBurst: number;
  readonly rolloutTimeoutSeconds: number;
  readonly agentLog: string | undefined;
  /** The agent's --workers; its default when unset. */
  readonly agentWorkers: number | undefined;
  readonly argoLog: string | undefined;
}

/** --agent-workers, refused here when the agent would refuse it, not after its start times out. */
function agentWorkers(value: string): number {
  const n = positiveInt('agent-workers', value, 1);
  if (n > MAX_WORKERS) throw new UsageError(`--agent-workers: ${n} is more than the agent's ${MAX_WORKERS}`);
  return n;
}

/**
 * Rounds of a scale when --rounds does not say: a small scale's figures are otherwise one or a few rollouts' draws, and a
 * larger one's two rounds let each controller go first once.
 */
const roundsByDefault = (scale: number) => (scale < 10 ? 5 : 2);

/** --rounds: one count for every scale, or one per scale in --scales' order; absent, roundsByDefault. */
function roundsOf(text: string | undefined, scales: readonly number[]): number[] {
  if (text === undefined) return scales.map(roundsByDefault);
  const counts = text.split(',').map((s) => positiveInt('rounds', s.trim(), 1));
  if (counts.length === 1) return scales.map(() => counts[0]!);
  if (counts.length !== scales.length) throw new UsageError(`--rounds: ${counts.length} counts for ${scales.length} scales (give one, or one per scale)`);
  return counts;
}

function parseOptions(argv: readonly string[]): Options {
  const values = benchFlags(argv, {
    scales: { type: 'string' },
    rounds: { type: 'string' },
    replicas: { type: 'string' },
    batch: { type: 'string' },
    'argo-qps': { type: 'string' },
    'argo-burst': { type: 'string' },
    'rollout-timeout': { type: 'string' },
    'agent-log': { type: 'string' },
    'agent-workers': { type: 'string' },
    'argo-log': { type: 'string' },
  });
  const scales = (values.scales ?? '200,50,1').split(',').map((s) => positiveInt('scales', s.trim(), 1));
  return {
    scales,
    rounds: roundsOf(values.rounds, scales),
    replicas: positiveInt('replicas', values.replicas, 10),
    batch: positiveInt('batch', values.batch, 2),
    argoQps: positiveInt('argo-qps', values['argo-qps'], 1000),
    argoBurst: positiveInt('argo-burst', values['argo-burst'], 2000),
    rolloutTimeoutSeconds: positiveInt('rollout-timeout', values['rollout-timeout'], 900),
    agentLog: values['agent-log'],
    agentWorkers: values['agent-workers'] === undefined ? undefined : agentWorkers(values['agent-workers']),
    argoLog: values['argo-log'],
  };
}

const MIN_READY_SECONDS = 1;
/**
 * Where in a second of the clock each side's v2 apply starts (ms past it; the header's wall). A step's pods turn
 * available on a whole second (their Ready condition's time carries none of its fraction, then minReadySeconds), so
 * where a rollout starts within a second moves its wall by up to that second: started after the bench saw v1 done (at
 * its 200 ms poll), one rollout's wall ranged 5.79–5.98 s over five rounds, a spread the controllers did not make.
 */
const V2_START_OFFSET_MS = 50;
/** The namespace of the controllers' ServiceAccounts; the lab's audit policy logs every request of its group. */
const SA_NAMESPACE = 'bench-peers';
const SA_GROUP = `system:serviceaccounts:${SA_NAMESPACE}`;
const IMAGES = { v1: 'registry.example/bench:1', v2: 'registry.example/bench:2' } as const;

type Side = 'ours' | 'theirs';
type Version = keyof typeof IMAGES;
const SA_NAME: Record<Side, string> = { ours: 'extendeddeployment-agent', theirs: 'argo-rollouts' };
const userOf = (side: Side) => `system:serviceaccount:${SA_NAMESPACE}:${SA_NAME[side]}`;
const LABEL: Record<Side, string> = { ours: 'ours (ED agent)', theirs: 'theirs (Argo Rollouts)' };

// ---------------------------------------------------------------------------------------------------------------
// identities: a ServiceAccount per controller, a token kubeconfig per controller and namespace

async function ensureServiceAccounts(api: Api): Promise<void> {
  const create = async (path: string, body: unknown) => {
    try {
      await api.request('POST', path, body);
    } catch (e) {
      if (!(e instanceof ApiError && e.code === 409)) throw e;
    }
  };
  await create('/api/v1/namespaces', { metadata: { name: SA_NAMESPACE } });
  for (const side of ['ours', 'theirs'] as const)
    await create(`/api/v1/namespaces/${SA_NAMESPACE}/serviceaccounts`, { metadata: { name: SA_NAME[side], namespace: SA_NAMESPACE } });
  await create('/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
    metadata: { name: 'bench-peers-cluster-admin' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' },
    subjects: [{ kind: 'Group', apiGroup: 'rbac.authorization.k8s.io', name: SA_GROUP }],
  });
}

/** A kubeconfig with a fresh token of `side`'s ServiceAccount, its context's namespace `ns` (Argo's --namespaced reads it). */
async function tokenKubeconfig(api: Api, side: Side, ns: string, dir: string): Promise<string> {
  const tr = await api.request<{ status: { token: string } }>('POST', `/api/v1/namespaces/${SA_NAMESPACE}/serviceaccounts/${SA_NAME[side]}/token`, {
    apiVersion: 'authentication.k8s.io/v1',
    kind: 'TokenRequest',
    spec: { expirationSeconds: 24 * 3600 },
  });
  const cluster = api.kc.getCurrentCluster()!;
  const ca = cluster.caData ?? (cluster.caFile ? readFileSync(cluster.caFile).toString('base64') : undefined);
  const path = join(dir, `kubeconfig-${side}-${ns}`);
  writeFileSync(
    path,
    stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'lab', cluster: { server: cluster.server, 'certificate-authority-data': ca } }],
      users: [{ name: side, user: { token: tr.status.token } }],
      contexts: [{ name: side, context: { cluster: 'lab', user: side, namespace: ns } }],
      'current-context': side,
    }),
  );
  return path;
}

// ---------------------------------------------------------------------------------------------------------------
// the controllers

interface Controller {
  readonly pid: number;
  stop(): Promise<void>;
  /** Its Prometheus metrics as text (the agent only: the figures of its own share). */
  metrics?(): Promise<string>;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

async function startOurs(kubeconfig: string, ns: string, runId: string, o: Options): Promise<Controller> {
  const agent = new AgentChild(namespacedAgentArgs(kubeconfig, ns, `peers-${runId}`, o.agentWorkers), o.agentLog);
  await agent.waitLeading(120_000);
  return { pid: agent.child.pid!, stop: () => agent.stop(), metrics: () => agent.metrics() };
}

async function startTheirs(binDir: string, kubeconfig: string, ns: string, o: Options): Promise<Controller> {
  const [metricsPort, healthzPort] = [await freePort(), await freePort()];
  const child: ChildProcess = spawn(
    join(binDir, 'rollouts-controller'),
    [
      '--kubeconfig',
      kubeconfig,
      '--namespaced',
      // Leader election and log level left at their defaults, as the agent's are (the header's Fairness).
      '--metricsPort',
      String(metricsPort),
      '--healthzPort',
      String(healthzPort),
      '--qps',
      String(o.argoQps),
      '--burst',
      String(o.argoBurst),
    ],
    // POD_NAMESPACE: where it keeps its Lease and looks for its notification ConfigMap (none: notifications off).
    { env: { ...process.env, POD_NAMESPACE: ns }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const out = o.argoLog ? createWriteStream(o.argoLog, { flags: 'a' }) : undefined;
  let tail = '';
  const keep = (d: Buffer) => {
    out?.write(d);
    tail = (tail + d.toString()).slice(-4000);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  await waitUntil('Argo Rollouts healthy', 120_000, async () => {
    if (child.exitCode !== null) throw new Error(`rollouts-controller exited (${child.exitCode}): ${tail}`);
    return (await fetch(`http://127.0.0.1:${healthzPort}/healthz`)).ok;
  }).catch((e: unknown) => {
    throw new Error(`${String(e)}; its output: ${tail}`);
  });
  return {
    pid: child.pid!,
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

// ---------------------------------------------------------------------------------------------------------------
// the work

/** One rollout as both sides see it: its name, its pods' app label, and per side what to apply for v1 and v2. */
interface Work {
  readonly names: string[];
  /** Group targets, the same for both sides. */
  readonly targets: number[];
  readonly weights: number[];
  apply(api: Api, side: Side, i: number, version: Version): Promise<void>;
  /** The top object's status says done at `version` (the pods are checked apart). */
  statusDone(side: Side, i: number, object: ObservedTop, version: Version): boolean;
}

interface ObservedTop extends KubernetesObject {
  status?: { phase?: string; revision?: string; stableRS?: string; currentPodHash?: string; availableReplicas?: number; updatedReplicas?: number };
}

function work(runId: string, ns: Record<Side, string>, n: number, o: Options): { work: Work; regions: KubernetesObject[] } {
  const shape = { eds: n, regions: 1, replicas: o.replicas, batch: o.batch, minReadySeconds: MIN_READY_SECONDS };
  const eds: Record<Version, RenderedExtendedDeployment[]> = {
    v1: fleetObjects(runId, ns.ours, shape, IMAGES.v1).eds,
    v2: fleetObjects(runId, ns.ours, shape, IMAGES.v2).eds,
  };
  const { regions } = fleetObjects(runId, ns.ours, shape, IMAGES.v1);
  const strategy = eds.v1[0]!.parsed.spec.strategy;
  const targets = Array.from({ length: regionGroups(strategy, o.replicas) }, (_, g) => groupTarget(strategy, o.replicas, g + 1));
  const weights = canaryWeights(targets, o.replicas);
  const rollout = (i: number, version: Version) => {
    const ed = eds[version][i]!;
    return {
      apiVersion: 'argoproj.io/v1alpha1',
      kind: 'Rollout',
      metadata: { name: ed.parsed.metadata.name, namespace: ns.theirs },
      spec: {
        replicas: o.replicas,
        minReadySeconds: MIN_READY_SECONDS,
        selector: ed.parsed.spec.selector,
        template: ed.parsed.spec.template,
        strategy: { canary: { maxSurge: o.batch, maxUnavailable: 0, steps: weights.map((w) => ({ setWeight: w })) } },
      },
    } as KubernetesObject;
  };
  return {
    regions,
    work: {
      names: eds.v1.map((e) => e.parsed.metadata.name),
      targets,
      weights,
      async apply(api, side, i, version) {
        if (side === 'theirs') return api.apply(rollout(i, version), 'rollouts', true);
        const ed = eds[version][i]!;
        await api.apply(ed.manifest, 'extendeddeployments', true);
        for (const region of ed.regions) await api.apply(region.workload, 'replicasets', true);
      },
      statusDone(side, i, top, version) {
        const s = top.status ?? {};
        if (side === 'ours') return s.phase === 'Healthy' && s.revision === eds[version][i]!.rolloutRevision;
        return s.phase === 'Healthy' && !!s.stableRS && s.stableRS === s.currentPodHash;
      },
    },
  };
}

interface PodSeen {
  name: string;
  rollout: number;
  image: string | undefined;
  terminating: boolean;
  /** Carries the agent's mark for removal (ours: a completed rollout leaves it on every pod for the next one). */
  marked: boolean;
  readyAt?: number;
  readyLtt?: number;
  readyRv?: number;
}

/** Follows one side's namespace: its pods and top objects; records when each rollout is first done at `image`. */
class Tracker {
  readonly pods = new Map<string, PodSeen>();
  readonly tops = new Map<number, ObservedTop>();
  /** Rollout index → when the bench saw it done (at the current target version). */
  readonly doneAt = new Map<number, number>();
  private version: Version = 'v1';
  private readonly watches: { synced: Promise<void>; stop: () => void }[];
  private readonly index: Map<string, number>;

  constructor(
    api: Api,
    ns: string,
    private readonly side: Side,
    private readonly w: Work,
    private readonly replicas: number,
  ) {
    this.index = new Map(w.names.map((name, i) => [name, i]));
    const topPath =
      side === 'ours' ? `/apis/extendeddeployment.io/v1beta1/namespaces/${ns}/extendeddeployments` : `/apis/argoproj.io/v1alpha1/namespaces/${ns}/rollouts`;
    this.watches = [
      listWatch<V1Pod>(api, `/api/v1/namespaces/${ns}/pods?labelSelector=app`, (type, pod, at) => this.onPod(type, pod, at)),
      listWatch<ObservedTop>(api, topPath, (type, top, at) => this.onTop(type, top, at)),
    ];
  }

  synced(): Promise<void> {
    return Promise.all(this.watches.map((w) => w.synced)).then(() => undefined);
  }

  stop(): void {
    for (const w of this.watches) w.stop();
  }

  /** From now on, done means at `version`. */
  target(version: Version): void {
    this.version = version;
    this.doneAt.clear();
  }

  private onPod(type: EventType, pod: V1Pod, at: number): void {
    const uid = pod.metadata!.uid!;
    // Both sides' pods carry app=app-<i> (bench/rollout-fleet.ts); their rollout is app-<i, 3 digits>.
    const rollout = Number((pod.metadata!.labels?.['app'] ?? '').replace(/^app-/, ''));
    if (type === 'DELETED') this.pods.delete(uid);
    else {
      let seen = this.pods.get(uid);
      if (!seen) {
        seen = { name: pod.metadata!.name!, rollout, image: pod.spec?.containers[0]?.image, terminating: false, marked: false };
        this.pods.set(uid, seen);
      }
      seen.terminating = !!pod.metadata!.deletionTimestamp;
      seen.marked = removalMarkCost(pod.metadata!.annotations?.[POD_DELETION_COST_ANNOTATION]) !== undefined;
      const ready = (pod.status?.conditions ?? []).find((c) => c.type === 'Ready');
      if (ready?.status === 'True' && seen.readyAt === undefined) {
        seen.readyAt = at;
        seen.readyLtt = ready.lastTransitionTime === undefined ? Number.NaN : new Date(ready.lastTransitionTime).getTime();
        seen.readyRv = Number(pod.metadata!.resourceVersion);
      }
    }
    this.check(rollout, at);
  }

  private onTop(type: EventType, top: ObservedTop, at: number): void {
    const i = this.index.get(top.metadata?.name ?? '');
    if (i === undefined || type === 'DELETED') return;
    this.tops.set(i, top);
    this.check(i, at);
  }

  private check(i: number, at: number): void {
    if (this.doneAt.has(i)) return;
    const top = this.tops.get(i);
    if (!top || !this.w.statusDone(this.side, i, top, this.version)) return;
    const pods = [...this.pods.values()].filter((p) => p.rollout === i);
    // Ours is done once the agent has also marked every pod for the next rollout (standing marks, removal-marks.ts): work
    // the rollout owes, whose writes and time count in it, as Argo Rollouts' first scale-down owes none.
    const settled = (p: PodSeen) => !p.terminating && p.image === IMAGES[this.version] && p.readyAt !== undefined && (this.side === 'theirs' || p.marked);
    if (pods.length === this.replicas && pods.every(settled)) this.doneAt.set(i, at);
  }

  async waitAll(what: string, n: number, timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    let lastLog = Date.now();
    for (;;) {
      // A pod Ready before its rollout's status was seen done is re-checked here too.
      for (let i = 0; i < n; i++) this.check(i, Date.now());
      if (this.doneAt.size === n) return true;
      if (Date.now() - lastLog > 15_000) {
        log(`${what}: ${this.doneAt.size}/${n} done; ${this.pods.size} pods`);
        lastLog = Date.now();
      }
      if (Date.now() > deadline) {
        log(`${what}: timed out with ${this.doneAt.size}/${n} done`);
        return false;
      }
      await sleep(200);
    }
  }
}

// ---------------------------------------------------------------------------------------------------------------
// one scale, one side

interface SideResult {
  readonly side: Side;
  readonly ns: string;
  readonly finished: boolean;
  readonly from: number;
  readonly to: number;
  /** Per rollout, v2 apply start → done (ms). */
  readonly walls: number[];
  /** Per rollout, when the bench saw it done. */
  readonly done: ReadonlyMap<number, number>;
  /** Per rollout, when its v2 apply started. */
  readonly applied: Map<number, number>;
  /** Per rollout, the instants its new pods became available at the API server (see the header). */
  readonly available: Map<number, number[]>;
  readonly cpuSeconds: number;
  readonly peakMiB: number;
  /** What the controller's highest sampled RSS was made of (since it started, as peakMiB). */
  readonly peakSplit: RssSplit | undefined;
  /** The agent's own share of the window, from its /metrics (ours only). */
  readonly share?: AgentShare;
}

async function runSide(
  api: Api,
  side: Side,
  ns: string,
  w: Work,
  n: number,
  o: Options,
  ctx: { runId: string; binDir: string; dir: string },
): Promise<SideResult> {
  await api.request('POST', '/api/v1/namespaces', { metadata: { name: ns, labels: { 'extendeddeployment.io/bench': 'true' } } });
  await waitUntil(
    `namespace ${ns}'s default ServiceAccount`,
    60_000,
    async () => !!(await api.request('GET', `/api/v1/namespaces/${ns}/serviceaccounts/default`)),
  );
  const kubeconfig = await tokenKubeconfig(api, side, ns, ctx.dir);
  const controller = side === 'ours' ? await startOurs(kubeconfig, ns, ctx.runId, o) : await startTheirs(ctx.binDir, kubeconfig, ns, o);
  const rss = new PeakRssWatch(controller.pid);
  const tracker = new Tracker(api, ns, side, w, o.replicas);
  try {
    await tracker.synced();
    const indexes = Array.from({ length: n }, (_, i) => i);
    await pool(indexes, 6, (i) => w.apply(api, side, i, 'v1'));
    if (!(await tracker.waitAll(`${side} ${n} v1`, n, o.rolloutTimeoutSeconds * 1000))) throw new Error(`${side}: v1 did not finish`);
    await sleep(2000);

    tracker.target('v2');
    const metrics0 = await controller.metrics?.();
    const cpu0 = processCpuSeconds(controller.pid);
    await sleep(untilSecondOffset(Date.now(), V2_START_OFFSET_MS));
    const from = Date.now();
    const applied = new Map<number, number>();
    await pool(indexes, 6, async (i) => {
      applied.set(i, Date.now());
      await w.apply(api, side, i, 'v2');
    });
    log(`${side}: v2 applied to ${n} in ${((Date.now() - from) / 1000).toFixed(1)} s`);
    const finished = await tracker.waitAll(`${side} ${n} v2`, n, o.rolloutTimeoutSeconds * 1000);
    const to = Date.now();
    const cpuSeconds = processCpuSeconds(controller.pid) - cpu0;
    const peakMiB = processMemory(controller.pid).peakMiB;
    const peakSplit = rss.stop();
    const metrics1 = await controller.metrics?.();
    const share = metrics0 !== undefined && metrics1 !== undefined ? agentShare(metrics0, metrics1) : undefined;
    const walls = indexes.flatMap((i) => {
      const done = tracker.doneAt.get(i);
      return done === undefined ? [] : [done - applied.get(i)!];
    });
    const written = statusWritesCompleted(ns);
    const available = new Map<number, number[]>();
    for (const p of tracker.pods.values()) {
      if (p.image !== IMAGES.v2 || p.readyAt === undefined) continue;
      const at = Math.max((p.readyLtt ?? p.readyAt) + MIN_READY_SECONDS * 1000, written.get(`pods/${p.name}/${p.readyRv}`) ?? p.readyAt);
      available.set(p.rollout, [...(available.get(p.rollout) ?? []), at]);
    }
    const done = new Map(tracker.doneAt);
    return { side, ns, finished, from, to, walls, done, applied, available, cpuSeconds, peakMiB, peakSplit, ...(share && { share }) };
  } finally {
    rss.stop();
    tracker.stop();
    await controller.stop();
  }
}

async function deleteNamespace(api: Api, ns: string): Promise<void> {
  await api.deleteIgnoringMissing(`/api/v1/namespaces/${ns}`);
  await waitUntil(
    `namespace ${ns} gone`,
    600_000,
    async () => {
      try {
        await api.request('GET', `/api/v1/namespaces/${ns}`);
        return false;
      } catch (e) {
        return e instanceof ApiError && e.code === 404;
      }
    },
    2000,
  ).catch((e: unknown) => log(String(e)));
}

// ---------------------------------------------------------------------------------------------------------------
// figures

/** One controller's figures at one scale: its rounds pooled, requests per rollout summed by kind. */
interface Figures extends PooledFigures {
  requests: number;
  writes: number;
  reads: number;
  leases: number;
}

/** One round of one controller, from its result and the audit log. */
function roundSamples(r: SideResult, w: Work, n: number, events: readonly AuditEvent[]): RoundSamples {
  const user = userOf(r.side);
  const mine = events.filter((e) => e.user === user && e.namespace === r.ns && e.received >= r.from && e.received <= r.to);
  const workloadWrite = (e: AuditEvent) =>
    AUDIT_WRITE_VERBS.has(e.verb) && /^(replicasets|rollouts|extendeddeployments)(\/|$)/.test(e.resource) && (e.code ?? 0) < 400;
  const writes = mine.filter(workloadWrite);
  /** Per rollout, the instants of `of` that were writes to it (itself or its ReplicaSets). */
  const perRolloutInstants = (of: readonly AuditEvent[]) => w.names.map((name) => of.filter((e) => belongsTo(e.name, name)).map((e) => e.received));
  const writtenAt = perRolloutInstants(writes);
  const reactions = w.names.flatMap((_, i) => stepReactions(r.available.get(i) ?? [], w.targets, writtenAt[i]!));
  const scalings = scaleWrites(events.filter((e) => e.user === user && e.namespace === r.ns)).filter((e) => e.received >= r.from && e.received <= r.to);
  const scaledAt = perRolloutInstants(scalings);
  const scaleReactions = w.names.flatMap((_, i) => stepReactions(r.available.get(i) ?? [], w.targets, scaledAt[i]!));
  const ends = w.names.map((_, i) => wallEnds(r.applied.get(i)!, r.done.get(i), r.available.get(i) ?? [], w.targets.at(-1)!, scaledAt[i]!));
  return {
    walls: r.walls,
    starts: ends.flatMap((e) => (e.start === undefined ? [] : [e.start])),
    ends: ends.flatMap((e) => (e.end === undefined ? [] : [e.end])),
    reactions,
    scalings: scaleReactions,
    byVerb: requestsByVerbResource(events, user, r.from, r.to, n),
    cpuSeconds: r.cpuSeconds,
    peakMiB: r.peakMiB,
    peakSplit: r.peakSplit,
  };
}

function figures(rounds: readonly RoundSamples[]): Figures {
  const pooled = poolRounds(rounds);
  const total = (keep: (k: string) => boolean) => [...pooled.byVerb].filter(([k]) => keep(k)).reduce((s, [, v]) => s + v, 0);
  const isLease = (k: string) => k.endsWith(' leases');
  const isWrite = (k: string) => AUDIT_WRITE_VERBS.has(k.split(' ')[0]!);
  return {
    ...pooled,
    requests: total((k) => !isLease(k)),
    writes: total((k) => !isLease(k) && isWrite(k)),
    reads: total((k) => !isLease(k) && !isWrite(k)),
    leases: total(isLease),
  };
}

/** One scale's report: what ran, the table, requests by kind, per-round totals (rounds > 1) and the agent's own share. */
function report(n: number, rounds: readonly Record<Side, SideResult>[], firsts: readonly Side[], f: Record<Side, Figures>, w: Work, o: Options): string[] {
  const ms = (v: number) => (Number.isFinite(v) ? `${Math.round(v)} ms` : '-');
  const s = (v: number) => (Number.isFinite(v) ? `${(v / 1000).toFixed(2)} s` : '-');
  const mib = (v: number) => (Number.isFinite(v) ? `${v.toFixed(0)} MiB` : '-');
  const rows: [string, (x: Figures) => number, (v: number) => string][] = [
    ['rollout wall p50', (x) => x.wallP50, s],
    ['rollout wall p99', (x) => x.wallP99, s],
    ['  v2 apply → first scaling p50', (x) => x.startP50, ms],
    ['  last step available → done p50', (x) => x.endP50, ms],
    ['reaction p50', (x) => x.reactionP50, ms],
    ['reaction p99', (x) => x.reactionP99, ms],
    ['  to its next scaling p50', (x) => x.scaleP50, ms],
    ['  to its next scaling p99', (x) => x.scaleP99, ms],
    ['API requests / rollout', (x) => x.requests, perRollout],
    ['  writes', (x) => x.writes, perRollout],
    ['  reads (get, list, watch)', (x) => x.reads, perRollout],
    ['controller CPU seconds', (x) => x.cpu, (v) => `${v.toFixed(1)} s`],
    ['controller peak RSS', (x) => x.peak, mib],
    ['  anonymous (highest reading)', (x) => x.peakAnon, mib],
    ['  file-backed (binary, libs)', (x) => x.peakFile, mib],
  ];
  const total = n * rounds.length;
  const steps = w.targets.length * total;
  const done = (side: Side) => rounds.reduce((sum, r) => sum + r[side].walls.length, 0);
  const finished = rounds.every((r) => r.ours.finished && r.theirs.finished);
  const order = rounds.length === 1 ? `${LABEL[firsts[0]!]} first` : `${rounds.length} rounds, first: ${firsts.join(', ')}`;
  const lines = [
    `scale ${n}: ${n} rollout${n === 1 ? '' : 's'} × ${o.replicas} pods at once; ${order}; done ${done('ours')}/${total} and ${done('theirs')}/${total}${finished ? '' : ' (TIMED OUT: partial)'}; reactions measured ${f.ours.reactions}/${steps} and ${f.theirs.reactions}/${steps}`,
    ...textTable(
      ['', LABEL.ours, LABEL.theirs, 'ours/theirs'],
      rows.map(([label, get, fmt]) => [label, fmt(get(f.ours)), fmt(get(f.theirs)), ratio(get(f.ours), get(f.theirs))]),
    ).map((l) => `  ${l}`),
  ];
  for (const side of ['ours', 'theirs'] as const) {
    const by = [...f[side].byVerb]
      .sort((a, b) => b[1] - a[1])
      .map(([k, v]) => `${k} ${v.toFixed(2)}`)
      .join(', ');
    lines.push(`  ${LABEL[side]} requests / rollout by verb and resource: ${by || '(none in the audit log)'}`);
  }
  if (rounds.length > 1) {
    const each = (values: readonly number[], unit: string, digits: number) => values.map((v) => v.toFixed(digits)).join(' / ') + unit;
    for (const side of ['ours', 'theirs'] as const)
      lines.push(
        `  ${LABEL[side]} per round (median above): wall ${each(
          rounds.map((r) => median(r[side].walls) / 1000),
          ' s',
          2,
        )} (p50 of the round); CPU ${each(f[side].cpuRounds, ' s', 2)}; peak RSS ${each(f[side].peakRounds, ' MiB', 0)}`,
      );
  }
  const shares = rounds.map((r) => r.ours.share);
  const share = shares.every((x) => x !== undefined) ? shares.reduce(addShares) : undefined;
  if (share) {
    const q = (h: HistogramSnapshot, p: number) => `${Math.round(histogramQuantile(h, p) * 1000)} ms`;
    lines.push(
      `  ${LABEL.ours} own share (its /metrics, buckets interpolated): ${(reconcileCount(share) / total).toFixed(1)} reconciles / rollout ` +
        `(${[...share.byResult].map(([result, n]) => `${result} ${(n / total).toFixed(1)}`).join(', ')}); ` +
        `status writes / rollout ${((share.statusWrites.transition + share.statusWrites.progress) / total).toFixed(1)} ` +
        `(transitions ${(share.statusWrites.transition / total).toFixed(1)}, counts alone ${(share.statusWrites.progress / total).toFixed(1)}); ` +
        `queue wait p50 ${q(share.queueWait, 0.5)}, p99 ${q(share.queueWait, 0.99)}; reconcile that acted p50 ${q(share.synced, 0.5)}, p99 ${q(share.synced, 0.99)}` +
        ' (a reaction is the watch delivering the pod update + queue wait + reconcile; the rest is the API server)',
    );
  }
  return lines;
}

// ---------------------------------------------------------------------------------------------------------------
// main

async function main(argv: readonly string[]): Promise<void> {
  const o = parseOptions(argv);
  const started = Date.now();
  const run = await BenchRun.open('peers');
  const { api, runId } = run;
  const policy = auditPolicy();
  const audited = policy.includes(SA_GROUP);
  const scaled = /level: RequestResponse\n\s+userGroups: \['system:serviceaccounts:bench-peers'\]/.test(policy);
  if (!audited) log(`the lab's audit policy does not log ${SA_GROUP} (started before bench:peers existed): no reaction or request figures; restart the lab`);
  log('building (or reusing) Argo Rollouts: npm run lab:build -- argo-rollouts');
  const binDir = labBuild('argo-rollouts');
  await installCrds(api, join(binDir, 'crds'));
  await ensureServiceAccounts(api);
  const dir = mkdtempSync(join(tmpdir(), 'bench-peers-'));
  const maxScale = Math.max(...o.scales);
  const nodeCount = Math.max(1, Math.ceil((maxScale * (o.replicas + o.batch) * 1.1) / PODS_PER_NODE));
  let regions: KubernetesObject[] = [];
  const out: string[] = [];
  const summary: { n: number; f: Record<Side, Figures> }[] = [];
  let steps = '-';
  try {
    await run.setUp(nodeCount, 1);
    log(`run ${runId}: ${nodeCount} bench nodes; scales ${o.scales.join(', ')}; ${o.replicas} pods per rollout`);
    for (const [k, n] of o.scales.entries()) {
      const rounds = o.rounds[k]!;
      const results: Record<Side, SideResult>[] = [];
      const samples: Record<Side, RoundSamples[]> = { ours: [], theirs: [] };
      const firsts: Side[] = [];
      let built: ReturnType<typeof work> | undefined;
      for (let round = 0; round < rounds; round++) {
        // A round's objects live in its own namespace pair (the rendered objects carry it).
        const at = rounds > 1 ? `${run.ns}-${n}-r${round + 1}` : `${run.ns}-${n}`;
        const ns: Record<Side, string> = { ours: `${at}-ed`, theirs: `${at}-argo` };
        built = work(runId, ns, n, o);
        regions = built.regions;
        steps = `${built.work.targets.join('/')} new pods (setWeight ${built.work.weights.join('/')})`;
        for (const region of regions) await api.apply(region, 'deployregions', false);
        const order: Side[] = (k + round) % 2 === 0 ? ['ours', 'theirs'] : ['theirs', 'ours'];
        firsts.push(order[0]!);
        const which = rounds > 1 ? `, round ${round + 1} of ${rounds}` : '';
        log(`scale ${n}${which}: steps of ${built.work.targets.join(', ')} pods = setWeight ${built.work.weights.join(', ')}; order ${order.join(' then ')}`);
        const result = {} as Record<Side, SideResult>;
        for (const side of order) {
          try {
            result[side] = await runSide(api, side, ns[side], built.work, n, o, { runId, binDir, dir });
          } finally {
            await deleteNamespace(api, ns[side]);
          }
        }
        const events = auditLines()
          .map((l) => (l.includes(SA_NAMESPACE) ? parseAuditEvent(l) : undefined))
          .filter((e): e is AuditEvent => e !== undefined);
        for (const side of order) samples[side].push(roundSamples(result[side], built.work, n, events));
        results.push(result);
      }
      const f = { ours: figures(samples.ours), theirs: figures(samples.theirs) };
      summary.push({ n, f });
      const lines = report(n, results, firsts, f, built!.work, o);
      out.push(...lines);
      for (const l of lines) log(l);
    }
    const allRatios = summary.flatMap(({ f }) =>
      [
        [f.ours.wallP50, f.theirs.wallP50],
        [f.ours.wallP99, f.theirs.wallP99],
        [f.ours.reactionP50, f.theirs.reactionP50],
        [f.ours.reactionP99, f.theirs.reactionP99],
        [f.ours.scaleP50, f.theirs.scaleP50],
        [f.ours.scaleP99, f.theirs.scaleP99],
        [f.ours.requests, f.theirs.requests],
        [f.ours.cpu, f.theirs.cpu],
        [f.ours.peak, f.theirs.peak],
      ].map(([a, b]) => ratio(a!, b!)),
    );
    const above = allRatios.filter((r) => r === '-' || Number(r) > 1).length;
    const at200 = summary.find((x) => x.n === 200);
    console.log(
      [
        `bench:peers — the same image rollouts by the ExtendedDeployment agent and by Argo Rollouts (rollouts-controller, basic canary, no traffic router); one region of ${o.replicas} pods per rollout, steps of ${steps}; minReadySeconds ${MIN_READY_SECONDS}; ${nodeCount} bench kwok nodes; the agent on Node.js ${agentNodeVersion()}`,
        ...out,
        `goal (every ratio at most 1; the agent's reaction p99 under 250 ms at 200 rollouts): ratios above 1 or unknown: ${above} of ${allRatios.length}; ${
          at200
            ? `agent reaction p99 at 200: ${Math.round(at200.f.ours.reactionP99)} ms (${at200.f.ours.reactionP99 < 250 ? 'met' : 'NOT met'})`
            : 'scale 200 not run'
        }${audited ? '' : '; NO AUDIT FIGURES (restart the lab)'}${scaled ? '' : "; no scaling figures (the lab's audit policy predates them: restart it)"}`,
        `bench wall time ${((Date.now() - started) / 1000).toFixed(0)} s`,
      ].join('\n'),
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
    await run.tearDown(regions);
    log(`done in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  }
}

await runBench(import.meta.url, main);
