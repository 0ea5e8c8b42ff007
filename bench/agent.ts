/**
 * bench/agent: the agent (the compiled `edctl agent`, as a child process) driving N ExtendedDeployments × R regions × P
 * pods on the lab cluster, all rolling out at once. Prints figures; asserts nothing about time.
 *
 *   npm run bench:agent -- [--eds 200] [--regions 3] [--replicas 5] [--batch 2] [--workers 2] [--idle-seconds 60]
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
 *     k being the group's target. "observed" = the bench's pod watch saw it Ready, + minReadySeconds. "by condition"
 *     = its Ready condition's lastTransitionTime (whole seconds) + minReadySeconds, never before it was seen Ready: the
 *     instant Kubernetes' own minReadySeconds rule (and the agent) call it available. The next group's first write is
 *     the first increase of a regional ReplicaSet's spec.replicas (ReplicaSet watch) ordered after the status write that
 *     records the next group (the agent writes the status first): resourceVersions of one etcd order them. Also shown:
 *     the delay to that status write itself. p50/p99 over every group transition of every rollout.
 * (b) API requests per rollout: the agent's own client-side counter (extendeddeployment_agent_api_requests_total,
 *     every request its API clients send, watches included, by verb and resource) read from its /metrics before and
 *     after the rollouts; Lease traffic is time-driven and shown apart.
 * (c) the agent's peak RSS (VmHWM of /proc/<pid>/status) after the rollouts, and its writes during `--idle-seconds` of
 *     idle once everything is Healthy (Lease renewals shown apart).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createWriteStream, existsSync, readdirSync, readFileSync } from 'node:fs';
import { request as httpsRequest, type RequestOptions } from 'node:https';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { KubeConfig, Watch, type KubernetesObject } from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import { NAME_LABEL, REGION_LABEL, REVISION_LABEL } from '../core/labels.js';
import { renderSet, type RenderedExtendedDeployment } from '../core/render.js';
import { groupTarget, regionGroups } from '../core/rollout/groups.js';

// ---------------------------------------------------------------------------------------------------------------
// options

interface Options {
  readonly eds: number;
  readonly regions: number;
  readonly replicas: number;
  readonly batch: number;
  readonly workers: number;
  readonly idleSeconds: number;
  readonly rolloutTimeoutSeconds: number;
  readonly nodes: number | undefined;
  /** Write the agent's log lines to this file. */
  readonly agentLog: string | undefined;
}

function positiveInt(flag: string, text: string | undefined, fallback: number): number {
  if (text === undefined) return fallback;
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1) throw new Error(`--${flag} must be a positive integer, not ${JSON.stringify(text)}`);
  return n;
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
    workers: positiveInt('workers', values.workers, 2),
    idleSeconds: positiveInt('idle-seconds', values['idle-seconds'], 60),
    rolloutTimeoutSeconds: positiveInt('rollout-timeout', values['rollout-timeout'], 600),
    nodes: values.nodes === undefined || values.nodes === 'auto' ? undefined : positiveInt('nodes', values.nodes, 1),
    agentLog: values['agent-log'],
  };
}

// ---------------------------------------------------------------------------------------------------------------
// small helpers

const GROUP = 'extendeddeployment.io';
const VERSION = 'v1beta1';
const FIELD_MANAGER = 'extendeddeployment-bench';
const KWOK_LABEL = 'lab.extendeddeployment.io/kwok';
const BENCH_LABEL = 'bench.extendeddeployment.io/agent';
const PODS_PER_NODE = 110;
const MIN_READY_SECONDS = 1;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const log = (s: string) => process.stderr.write(`[bench:agent ${new Date().toISOString().slice(11, 19)}] ${s}\n`);

function findRepoRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const pkg = join(dir, 'package.json');
    if (existsSync(pkg) && (JSON.parse(readFileSync(pkg, 'utf8')) as { name?: string }).name === 'extended-deployment') return dir;
    const up = dirname(dir);
    if (up === dir) throw new Error('cannot find the repository root');
    dir = up;
  }
}
const repoRoot = findRepoRoot();
const labDir = process.env['LAB_DIR'] || join(repoRoot, '.lab');
const kubeconfigPath = join(labDir, 'kubeconfig');

function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[Math.min(sorted.length, rank) - 1]!;
}

