import type { RevisionWeight } from './route.js';

/**
 * The weights the agent writes add up to this: 0.01 % resolution (Argo Rollouts cannot go below 1 %, argo-rollouts
 * #2657). Gateway API weights are proportional, not percentages, so any total works; a fixed one keeps status and
 * route readable as basis points.
 */
export const WEIGHT_TOTAL = 10_000;

/** One live revision as the weights see it. */
export interface RevisionEndpoints {
  readonly revision: string;
  /** Its Ready pods: the endpoints its Service has. */
  readonly ready: number;
  /** A revision the rollout goes to (a region's target revision): the canary side. The others are the stable side. */
  readonly target: boolean;
  /**
   * Every pod of it is to go (the rollout removes the last of them): its weight goes to 0 first, so that it drains for
   * drainSeconds before its pods leave (drain.ts).
   */
  readonly leaving?: boolean;
}

/** Where a rollout stands, as the canary share reads it. */
export interface StepPosition {
  /**
   * The group whose weight applies, from 1; 0 before the first group's pods are Ready. The planner passes the group in
   * progress once its pods are Ready, and the one before until then: weight goes to new pods only once they are Ready.
   */
  readonly group: number;
  /** Ready pods of the target revisions and of all revisions. */
  readonly readyTarget: number;
  readonly readyAll: number;
}

/**
 * The canary side's weight (out of `total`) at `position`: `steps[group - 1]` percent; for groups past the last step
 * (or without steps) the target revisions' share of Ready pods, never below the last step, so the weight never goes
 * back when the steps run out.
 */
export function canaryShare(steps: readonly number[] | undefined, position: StepPosition, total: number = WEIGHT_TOTAL): number {
  if (position.group <= 0) return 0;
  const step = steps?.[position.group - 1];
  if (step !== undefined) return Math.round((step * total) / 100);
  const last = steps && steps.length > 0 ? Math.round(((steps[steps.length - 1] ?? 0) * total) / 100) : 0;
  const ready = position.readyAll > 0 ? Math.round((position.readyTarget * total) / position.readyAll) : 0;
  return Math.min(total, Math.max(last, ready));
}

/** Splits `amount` over `items` in proportion to their Ready pods, by largest remainder (ties: revision order). */
function splitByReady(amount: number, items: readonly RevisionEndpoints[]): Map<string, number> {
  const out = new Map<string, number>();
  const sum = items.reduce((s, r) => s + r.ready, 0);
  if (items.length === 0 || sum === 0) return out;
  const shares = items.map((r) => ({ revision: r.revision, floor: Math.floor((amount * r.ready) / sum), rest: (amount * r.ready) % sum }));
  let left = amount - shares.reduce((s, x) => s + x.floor, 0);
  const order = [...shares].sort((a, b) => b.rest - a.rest || (a.revision < b.revision ? -1 : a.revision > b.revision ? 1 : 0));
  for (const share of order) {
    if (left === 0) break;
    share.floor++;
    left--;
  }
  for (const share of shares) out.set(share.revision, share.floor);
  return out;
}

/**
 * The weight of each revision (in input order), adding up to `total` whenever any revision has a Ready endpoint:
 *
 * - a revision without Ready endpoints never gets weight: the gateway would answer 503 for its whole share (measured
 *   with Traefik: 50/50 weights and no canary endpoint gave 200 × 503 out of 400), so its side's share goes to the
 *   other side;
 * - a leaving revision gets 0 while another revision can take the traffic;
 * - the canary side (target revisions) gets `share`, the stable side the rest; within a side the weight is split by
 *   Ready pods.
 *
 * With no Ready endpoint anywhere every weight is 0: there is nowhere to send traffic.
 */
export function revisionWeights(revisions: readonly RevisionEndpoints[], share: number, total: number = WEIGHT_TOTAL): RevisionWeight[] {
  const withEndpoints = revisions.filter((r) => r.ready > 0);
  const staying = withEndpoints.filter((r) => !r.leaving);
  // Every revision with endpoints is leaving: they keep serving rather than leave the route without a backend.
  const serving = staying.length > 0 ? staying : withEndpoints;
  const canary = serving.filter((r) => r.target);
  const stable = serving.filter((r) => !r.target);
  const canaryWeight = stable.length === 0 ? total : canary.length === 0 ? 0 : Math.min(total, Math.max(0, share));
  const weights = new Map([...splitByReady(canaryWeight, canary), ...splitByReady(total - canaryWeight, stable)]);
  return revisions.map((r) => ({ revision: r.revision, weight: weights.get(r.revision) ?? 0 }));
}
