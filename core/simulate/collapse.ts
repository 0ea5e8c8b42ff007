/**
 * Runs of equal groups, advanced in one jump. A rollout of a million pods in batches of one takes a million groups,
 * and all but a few of them are alike: the same writes, the same waits, the same pods coming and going, only one
 * more pod at the new revision each time. Simulating each costs time in proportion to the groups; this makes the cost
 * grow with the number of *different* groups.
 *
 * Exact, not estimated:
 * - The simulation is deterministic and its whole state is the cluster (simulate.ts holds nothing else that decides):
 *   the objects, the models' pending instants, the counters. Let B(g) be the cluster at the look that starts group g.
 * - Taken apart into its shape and numbers (progression.ts: counts, serials in names, resourceVersions, generations,
 *   times), B(g-2), B(g-1), B(g) having one shape and the same step from one to the next means group g-2 and group
 *   g-1 changed the cluster identically, up to that step; the record of each (events, approvals, extremes, the pods
 *   after it) must progress alike too.
 * - What the planner and the models decide on does not change along the step while no region starts, takes its first
 *   group or reaches its count (a *regime*, from the schedule of groups.ts): every comparison they make is between
 *   values that all move by the step (new pods against the group's target, a pod's times against now, generations
 *   against observed generations, serials against serials: names have a fixed width, so they sort as their serials),
 *   or between values that do not move. The per-region totals that are compared with fixed budgets (pods, Ready,
 *   available, terminating; spec.replicas) must not move at all, which is checked too. So group g goes like g-1,
 *   and so on, through the last group of the regime: B(g+m) is B(g) continued m steps, exactly. The jump also stops
 *   before a cohort (cohorts.ts) would run out: there how the cluster is kept changes, not what it is, but the step no
 *   longer describes it.
 * - As a check of that reasoning, the group after the jump is simulated, and it must come out exactly as the
 *   progression predicts (else the simulation fails loudly rather than show a wrong plan).
 */
import { regionOrderOf, scheduleGroups, targetAtGroup, type GroupSchedule } from '../rollout/groups.js';
import type { RolloutInput } from '../rollout/planner.js';
import { countPods } from '../rollout/snapshot.js';
import type { Cluster } from './cluster.js';
import type { Span, SpanRun } from './history.js';
import { continued, sameStep, split, stepBetween, type Split } from './progression.js';

/** The cluster at a look that starts a group, with what decides whether groups are alike. */
export interface Boundary {
  readonly group: number;
  readonly cluster: Cluster;
  /** The cluster taken apart (progression.ts), found when first asked for. */
  readonly state: () => Split;
  /** Per region: the totals that the planner compares with fixed budgets, which must not move along a run. */
  readonly totals: string;
  /** The regime of every group, from this look's schedule. */
  readonly regime: (group: number) => string;
}

/** A jump: the cluster m groups on, the spans skipped, and what the group after them must come out as. */
export interface Jump {
  readonly cluster: Cluster;
  readonly run: SpanRun;
  readonly expect: { readonly group: number; readonly state: Split; readonly span: Span };
}

/** The boundary of the look at `cluster` (consolidated, as observed) that starts `group`. */
export function boundaryOf(group: number, cluster: Cluster, input: RolloutInput): Boundary {
  const minReady = input.ed.spec.strategy.minReadySeconds;
  const totals = input.regions.map((r) => {
    const c = countPods(r, minReady, input.now);
    return [r.name, c.current, c.ready, c.available, c.terminating, r.workload?.replicas];
  });
  let state: Split | undefined;
  return { group, cluster, state: () => (state ??= split(cluster)), totals: JSON.stringify(totals), regime: regimes(input) };
}

/**
 * Per group, what each region does in it: nothing yet, its first group, one of its middle groups, its last, done.
 * Groups of one regime differ only by the step; a regime is what a jump may not leave.
 */
