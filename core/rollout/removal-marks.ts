import { OLD_POD_DELETION_COST } from '../labels.js';

/*
 * The order of the agent's marks for removal. Every negative pod-deletion-cost is one: the ReplicaSet controller removes
 * Ready pods with a lower cost first, so a marked pod leaves before an unmarked one (0). The marks a rollout makes on the
 * old pods it removes take the lowest cost (OLD_POD_DELETION_COST); a standing mark, on a pod at the rendered revision
 * for the next rollout, takes one above the highest mark among the region's old pods. It then ranks above every old pod
 * the rollout removes whether or not the ReplicaSet controller has seen it yet (the pod came unmarked), so it may be made
 * as soon as the pod exists, not only once the last old pod has gone; and each rollout's standing marks rank above the
 * last's, which the next rollout removes.
 */

/** The lowest int32: pod-deletion-cost's range. */
const INT32_MIN = -2_147_483_648;

/** The cost of the marks a rollout makes on the old pods it removes (OLD_POD_DELETION_COST). */
export const OLD_MARK_COST = Number(OLD_POD_DELETION_COST);

/** The cost of a mark for removal: the annotation's value when it is a negative int32, else undefined. */
export function removalMarkCost(annotation: string | undefined): number | undefined {
  if (annotation === undefined || !/^-[1-9]\d{0,9}$/.test(annotation)) return undefined;
  const cost = Number(annotation);
  return cost >= INT32_MIN ? cost : undefined;
}

/**
 * The cost of a standing mark where the region's old pods carry marks costing `oldMarks`: one above the highest of
 * them, one above the rollout's own marks when there are none. Undefined when that is no mark (the old pods' marks
 * reach −1, after two billion rollouts or from someone else's marks): the region's pods are then marked once no old pod
 * is left, and the cost starts from the bottom again.
 */
export function standingMarkCost(oldMarks: readonly number[]): number | undefined {
  const cost = oldMarks.reduce((highest, c) => Math.max(highest, c), OLD_MARK_COST) + 1;
  return cost < 0 ? cost : undefined;
}
