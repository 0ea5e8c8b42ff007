import { describe, expect, it } from 'vitest';
import { roundRobinCounts } from '../e2e/gateway-client.js';

describe('roundRobinCounts: a run of weighted round-robin picks against the exact shares', () => {
  const exact = { 'v1 200': 1800, 'v2 200': 200 };

  it.each([
    ['the exact shares', { 'v1 200': 1800, 'v2 200': 200 }],
    ['one pick moved to v1 at a period boundary', { 'v1 200': 1801, 'v2 200': 199 }],
    ['one pick moved to v2', { 'v1 200': 1799, 'v2 200': 201 }],
  ])('accepts %s', (_, counts) => {
    expect(roundRobinCounts(counts, exact)).toEqual(exact);
  });

  it.each([
    ['two picks off', { 'v1 200': 1802, 'v2 200': 198 }],
    ['an answer from a backend with no share', { 'v1 200': 1799, 'v2 200': 200, '- 503': 1 }],
    ['a missing answer', { 'v1 200': 1800, 'v2 200': 199 }],
    ['a backend missing', { 'v1 200': 2000 }],
  ])('returns the counts unchanged for %s', (_, counts) => {
    expect(roundRobinCounts(counts, exact)).toBe(counts);
  });
});
