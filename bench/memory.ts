/**
 * bench/memory: the idle agent's memory (the compiled `edctl agent`, as a child process, with the install's Node.js
 * flags) once N ExtendedDeployments × R regions × P pods are applied on the lab and Healthy, next to baselines
 * measured in the same run: Node.js alone, Node.js importing `@kubernetes/client-node` (the whole library, what the
 * agent cost before it stopped loading it), and Node.js importing the agent's own code without starting it.
 *
 *   npm run bench:memory -- [--eds 200] [--regions 3] [--replicas 2] [--batch 1] [--idle-seconds 30] [--settle-seconds 90]
 *                           [--agent-log <file>]
 *
 * Setup as bench/agent's (the lab reused or started, bench nodes, DeployRegions, one namespace), then: the agent
 * starts, the fleet is applied once (the agent scales each ReplicaSet to its count), every ExtendedDeployment becomes
 * Healthy, the agent idles for `--idle-seconds` (the first idle reading) and `--settle-seconds` more (the second). Two
 * readings because V8 gives an idle heap back only once its memory reducer has run, which it does when it sees the
 * allocation rate low, checking every 8 s: 11 s into the idle window in one traced run, later in others, so the first
 * reading falls before or after it (99–108 MiB on Node.js 22 over the same fleet); an agent idles for hours, so the
 * second is the one it holds. Figures: VmRSS (now) and VmHWM (peak) from /proc/<pid>/status, and
 * the V8 heap used and external memory from the agent's own /metrics (prom-client's process metrics). The agent and
 * the baselines run on the Node.js the header names: the agent image's release unless BENCH_AGENT_NODE says otherwise
 * (bench/agent-child.ts).
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { benchFlags, positiveInt, runBench } from './command-line.js';
import { AgentChild, agentEnv, agentNode, agentNodeOptions, agentNodeVersion, metricValue } from './agent-child.js';
import { textTable } from './figures.js';
import { BenchRun, PODS_PER_NODE, log, repoRoot, sleep } from './lab-kit.js';
import { applyFleet, FLEET_SHAPE_FLAGS, fleetObjects, Observer, waitFleet } from './rollout-fleet.js';

interface Options {
  readonly eds: number;
  readonly regions: number;
  readonly replicas: number;
  readonly batch: number;
  readonly idleSeconds: number;
  readonly settleSeconds: number;
  readonly rolloutTimeoutSeconds: number;
  readonly agentLog: string | undefined;
}

function parseOptions(argv: readonly string[]): Options {
  const values = benchFlags(argv, {
    ...FLEET_SHAPE_FLAGS,
    'idle-seconds': { type: 'string' },
    'settle-seconds': { type: 'string' },
    'rollout-timeout': { type: 'string' },
    'agent-log': { type: 'string' },
  });
  return {
    eds: positiveInt('eds', values.eds, 200),
    regions: positiveInt('regions', values.regions, 3),
    replicas: positiveInt('replicas', values.replicas, 2),
    batch: positiveInt('batch', values.batch, 1),
    idleSeconds: positiveInt('idle-seconds', values['idle-seconds'], 30),
    settleSeconds: positiveInt('settle-seconds', values['settle-seconds'], 90),
    rolloutTimeoutSeconds: positiveInt('rollout-timeout', values['rollout-timeout'], 600),
    agentLog: values['agent-log'],
  };
}

/** One process's memory: resident now and peak (MiB), and, when known, V8's heap used and external memory (MiB). */
export interface MemoryFigure {
  readonly rssMiB: number;
  readonly hwmMiB: number;
  readonly heapUsedMiB: number;
  readonly externalMiB: number;
}

const MiB = 1024 * 1024;

/**
 * A baseline: `node <agent flags> --input-type=module -e` in the agent's environment, importing `imports` (none:
 * Node.js alone), then reporting its own memory after a settle, as the idle agent is measured.
 */