function stats(values: readonly number[]): string {
  const s = [...values].sort((a, b) => a - b);
  const ms = (v: number) => `${Math.round(v)} ms`;
  return `n=${s.length}  p50 ${ms(percentile(s, 50))}  p90 ${ms(percentile(s, 90))}  p99 ${ms(percentile(s, 99))}  max ${ms(s[s.length - 1] ?? Number.NaN)}  min ${ms(s[0] ?? Number.NaN)}`;
}

async function pool<T>(items: readonly T[], concurrency: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, items.length) }, async () => {
      while (next < items.length) await work(items[next++]!);
    }),
  );
}

// ---------------------------------------------------------------------------------------------------------------
// the API server

class ApiError extends Error {
  constructor(
    readonly code: number,
    body: string,
  ) {
    super(`HTTP ${code}: ${body.slice(0, 500)}`);
  }
}

class Api {
  readonly kc = new KubeConfig();
  private httpsOptions: RequestOptions | undefined;

  constructor(path: string) {
    this.kc.loadFromFile(path);
  }

  async request<T = any>(method: string, path: string, body?: unknown, contentType = 'application/json'): Promise<T> {
    if (!this.httpsOptions) {
      const opts: RequestOptions = {};
      await this.kc.applyToHTTPSOptions(opts);
      this.httpsOptions = opts;
    }
    const server = this.kc.getCurrentCluster()!.server;
    const data = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const opts: RequestOptions = { ...this.httpsOptions, method, headers: { ...(data && { 'content-type': contentType, 'content-length': data.length }) } };
    return new Promise((resolve, reject) => {
      const req = httpsRequest(new URL(path, server), opts, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (text += d));
        res.on('end', () => {
          const code = res.statusCode ?? 0;
          if (code < 200 || code >= 300) reject(new ApiError(code, text));
          else resolve((text ? JSON.parse(text) : undefined) as T);
        });
      });
      req.setTimeout(60_000, () => req.destroy(new Error(`${method} ${path}: timeout`)));
      req.on('error', reject);
      if (data) req.write(data);
      req.end();
    });
  }

  async apply(obj: KubernetesObject, plural: string, namespaced: boolean): Promise<void> {
    const [group, version] = obj.apiVersion!.includes('/') ? obj.apiVersion!.split('/') : ['', obj.apiVersion!];
    const base = group ? `/apis/${group}/${version}` : `/api/${version}`;
    const ns = namespaced ? `/namespaces/${obj.metadata!.namespace}` : '';
    await this.request('PATCH', `${base}${ns}/${plural}/${obj.metadata!.name}?fieldManager=${FIELD_MANAGER}&force=true`, obj, 'application/apply-patch+yaml');
  }

  async deleteIgnoringMissing(path: string): Promise<void> {
    try {
      await this.request('DELETE', path);
    } catch (e) {
      if (!(e instanceof ApiError && e.code === 404)) throw e;
    }
  }
}

