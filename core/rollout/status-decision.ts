import type { ExtendedDeploymentStatus } from '../api/extended-deployment.js';
import { formatPath, type Problem } from '../problems.js';
import type { RolloutEvent } from './planner.js';
import type { ApiRead, ApiWrite } from '../kube/api-writes.js';
import { setCondition } from '../kube/conditions.js';
import { AUTHORIZED_CONDITION, FORBIDDEN_REASON, INVALID_SPEC_REASON, VALID_CONDITION } from '../api/conditions.js';

/**
 * Deep equality with JSON semantics: key order and properties set to undefined do not matter, everything else does.
 * Allocates nothing: every look compares its planned status with the object's (bench:peers at 200 rollouts at once: the
 * arrays and maps of a comparison by entries were 6 % of the agent's allocations).
 */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const other = b as readonly unknown[];
    if (a.length !== other.length) return false;
    for (let i = 0; i < a.length; i++) if (!jsonEqual(a[i], other[i])) return false;
    return true;
  }
  const left = a as Record<string, unknown>;
  const right = b as Record<string, unknown>;
  // Defined keys of `a` not yet matched by one of `b`: every one must be equal in `b`, and `b` may have no others.
  let unmatched = 0;
  for (const key in left) {
    if (!Object.hasOwn(left, key) || left[key] === undefined) continue;
    if (!Object.hasOwn(right, key) || !jsonEqual(left[key], right[key])) return false;
    unmatched++;
  }
  for (const key in right) if (Object.hasOwn(right, key) && right[key] !== undefined) unmatched--;
  return unmatched === 0;
}

/** Whether `next` must be written: it differs in anything (timestamps included) from the status on the object. */
export function statusChanged(current: unknown, next: ExtendedDeploymentStatus): boolean {
  return !jsonEqual(current ?? {}, next);
}

/**
 * Whether the status must be written before the plan's actions: when it records a new rollout, a new group or a change
 * of moves. Then a leader that dies between the two writes leaves the intent (group N started at T; 2 replicas moved
 * from a to b) in the cluster, and its successor continues it instead of starting the group again with a fresh
 * deadline or moving the same replicas twice. Otherwise the actions go first, so the status describes what was done.
 * `groupOnWorkloads`: the actions record the new group themselves (startsGroupOnWorkloads in group-record.ts), so a
 * new group alone does not need the status first.
 */
export function statusFirst(observed: ExtendedDeploymentStatus | undefined, next: ExtendedDeploymentStatus, groupOnWorkloads = false): boolean {
  return (
    observed?.revision !== next.revision ||
    ((observed?.currentGroup ?? 0) !== (next.currentGroup ?? 0) && !groupOnWorkloads) ||
    !jsonEqual(observed?.moves ?? [], next.moves ?? []) ||
    // New weights (or a drain start) are written before the route: a leader that dies between the two writes the same
    // route again, never a second step.
    !jsonEqual(trafficIntent(observed), trafficIntent(next))
  );
}

/** The part of status.traffic that a route write acts on. */
function trafficIntent(status: ExtendedDeploymentStatus | undefined): unknown {
  const traffic = status?.traffic;
  return traffic === undefined ? undefined : { weights: traffic.weights, draining: traffic.draining, shiftedBack: traffic.shiftedBack, group: traffic.group };
}

/**
 * The status without its progress detail: pod counts (status.replicas, each region's current/updated/ready/available,
 * its swappedInPlace/replaced tallies, its swaps under way and when its Ready pods become available),
 * the overview line and condition messages. What is left (phase, revision, groups, group start, desired counts,
 * condition types/statuses/reasons, observedGeneration, and any field not named here) is what rollouts decide on or
 * what a transition changes.
 */
function withoutProgress(status: unknown): unknown {
  if (status === undefined || status === null) return {};
  if (typeof status !== 'object' || Array.isArray(status)) return status;
  const { replicas: _replicas, overview: _overview, regions, conditions, ...rest } = status as ExtendedDeploymentStatus;
  return {
    ...rest,
    regions: Array.isArray(regions)
      ? regions.map(
          ({ current: _c, updated: _u, ready: _r, available: _a, swappedInPlace: _s, replaced: _p, swapping: _w, availableAt: _t, ...region }) => region,
        )
      : regions,
    conditions: Array.isArray(conditions) ? conditions.map(({ message: _m, ...condition }) => condition) : conditions,
  };
}

/**
 * Whether `next` differs from the written status only in progress detail (counts, overview, messages): such a write can
 * wait a little and carry several changes at once. Any other difference is not progress-only.
 */
