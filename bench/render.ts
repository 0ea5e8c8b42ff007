/**
 * bench/render: N ExtendedDeployments × R regions rendered four ways in one run. Prints wall time, CPU time, peak RSS
 * and the ratios between the sides; asserts nothing about time.
 *
 *   npm run bench:render -- [--eds 1000] [--regions 4] [--runs 3] [--warmup-eds 50] [--phases] [--json]
 *
 * The sides:
 * - `cdk8s-plus`: the fleet written by hand as cdk8s-plus-28 Deployments (bench/baseline.ts), YAML from cdk8s'
 *   `app.synthYaml()`;
 * - `ours`: our constructs (bench/ours.ts), YAML through our synth path (constructs/synth.ts), as `npm run synth`
 *   writes it;
 * - `edctl`: `edctl render -f <folder> -o <folder>` on the same fleet written as plain YAML specs (bench/fleet.ts:
 *   `regions.yaml` and one file per chart), the whole command a user runs: read the files, parse, validate, render,
 *   write the YAML files;
 * - `trivial`: a trivial YAML-in/YAML-out script over the same files (bench/trivial-render.ts): the same YAML
 *   reader and serializer as edctl and as many documents, nothing in between (its output is smaller: the templates as
 *   written). The floor of YAML in, YAML out.
 *
 * The parent writes the YAML specs of the fleet and of the warm-up fleet into a temporary folder, then spawns one child
 * process per side and run (`--side`), the order of the sides reversed every other run, so each side's peak RSS is its
 * own and a change in background load hits every side alike. A child imports its side's modules and builds the fleet
 * description (untimed), renders the warm-up fleet once, then renders the full fleet, timed with performance.now():
 * constructs, validation and YAML serialisation for the construct sides; the command's function (`run` of
 * cli/run.ts, in process) for edctl; the script's function for trivial. Node start-up and module loading are not in
 * these figures. CPU time is user + system of the child over the timed section (garbage collection on other threads
 * included); peak RSS is `process.resourceUsage().maxRSS` at the end of the child. The figures per side are the median
 * over the runs and the highest peak RSS of any run.
 *
 * The two sides that are commands are also timed as whole processes, as a user starts them: `node lib/cli/main.js
 * render` (the package's bin) and `node lib-bench/bench/trivial-render.js`, each spawned once per run (alternating
 * which goes first) and timed by the parent from spawn to exit: Node start-up, module loading, a cold render and the
 * writes.
 *
 * `--phases` adds, after the measurement, one more render of the same fleet by each child, split into its steps: for
 * the construct sides build, `chart.toJson()` of every chart and YAML serialisation; for edctl reading and parsing,
 * render (core's renderSet), the charts' objects (what `chart.toJson()` of its cdk8s app gives, made without the app:
 * cli/render-charts.ts), YAML serialisation and writing. The trivial script has none to split. It does not change the
 * figures above.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import type { App } from 'cdk8s';
import jsyaml from 'js-yaml';
import { benchFlags, positiveInt, runBench, UsageError } from './command-line.js';
import { median, textTable } from './figures.js';
import { buildFleet, fleetSpecFiles, type Fleet } from './fleet.js';

const SIDES = ['cdk8s-plus', 'ours', 'edctl', 'trivial'] as const;
type Side = (typeof SIDES)[number];
/** The sides that are commands, timed as whole processes too. */
const COMMANDS = ['edctl', 'trivial'] as const;
type Command = (typeof COMMANDS)[number];

/** Steps of one render and the milliseconds each took, in order (see `--phases`). */
type Phases = readonly (readonly [step: string, ms: number])[];

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

interface Options {
  readonly eds: number;
  readonly regions: number;
  readonly runs: number;
  readonly warmupEds: number;
  readonly phases: boolean;
  readonly json: boolean;
  readonly side: Side | undefined;
  /** The folder holding `fleet/` and `warmup/`, the YAML specs the parent wrote (children of edctl and trivial). */
  readonly input: string | undefined;
}

