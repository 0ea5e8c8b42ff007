import { parsePercent, type IntOrPercent } from '../api/common.js';
import type { ExtendedDeploymentSpec, RolloutStrategy } from '../api/extended-deployment.js';

/**
 * Pods a group adds in a region: an integer, or a percentage of the region's replicas rounded up (so a group always
 * makes progress), never less than 1.
 */
export function batchPods(batchSize: IntOrPercent, regionReplicas: number): number {
  if (typeof batchSize === 'number') return Math.max(1, batchSize);
  return Math.max(1, Math.ceil((regionReplicas * (parsePercent(batchSize) ?? 0)) / 100));
}

/**
 * New-revision pods a region must have once its `step`-th group is done (step counts from 1). Beta: the first group
 * is one pod, later groups add batchSize. Group: every group adds batchSize. Never more than the region's replicas.
 */
export function groupTarget(strategy: Pick<RolloutStrategy, 'rolloutStrategy' | 'batchSize'>, regionReplicas: number, step: number): number {
  if (step <= 0 || regionReplicas === 0) return 0;
  const batch = batchPods(strategy.batchSize, regionReplicas);
  const first = strategy.rolloutStrategy === 'Beta' ? 1 : batch;
  return Math.min(regionReplicas, first + (step - 1) * batch);
}

/**
 * Groups a region needs to reach all its replicas but the `partition` it keeps on previous revisions (0 when that
 * leaves none): the first group, then as many batches as the rest takes. Batches stay a share of all the region's
 * replicas. Computed, not counted: a region of a million replicas in batches of one is planned on every look.
 */
export function regionGroups(strategy: Pick<RolloutStrategy, 'rolloutStrategy' | 'batchSize'>, regionReplicas: number, partition = 0): number {
  const updated = regionReplicas - partition;
  if (updated <= 0) return 0;
  const batch = batchPods(strategy.batchSize, regionReplicas);
  const first = strategy.rolloutStrategy === 'Beta' ? 1 : batch;
  return first >= updated ? 1 : 1 + Math.ceil((updated - first) / batch);
}

/** Region order: as written, else Parallel for ReplicaSets and Sequential for native Deployments (compat mode). */
export function regionOrderOf(spec: Pick<ExtendedDeploymentSpec, 'strategy' | 'subsetType'>): NonNullable<RolloutStrategy['regionOrder']> {
  return spec.strategy.regionOrder ?? (spec.subsetType === 'Deployment' ? 'Sequential' : 'Parallel');
}

/** One region's part in the rollout: in which global groups it moves, and how far each takes it. */
export interface RegionSchedule {
  readonly name: string;
  readonly replicas: number;
  /** Pods the region keeps on previous revisions (its partition): its targets stop short of its replicas by that. */
  readonly partition?: number;
  /** The first global group in which the region moves (1-based); 0 when it needs no group. */
  readonly firstGroup: number;
  /** How many groups the region takes. */
  readonly groups: number;
}

/** The whole rollout: every region's schedule, in declared order, and the total number of global groups. */
export interface GroupSchedule<R extends RegionSchedule = RegionSchedule> {
  readonly regions: readonly R[];
  readonly totalGroups: number;
}

/**
 * Lays out the global groups, each region taking as many as `groups` says (0: it takes none). Parallel: every region
 * moves in groups 1..n (regions with fewer groups finish early). Sequential: regions take their groups one after
 * another, in the given order. Regions come back in the same order, each with its first group (0 when it takes none).
 */
export function layoutGroups<R extends Omit<RegionSchedule, 'firstGroup'>>(
  regionOrder: NonNullable<RolloutStrategy['regionOrder']>,
  regions: readonly R[],
): GroupSchedule<R & { readonly firstGroup: number }> {
  let next = 1;
  let total = 0;
  const out = regions.map((r) => {
    if (r.groups === 0) return { ...r, firstGroup: 0 };
    const firstGroup = regionOrder === 'Sequential' ? next : 1;
    next = firstGroup + r.groups;
    total = Math.max(total, firstGroup + r.groups - 1);
    return { ...r, firstGroup };
  });
  return { regions: out, totalGroups: total };
}

/** Lays out the global groups of a ReplicaSet rollout: a region that changes takes regionGroups, in pod batches. */
export function scheduleGroups(
  strategy: Pick<RolloutStrategy, 'rolloutStrategy' | 'batchSize'>,
  regionOrder: NonNullable<RolloutStrategy['regionOrder']>,
  regions: readonly { readonly name: string; readonly replicas: number; readonly changes: boolean; readonly partition?: number }[],
): GroupSchedule {
  return layoutGroups(
    regionOrder,
    regions.map((r) => {
      const partition = r.changes ? (r.partition ?? 0) : 0;
      return { name: r.name, replicas: r.replicas, partition, groups: r.changes ? regionGroups(strategy, r.replicas, partition) : 0 };
    }),
  );
}

/**
 * The most new-revision pods a region may run in a group whose target is `target`: the target, and for a region
 * being created (no old pods) at least the one pod Kubernetes gives a ReplicaSet Git creates without spec.replicas.
 * That pod is the region's Beta pod whatever group the region waits for; removing it would only create it again later.
 */
export function mostNewAtGroup(target: number, oldPods: number): number {
  return Math.max(target, oldPods === 0 ? 1 : 0);
}

/** New-revision pods a region must have once global group `group` is done. */
export function targetAtGroup(strategy: Pick<RolloutStrategy, 'rolloutStrategy' | 'batchSize'>, region: RegionSchedule, group: number): number {
  const most = region.replicas - (region.partition ?? 0);
  if (region.groups === 0) return most;
  return Math.min(most, groupTarget(strategy, region.replicas, group - region.firstGroup + 1));
}

/**
 * The group the workloads show, for a rollout no status records a group of: the first group whose targets no rolling
 * region's new pods exceed (`newPods`: the new pods a region runs or is making, and its old pods), else the last group.
 */
export function shownGroup<R extends RegionSchedule>(
  strategy: Pick<RolloutStrategy, 'rolloutStrategy' | 'batchSize'>,
  schedule: GroupSchedule<R>,
  newPods: (scheduled: R) => { readonly updated: number; readonly old: number },
): number {
  for (let group = 1; group <= schedule.totalGroups; group++) {
    const fits = schedule.regions.every((scheduled) => {
      if (scheduled.groups === 0) return true;
      const { updated, old } = newPods(scheduled);
      const most = scheduled.replicas - (scheduled.partition ?? 0);
      return Math.min(updated, most) <= mostNewAtGroup(targetAtGroup(strategy, scheduled, group), old);
    });
    if (fits) return group;
  }
  return schedule.totalGroups;
}
