/**
 * bench/render: N ExtendedDeployments × R regions rendered by our constructs, against the same fleet written as
 * cdk8s-plus-28 Deployments, in one run. Prints wall time, peak RSS and the ratio; asserts nothing about time.
 *
 *   npm run bench:render -- [--eds 1000] [--regions 4] [--runs 3] [--warmup-eds 50] [--phases] [--json]
 *
 * The parent spawns one child process per side and run (`--side ours|baseline`), alternating which side goes first,
 * so each side's peak RSS is its own and a change in background load hits both sides alike. A child builds the fleet
 * description (untimed), renders a small fleet once to warm up, then renders the full fleet: constructs + validation
 * + YAML serialisation are timed with performance.now(); Node start-up is not. Ours writes YAML through its own synth
 * path (constructs/synth.ts, js-yaml), the baseline through cdk8s' `app.synthYaml()`, each as its users run it. Peak RSS
 * is `process.resourceUsage().maxRSS` at the end of the child. The figures per side are the median wall time over the
 * runs and the highest peak RSS of any run.
 *
 * `--phases` adds, after the measurement, one more render of the same fleet split into build (constructs, validation,
 * our core render), `chart.toJson()` of every chart (cdk8s resolve and sanitise) and YAML serialisation (each side's
 * serializer). It does not change the figures above.
 */
import { spawnSync } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Yaml, type App } from 'cdk8s';
import { appYaml, toYaml } from '../constructs/synth.js';
import { buildBaseline } from './baseline.js';
import { median, positiveInt, textTable } from './figures.js';
import { buildFleet, type Fleet } from './fleet.js';
import { buildOurs, checkOurReplicas } from './ours.js';

type Side = 'ours' | 'baseline';
const SIDES: readonly Side[] = ['baseline', 'ours'];

/** What a child reports on its stdout, as one JSON line. */
interface SideResult {
  readonly side: Side;
  readonly runsMs: readonly number[];
  /** CPU time (user + system, all threads) of each timed run: less sensitive to other load on the machine. */
  readonly runsCpuMs: readonly number[];
  readonly medianMs: number;
  readonly maxRssKiB: number;
  readonly phases?: Phases;
  readonly documents: number;
  readonly expectedDocuments: number;
  readonly kinds: Readonly<Record<string, number>>;
  readonly outputBytes: number;
}

/**
 * Where one render's time goes, in milliseconds: building the app, `chart.toJson()` of every chart, and YAML
 * serialisation of the documents, which is what `synthYaml` does after cdk8s' dependency resolution and validation.
 */
interface Phases {
  readonly buildMs: number;
  readonly toJsonMs: number;
  readonly yamlMs: number;
}

interface Options {
  readonly eds: number;
  readonly regions: number;
  readonly runs: number;
  readonly warmupEds: number;
  readonly phases: boolean;
  readonly json: boolean;
  readonly side: Side | undefined;
}

function parseOptions(argv: readonly string[]): Options {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      eds: { type: 'string' },
      regions: { type: 'string' },
      runs: { type: 'string' },
      'warmup-eds': { type: 'string' },
      phases: { type: 'boolean', default: false },
      json: { type: 'boolean', default: false },
      side: { type: 'string' },
    },
    strict: true,
  });
  const side = values.side;
  if (side !== undefined && side !== 'ours' && side !== 'baseline') throw new Error(`--side must be ours or baseline, not ${JSON.stringify(side)}`);
  return {
    eds: positiveInt('eds', values.eds, 1000),
    regions: positiveInt('regions', values.regions, 4),
    runs: positiveInt('runs', values.runs, 3),
    warmupEds: positiveInt('warmup-eds', values['warmup-eds'], 50),
    phases: values.phases ?? false,
    json: values.json ?? false,
    side,
  };
}

/** Documents one side must produce: ours = N EDs + N×R ReplicaSets + R DeployRegions; baseline = N×R Deployments. */
function expectedDocuments(side: Side, fleet: Fleet): number {
  const workloads = fleet.apps.reduce((sum, a) => sum + a.regions.length, 0);
  return side === 'ours' ? fleet.apps.length + workloads + fleet.regions.length : workloads;
}

/** Builds the side's app (constructs, validation, our core render). `check` verifies it afterwards, untimed. */
function build(side: Side, fleet: Fleet): { app: App; check: () => void } {
  if (side === 'baseline') return { app: buildBaseline(fleet).app, check: () => undefined };
  const { app, eds } = buildOurs(fleet);
  return { app, check: () => checkOurReplicas(fleet, eds) };
}

