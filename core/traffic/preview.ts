import type { AnalysisMetric, TrafficStrategy } from '../api/traffic.js';
import { canaryShare, WEIGHT_TOTAL } from './weights.js';

/** What `edctl plan` shows of a rollout's traffic: the new revision's weight after each group, and the analysis. */
export interface TrafficPreview {
  readonly mode: TrafficStrategy['mode'];
  /**
   * Per group, the new revision's share of traffic in percent once the group's pods are Ready: its weight in mode
   * Weighted (the last group at 100: the previous revisions drain first), its share of Ready pods in mode Replicas.
   */
  readonly weights: readonly { readonly group: number; readonly percent: number }[];
  /** Mode Weighted: how long the previous revisions drain at weight 0 before the last group removes their pods. */
  readonly drainSeconds?: number;
  /** The analysis at every barrier between groups. */
  readonly analysis?: {
    readonly intervalSeconds: number;
    readonly window: string;
    readonly onFailure: 'Hold' | 'ShiftBack';
    readonly metrics: readonly { readonly name: string; readonly condition: string; readonly consecutiveSuccesses: number; readonly noData: string }[];
  };
}

/** A metric's success condition in words: `< 0.05`, `not worse than stable by more than 0.01`. */
export function conditionText(metric: AnalysisMetric): string {
  const parts: string[] = [];
  if (metric.threshold) parts.push(`${metric.threshold.op} ${metric.threshold.value}`);
  const compare = metric.compareToStable;
  if (compare) {
    const bounds = [
      ...(compare.maxDifference !== undefined ? [`by more than ${compare.maxDifference}`] : []),
      ...(compare.maxRatio !== undefined ? [`by more than ${compare.maxRatio}×`] : []),
    ];
    parts.push(`not worse than stable (${compare.direction === 'LowerIsBetter' ? 'lower is better' : 'higher is better'}) ${bounds.join(' or ')}`);
  }
  return parts.join(' and ');
}

/**
 * The traffic of a planned rollout, from the groups the simulation gives (new and old pods per region once each is
 * done): the weights the agent writes (core/traffic/look.ts: the step of each group, the share of Ready pods past the
 * steps, 100 in the last group once the previous revisions drained) or, in mode Replicas, the share of Ready pods.
 */
export function trafficPreview(
  traffic: TrafficStrategy | undefined,
  groups: readonly { readonly group: number; readonly regions: readonly { readonly updated: number; readonly old: number }[] }[],
  totalGroups: number,
): TrafficPreview | undefined {
  if (traffic === undefined) return undefined;
  const weights = groups.map(({ group, regions }) => {
    const updated = regions.reduce((s, r) => s + r.updated, 0);
    const all = regions.reduce((s, r) => s + r.updated + r.old, 0);
    if (traffic.mode === 'Replicas') return { group, percent: all === 0 ? 0 : Math.round((updated * 10000) / all) / 100 };
    if (group >= totalGroups) return { group, percent: 100 };
    return { group, percent: canaryShare(traffic.steps, { group, readyTarget: updated, readyAll: all }, WEIGHT_TOTAL) / 100 };
  });
  const analysis = traffic.analysis;
  return {
    mode: traffic.mode,
    weights,
    ...(traffic.mode === 'Weighted' && { drainSeconds: traffic.drainSeconds }),
    ...(analysis && {
      analysis: {
        intervalSeconds: analysis.intervalSeconds,
        window: analysis.window,
        onFailure: analysis.onFailure,
        metrics: analysis.metrics.map((m) => ({ name: m.name, condition: conditionText(m), consecutiveSuccesses: m.consecutiveSuccesses, noData: m.noData })),
      },
    }),
  };
}
