import { describe, expect, it } from 'vitest';
import { analysisMetric } from '../api/traffic.js';
import type { SampleValue } from './prometheus.js';
import { sampleVerdict } from './verdict.js';

const metric = (over: Record<string, unknown>) => analysisMetric.parse({ name: 'm', query: 'q', ...over });
const value = (v: number): SampleValue => ({ kind: 'value', value: v });
const noData: SampleValue = { kind: 'noData', reason: 'the query returned no series' };
const error: SampleValue = { kind: 'error', message: 'Prometheus: timeout' };

describe('sampleVerdict: threshold', () => {
  it.each([
    ['<', 0.01, 0.005, 'Success', '0.005 < 0.01'],
    ['<', 0.01, 0.01, 'Failure', '0.01 not < 0.01'],
    ['<=', 0.01, 0.01, 'Success', '0.01 <= 0.01'],
    ['>', 0.99, 0.995, 'Success', '0.995 > 0.99'],
    ['>=', 0.99, 0.98, 'Failure', '0.98 not >= 0.99'],
  ] as const)('value %s %s: %s gives %s', (op, threshold, v, verdict, message) => {
    expect(sampleVerdict(metric({ threshold: { op, value: threshold } }), value(v))).toEqual({ verdict, value: v, message });
  });

  it.each([
    ['no data', noData, { verdict: 'NoData', message: 'the query returned no series' }],
    ['an error', error, { verdict: 'Error', message: 'Prometheus: timeout' }],
  ])('%s is not judged', (_, sample, expected) => {
    expect(sampleVerdict(metric({ threshold: { op: '<', value: 1 } }), sample)).toEqual(expected);
  });
});

describe('sampleVerdict: compareToStable', () => {
  it.each([
    ['lower is better, within the difference', { maxDifference: 0.01 }, 0.015, 0.01, 'Success', 'canary − stable = 0.005 ≤ 0.01'],
    ['lower is better, past the difference', { maxDifference: 0.001 }, 0.02, 0.01, 'Failure', 'canary − stable = 0.01 > 0.001'],
    ['lower is better, within the ratio', { maxRatio: 2 }, 0.02, 0.01, 'Success', 'canary / stable = 2 ≤ 2'],
    ['lower is better, past the ratio', { maxRatio: 1.5 }, 0.02, 0.01, 'Failure', 'canary / stable = 2 > 1.5'],
    ['a stable 0 and a canary 0: equal', { maxRatio: 1.5 }, 0, 0, 'Success', 'canary / stable = 1 ≤ 1.5'],
    ['a stable 0 and a worse canary: infinitely worse', { maxRatio: 1.5 }, 0.001, 0, 'Failure', 'canary / stable = Infinity > 1.5'],
    ['higher is better, canary better', { direction: 'HigherIsBetter', maxDifference: 0.01 }, 0.999, 0.99, 'Success', 'stable − canary'],
    ['higher is better, canary worse', { direction: 'HigherIsBetter', maxRatio: 1.01 }, 0.9, 0.99, 'Failure', 'stable / canary = 1.1 > 1.01'],
    ['both bounds: one failing fails', { maxDifference: 1, maxRatio: 1.5 }, 0.02, 0.01, 'Failure', 'canary / stable = 2 > 1.5; canary − stable = 0.01 ≤ 1'],
  ])('%s', (_, compare, canary, stable, verdict, message) => {
    const result = sampleVerdict(metric({ compareToStable: compare }), value(canary), value(stable));
    expect(result.verdict).toBe(verdict);
    expect(result.value).toBe(canary);
    expect(result.stableValue).toBe(stable);
    expect(result.message).toContain(message);
  });

  it.each([
    ['the stable revision has no data: nothing to compare', noData, 'NoData', 'stable revision: the query returned no series'],
    ['the stable sample errored', error, 'Error', 'stable revision: Prometheus: timeout'],
    ['no stable sample at all', undefined, 'Error', 'no sample of the stable revision to compare with'],
  ] as const)('%s', (_, stable, verdict, message) => {
    expect(sampleVerdict(metric({ compareToStable: { maxRatio: 2 } }), value(0.01), stable)).toMatchObject({ verdict, message });
  });

  it('with threshold and comparison both set, both must hold', () => {
    const both = metric({ threshold: { op: '<', value: 0.05 }, compareToStable: { maxRatio: 2 } });
    expect(sampleVerdict(both, value(0.06), value(0.05)).verdict).toBe('Failure');
    expect(sampleVerdict(both, value(0.04), value(0.01)).verdict).toBe('Failure');
    expect(sampleVerdict(both, value(0.04), value(0.03)).verdict).toBe('Success');
  });
});