export function baseline(imports: readonly string[]): Promise<MemoryFigure> {
  const script = [
    "import { readFileSync } from 'node:fs';",
    ...imports.map((m) => `await import(${JSON.stringify(m)});`),
    'await new Promise((r) => setTimeout(r, 1000));',
    "const status = readFileSync('/proc/self/status', 'utf8');",
    "const kib = (k) => Number(new RegExp('^' + k + ':\\\\s+(\\\\d+) kB', 'm').exec(status)[1]);",
    'const m = process.memoryUsage();',
    "process.stdout.write(JSON.stringify({ rssMiB: kib('VmRSS') / 1024, hwmMiB: kib('VmHWM') / 1024, heapUsedMiB: m.heapUsed / 1048576, externalMiB: m.external / 1048576 }));",
  ].join('\n');
  const flags = agentNodeOptions.split(' ').filter(Boolean);
  return new Promise((resolve, reject) => {
    const child = spawn(agentNode(), [...flags, '--input-type=module', '-e', script], {
      cwd: repoRoot,
      env: agentEnv,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.on('error', reject);
    child.on('exit', (code) =>
      code === 0 ? resolve(JSON.parse(out) as MemoryFigure) : reject(new Error(`baseline ${imports.join(', ') || '(none)'} exited ${code}`)),
    );
  });
}

/** The agent's figure: /proc for RSS and peak, its /metrics for V8's heap. */
async function agentFigure(agent: AgentChild): Promise<MemoryFigure> {
  const { nowMiB, peakMiB } = agent.memory();
  const metrics = await agent.metrics();
  return {
    rssMiB: nowMiB,
    hwmMiB: peakMiB,
    heapUsedMiB: metricValue(metrics, 'nodejs_heap_size_used_bytes') / MiB,
    externalMiB: metricValue(metrics, 'nodejs_external_memory_bytes') / MiB,
  };
}

const mib = (n: number) => (Number.isFinite(n) ? n.toFixed(1) : '-');

async function main(argv: readonly string[]): Promise<void> {
  const o = parseOptions(argv);
  const started = Date.now();
  const nodesPerRegion = Math.ceil((o.eds * (o.replicas + o.batch) * 1.1) / PODS_PER_NODE);
  const nodeCount = nodesPerRegion * o.regions;

  // Baselines first, while the machine is quiet.
  const bare = await baseline([]);
  const library = await baseline(['@kubernetes/client-node']);
  // What `edctl agent` loads before it connects: the command tree, the agent and its kubeconfig loader.
  const agentCode = await baseline(
    ['program.js', 'commands/agent.js']
      .map((f) => join(repoRoot, 'lib', 'cli', f))
      .concat(['agent.js', 'runtime/kubeconfig.js'].map((f) => join(repoRoot, 'lib', 'agent', f))),
  );
  log(`baselines: node ${mib(bare.rssMiB)} MiB, + client-node ${mib(library.rssMiB)} MiB, + agent code ${mib(agentCode.rssMiB)} MiB`);

  const run = await BenchRun.open('memory');
  const { api, runId, ns } = run;
  const pods = o.eds * o.regions * o.replicas;
  log(`run ${runId}: ${o.eds} ExtendedDeployments × ${o.regions} regions × ${o.replicas} pods = ${pods} pods on ${nodeCount} bench nodes`);
  const v1 = fleetObjects(runId, ns, { ...o, minReadySeconds: 0 }, 'registry.example/bench:1');
  let agent: AgentChild | undefined;
  let observer: Observer | undefined;
  try {
    await run.setUp(nodeCount, o.regions);
    for (const region of v1.regions) await api.apply(region, 'deployregions', false);
    agent = new AgentChild(run.agentArgs(), o.agentLog);
    await agent.waitLeading(60_000);
    const empty = await agentFigure(agent);
    observer = new Observer(api, ns);
    await observer.synced();
    await applyFleet(api, v1.eds);
    if (!(await waitFleet(observer, v1.eds, 'v1', o.rolloutTimeoutSeconds * 1000))) throw new Error('the fleet did not become Healthy');
    observer.stop();
    observer = undefined;
    log(`idle for ${o.idleSeconds} s`);
    await sleep(o.idleSeconds * 1000);
    const idle = await agentFigure(agent);
    log(`idle for ${o.settleSeconds} s more`);
    await sleep(o.settleSeconds * 1000);
    const settled = await agentFigure(agent);

    const rows: [string, MemoryFigure][] = [
      ['node alone', bare],
      ["node + import '@kubernetes/client-node'", library],
      ["node + import the agent and the CLI (tsc's modules, not the bundle)", agentCode],
      ['agent, leading, 0 ExtendedDeployments', empty],
      [`agent, idle ${o.idleSeconds} s, ${o.eds} EDs × ${o.regions} regions × ${o.replicas} pods`, idle],
      [`agent, idle ${o.idleSeconds + o.settleSeconds} s, the same`, settled],
    ];
    const lines = textTable(
      ['process', 'VmRSS MiB', 'VmHWM MiB', 'heap used MiB', 'external MiB'],
      rows.map(([name, f]) => [name, mib(f.rssMiB), mib(f.hwmMiB), mib(f.heapUsedMiB), mib(f.externalMiB)]),
    );
    process.stdout.write(
      [
        `bench:memory — node ${agentNodeVersion()}, flags: ${agentNodeOptions || '(none)'}; ${pods} pods; ${((Date.now() - started) / 1000).toFixed(0)} s`,
        ...lines,
        `idle agent (${o.idleSeconds + o.settleSeconds} s) above node alone: ${mib(settled.rssMiB - bare.rssMiB)} MiB (caches and work: ${mib(settled.rssMiB - empty.rssMiB)} MiB over the empty agent)`,
        '',
      ].join('\n'),
    );
  } finally {
    observer?.stop();
    await agent?.stop();
    await run.tearDown(v1.regions);
  }
}

await runBench(import.meta.url, main);
