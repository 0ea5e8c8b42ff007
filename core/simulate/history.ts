/**
 * What a simulated rollout did, as it is recorded look by look, and the result built from it. The record is kept in
 * spans, one per group (from the look that starts it to the look that starts the next); runs of spans that
 * progress alike (collapse.ts) are kept as one entry, so a rollout of a million groups is a handful of entries.
 */
import type { RolloutEvent, RolloutInput } from '../rollout/planner.js';
import { countPods } from '../rollout/snapshot.js';
import { continued } from './progression.js';

/** New-revision and old-revision pods of one region once a group is done (not terminating; available or not). */
export interface RegionPods {
  readonly name: string;
  readonly updated: number;
  readonly old: number;
}

/** The pods per region once a group is done, in declared order. */
export interface SimulatedGroup {
  readonly group: number;
  readonly regions: readonly RegionPods[];
}

/** Per region: the most pods that ever existed (terminating included) and the fewest available at once. */
export interface Extremes {
  readonly name: string;
  readonly maxPods: number;
  readonly minAvailable: number;
}

/** What happened from the look that started a group until (not including) the look that starts the next. */
export interface Span {
  /** The span's group once done: the pods the look that starts the next group sees. */
  readonly ended?: SimulatedGroup;
  readonly events: readonly RolloutEvent[];
  /** Approvals given in the span: the group each let start. */
  readonly approvals: readonly number[];
  readonly extremes: readonly Extremes[];
}

/** `count` spans, the first `first`, each the one before moved by `step` (progression.ts). */
export interface SpanRun {
  readonly first: Span;
  readonly step: readonly number[];
  readonly count: number;
}

/** One entry of the record. */
export type Entry = { readonly span: Span } | { readonly run: SpanRun };

/**
 * Groups in a row that each move every region by the same number of pods: the pods after group `from`, and what
 * each further group adds, through group `to`. A group that is like neither neighbour is a run of one.
 */
export interface GroupRun {
  readonly from: number;
  readonly to: number;
  readonly regions: readonly (RegionPods & { readonly stepUpdated: number; readonly stepOld: number })[];
}

/** Approvals for a row of groups: each of groups `from`..`to` started after one. */
export interface ApprovalRange {
  readonly from: number;
  readonly to: number;
}

/** The span `k` spans into a run. */
export function spanAt(run: SpanRun, k: number): Span {
  const span = continued(run.first, run.step, k);
  if (!span) throw new Error('a collapsed run left its range');
  return span;
}

/** The extremes of both, per region. */
export function widest(a: readonly Extremes[], b: readonly Extremes[]): Extremes[] {
  if (a.length === 0) return [...b];
  return a.map((x) => {
    const y = b.find((e) => e.name === x.name);
    return y ? { name: x.name, maxPods: Math.max(x.maxPods, y.maxPods), minAvailable: Math.min(x.minAvailable, y.minAvailable) } : x;
  });
}

/** The runs of groups the record shows, in order, with the rollout's last group (`last`, seen at its end) after them. */
export function groupRuns(entries: readonly Entry[], last: SimulatedGroup | undefined): GroupRun[] {
  const pieces: GroupRun[] = [];
  const single = (g: SimulatedGroup): GroupRun => ({ from: g.group, to: g.group, regions: g.regions.map((r) => ({ ...r, stepUpdated: 0, stepOld: 0 })) });
  for (const entry of entries) {
    if ('span' in entry) {
      if (entry.span.ended) pieces.push(single(entry.span.ended));
      continue;
    }
    const first = entry.run.first.ended;
    if (!first) continue;
    const second = spanAt(entry.run, 1).ended ?? first;
    const to = first.group + entry.run.count - 1;
    pieces.push({
      from: first.group,
      to,
      regions: first.regions.map((r, i) => ({
        ...r,
        stepUpdated: (second.regions[i]?.updated ?? 0) - r.updated,
        stepOld: (second.regions[i]?.old ?? 0) - r.old,
      })),
    });
  }
  if (last) pieces.push(single(last));
  return merged(pieces);
}

/** The pods after the last group of a run. */
function lastOf(run: GroupRun): RegionPods[] {
  const n = run.to - run.from;
  return run.regions.map((r) => ({ name: r.name, updated: r.updated + n * r.stepUpdated, old: r.old + n * r.stepOld }));
}

