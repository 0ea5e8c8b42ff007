/**
 * The compiled agent (`node lib/cli/main.js agent …`) as a child process of a bench, and its /metrics read back:
 * request counts by verb and resource, single values.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createWriteStream, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { labBuild, repoRoot, waitUntil } from './lab-kit.js';
import { AGENT_ENV, AGENT_NODE_FLAGS } from '../constructs/agent-install.js';
import type { StatusWriteChange } from '../agent/metrics.js';

/** Clock ticks per second of /proc's CPU times. */
const CLOCK_TICKS = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;

/** The Node.js flags the agent install runs the agent with, and BENCH_AGENT_NODE_ARGS (e.g. --cpu-prof) added. */
export const agentNodeOptions = [...AGENT_NODE_FLAGS, process.env['BENCH_AGENT_NODE_ARGS'] ?? ''].join(' ').trim();

let resolvedAgentNode: string | undefined;

/**
 * The Node.js binary the agent runs on: by default the release the agent's image runs (the Dockerfile's pin, fetched
 * into the lab's cache by `lab:build image-node`), which need not be the one running the bench (the agent's memory on
 * Node.js 20 and 22 differs by several MiB); BENCH_AGENT_NODE names another binary, `self` the bench's.
 */
export function agentNode(): string {
  const chosen = process.env['BENCH_AGENT_NODE'];
  resolvedAgentNode ??= chosen === 'self' ? process.execPath : chosen || join(labBuild('image-node'), 'node');
  return resolvedAgentNode;
}

/** The version of {@link agentNode} (`v22.23.5`), as the bench's header names it. */
export function agentNodeVersion(): string {
  const node = agentNode();
  if (node === process.execPath) return process.version;
  const version = spawnSync(node, ['--version'], { encoding: 'utf8' });
  if (version.status !== 0) throw new Error(`the agent's Node.js ${node} does not run: ${version.error?.message ?? version.stderr.trim()}`);
  return version.stdout.trim();
}

/** The environment the agent install runs the agent in, over this process' own. */
export const agentEnv: NodeJS.ProcessEnv = { ...process.env, ...AGENT_ENV };

/** A process' VmHWM (peak) and VmRSS (now) in MiB, from /proc/<pid>/status. */
export function processMemory(pid: number): { peakMiB: number; nowMiB: number } {
  const mib = statusMiB(pid);
  return { peakMiB: mib('VmHWM'), nowMiB: mib('VmRSS') };
}

/** The memory fields of /proc/<pid>/status (given in kB), read once, in MiB by name. */
function statusMiB(pid: number): (key: string) => number {
  const text = readFileSync(`/proc/${pid}/status`, 'utf8');
  return (key) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? Number.NaN) / 1024;
}

/**
 * A process' resident memory as /proc/<pid>/status splits it, MiB: anonymous pages (its heaps, stacks and buffers) and
 * file-backed ones (the pages of its program's binary and libraries it has touched: shared with other processes of the
 * same program and reclaimable, but counted in its RSS); shared memory, which neither controller uses, left out.
 */
export interface RssSplit {
  readonly rssMiB: number;
  readonly anonMiB: number;
  readonly fileMiB: number;
}

function rssSplit(pid: number): RssSplit {
  const mib = statusMiB(pid);
  return { rssMiB: mib('VmRSS'), anonMiB: mib('RssAnon'), fileMiB: mib('RssFile') };
}

/**
 * What a process' peak RSS is made of: VmHWM gives the peak alone, so this reads /proc/<pid>/status every `everyMs`
 * and keeps the reading with the highest RSS (a peak between two readings is missed by at most what grows in one).
 */
export class PeakRssWatch {
  private peak: RssSplit | undefined;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly pid: number,
    everyMs = 200,
  ) {
    this.read();
    this.timer = setInterval(() => this.read(), everyMs);
    this.timer.unref();
  }

  /** Stops reading; the reading with the highest RSS, undefined if the process was never read. */
  stop(): RssSplit | undefined {
    this.read();
    clearInterval(this.timer);
    return this.peak;
  }

  private read(): void {
    try {
      const now = rssSplit(this.pid);
      if (this.peak === undefined || now.rssMiB > this.peak.rssMiB) this.peak = now;
    } catch {
      // The process has exited: its last reading stands.
    }
  }
}

/** CPU time (user + system) a process used so far, in seconds, from /proc/<pid>/stat. */
export function processCpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name (which may hold spaces, hence the last parenthesis): utime and stime are 14 and 15.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
}

export class AgentChild {
  readonly child: ChildProcess;
  private readonly lines: string[] = [];
  warnings = 0;
  private port: number | undefined;
  private readonly portReady: Promise<number>;

