import type { ExtendedDeployment, ExtendedDeploymentStatus } from '../api/extended-deployment.js';
import type { RolloutAction } from './actions.js';
export type { RolloutControls } from './gates.js';
import { regionBudgets } from './budgets.js';
import { batchPods, regionOrderOf, scheduleGroups, targetAtGroup, type GroupSchedule } from './groups.js';
import { planDeploymentRollout } from './deployment-mode.js';
import { decideGate, type RolloutControls } from './gates.js';
import { gateActions } from './readiness-gate.js';
import { groupProgress, stepRegion, type RegionStep } from './region-step.js';
import { settleSwaps, stepInPlace } from './in-place-step.js';
import { inPlaceEnabled } from '../validate.js';
import { countPods, type RegionState } from './snapshot.js';
import { buildStatus, type Phase } from './status.js';
import { moveInputOf, withMoves } from '../moves/apply-moves.js';
import { planMoves, type MoveChange } from '../moves/move-plan.js';

/** Everything the planner reads: one ExtendedDeployment and what the cluster shows of it. */
export interface RolloutInput {
  /** The validated ExtendedDeployment (defaults applied). */
  readonly ed: ExtendedDeployment;
  /** metadata.generation, for observedGeneration. */
  readonly generation: number;
  /** The rollout revision of the render the regions come from. */
  readonly rolloutRevision: string;
  /** Regions in declared order, with their targets and observed workloads and pods. */
  readonly regions: readonly RegionState[];
  /** The status the agent last wrote. */
  readonly status: ExtendedDeploymentStatus | undefined;
  readonly controls: RolloutControls;
  /** Current time (ms since epoch). */
  readonly now: number;
}

/** A Kubernetes Event to record on the ExtendedDeployment. */
export interface RolloutEvent {
  readonly type: 'Normal' | 'Warning';
  readonly reason: string;
  readonly message: string;
}

/** What the agent should do now. */
export interface RolloutPlan {
  /**
   * Writes, in order within each region (regions are independent: the agent acts on them concurrently). The status
   * goes first when it records a group start, so intent survives a crash.
   */
  readonly actions: readonly RolloutAction[];
  readonly status: ExtendedDeploymentStatus;
  readonly events: readonly RolloutEvent[];
  /** Replicas moved or returned by this plan, for metrics. */
  readonly moveChanges?: readonly MoveChange[];
  /** Instants (ms) at which the plan may change although no object does (move timeouts and windows). */
  readonly wakeAt?: readonly number[];
}

/**
 * Decides the next step of one ExtendedDeployment: first its moves (core/moves: which regions lend replicas to which,
 * and when they come back), then its rollout toward the resulting replica counts. Pure: the same input gives the same
 * plan, and every decision is re-derived from the input, so a new leader continues from what the cluster shows.
 *
 * A rollout starts when a region has pods at another revision than the rendered one. It proceeds in global groups
 * (see groups.ts); a group starts only when every region's previous group is available and the gate allows it
 * (confirmation, pause, abort); a group that does not finish within the progress deadline makes the rollout Degraded
 * and stops it. Regions that the rollout does not change only converge to their replica count. Native Deployments
 * (compat mode) are planned by deployment-mode.ts.
 */
export function planRollout(input: RolloutInput): RolloutPlan {
  const moves = planMoves(moveInputOf(input));
  const moved: RolloutInput = { ...input, regions: input.regions.map((r) => ({ ...r, desired: moves.desired.get(r.name) ?? r.desired })) };
  const plan = input.ed.spec.subsetType === 'Deployment' ? planDeploymentRollout(moved) : planReplicaSetRollout(moved);
  return withMoves(plan, moves, moved);
}

