import { HELD_POD_DELETION_COST, MARKED_AT_ANNOTATION, OLD_POD_DELETION_COST, POD_DELETION_COST_ANNOTATION } from '../labels.js';
import type { HoldPodAction, MarkPodAction, UnmarkPodAction } from './actions.js';

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

/**
 * The annotations a mark writes on its pod, as a merge patch: its deletion cost and when it was made, or, for an
 * unmark, null for both (removed). What the actuators write, the simulation applies and the agent knows its echo by.
 */
export function markAnnotations(action: MarkPodAction | HoldPodAction | UnmarkPodAction): Readonly<Record<string, string | null>> {
  if (action.kind === 'unmark') return { [POD_DELETION_COST_ANNOTATION]: null, [MARKED_AT_ANNOTATION]: null };
  const cost = action.kind === 'markOld' ? String(action.cost) : HELD_POD_DELETION_COST;
  return { [POD_DELETION_COST_ANNOTATION]: cost, [MARKED_AT_ANNOTATION]: action.at };
}
