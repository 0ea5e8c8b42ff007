import { describe, expect, it } from 'vitest';
import { batchPods, groupTarget, layoutGroups, regionGroups, scheduleGroups, targetAtGroup } from './groups.js';

const beta = (batchSize: number | string) => ({ rolloutStrategy: 'Beta' as const, batchSize });
const group = (batchSize: number | string) => ({ rolloutStrategy: 'Group' as const, batchSize });
const targets = (s: { rolloutStrategy: 'Beta' | 'Group'; batchSize: number | string }, n: number) =>
  Array.from({ length: regionGroups(s, n) }, (_, i) => groupTarget(s, n, i + 1));

describe('group targets (upstream calculateStepSize vectors, cumulative)', () => {
  it.each([
    ['Beta b=2 d=5', beta(2), 5, [1, 3, 5]],
    ['Group b=2 d=5', group(2), 5, [2, 4, 5]],
    ['Beta b=1 d=3', beta(1), 3, [1, 2, 3]],
    ['Group b=3 d=5', group(3), 5, [3, 5]],
    ['Group b=10 d=5: one group', group(10), 5, [5]],
    ['Beta d=0: nothing to do', beta(2), 0, []],
    ['Beta b=2 d=1', beta(2), 1, [1]],
    ['percentage: 50% of 5 rounds up to 3', group('50%'), 5, [3, 5]],
    ['percentage: 10% of 4 is at least 1', beta('10%'), 4, [1, 2, 3, 4]],
    ['Beta b=25% of 8', beta('25%'), 8, [1, 3, 5, 7, 8]],
  ])('%s', (_n, strategy, replicas, expected) => {
    expect(targets(strategy, replicas)).toEqual(expected);
  });

  it('batch pods: integer as is, percentage of replicas rounded up, at least 1', () => {
    expect([batchPods(3, 10), batchPods('30%', 10), batchPods('33%', 10), batchPods('1%', 10), batchPods('0%', 10)]).toEqual([3, 3, 4, 1, 1]);
  });
});

describe('scheduleGroups', () => {
  const regions = [
    { name: 'a', replicas: 5, changes: true },
    { name: 'b', replicas: 2, changes: true },
    { name: 'c', replicas: 3, changes: false },
  ];

  it('Parallel: every region moves from group 1; the total is the longest region', () => {
    const s = scheduleGroups(beta(2), 'Parallel', regions);
    expect(s.totalGroups).toBe(3);
    expect(s.regions.map((r) => [r.name, r.firstGroup, r.groups])).toEqual([
      ['a', 1, 3],
      ['b', 1, 2],
      ['c', 0, 0],
    ]);
    const [a, b, c] = s.regions;
    expect([1, 2, 3].map((g) => [targetAtGroup(beta(2), a!, g), targetAtGroup(beta(2), b!, g), targetAtGroup(beta(2), c!, g)])).toEqual([
      [1, 1, 3],
      [3, 2, 3],
      [5, 2, 3],
    ]);
  });

  it('Sequential: regions roll one after another in declared order', () => {
    const s = scheduleGroups(beta(2), 'Sequential', regions);
    expect(s.totalGroups).toBe(5);
    const [a, b] = s.regions;
    expect([1, 2, 3, 4, 5].map((g) => [targetAtGroup(beta(2), a!, g), targetAtGroup(beta(2), b!, g)])).toEqual([
      [1, 0],
      [3, 0],
      [5, 0],
      [5, 1],
      [5, 2],
    ]);
  });
});

describe('layoutGroups', () => {
  const rows: readonly { name: string; order: 'Parallel' | 'Sequential'; groups: readonly number[]; firstGroups: readonly number[]; total: number }[] = [
    { name: 'Parallel: every region from group 1, the total is the longest', order: 'Parallel', groups: [3, 1, 2], firstGroups: [1, 1, 1], total: 3 },
    { name: 'Sequential: one region after another, in the given order', order: 'Sequential', groups: [3, 1, 2], firstGroups: [1, 4, 5], total: 6 },
    { name: 'Sequential, whole regions (compat mode): one group each', order: 'Sequential', groups: [1, 1, 1], firstGroups: [1, 2, 3], total: 3 },
    { name: 'Parallel, whole regions (compat mode): a single group', order: 'Parallel', groups: [1, 1], firstGroups: [1, 1], total: 1 },
    { name: 'a region taking no group has first group 0 and takes no turn', order: 'Sequential', groups: [2, 0, 1], firstGroups: [1, 0, 3], total: 3 },
    { name: 'no region takes a group: no groups at all', order: 'Parallel', groups: [0, 0], firstGroups: [0, 0], total: 0 },
  ];

  it.each(rows)('$name', ({ order, groups, firstGroups, total }) => {
    const laid = layoutGroups(
      order,
      groups.map((g, i) => ({ name: `r${i}`, replicas: 3, groups: g })),
    );
    expect({ firstGroups: laid.regions.map((r) => r.firstGroup), total: laid.totalGroups, names: laid.regions.map((r) => r.name) }).toEqual({
      firstGroups,
      total,
      names: groups.map((_, i) => `r${i}`),
    });
  });
});
