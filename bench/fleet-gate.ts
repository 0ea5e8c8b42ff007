/**
 * bench/fleet-gate: how fast a fleet's agents act on what they read of each other (issue #21), over many samples on two
 * real member clusters. Prints figures; asserts nothing about time.
 *
 *   npm run bench:fleet -- [--eds 20] [--rounds 3] [--losses 2] [--replicas 4] [--soak 5] [--tolerance 5]
 *                          [--stabilization 5] [--timeout 600] [--agent-log-dir <dir>]
 *
 * The lab: two member clusters `a` (wave 0) and `b` (wave 1), each a full lab (etcd, kube-apiserver, kcm, scheduler,
 * kwok) started by the lab's own CLI (`tsx test/cluster/cli.ts up --clusters a,b`) in LAB_DIR/clusters/<name>/; LAB_DIR
 * is the bench's own (bench/fleet-gate-env.ts: /tmp/bench-fleet-lab unless set), so another run's lab is never touched.
 * Clusters the bench started are stopped at the end (LAB_KEEP=1 keeps them). Each member gets the CRDs, the agent
 * namespace and the bench namespace, bench kwok nodes of its own (110 pods each, tainted, enough for both members'
 * replicas plus surge: failover doubles b's pods), and the peer access `edctl fleet connect` makes; the peer kubeconfigs
 * are written from its Secrets, as the agent's pod would mount them. One agent per member: the compiled
 * `edctl agent --cluster-name <c> --peer-kubeconfigs <dir>` (lib/cli/main.js, a child process), watching only the
 * bench namespace. The fleet source (two Clusters, one DeployRegion over the bench nodes, N ExtendedDeployments of
 * `--replicas` pods per cluster, Group rollouts of batch 2, minReadySeconds 1, fleet waves [[a], [b]] with
 * minSuccessSeconds `--soak`, failover Additive with `--tolerance` and `--stabilization`) is rendered by
 * `edctl render -o DIR` and each member's DIR/clusters/<name>/ is applied to it with kubectl server-side, both at once,
 * as Argo CD or Flux would.
 *
 * Phase 1, waves: `--rounds` image changes of all N ExtendedDeployments at once, in both members. b starts the first
 * group of the new revision only once a has been Healthy at the new release for the soak, measured from b's own first
 * observation, recorded in b's status as status.fleet.peers[a].healthySince. For each ExtendedDeployment and round, from
 * b's API server audit log (the lab audits status writes of ExtendedDeployments in full: the request body and the
 * instant the server completed it, in microseconds), the first successful status write of the new revision with
 * currentGroup 1; the soak's end is healthySince (read from that very request) + the soak. Figures:
 *   written  that write's stageTimestamp − the soak's end: the issue's "predecessor Healthy plus soak → the follower's
 *            first write" (target: p99 under 1 s);
 *   decided  its status.lastGroupStartTime (the agent's clock when it decided) − the soak's end;
 *   observed b's healthySince − a's status write that made it Healthy at the release (a's audit log): how long b took
 *            to see a Healthy, which starts the soak (not part of the target, shown for the whole chain). The write's
 *            stageTimestamp is when a's API server completed its response, after etcd committed it and watchers may
 *            already have had it: a few ms below zero can happen on a busy machine.
 * Percentiles are nearest-rank: with fewer than 100 samples, p99 is the largest sample.
 * Phase 2, failover: `--losses` times, a is lost: its agent and its kube-apiserver are killed (SIGKILL; the API
 * server's command line is read from /proc first). For each ExtendedDeployment, from b's audit log, the first
 * successful status write whose status.fleet.additions holds a; lostSince is status.fleet.peers[a].lostSince of that
 * same request. Figures:
 *   additions  that write's stageTimestamp − (lostSince + toleration): the issue's "lost cluster → survivors' additions
 *              written" beyond the toleration (target: under 1 s);
 *   noticed    lostSince − the kill (b's probe of a's Lease, every 2 s, failing).
 * Then a's API server is started again with the same command line (its pid file rewritten, so the lab's `down` stops
 * it), then a new agent for a, and the bench waits until b has given every addition back (a Healthy with its replicas
 * for the stabilization) and both members are Healthy again before the next loss.
 * Also: each agent's CPU seconds (user + system, /proc/<pid>/stat, every process of the member's agent summed: a's is
 * restarted once per loss) per phase, and its peak RSS (VmHWM, the largest of its processes); the CPU of each member's
 * lab processes during phase 1; how busy the machine's cores were per phase (/proc/stat), and its load average.
 * What bounds the figures: every process here (two labs, two agents, the bench, anything else running) shares the
 * machine's cores, and each write waits for its member's one API server and etcd; the output says so next to them.
 */
