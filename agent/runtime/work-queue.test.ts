import { describe, expect, it } from 'vitest';
import { FakeClock } from './clock.js';
import { BucketRateLimiter, ItemExponentialFailureRateLimiter, MaxOfRateLimiter, defaultControllerRateLimiter } from './rate-limiter.js';
import { WorkQueue } from './work-queue.js';

/** Resolves after every pending promise callback has run (no timers involved). */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

function queue(clock = new FakeClock()) {
  return { clock, q: new WorkQueue({ clock, rateLimiter: defaultControllerRateLimiter(clock) }) };
}

describe('WorkQueue', () => {
  it('reports how long each key waited in the queue, from the add that queued it (or made it dirty) to get', async () => {
    const clock = new FakeClock();
    const waits: number[] = [];
    const q = new WorkQueue({ clock, onWait: (ms) => waits.push(ms) });
    q.add('ns/a');
    clock.advance(250);
    q.add('ns/a'); // already queued: still counted from the first add
    q.add('ns/b');
    clock.advance(50);
    expect(await q.get()).toBe('ns/a');
    expect(await q.get()).toBe('ns/b');
    expect(waits).toEqual([300, 50]);
    q.add('ns/a'); // dirty while in flight: queued again at done, counted from this add
    clock.advance(40);
    q.done('ns/a');
    clock.advance(10);
    expect(await q.get()).toBe('ns/a');
    expect(waits).toEqual([300, 50, 50]);
  });

  it('hands a key whose delay ran out before keys queued by events, and moves a queued or in-flight key ahead when it becomes due', async () => {
    const { clock, q } = queue();
    q.add('ns/e1');
    q.add('ns/e2');
    q.addAfter('ns/d', 100);
    clock.advance(100);
    expect([await q.get(), await q.get(), await q.get()]).toEqual(['ns/d', 'ns/e1', 'ns/e2']);
    for (const key of ['ns/d', 'ns/e1', 'ns/e2']) q.done(key);
    // Queued by an event, then due: it moves ahead.
    q.add('ns/e3');
    q.add('ns/x');
    q.addAfter('ns/x', 50);
    clock.advance(50);
    expect([await q.get(), await q.get()]).toEqual(['ns/x', 'ns/e3']);
    for (const key of ['ns/x', 'ns/e3']) q.done(key);
    // Due while a worker has it: queued ahead once that worker is done.
    q.add('ns/y');
    expect(await q.get()).toBe('ns/y');
    q.addAfter('ns/y', 10);
    q.add('ns/e4');
    clock.advance(10);
    q.done('ns/y');
    expect([await q.get(), await q.get()]).toEqual(['ns/y', 'ns/e4']);
    expect(q.len()).toBe(0);
  });

  it('hands keys out in order and holds a queued key once', async () => {
    const { q } = queue();
    q.add('ns/a');
    q.add('ns/b');
    q.add('ns/a');
    expect(q.len()).toBe(2);
    expect(await q.get()).toBe('ns/a');
    expect(await q.get()).toBe('ns/b');
    expect(q.len()).toBe(0);
  });

  it('never hands one key to two workers: re-added while processing, it comes back after done', async () => {
    const { q } = queue();
    q.add('ns/a');
    const key = await q.get();
    expect(key).toBe('ns/a');
    q.add('ns/a');
    q.add('ns/a');
    expect(q.len()).toBe(0); // not queued while in flight
    let second: string | undefined = 'pending';
    void q.get().then((k) => (second = k));
    await settle();
    expect(second).toBe('pending'); // a second worker waits instead of getting ns/a
    q.done('ns/a');
    await settle();
    expect(second).toBe('ns/a'); // processed again, exactly once
    expect(q.len()).toBe(0);
  });

  it('does not queue a key again on done when nobody added it meanwhile', async () => {
    const { q } = queue();
    q.add('ns/a');
    await q.get();
    q.done('ns/a');
    expect(q.len()).toBe(0);
  });

  it('wakes one waiting worker per added key', async () => {
    const { q } = queue();
    const got: (string | undefined)[] = [];
    void q.get().then((k) => got.push(k));
    void q.get().then((k) => got.push(k));
    await settle();
    expect(got).toEqual([]);
    q.add('ns/a');
    await settle();
    expect(got).toEqual(['ns/a']);
    q.add('ns/b');
    await settle();
    expect(got).toEqual(['ns/a', 'ns/b']);
  });

  it('addAfter queues the key when its time comes, keeping the earlier of two delays', () => {
    const { q, clock } = queue();
    q.addAfter('ns/a', 1000);
    q.addAfter('ns/a', 5000); // later: ignored
    q.addAfter('ns/b', 5000);
    q.addAfter('ns/b', 2000); // earlier: replaces
    expect(q.delayed()).toBe(2);
    clock.advance(999);
    expect(q.len()).toBe(0);
    clock.advance(1);
    expect(q.len()).toBe(1);
    clock.advance(1000);
    expect(q.len()).toBe(2);
    clock.advance(10_000);
    expect(q.len()).toBe(2); // the replaced timer of ns/b never fires
    expect(q.delayed()).toBe(0);
  });

  it('addAfter never queues a key before its time, even when the timer fires early', () => {
    // Node's timers count whole milliseconds of the event loop's time and may fire early.
    const clock = new FakeClock();
    const early: typeof clock = Object.create(clock) as FakeClock;
    early.setTimer = (ms, fn) => clock.setTimer(ms > 3 ? ms - 3 : ms, fn);
    const q = new WorkQueue({ clock: early });
    q.addAfter('ns/a', 1000);
    clock.advance(997);
    expect(q.len()).toBe(0);
    expect(q.delayed()).toBe(1);
    clock.advance(2);
    expect(q.len()).toBe(0);
    clock.advance(1);
    expect(q.len()).toBe(1);
    expect(q.delayed()).toBe(0);
  });

  it('addAfter counts on the monotonic clock: a step of the wall clock neither hastens nor delays a key', () => {
    const { q, clock } = queue();
    q.addAfter('ns/a', 1000);
    clock.stepWall(-3_600_000);
    q.addAfter('ns/a', 2000); // later on the monotonic clock, however the wall clock moved: ignored
    clock.advance(1000);
    expect(q.len()).toBe(1);
  });

  it('addAt queues the key at an instant of the wall clock, within an open batch too; a passed instant adds nothing', async () => {
    const { clock, q } = queue();
    // A pod shown Ready 30 ms before it turns available: the batch its event opened would end 70 ms after that.
    q.addBatched('ns/a', 100);
    q.addAt('ns/a', clock.now() + 30);
    clock.advance(29);
    expect(q.len()).toBe(0);
    clock.advance(1);
    expect(await q.get()).toBe('ns/a');
    q.done('ns/a');
    clock.advance(100);
    expect(q.len()).toBe(0);
    // Passed (a pod that has counted as available for a while): no wake; its event's batch looks at it.
    q.addAt('ns/b', clock.now());
    q.addAt('ns/b', clock.now() - 1_000);
    q.addAt('ns/b', clock.now() - 1_000, 1_000);
    expect([q.len(), q.delayed()]).toEqual([0, 0]);
  });

  it('addAt queues a key whose instant passed less than lateMs ago at once, as due: ahead of event keys, not at the end of its batch', async () => {
    const { clock, q } = queue();
    q.add('ns/event');
    // The event that shows a pod Ready came 170 ms after the instant it turned available, and opened a batch.
    q.addBatched('ns/late', 100);
    q.addAt('ns/late', clock.now() - 170, 2_000);
    expect([q.len(), q.delayed()]).toEqual([2, 0]);
    expect(await q.get()).toBe('ns/late');
    expect(await q.get()).toBe('ns/event');
  });

  it('addBatched collapses a burst of events into one key, queued when the batch ends, behind due keys', async () => {
    const { clock, q } = queue();
    q.addBatched('ns/a', 200);
    clock.advance(50);
    q.addBatched('ns/a', 200); // within the batch: no new timer, the first one still ends it
    expect(q.len()).toBe(0);
    clock.advance(150);
    expect(q.len()).toBe(1);
    q.add('ns/e');
    q.addAfter('ns/t', 10);
    clock.advance(10);
    // A timer's key is due and goes first; a batch's key queues like an event's, in the order they came.
    expect([await q.get(), await q.get(), await q.get()]).toEqual(['ns/t', 'ns/a', 'ns/e']);
    for (const key of ['ns/t', 'ns/a', 'ns/e']) q.done(key);
    // Already queued: the queued look reads the caches after the event, so no batch opens.
    q.add('ns/b');
    q.addBatched('ns/b', 200);
    expect(await q.get()).toBe('ns/b');
    q.done('ns/b');
    clock.advance(200);
    expect(q.len()).toBe(0);
  });

  it('addBatched while the key is in flight looks again after the batch; a key handed out ends its open batch', async () => {
    const { clock, q } = queue();
    q.add('ns/a');
    expect(await q.get()).toBe('ns/a');
    // The look in flight may have read the caches before this event: the key is looked at again.
    q.addBatched('ns/a', 200);
    clock.advance(200);
    q.done('ns/a');
    expect(await q.get()).toBe('ns/a');
    q.done('ns/a');
    // A batch open when the key is handed out for another reason ends there: that look comes after the event.
    q.addBatched('ns/c', 200);
    q.addAfter('ns/c', 10);
    clock.advance(10);
    expect(await q.get()).toBe('ns/c');
    q.done('ns/c');
    clock.advance(200);
    expect(q.len()).toBe(0);
    // After shutDown an open batch queues nothing.
    q.addBatched('ns/d', 200);
    q.shutDown();
    clock.advance(200);
    expect(await q.get()).toBeUndefined();
  });

  it('addAfter with no delay adds at once', () => {
    const { q } = queue();
    q.addAfter('ns/a', 0);
    expect(q.len()).toBe(1);
  });

  it('backs off per key on failure (5 ms doubling) and forgets on success', async () => {
    const { q, clock } = queue();
    const delays: number[] = [];
    for (let i = 0; i < 5; i++) {
      q.addRateLimited('ns/a');
      const before = clock.now();
      // Find the moment the key becomes queued, 1 ms at a time (deterministic: the fake clock only moves here).
      while (q.len() === 0) clock.advance(1);
      delays.push(clock.now() - before);
      expect(await q.get()).toBe('ns/a');
      q.done('ns/a');
    }
    expect(delays).toEqual([5, 10, 20, 40, 80]);
    expect(q.numRequeues('ns/a')).toBe(5);
    q.forget('ns/a');
    expect(q.numRequeues('ns/a')).toBe(0);
    q.addRateLimited('ns/a');
    clock.advance(4);
    expect(q.len()).toBe(0);
    clock.advance(1);
    expect(q.len()).toBe(1);
  });

  it('waits at least as long as asked (a Retry-After) when that is longer than the backoff', () => {
    const { q, clock } = queue();
    q.addRateLimited('ns/a', 2000);
    clock.advance(1999);
    expect(q.len()).toBe(0);
    clock.advance(1);
    expect(q.len()).toBe(1);
    expect(q.numRequeues('ns/a')).toBe(1);
  });

  it('keeps backoffs of different keys apart', () => {
    const { q, clock } = queue();
    for (let i = 0; i < 3; i++) q.addRateLimited('ns/a'); // ns/a waits 5 ms (the earliest of 5, 10, 20)
    q.addRateLimited('ns/b');
    expect(q.numRequeues('ns/a')).toBe(3);
    expect(q.numRequeues('ns/b')).toBe(1);
    clock.advance(5);
    expect(q.len()).toBe(2);
  });

  it('after shutDown ignores adds, hands out what is left, then reports the end', async () => {
    const { q, clock } = queue();
    q.add('ns/a');
    q.addAfter('ns/late', 100);
    q.shutDown();
    q.add('ns/b');
    q.addRateLimited('ns/c');
    clock.advance(1000);
    expect(q.shuttingDown()).toBe(true);
    expect(await q.get()).toBe('ns/a');
    expect(await q.get()).toBeUndefined();
    expect(clock.pending()).toBe(0); // delayed keys were dropped with their timers
  });

  it('shutDown(discardQueued) drops keys not yet handed out, also those re-added while in flight', async () => {
    const { q } = queue();
    q.add('ns/a');
    q.add('ns/b');
    expect(await q.get()).toBe('ns/a');
    q.add('ns/a');
    q.shutDown(true);
    expect(q.len()).toBe(0);
    q.done('ns/a');
    expect(q.len()).toBe(0);
    expect(await q.get()).toBeUndefined();
  });

  it('releases workers blocked in get on shutDown', async () => {
    const { q } = queue();
    const got: (string | undefined)[] = [];
    void q.get().then((k) => got.push(k));
    void q.get().then((k) => got.push(k));
    await settle();
    q.shutDown();
    await settle();
    expect(got).toEqual([undefined, undefined]);
  });

  it('shutDownWithDrain resolves only after the keys in flight and the queued ones are done', async () => {
    const { q } = queue();
    q.add('ns/a');
    q.add('ns/b');
    const a = await q.get();
    q.add('ns/a'); // dirty while in flight: processed again after done, even during the drain
    let drained = false;
    const drain = q.shutDownWithDrain().then(() => (drained = true));
    await settle();
    expect(drained).toBe(false);
    expect(await q.get()).toBe('ns/b');
    q.done(a ?? '');
    await settle();
    expect(drained).toBe(false); // ns/b in flight, ns/a queued again
    q.done('ns/b');
    expect(await q.get()).toBe('ns/a');
    await settle();
    expect(drained).toBe(false);
    q.done('ns/a');
    await drain;
    expect(drained).toBe(true);
    expect(await q.get()).toBeUndefined();
  });

  it('shutDownWithDrain of an idle queue resolves at once', async () => {
    const { q } = queue();
    await q.shutDownWithDrain();
    expect(q.shuttingDown()).toBe(true);
  });
});

