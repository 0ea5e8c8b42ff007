import type { Condition } from '../api/conditions.js';

/** A condition to set: everything but its lastTransitionTime, which {@link setCondition} decides. */
export type ConditionUpdate = Omit<Condition, 'lastTransitionTime'>;

/**
 * `conditions` with `next` set, with the semantics of apimachinery's meta.SetStatusCondition: a condition of the same
 * type is replaced where it stands (status, reason, message and observedGeneration from `next`) and keeps its
 * lastTransitionTime while its status stays the same; a condition of a new type is appended. The time is `now` when the
 * status changes, and when the condition had none. The order of the others stays as it was: status is compared as
 * JSON before it is written, and a condition moved in the list would be a write that changes nothing.
 */
export function setCondition(conditions: readonly Condition[], next: ConditionUpdate, now: number): Condition[] {
  const at = conditions.findIndex((c) => c.type === next.type);
  const old = conditions[at];
  const lastTransitionTime = old?.status === next.status && old.lastTransitionTime ? old.lastTransitionTime : new Date(now).toISOString();
  const condition: Condition = { ...next, lastTransitionTime };
  return at < 0 ? [...conditions, condition] : conditions.map((c, i) => (i === at ? condition : c));
}