function parseOptions(argv: readonly string[]): Options {
  const values = benchFlags(argv, {
    eds: { type: 'string' },
    regions: { type: 'string' },
    runs: { type: 'string' },
    'warmup-eds': { type: 'string' },
    phases: { type: 'boolean', default: false },
    json: { type: 'boolean', default: false },
    side: { type: 'string' },
    input: { type: 'string' },
  });
  const side = values.side;
  if (side !== undefined && !(SIDES as readonly string[]).includes(side))
    throw new UsageError(`--side must be one of ${SIDES.join(', ')}, not ${JSON.stringify(side)}`);
  return {
    eds: positiveInt('eds', values.eds, 1000),
    regions: positiveInt('regions', values.regions, 4),
    runs: positiveInt('runs', values.runs, 3),
    warmupEds: positiveInt('warmup-eds', values['warmup-eds'], 50),
    phases: values.phases ?? false,
    json: values.json ?? false,
    side: side as Side | undefined,
    input: values.input,
  };
}

/** Documents a side must produce: N×R Deployments for cdk8s-plus; N EDs + N×R ReplicaSets + R DeployRegions for the others. */
function expectedDocuments(side: Side, fleet: Fleet): number {
  const workloads = fleet.apps.reduce((sum, a) => sum + a.regions.length, 0);
  return side === 'cdk8s-plus' ? workloads : fleet.apps.length + workloads + fleet.regions.length;
}

/** What a render wrote, read after the timed section: its YAML texts, and a check of what it rendered. */
interface Output {
  readonly texts: readonly string[];
  readonly check: () => void;
}

/** The fleets a child renders: the warm-up one first, then the full one. */
type Which = 'warmup' | 'full';

/**
 * One side in a child: `render` is the timed section, and returns what reads its output; `phases` splits one more
 * render into its steps (the trivial script has none to split).
 */
interface SideRenderer {
  readonly render: (which: Which) => Promise<() => Output>;
  readonly phases?: (which: Which) => Phases;
}

/** Runs steps in order and takes the time of each. */
function timeSteps(steps: readonly (readonly [string, () => unknown])[]): Phases {
  return steps.map(([step, run]) => {
    const start = performance.now();
    run();
    return [step, performance.now() - start] as const;
  });
}

/**
 * The side's renderer. Each side imports what it runs only here, so a child loads the modules of its own side and no
 * other (module loading is not timed, but it shows in peak RSS).
 */