export function progressOnlyChange(current: unknown, next: ExtendedDeploymentStatus): boolean {
  return statusChanged(current, next) && jsonEqual(withoutProgress(current), withoutProgress(next));
}

/** Problems as one condition message: `spec.replicas: must not be negative; spec.regions[0].name: …`. */
export function problemsMessage(problems: readonly Pick<Problem, 'path' | 'message'>[]): string {
  return problems.map((p) => (p.path.length > 0 ? `${formatPath(p.path)}: ${p.message}` : p.message)).join('; ');
}

/** A status with one more problem reported, and the Event announcing it when it is new. */
interface Reported {
  readonly status: ExtendedDeploymentStatus;
  readonly events: RolloutEvent[];
}

/**
 * The status `previous` with the condition `type` set to False for `reason`, keeping its lastTransitionTime while it
 * stays False, and a Warning Event `reason` only when the message is new: the same problem found again on every retry
 * would flood the namespace's events.
 */
function reportFalse(
  previous: ExtendedDeploymentStatus | undefined,
  type: string,
  reason: string,
  message: string,
  event: string,
  generation: number,
  now: number,
): Reported {
  const old = previous?.conditions?.find((c) => c.type === type);
  const unchanged = old?.status === 'False' && old.message === message;
  return {
    status: {
      ...previous,
      conditions: setCondition(previous?.conditions ?? [], { type, status: 'False', reason, message, observedGeneration: generation }, now),
    },
    events: unchanged ? [] : [{ type: 'Warning', reason, message: event }],
  };
}

/**
 * The status of an object whose spec the agent cannot act on: the status it had (the rollout holds where it is),
 * with `Valid=False` listing every problem, and the `InvalidSpec` Warning event when the problems are new.
 */
export function invalidSpecStatus(previous: ExtendedDeploymentStatus | undefined, problems: readonly Problem[], generation: number, now: number): Reported {
  const message = problemsMessage(problems);
  const reported = reportFalse(previous, VALID_CONDITION, INVALID_SPEC_REASON, message, `the agent cannot act on this spec: ${message}`, generation, now);
  return { ...reported, status: { ...reported.status, observedGeneration: generation } };
}

/**
 * The status after the API server answered 403 to `write` in `namespace`: the status it had, with `Authorized=False`
 * (reason `Forbidden`) naming the verb and resource the agent lacks, and the `Forbidden` Warning Event when that is
 * new. The message names no object, so retries of the same forbidden write, whichever pod they touch, neither rewrite
 * the status nor record another Event. The next status the planner writes has no such condition: a reconcile whose
 * writes went through clears it.
 */
export function forbiddenStatus(previous: ExtendedDeploymentStatus | undefined, write: ApiWrite, namespace: string, generation: number, now: number): Reported {
  const message = forbiddenMessage(write, namespace);
  return reportFalse(previous, AUTHORIZED_CONDITION, FORBIDDEN_REASON, message, message, generation, now);
}

/** What a 403 to `write` means for the operator (`namespace` undefined for a cluster-scoped object). */
export function forbiddenMessage(write: ApiWrite, namespace: string | undefined): string {
  const where = namespace === undefined ? '' : ` in namespace ${namespace}`;
  return `the API server forbids the agent to ${write.verb} ${write.resource}${where}; it retries with backoff. Grant it in the agent's ClusterRole`;
}

/**
 * The status while the API server answers 403 to reads the agent's caches depend on (`reads`, one or more): the status
 * it had, with `Authorized=False` (reason `Forbidden`) naming their resources, and the `Forbidden` Warning Event when that is new.
 * A cache that can no longer list or watch stops following the cluster, so the agent acts on nothing meanwhile: the
 * message says so. The next status the planner writes, once the reads are allowed again, has no such condition.
 */
export function forbiddenReadStatus(previous: ExtendedDeploymentStatus | undefined, reads: readonly ApiRead[], generation: number, now: number): Reported {
  // Both verbs, whichever was refused: an informer needs both, and a message that flips between them (a watch refused,
  // then the relist) would be reported again.
  const resources = [...new Set(reads.map((r) => r.resource))].join(', ');
  const message = `the API server forbids the agent to list and watch ${resources}; its caches no longer follow the cluster, so it acts on no ExtendedDeployment until it may. Grant it in the agent's ClusterRole (or Role)`;
  return reportFalse(previous, AUTHORIZED_CONDITION, FORBIDDEN_REASON, message, message, generation, now);
}