/** planRollout for regional ReplicaSets, once moves have set each region's replicas. */
function planReplicaSetRollout(input: RolloutInput): RolloutPlan {
  const { ed, regions, now, controls } = input;
  const strategy = ed.spec.strategy;
  const minReady = strategy.minReadySeconds;
  const prev = input.status ?? {};
  const unsynced = regions.find((r) => !r.workload || r.workload.templateRevision !== r.targetRevision);
  const counts = new Map(regions.map((r) => [r.name, countPods(r, minReady, now)]));

  const sameRollout = prev.revision === input.rolloutRevision && prev.rolloutRegions !== undefined;
  const rolloutRegions = sameRollout ? (prev.rolloutRegions ?? []) : regions.filter((r) => (counts.get(r.name)?.old ?? 0) > 0).map((r) => r.name);
  const schedule = scheduleGroups(
    strategy,
    regionOrderOf(ed.spec),
    regions.map((r) => ({ name: r.name, replicas: r.desired, changes: rolloutRegions.includes(r.name) })),
  );
  const base = { input, schedule, rolloutRegions, counts };

  if (unsynced) {
    const message = !unsynced.workload
      ? `waiting for workload of region ${unsynced.name} to be created by the sync`
      : `waiting for the sync: workload ${unsynced.workload.name} is not at revision ${unsynced.targetRevision}`;
    // The status already records the new rollout (revision, regions); a rollout that has not started has no group
    // yet. Carrying the previous rollout's group over would make the new one start in that group once synced.
    const group = sameRollout ? (prev.currentGroup ?? 0) : 0;
    const groupStart = sameRollout ? prev.lastGroupStartTime : undefined;
    return finish(base, { phase: 'Progressing', group, groupStart, reason: 'WaitingForSync', message }, []);
  }

  // Once this rollout's status records a group, that group holds: a new group is recorded before anything acts on it
  // (the agent writes such a status first), so the agent never puts pods ahead of the recorded group. Others do: the
  // ReplicaSet controller replaces an evicted or deleted old pod at the template's revision. Read from such pods, the
  // group would jump past its confirmation gate and start before the previous one was available. The pods decide only
  // where no group is recorded: a new rollout (a Git revert finds pods at its revision), or a lost status.
  const recorded = sameRollout && (prev.currentGroup ?? 0) >= 1 ? prev.currentGroup : undefined;
  let group = schedule.totalGroups === 0 ? 0 : (recorded ?? Math.max(inferGroup(input, schedule), 1));
  let groupStart = sameRollout && prev.lastGroupStartTime !== undefined ? Date.parse(prev.lastGroupStartTime) : now;
  if (group !== (prev.currentGroup ?? 0) && sameRollout && group > (prev.currentGroup ?? 0)) groupStart = now;
  let steps = stepAll(input, schedule, group);
  const groupDone = [...steps.values()].every((s) => s.done);
  const groupAvailable = [...steps.values()].every((s) => s.available);
  const idleActions = (s: Map<string, RegionStep>) => regions.filter((r) => !rolloutRegions.includes(r.name)).flatMap((r) => s.get(r.name)?.actions ?? []);

  const gate = decideGate({ strategy, rolloutRevision: input.rolloutRevision, controls, now, group, totalGroups: schedule.totalGroups, groupAvailable, groupDone, groupStart });
  if (gate.kind === 'complete') {
    const allDone = [...steps.values()].every((s) => s.done);
    const actions = [...steps.values()].flatMap((s) => s.actions);
    return finish(
      base,
      allDone
        ? { phase: 'Healthy', group: schedule.totalGroups, groupStart: undefined, reason: 'RolloutComplete', message: 'every region runs its rendered revision' }
        : { phase: 'Progressing', group, groupStart: undefined, reason: 'Scaling', message: 'regions are converging to their replica counts' },
      actions,
    );
  }
  if (gate.kind === 'hold') {
    // Holding stops new work, but never keeps healthy pods out of endpoints: swaps under way are settled.
    const settled = inPlaceEnabled(ed) ? regions.filter((r) => rolloutRegions.includes(r.name)).flatMap((r) => settleSwaps(r, now)) : [];
    return finish(base, { phase: gate.phase, group, groupStart: iso(groupStart), reason: gate.reason, message: gate.message }, [...idleActions(steps), ...settled]);
  }
  if (gate.kind === 'advance') {
    group += 1;
    groupStart = now;
    steps = stepAll(input, schedule, group);
  }
  const blocked = [...steps.values()].find((s) => s.blocked)?.blocked;
  return finish(
    base,
    { phase: 'Progressing', group, groupStart: iso(groupStart), reason: 'GroupProgressing', message: blocked ?? `group ${group} of ${schedule.totalGroups} in progress` },
    [...steps.values()].flatMap((s) => s.actions),
  );
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

/**
 * Steps every region toward group `group` (regions outside the rollout toward their full count). With in-place
 * updates on, swaps go first; replacement takes the pods no swap can reach once no swap is busy. A swap makes its
 * pod unavailable, so swaps may use at least a group's worth of unavailability whatever the upgrade mode.
 */
function stepAll(input: RolloutInput, schedule: GroupSchedule, group: number): Map<string, RegionStep> {
  const strategy = input.ed.spec.strategy;
  const inPlace = inPlaceEnabled(input.ed);
  return new Map(
    input.regions.map((region, i) => {
      const scheduled = schedule.regions[i];
      const wantNew = scheduled && scheduled.groups > 0 ? targetAtGroup(strategy, scheduled, group) : region.desired;
      const budgets = regionBudgets(strategy, region.desired);
      if (inPlace && region.workload?.templateRevision === region.targetRevision) {
        const unavailable = Math.max(budgets.maxUnavailable, batchPods(strategy.batchSize, region.desired));
        const swaps = stepInPlace(region, wantNew, unavailable, strategy.updateStrategy.gracePeriodSeconds, strategy.minReadySeconds, input.now);
        if (swaps.busy || swaps.actions.length > 0) {
          const counts = countPods(region, strategy.minReadySeconds, input.now);
          return [region.name, { counts, actions: swaps.actions, ...groupProgress(counts, wantNew, region.desired) }];
        }
      }
      return [region.name, stepRegion(region, wantNew, budgets, strategy.minReadySeconds, input.now)];
    }),
  );
}

/**
 * The group the pods show: the first group whose targets no region has exceeded, for a rollout whose status records
 * no group yet (a revert resumes where its pods are rather than removing them). New pods above a region's desired
 * count (its count shrank) are surplus the region sheds, not progress: counted as progress they would exceed every
 * target and make the rollout jump to its last group, past every gate.
 */
function inferGroup(input: RolloutInput, schedule: GroupSchedule): number {
  const strategy = input.ed.spec.strategy;
  for (let group = 1; group <= schedule.totalGroups; group++) {
    const fits = input.regions.every((region, i) => {
      const scheduled = schedule.regions[i];
      if (!scheduled || scheduled.groups === 0) return true;
      const updated = countPods(region, strategy.minReadySeconds, input.now).updated;
      return Math.min(updated, region.desired) <= targetAtGroup(strategy, scheduled, group);
    });
    if (fits) return group;
  }
  return schedule.totalGroups;
}

interface Outcome {
  readonly phase: Phase;
  readonly group: number;
  readonly groupStart: string | undefined;
  readonly reason: string;
  readonly message: string;
}

function finish(
  base: { input: RolloutInput; schedule: GroupSchedule; rolloutRegions: readonly string[]; counts: Map<string, ReturnType<typeof countPods>> },
  outcome: Outcome,
  actions: readonly RolloutAction[],
): RolloutPlan {
  const { status, events } = buildStatus({
    ed: base.input.ed,
    generation: base.input.generation,
    rolloutRevision: base.input.rolloutRevision,
    regions: base.input.regions,
    counts: base.counts,
    previous: base.input.status,
    rolloutRegions: base.rolloutRegions,
    totalGroups: base.schedule.totalGroups,
    now: base.input.now,
    ...outcome,
  });
  return { actions: [...gateActions(base.input.regions), ...actions], status, events };
}
