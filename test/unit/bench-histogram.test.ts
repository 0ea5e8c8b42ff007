// The soak bench's reading of Prometheus histograms (bench/agent-child.ts): buckets, the difference between two
// scrapes, and quantiles interpolated within a bucket as Prometheus' histogram_quantile does.
import { describe, expect, it } from 'vitest';
import { AgentMetrics } from '../../agent/metrics.js';
import { addShares, agentShare, histogram, histogramDelta, histogramQuantile, histogramSum, reconcileCount } from '../../bench/agent-child.js';

const scrape = (counts: readonly number[], sum: number) =>
  [
    '# HELP w help',
    '# TYPE w histogram',
    ...[0.01, 0.1, 1].map((le, i) => `w_bucket{le="${le}"} ${counts[i]}`),
    `w_bucket{le="+Inf"} ${counts[3]}`,
    `w_sum ${sum}`,
    `w_count ${counts[3]}`,
  ].join('\n');

describe('bench histograms', () => {
  it('adds two windows: buckets, count and sum; and two shares with their reconciles (rounds of one scale)', () => {
    const a = histogram(scrape([1, 3, 4, 4], 0.5), 'w');
    const b = histogram(scrape([0, 2, 2, 3], 1.5), 'w');
    const both = histogramSum(a, b);
    // The scrape of both windows' observations at once: buckets 1, 5, 6 and 7 (+Inf), count 7, sum 2.
    expect(both).toEqual(histogram(scrape([1, 5, 6, 7], 2), 'w'));
    expect([both.count, both.sum]).toEqual([7, 2]);
    expect(histogramQuantile(both, 0.5)).toBeCloseTo(histogramQuantile(histogram(scrape([1, 5, 6, 7], 2), 'w'), 0.5));
    const shares = addShares(
      {
        byResult: new Map([
          ['synced', 9],
          ['stale', 1],
        ]),
        queueWait: a,
        synced: b,
        statusWrites: { transition: 4, progress: 1 },
      },
      {
        byResult: new Map([
          ['synced', 3],
          ['gone', 2],
        ]),
        queueWait: b,
        synced: a,
        statusWrites: { transition: 2, progress: 3 },
      },
    );
    expect(reconcileCount(shares)).toBe(15);
    // Results of both windows added, most first.
    expect([...shares.byResult]).toEqual([
      ['synced', 12],
      ['gone', 2],
      ['stale', 1],
    ]);
    expect(shares.statusWrites).toEqual({ transition: 6, progress: 4 });
    expect(shares.queueWait.count).toBe(7);
    expect(shares.synced.count).toBe(7);
  });

  it('reads cumulative buckets, count and sum', () => {
    const h = histogram(scrape([1, 3, 4, 4], 0.5), 'w');
    expect([...h.buckets]).toEqual([
      [0.01, 1],
      [0.1, 3],
      [1, 4],
      [Infinity, 4],
    ]);
    expect([h.count, h.sum]).toEqual([4, 0.5]);
  });

  it('reads one labelled series of a histogram (prom-client prints le first)', () => {
    const text = [
      'x_bucket{le="1",result="synced"} 2',
      'x_bucket{le="+Inf",result="synced"} 3',
      'x_bucket{le="1",result="error"} 7',
      'x_bucket{le="+Inf",result="error"} 9',
      'x_sum{result="synced"} 4',
      'x_count{result="synced"} 3',
    ].join('\n');
    const h = histogram(text, 'x', 'result="synced"');
    expect([...h.buckets]).toEqual([
      [1, 2],
      [Infinity, 3],
    ]);
    expect([h.count, h.sum]).toEqual([3, 4]);
  });

  it('subtracts an earlier scrape and interpolates quantiles within the bucket', () => {
    const before = histogram(scrape([1, 1, 1, 1], 0.005), 'w');
    const after = histogram(scrape([1, 5, 11, 11], 3.005), 'w');
    const d = histogramDelta(after, before);
    expect([...d.buckets.values()]).toEqual([0, 4, 10, 10]);
    expect([d.count, d.sum]).toEqual([10, 3]);
    // rank 5 of 10: the 5th observation, 1 into the (0.1, 1] bucket's 6 → 0.1 + 0.9 × 1/6
    expect(histogramQuantile(d, 0.5)).toBeCloseTo(0.1 + 0.9 / 6, 10);
    // rank 2: within (0.01, 0.1], 2 of its 4
    expect(histogramQuantile(d, 0.2)).toBeCloseTo(0.01 + 0.09 * 0.5, 10);
    expect(histogramQuantile(histogramDelta(before, before), 0.5)).toBeNaN();
  });
});

describe("the agent's own share (bench:peers, bench:agent)", () => {
  it('counts reconciles of every result and status writes by change, and reads the queue wait and acting reconciles between two scrapes of the real metrics', async () => {
    const metrics = new AgentMetrics({ queueDepth: () => 0, defaultMetrics: false });
    const ed = { controller: 'extendeddeployment' };
    metrics.reconcileDuration.observe({ ...ed, result: 'synced' }, 0.5);
    metrics.statusWrites.inc({ change: 'transition' });
    const before = await metrics.registry.metrics();
    metrics.statusWrites.inc({ change: 'transition' }, 2);
    metrics.statusWrites.inc({ change: 'progress' });
    for (const seconds of [0.004, 0.004, 0.004, 0.2]) metrics.reconcileDuration.observe({ ...ed, result: 'synced' }, seconds);
    metrics.reconcileDuration.observe({ ...ed, result: 'stale' }, 0.001);
    metrics.reconcileDuration.observe({ controller: 'deployregion', result: 'synced' }, 0.001);
    for (const seconds of [0.0005, 0.0005, 0.3]) metrics.queueWait.observe(ed, seconds);
    const share = agentShare(before, await metrics.registry.metrics());
    expect(reconcileCount(share)).toBe(5); // 4 synced and 1 stale since the first scrape; the DeployRegion controller's not
    expect([...share.byResult]).toEqual([
      ['synced', 4],
      ['stale', 1],
    ]);
    expect(share.synced.count).toBe(4);
    expect(histogramQuantile(share.synced, 0.5)).toBeLessThanOrEqual(0.005);
    expect(histogramQuantile(share.synced, 0.99)).toBeGreaterThan(0.1);
    expect(share.queueWait.count).toBe(3);
    // Status writes since the first scrape, by change: the progress series did not exist before it.
    expect(share.statusWrites).toEqual({ transition: 2, progress: 1 });
  });
});
