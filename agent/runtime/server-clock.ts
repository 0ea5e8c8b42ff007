import type { CancelTimer, Clock } from './clock.js';

/** How long a response's evidence about the API server's clock is kept: long enough to narrow, short enough to follow drift. */
const SAMPLE_WINDOW_MS = 5 * 60_000;
/** The most samples kept (a busy agent sees thousands of responses a minute; a few hundred pin the offset down). */
const MAX_SAMPLES = 256;

interface OffsetBounds {
  /** The sample's place in the order the responses arrived. */
  readonly seq: number;
  /** When the sample was taken (monotonic). */
  readonly at: number;
  readonly low: number;
  readonly high: number;
}

/**
 * The API server's clock, as far as this process can tell. Every time the agent writes down (group start, approvals,
 * marks, swap times) is read back by whichever replica leads next; with each replica's own wall clock, a replica whose
 * clock is 30 s ahead would end a deadline 30 s early or trust a mark too soon. Each response's Date header (whole
 * seconds) was stamped between the request leaving and the response arriving, which bounds `server − monotonic` from
 * both sides; the bounds of the last few minutes' responses are intersected. `now()` is the local wall clock as long as
 * it lies within those bounds (a correct clock is never made worse by the header's coarse resolution), and the low
 * bound, the earliest the server's time can be, when the evidence proves it off: then it is anchored on the monotonic
 * clock, immune to the local wall clock being skewed or stepped, and never ahead of the server's. Ahead, a replica
 * would count a pod available (minReadySeconds) or a deadline passed before its time; while the evidence is still a
 * second wide (the first responses), the nearest bound of a clock far ahead is up to a second early. Until the first
 * response, it is the local wall clock.
 */
export class ServerClock implements Clock {
  /**
   * The samples of the window whose low bound no later sample's exceeds, oldest first (their lows fall): the first
   * holds the window's highest low bound. A sample a later one outdoes can never bound the window again.
   */
  private lows: OffsetBounds[] = [];
  /** Likewise for the high bounds (theirs rise): the first holds the window's lowest high bound. */
  private highs: OffsetBounds[] = [];
  private seq = 0;
  private bounds: { low: number; high: number } | undefined;

  constructor(private readonly local: Clock) {}

  now(): number {
    const local = this.local.now();
    if (!this.bounds) return local;
    const monotonic = this.local.monotonic();
    const offset = local - monotonic;
    return monotonic + (offset >= this.bounds.low && offset <= this.bounds.high ? offset : this.bounds.low);
  }

  monotonic(): number {
    return this.local.monotonic();
  }

  setTimer(ms: number, fn: () => void): CancelTimer {
    return this.local.setTimer(ms, fn);
  }

  /** How far this process's wall clock is proven off the server's (ms; positive: the server is ahead); 0 if not. */
  skewMs(): number {
    return this.now() - this.local.now();
  }

  /** One response: its Date header and the monotonic times the request was sent and its response received. */
  readonly observe = (serverDateMs: number, sentAt: number, receivedAt: number): void => {
    // The server stamped the header at a time in [date, date + 1 s) while the request was out, in [sentAt, receivedAt].
    const sample: OffsetBounds = { seq: this.seq++, at: receivedAt, low: serverDateMs - receivedAt, high: serverDateMs + 1000 - sentAt };
    // The window: the last MAX_SAMPLES samples, of the last SAMPLE_WINDOW_MS (a sliding minimum and maximum: each
    // response costs O(1) on average, where intersecting the whole window each time was a share of the agent's CPU).
    const stale = (s: OffsetBounds) => receivedAt - s.at > SAMPLE_WINDOW_MS || sample.seq - s.seq >= MAX_SAMPLES;
    const slide = (samples: OffsetBounds[], outdone: (s: OffsetBounds) => boolean) => {
      while (samples.length > 0 && stale(samples[0]!)) samples.shift();
      while (samples.length > 0 && outdone(samples[samples.length - 1]!)) samples.pop();
      samples.push(sample);
    };
    slide(this.lows, (s) => s.low <= sample.low);
    slide(this.highs, (s) => s.high >= sample.high);
    const low = this.lows[0]!.low;
    const high = this.highs[0]!.high;
    if (low <= high) {
      this.bounds = { low, high };
      return;
    }
    // Disjoint bounds mean the server's clock was stepped: keep only the newest evidence.
    this.lows = [sample];
    this.highs = [sample];
    this.bounds = { low: sample.low, high: sample.high };
  };
}
