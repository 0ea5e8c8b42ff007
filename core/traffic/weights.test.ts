import { describe, expect, it } from 'vitest';
import { canaryShare, revisionWeights, WEIGHT_TOTAL, type RevisionEndpoints } from './weights.js';

const canary = (revision: string, ready: number, over: Partial<RevisionEndpoints> = {}): RevisionEndpoints => ({ revision, ready, target: true, ...over });
const stable = (revision: string, ready: number, over: Partial<RevisionEndpoints> = {}): RevisionEndpoints => ({ revision, ready, target: false, ...over });

describe('canaryShare', () => {
  it.each([
    ['before the first group', [1, 5, 25.5], 0, 3, 10, 0],
    ['group 1: steps[0]', [1, 5, 25.5], 1, 3, 10, 100],
    ['group 3: steps[2], 0.01 resolution', [1, 5, 25.5], 3, 3, 10, 2550],
    ['past the steps: the Ready share when above the last step', [1, 5, 25.5], 4, 3, 10, 3000],
    ['past the steps: never below the last step', [1, 5, 25.5], 4, 1, 10, 2550],
    ['no steps: the Ready share', undefined, 2, 1, 4, 2500],
    ['no steps, every Ready pod new', undefined, 5, 6, 6, 10000],
    ['no steps, no Ready pod', undefined, 1, 0, 0, 0],
    ['no steps, rounded to the nearest unit', undefined, 1, 1, 3, 3333],
    ['empty steps: the Ready share', [], 1, 1, 4, 2500],
  ])('%s', (_, steps, group, readyTarget, readyAll, expected) => {
    expect(canaryShare(steps, { group, readyTarget, readyAll })).toBe(expected);
  });

  it('scales to another route total', () => {
    expect(canaryShare([5], { group: 1, readyTarget: 0, readyAll: 0 }, 100)).toBe(5);
  });
});

describe('revisionWeights', () => {
  it.each([
    ['canary and stable, 5 %', [canary('new', 1), stable('old', 9)], 500, [500, 9500]],
    ['canary without Ready endpoints: its share goes to the stable side', [canary('new', 0), stable('old', 9)], 2500, [0, 10000]],
    ['stable without Ready endpoints: the canary takes everything', [canary('new', 3), stable('old', 0)], 2500, [10000, 0]],
    ['the stable side split by Ready pods', [canary('new', 1), stable('old1', 3), stable('old2', 1)], 2000, [2000, 6000, 2000]],
    [
      'the canary side split by Ready pods (regions with their own revisions)',
      [canary('amd', 2), canary('arm', 1), stable('old', 5)],
      3000,
      [2000, 1000, 7000],
    ],
    ['largest remainder, ties in revision order', [canary('c', 1), canary('a', 1), canary('b', 1)], 10000, [3333, 3334, 3333]],
    [
      'a leaving revision drops to 0, the other stable revision takes its share',
      [canary('new', 2), stable('old1', 2, { leaving: true }), stable('old2', 2)],
      5000,
      [5000, 0, 5000],
    ],
    ['every stable revision leaving: the canary takes everything', [canary('new', 2), stable('old', 2, { leaving: true })], 5000, [10000, 0]],
    [
      'every revision with endpoints leaving: they keep serving rather than leave no backend',
      [canary('new', 0), stable('old', 2, { leaving: true })],
      5000,
      [0, 10000],
    ],
    ['no Ready endpoint anywhere: nothing to send to', [canary('new', 0), stable('old', 0)], 5000, [0, 0]],
    ['a share above the total is capped', [canary('new', 1), stable('old', 1)], 12000, [10000, 0]],
    ['one revision only', [stable('old', 4)], 0, [10000]],
  ])('%s', (_, revisions, share, expected) => {
    const weights = revisionWeights(revisions, share);
    expect(weights.map((w) => w.revision)).toEqual(revisions.map((r) => r.revision));
    expect(weights.map((w) => w.weight)).toEqual(expected);
  });

  it('adds up to the total and gives no weight to a revision without endpoints, over a grid of inputs', () => {
    for (const share of [0, 1, 333, 5000, 9999, 10000]) {
      for (const readyNew of [0, 1, 2, 7]) {
        for (const readyOld1 of [0, 1, 5]) {
          for (const readyOld2 of [0, 3]) {
            const revisions = [canary('new', readyNew), stable('old1', readyOld1), stable('old2', readyOld2)];
            const weights = revisionWeights(revisions, share);
            const sum = weights.reduce((s, w) => s + w.weight, 0);
            expect(sum).toBe(readyNew + readyOld1 + readyOld2 > 0 ? WEIGHT_TOTAL : 0);
            weights.forEach((w, i) => {
              if ((revisions[i]?.ready ?? 0) === 0) expect(w.weight).toBe(0);
            });
          }
        }
      }
    }
  });
});
