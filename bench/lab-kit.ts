/**
 * Shared pieces of the benches that run on the lab (bench/agent, bench/soak, bench/inplace, bench/moves): the API
 * client, list-watch, the lab (its CLI, its CRDs, its general-pool node sets as DeployRegions), bench kwok nodes and a
 * bench run's setup and cleanup, and small statistics helpers.
 */
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { request as httpsRequest, type RequestOptions } from 'node:https';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { KubeConfig, Watch, type KubernetesObject, type V1Node } from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import { percentile } from './figures.js';

export const GROUP = 'extendeddeployment.io';
export const VERSION = 'v1beta1';
export const FIELD_MANAGER = 'extendeddeployment-bench';
export const KWOK_LABEL = 'lab.extendeddeployment.io/kwok';
export const BENCH_LABEL = 'bench.extendeddeployment.io/agent';
export const PODS_PER_NODE = 110;

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** The running bench's name (its script, e.g. `agent`, `soak`), in its log lines. */
export const BENCH_NAME = basename(process.argv[1] ?? 'bench').replace(/\.[jt]s$/, '');
export const log = (s: string) => process.stderr.write(`[bench:${BENCH_NAME} ${new Date().toISOString().slice(11, 19)}] ${s}\n`);

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
export const repoRoot = findRepoRoot();
const labDir = process.env['LAB_DIR'] || join(repoRoot, '.lab');
export const kubeconfigPath = join(labDir, 'kubeconfig');

/** The lab's audit log lines: audit.log and the file it was last rotated into (audit-<time>.log), which may hold a run's first events. */
export function auditLines(): string[] {
  const logs = join(labDir, 'logs');
  const files = existsSync(logs) ? readdirSync(logs).filter((f) => /^audit(-.+)?\.log$/.test(f)) : [];
  return files.flatMap((f) => readFileSync(join(logs, f), 'utf8').split('\n'));
}

/** The lab's audit policy (test/cluster/lab.ts writes it at start), or '' when there is none. */
export function auditPolicy(): string {
  const path = join(labDir, 'logs', 'audit-policy.yaml');
  return existsSync(path) ? readFileSync(path, 'utf8') : '';
}

/**
 * When the API server completed each status write of an ExtendedDeployment or a pod of namespace `ns`, by
 * `resource/name/resourceVersion` (`extendeddeployments/web/123`, `pods/web-a-x/456`; ms, from the lab's audit log:
 * test/cluster/lab.ts audits only these writes). Empty when the lab has no audit log.
 */
export function statusWritesCompleted(ns: string): Map<string, number> {
  const completed = new Map<string, number>();
  for (const line of auditLines()) {
    if (!line.includes(ns)) continue;
    const event = JSON.parse(line) as {
      stage?: string;
      objectRef?: { namespace?: string; name?: string; resource?: string; subresource?: string };
      responseStatus?: { code?: number };
      responseObject?: { metadata?: { resourceVersion?: string } };
      stageTimestamp?: string;
    };
    const ref = event.objectRef;
    const rv = event.responseObject?.metadata?.resourceVersion;
    if (event.stage !== 'ResponseComplete' || ref?.namespace !== ns || ref.subresource !== 'status') continue;
    if (event.responseStatus?.code !== 200 || !rv || !event.stageTimestamp) continue;
    completed.set(`${ref.resource}/${ref.name}/${rv}`, Date.parse(event.stageTimestamp));
  }
  return completed;
}

export { percentile };

export function stats(values: readonly number[]): string {
  const s = [...values].sort((a, b) => a - b);
  const ms = (v: number) => `${Math.round(v)} ms`;
  return `n=${s.length}  p50 ${ms(percentile(s, 50))}  p90 ${ms(percentile(s, 90))}  p99 ${ms(percentile(s, 99))}  max ${ms(s[s.length - 1] ?? Number.NaN)}  min ${ms(s[0] ?? Number.NaN)}`;
}

