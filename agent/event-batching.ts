import { SLACK_MS } from '../core/rollout/requeue.js';
import type { WorkQueue } from './runtime/work-queue.js';

/**
 * How long the events of an ExtendedDeployment's pods, workloads and revisions are collected before it is looked at.
 * A rollout step brings each pod several events within moments (created, bound, running, Ready; marked, deleting,
 * gone) and the ReplicaSet's status after each: looked at on every one, an ExtendedDeployment was reconciled 109 times
 * per rollout of 10 pods, 63 with this batch (bench:peers, 200 rollouts at once; 76 with 50 ms, 56 with 200 ms).
 * Moments due by time (a pod available after minReadySeconds, a mark settled, a deadline) are timers and wait for no
 * batch: a pod's availability is set from the event that shows it Ready (enqueueAt), since a Ready condition's time
 * counts whole seconds and a pod that turned Ready less than a batch before it counted as available would otherwise
 * start the next group late (bench:peers, one rollout: about one step in ten, by up to the batch). The event that
 * shows a pod Ready after the instant it turned available wakes the key at once (LATE_AVAILABILITY_MS).
 */
const OWNED_EVENT_BATCH_MS = 100;

/**
 * How long after the instant a pod turns available the event that shows it Ready may come and still wake its
 * ExtendedDeployment at once, as the timer set from an earlier event would have. Under load the API server delivers
 * watch events late (bench:peers, 200 rollouts at once: up to 170 ms after the instant), and the batch each such event
 * opened added 100 ms more to its step, a third of the worst reactions. A Ready condition's time counts whole
 * seconds, so with minReadySeconds 0 every Ready event comes up to a second after the instant it names. Events of pods
 * available for longer (a mark, a label) are batched as any.
 */
export const LATE_AVAILABILITY_MS = 2_000;

/**
 * Wakes the ExtendedDeployment `key` when a pod of it turns available at `at` (the wall clock's ms, from the event
 * that shows the pod Ready): at that instant, or now, as due, when the event came at most LATE_AVAILABILITY_MS after it.
 */
export function wakeAtAvailability<K extends string>(queue: Pick<WorkQueue<K>, 'addAt'>, key: K, at: number): void {
  queue.addAt(key, at + SLACK_MS, LATE_AVAILABILITY_MS);
}

/**
 * The batch instead, for an ExtendedDeployment whose looks have found its next step waiting for a regional workload's
 * controller (Decision.awaitsWorkloads: the sync of a new template, the count it has not reported, the pods it is
 * removing) for less than AWAITED_EVENT_WINDOW_MS. A controller that is not busy answers within a few milliseconds,
 * and the event that ends the wait, held for the whole batch, delayed every step's scale-up after its scale-down by
 * 100 ms (bench:peers, one rollout), and a rollout's first scale-up after Git synced by as much.
 */
const AWAITED_EVENT_BATCH_MS = 10;
/**
 * How long a wait for a workload's controller gets the short batch. Past it the controller is busy (many rollouts at
 * once) and its events come as a stream: looked at every 10 ms they cost looks that find nothing to do (bench:peers,
 * 200 rollouts at once: 76 reconciles per rollout with the short batch for the whole wait, against 57 without it).
 */
const AWAITED_EVENT_WINDOW_MS = 100;

/**
 * How long (ms) the agent collects the events of an ExtendedDeployment's pods, workloads and revisions before it looks
 * at it, at `now`: `since` is when its looks began to find the next step waiting for a workload's controller
 * (Reconciler.awaitingSince), undefined when they do not.
 */
export function ownedEventBatchMs(since: number | undefined, now: number): number {
  return since !== undefined && now - since < AWAITED_EVENT_WINDOW_MS ? AWAITED_EVENT_BATCH_MS : OWNED_EVENT_BATCH_MS;
}
