// Several labs side by side, one per member cluster of a fleet (`npm run lab:up -- --clusters a,b,c`): each a full lab
// (etcd, kube-apiserver, kcm, scheduler, kwok, topology.yaml's nodes) in <labDir>/clusters/<name>/ with its own free
// ports, PKI, kubeconfig, pids and logs, started in parallel by lab.ts's own code in a scope of its own (inLab). The
// binaries are built once and shared. <labDir> is LAB_DIR's (default .lab), so the single lab is untouched.
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { ensureBinaries } from './build.js';
import { down, inLab, kubeconfigPath, labDir, livePid, status, up, type LabStatus, type LabTimings } from './lab.js';

type Log = (s: string) => void;
const defaultLog: Log = (s) => console.error(s);

/** A member cluster's lab. */
export interface FleetLab {
  readonly name: string;
  readonly dir: string;
  readonly kubeconfig: string;
  /** The kubeconfig's context (and cluster) name: `lab-<name>`, distinct per cluster so that kubeconfigs merge. */
  readonly context: string;
}

/** A cluster name: a DNS label, as a fleet member's name must be (it becomes a label value and part of Secret names). */
const CLUSTER_NAME = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

/** `a,b,c` → the names, each a DNS label, none twice; anything else throws with what is wrong. */
export function parseClusterNames(value: string): string[] {
  const names = value.split(',').map((n) => n.trim());
  const bad = names.filter((n) => !CLUSTER_NAME.test(n));
  if (bad.length > 0) throw new Error(`--clusters: not a DNS label: ${bad.map((n) => JSON.stringify(n)).join(', ')}`);
  if (new Set(names).size !== names.length) throw new Error('--clusters: a cluster is named twice');
  return names;
}

/** The value of `--clusters a,b` or `--clusters=a,b` among the arguments, parsed; undefined without the option. */
export function clustersOption(args: readonly string[]): string[] | undefined {
  const i = args.findIndex((a) => a === '--clusters' || a.startsWith('--clusters='));
  if (i < 0) return undefined;
  const arg = args[i] ?? '';
  return parseClusterNames(arg.includes('=') ? arg.slice('--clusters='.length) : (args[i + 1] ?? ''));
}

/** Where the member clusters' labs live; read outside any cluster's scope (inside one, labDir() is that cluster's). */
function clustersDir(): string {
  return join(labDir(), 'clusters');
}

export function fleetLab(name: string): FleetLab {
  const dir = join(clustersDir(), name);
  const context = `lab-${name}`;
  return { name, dir, context, kubeconfig: inLab(dir, context, kubeconfigPath) };
}

/** Runs `fn` against one member cluster's lab. */
function inCluster<T>(lab: FleetLab, fn: () => T): T {
  return inLab(lab.dir, lab.context, fn);
}

/** The clusters that have a lab directory (running or not), by name. */
export function fleetNames(): string[] {
  const dir = clustersDir();
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true })
    .filter((e) => e.isDirectory() && CLUSTER_NAME.test(e.name))
    .map((e) => e.name)
    .sort();
}

const prefixed =
  (log: Log, name: string): Log =>
  (s) =>
    log(`[${name}] ${s}`);

export interface FleetUp extends FleetLab {
  /** Whether this call started the cluster's lab (false: a healthy one was running). */
  readonly started: boolean;
}

/**
 * Starts a lab for every named cluster in parallel, or reuses the healthy ones (as `up` does). When one fails, the
 * labs this call started are stopped again and the error names every cluster that failed.
 */
export async function upFleet(names: readonly string[], log: Log = defaultLog, opts: { timings?: LabTimings } = {}): Promise<FleetUp[]> {
  // One build before the parallel starts, which then find the binaries ready (the build lock would serialise them anyway).
  await ensureBinaries(log);
  const labs = names.map(fleetLab);
  const results = await Promise.allSettled(labs.map((lab) => inCluster(lab, () => up(prefixed(log, lab.name), opts))));
  const failed = labs.filter((_, i) => results[i]?.status === 'rejected');
  if (failed.length > 0) {
    const started = labs.filter((_, i) => {
      const r = results[i];
      return r?.status === 'fulfilled' && r.value.started;
    });
    await Promise.all(started.map((lab) => inCluster(lab, () => down(prefixed(log, lab.name)))));
    const reasons = failed.map((lab) => {
      const r = results[labs.indexOf(lab)];
      return `${lab.name}: ${r?.status === 'rejected' ? (r.reason as Error).message : ''}`;
    });
    throw new Error(`lab: ${failed.length} of ${labs.length} clusters failed to start\n${reasons.join('\n')}`);
  }
  return labs.map((lab, i) => {
    const r = results[i];
    return { ...lab, started: r?.status === 'fulfilled' && r.value.started };
  });
}

/** Stops the named clusters' labs (default: every one with a directory), in parallel; leaves their logs. */
export async function downFleet(log: Log = defaultLog, names: readonly string[] = fleetNames()): Promise<void> {
  await Promise.all(names.map(fleetLab).map((lab) => inCluster(lab, () => down(prefixed(log, lab.name)))));
}

export interface FleetLabStatus extends FleetLab {
  readonly status: LabStatus;
  /** Resident memory of the cluster's running processes, summed (bytes; 0 without /proc). */
  readonly rssBytes: number;
}

/** The status of every cluster with a lab directory. */
export async function fleetStatus(): Promise<FleetLabStatus[]> {
  return Promise.all(
    fleetNames()
      .map(fleetLab)
      .map((lab) => inCluster(lab, async () => ({ ...lab, status: await status(), rssBytes: labRssBytes() }))),
  );
}

/** The summed resident memory (VmRSS) of the processes the current lab recorded in pids/ (every one, extras too). */
export function labRssBytes(): number {
  const pids = join(labDir(), 'pids');
  if (!existsSync(pids)) return 0;
  let sum = 0;
  for (const file of readdirSync(pids)) {
    const pid = livePid(file.replace(/\.pid$/, ''));
    if (pid === undefined) continue;
    try {
      const kb = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
      sum += Number(kb ?? 0) * 1024;
    } catch {
      // gone since, or no /proc (not Linux)
    }
  }
  return sum;
}

/** The summed resident memory of one member cluster's lab. */
export function fleetLabRssBytes(name: string): number {
  const lab = fleetLab(name);
  return inCluster(lab, labRssBytes);
}
