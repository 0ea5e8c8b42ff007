import { parsePercent, type IntOrPercent } from '../api/common.js';
import { isPodActive } from './pod-activity.js';
import { countWhere, type RegionState } from './snapshot.js';

/**
 * The pods a region's `partition` keeps on previous revisions: an integer, or a percentage of the region's replicas
 * rounded up (as UnitedDeployment and CloneSet round a partition), at most its replicas.
 */
export function partitionPods(partition: IntOrPercent | undefined, regionReplicas: number): number {
  if (partition === undefined) return 0;
  const pods = typeof partition === 'number' ? partition : Math.ceil((regionReplicas * (parsePercent(partition) ?? 0)) / 100);
  return Math.min(Math.max(0, pods), regionReplicas);
}

/**
 * Old pods the region keeps now: its partition, within its desired count and the old pods it still runs. Kept pods
 * that died are not made again (its ReplicaSet creates pods at the new template only): the region fills up with new
 * ones, and a region without old pods (created, or every old pod gone) keeps none.
 */
export function keptOld(region: Pick<RegionState, 'partition' | 'desired'>, oldPods: number): number {
  return Math.min(region.partition ?? 0, region.desired, oldPods);
}

/** keptOld, counting the region's active old pods. */
export function keptOldOf(region: RegionState): number {
  if (!region.partition) return 0;
  return keptOld(
    region,
    countWhere(region, (p) => isPodActive(p) && p.revision !== region.targetRevision),
  );
}

/**
 * The old pods a region keeps, its keeper's included (keeper.ts): where a keeper holds its partition, what the whole
 * region will keep (the keeper makes up the difference); else its kept old pods and those its keeper serves.
 */
export function keptInRegion(region: RegionState): number {
  return region.keptWhole ?? keptOldOf(region) + (region.keeperServes ?? 0);
}