  constructor(args: string[], logFile?: string) {
    const logStream = logFile ? createWriteStream(logFile) : undefined;
    const nodeArgs = agentNodeOptions.split(' ').filter(Boolean);
    this.child = spawn(agentNode(), [...nodeArgs, join(repoRoot, 'lib', 'cli', 'main.js'), 'agent', ...args], {
      cwd: repoRoot,
      env: agentEnv,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let gotPort: (p: number) => void = () => undefined;
    this.portReady = new Promise((resolve) => (gotPort = resolve));
    createInterface({ input: this.child.stdout! }).on('line', (line) => {
      logStream?.write(`${line}\n`);
      this.lines.push(line);
      if (this.lines.length > 200) this.lines.shift();
      try {
        const entry = JSON.parse(line) as { msg?: string; level?: string; address?: string };
        if (entry.level === 'warn' || entry.level === 'error') this.warnings++;
        if (entry.msg === 'serving metrics' && entry.address) {
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
    return processMemory(this.child.pid!);
  }

  /** CPU time (user + system) the agent process used so far, in seconds, from /proc/<pid>/stat. */
  cpuSeconds(): number {
    return processCpuSeconds(this.child.pid!);
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

/** A counter's series summed by `key` of their labels (undefined: left out) into a map key → count. */
function countsBy(metrics: string, name: string, key: (labels: Record<string, string>) => string | undefined): Map<string, number> {
  const out = new Map<string, number>();
  for (const m of metrics.matchAll(new RegExp(`^${name}\\{([^}]*)\\} ([0-9.e+]+)`, 'gm'))) {
    const labels = Object.fromEntries([...m[1]!.matchAll(/(\w+)="([^"]*)"/g)].map((l) => [l[1]!, l[2]!]));
    const k = key(labels);
    if (k !== undefined) out.set(k, (out.get(k) ?? 0) + Number(m[2]));
  }
  return out;
}

/** extendeddeployment_agent_api_requests_total as a map `VERB resource` → count. */
export function requestCounts(metrics: string): Map<string, number> {
  return countsBy(metrics, 'extendeddeployment_agent_api_requests_total', (l) => `${l['verb']} ${l['resource']}`);
}

/**
 * The API server's apiserver_request_total for pods and ReplicaSets, every client together (the ReplicaSet controller,
 * scheduler, kwok, the agent, the bench), as `VERB resource[/subresource]` → count: the whole cluster's work.
 */
export function clusterRequestCounts(metrics: string): Map<string, number> {
  return countsBy(metrics, 'apiserver_request_total', (l) =>
    l['resource'] === 'pods' || l['resource'] === 'replicasets' ? `${l['verb']} ${l['resource']}${l['subresource'] ? `/${l['subresource']}` : ''}` : undefined,
  );
}

export function diffCounts(after: Map<string, number>, before: Map<string, number>): Map<string, number> {
  const out = new Map<string, number>();
  for (const [k, v] of after) if (v - (before.get(k) ?? 0) > 0) out.set(k, v - (before.get(k) ?? 0));
  return out;
}

export const WRITE_VERBS = new Set(['POST', 'PUT', 'PATCH', 'DELETE', 'DELETECOLLECTION']);
export const sum = (m: Map<string, number>, keep: (key: string) => boolean = () => true) => [...m].filter(([k]) => keep(k)).reduce((s, [, v]) => s + v, 0);
export const isLease = (k: string) => k.endsWith(' leases');
export const isWrite = (k: string) => WRITE_VERBS.has(k.split(' ')[0]!);

export function metricValue(metrics: string, name: string, labels = ''): number {
  const re = new RegExp(`^${name}${labels ? `\\{${labels}\\}` : ''} ([0-9.e+-]+)`, 'm');
  return Number(re.exec(metrics)?.[1] ?? Number.NaN);
}

/** The agent's histogram of how long keys waited in its work queue. */
export const QUEUE_WAIT = 'extendeddeployment_agent_queue_wait_seconds';
/** The label of the ExtendedDeployment controller's series (queue and reconcile metrics are per controller). */
export const ED_CONTROLLER = 'controller="extendeddeployment"';
/** The agent's histogram of reconcile durations, by controller and result. */
export const RECONCILE = 'extendeddeployment_agent_reconcile_duration_seconds';
/** The agent's counter of ExtendedDeployment status writes, by change. */
const STATUS_WRITES = 'extendeddeployment_agent_status_writes_total';

/** What the agent itself spent between two /metrics snapshots: the part of a reaction no API server or kubelet decides. */
export interface AgentShare {
  /** ExtendedDeployment reconciles by result (the histogram's `result` label: synced, stale, gone, …), most first. */
  readonly byResult: ReadonlyMap<string, number>;
  /** How long keys waited in the work queue before a worker took them. */
  readonly queueWait: HistogramSnapshot;
  /** How long the reconciles that planned and acted (result synced) took, their API writes included. */
  readonly synced: HistogramSnapshot;
  /** Status writes by what they changed (the counter's `change` label: transition, progress). */
  readonly statusWrites: Readonly<Record<StatusWriteChange, number>>;
}

/** Counts by name, the largest first. */
const mostFirst = (counts: readonly (readonly [string, number])[]): ReadonlyMap<string, number> => new Map([...counts].sort((a, b) => b[1] - a[1]));

/** A share's ExtendedDeployment reconciles, every result. */
export const reconcileCount = (share: AgentShare): number => [...share.byResult.values()].reduce((sum, n) => sum + n, 0);

/** The agent's share between two /metrics snapshots of its ExtendedDeployment controller. */
export function agentShare(before: string, after: string): AgentShare {
  const delta = (name: string, labels: string) => histogramDelta(histogram(after, name, labels), histogram(before, name, labels));
  const results = new Set([...after.matchAll(new RegExp(`^${RECONCILE}_count\\{${ED_CONTROLLER},result="([^"]+)"\\}`, 'gm'))].map((m) => m[1]!));
  const writes = (change: StatusWriteChange) =>
    (metricValue(after, STATUS_WRITES, `change="${change}"`) || 0) - (metricValue(before, STATUS_WRITES, `change="${change}"`) || 0);
  return {
    byResult: mostFirst([...results].map((result) => [result, delta(RECONCILE, `${ED_CONTROLLER},result="${result}"`).count])),
    queueWait: delta(QUEUE_WAIT, ED_CONTROLLER),
    synced: delta(RECONCILE, `${ED_CONTROLLER},result="synced"`),
    statusWrites: { transition: writes('transition'), progress: writes('progress') },
  };
}

/** Two windows' shares as one (rounds of one scale): reconciles by result and histogram observations added. */
export function addShares(a: AgentShare, b: AgentShare): AgentShare {
  return {
    byResult: mostFirst([...new Set([...a.byResult.keys(), ...b.byResult.keys()])].map((k) => [k, (a.byResult.get(k) ?? 0) + (b.byResult.get(k) ?? 0)])),
    queueWait: histogramSum(a.queueWait, b.queueWait),
    synced: histogramSum(a.synced, b.synced),
    statusWrites: { transition: a.statusWrites.transition + b.statusWrites.transition, progress: a.statusWrites.progress + b.statusWrites.progress },
  };
}

/** A histogram's cumulative buckets (`le` → count) and its count and sum, from Prometheus text. */
export interface HistogramSnapshot {
  readonly buckets: ReadonlyMap<number, number>;
  readonly count: number;
  readonly sum: number;
}

/** `labels`: the series' other labels as prom-client prints them after `le` (e.g. `controller="extendeddeployment",result="synced"`). */
export function histogram(metrics: string, name: string, labels = ''): HistogramSnapshot {
  const buckets = new Map<number, number>();
  const rest = labels ? `,${labels}` : '';
  for (const m of metrics.matchAll(new RegExp(`^${name}_bucket\\{le="([^"]+)"${rest}\\} ([0-9.e+-]+)`, 'gm')))
    buckets.set(m[1] === '+Inf' ? Infinity : Number(m[1]), Number(m[2]));
  return { buckets, count: metricValue(metrics, `${name}_count`, labels), sum: metricValue(metrics, `${name}_sum`, labels) };
}

/** `a` and `sign` × `b` bucket by bucket: what two windows saw together (1), or what the later saw beyond the earlier (-1). */
function combined(a: HistogramSnapshot, b: HistogramSnapshot, sign: 1 | -1): HistogramSnapshot {
  const buckets = new Map(a.buckets);
  for (const [le, n] of b.buckets) buckets.set(le, (buckets.get(le) ?? 0) + sign * n);
  return { buckets, count: a.count + sign * (b.count || 0), sum: a.sum + sign * (b.sum || 0) };
}

/** What was observed between two snapshots. */
export function histogramDelta(after: HistogramSnapshot, before: HistogramSnapshot): HistogramSnapshot {
  return combined(after, before, -1);
}

/** The observations of two snapshots together. */
export function histogramSum(a: HistogramSnapshot, b: HistogramSnapshot): HistogramSnapshot {
  return combined(a, b, 1);
}

/** The q-quantile (0..1) by linear interpolation within its bucket, as Prometheus' histogram_quantile. */
export function histogramQuantile(h: HistogramSnapshot, q: number): number {
  const les = [...h.buckets.keys()].sort((a, b) => a - b);
  const total = h.buckets.get(Infinity) ?? h.count;
  if (!total) return Number.NaN;
  const rank = q * total;
  let lower = 0;
  let below = 0;
  for (const le of les) {
    const n = h.buckets.get(le) ?? 0;
    if (n >= rank) {
      if (le === Infinity) return lower;
      return lower + ((le - lower) * (rank - below)) / Math.max(1, n - below);
    }
    lower = le;
    below = n;
  }
  return lower;
}