function countKinds(yaml: string): Record<string, number> {
  const kinds: Record<string, number> = {};
  for (const match of yaml.matchAll(/^kind: (\S+)$/gm)) {
    const kind = match[1] ?? '?';
    kinds[kind] = (kinds[kind] ?? 0) + 1;
  }
  return kinds;
}

function collectGarbage(): void {
  if (typeof gc === 'function') gc();
}

function cpuMs(since: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(since);
  return (used.user + used.system) / 1000;
}

/** Splits one more render of the same fleet into its phases (after the measurement, so it changes no figure). */
function measurePhases(side: Side, fleet: Fleet): Phases {
  collectGarbage();
  const t0 = performance.now();
  const { app } = build(side, fleet);
  const t1 = performance.now();
  const docs: unknown[] = [];
  for (const chart of app.charts) docs.push(...(chart.toJson() as unknown[]));
  const t2 = performance.now();
  if (side === 'ours') docs.map(toYaml).join('---\n');
  else Yaml.stringify(...docs);
  const t3 = performance.now();
  return { buildMs: t1 - t0, toJsonMs: t2 - t1, yamlMs: t3 - t2 };
}

/**
 * YAML of the whole app the way each side's users get it: ours through our synth path (constructs/synth.ts, which
 * `npm run synth` and `edctl render` use), the baseline through cdk8s' own `synthYaml()`.
 */
function synthesize(side: Side, app: App): string {
  return side === 'ours' ? appYaml(app) : app.synthYaml();
}

function runChild(side: Side, options: Options): void {
  if (typeof gc !== 'function') process.stderr.write('bench/render: run with --expose-gc for collections between runs\n');
  const warmup = buildFleet({ eds: options.warmupEds, regions: options.regions });
  const warm = build(side, warmup);
  synthesize(side, warm.app);
  warm.check();
  const fleet = buildFleet({ eds: options.eds, regions: options.regions });

  const runsMs: number[] = [];
  const runsCpuMs: number[] = [];
  let documents = 0;
  let outputBytes = 0;
  let kinds: Record<string, number> = {};
  for (let k = 0; k < options.runs; k++) {
    collectGarbage();
    const cpu = process.cpuUsage();
    const start = performance.now();
    const { app, check } = build(side, fleet);
    const yaml = synthesize(side, app);
    runsMs.push(performance.now() - start);
    runsCpuMs.push(cpuMs(cpu));
    // Sanity figures, outside the timed section.
    check();
    documents = (yaml.match(/^---$/gm)?.length ?? 0) + (yaml.length > 0 ? 1 : 0);
    outputBytes = Buffer.byteLength(yaml, 'utf8');
    kinds = countKinds(yaml);
  }
  collectGarbage();
  const maxRssKiB = process.resourceUsage().maxRSS;
  const result: SideResult = {
    side,
    runsMs,
    runsCpuMs,
    medianMs: median(runsMs),
    maxRssKiB,
    ...(options.phases && { phases: measurePhases(side, fleet) }),
    documents,
    expectedDocuments: expectedDocuments(side, fleet),
    kinds,
    outputBytes,
  };
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

/** Runs one child: warm-up, then `runs` timed renders of one side. */
function spawnSide(side: Side, options: Options, runs: number): SideResult {
  const script = fileURLToPath(import.meta.url);
  const args = ['--expose-gc', script, '--side', side, '--eds', String(options.eds), '--regions', String(options.regions)];
  args.push('--runs', String(runs), '--warmup-eds', String(options.warmupEds));
  if (options.phases) args.push('--phases');
  const child = spawnSync(process.execPath, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 16 * 1024 * 1024 });
  if (child.error) throw child.error;
  if (child.status !== 0) throw new Error(`the ${side} child exited with ${child.status ?? child.signal ?? 'unknown'}`);
  const line = child.stdout.trim().split('\n').pop() ?? '';
  return JSON.parse(line) as SideResult;
}

