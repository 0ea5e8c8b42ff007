// The lab in a network namespace of its own (`npm run lab:up -- --net-namespace`), so that the pods' addresses
// (10.244.<node>.x, from the nodes' podCIDRs) are local addresses there: a process can listen on a pod's IP and port
// (pod-runner.ts) and a gateway (traefik.ts) reaches it through the real EndpointSlices, while the host stays untouched.
//
//   holder      `unshare --net sleep infinity` (pids/netns.pid): keeps the namespace and names it for nsenter; inside,
//               `ip link set lo up; ip route add local 10.244.0.0/16 dev lo` (every address of the range is local)
//   processes   every other lab process (etcd, the API server, kwok, the GitOps engines, Traefik, …) is started as
//               `nsenter -t <holder> -n -- <bin> <args>`: nsenter execs the binary, so the PID and /proc/<pid>/cmdline
//               stay the ones the lab records and checks, and they listen on 127.0.0.1 inside the namespace, as always
//   bridges     netns-bridge.ts pairs: the host side listens on 127.0.0.1:<port> and pipes each connection through a
//               unix socket (file systems are not per network namespace) to the namespace side, which dials
//               127.0.0.1:<port> inside. The lab's own ports keep their numbers, so kubeconfig, `kubectl`, the e2e
//               suites and the agent run on the host unchanged; the traffic processes get bridges of their own.
//
// Chosen over a veth pair: no addresses, routes or firewall rules on the host, nothing to clean up there, and the API
// server's certificate (127.0.0.1) stays valid. Needs root (or `unshare -Ur` for user namespaces, not done here).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readlinkSync } from 'node:fs';
import { createRequire } from 'node:module';
import { connect } from 'node:net';
import { basename, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { clusterDir } from './build.js';
import { labDir, livePid, pidAlive, processLogPath, startProcess } from './lab.js';
import { formatPortPairs, socketPath, type PortPair } from './netns-bridge.js';

/** The process that holds the namespace. */
export const NETNS_HOLDER = 'netns';
/** The pods' network (lab.ts gives node i the podCIDR 10.244.i.0/24): local inside the namespace. */
export const POD_NETWORK = '10.244.0.0/16';

type Log = (s: string) => void;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The namespace's own plumbing runs on the host: the holder, and the host side of each bridge. */
const runsOnHost = (name: string) => name === NETNS_HOLDER || name.startsWith('netns-host-');
const holderPidFile = () => join(labDir(), 'pids', `${NETNS_HOLDER}.pid`);
const socketDir = () => join(labDir(), 'netns');

/** Whether the lab (LAB_DIR's, or inLab's) was started in its own network namespace. */
export function labHasNetns(): boolean {
  return existsSync(holderPidFile());
}

/** `bin args` wrapped to run inside the lab's network namespace; throws when the lab has none or its holder died. */
export function inLabNetns(bin: string, args: readonly string[]): [string, string[]] {
  const holder = livePid(NETNS_HOLDER);
  if (holder === undefined) {
    throw new Error(
      labHasNetns()
        ? `the lab's network namespace holder (${holderPidFile()}) is gone; restart the lab`
        : 'the lab runs without a network namespace (start it with `npm run lab:up -- --net-namespace`)',
    );
  }
  return ['nsenter', ['-t', String(holder), '-n', '--', bin, ...args]];
}

/**
 * How lab.ts starts a lab process: inside the namespace when the lab has one (never silently outside it: a dead holder
 * throws), as is otherwise.
 */
export function labProcessCommand(name: string, bin: string, args: readonly string[]): [string, string[]] {
  if (runsOnHost(name) || !labHasNetns()) return [bin, [...args]];
  return inLabNetns(bin, args);
}

/** `node --import tsx <script> args` with tsx resolved from this repository, whatever the process's cwd (LAB_DIR). */
export function tsxCommand(script: string, args: readonly string[]): [string, string[]] {
  const loader = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
  return [process.execPath, ['--import', loader, script, ...args]];
}

/** Starts a TypeScript lab process (recorded under the node binary's name, which /proc/<pid>/cmdline shows). */
export function startTsxProcess(name: string, script: string, args: readonly string[], env: NodeJS.ProcessEnv = {}): number {
  const [bin, argv] = tsxCommand(script, args);
  return startProcess(name, bin, argv, env, basename(bin));
}

function netnsInode(pid: number | 'self'): string {
  return readlinkSync(`/proc/${pid}/ns/net`);
}

/** Runs `ip …` inside the namespace (only ever after the holder is known to be in a namespace of its own). */
function ipInNetns(holder: number, args: readonly string[]): void {
  const r = spawnSync('nsenter', ['-t', String(holder), '-n', '--', 'ip', ...args], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`ip ${args.join(' ')} in the lab's network namespace: ${(r.stderr || String(r.error)).trim()}`);
}

/**
 * Creates the namespace (its holder process), makes the pod network local in it, and bridges `ports` (the lab's own,
 * same number on both sides). Called by lab.ts's `up` after the ports are chosen and before anything starts.
 */
export async function openLabNetns(ports: readonly number[], log: Log): Promise<void> {
  const pid = startProcess(NETNS_HOLDER, 'unshare', ['--net', '--', 'sleep', 'infinity'], {}, 'sleep');
  // `ip route add` through nsenter before unshare(2) has run would change the host's routes: wait until the holder has
  // exec'd sleep (so unshare is done) and its namespace differs from ours.
  const deadline = Date.now() + 10_000;
  for (;;) {
    let ready = false;
    try {
      ready = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[0] === 'sleep' && netnsInode(pid) !== netnsInode('self');
    } catch {
      /* not there yet, or gone: checked below */
    }
    if (ready) break;
    if (!pidAlive(pid)) {
      throw new Error(`unshare --net failed (root is needed); see ${processLogPath(NETNS_HOLDER)}:\n${readFileSync(processLogPath(NETNS_HOLDER), 'utf8')}`);
    }
    if (Date.now() > deadline) throw new Error(`the network namespace holder (pid ${pid}) did not start within 10 s`);
    await sleep(20);
  }
  ipInNetns(pid, ['link', 'set', 'lo', 'up']);
  ipInNetns(pid, ['route', 'add', 'local', POD_NETWORK, 'dev', 'lo']);
  log(`lab: network namespace ${netnsInode(pid)} (holder pid ${pid}); ${POD_NETWORK} is local in it`);
  await bridgeToHost(
    'lab',
    ports.map((p) => ({ host: p, ns: p })),
  );
}

/**
 * Makes ports inside the namespace reachable on the host's 127.0.0.1 (processes `netns-<name>` inside and
 * `netns-host-<name>` on the host; `lab:down` stops them with the rest). Resolves once the host side listens.
 */
export async function bridgeToHost(name: string, pairs: readonly PortPair[]): Promise<void> {
  mkdirSync(socketDir(), { recursive: true });
  const script = join(clusterDir, 'netns-bridge.ts');
  startTsxProcess(`netns-${name}`, script, ['ns', socketDir(), formatPortPairs(pairs)]);
  startTsxProcess(`netns-host-${name}`, script, ['host', socketDir(), formatPortPairs(pairs)]);
  const deadline = Date.now() + 30_000;
  const waiting = new Set<string>(pairs.flatMap((p) => [`tcp:${p.host}`, `sock:${p.ns}`]));
  while (waiting.size > 0) {
    for (const key of [...waiting]) {
      const [kind, port] = key.split(':') as [string, string];
      if (await canConnect(kind === 'tcp' ? { host: '127.0.0.1', port: Number(port) } : { path: socketPath(socketDir(), Number(port)) })) {
        waiting.delete(key);
      }
    }
    if (waiting.size === 0) break;
    for (const p of [`netns-${name}`, `netns-host-${name}`]) {
      if (livePid(p) === undefined) throw new Error(`bridge ${p} exited; see ${processLogPath(p)}:\n${readFileSync(processLogPath(p), 'utf8')}`);
    }
    if (Date.now() > deadline) throw new Error(`bridge ${name} not listening within 30 s: ${[...waiting].join(', ')}`);
    await sleep(100);
  }
}

function canConnect(target: { host: string; port: number } | { path: string }): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect(target);
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}
