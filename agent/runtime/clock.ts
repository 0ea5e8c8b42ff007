/** Cancels a timer set with {@link Clock.setTimer}. */
export type CancelTimer = () => void;

/**
 * Time as the agent's queue and backoffs see it. Injected so that tests drive time by hand (see FakeClock) instead of
 * sleeping and asserting on durations.
 */
export interface Clock {
  /** Milliseconds since the epoch: for timestamps that are written down or compared with written ones. */
  now(): number;
  /**
   * Milliseconds from an arbitrary origin that only ever move forward at the rate of real time: for durations measured
   * inside this process (renew deadlines, lease expiry as this process observed it). An NTP step or a skewed wall
   * clock never stretches or shortens them.
   */
  monotonic(): number;
  /** Runs `fn` once after `ms` milliseconds. */
  setTimer(ms: number, fn: () => void): CancelTimer;
}

/** The real clock. Timers are unref'd: a pending retry must never keep a stopped process alive. */
export const realClock: Clock = {
  now: () => Date.now(),
  monotonic: () => performance.now(),
  setTimer(ms, fn) {
    const timer = setTimeout(fn, Math.max(0, ms));
    timer.unref();
    return () => clearTimeout(timer);
  },
};

/**
 * A clock that moves only when told to. Due timers run in order of due time, then of creation. `advance` moves both
 * the wall clock and the monotonic clock; `stepWall` moves the wall clock alone, as NTP or a skewed host does.
 */
export class FakeClock implements Clock {
  private time: number;
  private elapsed = 0;
  private serial = 0;
  private readonly timers = new Map<number, { at: number; fn: () => void }>();

  constructor(start = Date.UTC(2026, 0, 1)) {
    this.time = start;
  }

  now(): number {
    return this.time;
  }

  monotonic(): number {
    return this.elapsed;
  }

  /** Steps the wall clock by `ms` (either way) without time passing: no timer runs, `monotonic` does not move. */
  stepWall(ms: number): void {
    this.time += ms;
  }

  setTimer(ms: number, fn: () => void): CancelTimer {
    const id = this.serial++;
    this.timers.set(id, { at: this.elapsed + Math.max(0, ms), fn });
    return () => this.timers.delete(id);
  }

  /** Timers not yet run. */
  pending(): number {
    return this.timers.size;
  }

  /** Moves time forward by `ms`, running every timer that falls due on the way (also timers those timers set). */
  advance(ms: number): void {
    const until = this.elapsed + ms;
    for (;;) {
      let next: [number, { at: number; fn: () => void }] | undefined;
      for (const entry of this.timers) if (entry[1].at <= until && (!next || entry[1].at < next[1].at)) next = entry;
      if (!next) break;
      this.timers.delete(next[0]);
      this.moveTo(next[1].at);
      next[1].fn();
    }
    this.moveTo(until);
  }

  private moveTo(elapsed: number): void {
    if (elapsed <= this.elapsed) return;
    this.time += elapsed - this.elapsed;
    this.elapsed = elapsed;
  }
}
