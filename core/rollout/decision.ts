import { ProgressingReason } from '../api/conditions.js';
import type { ExtendedDeploymentStatus } from '../api/extended-deployment.js';
import type { Problem } from '../problems.js';
import { planRollout, type RolloutEvent, type RolloutInput, type RolloutPlan } from './planner.js';
import { startsGroupOnWorkloads } from './group-record.js';
import { awaitsWorkloads, nextRequeueMs } from './requeue.js';
import { invalidSpecStatus, progressOnlyChange, statusChanged, statusFirst } from './status-decision.js';
import { progressingReason } from './status.js';

/**
 * When the status goes out relative to the plan's actions. `first`: it records a new rollout, group or move, so it is
 * written before anything acts on it and a leader that dies in between leaves the intent behind (statusFirst); a group
 * that its ReplicaSets' scale-downs start and record themselves (startsGroupOnWorkloads) needs no write before them.
 * `after`: it describes what the actions did. `none`: the object already shows it.
 */
export type StatusWrite = 'first' | 'after' | 'none';

/** Everything a reconcile of one valid ExtendedDeployment does, decided from what it observed. */
export interface Decision {
  /** Actions (in their crash-safe order within each region), the status and the Events. */
  readonly plan: RolloutPlan;
  readonly statusWrite: StatusWrite;
  /**
   * The status change is progress detail only (counts, overview, messages) and reports nothing: the agent may pace
   * such writes (several changes in one) without changing any decision.
   */
  readonly progressOnly: boolean;
  /**
   * The look finds the rollout waiting for the sync (a regional workload not at its rendered template yet) where the
   * status does not say so, and has nothing to do: the agent may hold the report for a moment
   * (SYNC_WAIT_REPORT_GRACE_MS), within which a sync usually ends such a wait.
   */
  readonly syncWaitBegins: boolean;
  /** Look again after this many ms although no object changes (nextRequeueMs); undefined when there is nothing to wait for. */
  readonly lookAgainInMs: number | undefined;
  /** The next step waits for a regional workload's controller (awaitsWorkloads): its events are looked at soon. */
  readonly awaitsWorkloads: boolean;
}

/**
 * Decides one reconcile of a valid ExtendedDeployment: the plan (core's planner), whether its status goes out before or
 * after its actions, whether the change is only progress, and when to look again. `written` is the status on the
 * object as the cluster holds it (unvalidated). The agent performs exactly this and holds no rollout rule of its own.
 */
export function decide(input: RolloutInput, written: unknown): Decision {
  const plan = planRollout(input);
  const changed = statusChanged(written, plan.status);
  const first = changed && statusFirst(input.status, plan.status, startsGroupOnWorkloads(plan, input));
  return {
    plan,
    statusWrite: first ? 'first' : changed ? 'after' : 'none',
    progressOnly: changed && !first && plan.events.length === 0 && progressOnlyChange(written, plan.status),
    syncWaitBegins:
      changed &&
      plan.actions.length === 0 &&
      progressingReason(plan.status) === ProgressingReason.WaitingForSync &&
      progressingReason(input.status) !== ProgressingReason.WaitingForSync,
    lookAgainInMs: nextRequeueMs(input, plan),
    awaitsWorkloads: awaitsWorkloads(input, plan),
  };
}

/** What a reconcile of an ExtendedDeployment whose spec the agent cannot act on does: report, move nothing. */
export interface InvalidDecision {
  /** The status it had (the rollout holds where it is) with `Valid=False` listing every problem. */
  readonly status: ExtendedDeploymentStatus;
  /** The InvalidSpec Warning, only when the problems are new. */
  readonly events: readonly RolloutEvent[];
  readonly statusWrite: Exclude<StatusWrite, 'first'>;
}

/**
 * Decides the reconcile of an object observe found invalid: its problems go into the status and an Event; nothing is
 * planned. (The agent still opens the readiness gates of its pods from the pods alone, see gateActions: an invalid
 * spec must not turn into an outage.)
 */
export function decideInvalid(
  observed: { readonly problems: readonly Problem[]; readonly generation: number; readonly status: ExtendedDeploymentStatus | undefined },
  written: unknown,
  now: number,
): InvalidDecision {
  const { status, events } = invalidSpecStatus(observed.status, observed.problems, observed.generation, now);
  return { status, events, statusWrite: statusChanged(written, status) ? 'after' : 'none' };
}
