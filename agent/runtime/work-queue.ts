import { realClock, type CancelTimer, type Clock } from './clock.js';
import { defaultControllerRateLimiter, type RateLimiter } from './rate-limiter.js';

/**
 * A rate-limited work queue of keys with client-go's workqueue semantics, which sample-controller relies on:
 *
 * - a key waiting in the queue is held once, however often it is added (events collapse into one reconcile);
 * - a key is handed to one worker at a time: adding it while it is processed marks it dirty, and it is queued again
 *   when that worker calls `done`, so the newest state is always reconciled after the change;
 * - `addRateLimited` retries a failed key after the rate limiter's delay; `forget` resets the key's backoff;
 * - a key whose delay (`addAfter`) ran out is due: it goes ahead of keys added by events. A delay marks an instant at
 *   which the key has work (a pod turning available, a deadline, a retry), while most events change nothing; under a
 *   burst of events a due group start would otherwise wait behind them (controller-runtime's priority queue orders
 *   keys for the same reason);
 * - after `shutDown` adds are ignored and `get` returns the keys still queued, then `undefined`;
 *   `shutDownWithDrain` also waits until every key in flight is done.
 *
 * `K` is the only key type a queue accepts: a controller's own branded string, so that no other controller's keys
 * reach it. Keys are deduplicated as the strings they are.
 */
export class WorkQueue<K extends string = string> {
  private readonly queue: K[] = [];
  /** Keys due after a delay: handed out before `queue`. */
  private readonly dueQueue: K[] = [];
  /** Dirty keys that became due (queued in `dueQueue`, or to be when their worker is done). */
  private readonly due = new Set<K>();
  private readonly dirty = new Set<K>();
  private readonly processing = new Set<K>();
  private readonly waiting = new Map<K, { at: number; cancel: CancelTimer }>();
  /** Keys whose batch of events is open (addBatched): the timer that queues them. */
  private readonly batching = new Map<K, CancelTimer>();
  private readonly getters: (() => void)[] = [];
  private drainers: (() => void)[] = [];
  private shutting = false;
  /** When each dirty key was added (client-go's queue duration starts there). */
  private readonly addedAt = new Map<K, number>();
  private readonly clock: Clock;
  private readonly limiter: RateLimiter;
  private readonly onWait: ((ms: number) => void) | undefined;

  /** `onWait` is told, at each `get`, how long the key waited since the add that made it due (the queue latency metric). */
  constructor(options: { clock?: Clock; rateLimiter?: RateLimiter; onWait?: (ms: number) => void } = {}) {
    this.clock = options.clock ?? realClock;
    this.limiter = options.rateLimiter ?? defaultControllerRateLimiter(this.clock);
    this.onWait = options.onWait;
  }

  /** Queues `key` unless it is already queued; a key being processed is queued again once it is done. */
  add(key: K): void {
    this.enqueue(key, false);
  }

  private enqueue(key: K, due: boolean): void {
    if (this.shutting) return;
    if (this.dirty.has(key)) {
      if (!due || this.due.has(key)) return;
      // Already waiting behind events: it moves ahead (or will be queued ahead when its worker is done).
      this.due.add(key);
      const at = this.queue.indexOf(key);
      if (at >= 0) this.dueQueue.push(...this.queue.splice(at, 1));
      return;
    }
    this.dirty.add(key);
    if (due) this.due.add(key);
    this.addedAt.set(key, this.clock.now());
    if (this.processing.has(key)) return;
    (due ? this.dueQueue : this.queue).push(key);
    this.getters.shift()?.();
  }

  /**
   * Queues `key` `ms` after the first of a burst of events: events of the key that come meanwhile, or while it is queued
   * anyway, add nothing, so a burst is looked at once (the Job and EndpointSlice controllers batch pod events the same
   * way). A key handed to a worker ends its batch: that look reads the caches after every event of it.
   */
  addBatched(key: K, ms: number): void {
    if (this.shutting || this.dirty.has(key) || this.batching.has(key)) return;
    if (ms <= 0) return this.add(key);
    this.batching.set(
      key,
      this.clock.setTimer(ms, () => {
        this.batching.delete(key);
        this.enqueue(key, false);
      }),
    );
  }

  /**
   * Queues `key` after `ms`, never sooner. A key already waiting keeps the earlier of both times. Node's timers count
   * whole milliseconds of the event loop's time and may fire up to one early (measured: 99.84 ms for 100); one that
   * fires before its instant on the monotonic clock waits for the rest, so a look due when a pod turns available comes
   * after that instant, and the planner needs no slack of several milliseconds to be sure of it.
   */
  addAfter(key: K, ms: number): void {
    if (this.shutting) return;
    if (ms <= 0) return this.add(key);
    const at = this.clock.monotonic() + ms;
    const current = this.waiting.get(key);
    if (current && current.at <= at) return;
    current?.cancel();
    this.wakeAt(key, at);
  }

