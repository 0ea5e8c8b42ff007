import { describe, expect, it } from 'vitest';
import { distributeReplicas, type RegionShare } from './distribution.js';

const pct = (...values: (number | string | undefined)[]): RegionShare[] => values.map((replicas) => ({ replicas }));

describe('distributeReplicas', () => {
  it.each([
    // [name, total, regions, expected]
    ['integers are exact', 10, pct(3, 7), [3, 7]],
    ['upstream sample: replicas omitted is the sum of integers', undefined, pct(1, 1), [1, 1]],
    ['50%/50% of 5 is 3 + 2 (upstream gives 3 + 3 = 6)', 5, pct('50%', '50%'), [3, 2]],
    ['30%/70% of 10', 10, pct('30%', '70%'), [3, 7]],
    ['33/33/34 of 10 adds up (upstream gives 9)', 10, pct('33%', '33%', '34%'), [3, 3, 4]],
    ['50% of 7 and 50%: largest remainder, tie to the earlier', 7, pct('50%', '50%'), [4, 3]],
    ['0 replicas', 0, pct('50%', '50%'), [0, 0]],
    ['unset regions share evenly, remainder to the earliest', 10, pct(undefined, undefined, undefined), [4, 3, 3]],
    ['integer, percentage and unset together', 10, pct(2, '30%', undefined, undefined), [2, 3, 3, 2]],
    ['unset regions without spec.replicas get nothing', undefined, pct(2, undefined), [2, 0]],
    ['100% to one region, 0% to another', 4, pct('100%', '0%'), [4, 0]],
  ])('%s', (_name, total, regions, expected) => {
    const result = distributeReplicas(total, regions);
    expect(result).toEqual({ ok: true, total: expected.reduce((a, b) => a + b, 0), replicas: expected });
  });

  it.each([
    [
      'minimums first, then shares',
      6,
      [
        { replicas: '50%', minReplicas: 2 },
        { replicas: '30%', minReplicas: 2 },
        { replicas: '20%', minReplicas: 2 },
      ],
      [2, 2, 2],
    ],
    [
      'minimums satisfied, shares as usual',
      10,
      [
        { replicas: '50%', minReplicas: 2 },
        { replicas: '30%', minReplicas: 2 },
        { replicas: '20%', minReplicas: 2 },
      ],
      [5, 3, 2],
    ],
    ['a capped region leaves the rest to later regions', 10, [{ maxReplicas: 2 }, {}], [2, 8]],
    [
      'what caps leave goes up to every maximum in declared order',
      9,
      [{ replicas: '50%', maxReplicas: 3 }, { replicas: '50%', maxReplicas: 5 }, { maxReplicas: 10 }],
      [3, 5, 1],
    ],
    ['a minimum raises an unset region above its even share', 4, [{}, { minReplicas: 3 }], [1, 3]],
  ])('bounds: %s', (_name, total, regions, expected) => {
    expect(distributeReplicas(total, regions)).toEqual({ ok: true, total, replicas: expected });
  });

  it.each([
    ['percentages without spec.replicas', undefined, pct('50%', 1), 'spec.regions.0.replicas', '"50%" needs spec.replicas to take a share of'],
    ['percentages over 100%', 10, pct('60%', '50%'), 'spec.regions', 'percentages add up to 110%, more than 100%'],
    ['integers over spec.replicas', 10, pct(6, 5), 'spec.regions', 'integer replicas add up to 11, more than spec.replicas (10)'],
    [
      'all fixed but not summing to replicas',
      10,
      pct(3, '50%'),
      'spec.regions',
      'every region has a fixed count, but they add up to 8, not spec.replicas (10)',
    ],
    [
      'all percentages summing below 100%',
      10,
      pct('30%', '60%'),
      'spec.regions',
      'every region has a fixed count, but they add up to 9, not spec.replicas (10)',
    ],
    ['integer and percentage over replicas', 10, pct(5, '60%'), 'spec.regions', 'regions ask for 11 replicas, more than spec.replicas (10)'],
    [
      'minimums over the pool',
      3,
      [{ minReplicas: 2 }, { minReplicas: 2 }],
      'spec.regions',
      'minReplicas add up to 4, more than the 3 replicas these regions share',
    ],
    [
      'maximums under the pool',
      10,
      [{ maxReplicas: 2 }, { maxReplicas: 3 }],
      'spec.regions',
      'maxReplicas add up to 5, fewer than the 10 replicas these regions share',
    ],
    ['min above max', 10, [{ minReplicas: 5, maxReplicas: 2 }, {}], 'spec.regions.0.minReplicas', '5 exceeds maxReplicas 2'],
    ['integer below its minimum', 10, [{ replicas: 1, minReplicas: 2 }, {}], 'spec.regions.0.replicas', '1 is below minReplicas 2'],
  ])('rejects %s', (_name, total, regions, path, message) => {
    const result = distributeReplicas(total, regions);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.problems.map((p) => ({ path: p.path.join('.'), message: p.message }))).toContainEqual({ path, message });
  });

  it('sums exactly for every all-percentage split that adds up to 100%', () => {
    for (let total = 0; total <= 40; total++) {
      for (let a = 0; a <= 100; a += 7) {
        for (let b = 0; a + b <= 100; b += 11) {
          const result = distributeReplicas(total, pct(`${a}%`, `${b}%`, `${100 - a - b}%`));
          if (!result.ok) throw new Error(`${total} ${a} ${b}`);
          expect(result.replicas.reduce((x, y) => x + y, 0)).toBe(total);
        }
      }
    }
  });
});

