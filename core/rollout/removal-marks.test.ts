import { describe, expect, it } from 'vitest';
import { OLD_MARK_COST, removalMarkCost, standingMarkCost } from './removal-marks.js';

describe('removalMarkCost', () => {
  it.each([
    ['-2147483648', -2147483648],
    ['-100', -100],
    ['-1', -1],
    ['0', undefined],
    ['100', undefined],
    ['-0', undefined],
    ['-007', undefined],
    ['-2147483649', undefined],
    ['-1.5', undefined],
    [' -5', undefined],
    ['', undefined],
    [undefined, undefined],
  ])('%j reads as %j', (annotation, cost) => {
    expect(removalMarkCost(annotation)).toBe(cost);
  });
});

describe('standingMarkCost', () => {
  it('is one above the highest old mark, one above the rollout’s own marks when there are none', () => {
    expect(standingMarkCost([])).toBe(OLD_MARK_COST + 1);
    expect(standingMarkCost([OLD_MARK_COST, OLD_MARK_COST])).toBe(OLD_MARK_COST + 1);
    expect(standingMarkCost([OLD_MARK_COST + 1, OLD_MARK_COST, OLD_MARK_COST + 7])).toBe(OLD_MARK_COST + 8);
    expect(standingMarkCost([-100])).toBe(-99);
  });

  it('is none where the old marks leave no negative cost above them', () => {
    expect(standingMarkCost([-2])).toBe(-1);
    expect(standingMarkCost([-1])).toBeUndefined();
  });
});