async function sideRenderer(side: Side, options: Options, fleets: Readonly<Record<Which, Fleet>>): Promise<SideRenderer> {
  if (side === 'cdk8s-plus' || side === 'ours') {
    const { appYaml, toYaml } = await import('../constructs/synth.js');
    const { Yaml } = await import('cdk8s');
    const { buildBaseline } = await import('./baseline.js');
    const { buildOurs, checkOurReplicas } = await import('./ours.js');
    const build = (which: Which): { app: App; check: () => void } => {
      const fleet = fleets[which];
      if (side === 'cdk8s-plus') return { app: buildBaseline(fleet).app, check: () => undefined };
      const { app, eds } = buildOurs(fleet);
      return { app, check: () => checkOurReplicas(fleet, eds) };
    };
    return {
      render: (which) => {
        const { app, check } = build(which);
        // YAML the way each side's users get it: ours through our synth path, cdk8s-plus through cdk8s' synthYaml().
        const yaml = side === 'ours' ? appYaml(app) : app.synthYaml();
        return Promise.resolve(() => ({ texts: [yaml], check }));
      },
      phases: (which) => {
        let app: App | undefined;
        const docs: unknown[] = [];
        return timeSteps([
          ['build', () => (app = build(which).app)],
          ['chart.toJson', () => app?.charts.forEach((chart) => docs.push(...(chart.toJson() as unknown[])))],
          ['YAML', () => (side === 'ours' ? docs.map(toYaml).join('---\n') : Yaml.stringify(...docs))],
        ]);
      },
    };
  }

  const input = options.input;
  if (input === undefined) throw new UsageError(`--side ${side} needs --input`);
  const output = mkdtempSync(join(tmpdir(), `bench-render-${side}-`));
  process.on('exit', () => rmSync(output, { recursive: true, force: true }));
  const written = (): Output => ({ texts: readdirSync(output).map((file) => readFileSync(join(output, file), 'utf8')), check: () => undefined });
  if (side === 'trivial') {
    const { trivialRender } = await import('./trivial-render.js');
    return {
      render: (which) => {
        trivialRender(join(input, which), output);
        return Promise.resolve(written);
      },
    };
  }
  const { run } = await import('../cli/run.js');
  const { loadObjects } = await import('../cli/load.js');
  const { renderSet } = await import('../core/render.js');
  const { renderedCharts } = await import('../cli/render-charts.js');
  const { toYaml } = await import('../constructs/synth.js');
  return {
    render: async (which) => {
      const code = await run(['render', '-f', join(input, which), '-o', output]);
      if (code !== 0) throw new Error(`edctl render exited with ${code}`);
      return written;
    },
    phases: (which) => {
      let objects: ReturnType<typeof loadObjects> = [];
      let charts: ReturnType<typeof renderedCharts> = [];
      let texts: string[] = [];
      let rendered: ReturnType<typeof renderSet> | undefined;
      return timeSteps([
        ['read and parse', () => (objects = loadObjects([join(input, which)], 'render'))],
        ['render', () => (rendered = renderSet(objects.map((o) => o.object)))],
        [
          'charts',
          () => {
            if (!rendered?.ok) throw new Error('the fleet does not render');
            charts = renderedCharts({ objects, rendered: rendered.value });
          },
        ],
        ['YAML', () => (texts = charts.map((chart) => chart.objects.map(toYaml).join('---\n')))],
        ['write', () => texts.forEach((text, i) => writeFileSync(join(output, `phase-${i}.k8s.yaml`), text))],
      ]);
    },
  };
}

