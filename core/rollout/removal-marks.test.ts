import { describe, expect, it } from 'vitest';
import { MARKED_AT_ANNOTATION, POD_DELETION_COST_ANNOTATION } from '../labels.js';
import { markAnnotations, OLD_MARK_COST, removalMarkCost, standingMarkCost } from './removal-marks.js';

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

describe('markAnnotations', () => {
  const pod = { region: 'a', pod: 'web-a-1', uid: 'u1' };
  const at = '2026-01-01T00:00:00Z';
  it.each([
    ['a mark for removal: its cost', { kind: 'markOld', ...pod, at, cost: -2147483647 } as const, '-2147483647', at],
    ['a hold: the cost that keeps the pod', { kind: 'holdOld', ...pod, at } as const, '100', at],
    ['an unmark: both removed', { kind: 'unmark', ...pod } as const, null, null],
  ])('%s', (_name, action, cost, markedAt) => {
    expect(markAnnotations(action)).toEqual({ [POD_DELETION_COST_ANNOTATION]: cost, [MARKED_AT_ANNOTATION]: markedAt });
  });
});
