import { describe, expect, it } from 'vitest';
import { ownedEventBatchMs } from './event-batching.js';

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