function countKinds(texts: readonly string[]): Record<string, number> {
  const kinds: Record<string, number> = {};
  for (const text of texts) {
    for (const match of text.matchAll(/^kind: (\S+)$/gm)) {
      const kind = match[1] ?? '?';
      kinds[kind] = (kinds[kind] ?? 0) + 1;
    }
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

async function runChild(side: Side, options: Options): Promise<void> {
  if (typeof gc !== 'function') process.stderr.write('bench/render: run with --expose-gc for collections between runs\n');
  const fleets = { warmup: buildFleet({ eds: options.warmupEds, regions: options.regions }), full: buildFleet({ eds: options.eds, regions: options.regions }) };
  const renderer = await sideRenderer(side, options, fleets);
  (await renderer.render('warmup'))().check();

  const runsMs: number[] = [];
  const runsCpuMs: number[] = [];
  let output: Output = { texts: [], check: () => undefined };
  for (let k = 0; k < options.runs; k++) {
    collectGarbage();
    const cpu = process.cpuUsage();
    const start = performance.now();
    const written = await renderer.render('full');
    runsMs.push(performance.now() - start);
    runsCpuMs.push(cpuMs(cpu));
    // Sanity figures, outside the timed section.
    output = written();
    output.check();
  }
  collectGarbage();
  const maxRssKiB = process.resourceUsage().maxRSS;
  let phases: Phases | undefined;
  if (options.phases && renderer.phases) {
    collectGarbage();
    phases = renderer.phases('full');
  }
  const result: SideResult = {
    side,
    runsMs,
    runsCpuMs,
    medianMs: median(runsMs),
    maxRssKiB,
    ...(phases && { phases }),
    documents: output.texts.reduce((sum, text) => sum + (text.match(/^---$/gm)?.length ?? 0) + (text.length > 0 ? 1 : 0), 0),
    expectedDocuments: expectedDocuments(side, fleets.full),
    kinds: countKinds(output.texts),
    outputBytes: output.texts.reduce((sum, text) => sum + Buffer.byteLength(text, 'utf8'), 0),
  };
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

/** Runs one child: warm-up, then `runs` timed renders of one side. */
function spawnSide(side: Side, options: Options, runs: number, input: string): SideResult {
  const script = fileURLToPath(import.meta.url);
  const args = ['--expose-gc', script, '--side', side, '--eds', String(options.eds), '--regions', String(options.regions)];
  args.push('--runs', String(runs), '--warmup-eds', String(options.warmupEds), '--input', input);
  if (options.phases) args.push('--phases');
  const child = spawnSync(process.execPath, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 16 * 1024 * 1024 });
  if (child.error) throw child.error;
  if (child.status !== 0) throw new Error(`the ${side} child exited with ${child.status ?? child.signal ?? 'unknown'}`);
  const line = child.stdout.trim().split('\n').pop() ?? '';
  return JSON.parse(line) as SideResult;
}

/** The command line of a command side as a user runs it, from the compiled package (lib/) and benchmarks (lib-bench/). */
function commandLine(command: Command, input: string, output: string): string[] {
  if (command === 'edctl') return [fileURLToPath(new URL('../../lib/cli/main.js', import.meta.url)), 'render', '-f', input, '-o', output];
  return [fileURLToPath(new URL('./trivial-render.js', import.meta.url)), input, output];
}

/** Wall time of one whole process of a command side, from spawn to exit. */
function timeProcess(command: Command, input: string): number {
  const output = mkdtempSync(join(tmpdir(), `bench-render-${command}-process-`));
  try {
    const start = performance.now();
    const child = spawnSync(process.execPath, commandLine(command, input, output), { stdio: ['ignore', 'ignore', 'inherit'] });
    const ms = performance.now() - start;
    if (child.error) throw child.error;
    if (child.status !== 0) throw new Error(`the ${command} process exited with ${child.status ?? child.signal ?? 'unknown'}`);
    return ms;
  } finally {
    rmSync(output, { recursive: true, force: true });
  }
}

/** Writes the fleet as YAML specs into `dir` (untimed: before any child starts). */
function writeSpecs(fleet: Fleet, dir: string): void {
  mkdirSync(dir, { recursive: true });
  for (const file of fleetSpecFiles(fleet)) {
    writeFileSync(join(dir, `${file.name}.yaml`), file.objects.map((object) => jsyaml.dump(object, { lineWidth: -1 })).join('---\n'));
  }
}

/** Folds one side's children into one result: every run, the median, the highest peak RSS, the median of each step. */
function combine(side: Side, children: readonly SideResult[]): SideResult {
  const first = children[0];
  if (!first) throw new Error(`no run of ${side}`);
  const runsMs = children.flatMap((c) => c.runsMs);
  const splits = children.map((c) => c.phases).filter((p): p is Phases => p !== undefined);
  const phases = splits[0]?.map(([step], i) => [step, median(splits.map((p) => p[i]?.[1] ?? Number.NaN))] as const);
  return {
    ...first,
    runsMs,
    runsCpuMs: children.flatMap((c) => c.runsCpuMs),
    medianMs: median(runsMs),
    maxRssKiB: Math.max(...children.map((c) => c.maxRssKiB)),
    ...(phases && { phases }),
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
  const input = mkdtempSync(join(tmpdir(), 'bench-render-input-'));
  try {
    writeSpecs(buildFleet({ eds: options.eds, regions: options.regions }), join(input, 'full'));
    writeSpecs(buildFleet({ eds: options.warmupEds, regions: options.regions }), join(input, 'warmup'));
    measure(options, input);
  } finally {
    rmSync(input, { recursive: true, force: true });
  }
}

function measure(options: Options, input: string): void {
  // One child per side and run, the order reversed every other run, so drifting background load hits every side alike.
  const children: SideResult[] = [];
  const processMs: Record<Command, number[]> = { edctl: [], trivial: [] };
  for (let k = 0; k < options.runs; k++) {
    const forward = k % 2 === 0;
    for (const side of forward ? SIDES : [...SIDES].reverse()) children.push(spawnSide(side, options, 1, input));
    for (const command of forward ? COMMANDS : [...COMMANDS].reverse()) processMs[command].push(timeProcess(command, join(input, 'full')));
  }
  const results = SIDES.map((side) =>
    combine(
      side,
      children.filter((c) => c.side === side),
    ),
  );
  const of = (side: Side) => results.find((r) => r.side === side)?.medianMs ?? Number.NaN;
  const ratios = {
    oursToCdk8sPlus: of('ours') / of('cdk8s-plus'),
    edctlToCdk8sPlus: of('edctl') / of('cdk8s-plus'),
    edctlToTrivial: of('edctl') / of('trivial'),
    edctlToTrivialWholeProcess: median(processMs.edctl) / median(processMs.trivial),
  };
  const mismatched = results.filter((r) => r.documents !== r.expectedDocuments);

  if (options.json) {
    const figures = {
      eds: options.eds,
      regions: options.regions,
      runs: options.runs,
      warmupEds: options.warmupEds,
      node: process.version,
      sides: Object.fromEntries(results.map((r) => [r.side, { ...r, peakRssMB: Number(rssMB(r).toFixed(1)) }])),
      wholeProcess: Object.fromEntries(COMMANDS.map((c) => [c, { runsMs: processMs[c], medianMs: median(processMs[c]) }])),
      ratios: Object.fromEntries(Object.entries(ratios).map(([name, ratio]) => [name, Number(ratio.toFixed(4))])),
      targets: { oursToCdk8sPlusAtMost: 0.5, edctlToCdk8sPlusAtMost: 0.5, edctlToTrivialAtMost: 2, oursPeakRssMBBelow: 400 },
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
    console.log('whole process (Node start-up, module loading, read, render, write), median ms:');
    for (const line of textTable(
      ['command', 'median ms', 'runs ms'],
      COMMANDS.map((c) => [c, median(processMs[c]).toFixed(0), processMs[c].map((ms) => ms.toFixed(0)).join(' / ')]),
    ))
      console.log(line);
    console.log('');
    for (const r of results) {
      const kinds = Object.entries(r.kinds)
        .map(([kind, n]) => `${n} ${kind}`)
        .join(', ');
      console.log(`${r.side}: ${kinds} (expected ${r.expectedDocuments} documents)`);
    }
    for (const r of results) {
      if (!r.phases) continue;
      const sum = r.phases.reduce((total, [, ms]) => total + ms, 0);
      const steps = r.phases.map(([step, ms]) => `${step} ${ms.toFixed(0)} (${((100 * ms) / sum).toFixed(0)}%)`).join(' + ');
      console.log(`${r.side} phases, median ms: ${steps} = ${sum.toFixed(0)}`);
    }
    console.log('');
    console.log(`ratio ours/cdk8s-plus: ${ratios.oursToCdk8sPlus.toFixed(2)} (target <= 0.50)`);
    console.log(`ratio edctl/cdk8s-plus: ${ratios.edctlToCdk8sPlus.toFixed(2)} (target <= 0.50)`);
    console.log(
      `ratio edctl/trivial: ${ratios.edctlToTrivial.toFixed(2)} in process, ${ratios.edctlToTrivialWholeProcess.toFixed(2)} whole process (target <= 2)`,
    );
    const ours = results.find((r) => r.side === 'ours');
    if (ours) console.log(`peak RSS ours: ${rssMB(ours).toFixed(0)} MB (target < 400 MB)`);
  }
  for (const r of mismatched) {
    process.stderr.write(`bench/render: ${r.side} produced ${r.documents} documents, expected ${r.expectedDocuments}\n`);
  }
  if (mismatched.length > 0) process.exitCode = 1;
}

await runBench(import.meta.url, async (argv) => {
  const options = parseOptions(argv);
  if (options.side) await runChild(options.side, options);
  else runParent(options);
});