async function waitUntil(what: string, timeoutMs: number, check: () => Promise<boolean> | boolean, intervalMs = 500): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      if (await check()) return;
    } catch {
      // retry
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs / 1000} s waiting for ${what}`);
    await sleep(intervalMs);
  }
}

type EventType = 'ADDED' | 'MODIFIED' | 'DELETED';

/** Re-lists of the bench's own watches (a watch that ended or failed), shown with the figures. */
const relists = { count: 0 };

/**
 * List, then watch from there, again after every end, until stopped. Events carry the local receive time; a re-list
 * reports objects that vanished meanwhile as DELETED.
 */
function listWatch<T extends KubernetesObject>(api: Api, path: string, onEvent: (type: EventType, object: T, at: number) => void): { synced: Promise<void>; stop: () => void } {
  let stopped = false;
  let controller: AbortController | undefined;
  let markSynced: () => void = () => undefined;
  const synced = new Promise<void>((resolve) => (markSynced = resolve));
  const known = new Map<string, T>();
  let lists = 0;
  void (async () => {
    while (!stopped) {
      try {
        const list = await api.request<{ metadata: { resourceVersion: string }; items: T[] }>('GET', path);
        const now = Date.now();
        // A re-list replaces what was known: objects gone meanwhile are reported DELETED.
        const listed = new Set(list.items.map((item) => item.metadata?.uid ?? ''));
        for (const [uid, object] of known) if (!listed.has(uid)) onEvent('DELETED', object, now);
        known.clear();
        for (const item of list.items) {
          known.set(item.metadata?.uid ?? '', item);
          onEvent('ADDED', item, now);
        }
        if (lists++ > 0) relists.count++;
        markSynced();
        await new Promise<void>((resolve) => {
          void new Watch(api.kc)
            .watch(
              path,
              { resourceVersion: list.metadata.resourceVersion, allowWatchBookmarks: true },
              (type: string, object: T) => {
                if (type !== 'ADDED' && type !== 'MODIFIED' && type !== 'DELETED') return;
                if (type === 'DELETED') known.delete(object.metadata?.uid ?? '');
                else known.set(object.metadata?.uid ?? '', object);
                onEvent(type, object, Date.now());
              },
              () => resolve(),
            )
            .then(
              (c) => {
                controller = c;
                if (stopped) c.abort();
              },
              () => resolve(),
            );
        });
      } catch {
        await sleep(500);
      }
    }
  })();
  return {
    synced,
    stop: () => {
      stopped = true;
      controller?.abort();
    },
  };
}

// ---------------------------------------------------------------------------------------------------------------
// the lab

function ensureLab(): void {
  const tsx = join(repoRoot, 'node_modules', '.bin', 'tsx');
  const cli = join(repoRoot, 'test', 'cluster', 'cli.ts');
  const status = spawnSync(tsx, [cli, 'status'], { cwd: repoRoot, encoding: 'utf8' });
  if (status.status === 0) {
    log('reusing the running lab');
    return;
  }
  log('the lab is not running: starting it (npm run lab:up)');
  const up = spawnSync(tsx, [cli, 'up'], { cwd: repoRoot, stdio: ['ignore', 'inherit', 'inherit'] });
  if (up.status !== 0) throw new Error('the lab did not start');
}

async function installCrds(api: Api): Promise<void> {
  const dir = join(repoRoot, 'crds');
  const crds = readdirSync(dir)
    .filter((f) => /\.ya?ml$/.test(f))
    .flatMap((f) => parseAllDocuments(readFileSync(join(dir, f), 'utf8')).map((d) => d.toJS() as KubernetesObject))
    .filter((o) => o?.kind === 'CustomResourceDefinition');
  for (const crd of crds) await api.apply(crd, 'customresourcedefinitions', false);
  for (const crd of crds) {
    await waitUntil(`CRD ${crd.metadata?.name} Established`, 60_000, async () => {
      const got = await api.request<{ status?: { conditions?: { type: string; status: string }[] } }>('GET', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd.metadata?.name}`);
      return got.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True') ?? false;
    });
  }
}

function benchNode(runId: string, index: number, zone: string, kubeletVersion: string): KubernetesObject {
  const name = `bench-${runId}-${index}`;
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name,
      labels: {
        'kubernetes.io/hostname': name,
        'kubernetes.io/os': 'linux',
        'kubernetes.io/arch': 'amd64',
        'topology.kubernetes.io/zone': zone,
        'extendeddeployment.io/pool': 'bench',
        type: 'kwok',
        [BENCH_LABEL]: runId,
        [KWOK_LABEL]: 'managed',
      },
      annotations: { 'node.alpha.kubernetes.io/ttl': '0', 'kwok.x-k8s.io/node': 'fake' },
    },
    spec: {
      providerID: `kwok://${name}`,
      podCIDR: `10.246.${index}.0/24`,
      podCIDRs: [`10.246.${index}.0/24`],
      taints: [{ key: BENCH_LABEL, value: runId, effect: 'NoSchedule' }],
    },
    status: {
      allocatable: { cpu: '64', memory: '256Gi', pods: String(PODS_PER_NODE) },
      capacity: { cpu: '64', memory: '256Gi', pods: String(PODS_PER_NODE) },
      addresses: [
        { type: 'InternalIP', address: `10.252.${Math.floor(index / 250)}.${(index % 250) + 1}` },
        { type: 'Hostname', address: name },
      ],
      nodeInfo: {
        architecture: 'amd64',
        operatingSystem: 'linux',
        bootID: '',
        containerRuntimeVersion: 'kwok',
        kernelVersion: 'kwok',
        kubeProxyVersion: '',
        kubeletVersion,
        machineID: '',
        osImage: 'kwok',
        systemUUID: '',
      },
    },
  } as KubernetesObject;
}

// ---------------------------------------------------------------------------------------------------------------
// the fleet

