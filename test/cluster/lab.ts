// The local cluster lab: etcd, kube-apiserver, kube-controller-manager, kube-scheduler (built from the Kubernetes Go
// modules, see build.ts) and kwok (fake nodes and kubelets), all plain processes listening on 127.0.0.1 only.
//
// State lives in <repo>/.lab (git-ignored; override with LAB_DIR):
//   kubeconfig        admin kubeconfig (certificates embedded) — `export KUBECONFIG=$PWD/.lab/kubeconfig`
//   state.json        ports, binary directory, start time
//   pids/<c>.pid      one file per process the lab started; `lab:down` stops exactly those PIDs
//   logs/<c>.log      each component's output
//   pki/ etcd/ kwok/  certificates, etcd data, kwok work dir
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, openSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { request as httpRequest } from 'node:http';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { clusterDir, ensureBinaries, pinnedK8sVersion, repoRoot } from './build.js';

export const MANAGED_LABEL = 'lab.extendeddeployment.io/kwok';
export const MANAGED = 'managed';
export const FAILED = 'failed';

/** Timing knobs (documented in test/cluster/README.md). */
export const TIMING = {
  /** kwok's node Lease duration; kwok renews every quarter of it (2 s). */
  nodeLeaseDurationSeconds: 8,
  /** KCM: how long a node may go without a Lease renewal before it is marked Ready=Unknown (default 50 s). */
  nodeMonitorGracePeriod: '10s',
  /** KCM: how often node health is checked (default 5 s). */
  nodeMonitorPeriod: '1s',
  /** KCM: grace for nodes that never reported (default 60 s). */
  nodeStartupGracePeriod: '30s',
};

/** What nodes report as their kubelet version (the lab's Kubernetes pin). */
const KUBELET_VERSION = pinnedK8sVersion();

export const COMPONENTS = ['etcd', 'kube-apiserver', 'kube-controller-manager', 'kube-scheduler', 'kwok'] as const;
export type Component = (typeof COMPONENTS)[number];

export interface LabState {
  binDir: string;
  startedAt: string;
  ports: { etcdClient: number; etcdPeer: number; apiserver: number; kcm: number; scheduler: number; kwok: number };
  server: string;
}

export function labDir(): string {
  return process.env.LAB_DIR || join(repoRoot, '.lab');
}
export function kubeconfigPath(): string {
  return join(labDir(), 'kubeconfig');
}
const statePath = () => join(labDir(), 'state.json');
const pidPath = (c: string) => join(labDir(), 'pids', `${c}.pid`);
const logPath = (c: string) => join(labDir(), 'logs', `${c}.log`);
const pkiDir = () => join(labDir(), 'pki');
const auditPolicyPath = () => join(labDir(), 'logs', 'audit-policy.yaml');

/**
 * The API server's audit log (JSON lines): when each write of an ExtendedDeployment's status and of a pod's status
 * completed, with microseconds and the object it returned, so a bench can time a pod turning Ready and the agent's
 * answer at the server rather than by its own watch, which lags whenever the bench itself is busy (bench/lab-kit.ts
 * reads it). Writes of CRDs, DeployRegions, ExtendedDeployments and regional workloads are audited at Metadata level:
 * the GitOps suites read from them the order in which an engine applied a commit. Writes of pods, evictions, Events,
 * ControllerRevisions, DeployRegion statuses and the agents' Leases too (every write the agent makes), with each
 * request's User-Agent: the fencing suite reads from them that two agent replicas never wrote in the same term.
 */
export const auditLogPath = () => join(labDir(), 'logs', 'audit.log');

