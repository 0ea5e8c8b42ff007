import { describe, expect, it } from 'vitest';
import { keptOld, partitionPods } from './partition.js';

describe('partitionPods', () => {
  it.each([
    [undefined, 10, 0],
    [3, 10, 3],
    [12, 10, 10],
    ['30%', 10, 3],
    ['25%', 10, 3],
    ['1%', 2, 1],
    ['0%', 10, 0],
    ['100%', 7, 7],
    [2, 0, 0],
  ] as const)('%j of %i replicas keeps %i', (partition, replicas, kept) => {
    expect(partitionPods(partition, replicas)).toBe(kept);
  });
});

describe('keptOld', () => {
  it('keeps the partition within the desired count and the old pods left, and nothing in a region without old pods', () => {
    expect(keptOld({ partition: 3, desired: 10 }, 5)).toBe(3);
    expect(keptOld({ partition: 3, desired: 2 }, 5)).toBe(2);
    expect(keptOld({ partition: 3, desired: 10 }, 1)).toBe(1);
    expect(keptOld({ partition: 3, desired: 10 }, 0)).toBe(0);
    expect(keptOld({ desired: 10 }, 5)).toBe(0);
  });
});
