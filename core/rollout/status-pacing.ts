/**
 * When a status change that is only progress detail (counts, overview, messages: progressOnlyChange) goes out. Pod
 * events come in bursts during a rollout, and writing every count as it changes was the largest share of the agent's
 * requests (bench/agent: 48 of 93 per rollout; paced 29 of 73). Transitions (a rollout, group or move recorded; a phase
 * or condition change) are never paced, and they carry the counts too; the one held is a wait for the sync that has
 * just begun, which a sync usually ends at once (SYNC_WAIT_REPORT_GRACE_MS).
 */

import type { ExtendedDeploymentStatus } from '../api/extended-deployment.js';
import { Phases } from './reasons.js';

/** A change of counts alone is written at most this often per ExtendedDeployment, whatever the load. */
export const PROGRESS_WRITE_INTERVAL_MS = 1_000;

/**
 * Progress-only writes of all ExtendedDeployments together go out at about this rate at most: while more objects than
 * that may write counts (ProgressPacingInput.writers), each one's interval grows to their number / this rate. At scale
 * the API server is what a rollout waits for, and paced by elapsed time these writes grow with a rollout's duration.
 * bench:peers at 200 rollouts at once, one run each, status writes per rollout: 17.8 at 10 per second when counts
 * waited for no look past their interval, 11.1 once they did (below), 8.1 at 5 per second (counts alone 0.1: the group
 * starts carried them); Argo Rollouts' 14.
 */
export const PROGRESS_WRITES_PER_SECOND = 5;

/** What the pacing of one ExtendedDeployment's count-only change looks at. */
export interface ProgressPacingInput {
  /** Now (ms). */
  readonly now: number;
  /** When the agent last wrote the object's status or acted on its objects (ms); undefined when it has not yet. */
  readonly lastWrite?: number;
  /** Since when this change of counts waits (ms); undefined when it has just come. */
  readonly pendingSince?: number;
  /**
   * How many ExtendedDeployments may write counts alone within an interval, this one included: those whose counts wait
   * now and those whose rollout is under way (rolloutUnderWay), whose pods keep changing. Counting only those waiting
   * undercounts them, since each stops waiting whenever its status is written: bench:peers at 200 rollouts at once on a
   * slowed lab wrote 0.6, 2.5 and 9.2 count-only updates per rollout that way as the rollouts took 105, 135 and 151 s,
   * and 10.9 in a run before one with this count, which wrote 0.2 (status writes per rollout 18.9 → 8.2).
   */
  readonly writers: number;
  /** When the planner looks at the object again anyway (ms from now; Decision.lookAgainInMs), if it does. */
  readonly lookAgainInMs?: number;
}

/**
 * Whether an object with this status has a rollout under way: in a group (or converging past its last), so its
 * counts keep changing as its pods do. A rollout at group 0 waits for the sync, its fleet gate or an adoption: its
 * counts hold.
 */
export function rolloutUnderWay(status: Pick<ExtendedDeploymentStatus, 'phase' | 'currentGroup'>): boolean {
  return status.phase === Phases.Progressing && (status.currentGroup ?? 0) > 0;
}

/**
 * A wait for the sync that has just begun (Decision.syncWaitBegins) is reported once it lasts this long. A sync applies
 * the ExtendedDeployment and its regional workloads one after the other, so a look between the two finds the rollout
 * waiting for a moment: reported, that moment cost a status write and an Event per rollout, and the next look wrote
 * both again for the first group (bench:peers: 8 of each per rollout of 6 groups, where 7 do; at 200 rollouts at once,
 * API requests per rollout 39.9 with the report, 37.9 held). Nothing acts while the sync is awaited, so holding the
 * report changes no decision.
 */
export const SYNC_WAIT_REPORT_GRACE_MS = 2_000;

/** How long the report of a wait for the sync that began at `since` (ms; undefined: now) still waits (due at 0). */
export function syncWaitReportWait(now: number, since: number | undefined): number {
  return (since ?? now) + SYNC_WAIT_REPORT_GRACE_MS - now;
}

/**
 * How long a change of counts alone waits (ms): written when this is zero or less, else looked at again after it (or at
 * the planner's look, if sooner). At most one such write per interval after the object's last write or action (the
 * interval is PROGRESS_WRITE_INTERVAL_MS, or longer while many objects may write: PROGRESS_WRITES_PER_SECOND), and the
 * counts wait at most one interval in all, unless a look is due within the interval after that: a pod turning
 * available, typically the group's end, whose reconcile writes the status anyway (a transition carrying the counts).
 * Writing the counts a moment before it would cost a request and could still be in flight when the group's start is
 * due. A look that writes nothing leaves the counts to go out at the latest two intervals after they came.
 */
export function progressWriteWait(input: ProgressPacingInput): number {
  const { now, lookAgainInMs } = input;
  const intervalMs = Math.max(PROGRESS_WRITE_INTERVAL_MS, Math.ceil((input.writers * 1000) / PROGRESS_WRITES_PER_SECOND));
  const since = input.pendingSince ?? now;
  const paced = (input.lastWrite ?? Number.NEGATIVE_INFINITY) + intervalMs;
  const lookAt = lookAgainInMs === undefined ? undefined : now + lookAgainInMs;
  const latest = since + 2 * intervalMs;
  // Actions keep moving the pacing on: the deadline keeps counts from waiting behind a long run of them.
  const writeAt = lookAt !== undefined && lookAt <= latest ? Math.min(Math.max(paced, lookAt), latest) : Math.min(paced, since + intervalMs);
  return writeAt - now;
}