import { LAB_DIR, LAB_DIR_DEFAULTED } from './fleet-gate-env.js';
import { spawn } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { KubernetesObject, V1Node, V1Secret } from '@kubernetes/client-node';
import { stringify } from 'yaml';
import { AgentChild, processCpuSeconds } from './agent-child.js';
import { benchFlags, positiveInt, runBench } from './command-line.js';
import { percentile, textTable } from './figures.js';
import { Api, ApiError, BENCH_LABEL, GROUP, KWOK_LABEL, PODS_PER_NODE, VERSION, benchNode, log, pool, repoRoot, sleep } from './lab-kit.js';

const CLUSTERS = ['a', 'b'] as const;
const AGENT_NAMESPACE = 'extended-deployment-system';
const BATCH = 2;
const MIN_READY_SECONDS = 1;
const LAB_COMPONENTS = ['kube-apiserver', 'etcd', 'kube-controller-manager', 'kube-scheduler', 'kwok'] as const;

// ---------------------------------------------------------------------------------------------------------------
// options

interface Options {
  readonly eds: number;
  readonly rounds: number;
  readonly losses: number;
  readonly replicas: number;
  readonly soakSeconds: number;
  readonly toleranceSeconds: number;
  readonly stabilizationSeconds: number;
  readonly timeoutSeconds: number;
  readonly agentLogDir: string | undefined;
}

function parseOptions(argv: readonly string[]): Options {
  const values = benchFlags(argv, {
    eds: { type: 'string' },
    rounds: { type: 'string' },
    losses: { type: 'string' },
    replicas: { type: 'string' },
    soak: { type: 'string' },
    tolerance: { type: 'string' },
    stabilization: { type: 'string' },
    timeout: { type: 'string' },
    'agent-log-dir': { type: 'string' },
  });
  return {
    eds: positiveInt('eds', values.eds, 20),
    rounds: positiveInt('rounds', values.rounds, 3),
    losses: positiveInt('losses', values.losses, 2),
    replicas: positiveInt('replicas', values.replicas, 4),
    soakSeconds: positiveInt('soak', values.soak, 5),
    toleranceSeconds: positiveInt('tolerance', values.tolerance, 5),
    stabilizationSeconds: positiveInt('stabilization', values.stabilization, 5),
    timeoutSeconds: positiveInt('timeout', values.timeout, 600),
    agentLogDir: values['agent-log-dir'],
  };
}

// ---------------------------------------------------------------------------------------------------------------
// processes: the lab's CLI, edctl, kubectl, pid files, /proc

/** Runs a command to its end; resolves with its stdout, rejects with its output when it fails. */
function run(command: string, args: readonly string[], timeoutMs = 600_000, echo = false): Promise<string> {
  const child = spawn(command, args, { cwd: repoRoot, env: process.env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => {
    err += d.toString();
    if (echo) process.stderr.write(d);
  });
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve(out);
      else reject(new Error(`${command} ${args.join(' ')} exited ${code ?? signal}: ${(err || out).trim().slice(-2000)}`));
    });
  });
}

/** The lab's own CLI (`tsx test/cluster/cli.ts <args>`, as `npm run lab:*` runs it), with this bench's LAB_DIR; its log on stderr. */
const labCli = (args: readonly string[]) =>
  run(join(repoRoot, 'node_modules', '.bin', 'tsx'), [join(repoRoot, 'test', 'cluster', 'cli.ts'), ...args], 1_800_000, true);
/** The compiled CLI (`npm run build` made lib/). */
const edctl = (args: readonly string[]) => run(process.execPath, [join(repoRoot, 'lib', 'cli', 'main.js'), ...args]);