/** Adjacent pieces merged where the later continues the earlier's progression. */
function merged(pieces: readonly GroupRun[]): GroupRun[] {
  const out: GroupRun[] = [];
  for (const piece of pieces) {
    const prev = out[out.length - 1];
    if (!prev || piece.from !== prev.to + 1) {
      out.push(piece);
      continue;
    }
    const end = lastOf(prev);
    const steps = piece.regions.map((r, i) => ({ updated: r.updated - (end[i]?.updated ?? 0), old: r.old - (end[i]?.old ?? 0) }));
    const prevSingle = prev.from === prev.to;
    const fitsPrev = prevSingle || steps.every((s, i) => s.updated === prev.regions[i]?.stepUpdated && s.old === prev.regions[i]?.stepOld);
    const fitsPiece = piece.from === piece.to || steps.every((s, i) => s.updated === piece.regions[i]?.stepUpdated && s.old === piece.regions[i]?.stepOld);
    if (!fitsPrev || !fitsPiece) {
      out.push(piece);
      continue;
    }
    out[out.length - 1] = {
      from: prev.from,
      to: piece.to,
      regions: prev.regions.map((r, i) => ({ ...r, stepUpdated: steps[i]?.updated ?? 0, stepOld: steps[i]?.old ?? 0 })),
    };
  }
  return out;
}

/** Every group of the runs, one by one. */
function expandRuns(runs: readonly GroupRun[]): SimulatedGroup[] {
  return runs.flatMap((run) =>
    Array.from({ length: run.to - run.from + 1 }, (_, k) => ({
      group: run.from + k,
      regions: run.regions.map((r) => ({ name: r.name, updated: r.updated + k * r.stepUpdated, old: r.old + k * r.stepOld })),
    })),
  );
}

/** The groups of the runs, bounded: all of them up to `limit`, else each run's first and last group. */
export function listedGroups(runs: readonly GroupRun[], limit: number): SimulatedGroup[] {
  const total = runs.reduce((n, r) => n + r.to - r.from + 1, 0);
  if (total <= limit) return expandRuns(runs);
  return runs.flatMap((run) => {
    const first = { group: run.from, regions: run.regions.map(({ name, updated, old }) => ({ name, updated, old })) };
    return run.to === run.from ? [first] : [first, { group: run.to, regions: lastOf(run) }];
  });
}

/** Approvals of the record as ranges of consecutive groups. */
export function approvalRanges(entries: readonly Entry[]): ApprovalRange[] {
  const groups: ApprovalRange[] = [];
  for (const entry of entries) {
    if ('span' in entry) {
      for (const g of entry.span.approvals) groups.push({ from: g, to: g });
      continue;
    }
    const first = entry.run.first.approvals;
    if (first.length === 0) continue;
    const lastApprovals = spanAt(entry.run, entry.run.count - 1).approvals;
    for (let i = 0; i < first.length; i++) groups.push({ from: first[i] ?? 0, to: lastApprovals[i] ?? 0 });
  }
  const out: ApprovalRange[] = [];
  for (const range of groups.sort((a, b) => a.from - b.from)) {
    const prev = out[out.length - 1];
    if (prev && range.from <= prev.to + 1) out[out.length - 1] = { from: prev.from, to: Math.max(prev.to, range.to) };
    else out.push(range);
  }
  return out;
}

/** The approvals one by one, bounded like the groups: all up to `limit`, else each range's ends. */
export function listedApprovals(ranges: readonly ApprovalRange[], limit: number): number[] {
  const total = ranges.reduce((n, r) => n + r.to - r.from + 1, 0);
  if (total <= limit) return ranges.flatMap((r) => Array.from({ length: r.to - r.from + 1 }, (_, k) => r.from + k));
  return ranges.flatMap((r) => (r.from === r.to ? [r.from] : [r.from, r.to]));
}

/**
 * The pods per region the look sees once a group is done, new and old, not terminating (what the e2e suites count). A
 * group's own new pods are available by then (its barrier); a region whose count rose during the gate has more new
 * pods, being created: counting only available ones made a group's pods depend on how soon the simulated approval came
 * (once old pods start marked, the gate came 2 s sooner and those pods were not available yet).
 */
export function snapshot(group: number, input: RolloutInput): SimulatedGroup {
  const minReady = input.ed.spec.strategy.minReadySeconds;
  return {
    group,
    regions: input.regions.map((r) => {
      const c = countPods(r, minReady, input.now);
      return { name: r.name, updated: c.updated, old: c.old };
    }),
  };
}

/** Per region, the pods (terminating ones included) and the available pods the look sees. */
export function extremesOf(input: RolloutInput): Extremes[] {
  const minReady = input.ed.spec.strategy.minReadySeconds;
  return input.regions.map((r) => {
    const c = countPods(r, minReady, input.now);
    return { name: r.name, maxPods: c.current + c.terminating, minAvailable: c.available };
  });
}