/** Status writes of ExtendedDeployments and pods in full; writes of the objects GitOps engines and agents write, metadata only. */
const AUDIT_POLICY = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived, ResponseStarted]
omitManagedFields: true
rules:
  - level: RequestResponse
    verbs: [update, patch]
    resources:
      - group: extendeddeployment.io
        resources: [extendeddeployments/status]
      - group: ""
        resources: [pods/status]
  - level: Metadata
    verbs: [create, update, patch]
    resources:
      - group: apiextensions.k8s.io
        resources: [customresourcedefinitions]
      - group: extendeddeployment.io
        resources: [deployregions, extendeddeployments]
      - group: apps
        resources: [replicasets, deployments, statefulsets]
  - level: None
    namespaces: [kube-node-lease, kube-system]
    resources:
      - group: coordination.k8s.io
        resources: [leases]
  - level: Metadata
    verbs: [create, update, patch, delete]
    resources:
      - group: coordination.k8s.io
        resources: [leases]
      - group: ""
        resources: [pods, pods/eviction, events]
      - group: apps
        resources: [controllerrevisions]
      - group: extendeddeployment.io
        resources: [deployregions/status]
  - level: None
`;

type Log = (s: string) => void;
const defaultLog: Log = (s) => console.error(s);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// ---------------------------------------------------------------------------------------------------------------
// processes

export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * The PID recorded for a process the lab started, if it is still alive and still runs the program recorded with it
 * (the pid file's second line; the component's own name for the lab's binaries), so a reused PID is never signalled.
 */
export function livePid(c: string): number | undefined {
  if (!existsSync(pidPath(c))) return undefined;
  const [pidLine, program = c] = readFileSync(pidPath(c), 'utf8').trim().split('\n');
  const pid = Number(pidLine);
  if (!Number.isInteger(pid) || pid <= 0 || !pidAlive(pid)) return undefined;
  try {
    const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    if (!cmdline[0]?.endsWith(`/${program}`) && cmdline[0] !== program) return undefined;
  } catch {
    // no /proc (not Linux): trust the PID file
  }
  return pid;
}

/**
 * Starts a process of the lab, detached, logging to logs/<name>.log, its PID in pids/<name>.pid; `lab:down` stops it.
 * `program` is what /proc/<pid>/cmdline starts with (its basename), when that is not `name`.
 */
export function startProcess(name: string, bin: string, args: string[], env: NodeJS.ProcessEnv = {}, program?: string): number {
  const out = openSync(logPath(name), 'a');
  const child = spawn(bin, args, {
    cwd: labDir(),
    detached: true,
    stdio: ['ignore', out, out],
    env: { ...process.env, ...env },
  });
  child.unref();
  if (!child.pid) throw new Error(`failed to start ${name}`);
  writeFileSync(pidPath(name), `${child.pid}\n${program ? `${program}\n` : ''}`);
  return child.pid;
}

/** The log file of a process the lab started. */
export function processLogPath(name: string): string {
  return logPath(name);
}

/** Stops one process the lab started (SIGTERM, then SIGKILL after 10 s) and forgets its PID. */
export async function stopProcess(name: string, log: Log = defaultLog): Promise<void> {
  const pid = livePid(name);
  if (pid) {
    log(`lab: stopping ${name} (pid ${pid})`);
    await stopPid(name, pid, log);
  }
  rmSync(pidPath(name), { force: true });
}

async function stopPid(c: string, pid: number, log: Log): Promise<void> {
  try {
    process.kill(pid, 'SIGTERM');
  } catch {
    return;
  }
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    if (!pidAlive(pid)) break;
    await sleep(100);
  }
  if (pidAlive(pid)) {
    log(`lab: ${c} (pid ${pid}) ignored SIGTERM; sending SIGKILL`);
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      /* gone */
    }
    while (pidAlive(pid)) await sleep(50);
  }
}

// ---------------------------------------------------------------------------------------------------------------
// networking helpers (127.0.0.1 only)

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

export async function freePorts(n: number): Promise<number[]> {
  const ports = new Set<number>();
  while (ports.size < n) ports.add(await freePort());
  return [...ports];
}

interface TlsClient {
  ca?: Buffer;
  cert?: Buffer;
  key?: Buffer;
  insecure?: boolean;
}

function httpGet(url: string, tls: TlsClient = {}, timeoutMs = 2000): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const u = new URL(url);
    const opts = {
      method: 'GET',
      timeout: timeoutMs,
      ...(u.protocol === 'https:' ? { ca: tls.ca, cert: tls.cert, key: tls.key, rejectUnauthorized: !tls.insecure } : {}),
    };
    const req = (u.protocol === 'https:' ? httpsRequest : httpRequest)(u, opts, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end();
  });
}

async function waitHealthy(what: string, url: string, tls: TlsClient, timeoutMs: number, pidOf?: Component): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    if (pidOf && !livePid(pidOf)) {
      throw new Error(`${what} exited during startup; see ${logPath(pidOf)}:\n${tail(logPath(pidOf), 30)}`);
    }
    try {
      const r = await httpGet(url, tls);
      if (r.status === 200) return;
      last = `HTTP ${r.status}: ${r.body.slice(0, 300)}`;
    } catch (e) {
      last = (e as Error).message;
    }
    await sleep(200);
  }
  throw new Error(`${what} not healthy after ${timeoutMs / 1000} s at ${url} (last: ${last})`);
}

function tail(file: string, lines: number): string {
  try {
    return readFileSync(file, 'utf8').split('\n').slice(-lines).join('\n');
  } catch {
    return '';
  }
}

function adminTls(): TlsClient {
  return {
    ca: readFileSync(join(pkiDir(), 'ca.crt')),
    cert: readFileSync(join(pkiDir(), 'admin.crt')),
    key: readFileSync(join(pkiDir(), 'admin.key')),
  };
}

// ---------------------------------------------------------------------------------------------------------------
// kubernetes API helpers (no client library needed for the few calls the lab makes)

async function api(
  state: LabState,
  method: string,
  path: string,
  body?: unknown,
  contentType = 'application/json',
): Promise<{ status: number; json: unknown }> {
  const tls = adminTls();
  return new Promise((resolve, reject) => {
    const data = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const req = httpsRequest(
      new URL(path, state.server),
      {
        method,
        ca: tls.ca,
        cert: tls.cert,
        key: tls.key,
        timeout: 10_000,
        headers: data ? { 'content-type': contentType, 'content-length': data.length } : {},
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (text += d));
        res.on('end', () => {
          let json: unknown;
          try {
            json = text ? JSON.parse(text) : undefined;
          } catch {
            json = text;
          }
          resolve({ status: res.statusCode ?? 0, json });
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error(`${method} ${path}: timeout`)));
    req.on('error', reject);
    if (data) req.write(data);
    req.end();
  });
}

/** An answer whose shape the caller names: the lab trusts its own API server, as a typed client would. */
async function apiOk<T = unknown>(state: LabState, method: string, path: string, body?: unknown, contentType?: string): Promise<T> {
  const r = await api(state, method, path, body, contentType);
  if (r.status < 200 || r.status >= 300) {
    throw new Error(`${method} ${path} -> HTTP ${r.status}: ${JSON.stringify(r.json)?.slice(0, 500)}`);
  }
  return r.json as T;
}

/** The fields of listed Nodes and Pods the lab reads. */
interface Listed {
  items: {
    metadata: { name: string; namespace?: string };
    status?: { conditions?: { type: string; status: string }[] };
  }[];
}

// ---------------------------------------------------------------------------------------------------------------
// topology

interface NodeGroup {
  namePrefix: string;
  count?: number;
  labels?: Record<string, string>;
  taints?: { key: string; value?: string; effect: string }[];
  allocatable: Record<string, string>;
}

/** A Node object as the lab registers it for kwok. */
export interface TopologyNode {
  apiVersion: 'v1';
  kind: 'Node';
  metadata: { name: string; labels: Record<string, string>; annotations: Record<string, string> };
  spec: { providerID: string; podCIDR: string; podCIDRs: string[]; taints: NonNullable<NodeGroup['taints']> };
  status: {
    allocatable: Record<string, string>;
    capacity: Record<string, string>;
    addresses: { type: string; address: string }[];
    nodeInfo: Record<string, string>;
  };
}

export function topologyNodes(): TopologyNode[] {
  const topo = parseYaml(readFileSync(join(clusterDir, 'topology.yaml'), 'utf8')) as { nodeGroups: NodeGroup[] };
  const nodes: TopologyNode[] = [];
  let index = 0;
  for (const g of topo.nodeGroups) {
    for (let i = 1; i <= (g.count ?? 1); i++) {
      index++;
      const name = `${g.namePrefix}-${i}`;
      nodes.push({
        apiVersion: 'v1',
        kind: 'Node',
        metadata: {
          name,
          labels: {
            'kubernetes.io/hostname': name,
            'kubernetes.io/os': 'linux',
            type: 'kwok',
            ...(g.labels ?? {}),
            [MANAGED_LABEL]: MANAGED,
          },
          annotations: { 'node.alpha.kubernetes.io/ttl': '0', 'kwok.x-k8s.io/node': 'fake' },
        },
        spec: {
          providerID: `kwok://${name}`,
          podCIDR: `10.244.${index}.0/24`,
          podCIDRs: [`10.244.${index}.0/24`],
          taints: g.taints ?? [],
        },
        status: {
          allocatable: g.allocatable,
          capacity: g.allocatable,
          addresses: [
            { type: 'InternalIP', address: `10.250.0.${index}` },
            { type: 'Hostname', address: name },
          ],
          nodeInfo: {
            architecture: g.labels?.['kubernetes.io/arch'] ?? 'amd64',
            operatingSystem: 'linux',
            bootID: '',
            containerRuntimeVersion: 'kwok',
            kernelVersion: 'kwok',
            kubeProxyVersion: '',
            kubeletVersion: KUBELET_VERSION,
            machineID: '',
            osImage: 'kwok',
            systemUUID: '',
          },
        },
      });
    }
  }
  return nodes;
}