/** The PID in `<dir>/pids/<name>.pid` when that process is alive and runs `name` (as the lab's livePid checks). */
function livePid(dir: string, name: string): number | undefined {
  const file = join(dir, 'pids', `${name}.pid`);
  if (!existsSync(file)) return undefined;
  const pid = Number(readFileSync(file, 'utf8').split('\n')[0]);
  if (!Number.isInteger(pid) || pid <= 0) return undefined;
  try {
    const argv0 = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[0] ?? '';
    return argv0 === name || argv0.endsWith(`/${name}`) ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** A process's command line, from /proc. */
const commandLine = (pid: number) =>
  readFileSync(`/proc/${pid}/cmdline`, 'utf8')
    .split('\0')
    .filter((arg) => arg !== '');

/** Starts a lab process again as the lab starts it (detached, cwd its lab, logs/<name>.log, pids/<name>.pid). */
function restartLabProcess(dir: string, name: string, argv: readonly string[]): number {
  const out = openSync(join(dir, 'logs', `${name}.log`), 'a');
  const child = spawn(argv[0]!, argv.slice(1), { cwd: dir, detached: true, stdio: ['ignore', out, out], env: process.env });
  child.unref();
  closeSync(out);
  if (!child.pid) throw new Error(`failed to start ${name} again`);
  writeFileSync(join(dir, 'pids', `${name}.pid`), `${child.pid}\n`);
  return child.pid;
}

/** CPU seconds of a process, 0 when it is gone. */
function cpuOf(pid: number | undefined): number {
  try {
    return pid === undefined ? 0 : processCpuSeconds(pid);
  } catch {
    return 0;
  }
}

/** The machine's CPU time so far (/proc/stat, in clock ticks): busy and total. */
function machineTicks(): { busy: number; total: number } {
  const fields = (readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '').trim().split(/\s+/).slice(1).map(Number);
  const [user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0] = fields;
  const busy = user + nice + system + irq + softirq + steal;
  return { busy, total: busy + idle + iowait };
}
const busyShare = (from: { busy: number; total: number }, to: { busy: number; total: number }) =>
  to.total > from.total ? (to.busy - from.busy) / (to.total - from.total) : Number.NaN;

// ---------------------------------------------------------------------------------------------------------------
// the members

interface Member {
  readonly name: string;
  readonly dir: string;
  readonly kubeconfig: string;
  readonly api: Api;
  agent: AgentChild | undefined;
  /** Agent processes started so far. */
  agentRuns: number;
  /** CPU seconds of this member's agent processes that have ended. */
  agentCpuDone: number;
  /** The largest VmHWM of its agent processes read so far (MiB). */
  agentPeakMiB: number;
}

/** CPU seconds of every agent process of the member so far. */
function agentCpu(m: Member): number {
  let now = 0;
  try {
    now = m.agent ? m.agent.cpuSeconds() : 0;
  } catch {
    // gone
  }
  return m.agentCpuDone + now;
}

/** Books the running agent's CPU and peak memory as final (right before it ends). */
function bookAgent(m: Member): void {
  if (!m.agent) return;
  try {
    m.agentCpuDone += m.agent.cpuSeconds();
    m.agentPeakMiB = Math.max(m.agentPeakMiB, m.agent.memory().peakMiB);
  } catch {
    // gone already
  }
}

// ---------------------------------------------------------------------------------------------------------------
// the ExtendedDeployments as the API server shows them

interface FleetStatus {
  release?: string;
  additions?: { cluster: string; replicas: number; since: string }[];
  gate?: { state: string; reason?: string };
  peers?: { cluster: string; healthySince?: string; healthyRelease?: string; lostSince?: string }[];
}
interface EdStatus {
  phase?: string;
  observedGeneration?: number;
  currentGroup?: number;
  lastGroupStartTime?: string;
  revision?: string;
  fleet?: FleetStatus;
}
interface EdView {
  metadata: { name: string; generation?: number };
  spec: { fleet?: { release?: string } };
  status?: EdStatus;
}

/** Healthy at its own spec.fleet.release, with its latest spec observed. */
const healthyAtRelease = (ed: EdView) =>
  ed.status?.phase === 'Healthy' &&
  ed.status.observedGeneration === ed.metadata.generation &&
  ed.spec.fleet?.release !== undefined &&
  ed.status.fleet?.release === ed.spec.fleet.release;

// ---------------------------------------------------------------------------------------------------------------
// the audit log

/** A successful status write of an ExtendedDeployment, as its API server completed it. */
interface StatusWrite {
  readonly name: string;
  /** stageTimestamp (ResponseComplete), ms since the epoch with the microseconds as a fraction. */
  readonly at: number;
  /** metadata.generation of the object it returned (the agent sends only status). */
  readonly generation: number | undefined;
  readonly status: EdStatus;
}

/** An RFC 3339 instant in ms, keeping microseconds (Date.parse stops at milliseconds). */
function instant(text: string): number {
  const m = /^(.*?\.\d{3})(\d*)(Z|[+-]\d\d:\d\d)$/.exec(text);
  if (!m) return Date.parse(text);
  const extra = m[2] ? Number(`0.${m[2]}`) : 0;
  return Date.parse(`${m[1]}${m[3]}`) + extra;
}

/** Every successful status write of an ExtendedDeployment of `ns` in a member's audit log, by name, in time order. */
function statusWrites(m: Member, ns: string): Map<string, StatusWrite[]> {
  const logs = join(m.dir, 'logs');
  const files = existsSync(logs) ? readdirSync(logs).filter((f) => /^audit(-.+)?\.log$/.test(f)) : [];
  const byName = new Map<string, StatusWrite[]>();
  for (const file of files) {
    for (const line of readFileSync(join(logs, file), 'utf8').split('\n')) {
      if (!line.includes('"subresource":"status"') || !line.includes(`"namespace":"${ns}"`)) continue;
      const e = JSON.parse(line) as {
        stage?: string;
        verb?: string;
        stageTimestamp?: string;
        objectRef?: { resource?: string; namespace?: string; name?: string; subresource?: string };
        responseStatus?: { code?: number };
        requestObject?: { status?: EdStatus };
        responseObject?: { metadata?: { generation?: number } };
      };
      const ref = e.objectRef;
      const code = e.responseStatus?.code ?? 0;
      if (e.stage !== 'ResponseComplete' || ref?.resource !== 'extendeddeployments' || ref.subresource !== 'status' || ref.namespace !== ns) continue;
      if (code < 200 || code >= 300 || !ref.name || !e.stageTimestamp || !e.requestObject?.status) continue;
      const list = byName.get(ref.name) ?? [];
      list.push({ name: ref.name, at: instant(e.stageTimestamp), generation: e.responseObject?.metadata?.generation, status: e.requestObject.status });
      byName.set(ref.name, list);
    }
  }
  for (const list of byName.values()) list.sort((x, y) => x.at - y.at);
  return byName;
}

// ---------------------------------------------------------------------------------------------------------------
// figures

interface Figure {
  readonly label: string;
  readonly samples: number[];
  /** Samples that could not be taken (no matching write found). */
  missing: number;
}
const figure = (label: string): Figure => ({ label, samples: [], missing: 0 });

function figureRow(f: Figure): string[] {
  const s = [...f.samples].sort((x, y) => x - y);
  const ms = (v: number | undefined) => (v === undefined || Number.isNaN(v) ? '-' : `${Math.round(v)} ms`);
  return [f.label, `${s.length}${f.missing ? ` (${f.missing} missing)` : ''}`, ms(percentile(s, 50)), ms(percentile(s, 99)), ms(s[s.length - 1]), ms(s[0])];
}

const FIGURE_HEADER = ['figure', 'samples', 'p50', 'p99', 'max', 'min'];

function verdict(f: Figure, limitMs: number): string {
  const s = [...f.samples].sort((x, y) => x - y);
  if (s.length === 0) return 'no samples';
  const p99 = percentile(s, 99);
  return `p99 ${Math.round(p99)} ms ${p99 < limitMs ? 'is under' : 'is NOT under'} ${limitMs} ms`;
}

// ---------------------------------------------------------------------------------------------------------------
// the bench

async function main(argv: readonly string[]): Promise<void> {
  const o = parseOptions(argv);
  const started = Date.now();
  const runId = Math.random().toString(16).slice(2, 8);
  const ns = `bench-fleet-${runId}`;
  const regionName = `bench-fleet-${runId}`;
  const work = mkdtempSync(join(tmpdir(), 'bench-fleet-'));
  const clustersDir = join(LAB_DIR, 'clusters');
  const wasRunning = CLUSTERS.map((c) => livePid(join(clustersDir, c), 'kube-apiserver') !== undefined);
  log(`run ${runId}: LAB_DIR ${LAB_DIR}; ${o.eds} ExtendedDeployments × ${o.replicas} pods per cluster; ${o.rounds} rounds, ${o.losses} losses`);
  // The clusters this run starts are stopped at the end, whatever happens (unless LAB_KEEP); running ones are reused.
  // The lab's `down` also stops a single lab running in the same LAB_DIR: then the clusters are left running.
  const singleLab = livePid(LAB_DIR, 'kube-apiserver') !== undefined;
  const startedLabs = CLUSTERS.some((_, i) => !wasRunning[i]) && !singleLab;

  const members: Member[] = CLUSTERS.map((name) => {
    const dir = join(clustersDir, name);
    const kubeconfig = join(dir, 'kubeconfig');
    // Its client once the cluster runs (the kubeconfig is written when the lab starts).
    let api: Api | undefined;
    return {
      name,
      dir,
      kubeconfig,
      get api() {
        return (api ??= new Api(kubeconfig));
      },
      agent: undefined,
      agentRuns: 0,
      agentCpuDone: 0,
      agentPeakMiB: 0,
    };
  });
  const [a, b] = members as [Member, Member];
  const nodesPerMember = Math.max(2, Math.ceil((o.eds * (2 * o.replicas + BATCH) * 1.2) / PODS_PER_NODE));
  const nodes: KubernetesObject[] = [];
  let kubectl = '';

  const startAgent = async (m: Member): Promise<void> => {
    const identity = `bench-fleet-${m.name}-${m.agentRuns++}`;
    m.agent = new AgentChild(
      [
        '--kubeconfig',
        m.kubeconfig,
        '--namespace',
        ns,
        '--lease-namespace',
        AGENT_NAMESPACE,
        '--metrics-bind-address',
        '127.0.0.1:0',
        '--health-probe-bind-address',
        '127.0.0.1:0',
        '--identity',
        identity,
        '--cluster-name',
        m.name,
        '--peer-kubeconfigs',
        join(work, 'peers', m.name),
      ],
      join(o.agentLogDir ?? work, `${identity}.log`),
    );
    // A new identity leads once the killed one's Lease has expired. An agent that dies first fails the run at once.
    const agent = m.agent;
    const died = new Promise<never>((_, reject) =>
      agent.child.once('exit', (code, signal) => reject(new Error(`agent ${identity} exited (${code ?? signal}) before leading:\n${agent.tail()}`))),
    );
    died.catch(() => undefined);
    await Promise.race([agent.waitLeading(180_000), died]);
  };

  const listEds = async (m: Member): Promise<EdView[]> =>
    (await m.api.request<{ items: EdView[] }>('GET', `/apis/${GROUP}/${VERSION}/namespaces/${ns}/extendeddeployments`)).items;

  /** Waits until `check` holds for every ExtendedDeployment of every member in `of`; logs progress every 15 s. */
  const waitEds = async (what: string, of: readonly Member[], check: (ed: EdView, m: Member) => boolean): Promise<void> => {
    const deadline = Date.now() + o.timeoutSeconds * 1000;
    let lastLog = Date.now();
    for (;;) {
      let progress: string;
      try {
        const counts = await Promise.all(of.map(async (m) => [m, (await listEds(m)).filter((ed) => check(ed, m)).length] as const));
        if (counts.every(([, n]) => n === o.eds)) return;
        progress = counts.map(([m, n]) => `${m.name} ${n}/${o.eds}`).join(', ');
      } catch (e) {
        progress = String(e).slice(0, 200);
      }
      if (Date.now() > deadline) {
        const tails = members.map((m) => `agent ${m.name}:\n${m.agent?.tail(10) ?? '(not running)'}`).join('\n');
        throw new Error(`timed out after ${o.timeoutSeconds} s waiting for ${what} (${progress})\n${tails}`);
      }
      if (Date.now() - lastLog > 15_000) {
        log(`waiting for ${what}: ${progress}`);
        lastLog = Date.now();
      }
      await sleep(500);
    }
  };

  /** The fleet source as a platform team writes it, rendered, and each member's folder applied to it (both at once). */
  const deliver = async (image: string): Promise<number> => {
    const dir = join(work, `render-${image.replace(/[^a-z0-9]/g, '-')}`);
    mkdirSync(dir, { recursive: true });
    const docs = [
      ...CLUSTERS.map((name) => ({ apiVersion: `${GROUP}/${VERSION}`, kind: 'Cluster', metadata: { name } })),
      {
        apiVersion: `${GROUP}/${VERSION}`,
        kind: 'DeployRegion',
        metadata: { name: regionName },
        spec: { matchLabels: { [BENCH_LABEL]: runId } },
      },
      ...Array.from({ length: o.eds }, (_, i) => {
        const app = `app-${String(i).padStart(3, '0')}`;
        return {
          apiVersion: `${GROUP}/${VERSION}`,
          kind: 'ExtendedDeployment',
          metadata: { name: app, namespace: ns },
          spec: {
            replicas: o.replicas * CLUSTERS.length,
            selector: { matchLabels: { app } },
            template: {
              metadata: { labels: { app } },
              spec: {
                terminationGracePeriodSeconds: 0,
                tolerations: [{ key: BENCH_LABEL, operator: 'Exists', effect: 'NoSchedule' }],
                containers: [{ name: 'app', image, resources: { requests: { cpu: '10m', memory: '16Mi' } } }],
              },
            },
            clusters: CLUSTERS.map((name) => ({ name })),
            regions: [{ name: regionName }],
            strategy: {
              rolloutStrategy: 'Group',
              batchSize: BATCH,
              minReadySeconds: MIN_READY_SECONDS,
              fleet: {
                waves: CLUSTERS.map((c) => [c]),
                minSuccessSeconds: o.soakSeconds,
                failover: { mode: 'Additive', toleranceSeconds: o.toleranceSeconds, stabilizationSeconds: o.stabilizationSeconds },
              },
            },
          },
        };
      }),
    ];
    writeFileSync(join(dir, 'fleet.yaml'), docs.map((d) => stringify(d)).join('---\n'));
    await edctl(['render', '-f', join(dir, 'fleet.yaml'), '-o', join(dir, 'out')]);
    const at = Date.now();
    await Promise.all(
      members.map((m) =>
        run(kubectl, ['--kubeconfig', m.kubeconfig, 'apply', '--server-side', '--field-manager', 'gitops', '-f', join(dir, 'out', 'clusters', m.name)]),
      ),
    );
    return at;
  };

  const written = figure('written: audit stageTimestamp − soak end');
  const decided = figure('decided: lastGroupStartTime − soak end');
  const observed = figure("observed: a's Healthy write → b's healthySince");
  const added = figure('additions: audit stageTimestamp − (lostSince + toleration)');
  const noticed = figure('noticed: lostSince − kill');
  let phase1: { seconds: number; busy: number; agentCpu: number[]; lab: { name: string; apiserver: number; rest: number }[] } | undefined;
  let phase2: { seconds: number; busy: number; agentCpu: number[] } | undefined;
  let failure: unknown;

  try {
    log(`starting the member clusters a and b (reused when running): tsx test/cluster/cli.ts up --clusters a,b`);
    await labCli(['up', '--clusters', CLUSTERS.join(',')]);
    kubectl = join((await labCli(['build'])).trim().split('\n').pop() ?? '', 'kubectl');
    // ---- setup: CRDs, namespaces, bench nodes, peer access
    const labNode = (await a.api.request<{ items: V1Node[] }>('GET', `/api/v1/nodes?labelSelector=${encodeURIComponent(`${KWOK_LABEL}=managed`)}`)).items[0];
    const kubeletVersion = labNode?.status?.nodeInfo?.kubeletVersion ?? 'v0.0.0';
    nodes.push(...Array.from({ length: nodesPerMember }, (_, i) => benchNode(runId, i, 'bench-zone-1', kubeletVersion)));
    await Promise.all(
      members.map(async (m) => {
        await run(kubectl, ['--kubeconfig', m.kubeconfig, 'apply', '--server-side', '-f', join(repoRoot, 'crds')]);
        // Not `kubectl wait --for=condition=Established`: it fails at once on a CRD without status yet.
        for (const crd of [`extendeddeployments.${GROUP}`, `deployregions.${GROUP}`]) {
          for (let tries = 0; ; tries++) {
            const got = await m.api.request<{ status?: { conditions?: { type: string; status: string }[] } }>(
              'GET',
              `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd}`,
            );
            if (got.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True')) break;
            if (tries >= 240) throw new Error(`CRD ${crd} not Established within 60 s`);
            await sleep(250);
          }
        }
        for (const name of [AGENT_NAMESPACE, ns]) {
          await m.api.request('POST', '/api/v1/namespaces', { metadata: { name } }).catch((e: unknown) => {
            if (!(e instanceof ApiError && e.code === 409)) throw e;
          });
        }
        await pool(nodes, 4, (n) => m.api.request('POST', '/api/v1/nodes', n));
      }),
    );
    await waitNodesReady();
    await edctl(['fleet', 'connect', ...members.flatMap((m) => ['--kubeconfig', `${m.name}=${m.kubeconfig}`])]);
    // The agent's pod mounts the peer Secrets as <dir>/<cluster>/kubeconfig; here the files are written from them.
    for (const m of members) {
      for (const peer of members.filter((p) => p !== m)) {
        const secret = await m.api.request<V1Secret>('GET', `/api/v1/namespaces/${AGENT_NAMESPACE}/secrets/extendeddeployment-peer-${peer.name}`);
        mkdirSync(join(work, 'peers', m.name, peer.name), { recursive: true });
        writeFileSync(join(work, 'peers', m.name, peer.name, 'kubeconfig'), Buffer.from(secret.data?.['kubeconfig'] ?? '', 'base64'));
      }
    }
    if (o.agentLogDir) mkdirSync(o.agentLogDir, { recursive: true });

    // ---- the first release, then the agents
    await deliver('registry.example/fleet-gate:0');
    await Promise.all(members.map((m) => startAgent(m)));
    log(`setup done in ${((Date.now() - started) / 1000).toFixed(0)} s (${nodesPerMember} bench nodes per member); waiting for the first release`);
    await waitEds('the first release Healthy in a and b', members, healthyAtRelease);

    // ---- phase 1: waves
    const p1Start = { at: Date.now(), ticks: machineTicks(), agents: members.map(agentCpu), lab: members.map((m) => labCpu(m)) };
    for (let round = 1; round <= o.rounds; round++) {
      const before = new Map((await listEds(b)).map((ed) => [ed.metadata.name, ed.spec.fleet?.release]));
      const delivered = await deliver(`registry.example/fleet-gate:${round}`);
      const releases = new Map((await listEds(b)).map((ed) => [ed.metadata.name, ed.spec.fleet?.release]));
      for (const [name, release] of releases)
        if (release === before.get(name)) throw new Error(`round ${round}: ${name}'s release did not change (${release})`);
      log(`round ${round}/${o.rounds}: new image delivered to a and b; waiting for both Healthy at the new release`);
      await waitEds(`round ${round}: a and b Healthy at the new release`, members, healthyAtRelease);
      const eds = await listEds(b);
      const bWrites = statusWrites(b, ns);
      const aWrites = statusWrites(a, ns);
      for (const ed of eds) {
        const name = ed.metadata.name;
        const release = ed.spec.fleet?.release;
        const revision = ed.status?.revision;
        const start = (bWrites.get(name) ?? []).find(
          (w) =>
            w.at >= delivered &&
            w.status.currentGroup === 1 &&
            w.status.lastGroupStartTime !== undefined &&
            (revision === undefined || w.status.revision === revision),
        );
        const peer = start?.status.fleet?.peers?.find((p) => p.cluster === 'a');
        if (!start || peer?.healthySince === undefined || peer.healthyRelease !== release) {
          written.missing++;
          decided.missing++;
          observed.missing++;
          log(`round ${round}: ${name}: no status write starting group 1 with a's healthySince at ${release} found in b's audit log`);
          continue;
        }
        const soakEnd = instant(peer.healthySince) + o.soakSeconds * 1000;
        written.samples.push(start.at - soakEnd);
        decided.samples.push(instant(start.status.lastGroupStartTime!) - soakEnd);
        const healthy = (aWrites.get(name) ?? []).find(
          (w) => w.at >= delivered && w.status.phase === 'Healthy' && w.status.fleet?.release === release && w.status.observedGeneration === w.generation,
        );
        if (healthy) observed.samples.push(instant(peer.healthySince) - healthy.at);
        else observed.missing++;
      }
      log(`round ${round}: ${written.samples.length} samples so far`);
    }
    const p1End = { at: Date.now(), ticks: machineTicks(), agents: members.map(agentCpu), lab: members.map((m) => labCpu(m)) };
    phase1 = {
      seconds: (p1End.at - p1Start.at) / 1000,
      busy: busyShare(p1Start.ticks, p1End.ticks),
      agentCpu: members.map((_, i) => p1End.agents[i]! - p1Start.agents[i]!),
      lab: members.map((m, i) => ({
        name: m.name,
        apiserver: p1End.lab[i]!.apiserver - p1Start.lab[i]!.apiserver,
        rest: p1End.lab[i]!.rest - p1Start.lab[i]!.rest,
      })),
    };

    // ---- phase 2: failover
    const p2Start = { at: Date.now(), ticks: machineTicks(), agents: members.map(agentCpu) };
    for (let loss = 1; loss <= o.losses; loss++) {
      const pid = livePid(a.dir, 'kube-apiserver');
      if (pid === undefined) throw new Error("a's kube-apiserver is not running");
      const argv = commandLine(pid);
      bookAgent(a);
      a.agent?.child.kill('SIGKILL');
      a.agent = undefined;
      process.kill(pid, 'SIGKILL');
      const killed = Date.now();
      log(`loss ${loss}/${o.losses}: a's agent and kube-apiserver killed; waiting for b's additions`);
      await waitEds(`loss ${loss}: b adds a's replicas`, [b], (ed) => (ed.status?.fleet?.additions ?? []).some((x) => x.cluster === 'a'));
      const bWrites = statusWrites(b, ns);
      for (const ed of await listEds(b)) {
        const name = ed.metadata.name;
        const first = (bWrites.get(name) ?? []).find((w) => w.at >= killed && (w.status.fleet?.additions ?? []).some((x) => x.cluster === 'a'));
        const lostSince = first?.status.fleet?.peers?.find((p) => p.cluster === 'a')?.lostSince;
        if (!first || lostSince === undefined) {
          added.missing++;
          noticed.missing++;
          log(`loss ${loss}: ${name}: no status write with additions for a (and its lostSince) found in b's audit log`);
          continue;
        }
        added.samples.push(first.at - (instant(lostSince) + o.toleranceSeconds * 1000));
        noticed.samples.push(instant(lostSince) - killed);
      }
      log(`loss ${loss}: ${added.samples.length} samples so far; starting a's kube-apiserver again`);
      restartLabProcess(a.dir, 'kube-apiserver', argv);
      await waitEds(`loss ${loss}: a's API server answers`, [a], () => true);
      await startAgent(a);
      await waitEds(`loss ${loss}: b gives a's replicas back`, [b], (ed) => (ed.status?.fleet?.additions ?? []).length === 0);
      await waitEds(`loss ${loss}: a and b Healthy again`, members, healthyAtRelease);
    }
    const p2End = { at: Date.now(), ticks: machineTicks(), agents: members.map(agentCpu) };
    phase2 = {
      seconds: (p2End.at - p2Start.at) / 1000,
      busy: busyShare(p2Start.ticks, p2End.ticks),
      agentCpu: members.map((_, i) => p2End.agents[i]! - p2Start.agents[i]!),
    };
  } catch (e) {
    failure = e;
  } finally {
    for (const m of members) {
      bookAgent(m);
      await m.agent?.stop();
    }
    const keep = Boolean(process.env['LAB_KEEP']);
    if (startedLabs && !keep) {
      log('stopping the member clusters this run started (tsx test/cluster/cli.ts down)');
      await labCli(['down']).catch((e: unknown) => log(`lab down: ${String(e)}`));
      if (LAB_DIR_DEFAULTED) rmSync(LAB_DIR, { recursive: true, force: true });
    } else {
      log(`cleaning up in the running clusters: namespace ${ns}, DeployRegion ${regionName}, bench nodes`);
      for (const m of members) {
        try {
          await m.api.deleteIgnoringMissing(`/api/v1/namespaces/${ns}`);
          await m.api.deleteIgnoringMissing(`/apis/${GROUP}/${VERSION}/deployregions/${regionName}`);
          await pool(nodes, 4, (n) => m.api.deleteIgnoringMissing(`/api/v1/nodes/${n.metadata!.name}`));
        } catch (e) {
          log(`cleanup in ${m.name}: ${String(e)}`);
        }
      }
    }
    rmSync(work, { recursive: true, force: true });
  }

  // ---- figures (also after a failure: what was measured until then)
  const s = (v: number) => v.toFixed(1);
  const lines = [
    `bench:fleet-gate — 2 member clusters (a: wave 0, b: wave 1), ${o.eds} ExtendedDeployments × ${o.replicas} pods per cluster in one region; ` +
      `Group, batch ${BATCH}, minReadySeconds ${MIN_READY_SECONDS}; fleet minSuccessSeconds ${o.soakSeconds}; failover Additive, toleration ${o.toleranceSeconds} s, stabilization ${o.stabilizationSeconds} s`,
    '',
    `(1) waves: ${o.rounds} rounds of an image change to all ${o.eds} at once; per ExtendedDeployment and round, b's status write starting group 1 of the new revision ` +
      `(b's audit log), from the soak's end = healthySince of a (b's own record, in that request) + ${o.soakSeconds} s`,
    ...textTable(FIGURE_HEADER, [written, decided, observed].map(figureRow)).map((l) => `  ${l}`),
    `  target "predecessor Healthy plus soak → the follower's first write" under 1 s at p99: ${verdict(written, 1000)}`,
    `  (percentiles by nearest rank: with fewer than 100 samples p99 is the largest)`,
    '',
    `(2) failover: ${o.losses} losses of a (its agent and kube-apiserver killed); per ExtendedDeployment and loss, b's first status write with additions for a ` +
      `(b's audit log), from lostSince (b's record of a, in that request) + toleration ${o.toleranceSeconds} s`,
    ...textTable(FIGURE_HEADER, [added, noticed].map(figureRow)).map((l) => `  ${l}`),
    `  target "lost cluster → survivors' additions written" within toleration + 1 s: ${verdict(added, 1000)}`,
    '',
    'agents (the compiled `edctl agent`, one per member; a is restarted after every loss):',
    ...textTable(
      ['agent', 'processes', 'CPU phase 1', 'CPU phase 2', 'peak RSS'],
      members.map((m, i) => [
        m.name,
        String(m.agentRuns),
        phase1 ? `${s(phase1.agentCpu[i]!)} s` : '-',
        phase2 ? `${s(phase2.agentCpu[i]!)} s` : '-',
        `${m.agentPeakMiB.toFixed(0)} MiB`,
      ]),
    ).map((l) => `  ${l}`),
    ...(phase1
      ? [
          `phase 1 took ${s(phase1.seconds)} s: machine busy ${(phase1.busy * 100).toFixed(0)}% of ${availableParallelism()} cores; lab CPU ` +
            phase1.lab.map((l) => `${l.name}: kube-apiserver ${s(l.apiserver)} s, etcd+kcm+scheduler+kwok ${s(l.rest)} s`).join('; '),
        ]
      : []),
    ...(phase2 ? [`phase 2 took ${s(phase2.seconds)} s: machine busy ${(phase2.busy * 100).toFixed(0)}% of ${availableParallelism()} cores`] : []),
    `load average at the end: ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
    `bounds: every process (both labs' API servers, etcd, kcm, scheduler and kwok, both agents, this bench, and anything else on the machine) shares ` +
      `${availableParallelism()} cores; each figure ends when b's one kube-apiserver (with its etcd) completes the write, so a busy machine or API server lengthens it.`,
  ];
  console.log(lines.join('\n'));
  if (failure !== undefined) throw failure instanceof Error ? failure : new Error(`bench failed: ${JSON.stringify(failure)}`);

  /** Waits until the bench nodes are Ready in both members. */
  async function waitNodesReady(): Promise<void> {
    const deadline = Date.now() + 300_000;
    for (;;) {
      const ready = await Promise.all(
        members.map(async (m) => {
          const list = await m.api.request<{ items: V1Node[] }>('GET', `/api/v1/nodes?labelSelector=${encodeURIComponent(`${BENCH_LABEL}=${runId}`)}`);
          return list.items.filter((n) => (n.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True')).length;
        }),
      );
      if (ready.every((n) => n === nodesPerMember)) return;
      if (Date.now() > deadline) throw new Error(`bench nodes not Ready after 300 s (${ready.join(', ')} of ${nodesPerMember})`);
      await sleep(1000);
    }
  }
}

/** CPU seconds so far of a member's lab processes: its kube-apiserver, and the rest together. */
function labCpu(m: Member): { apiserver: number; rest: number } {
  const [apiserver = 0, ...rest] = LAB_COMPONENTS.map((c) => cpuOf(livePid(m.dir, c)));
  return { apiserver, rest: rest.reduce((x, y) => x + y, 0) };
}

await runBench(import.meta.url, main);