describe('ItemExponentialFailureRateLimiter', () => {
  it('doubles from the base up to the cap', () => {
    const limiter = new ItemExponentialFailureRateLimiter(5, 1_000_000);
    const delays = Array.from({ length: 30 }, () => limiter.when('k'));
    expect(delays.slice(0, 4)).toEqual([5, 10, 20, 40]);
    expect(delays[17]).toBe(5 * 2 ** 17); // 655 360 ms, still under the cap
    expect(delays[18]).toBe(1_000_000);
    expect(delays[29]).toBe(1_000_000);
    expect(limiter.numRequeues('k')).toBe(30);
  });

  it('stays finite for very many failures', () => {
    const limiter = new ItemExponentialFailureRateLimiter(5, 1_000_000);
    let last = 0;
    for (let i = 0; i < 2000; i++) last = limiter.when('k');
    expect(last).toBe(1_000_000);
  });
});

describe('BucketRateLimiter', () => {
  it('lets a burst through, then paces at qps, and refills with time', () => {
    const clock = new FakeClock();
    const limiter = new BucketRateLimiter(clock, 10, 3);
    expect([limiter.when(), limiter.when(), limiter.when()]).toEqual([0, 0, 0]);
    expect(limiter.when()).toBe(100); // one token is owed: 1/10 s
    expect(limiter.when()).toBe(200); // two owed
    clock.advance(1000); // +10 tokens: debt of 2 paid, 3 (the burst) left
    expect([limiter.when(), limiter.when(), limiter.when()]).toEqual([0, 0, 0]);
    expect(limiter.when()).toBe(100);
  });

  it('is shared by all keys', () => {
    const clock = new FakeClock();
    const limiter = new BucketRateLimiter(clock, 1, 1);
    expect(limiter.when()).toBe(0);
    expect(limiter.when()).toBe(1000);
  });
});

describe('MaxOfRateLimiter', () => {
  it('returns the longest delay and forgets in every limiter', () => {
    const clock = new FakeClock();
    const limiter = new MaxOfRateLimiter(new ItemExponentialFailureRateLimiter(5, 1_000_000), new BucketRateLimiter(clock, 1, 2));
    expect(limiter.when('a')).toBe(5); // bucket: 0
    expect(limiter.when('b')).toBe(5); // bucket: 0 (second token)
    expect(limiter.when('a')).toBe(1000); // bucket owes 1 s > 10 ms
    expect(limiter.numRequeues('a')).toBe(2);
    limiter.forget('a');
    expect(limiter.numRequeues('a')).toBe(0);
  });
});
