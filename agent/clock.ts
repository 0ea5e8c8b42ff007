/** Cancels a timer set with {@link Clock.setTimer}. */
export type CancelTimer = () => void;

/**
 * Time as the agent's queue and backoffs see it. Injected so that tests drive time by hand (see FakeClock) instead of
 * sleeping and asserting on durations.
 */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Runs `fn` once after `ms` milliseconds. */
  setTimer(ms: number, fn: () => void): CancelTimer;
}

/** The real clock. Timers are unref'd: a pending retry must never keep a stopped process alive. */
export const realClock: Clock = {
  now: () => Date.now(),
  setTimer(ms, fn) {
    const timer = setTimeout(fn, Math.max(0, ms));
    timer.unref();
    return () => clearTimeout(timer);
  },
};

/** A clock that moves only when told to. Due timers run in order of due time, then of creation. */
export class FakeClock implements Clock {
  private time: number;
  private serial = 0;
  private readonly timers = new Map<number, { at: number; fn: () => void }>();

  constructor(start = Date.UTC(2026, 0, 1)) {
    this.time = start;
  }

  now(): number {
    return this.time;
  }

  setTimer(ms: number, fn: () => void): CancelTimer {
    const id = this.serial++;
    this.timers.set(id, { at: this.time + Math.max(0, ms), fn });
    return () => this.timers.delete(id);
  }

  /** Timers not yet run. */
  pending(): number {
    return this.timers.size;
  }

  /** Moves time forward by `ms`, running every timer that falls due on the way (also timers those timers set). */
  advance(ms: number): void {
    const until = this.time + ms;
    for (;;) {
      let next: [number, { at: number; fn: () => void }] | undefined;
      for (const entry of this.timers) if (entry[1].at <= until && (!next || entry[1].at < next[1].at)) next = entry;
      if (!next) break;
      this.timers.delete(next[0]);
      this.time = Math.max(this.time, next[1].at);
      next[1].fn();
    }
    this.time = until;
  }
}