// ---------------------------------------------------------------------------------------------------------------
// lifecycle

export function readState(): LabState | undefined {
  try {
    return JSON.parse(readFileSync(statePath(), 'utf8')) as LabState;
  } catch {
    return undefined;
  }
}

export interface LabStatus {
  running: boolean;
  healthy: boolean;
  components: Record<string, number | undefined>;
  state?: LabState;
  detail?: string;
}

export async function status(): Promise<LabStatus> {
  const components: Record<string, number | undefined> = {};
  for (const c of COMPONENTS) components[c] = livePid(c);
  const state = readState();
  const allUp = COMPONENTS.every((c) => components[c] !== undefined);
  if (!state || !allUp) {
    return { running: Object.values(components).some((p) => p !== undefined), healthy: false, components, ...(state ? { state } : {}) };
  }
  try {
    const r = await httpGet(`${state.server}/readyz`, adminTls());
    const k = await httpGet(`http://127.0.0.1:${state.ports.kwok}/healthz`);
    const healthy = r.status === 200 && k.status === 200;
    return { running: true, healthy, components, state, detail: healthy ? undefined : `readyz ${r.status}, kwok ${k.status}` };
  } catch (e) {
    return { running: true, healthy: false, components, state, detail: (e as Error).message };
  }
}

/**
 * Stops every process recorded in .lab/pids: what runs next to the cluster (GitOps engines, their helpers) first, then
 * kwok, and etcd last. Leaves logs in place.
 */
