/**
 * `edctl plan`'s rollout: the agent's own loop (observe → decide → act) run against a simulated cluster in which
 * the workload controllers and kubelets do what they do (controllers.ts), every pod becomes ready in time and every
 * gate is approved a moment after it is reached (APPROVAL_MS). Time jumps from one instant something happens to the
 * next: the agent's next look (nextRequeueMs: minReadySeconds, grace periods, marks settling, deadlines), a pod
 * starting, a terminating pod going, a controller reacting, an approval arriving. Runs of equal groups are advanced in
 * one jump (collapse.ts) and settled pods are kept as counts (cohorts.ts), so the cost grows with the number of
 * different groups, not with replicas.
 */
import { PROGRESSING_CONDITION } from '../api/conditions.js';
import type { ExtendedDeploymentStatus } from '../api/extended-deployment.js';
import { APPROVED_ANNOTATION } from '../labels.js';
import type { RolloutAction } from '../rollout/actions.js';
import { approvalValue, controlTarget } from '../rollout/controls.js';
import type { RolloutEvent } from '../rollout/planner.js';
import { Phases } from '../rollout/reasons.js';
import { MAX_REQUEUE_MS } from '../rollout/requeue.js';
import { performAll } from './agent-writes.js';
import type { Cluster } from './cluster.js';
import { boundaryOf, jumpFrom, type Boundary, type Jump } from './collapse.js';
import { advance, nextEvent, settle } from './controllers.js';
import {
  approvalRanges,
  extremesOf,
  groupRuns,
  listedApprovals,
  listedGroups,
  snapshot,
  spanAt,
  widest,
  type ApprovalRange,
  type Entry,
  type Extremes,
  type GroupRun,
  type SimulatedGroup,
  type Span,
} from './history.js';
import { look, SimulationTooLarge } from './look.js';
import { split } from './progression.js';
import { settingOf, startCluster, type SimulationStart } from './start.js';
import { APPROVAL_MS, SIMULATION_START } from './timing.js';

export type { ApprovalRange, Extremes, GroupRun, RegionPods, SimulatedGroup } from './history.js';
export type { RegionStart, SimulationStart } from './start.js';

/** What a simulated rollout did. */
export interface Simulation {
  /**
   * The pods per region once each group is done: every group when there are at most LISTED_GROUPS, else the first
   * and last group of each run (`runs` has them all).
   */
  readonly groups: readonly SimulatedGroup[];
  /** Every group, in runs of groups that each move every region alike. */
  readonly runs: readonly GroupRun[];
  readonly totalGroups: number;
  /** Per region: the most pods that ever existed (terminating included) and the fewest available at once. */
  readonly extremes: readonly Extremes[];
  /** The Events the agent records, except those of groups advanced in a jump (each repeats its run's first, renumbered). */
  readonly events: readonly RolloutEvent[];
  /** Gates passed by approval (the group each let start): bounded like `groups`; `approvalRanges` has them all. */
  readonly approvals: readonly number[];
  readonly approvalRanges: readonly ApprovalRange[];
  /** New-revision pods removed by a controller or the agent during the rollout (must stay 0). */
  readonly newPodsRemoved: number;
  /** Pods the workload controllers created, and pods swapped in place, over the whole rollout. */
  readonly podsCreated: number;
  readonly podsSwapped: number;
  readonly finalStatus: ExtendedDeploymentStatus;
  /** The planner's looks the simulation took (what it cost). */
  readonly looks: number;
  /**
   * Simulated time from the change until the rollout is Healthy, or stops: an estimate at the simulation's pace (pods
   * ready POD_START_MS after they start, gates approved APPROVAL_MS after they are reached); a fleet's plan adds the
   * waves' soaks to it.
   */
  readonly durationMs: number;
  /** Where the rollout stops short of Healthy: held by strategy.pause, or Degraded past a group's progress deadline. */
  readonly stopped?: { readonly group: number; readonly phase: typeof Phases.Paused | typeof Phases.Degraded; readonly message: string };
  /** With the `trace` option: every look that was simulated (not those of groups advanced in a jump). */
  readonly trace?: readonly Look[];
}

/** One look of the agent: when, what it decided and wrote. */
export interface Look {
  readonly now: number;
  readonly status: ExtendedDeploymentStatus;
  readonly actions: readonly RolloutAction[];
  readonly events: readonly RolloutEvent[];
}

