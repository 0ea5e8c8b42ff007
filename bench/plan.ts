/**
 * bench/plan: what `edctl plan` costs, against the tick simulation it replaced (bench/tick-simulation.ts), in one
 * process. Prints figures; asserts nothing about time.
 *
 *   node --expose-gc --import tsx bench/plan.ts [--skip-old] [--json]      (--expose-gc: heap figures after a GC)
 *
 * Cases:
 * - rollouts of one ExtendedDeployment, two regions (all but 2 replicas in the first), by size and strategy: the
 *   default (ReCreate, scaleOutPriority, Beta, batchSize 1), RollingUpdate 25%/25% (marks every old pod at once), and
 *   compat mode (a native Deployment per region, rolling pod by pod within a group);
 * - `edctl plan` over every example: the YAML of examples/upstream-sample and examples/compat-mode, and dist/ (what the
 *   TypeScript examples render), each rendered and planned as the command does (render, plan, text), Node start-up
 *   aside.
 * Each case runs once after a warm-up (the same case at a small size); figures are wall and CPU time (user + system),
 * the heap the run left allocated, the planner's looks, the groups and how many lines the text plan takes. The tick
 * simulation runs where it finishes within its 10,000 ticks and the time limit below; elsewhere its column says why
 * not. Their ratio is tick time over event-driven time.
 */
import { performance } from 'node:perf_hooks';
import { planText } from '../cli/commands/plan-view.js';
import { renderFiles } from '../cli/render-files.js';
import { planOf } from '../core/plan.js';
import { renderSet, type RenderedExtendedDeployment } from '../core/render.js';
import { startFromRender } from '../core/simulate/from-render.js';
import { simulateRollout, SimulationTooLarge, type Simulation } from '../core/simulate/simulate.js';
import { benchFlags, runBench } from './command-line.js';
import { textTable } from './figures.js';
import { simulateRollout as tickSimulation } from './tick-simulation.js';

/** The tick simulation is skipped where one tick already takes this long (it needs thousands). */
const OLD_TICK_BUDGET_MS = 20;
/** The tick simulation gives up after this many ticks. */
const OLD_MAX_TICKS = 10_000;

interface Figures {
  readonly wallMs: number;
  readonly cpuMs: number;
  readonly heapMiB: number;
}

/** Runs `f` once, timed. */
function measure<T>(f: () => T): { result: T; figures: Figures } {
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  const heap = process.memoryUsage().heapUsed;
  const cpu = process.cpuUsage();
  const start = performance.now();
  const result = f();
  const wallMs = performance.now() - start;
  const used = process.cpuUsage(cpu);
  return { result, figures: { wallMs, cpuMs: (used.user + used.system) / 1000, heapMiB: (process.memoryUsage().heapUsed - heap) / 2 ** 20 } };
}

/** A rendered ExtendedDeployment of `replicas` over two regions, zone-b holding 2. */
function rendered(replicas: number, strategy: Record<string, unknown>, subsetType = 'ReplicaSet'): RenderedExtendedDeployment {
  const region = (name: string) => ({
    apiVersion: 'extendeddeployment.io/v1beta1',
    kind: 'DeployRegion',
    metadata: { name },
    spec: { matchLabels: { 'topology.kubernetes.io/zone': name } },
  });
  const ed = {
    apiVersion: 'extendeddeployment.io/v1beta1',
    kind: 'ExtendedDeployment',
    metadata: { name: 'bench', namespace: 'shop' },
    spec: {
      subsetType,
      replicas,
      selector: { matchLabels: { app: 'bench' } },
      template: { metadata: { labels: { app: 'bench' } }, spec: { containers: [{ name: 'app', image: 'registry.example.com/bench:1' }] } },
      strategy: { syncWaitTimeout: 86_400, ...strategy },
      regions: [{ name: 'zone-a', replicas: replicas - 2 }, { name: 'zone-b' }],
    },
  };
  const set = renderSet([region('zone-a'), region('zone-b'), ed]);
  if (!set.ok) throw new Error(JSON.stringify(set.problems));
  const [one] = set.value.extendedDeployments;
  if (!one) throw new Error('nothing rendered');
  return one;
}

/** What the tick simulation was given by the old planOf: every region from an earlier revision, all its pods Ready. */
function tickRun(ed: RenderedExtendedDeployment) {
  return tickSimulation(
    ed.parsed,
    ed.rolloutRevision,
    ed.regions.map((r) => ({ name: r.name, desired: r.replicas, targetRevision: r.revision, running: { previous: r.replicas } })),
  );
}

/** The new simulation as planOf runs it (every region from an earlier revision). */
function eventRun(ed: RenderedExtendedDeployment): Simulation {
  return simulateRollout(
    startFromRender(ed, (name) => ({
      replicas: ed.regions.find((r) => r.name === name)?.replicas,
      running: { previous: ed.regions.find((r) => r.name === name)?.replicas ?? 0 },
    })),
  );
}

const ms = (n: number) => (n >= 10_000 ? `${(n / 1000).toFixed(1)} s` : `${n.toFixed(0)} ms`);
const count = (n: number) => n.toLocaleString('en-US');

interface Row {
  readonly name: string;
  readonly figures?: Figures;
  readonly looks?: number;
  readonly groups?: number;
  readonly lines?: number;
  readonly outcome?: string;
  readonly old?: Figures;
  readonly oldNote?: string;
}