describe('distributeReplicas: a total below the regions needs (the scale subresource)', () => {
  it.each<[string, number, RegionShare[], number[]]>([
    ['fixed counts shrink in proportion', 8, pct(6, 3, 3), [4, 2, 2]],
    ['the rest to the largest fractions (3.5, 1.75, 1.75 of 7)', 7, pct(6, 3, 3), [3, 2, 2]],
    ['ties to the earlier region (1.5 and 1.5 of 3)', 3, pct(2, 2), [2, 1]],
    ['a share of the rest gets nothing when nothing is left', 5, pct(4, 4, '20%', undefined), [3, 2, 0, 0]],
    ['minReplicas of the others are needs too', 6, [{ replicas: 6 }, { minReplicas: 3 }, {}], [4, 2, 0]],
    ['down to zero', 0, pct(2, 1), [0, 0]],
  ])('%s', (_, total, regions, expected) => {
    expect(distributeReplicas(total, regions, 'scaleDown')).toEqual({ ok: true, total, replicas: expected });
    // The same spec in Git is refused.
    expect(distributeReplicas(total, regions).ok).toBe(false);
  });

  it('is the usual distribution when the total covers the needs, and refuses what is wrong in the entries themselves', () => {
    expect(distributeReplicas(12, pct(6, 3, 3), 'scaleDown')).toEqual({ ok: true, total: 12, replicas: [6, 3, 3] });
    expect(distributeReplicas(4, pct(3, '150%'), 'scaleDown').ok).toBe(false);
    expect(distributeReplicas(2, [{ replicas: 1, minReplicas: 2 }, { replicas: 3 }], 'scaleDown').ok).toBe(false);
  });
});

describe('distributeReplicas over another list (a fleet’s clusters)', () => {
  it('names that list and its total in its problems, and splits the same way', () => {
    const scope = { path: ['spec', 'clusters'], entry: 'cluster', total: 'spec.replicas' };
    expect(distributeReplicas(4, [{ replicas: 3 }, { replicas: 3 }], 'refuse', scope)).toEqual({
      ok: false,
      problems: [{ path: ['spec', 'clusters'], message: 'integer replicas add up to 6, more than spec.replicas (4)' }],
    });
    expect(distributeReplicas(undefined, [{ replicas: '50%' }], 'refuse', scope)).toEqual({
      ok: false,
      problems: [{ path: ['spec', 'clusters', 0, 'replicas'], message: '"50%" needs spec.replicas to take a share of' }],
    });
    expect(distributeReplicas(8, [{ replicas: 3 }, { replicas: 3 }], 'refuse', scope)).toEqual({
      ok: false,
      problems: [{ path: ['spec', 'clusters'], message: 'every cluster has a fixed count, but they add up to 6, not spec.replicas (8)' }],
    });
    expect(distributeReplicas(9, [{ replicas: '50%' }, {}], 'refuse', scope)).toEqual(distributeReplicas(9, [{ replicas: '50%' }, {}]));
  });
});
