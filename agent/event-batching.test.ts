import { describe, expect, it } from 'vitest';
import { LATE_AVAILABILITY_MS, ownedEventBatchMs, wakeAtAvailability } from './event-batching.js';
import { FakeClock } from './runtime/clock.js';
import { WorkQueue } from './runtime/work-queue.js';

describe('ownedEventBatchMs', () => {
  const now = 1_000_000;
  it('collects a burst for 100 ms, 10 ms in the first 100 ms of a wait for a workload controller', () => {
    expect(ownedEventBatchMs(undefined, now)).toBe(100);
    expect(ownedEventBatchMs(now, now)).toBe(10);
    expect(ownedEventBatchMs(now - 99, now)).toBe(10);
    // A controller that has not answered within 100 ms is busy: its events stream, and are batched as anyone's.
    expect(ownedEventBatchMs(now - 100, now)).toBe(100);
  });
});

describe('wakeAtAvailability', () => {
  it('wakes the key just after the instant a pod turns available, at once when the event came after it, not for a pod available long ago', async () => {
    const clock = new FakeClock();
    const q = new WorkQueue({ clock });
    wakeAtAvailability(q, 'ns/ahead', clock.now() + 300);
    clock.advance(300);
    expect(q.len()).toBe(0);
    clock.advance(1);
    expect(await q.get()).toBe('ns/ahead');
    // Delivered 170 ms late: the look comes now, not after the event's 100 ms batch.
    wakeAtAvailability(q, 'ns/late', clock.now() - 170);
    expect(q.len()).toBe(1);
    expect(await q.get()).toBe('ns/late');
    // A pod that turned available before the window: its event is batched as any other.
    wakeAtAvailability(q, 'ns/old', clock.now() - LATE_AVAILABILITY_MS - 1);
    expect([q.len(), q.delayed()]).toEqual([0, 0]);
  });
});
