// The pure parts of the benches' kits (bench/figures.ts, bench/lab-kit.ts): medians, tables, and the lab's node
// sets as DeployRegions. A wrong median or region would make a bench print wrong figures without failing.
import { describe, expect, it } from 'vitest';
import { median, textTable } from '../../bench/figures.js';
import { LAB_NODE_SETS, labDeployRegions, labSteps } from '../../bench/lab-kit.js';

describe('labSteps', () => {
  it('reuses a running lab unless BENCH_FRESH_LAB is 1, then stops it and starts a fresh one; starts one when none runs', () => {
    expect(labSteps(true, undefined)).toEqual([]);
    expect(labSteps(true, '0')).toEqual([]);
    expect(labSteps(true, '')).toEqual([]);
    expect(labSteps(true, '1')).toEqual(['down', 'up']);
    expect(labSteps(false, undefined)).toEqual(['up']);
    expect(labSteps(false, '1')).toEqual(['up']);
  });

  it('refuses any other BENCH_FRESH_LAB, before anything is stopped', () => {
    for (const bad of ['yes', 'true', '2'])
      expect(() => labSteps(true, bad)).toThrow(`BENCH_FRESH_LAB must be 1 (a fresh lab) or 0 (reuse a running one), not ${JSON.stringify(bad)}`);
  });
});

describe('figures', () => {
  it('median: the middle value, or the mean of the two middle ones, whatever the order', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([])).toBeNaN();
  });

  it('textTable: first column left, the others right, a rule as wide as each column', () => {
    expect(
      textTable(
        ['name', 'n'],
        [
          ['a', '10'],
          ['long name', '2'],
        ],
      ),
    ).toEqual([
      'name        n', //
      '---------  --',
      'a          10',
      'long name   2',
    ]);
  });
});

describe('labDeployRegions', () => {
  it('one DeployRegion per lab node set, in order, named after the prefix', () => {
    const regions = labDeployRegions('bm-1', 3);
    expect(regions.map((r) => r.metadata?.name)).toEqual(['bm-1-a', 'bm-1-b', 'bm-1-c']);
    expect(regions.map((r) => (r as { spec?: { matchLabels?: unknown } }).spec?.matchLabels)).toEqual([...LAB_NODE_SETS]);
    expect(labDeployRegions('x', 1)).toHaveLength(1);
  });

  it('refuses more regions than the lab has node sets', () => {
    expect(() => labDeployRegions('x', 4)).toThrow('the lab has 3 general-pool node sets, not 4');
  });
});