function fleetObjects(runId: string, ns: string, o: Options, image: string): { regions: KubernetesObject[]; eds: RenderedExtendedDeployment[] } {
  const regions = Array.from({ length: o.regions }, (_, i) => ({
    apiVersion: `${GROUP}/${VERSION}`,
    kind: 'DeployRegion',
    metadata: { name: `bench-${runId}-r${i + 1}` },
    spec: { matchLabels: { [BENCH_LABEL]: runId, 'topology.kubernetes.io/zone': `bench-zone-${i + 1}` } },
  }));
  const eds = Array.from({ length: o.eds }, (_, i) => ({
    apiVersion: `${GROUP}/${VERSION}`,
    kind: 'ExtendedDeployment',
    metadata: { name: `app-${String(i).padStart(3, '0')}`, namespace: ns },
    spec: {
      replicas: o.replicas * o.regions,
      selector: { matchLabels: { app: `app-${i}` } },
      template: {
        metadata: { labels: { app: `app-${i}` } },
        spec: {
          terminationGracePeriodSeconds: 0,
          tolerations: [{ key: BENCH_LABEL, operator: 'Exists', effect: 'NoSchedule' }],
          containers: [{ name: 'app', image, resources: { requests: { cpu: '10m', memory: '16Mi' } } }],
        },
      },
      regions: regions.map((r) => ({ name: r.metadata.name, replicas: o.replicas })),
      strategy: { rolloutStrategy: 'Beta', batchSize: o.batch, minReadySeconds: MIN_READY_SECONDS, needWaitingForConfirm: false },
    },
  }));
  const result = renderSet([...regions, ...eds]);
  if (!result.ok) throw new Error(`render failed: ${JSON.stringify(result.problems).slice(0, 1000)}`);
  return { regions, eds: [...result.value.extendedDeployments] };
}

async function applyFleet(api: Api, eds: readonly RenderedExtendedDeployment[]): Promise<void> {
  await pool(eds, 6, async (ed) => {
    await api.apply(ed.manifest as KubernetesObject, 'extendeddeployments', true);
    for (const region of ed.regions) await api.apply(region.workload as KubernetesObject, 'replicasets', true);
  });
}

// ---------------------------------------------------------------------------------------------------------------
// the agent process

class AgentChild {
  readonly child: ChildProcess;
  private readonly lines: string[] = [];
  warnings = 0;
  private port: number | undefined;
  private readonly portReady: Promise<number>;

  constructor(args: string[], logFile?: string) {
    const logStream = logFile ? createWriteStream(logFile) : undefined;
    // BENCH_AGENT_NODE_ARGS (e.g. --cpu-prof): Node.js flags for the agent only.
    const nodeArgs = (process.env['BENCH_AGENT_NODE_ARGS'] ?? '').split(' ').filter(Boolean);
    this.child = spawn(process.execPath, [...nodeArgs, join(repoRoot, 'lib', 'cli', 'main.js'), 'agent', ...args], { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] });
    let gotPort: (p: number) => void = () => undefined;
    this.portReady = new Promise((resolve) => (gotPort = resolve));
    createInterface({ input: this.child.stdout! }).on('line', (line) => {
      logStream?.write(`${line}\n`);
      this.lines.push(line);
      if (this.lines.length > 200) this.lines.shift();
      try {
        const entry = JSON.parse(line) as { msg?: string; level?: string; address?: string };
        if (entry.level === 'warn' || entry.level === 'error') this.warnings++;
        if (entry.msg === 'serving health and metrics' && entry.address) {
          this.port = Number(entry.address.split(':').pop());
          gotPort(this.port);
        }
      } catch {
        // not JSON
      }
    });
    this.child.stderr!.on('data', (d: Buffer) => process.stderr.write(`[agent stderr] ${d.toString()}`));
  }

  async metrics(): Promise<string> {
    const port = await this.portReady;
    return (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  }

  async waitLeading(timeoutMs: number): Promise<void> {
    await waitUntil('the agent leading with synced caches', timeoutMs, () => this.lines.some((l) => l.includes('"workers started"')));
  }

  /** VmHWM (peak) and VmRSS (now) in MiB, from /proc. */
  memory(): { peakMiB: number; nowMiB: number } {
    const text = readFileSync(`/proc/${this.child.pid}/status`, 'utf8');
    const kib = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? Number.NaN);
    return { peakMiB: kib('VmHWM') / 1024, nowMiB: kib('VmRSS') / 1024 };
  }

  tail(n = 20): string {
    return this.lines.slice(-n).join('\n');
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 30_000);
    await exited;
    clearTimeout(timer);
  }
}

/** extendeddeployment_agent_api_requests_total as a map `VERB resource` → count. */
function requestCounts(metrics: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const m of metrics.matchAll(/^extendeddeployment_agent_api_requests_total\{([^}]*)\} (\d+)/gm)) {
    const labels = Object.fromEntries([...m[1]!.matchAll(/(\w+)="([^"]*)"/g)].map((l) => [l[1], l[2]]));
    out.set(`${labels['verb']} ${labels['resource']}`, Number(m[2]));
  }
  return out;
}