export async function down(log: Log = defaultLog): Promise<void> {
  const pids = join(labDir(), 'pids');
  const extras = existsSync(pids)
    ? readdirSync(pids)
        .map((f) => f.replace(/\.pid$/, ''))
        .filter((n) => !(COMPONENTS as readonly string[]).includes(n))
    : [];
  for (const c of [...extras.sort(), ...[...COMPONENTS].reverse()]) await stopProcess(c, log);
  rmSync(statePath(), { force: true });
}

export interface UpResult {
  state: LabState;
  /** true if this call started the lab, false if a healthy lab was already running */
  started: boolean;
  seconds: number;
}

export async function up(log: Log = defaultLog): Promise<UpResult> {
  const t0 = Date.now();
  const st = await status();
  if (st.healthy && st.state) {
    log(`lab: already running (${st.state.server}); KUBECONFIG=${kubeconfigPath()}`);
    return { state: st.state, started: false, seconds: 0 };
  }
  if (st.running) {
    log('lab: found a partial or unhealthy lab; stopping it first');
    await down(log);
  }

  const binDir = await ensureBinaries(log);
  const tBuilt = Date.now();

  // fresh state every start: certificates, etcd data, logs
  const dir = labDir();
  for (const sub of ['pki', 'etcd', 'kwok', 'logs', 'pids', 'apiserver-certs']) rmSync(join(dir, sub), { recursive: true, force: true });
  for (const sub of ['pids', 'logs', 'kwok']) mkdirSync(join(dir, sub), { recursive: true });

  const [etcdClient, etcdPeer, apiserver, kcm, scheduler, kwok] = (await freePorts(6)) as [number, number, number, number, number, number];
  const state: LabState = {
    binDir,
    startedAt: new Date().toISOString(),
    ports: { etcdClient, etcdPeer, apiserver, kcm, scheduler, kwok },
    server: `https://127.0.0.1:${apiserver}`,
  };
  const bin = (b: string) => join(binDir, b);
  const pki = (f: string) => join(pkiDir(), f);

  try {
    await runToCompletion(bin('pkigen'), ['--dir', pkiDir()]);
    writeKubeconfig(state);
    const kubeconfig = kubeconfigPath();

    startProcess('etcd', bin('etcd'), [
      '--name=lab',
      `--data-dir=${join(dir, 'etcd')}`,
      `--listen-client-urls=http://127.0.0.1:${etcdClient}`,
      `--advertise-client-urls=http://127.0.0.1:${etcdClient}`,
      `--listen-peer-urls=http://127.0.0.1:${etcdPeer}`,
      `--initial-advertise-peer-urls=http://127.0.0.1:${etcdPeer}`,
      `--initial-cluster=lab=http://127.0.0.1:${etcdPeer}`,
      '--listen-metrics-urls=',
      '--unsafe-no-fsync=true',
      '--quota-backend-bytes=1073741824',
      '--auto-compaction-mode=periodic',
      '--auto-compaction-retention=5m',
      '--log-level=warn',
    ]);
    await waitHealthy('etcd', `http://127.0.0.1:${etcdClient}/health`, {}, 30_000, 'etcd');

    writeFileSync(auditPolicyPath(), AUDIT_POLICY);
    startProcess('kube-apiserver', bin('kube-apiserver'), [
      `--etcd-servers=http://127.0.0.1:${etcdClient}`,
      '--etcd-prefix=/registry',
      '--bind-address=127.0.0.1',
      '--advertise-address=127.0.0.1',
      `--secure-port=${apiserver}`,
      `--cert-dir=${join(dir, 'apiserver-certs')}`,
      `--tls-cert-file=${pki('admin.crt')}`,
      `--tls-private-key-file=${pki('admin.key')}`,
      `--client-ca-file=${pki('ca.crt')}`,
      `--service-account-key-file=${pki('sa.pub')}`,
      `--service-account-signing-key-file=${pki('sa.key')}`,
      '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
      `--proxy-client-cert-file=${pki('admin.crt')}`,
      `--proxy-client-key-file=${pki('admin.key')}`,
      '--authorization-mode=Node,RBAC',
      '--allow-privileged=true',
      '--service-cluster-ip-range=10.96.0.0/16',
      '--endpoint-reconciler-type=none',
      `--audit-policy-file=${auditPolicyPath()}`,
      `--audit-log-path=${auditLogPath()}`,
      '--audit-log-format=json',
      '--audit-log-maxsize=100',
      '--audit-log-maxbackup=1',
      '--v=1',
    ]);
    await waitHealthy('kube-apiserver', `${state.server}/readyz`, adminTls(), 90_000, 'kube-apiserver');

    const authFlags = [
      `--kubeconfig=${kubeconfig}`,
      `--authentication-kubeconfig=${kubeconfig}`,
      `--authorization-kubeconfig=${kubeconfig}`,
      '--authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics',
      '--bind-address=127.0.0.1',
      '--leader-elect=false',
    ];
    startProcess('kube-controller-manager', bin('kube-controller-manager'), [
      ...authFlags,
      `--secure-port=${kcm}`,
      `--cert-dir=${join(dir, 'apiserver-certs')}`,
      `--root-ca-file=${pki('ca.crt')}`,
      `--service-account-private-key-file=${pki('sa.key')}`,
      '--controllers=*',
      '--kube-api-qps=100',
      '--kube-api-burst=200',
      `--node-monitor-period=${TIMING.nodeMonitorPeriod}`,
      `--node-monitor-grace-period=${TIMING.nodeMonitorGracePeriod}`,
      `--node-startup-grace-period=${TIMING.nodeStartupGracePeriod}`,
      '--allocate-node-cidrs=false',
      '--v=1',
    ]);
    startProcess('kube-scheduler', bin('kube-scheduler'), [...authFlags, `--secure-port=${scheduler}`, '--v=1']);
    await Promise.all([
      waitHealthy('kube-controller-manager', `https://127.0.0.1:${kcm}/healthz`, { insecure: true }, 60_000, 'kube-controller-manager'),
      waitHealthy('kube-scheduler', `https://127.0.0.1:${scheduler}/healthz`, { insecure: true }, 60_000, 'kube-scheduler'),
    ]);

    // Nodes before kwok, so kwok finds them at start.
    for (const node of topologyNodes()) {
      await apiOk(state, 'POST', '/api/v1/nodes', node);
    }

    startProcess(
      'kwok',
      bin('kwok'),
      [
        `--kubeconfig=${kubeconfig}`,
        `--config=${join(clusterDir, 'kwok.yaml')}`,
        '--manage-all-nodes=false',
        `--manage-nodes-with-label-selector=${MANAGED_LABEL}=${MANAGED}`,
        `--node-lease-duration-seconds=${TIMING.nodeLeaseDurationSeconds}`,
        '--cidr=10.245.0.0/16',
        `--server-address=127.0.0.1:${kwok}`,
      ],
      { KWOK_WORKDIR: join(dir, 'kwok') },
    );
    await waitHealthy('kwok', `http://127.0.0.1:${kwok}/healthz`, {}, 60_000, 'kwok');

    await waitNodesReady(
      state,
      topologyNodes().map((n) => n.metadata.name),
      60_000,
    );
    await waitFor('default ServiceAccount', 30_000, async () => (await api(state, 'GET', '/api/v1/namespaces/default/serviceaccounts/default')).status === 200);

    writeFileSync(statePath(), JSON.stringify(state, null, 2) + '\n');
    const seconds = (Date.now() - t0) / 1000;
    log(
      `lab: up in ${seconds.toFixed(1)} s (${((Date.now() - tBuilt) / 1000).toFixed(1)} s after binaries were ready); ` +
        `API ${state.server}; export KUBECONFIG=${kubeconfigPath()}`,
    );
    return { state, started: true, seconds };
  } catch (e) {
    log(`lab: start failed: ${(e as Error).message}`);
    await down(log);
    throw e;
  }
}

