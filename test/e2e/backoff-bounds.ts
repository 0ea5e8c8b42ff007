// Request-count bounds derived from the agent's own retry policies, for the API-fault suite: how many times can the
// agent try within a window in which every try fails? The bounds run the agent's limiter and backoff code on a clock
// that moves only by the delays they return, so they follow the policies if those change.
import { backoffDelay } from '../../agent/runtime/backoff.js';
import { FakeClock } from '../../agent/runtime/clock.js';
import { INFORMER_BACKOFF } from '../../agent/runtime/informer.js';
import { defaultControllerRateLimiter } from '../../agent/runtime/rate-limiter.js';

/**
 * Most reconciles of one key within `windowMs` when each fails and only the work queue's rate-limited retries bring it
 * back: the first try, then one per limiter delay (per-key exponential, global bucket) that still fits in the window.
 */
export function maxRetriesWithin(windowMs: number): number {
  const clock = new FakeClock(0);
  const limiter = defaultControllerRateLimiter(clock);
  let tries = 1;
  let elapsed = 0;
  for (let delay = limiter.when('key'); elapsed + delay <= windowMs; delay = limiter.when('key')) {
    elapsed += delay;
    clock.advance(delay);
    tries += 1;
  }
  return tries;
}

/**
 * Most starts of one informer within `windowMs` when each start fails: the first, then one per restart delay that
 * fits, each delay at the low end of its jitter. A start is at most one LIST and one WATCH.
 */
export function maxInformerStartsWithin(windowMs: number): number {
  let starts = 1;
  let elapsed = 0;
  for (let attempt = 0; elapsed + backoffDelay(attempt, INFORMER_BACKOFF, () => 0) <= windowMs; attempt++) {
    elapsed += backoffDelay(attempt, INFORMER_BACKOFF, () => 0);
    starts += 1;
  }
  return starts;
}
