/** Exponential backoff settings. */
export interface BackoffOptions {
  /** First delay (ms). */
  readonly baseMs: number;
  /** Longest delay (ms). */
  readonly capMs: number;
}

/**
 * The delay before retry number `attempt` (from 0): base × 2^attempt, capped, then jittered into [d/2, d] so that
 * agents (or informers) that failed together do not retry together. `random` is injectable for tests.
 */
export function backoffDelay(attempt: number, options: BackoffOptions, random: () => number = Math.random): number {
  const exact = Math.min(options.capMs, options.baseMs * 2 ** Math.max(0, attempt));
  return Math.round(exact / 2 + (exact / 2) * random());
}