/** How a simulation runs. The defaults are what `edctl plan` uses; the others exist to test that they agree. */
export interface SimulationOptions {
  /** Keep settled pods as counts (cohorts.ts). Default true; StatefulSet regions never do (settingOf). */
  readonly cohorts?: boolean;
  /**
   * Advance runs of equal groups in one jump (collapse.ts) when it skips at least this many groups; 0: never. Default
   * 8; StatefulSet regions never do.
   */
  readonly minJump?: number;
  /** Fail rather than take more looks than this. */
  readonly maxLooks?: number;
  /** Fail rather than hold more pods one by one than this. */
  readonly maxListedPods?: number;
  /** Record every look (Simulation.trace), to compare simulations. */
  readonly trace?: boolean;
}

/** Groups (and approvals) listed one by one in a Simulation before only the ends of each run are. */
const LISTED_GROUPS = 1_000;
const DEFAULT_MIN_JUMP = 8;
const DEFAULT_MAX_LOOKS = 20_000;
const DEFAULT_MAX_LISTED_PODS = 100_000;
/** Looks at one instant: the agent looks again whenever someone else wrote, which must come to rest. */
const MAX_LOOKS_AT_ONE_INSTANT = 100;

export { SimulationTooLarge } from './look.js';

/** Simulates the rollout from `start` until the rollout is Healthy with nothing left to do. */
export function simulateRollout(start: SimulationStart, options: SimulationOptions = {}): Simulation {
  const setting = settingOf(start, options.cohorts ?? true);
  // StatefulSet groups are never alike (collapse.ts): each replaces pods of other ordinals, so no two move the cluster
  // by one step, and looking for runs would only cost.
  const minJump = setting.subsetType === 'StatefulSet' ? 0 : (options.minJump ?? DEFAULT_MIN_JUMP);
  const maxLooks = options.maxLooks ?? DEFAULT_MAX_LOOKS;
  const maxListed = options.maxListedPods ?? DEFAULT_MAX_LISTED_PODS;
  const name = `${setting.namespace}/${start.extendedDeployment.metadata?.name ?? ''}`;

  let cluster = startCluster(start, setting);
  const entries: Entry[] = [];
  let span = emptySpan();
  const boundaries: Boundary[] = [];
  const spans: Span[] = [];
  let check: Jump['expect'] | undefined;
  // After a jump, the span that the next group start closes is the run's last, already recorded.
  let jumped = false;
  let lastGroup = 0;
  let atInstant = 0;
  const trace: Look[] | undefined = options.trace ? [] : undefined;
  /** The approval under way: of which group, and when it reaches the agent. */
  let approval: { readonly group: number; readonly at: number } | undefined;

  for (let looks = 1; ; looks++) {
    if (looks > maxLooks) {
      throw new SimulationTooLarge(
        `the rollout of ${name} is too long to plan: more than ${maxLooks} looks of the agent (a group whose pods change one at a time, as a compat-mode or StatefulSet region's do, or groups that all differ)`,
      );
    }
    const seen = look(cluster, setting, maxListed, name);
    cluster = seen.cluster;
    const { input, decision } = seen;
    const plan = decision.plan;
    const group = plan.status.currentGroup ?? 0;
    trace?.push({ now: cluster.now, status: plan.status, actions: plan.actions, events: plan.events });

    if (group > lastGroup) {
      // A group starts: the span of the previous one ends here, with the pods it left (as this look sees them).
      if (!jumped) {
        const closed: Span = { ...span, ...(lastGroup > 0 && { ended: snapshot(lastGroup, input) }) };
        entries.push({ span: closed });
        spans.push(closed);
      }
      jumped = false;
      span = emptySpan();
      const boundary = boundaryOf(group, cluster, input);
      if (check?.group === group) verify(check, boundary, spans[spans.length - 1]);
      check = undefined;
      boundaries.push(boundary);
      boundaries.splice(0, boundaries.length - 3);
      spans.splice(0, spans.length - 2);
      const jump = minJump > 0 ? jumpAt(boundaries, spans, minJump) : undefined;
      if (jump) {
        entries.push({ run: jump.run });
        cluster = jump.cluster;
        check = jump.expect;
        jumped = true;
        lastGroup = group + jump.run.count - 1;
        continue;
      }
    }
    lastGroup = group;
    span = { ...span, events: [...span.events, ...plan.events], extremes: widest(span.extremes, extremesOf(input)) };

    if (plan.status.phase === Phases.Healthy && plan.actions.length === 0) {
      const final = (plan.status.totalGroups ?? 0) > 0 ? snapshot(plan.status.totalGroups ?? 0, input) : undefined;
      entries.push({ span });
      return { ...result(entries, final, plan.status, cluster, looks), ...(trace && { trace }) };
    }
    // A rollout held by its spec (strategy.pause) or past a group's progress deadline stays where it is until someone
    // acts: that is where the plan ends.
    if ((plan.status.phase === Phases.Paused || plan.status.phase === Phases.Degraded) && plan.actions.length === 0) {
      entries.push({ span });
      const message = plan.status.conditions?.find((c) => c.type === PROGRESSING_CONDITION)?.message ?? '';
      const stopped = { group, phase: plan.status.phase, message };
      return { ...result(entries, undefined, plan.status, cluster, looks), stopped, ...(trace && { trace }) };
    }

    const before = cluster.writes;
    cluster = { ...cluster, ed: { ...cluster.ed, status: plan.status } };
    // Every gate is approved APPROVAL_MS after it is reached, as `edctl approve` would (a write the agent sees).
    if (plan.status.phase === Phases.WaitingForConfirmation) approval ??= { group: group + 1, at: cluster.now + APPROVAL_MS };
    if (approval && approval.at <= cluster.now) {
      const annotations = {
        ...cluster.ed.metadata?.annotations,
        [APPROVED_ANNOTATION]: approvalValue(controlTarget(plan.status) ?? input.rolloutRevision, approval.group),
      };
      cluster = { ...cluster, ed: { ...cluster.ed, metadata: { ...cluster.ed.metadata, annotations } }, writes: cluster.writes + 1 };
      span = { ...span, approvals: [...span.approvals, approval.group] };
      approval = undefined;
    }
    cluster = settle(performAll(cluster, plan.actions, setting), setting);
    const next =
      cluster.writes !== before
        ? cluster.now
        : Math.min(
            cluster.now + (decision.lookAgainInMs ?? MAX_REQUEUE_MS),
            nextEvent(cluster) ?? Number.POSITIVE_INFINITY,
            approval?.at ?? Number.POSITIVE_INFINITY,
          );
    atInstant = next === cluster.now ? atInstant + 1 : 0;
    if (atInstant > MAX_LOOKS_AT_ONE_INSTANT)
      throw new Error(`the simulation of ${name} does not come to rest at ${new Date(next).toISOString()}: the agent and the controllers keep writing`);
    cluster = advance(cluster, next, setting);
  }
}

