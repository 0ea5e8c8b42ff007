import { describe, expect, it } from 'vitest';
import { backoffDelay } from './backoff.js';

const options = { baseMs: 500, capMs: 30_000 };

describe('backoffDelay', () => {
  it('doubles per attempt and stays within [d/2, d]', () => {
    expect([0, 1, 2, 3].map((a) => backoffDelay(a, options, () => 1))).toEqual([500, 1000, 2000, 4000]);
    expect([0, 1, 2, 3].map((a) => backoffDelay(a, options, () => 0))).toEqual([250, 500, 1000, 2000]);
  });

  it('is capped, also for huge attempt counts', () => {
    expect(backoffDelay(6, options, () => 1)).toBe(30_000);
    expect(backoffDelay(10_000, options, () => 1)).toBe(30_000);
    expect(backoffDelay(10_000, options, () => 0)).toBe(15_000);
  });
});
