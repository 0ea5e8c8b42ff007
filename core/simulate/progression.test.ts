import { describe, expect, it } from 'vitest';
import { continued, split, stepBetween } from './progression.js';

const at = (k: number) => ({
  name: `web-a-${String(7 + k).padStart(12, '0')}`,
  since: new Date(Date.UTC(2026, 0, 1) + k * 6_005).toISOString(),
  message: `group ${3 + k} of 1000 started`,
  replicas: 1_001,
  ranges: [[10 + k, 1_000]],
});

describe('progressions of JSON values', () => {
  it('continues values whose numbers (in names, times, messages) move by one step', () => {
    const step = stepBetween(split(at(0)), split(at(1)));
    expect(step).toBeDefined();
    expect(stepBetween(split(at(1)), split(at(2)))).toEqual(step);
    expect(continued(at(2), step ?? [], 500)).toEqual(at(502));
  });

  it('tells values of different shapes apart', () => {
    expect(stepBetween(split({ a: 'x1' }), split({ a: 'y1' }))).toBeUndefined();
    expect(stepBetween(split([1]), split([1, 2]))).toBeUndefined();
    expect(stepBetween(split({ a: '01' }), split({ a: '1' }))).toBeUndefined();
  });

  it('refuses a continuation that a count or a padded serial cannot hold', () => {
    expect(continued({ n: 2 }, [-1], 3)).toBeUndefined();
    expect(continued({ name: 'p-98' }, [1], 1)).toEqual({ name: 'p-99' });
    expect(continued({ name: 'p-098' }, [1], 902)).toBeUndefined();
  });
});