export async function pool<T>(items: readonly T[], concurrency: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, items.length) }, async () => {
      while (next < items.length) await work(items[next++]!);
    }),
  );
}

// ---------------------------------------------------------------------------------------------------------------
// the API server

export class ApiError extends Error {
  constructor(
    readonly code: number,
    body: string,
  ) {
    super(`HTTP ${code}: ${body.slice(0, 500)}`);
  }
}

export class Api {
  readonly kc = new KubeConfig();
  private httpsOptions: RequestOptions | undefined;

  constructor(path: string) {
    this.kc.loadFromFile(path);
  }

  async request<T = unknown>(method: string, path: string, body?: unknown, contentType = 'application/json'): Promise<T> {
    const text = await this.send(method, path, body, contentType);
    return (text ? JSON.parse(text) : undefined) as T;
  }

  /** A GET answered in plain text (e.g. the API server's /metrics). */
  text(path: string): Promise<string> {
    return this.send('GET', path, undefined, 'text/plain');
  }

  private async send(method: string, path: string, body: unknown, contentType: string): Promise<string> {
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
          else resolve(text);
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

export async function waitUntil(what: string, timeoutMs: number, check: () => Promise<boolean> | boolean, intervalMs = 500): Promise<void> {
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

export type EventType = 'ADDED' | 'MODIFIED' | 'DELETED';

/** Re-lists of the bench's own watches (a watch that ended or failed), shown with the figures. */
export const relists = { count: 0 };

/**
 * List, then watch from there, again after every end, until stopped. Events carry the local receive time; a re-list
 * reports objects that vanished meanwhile as DELETED.
 */
export function listWatch<T extends KubernetesObject>(
  api: Api,
  path: string,
  onEvent: (type: EventType, object: T, at: number) => void,
): { synced: Promise<void>; stop: () => void } {
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

/** The lab's own CLI (`tsx test/cluster/cli.ts <args>`, as `npm run lab:*` runs it): command and arguments. */
function labCommand(args: readonly string[]): [string, string[]] {
  return [join(repoRoot, 'node_modules', '.bin', 'tsx'), [join(repoRoot, 'test', 'cluster', 'cli.ts'), ...args]];
}

/**
 * Builds a binary set of the lab on demand with its own CLI (`tsx test/cluster/cli.ts build <what>`, e.g.
 * `argo-rollouts`; cached after the first time) and returns the directory it printed.
 */
export function labBuild(what: string): string {
  const r = spawnSync(...labCommand(['build', what]), { cwd: repoRoot, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  if (r.status !== 0) throw new Error(`lab build ${what} failed (exit ${r.status})`);
  return r.stdout.trim().split('\n').pop() ?? '';
}

/**
 * What a bench does with the lab before it runs: nothing when one runs (reused), `up` when none does, and `down` then
 * `up` when BENCH_FRESH_LAB is 1 and one runs. A lab's API server grows with every rollout it serves and the machine's
 * load drifts, so runs one after another on one lab do not compare (bench:peers' reaction p99 at 200 rollouts: 227 ms
 * on a fresh lab, 380 ms after the other scales); a series of runs to compare wants a fresh lab each.
 */
export function labSteps(running: boolean, freshLab: string | undefined): readonly ('down' | 'up')[] {
  if (freshLab !== undefined && !['', '0', '1'].includes(freshLab))
    throw new Error(`BENCH_FRESH_LAB must be 1 (a fresh lab) or 0 (reuse a running one), not ${JSON.stringify(freshLab)}`);
  if (!running) return ['up'];
  return freshLab === '1' ? ['down', 'up'] : [];
}

/** Reuses the running lab, or starts one (a fresh one with BENCH_FRESH_LAB=1: labSteps). */
export function ensureLab(): void {
  const status = spawnSync(...labCommand(['status']), { cwd: repoRoot, encoding: 'utf8' });
  const steps = labSteps(status.status === 0, process.env['BENCH_FRESH_LAB']);
  if (steps.length === 0) log('reusing the running lab (BENCH_FRESH_LAB=1 starts a fresh one)');
  else if (steps[0] === 'down') log('BENCH_FRESH_LAB=1: stopping the running lab to start a fresh one');
  else log('the lab is not running: starting it (npm run lab:up)');
  for (const step of steps) {
    const run = spawnSync(...labCommand([step]), { cwd: repoRoot, stdio: ['ignore', 'inherit', 'inherit'] });
    if (run.status !== 0) throw new Error(step === 'up' ? 'the lab did not start' : 'the running lab did not stop');
  }
}

/**
 * Runs the lab's CLI (e.g. `fail-nodes <selector>`, `heal-nodes <selector>`) without blocking: the bench's watches and
 * an in-process agent keep running meanwhile. Rejects with the command's output when it fails.
 */
export function labCli(args: readonly string[]): Promise<void> {
  const child = spawn(...labCommand(args), { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`lab ${args.join(' ')} failed (exit ${code}): ${output.trim()}`))));
  });
}

/** The lab's general-pool node sets (disjoint; two nodes each): zone-a amd64, zone-b amd64, zone-c arm64. */
export const LAB_NODE_SETS = [
  { 'extendeddeployment.io/pool': 'general', 'kubernetes.io/arch': 'amd64', 'topology.kubernetes.io/zone': 'zone-a' },
  { 'extendeddeployment.io/pool': 'general', 'kubernetes.io/arch': 'amd64', 'topology.kubernetes.io/zone': 'zone-b' },
  { 'extendeddeployment.io/pool': 'general', 'kubernetes.io/arch': 'arm64', 'topology.kubernetes.io/zone': 'zone-c' },
] as const;

/** `count` DeployRegions (at most 3) on the lab's general-pool node sets, named `<prefix>-a`, `<prefix>-b`, `<prefix>-c`. */
export function labDeployRegions(prefix: string, count: number): KubernetesObject[] {
  if (count > LAB_NODE_SETS.length) throw new Error(`the lab has ${LAB_NODE_SETS.length} general-pool node sets, not ${count}`);
  return LAB_NODE_SETS.slice(0, count).map((labels, i) => ({
    apiVersion: `${GROUP}/${VERSION}`,
    kind: 'DeployRegion',
    metadata: { name: `${prefix}-${'abc'[i]}` },
    spec: { matchLabels: { ...labels } },
  }));
}

/** Applies the CRDs of `dir` (default: this project's crds/) and waits until each is Established. */
export async function installCrds(api: Api, dir = join(repoRoot, 'crds')): Promise<void> {
  const crds = readdirSync(dir)
    .filter((f) => /\.ya?ml$/.test(f))
    .flatMap((f) => parseAllDocuments(readFileSync(join(dir, f), 'utf8')).map((d) => d.toJS() as KubernetesObject))
    .filter((o) => o?.kind === 'CustomResourceDefinition');
  for (const crd of crds) await api.apply(crd, 'customresourcedefinitions', false);
  for (const crd of crds) {
    await waitUntil(`CRD ${crd.metadata?.name} Established`, 60_000, async () => {
      const got = await api.request<{ status?: { conditions?: { type: string; status: string }[] } }>(
        'GET',
        `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd.metadata?.name}`,
      );
      return got.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True') ?? false;
    });
  }
}

export function benchNode(runId: string, index: number, zone: string, kubeletVersion: string): KubernetesObject {
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

/**
 * The command line of an agent that watches only `ns` and holds its Lease there, metrics and probes on free loopback
 * ports (the benches' agents, several of which may run against one lab).
 */
export function namespacedAgentArgs(kubeconfig: string, ns: string, identity: string, workers?: number): string[] {
  const base = [
    '--kubeconfig',
    kubeconfig,
    '--namespace',
    ns,
    '--lease-namespace',
    ns,
    '--metrics-bind-address',
    '127.0.0.1:0',
    '--health-probe-bind-address',
    '127.0.0.1:0',
    '--identity',
    identity,
  ];
  return workers === undefined ? base : [...base, '--workers', String(workers)];
}

/**
 * One bench run on the lab: its own kwok nodes (tainted, labelled with the run id), a namespace, and cleanup of both
 * (and of the DeployRegions it was given). Nodes are spread over `regions` zones `bench-zone-<1..R>`.
 */
export class BenchRun {
  readonly runId = randomBytes(3).toString('hex');
  readonly ns: string;
  private nodes: KubernetesObject[] = [];

  private constructor(
    readonly api: Api,
    name: string,
    private readonly kubeletVersion: string,
  ) {
    this.ns = `bench-${name}-${this.runId}`;
  }

  /** Reuses (or starts) the lab and installs the CRDs. */
  static async open(name: string): Promise<BenchRun> {
    ensureLab();
    const api = new Api(kubeconfigPath);
    const labNode = (await api.request<{ items: V1Node[] }>('GET', `/api/v1/nodes?labelSelector=${encodeURIComponent(`${KWOK_LABEL}=managed`)}`)).items[0];
    await installCrds(api);
    return new BenchRun(api, name, labNode?.status?.nodeInfo?.kubeletVersion ?? 'v0.0.0');
  }

  /** Creates `count` bench nodes over `regions` zones and waits until they are Ready; then the namespace. */
  async setUp(count: number, regions: number): Promise<void> {
    this.nodes = Array.from({ length: count }, (_, i) => benchNode(this.runId, i, `bench-zone-${(i % regions) + 1}`, this.kubeletVersion));
    await pool(this.nodes, 4, (n) => this.api.request('POST', '/api/v1/nodes', n));
    await waitUntil(
      'bench nodes Ready',
      180_000 + count * 1000,
      async () => {
        const list = await this.api.request<{ items: V1Node[] }>('GET', `/api/v1/nodes?labelSelector=${encodeURIComponent(`${BENCH_LABEL}=${this.runId}`)}`);
        return list.items.filter((n) => (n.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True')).length === count;
      },
      1000,
    );
    await this.api.request('POST', '/api/v1/namespaces', { metadata: { name: this.ns, labels: { 'extendeddeployment.io/bench': 'true' } } });
    await waitUntil(
      "the namespace's default ServiceAccount",
      60_000,
      async () => !!(await this.api.request('GET', `/api/v1/namespaces/${this.ns}/serviceaccounts/default`)),
    );
  }

  /** The agent's command line for this run (the lab's admin kubeconfig, this namespace, its own Lease). */
  agentArgs(workers?: number): string[] {
    return namespacedAgentArgs(kubeconfigPath, this.ns, `bench-${this.runId}`, workers);
  }

  /** Deletes the namespace (and waits for it), the DeployRegions and the nodes. */
  async tearDown(regions: readonly KubernetesObject[]): Promise<void> {
    log('cleaning up: namespace, DeployRegions, bench nodes');
    const api = this.api;
    await api.deleteIgnoringMissing(`/api/v1/namespaces/${this.ns}`).catch((e: unknown) => log(`namespace delete: ${String(e)}`));
    await waitUntil(
      'the bench namespace gone',
      300_000,
      async () => {
        try {
          await api.request('GET', `/api/v1/namespaces/${this.ns}`);
          return false;
        } catch (e) {
          return e instanceof ApiError && e.code === 404;
        }
      },
      2000,
    ).catch((e: unknown) => log(String(e)));
    for (const region of regions) await api.deleteIgnoringMissing(`/apis/${GROUP}/${VERSION}/deployregions/${region.metadata!.name}`).catch(() => undefined);
    await pool(this.nodes, 4, (n) => api.deleteIgnoringMissing(`/api/v1/nodes/${n.metadata!.name}`).catch(() => undefined));
  }
}