function diffCounts(after: Map<string, number>, before: Map<string, number>): Map<string, number> {
  const out = new Map<string, number>();
  for (const [k, v] of after) if (v - (before.get(k) ?? 0) > 0) out.set(k, v - (before.get(k) ?? 0));
  return out;
}

const WRITE_VERBS = new Set(['POST', 'PUT', 'PATCH', 'DELETE', 'DELETECOLLECTION']);
const sum = (m: Map<string, number>, keep: (key: string) => boolean = () => true) => [...m].filter(([k]) => keep(k)).reduce((s, [, v]) => s + v, 0);
const isLease = (k: string) => k.endsWith(' leases');
const isWrite = (k: string) => WRITE_VERBS.has(k.split(' ')[0]!);

function metricValue(metrics: string, name: string, labels = ''): number {
  const re = new RegExp(`^${name}${labels ? `\\{${labels}\\}` : ''} ([0-9.e+-]+)`, 'm');
  return Number(re.exec(metrics)?.[1] ?? Number.NaN);
}

// ---------------------------------------------------------------------------------------------------------------
// observations

interface PodSeen {
  ed: string;
  region: string;
  revision: string;
  readyAt?: number;
  /** Ready's lastTransitionTime (ms) when first seen Ready. */
  readyLtt?: number;
  terminating: boolean;
}

interface StatusSeen {
  at: number;
  rv: number;
  revision: string | undefined;
  group: number;
  phase: string | undefined;
}

interface ScaleSeen {
  at: number;
  rv: number;
  from: number;
  to: number;
}

class Observer {
  readonly pods = new Map<string, PodSeen>();
  readonly statuses = new Map<string, StatusSeen[]>();
  readonly lastStatus = new Map<string, StatusSeen>();
  /** ReplicaSet name → spec.replicas changes. */
  readonly scales = new Map<string, ScaleSeen[]>();
  private readonly replicas = new Map<string, number>();
  private readonly watches: { synced: Promise<void>; stop: () => void }[] = [];

  constructor(api: Api, ns: string) {
    const selector = encodeURIComponent(NAME_LABEL);
    this.watches.push(
      listWatch<any>(api, `/api/v1/namespaces/${ns}/pods?labelSelector=${selector}`, (type, pod, at) => this.onPod(type, pod, at)),
      listWatch<any>(api, `/apis/apps/v1/namespaces/${ns}/replicasets?labelSelector=${selector}`, (type, rs, at) => this.onReplicaSet(type, rs, at)),
      listWatch<any>(api, `/apis/${GROUP}/${VERSION}/namespaces/${ns}/extendeddeployments`, (type, ed, at) => this.onEd(type, ed, at)),
    );
  }

  synced(): Promise<void> {
    return Promise.all(this.watches.map((w) => w.synced)).then(() => undefined);
  }

  stop(): void {
    for (const w of this.watches) w.stop();
  }

  private onPod(type: EventType, pod: any, at: number): void {
    const uid = pod.metadata.uid as string;
    if (type === 'DELETED') {
      this.pods.delete(uid);
      return;
    }
    const labels = pod.metadata.labels ?? {};
    let seen = this.pods.get(uid);
    if (!seen) {
      seen = { ed: labels[NAME_LABEL], region: labels[REGION_LABEL], revision: labels[REVISION_LABEL], terminating: false };
      this.pods.set(uid, seen);
    }
    seen.terminating = !!pod.metadata.deletionTimestamp;
    const ready = (pod.status?.conditions ?? []).find((c: any) => c.type === 'Ready');
    if (ready?.status === 'True' && seen.readyAt === undefined) {
      seen.readyAt = at;
      seen.readyLtt = Date.parse(ready.lastTransitionTime);
    }
  }

  private onReplicaSet(type: EventType, rs: any, at: number): void {
    const name = rs.metadata.name as string;
    if (type === 'DELETED') return;
    const to = rs.spec?.replicas ?? 1;
    const from = this.replicas.get(name);
    this.replicas.set(name, to);
    if (from === undefined || from === to) return;
    const list = this.scales.get(name) ?? [];
    list.push({ at, rv: Number(rs.metadata.resourceVersion), from, to });
    this.scales.set(name, list);
  }

