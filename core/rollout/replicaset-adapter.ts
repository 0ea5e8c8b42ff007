import { inPlaceEnabled } from '../validate.js';
import { regionBudgets } from './budgets.js';
import { batchPods, regionGroups, shownGroup as shownGroupOf, targetAtGroup, type GroupSchedule } from './groups.js';
import { settleSwaps, stepInPlace } from './in-place-step.js';
import { creatingNew, groupProgress, stepRegion, type RegionStep, type StepOptions } from './region-step.js';
import { keptInRegion, keptOldOf } from './partition.js';
import { countPods, type RegionState } from './snapshot.js';
import type { AdapterFactory, ScheduledRegion } from './workload-adapter.js';

/** Why a region waits for Git: its workload is not there yet, or not at the rendered template; undefined once it is. */
export function regionSyncWait(region: RegionState): string | undefined {
  if (!region.workload) return `waiting for workload of region ${region.name} to be created by the sync`;
  if (region.workload.templateRevision !== region.targetRevision)
    return `waiting for the sync: workload ${region.workload.name} is not at revision ${region.targetRevision}`;
  return undefined;
}

/**
 * Regional ReplicaSets (subsetType ReplicaSet, and InplaceSet: the same with in-place updates). The agent owns
 * spec.replicas and the pods: a region rolls in pod batches (groups.ts), each group moving it toward so many
 * new-revision pods within the budgets (region-step.ts), by in-place swaps first where they are on (in-place-step.ts).
 */
export const replicaSetAdapter: AdapterFactory = (input, record) => {
  const strategy = input.ed.spec.strategy;
  const { minReadySeconds } = strategy;
  const { now } = input;
  const inPlace = inPlaceEnabled(input.ed);

  // A region's new pods carry the mark for removal the next rollout relies on (StepOptions.standingMarks).
  const standingMarks = input.standingMarks === true && !inPlace;
  /**
   * Steps a region toward `wantNew` new-revision pods. With in-place updates on, swaps go first; replacement takes the
   * pods no swap can reach once no swap is busy. A swap makes its pod unavailable, so swaps may use at least a group's
   * worth of unavailability whatever the upgrade mode.
   */
  const move = (region: RegionState, wantNew: number, options: StepOptions = {}): RegionStep => {
    const budgets = regionBudgets(strategy, region.desired);
    if (inPlace && region.workload?.templateRevision === region.targetRevision) {
      const unavailable = Math.max(budgets.maxUnavailable, batchPods(strategy.batchSize, region.desired));
      const swaps = stepInPlace(region, wantNew, unavailable, strategy.updateStrategy.gracePeriodSeconds, minReadySeconds, now);
      if (swaps.busy || swaps.actions.length > 0) {
        const counts = countPods(region, minReadySeconds, now);
        return { counts, actions: swaps.actions, ...groupProgress(counts, wantNew, region.desired) };
      }
    }
    return stepRegion(region, wantNew, budgets, minReadySeconds, now, options);
  };

  /**
   * The group the pods show: the first group whose targets no region has exceeded. New pods above a region's desired
   * count (its count shrank) are surplus the region sheds, not progress: counted as progress they would exceed every
   * target and make the rollout jump to its last group, past every gate. Pods the ReplicaSet is creating at the new
   * template count as new (a ReplicaSet Git has just created has spec.replicas 1 before its pod exists). And a region
   * being created (no old pods) has its first pod from Kubernetes, which gives a ReplicaSet Git creates one replica:
   * that pod is its Beta pod whatever group the region waits for, not progress that would skip the groups before it.
   */
  const shownGroup = (schedule: GroupSchedule<ScheduledRegion>): number =>
    shownGroupOf(strategy, schedule, ({ region }) => {
      const counts = countPods(region, minReadySeconds, now);
      return { updated: counts.updated + creatingNew(region, counts), old: counts.old };
    });

  return {
    counts: (region) => countPods(region, minReadySeconds, now),
    syncWait: regionSyncWait,
    joins: (region) => countPods(region, minReadySeconds, now).old > 0,
    groupsOf: (region) => regionGroups(strategy, region.desired + (region.keeperServes ?? 0), keptInRegion(region)),
    // Once this rollout's record has a group, that group holds: a new group is recorded before anything adds pods for
    // it (in the status written first, or on the ReplicaSet its scale-down starts it with: the record merges both,
    // session.ts), so the agent never puts pods ahead of the recorded group. Others do:
    // the ReplicaSet controller replaces an evicted or deleted old pod at the template's revision. Read from such pods,
    // the group would jump past its confirmation gate and start before the previous one was available. The pods decide
    // only where no group is recorded: a new rollout (a Git revert finds pods at its revision, and resumes where they
    // are rather than removing them), or a lost status.
    currentGroup: (schedule) => (record?.group !== undefined && record.group >= 1 ? record.group : Math.max(shownGroup(schedule), 1)),
    // A region outside the rollout takes no group: its target is its replica count (targetAtGroup).
    step: (scheduled, group) =>
      move(scheduled.region, targetAtGroup(strategy, scheduled, group), { nextWantNew: targetAtGroup(strategy, scheduled, group + 1), standingMarks }),
    // Holding starts no new pods for the rollout's sake, but the region keeps the new pods it has and follows its count:
    // a raise (Git, or a move away from a failed region) is served at once, a cut removes old pods first, and a failed
    // region's pods go even while not Ready. Nor does it keep healthy pods out of endpoints: swaps under way settle.
    hold: ({ region }) => {
      const capacity = stepRegion(region, countPods(region, minReadySeconds, now).updated, regionBudgets(strategy, region.desired), minReadySeconds, now, {
        standingMarks,
      });
      return inPlace ? [...settleSwaps(region, now), ...capacity.actions] : capacity.actions;
    },
    converge: (region) => move(region, region.desired - keptOldOf(region), { standingMarks }),
    groupMembers: () => undefined,
  };
};
