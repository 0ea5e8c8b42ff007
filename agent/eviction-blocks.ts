import type { RolloutEvent } from '../core/rollout/planner.js';
import { backoffDelay, type BackoffOptions } from './runtime/backoff.js';
import { EvictionBlockedError } from './eviction.js';
import type { Logger } from './runtime/log.js';
import { MAX_REQUEUE_MS } from '../core/rollout/requeue.js';

/**
 * Retries of a reconcile held by a PodDisruptionBudget: 1 s doubling to MAX_REQUEUE_MS (30 s), jittered. Nothing the
 * agent watches announces that a budget allows a disruption again (it does not watch budgets), so the wait stays
 * short; the work queue's own backoff would grow to 17 minutes and hold the rollout that long after the budget opened.
 */
export const EVICTION_BLOCKED_BACKOFF: BackoffOptions = { baseMs: 1_000, capMs: MAX_REQUEUE_MS };

/** The Warning Event reason for an eviction a budget refused. */
export const EVICTION_BLOCKED_REASON = 'EvictionBlocked';

/** How a reconcile ended that a budget held: look again after `requeueAfterMs`. */
export interface BlockedResult {
  readonly outcome: 'blocked';
  readonly requeueAfterMs: number;
}

/**
 * Turns evictions refused by PodDisruptionBudgets into a held rollout instead of a failed reconcile. The pod is not
 * replaced, the reconcile ends `blocked` and is looked at again with its own backoff, and a Warning Event names the
 * budget and the pod: once per pod and refusal while the block lasts, not at every retry. Any other failure passes
 * through untouched.
 */
export class EvictionBlocks {
  /** key → retries so far, and the refusals already reported, while the key is blocked. */
  private readonly blocked = new Map<string, { attempt: number; reported: Set<string> }>();

  constructor(private readonly random: () => number = Math.random) {}

  /**
   * Runs `step` (the reconcile's actions) for `key`. Undefined when it completed, which ends the key's block; the
   * blocked result when a budget refused an eviction (after `record` got the Event); throws anything else.
   */
  async run<T>(
    key: string,
    object: T,
    step: () => Promise<void>,
    deps: { readonly record: (object: T, event: RolloutEvent) => void; readonly log: Logger },
  ): Promise<BlockedResult | undefined> {
    try {
      await step();
    } catch (error) {
      if (!(error instanceof EvictionBlockedError)) throw error;
      const state = this.blocked.get(key) ?? { attempt: 0, reported: new Set<string>() };
      this.blocked.set(key, state);
      const requeueAfterMs = backoffDelay(state.attempt++, EVICTION_BLOCKED_BACKOFF, this.random);
      const refusal = `${error.namespace}/${error.pod}: ${error.detail}`;
      if (!state.reported.has(refusal)) {
        state.reported.add(refusal);
        deps.record(object, { type: 'Warning', reason: EVICTION_BLOCKED_REASON, message: `${error.message}; the rollout waits and retries` });
      }
      deps.log.info('eviction blocked by a PodDisruptionBudget; retrying', {
        pod: error.pod,
        budget: error.budget,
        detail: error.detail,
        retryInMs: requeueAfterMs,
      });
      return { outcome: 'blocked', requeueAfterMs };
    }
    this.blocked.delete(key);
    return undefined;
  }

  /** Forgets a key (its object is gone). */
  forget(key: string): void {
    this.blocked.delete(key);
  }
}