  private onEd(type: EventType, ed: any, at: number): void {
    if (type === 'DELETED') return;
    const s = ed.status ?? {};
    const seen: StatusSeen = { at, rv: Number(ed.metadata.resourceVersion), revision: s.revision, group: s.currentGroup ?? 0, phase: s.phase };
    const list = this.statuses.get(ed.metadata.name) ?? [];
    list.push(seen);
    this.statuses.set(ed.metadata.name, list);
    this.lastStatus.set(ed.metadata.name, seen);
  }

  /** What the ExtendedDeployments that are not done show: status and pods by region, revision and state. */
  notDone(eds: readonly RenderedExtendedDeployment[]): string[] {
    const out: string[] = [];
    for (const ed of eds) {
      const name = ed.parsed.metadata.name;
      const targets = new Map(ed.regions.map((r) => [r.name, r.revision]));
      const pods = [...this.pods.values()].filter((p) => p.ed === name);
      const st = this.lastStatus.get(name);
      const fresh = pods.filter((p) => !p.terminating && p.revision === targets.get(p.region) && p.readyAt !== undefined).length;
      if (st?.phase === 'Healthy' && st.revision === ed.rolloutRevision && fresh === ed.replicas && pods.length === ed.replicas) continue;
      const desc = pods.map((p) => `${p.region.slice(-2)}:${p.revision === targets.get(p.region) ? 'new' : 'old'}${p.terminating ? ':terminating' : ''}${p.readyAt ? '' : ':notReady'}`);
      out.push(`${name} ${st?.phase}/${st?.group} [${desc.filter((d) => !d.endsWith(':new')).join(',')}]`);
    }
    return out;
  }

  /** EDs Healthy at `revision` whose pods are exactly the desired count, all at their region's target and Ready. */
  progress(eds: readonly RenderedExtendedDeployment[]): { healthy: number; done: number; pods: number; readyNew: number; terminating: number } {
    const perEd = new Map<string, PodSeen[]>();
    let terminating = 0;
    for (const p of this.pods.values()) {
      if (p.terminating) terminating++;
      const list = perEd.get(p.ed) ?? [];
      list.push(p);
      perEd.set(p.ed, list);
    }
    let healthy = 0;
    let done = 0;
    let readyNew = 0;
    for (const ed of eds) {
      const name = ed.parsed.metadata.name;
      const targets = new Map(ed.regions.map((r) => [r.name, r.revision]));
      const pods = perEd.get(name) ?? [];
      const fresh = pods.filter((p) => !p.terminating && p.revision === targets.get(p.region) && p.readyAt !== undefined).length;
      readyNew += fresh;
      const st = this.lastStatus.get(name);
      const isHealthy = st?.phase === 'Healthy' && st.revision === ed.rolloutRevision;
      if (isHealthy) healthy++;
      if (isHealthy && fresh === ed.replicas && pods.length === ed.replicas) done++;
    }
    return { healthy, done, pods: this.pods.size, readyNew, terminating };
  }
}

interface Transition {
  ed: string;
  group: number;
  /** Group available: observed Ready + minReadySeconds. */
  availableObserved: number;
  /** Group available by the Ready condition's time + minReadySeconds (never before it was seen Ready). */
  availableByCondition: number;
  statusAt: number;
  scaleAt: number | undefined;
}

