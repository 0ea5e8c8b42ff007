import { progressDeadlineMs } from './gates.js';
import { graceEndsAt } from './in-place-step.js';
import type { RolloutInput, RolloutPlan } from './planner.js';
import { isPodActive, isPodTerminating } from './pod-activity.js';
import { MARK_SETTLE_MS } from './region-step.js';
import { availableAt } from './snapshot.js';

/** Longest wait between two looks at an unfinished rollout: a safety net for anything no event announces. */
export const MAX_REQUEUE_MS = 30_000;
/**
 * Slack after a computed instant, for the wall clock's whole milliseconds against the queue's monotonic timers, which
 * never fire early (a look that comes too early only costs another look). It adds to every group start that waits for
 * minReadySeconds: bench:peers measures it in every reaction.
 */
export const SLACK_MS = 1;

/**
 * When to look at an ExtendedDeployment again although nothing changed. Some progress has no event: a pod becomes
 * available `minReadySeconds` after it became Ready, a draining pod's grace period ends (its images are swapped
 * then), an old pod's mark settles (a scale-down may rely on it then), and a group's progress deadline passes. The
 * next such instant (or MAX_REQUEUE_MS while the rollout is unfinished or replicas are away) is returned in ms from
 * now; so are the move planner's instants (a pod's unschedulable timeout, a region's toleration, a stabilization
 * period). Undefined when the object is Healthy, nothing is left to do and none of those instants is ahead, so idle
 * objects cost nothing.
 */
export function nextRequeueMs(input: RolloutInput, plan: RolloutPlan): number | undefined {
  const { now } = input;
  const wakeAt = (plan.wakeAt ?? []).filter((t) => t > now);
  // Replicas away from home come back when their region has room, which no event of this object announces.
  const awaitingReturn = (plan.status.moves ?? []).length > 0 && input.ed.spec.strategy.moveBack.enable;
  const { minReadySeconds } = input.ed.spec.strategy;
  const instants: number[] = [...wakeAt];
  const grace = input.ed.spec.strategy.updateStrategy.gracePeriodSeconds;
  for (const region of input.regions) {
    // Only active pods: a terminating or terminal pod never becomes available, is never swapped or removed again. Pods
    // counted rather than listed (RegionState.settled) may carry a recent mark too; a keeper's pods count for the region.
    for (const pod of [...region.pods, ...(region.keeper?.pods ?? []), ...(region.settled ?? []).map((s) => s.pod)].filter(isPodActive)) {
      const available = availableAt(pod, minReadySeconds);
      if (available !== undefined) instants.push(available);
      // An in-place swap waits out its grace period between draining and patching the images; nothing announces its end.
      if (pod.swap?.phase === 'draining') instants.push(graceEndsAt(pod, grace));
      // A scale-down that relies on a mark (either) waits until it has settled; nothing announces that either. Only
      // marks on old pods are relied on: a standing mark on a pod at the rendered revision waits for the next rollout.
      const relied = (pod.markedOld && pod.revision !== region.targetRevision) || pod.held === true;
      if (relied && pod.markedAt !== undefined) instants.push(pod.markedAt + MARK_SETTLE_MS);
    }
  }
  const start = plan.status.lastGroupStartTime !== undefined ? Date.parse(plan.status.lastGroupStartTime) : Number.NaN;
  if (plan.status.phase === 'Progressing' && !Number.isNaN(start)) {
    instants.push(Math.max(start, input.controls.resumedAt ?? 0) + progressDeadlineMs(input.ed.spec.strategy) + 1);
  }
  const next = instants.filter((t) => t > now).reduce((a, b) => Math.min(a, b), Number.POSITIVE_INFINITY);
  // Healthy with nothing to do and nothing about to change (a pod turning available, a mark settling: a partition's
  // hold mark gates a scale-down even when Healthy): nothing to look at again.
  if (plan.status.phase === 'Healthy' && plan.actions.length === 0 && !awaitingReturn && next === Number.POSITIVE_INFINITY) return undefined;
  return Math.min(MAX_REQUEUE_MS, next === Number.POSITIVE_INFINITY ? MAX_REQUEUE_MS : next - now + SLACK_MS);
}

/**
 * Whether the rollout's next step waits for a regional workload's controller rather than for time: a workload Git has
 * not synced to the rendered template yet, one whose controller has not reported its last count (observedGeneration)
 * or still removes pods (terminating ones hold the room new pods need), or a scale-down this plan writes. The event that
 * ends such a wait (the sync, the report, a pod gone) is the moment to look again, and the agent looks at the events of
 * such an object sooner than it batches others' (agent/event-batching.ts). Workloads that do not exist yet and the
 * keeper's are not waited for.
 */
export function awaitsWorkloads(input: RolloutInput, plan: RolloutPlan): boolean {
  if (plan.actions.some((action) => action.kind === 'scale' && action.replicas < action.from)) return true;
  return input.regions.some(({ workload, targetRevision, pods }) => {
    if (!workload) return false;
    const reported = workload.reported;
    return (
      workload.templateRevision !== targetRevision ||
      (reported !== undefined && reported.observedGeneration < reported.generation) ||
      pods.some(isPodTerminating)
    );
  });
}