function runToCompletion(bin: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(bin, args, { stdio: ['ignore', 'inherit', 'inherit'] });
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`${bin} exited with ${code}`))));
  });
}

function writeKubeconfig(state: LabState): void {
  const b64 = (f: string) => readFileSync(join(pkiDir(), f)).toString('base64');
  const text = [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    '- name: lab',
    '  cluster:',
    `    server: ${state.server}`,
    `    certificate-authority-data: ${b64('ca.crt')}`,
    'users:',
    '- name: lab-admin',
    '  user:',
    `    client-certificate-data: ${b64('admin.crt')}`,
    `    client-key-data: ${b64('admin.key')}`,
    'contexts:',
    '- name: lab',
    '  context:',
    '    cluster: lab',
    '    user: lab-admin',
    'current-context: lab',
    '',
  ].join('\n');
  writeFileSync(kubeconfigPath(), text, { mode: 0o600 });
}

async function waitFor(what: string, timeoutMs: number, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      if (await check()) return;
    } catch {
      /* retry */
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs / 1000} s waiting for ${what}`);
    await sleep(250);
  }
}

function nodeReady(node: Listed['items'][number]): string {
  return (node.status?.conditions ?? []).find((c) => c.type === 'Ready')?.status ?? 'Unknown';
}

async function waitNodesReady(state: LabState, names: string[], timeoutMs: number): Promise<void> {
  await waitFor(`nodes Ready: ${names.join(', ')}`, timeoutMs, async () => {
    const list = await apiOk<Listed>(state, 'GET', '/api/v1/nodes');
    const ready = new Set(list.items.filter((n) => nodeReady(n) === 'True').map((n) => n.metadata.name));
    return names.every((n) => ready.has(n));
  });
}

// ---------------------------------------------------------------------------------------------------------------
// node failure helpers

function requireState(): LabState {
  const s = readState();
  if (!s) throw new Error('the lab is not running (run `npm run lab:up`)');
  return s;
}

async function setManagedLabel(selector: string, from: string, to: string, log: Log): Promise<string[]> {
  const state = requireState();
  const sel = [selector, `${MANAGED_LABEL}=${from}`].filter(Boolean).join(',');
  const list = await apiOk<Listed>(state, 'GET', `/api/v1/nodes?labelSelector=${encodeURIComponent(sel)}`);
  const names = list.items.map((n) => n.metadata.name);
  for (const name of names) {
    await apiOk(state, 'PATCH', `/api/v1/nodes/${name}`, { metadata: { labels: { [MANAGED_LABEL]: to } } }, 'application/merge-patch+json');
  }
  log(`lab: ${to === FAILED ? 'failed' : 'healed'} ${names.length} node(s): ${names.join(', ') || '(none matched)'}`);
  return names;
}

/**
 * Makes the nodes matching a label selector stop heartbeating (their simulated kubelet dies): kwok stops renewing
 * their Leases and stops acting on their pods. The real node-lifecycle controller then marks them Ready=Unknown
 * and taints them node.kubernetes.io/unreachable after --node-monitor-grace-period.
 */
export function failNodes(selector: string, log: Log = defaultLog): Promise<string[]> {
  if (!selector) throw new Error('a label selector is required, e.g. kubernetes.io/arch=arm64');
  return setManagedLabel(selector, MANAGED, FAILED, log);
}

/**
 * Resumes heartbeats for failed nodes matching the selector (all failed nodes when empty) and waits until they are
 * Ready again. Then it touches every pod on them (annotation lab.extendeddeployment.io/kubelet-resync): a real
 * kubelet that comes back re-reports the status of all its pods, but kwok v0.8.0 does not replay pods whose last
 * change (the node controller's Ready=False) happened while their node was unmanaged, so they would stay NotReady.
 */
export async function healNodes(selector = '', log: Log = defaultLog): Promise<string[]> {
  const names = await setManagedLabel(selector, FAILED, MANAGED, log);
  if (names.length === 0) return names;
  const state = requireState();
  await waitNodesReady(state, names, 60_000);
  const stamp = new Date().toISOString();
  for (const name of names) {
    const pods = await apiOk<Listed>(state, 'GET', `/api/v1/pods?fieldSelector=${encodeURIComponent(`spec.nodeName=${name}`)}`);
    for (const pod of pods.items) {
      const r = await api(
        state,
        'PATCH',
        `/api/v1/namespaces/${pod.metadata.namespace}/pods/${pod.metadata.name}`,
        { metadata: { annotations: { [RESYNC_ANNOTATION]: stamp } } },
        'application/merge-patch+json',
      );
      if (r.status !== 200 && r.status !== 404) throw new Error(`resync of pod ${pod.metadata.namespace}/${pod.metadata.name}: HTTP ${r.status}`);
    }
  }
  return names;
}

export const RESYNC_ANNOTATION = 'lab.extendeddeployment.io/kubelet-resync';

export function listLogs(): string[] {
  try {
    return readdirSync(join(labDir(), 'logs')).map((f) => join(labDir(), 'logs', f));
  } catch {
    return [];
  }
}