/** Every group → next group transition of the rollout to `eds` (see the header for the definitions). */
function transitions(obs: Observer, eds: readonly RenderedExtendedDeployment[], podsAtTarget: Map<string, PodSeen[]>): Transition[] {
  const out: Transition[] = [];
  const minReadyMs = MIN_READY_SECONDS * 1000;
  for (const ed of eds) {
    const name = ed.parsed.metadata.name;
    const strategy = ed.parsed.spec.strategy;
    const groups = Math.max(...ed.regions.map((r) => regionGroups(strategy, r.replicas)));
    const statuses = (obs.statuses.get(name) ?? []).filter((s) => s.revision === ed.rolloutRevision);
    for (let g = 1; g < groups; g++) {
      let availableObserved = 0;
      let availableByCondition = 0;
      let complete = true;
      for (const region of ed.regions) {
        const k = groupTarget(strategy, region.replicas, g);
        const pods = (podsAtTarget.get(`${name}/${region.name}`) ?? []).filter((p) => p.readyAt !== undefined);
        const observed = pods.map((p) => p.readyAt! + minReadyMs).sort((a, b) => a - b);
        const byCondition = pods.map((p) => Math.max(p.readyAt!, (p.readyLtt ?? p.readyAt!) + minReadyMs)).sort((a, b) => a - b);
        if (observed.length < k) {
          complete = false;
          break;
        }
        availableObserved = Math.max(availableObserved, observed[k - 1]!);
        availableByCondition = Math.max(availableByCondition, byCondition[k - 1]!);
      }
      const status = statuses.find((s) => s.group >= g + 1);
      if (!complete || !status) continue;
      const scale = ed.regions
        .flatMap((r) => (obs.scales.get(`${name}-${r.name}`) ?? []).filter((s) => s.rv > status.rv && s.to > s.from))
        .sort((a, b) => a.rv - b.rv)[0];
      out.push({ ed: name, group: g, availableObserved, availableByCondition, statusAt: status.at, scaleAt: scale?.at });
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
  ensureLab();
  const api = new Api(kubeconfigPath);
  const runId = randomBytes(3).toString('hex');
  const ns = `bench-agent-${runId}`;
  log(`run ${runId}: ${o.eds} ExtendedDeployments × ${o.regions} regions × ${o.replicas} pods = ${pods} pods (up to ${peakPods} with surge) on ${nodeCount} bench nodes`);

  const labNode = (await api.request<{ items: any[] }>('GET', `/api/v1/nodes?labelSelector=${encodeURIComponent(`${KWOK_LABEL}=managed`)}`)).items[0];
  const kubeletVersion = labNode?.status?.nodeInfo?.kubeletVersion ?? 'v0.0.0';
  await installCrds(api);

  const nodes = Array.from({ length: nodeCount }, (_, i) => benchNode(runId, i, `bench-zone-${(i % o.regions) + 1}`, kubeletVersion));
  const v1 = fleetObjects(runId, ns, o, 'registry.example/bench:1');
  const v2 = fleetObjects(runId, ns, o, 'registry.example/bench:2');
  let agent: AgentChild | undefined;
  let observer: Observer | undefined;
  try {
    await pool(nodes, 4, (n) => api.request('POST', '/api/v1/nodes', n));
    await waitUntil('bench nodes Ready', 180_000, async () => {
      const list = await api.request<{ items: any[] }>('GET', `/api/v1/nodes?labelSelector=${encodeURIComponent(`${BENCH_LABEL}=${runId}`)}`);
      return list.items.filter((n) => (n.status?.conditions ?? []).some((c: any) => c.type === 'Ready' && c.status === 'True')).length === nodeCount;
    }, 1000);
    await api.request('POST', '/api/v1/namespaces', { metadata: { name: ns, labels: { 'extendeddeployment.io/bench': 'true' } } });
    await waitUntil('the namespace\'s default ServiceAccount', 60_000, async () => !!(await api.request('GET', `/api/v1/namespaces/${ns}/serviceaccounts/default`)));
    for (const region of v1.regions) await api.apply(region, 'deployregions', false);
    log(`setup: ${nodeCount} nodes Ready, namespace ${ns}, ${o.regions} DeployRegions (${((Date.now() - started) / 1000).toFixed(0)} s)`);

    agent = new AgentChild([
      '--kubeconfig',
      kubeconfigPath,
      '--namespace',
      ns,
      '--lease-namespace',
      ns,
      '--metrics-bind-address',
      '127.0.0.1:0',
      '--identity',
      `bench-${runId}`,
      '--workers',
      String(o.workers),
    ], o.agentLog);
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
    const p99 = percentile(withScale.map((t) => t.scaleAt! - t.availableObserved).sort((a, b) => a - b), 99);
    const p99c = percentile(withScale.map((t) => t.scaleAt! - t.availableByCondition).sort((a, b) => a - b), 99);

    console.log(
      [
        `bench:agent — ${o.eds} ExtendedDeployments × ${o.regions} regions × ${o.replicas} pods = ${pods} pods; Beta, batch ${o.batch} (surge ${o.batch}), scaleOutPriority, minReadySeconds ${MIN_READY_SECONDS}; agent --workers ${o.workers}; ${nodeCount} bench kwok nodes × ${PODS_PER_NODE} pods`,
        `  v1 sync (ReplicaSets 1 → ${o.replicas}, ${pods} pods Ready): ${v1Seconds.toFixed(1)} s; v2 rollout of all ${o.eds} at once: applied in ${applySeconds.toFixed(1)} s, complete after ${rolloutSeconds.toFixed(1)} s${finished ? '' : ' (TIMED OUT: figures are partial)'}`,
        `(a) group available → next group's first ReplicaSet write (${withScale.length} of ${expectedTransitions} transitions measured):`,
        `    from observed Ready + minReadySeconds:      ${stats(withScale.map((t) => t.scaleAt! - t.availableObserved))}`,
        `    from Ready condition time + minReadySeconds: ${stats(withScale.map((t) => t.scaleAt! - t.availableByCondition))}`,
        `    to the status write recording the group (observed): ${stats(ts.map((t) => t.statusAt - t.availableObserved))}`,
        `    by group: ${[...new Set(withScale.map((t) => t.group))].map((g) => `${g}→${g + 1}: p50 ${Math.round(percentile(withScale.filter((t) => t.group === g).map((t) => t.scaleAt! - t.availableObserved).sort((a, b) => a - b), 50))} ms`).join(', ')}`,
        `    target p99 < 500 ms: ${ok(p99 < 500)} (observed ${Math.round(p99)} ms, by condition ${Math.round(p99c)} ms)`,
        `    reconciles during the rollout: ${nReconciles} (mean ${reconcileMs.toFixed(1)} ms each)`,
        `(b) API requests per rollout (agent's client-side counter, ${o.eds} rollouts): ${perRollout((k) => !isLease(k))} (writes ${perRollout((k) => isWrite(k) && !isLease(k))}, reads ${perRollout((k) => !isWrite(k) && !isLease(k))})`,
        `    per rollout by verb and resource: ${breakdown.join(', ')}`,
        `    Lease (time-driven, whole rollout window of ${rolloutSeconds.toFixed(0)} s): ${sum(during, isLease)} requests`,
        `(c) agent peak RSS (VmHWM) after the rollouts: ${memory.peakMiB.toFixed(0)} MiB (RSS then ${memory.nowMiB.toFixed(0)} MiB, after idle ${memoryIdle.nowMiB.toFixed(0)} MiB); target < 250 MB (238 MiB): ${ok(memory.peakMiB * 1.048576 < 250)}`,
        `    idle ${o.idleSeconds} s once Healthy: ${idleWrites} writes besides the Lease${idleWrites > 0 ? ` (${[...idle].filter(([k]) => isWrite(k) && !isLease(k)).map(([k, v]) => `${k} ${v}`).join(', ')})` : ''}; Lease renewals ${idleLease}; all requests ${sum(idle)}; target 0 writes: ${ok(idleWrites === 0)}`,
        `    agent warnings/errors logged: ${agent.warnings}; bench watch re-lists: ${relists.count}; bench wall time ${((Date.now() - started) / 1000).toFixed(0)} s`,
      ].join('\n'),
    );
  } finally {
    observer?.stop();
    await agent?.stop();
    log('cleaning up: namespace, DeployRegions, bench nodes');
    await api.deleteIgnoringMissing(`/api/v1/namespaces/${ns}`).catch((e: unknown) => log(`namespace delete: ${String(e)}`));
    await waitUntil('the bench namespace gone', 300_000, async () => {
      try {
        await api.request('GET', `/api/v1/namespaces/${ns}`);
        return false;
      } catch (e) {
        return e instanceof ApiError && e.code === 404;
      }
    }, 2000).catch((e: unknown) => log(String(e)));
    for (const region of v1.regions) await api.deleteIgnoringMissing(`/apis/${GROUP}/${VERSION}/deployregions/${region.metadata!.name}`).catch(() => undefined);
    await pool(nodes, 4, (n) => api.deleteIgnoringMissing(`/api/v1/nodes/${n.metadata!.name}`).catch(() => undefined));
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

/** Waits until every ExtendedDeployment of `eds` is done; logs progress. Returns false on timeout. */
async function waitFleet(observer: Observer, eds: readonly RenderedExtendedDeployment[], what: string, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  let lastLog = 0;
  for (;;) {
    const p = observer.progress(eds);
    if (p.done === eds.length && p.terminating === 0) {
      log(`${what}: all ${eds.length} done (${p.pods} pods)`);
      return true;
    }
    if (Date.now() - lastLog > 15_000) {
      log(`${what}: ${p.done}/${eds.length} done, ${p.healthy} Healthy; ${p.readyNew} pods Ready at the target, ${p.pods} pods, ${p.terminating} terminating`);
      lastLog = Date.now();
    }
    if (Date.now() > deadline) {
      log(`${what}: timed out; not done: ${observer.notDone(eds).slice(0, 5).join(' | ')}`);
      return false;
    }
    await sleep(500);
  }
}

await main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error instanceof Error ? error.stack : String(error));
    process.exit(1);
  },
);