function regimes(input: RolloutInput): (group: number) => string {
  const strategy = input.ed.spec.strategy;
  const rolloutRegions = input.status?.rolloutRegions ?? [];
  const schedule: GroupSchedule = scheduleGroups(
    strategy,
    regionOrderOf(input.ed.spec),
    input.regions.map((r) => ({ name: r.name, replicas: r.desired, changes: rolloutRegions.includes(r.name) })),
  );
  return (group) =>
    schedule.regions
      .map((r) => {
        if (r.groups === 0) return 'none';
        if (group < r.firstGroup) return 'before';
        if (group >= r.firstGroup + r.groups) return 'after';
        if (group === r.firstGroup) return 'first';
        if (group === r.firstGroup + r.groups - 1) return 'last';
        // Targets moved by the same batch since the previous group (groups.ts: never more than the region's count).
        return targetAtGroup(strategy, r, group) - targetAtGroup(strategy, r, group - 1) ===
          targetAtGroup(strategy, r, group + 1) - targetAtGroup(strategy, r, group)
          ? 'middle'
          : 'edge';
      })
      .join(',');
}

/**
 * The jump from the last of three boundaries in a row (groups g-2, g-1, g) with the spans between them, or undefined
 * when the groups are not alike or the regime leaves no `minJump` groups to skip.
 */
export function jumpFrom(boundaries: readonly [Boundary, Boundary, Boundary], spans: readonly [Span, Span], minJump: number): Jump | undefined {
  const [a, b, c] = boundaries;
  // Cheap checks first: taking a cluster apart costs in proportion to the pods it lists.
  const listed = (x: Boundary) => `${x.cluster.pods.length}/${x.cluster.cohorts.length}/${x.totals}`;
  if (b.group !== a.group + 1 || c.group !== b.group + 1 || listed(a) !== listed(b) || listed(b) !== listed(c)) return undefined;
  const step = stepBetween(a.state(), b.state());
  const again = stepBetween(b.state(), c.state());
  if (!step || !again || !sameStep(step, again)) return undefined;
  const spanA = split(spans[0]);
  const spanB = split(spans[1]);
  const spanStep = stepBetween(spanA, spanB);
  if (!spanStep) return undefined;
  // Groups a.group-1 .. c.group+m must share one regime: the jump covers groups c.group .. c.group+m-1, and the
  // group after it (c.group+m), simulated, checks it.
  const regime = c.regime(a.group - 1);
  if ([a.group, b.group, c.group].some((g) => c.regime(g) !== regime)) return undefined;
  // The check group (m + 1 steps on) must still be one the progression holds for: in its regime, and with every
  // cohort still there (a cohort running out changes how the cluster is kept, not what it is, but the step no longer
  // describes it).
  const m = Math.min(lastOfRegime(c, regime) - c.group, lastValid(c.cluster, step, lastOfRegime(c, regime) - c.group + 1) - 1);
  if (m < minJump) return undefined;
  const cluster = continued(c.cluster, step, m);
  const expected = continued(c.cluster, step, m + 1);
  const first = continued(spans[1], spanStep, 1);
  const span = continued(spans[1], spanStep, m + 1);
  if (!cluster || !expected || !first || !span) return undefined;
  return { cluster, run: { first, step: spanStep, count: m }, expect: { group: c.group + m + 1, state: split(expected), span } };
}

/** Whether a continued cluster is one the simulation could hold: every cohort keeps members, in ordered ranges. */
function holdable(cluster: Cluster | undefined): boolean {
  return (
    cluster !== undefined &&
    cluster.cohorts.every((c) => c.serials.length > 0 && c.serials.every(([from, to], i) => from < to && (i === 0 || from > (c.serials[i - 1]?.[1] ?? 0))))
  );
}

/** The largest k ≤ max for which the cluster continued k steps is holdable (those k form a range from 0: the bounds are linear). */
function lastValid(cluster: Cluster, step: readonly number[], max: number): number {
  if (holdable(continued(cluster, step, max))) return max;
  let lo = 0;
  let hi = max;
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (holdable(continued(cluster, step, mid))) lo = mid;
    else hi = mid;
  }
  return lo;
}

/**
 * The last group of the regime `c` is in. A regime is one stretch of groups (each region's regime only moves forward),
 * found by doubling then halving, so a million groups cost a few dozen looks at the schedule.
 */
function lastOfRegime(c: Boundary, regime: string): number {
  let lo = c.group;
  let step = 1;
  while (c.regime(lo + step) === regime) {
    lo += step;
    step *= 2;
  }
  let hi = lo + step;
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (c.regime(mid) === regime) lo = mid;
    else hi = mid;
  }
  return lo;
}