  /**
   * Queues `key` at the clock's time `at` (ms since the epoch, as `Clock.now`: an instant read from an object, such as
   * when a pod turns available), as addAfter does. An instant that passed less than `lateMs` ago queues it now, as
   * due: the event that told it came after it, and the look the key would have had at the instant should not wait for
   * that event's batch as well. An older instant adds nothing (the event that told it queues the key on its own).
   */
  addAt(key: K, at: number, lateMs = 0): void {
    const wait = at - this.clock.now();
    if (wait > 0) this.addAfter(key, wait);
    else if (-wait < lateMs) this.enqueue(key, true);
  }

  private wakeAt(key: K, at: number): void {
    const cancel = this.clock.setTimer(at - this.clock.monotonic(), () => {
      if (this.clock.monotonic() < at) return this.wakeAt(key, at);
      this.waiting.delete(key);
      this.enqueue(key, true);
    });
    this.waiting.set(key, { at, cancel });
  }

  /** Queues `key` after its rate-limited delay, or `atLeastMs` if longer: call this when processing it failed. */
  addRateLimited(key: K, atLeastMs = 0): void {
    if (this.shutting) return;
    this.addAfter(key, Math.max(this.limiter.when(key), atLeastMs));
  }

  /** Resets the backoff of `key`: call this when processing it succeeded. */
  forget(key: K): void {
    this.limiter.forget(key);
  }

  /** How often `key` was retried since it last succeeded. */
  numRequeues(key: K): number {
    return this.limiter.numRequeues(key);
  }

  /**
   * The next key to process, waiting until there is one; `undefined` once the queue is shut down and empty. The
   * caller owns the key until it calls `done(key)`.
   */
  async get(): Promise<K | undefined> {
    while (this.len() === 0 && !this.shutting) await new Promise<void>((resolve) => this.getters.push(resolve));
    const key = this.dueQueue.shift() ?? this.queue.shift();
    if (key === undefined) return undefined;
    this.processing.add(key);
    this.batching.get(key)?.();
    this.batching.delete(key);
    this.dirty.delete(key);
    this.due.delete(key);
    const added = this.addedAt.get(key);
    this.addedAt.delete(key);
    if (added !== undefined) this.onWait?.(this.clock.now() - added);
    return key;
  }

  /** Ends the processing of `key`; if it was added meanwhile, it is queued again. */
  done(key: K): void {
    this.processing.delete(key);
    if (this.dirty.has(key)) {
      (this.due.has(key) ? this.dueQueue : this.queue).push(key);
      this.getters.shift()?.();
    }
    this.checkDrained();
  }

  /** Keys queued (not waiting for a delay, not in flight): the queue depth metric. */
  len(): number {
    return this.queue.length + this.dueQueue.length;
  }

  /** Keys being processed right now. */
  inFlight(): number {
    return this.processing.size;
  }

  /** Keys waiting for a delay to pass. */
  delayed(): number {
    return this.waiting.size;
  }

  /** Whether shutDown was called. */
  shuttingDown(): boolean {
    return this.shutting;
  }

  /**
   * Stops accepting keys and drops delayed ones; workers blocked in `get` return what is left, then `undefined`.
   * With `discardQueued`, keys not yet handed out are dropped too (leadership lost: another agent owns them now);
   * keys in flight still finish.
   */
  shutDown(discardQueued = false): void {
    this.shutting = true;
    if (discardQueued) {
      this.queue.length = 0;
      this.dueQueue.length = 0;
      this.due.clear();
      // A key added while in flight must not come back either.
      this.dirty.clear();
      this.addedAt.clear();
    }
    for (const { cancel } of this.waiting.values()) cancel();
    this.waiting.clear();
    for (const cancel of this.batching.values()) cancel();
    this.batching.clear();
    for (const wake of this.getters.splice(0)) wake();
    this.checkDrained();
  }

  /** Shuts down and resolves once every queued key has been handed out and every key in flight is done. */
  shutDownWithDrain(): Promise<void> {
    const drained = new Promise<void>((resolve) => this.drainers.push(resolve));
    this.shutDown();
    return drained;
  }

  private checkDrained(): void {
    if (!this.shutting || this.processing.size > 0 || this.len() > 0) return;
    const drainers = this.drainers;
    this.drainers = [];
    for (const resolve of drainers) resolve();
  }
}