function rolloutCase(name: string, replicas: number, strategy: Record<string, unknown>, subsetType: string, skipOld: boolean): Row {
  const ed = rendered(replicas, strategy, subsetType);
  let row: Row = { name };
  try {
    const { result, figures } = measure(() => eventRun(ed));
    const plan = planOf([ed]);
    row = {
      ...row,
      figures,
      looks: result.looks,
      groups: result.totalGroups,
      lines: planText(plan).split('\n').length,
      outcome: result.stopped ? `stops ${result.stopped.phase} in group ${result.stopped.group}` : (result.finalStatus.phase ?? ''),
    };
  } catch (error) {
    if (!(error instanceof SimulationTooLarge)) throw error;
    row = { ...row, outcome: `refused: ${error.message.replace(/^the rollout of \S+ is /, '')}` };
  }
  if (skipOld) return { ...row, oldNote: 'skipped' };
  if (subsetType === 'Deployment') return { ...row, oldNote: 'never finishes (no Deployment controller)' };
  // Every group takes at least a tick.
  const groups = row.groups ?? replicas;
  if (groups >= OLD_MAX_TICKS) return { ...row, oldNote: `cannot finish: ${count(groups)} groups, at most ${count(OLD_MAX_TICKS)} ticks` };
  // A tick costs at least a planner look over every pod: where that alone exceeds the budget, thousands of them would.
  const tick = measure(() => {
    try {
      tickSimulation(
        ed.parsed,
        ed.rolloutRevision,
        ed.regions.map((r) => ({ name: r.name, desired: r.replicas, targetRevision: r.revision, running: { previous: r.replicas } })),
        1,
      );
    } catch {
      // one tick only: it never finishes
    }
  });
  if (tick.figures.wallMs > OLD_TICK_BUDGET_MS) return { ...row, oldNote: `not run: one tick takes ${ms(tick.figures.wallMs)}` };
  try {
    const old = measure(() => tickRun(ed));
    return { ...row, old: old.figures };
  } catch (error) {
    return { ...row, oldNote: error instanceof Error ? error.message : String(error) };
  }
}

/** `edctl plan -f <paths>` in-process: render, plan, print. */
function examplesCase(name: string, paths: readonly string[], skipOld: boolean): Row {
  const { result, figures } = measure(() => {
    const eds = renderFiles(paths).rendered.extendedDeployments;
    const plan = planOf(eds);
    return { eds, text: planText(plan), groups: plan.extendedDeployments.reduce((n, e) => n + e.totalGroups, 0) };
  });
  const row: Row = { name, figures, groups: result.groups, lines: result.text.split('\n').length, outcome: `${result.eds.length} ExtendedDeployments` };
  if (skipOld) return { ...row, oldNote: 'skipped' };
  const compat = result.eds.filter((e) => e.parsed.spec.subsetType === 'Deployment');
  if (compat.length > 0) return { ...row, oldNote: `fails: ${compat.map((e) => e.ref.name).join(', ')} is compat mode` };
  const old = measure(() => {
    const eds = renderFiles(paths).rendered.extendedDeployments;
    for (const ed of eds) tickRun(ed);
  });
  return { ...row, old: old.figures };
}

function main(argv: readonly string[]): void {
  const values = benchFlags(argv, { 'skip-old': { type: 'boolean', default: false }, json: { type: 'boolean', default: false } });
  const skipOld = values['skip-old'] === true;
  // Warm-up: the code paths of every case, small.
  eventRun(rendered(50, { batchSize: 1 }));
  eventRun(rendered(50, { batchSize: 1 }, 'Deployment'));
  tickRun(rendered(20, { batchSize: 1 }));

  const rows: Row[] = [
    ...[100, 1_000, 10_000, 1_000_000, 1_000_000_000].map((n) => rolloutCase(`${count(n)} replicas, batchSize 1`, n, { batchSize: 1 }, 'ReplicaSet', skipOld)),
    ...[1_000, 10_000, 50_000, 1_000_000].map((n) =>
      rolloutCase(`${count(n)} replicas, RollingUpdate 25%`, n, { batchSize: 1, updateStrategy: { type: 'RollingUpdate' } }, 'ReplicaSet', skipOld),
    ),
    ...[100, 1_000, 1_000_000].map((n) => rolloutCase(`${count(n)} replicas, compat mode`, n, { batchSize: 1 }, 'Deployment', skipOld)),
    examplesCase('edctl plan: examples/upstream-sample', ['examples/upstream-sample'], skipOld),
    examplesCase('edctl plan: examples/compat-mode', ['examples/compat-mode'], skipOld),
    examplesCase('edctl plan: dist/ (the TypeScript examples)', ['dist'], skipOld),
  ];
  const examples = rows.filter((r) => r.name.startsWith('edctl plan:'));
  const allExamples = examples.reduce((n, r) => n + (r.figures?.wallMs ?? 0), 0);

  if (values.json === true) {
    process.stdout.write(`${JSON.stringify({ rows, allExamplesMs: allExamples }, null, 2)}\n`);
    return;
  }
  const table = textTable(
    ['case', 'time', 'cpu', 'heap', 'looks', 'groups', 'plan lines', 'outcome', 'tick sim', 'ratio'],
    rows.map((r) => [
      r.name,
      r.figures ? ms(r.figures.wallMs) : '-',
      r.figures ? ms(r.figures.cpuMs) : '-',
      r.figures ? `${r.figures.heapMiB.toFixed(0)} MiB` : '-',
      r.looks === undefined ? '-' : count(r.looks),
      r.groups === undefined ? '-' : count(r.groups),
      r.lines === undefined ? '-' : count(r.lines),
      r.outcome ?? '',
      r.old ? ms(r.old.wallMs) : (r.oldNote ?? '-'),
      r.old && r.figures ? `${(r.old.wallMs / r.figures.wallMs).toFixed(1)}×` : '-',
    ]),
  );
  process.stdout.write(`${table.join('\n')}\n\nedctl plan over every example (the three rows above): ${ms(allExamples)} in all, Node start-up aside\n`);
}

await runBench(import.meta.url, main);