/** Folds one side's children into one result: every run, the median, the highest peak RSS, the last split. */
function combine(side: Side, children: readonly SideResult[]): SideResult {
  const first = children[0];
  if (!first) throw new Error(`no run of ${side}`);
  const runsMs = children.flatMap((c) => c.runsMs);
  const phases = children.map((c) => c.phases).filter((p): p is Phases => p !== undefined);
  const pick = (key: keyof Phases) => median(phases.map((p) => p[key]));
  return {
    ...first,
    runsMs,
    runsCpuMs: children.flatMap((c) => c.runsCpuMs),
    medianMs: median(runsMs),
    maxRssKiB: Math.max(...children.map((c) => c.maxRssKiB)),
    ...(phases.length > 0 && { phases: { buildMs: pick('buildMs'), toJsonMs: pick('toJsonMs'), yamlMs: pick('yamlMs') } }),
  };
}

const MB = 1_000_000;
const rssMB = (r: SideResult) => (r.maxRssKiB * 1024) / MB;

function printTable(results: readonly SideResult[]): void {
  const header = ['side', 'median ms', 'runs ms', 'median CPU ms', 'peak RSS MB', 'documents', 'output MB'];
  const rows = results.map((r) => [
    r.side,
    r.medianMs.toFixed(0),
    r.runsMs.map((ms) => ms.toFixed(0)).join(' / '),
    median(r.runsCpuMs).toFixed(0),
    rssMB(r).toFixed(1),
    String(r.documents),
    (r.outputBytes / MB).toFixed(2),
  ]);
  for (const line of textTable(header, rows)) console.log(line);
}

function runParent(options: Options): void {
  // One child per side and run, alternating which side goes first, so drifting background load hits both alike.
  const children: SideResult[] = [];
  for (let k = 0; k < options.runs; k++) {
    const order = k % 2 === 0 ? SIDES : [...SIDES].reverse();
    for (const side of order) children.push(spawnSide(side, options, 1));
  }
  const results = SIDES.map((side) =>
    combine(
      side,
      children.filter((c) => c.side === side),
    ),
  );
  const ours = results.find((r) => r.side === 'ours');
  const baseline = results.find((r) => r.side === 'baseline');
  if (!ours || !baseline) throw new Error('a side did not report');
  const ratio = ours.medianMs / baseline.medianMs;
  const mismatched = results.filter((r) => r.documents !== r.expectedDocuments);

  if (options.json) {
    const figures = {
      eds: options.eds,
      regions: options.regions,
      runs: options.runs,
      warmupEds: options.warmupEds,
      node: process.version,
      sides: Object.fromEntries(results.map((r) => [r.side, { ...r, peakRssMB: Number(rssMB(r).toFixed(1)) }])),
      ratio: Number(ratio.toFixed(4)),
      targets: { ratioAtMost: 0.5, oursPeakRssMBBelow: 400 },
      documentsAsExpected: mismatched.length === 0,
    };
    console.log(JSON.stringify(figures, null, 2));
  } else {
    console.log(
      `bench/render: ${options.eds} ExtendedDeployments × ${options.regions} regions, median of ${options.runs} runs per side, one child process each, warm-up ${options.warmupEds} EDs (Node ${process.version})`,
    );
    console.log('');
    printTable(results);
    console.log('');
    for (const r of results) {
      const kinds = Object.entries(r.kinds)
        .map(([kind, n]) => `${n} ${kind}`)
        .join(', ');
      console.log(`${r.side}: ${kinds} (expected ${r.expectedDocuments} documents)`);
    }
    for (const r of results) {
      const p = r.phases;
      if (!p) continue;
      const sum = p.buildMs + p.toJsonMs + p.yamlMs;
      const share = (ms: number) => `${ms.toFixed(0)} (${((100 * ms) / sum).toFixed(0)}%)`;
      console.log(`${r.side} phases, median ms: build ${share(p.buildMs)} + chart.toJson ${share(p.toJsonMs)} + YAML ${share(p.yamlMs)} = ${sum.toFixed(0)}`);
    }
    console.log('');
    console.log(`ratio ours/baseline: ${ratio.toFixed(2)} (target <= 0.50)`);
    console.log(`peak RSS ours: ${rssMB(ours).toFixed(0)} MB (target < 400 MB)`);
  }
  for (const r of mismatched) {
    process.stderr.write(`bench/render: ${r.side} produced ${r.documents} documents, expected ${r.expectedDocuments}\n`);
  }
  if (mismatched.length > 0) process.exitCode = 1;
}

let options: Options;
try {
  options = parseOptions(process.argv.slice(2));
} catch (error) {
  process.stderr.write(`bench/render: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(2);
}
if (options.side) runChild(options.side, options);
else runParent(options);
