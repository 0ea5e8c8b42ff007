import type { AnalysisMetric, SampleVerdict } from '../api/traffic.js';
import type { SampleValue } from './prometheus.js';

/** One sample judged against its metric's condition. */
export interface Verdict {
  readonly verdict: SampleVerdict;
  /** The canary's value, when there was one. */
  readonly value?: number;
  /** compareToStable: the stable revision's value, when there was one. */
  readonly stableValue?: number;
  /** Why, for status and the Event: the comparison made, or what was missing. */
  readonly message: string;
}

function holds(value: number, op: NonNullable<AnalysisMetric['threshold']>['op'], threshold: number): boolean {
  switch (op) {
    case '<':
      return value < threshold;
    case '<=':
      return value <= threshold;
    case '>':
      return value > threshold;
    case '>=':
      return value >= threshold;
  }
}

/** A computed number for a message: six significant digits, so float noise (0.015 − 0.01) reads as people expect. */
function shown(value: number): string {
  return Number.isFinite(value) ? String(Number(value.toPrecision(6))) : String(value);
}

/** How much worse the canary is than the stable revision by ratio; a stable 0 makes any worse canary infinitely worse. */
function worseRatio(worse: number, better: number): number {
  if (better === 0) return worse <= 0 ? 1 : Infinity;
  return worse / better;
}

/**
 * The verdict of one sample. The canary's own sample decides first: an error is Error, no data is NoData (what that
 * means is the metric's noData policy, applied in run.ts). Then every condition the metric sets must hold for
 * Success:
 *
 * - `threshold`: `value op threshold`;
 * - `compareToStable`: the stable revision's sample, taken with the same query, must be a value too (its error is
 *   Error, its no data NoData: nothing to compare with); LowerIsBetter: `canary − stable ≤ maxDifference` and
 *   `canary / stable ≤ maxRatio`; HigherIsBetter the other way round.
 */
export function sampleVerdict(metric: AnalysisMetric, candidate: SampleValue, stable?: SampleValue): Verdict {
  if (candidate.kind === 'error') return { verdict: 'Error', message: candidate.message };
  if (candidate.kind === 'noData') return { verdict: 'NoData', message: candidate.reason };
  const value = candidate.value;
  const failures: string[] = [];
  const passes: string[] = [];

  if (metric.threshold) {
    const { op, value: threshold } = metric.threshold;
    const ok = holds(value, op, threshold);
    (ok ? passes : failures).push(ok ? `${value} ${op} ${threshold}` : `${value} not ${op} ${threshold}`);
  }

  const compare = metric.compareToStable;
  if (!compare) return { verdict: failures.length > 0 ? 'Failure' : 'Success', value, message: [...failures, ...passes].join('; ') };
  if (stable === undefined) return { verdict: 'Error', value, message: 'no sample of the stable revision to compare with' };
  if (stable.kind === 'error') return { verdict: 'Error', value, message: `stable revision: ${stable.message}` };
  if (stable.kind === 'noData') return { verdict: 'NoData', value, message: `stable revision: ${stable.reason}` };
  const stableValue = stable.value;
  const lowerIsBetter = compare.direction === 'LowerIsBetter';
  const [worse, better] = lowerIsBetter ? [value, stableValue] : [stableValue, value];
  if (compare.maxDifference !== undefined) {
    const difference = worse - better;
    const ok = difference <= compare.maxDifference;
    (ok ? passes : failures).push(`${lowerIsBetter ? 'canary − stable' : 'stable − canary'} = ${shown(difference)} ${ok ? '≤' : '>'} ${compare.maxDifference}`);
  }
  if (compare.maxRatio !== undefined) {
    const ratio = worseRatio(worse, better);
    const ok = ratio <= compare.maxRatio;
    (ok ? passes : failures).push(`${lowerIsBetter ? 'canary / stable' : 'stable / canary'} = ${shown(ratio)} ${ok ? '≤' : '>'} ${compare.maxRatio}`);
  }
  return { verdict: failures.length > 0 ? 'Failure' : 'Success', value, stableValue, message: [...failures, ...passes].join('; ') };
}