const emptySpan = (): Span => ({ events: [], approvals: [], extremes: [] });

/** The jump from the last three group starts, when the spans of the two groups between them are recorded. */
function jumpAt(boundaries: readonly Boundary[], spans: readonly Span[], minJump: number): Jump | undefined {
  const [a, b, c] = boundaries.slice(-3);
  const [sa, sb] = spans.slice(-2);
  if (!a || !b || !c || !sa || !sb || sa.ended?.group !== a.group || sb.ended?.group !== b.group) return undefined;
  return jumpFrom([a, b, c], [sa, sb], minJump);
}

/** The jump's prediction for the group after it, against what the simulation found. */
function verify(expect: Jump['expect'], boundary: Boundary, span: Span | undefined): void {
  const state = boundary.state();
  const spanFound = split(span);
  const spanExpected = split(expect.span);
  const same = (a: typeof state, b: typeof state) => a.shape === b.shape && a.numbers.every((n, i) => n === b.numbers[i]);
  if (!same(state, expect.state) || !same(spanFound, spanExpected)) {
    throw new Error(
      `a collapsed run of groups did not continue as predicted at group ${expect.group} (the groups it skipped may be wrong): this is a bug in the simulation`,
    );
  }
}

function result(entries: readonly Entry[], final: SimulatedGroup | undefined, status: ExtendedDeploymentStatus, cluster: Cluster, looks: number): Simulation {
  const runs = groupRuns(entries, final);
  const ranges = approvalRanges(entries);
  const extremes = entries.reduce<Extremes[]>(
    (acc, e) => ('span' in e ? widest(acc, e.span.extremes) : widest(widest(acc, e.run.first.extremes), spanAt(e.run, e.run.count - 1).extremes)),
    [],
  );
  return {
    groups: listedGroups(runs, LISTED_GROUPS),
    runs,
    totalGroups: status.totalGroups ?? 0,
    extremes,
    events: entries.flatMap((e) => ('span' in e ? e.span.events : [])),
    approvals: listedApprovals(ranges, LISTED_GROUPS),
    approvalRanges: ranges,
    newPodsRemoved: cluster.tally.newPodsRemoved,
    podsCreated: cluster.tally.podsCreated,
    podsSwapped: cluster.tally.podsSwapped,
    finalStatus: status,
    looks,
    durationMs: cluster.now - SIMULATION_START,
  };
}
