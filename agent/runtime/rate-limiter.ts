import type { Clock } from './clock.js';

/**
 * Decides how long a key waits before it is retried (client-go's workqueue.RateLimiter). `when` records a failure
 * and returns the delay in ms; `forget` clears the key's history once it succeeded.
 */
export interface RateLimiter {
  when(key: string): number;
  forget(key: string): void;
  numRequeues(key: string): number;
}

/**
 * Per-key exponential backoff: base × 2^failures, capped. With client-go's defaults (5 ms → 1000 s) a key that keeps
 * failing is retried quickly at first and about every 17 minutes in the end, so one broken object cannot keep the
 * agent busy.
 */
export class ItemExponentialFailureRateLimiter implements RateLimiter {
  private readonly failures = new Map<string, number>();

  constructor(
    private readonly baseMs = 5,
    private readonly maxMs = 1_000_000,
  ) {}

  when(key: string): number {
    const n = this.failures.get(key) ?? 0;
    this.failures.set(key, n + 1);
    // 2^n overflows to Infinity long after the cap applies; Math.min keeps the result finite.
    return Math.min(this.maxMs, this.baseMs * 2 ** n);
  }

  forget(key: string): void {
    this.failures.delete(key);
  }

  numRequeues(key: string): number {
    return this.failures.get(key) ?? 0;
  }
}

/**
 * A global token bucket (golang.org/x/time/rate semantics): `burst` requeues at once, then `qps` per second, whatever
 * the key. It caps the agent's retry load on the API server when many objects fail together.
 */
export class BucketRateLimiter implements RateLimiter {
  private tokens: number;
  private last: number;

  constructor(
    private readonly clock: Clock,
    private readonly qps = 10,
    private readonly burst = 100,
  ) {
    this.tokens = burst;
    this.last = clock.now();
  }

  when(): number {
    const now = this.clock.now();
    // Refill for the time elapsed, never above the burst; reservations may take the count below zero (a debt).
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.last) / 1000) * this.qps);
    this.last = now;
    this.tokens -= 1;
    return this.tokens >= 0 ? 0 : Math.ceil((-this.tokens / this.qps) * 1000);
  }

  forget(): void {
    // The bucket is shared by every key: nothing to forget per key.
  }

  numRequeues(): number {
    return 0;
  }
}

/** The longest delay of several limiters (client-go's MaxOfRateLimiter). */
export class MaxOfRateLimiter implements RateLimiter {
  private readonly limiters: readonly RateLimiter[];

  constructor(...limiters: RateLimiter[]) {
    this.limiters = limiters;
  }

  when(key: string): number {
    // Every limiter must see the failure (each keeps its own count), so no short-circuit here.
    return this.limiters.map((l) => l.when(key)).reduce((a, b) => Math.max(a, b), 0);
  }

  forget(key: string): void {
    for (const l of this.limiters) l.forget(key);
  }

  numRequeues(key: string): number {
    return this.limiters.map((l) => l.numRequeues(key)).reduce((a, b) => Math.max(a, b), 0);
  }
}

/** client-go's DefaultControllerRateLimiter: per-key 5 ms → 1000 s, and 10 qps with a burst of 100 overall. */
export function defaultControllerRateLimiter(clock: Clock): RateLimiter {
  return new MaxOfRateLimiter(new ItemExponentialFailureRateLimiter(5, 1_000_000), new BucketRateLimiter(clock, 10, 100));
}
