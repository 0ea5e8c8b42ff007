import type { AnalysisMetric, AnalysisOutcome, AnalysisSample, AnalysisSpec, AnalysisStatus, MetricStatus, SampleVerdict } from '../api/traffic.js';
import type { SampleValue } from './prometheus.js';
import { sampleVerdict } from './verdict.js';

/** Samples kept per metric in status: enough to see a trend, bounded so the status stays small. */
export const SAMPLES_KEPT = 10;

/** Which analysis: the rollout and the group whose barrier it gates. Another key starts a new analysis. */
export interface AnalysisKey {
  readonly revision: string;
  readonly group: number;
}

/** One metric's sample as the agent took it: the query sent and what came back (and the stable revision's). */
export interface TakenSample {
  readonly metric: string;
  readonly query: string;
  readonly candidate: SampleValue;
  /** compareToStable: the stable revision's sample. */
  readonly stable?: SampleValue;
}

/** An Event to record on the ExtendedDeployment. */
export interface AnalysisEvent {
  readonly type: 'Normal' | 'Warning';
  readonly reason: string;
  readonly message: string;
}

/** Reasons of the analysis Events. */
export const AnalysisEventReason = {
  /** One sample: its query, value and verdict. */
  AnalysisSample: 'AnalysisSample',
  AnalysisPassed: 'AnalysisPassed',
  AnalysisFailed: 'AnalysisFailed',
  AnalysisInconclusive: 'AnalysisInconclusive',
  AnalysisNoData: 'AnalysisNoData',
} as const;

/** What one look does with an analysis. */
export interface AnalysisInput {
  readonly spec: AnalysisSpec;
  readonly status: AnalysisStatus | undefined;
  readonly key: AnalysisKey;
  readonly now: number;
  /** The samples taken for this look's `due` metrics; absent on the look that asks which are due. */
  readonly samples?: readonly TakenSample[];
}

/** The analysis after one look. */
export interface AnalysisStep {
  /** status.analysis to write. */
  readonly status: AnalysisStatus;
  readonly outcome: AnalysisOutcome;
  /** Metrics to sample now (by name); empty when none is due or samples were just recorded. */
  readonly due: readonly string[];
  /** When the next sample is due (ms); undefined once the analysis has concluded. */
  readonly nextSampleAt: number | undefined;
  readonly events: readonly AnalysisEvent[];
  /** Each sample recorded with its verdict: the samples metric counts them by result. */
  readonly recorded: readonly { readonly metric: string; readonly verdict: SampleVerdict }[];
}

const CONCLUDED: ReadonlySet<AnalysisOutcome> = new Set(['Successful', 'Failed', 'Inconclusive']);

function freshMetric(name: string): MetricStatus {
  return { name, outcome: 'Running', consecutiveSuccesses: 0, failures: 0, errors: 0, consecutiveErrors: 0, consecutiveNoData: 0, samples: [] };
}

/** A metric's outcome from its counters and last verdict. Failure first, then the limits, then success. */
function metricOutcome(metric: AnalysisMetric, state: MetricStatus, lastVerdict: SampleVerdict | undefined): AnalysisOutcome {
  if (state.failures > metric.failureLimit) return 'Failed';
  if (state.consecutiveErrors > metric.errorLimit) return 'Inconclusive';
  if (metric.noData === 'Wait' && metric.inconclusiveLimit !== undefined && state.consecutiveNoData > metric.inconclusiveLimit) return 'Inconclusive';
  if (state.consecutiveSuccesses >= metric.consecutiveSuccesses) return 'Successful';
  if (lastVerdict === 'NoData' && metric.noData === 'Wait') return 'WaitingForData';
  return 'Running';
}

/**
 * One sample applied to a metric's counters. Only a Success (or no data with noData Pass, explicitly) adds to the
 * successes in a row, so an analysis whose every sample errored can never pass (argo-rollouts #4479); an error or a
 * failure breaks the row. No data with Wait counts for nothing: it neither adds to nor breaks the row.
 */
function applySample(metric: AnalysisMetric, state: MetricStatus, verdict: SampleVerdict): MetricStatus {
  const counted = verdict === 'NoData' ? ({ Wait: 'NoData', Pass: 'Success', Fail: 'Failure' } as const)[metric.noData] : verdict;
  switch (counted) {
    case 'Success':
      return { ...state, consecutiveSuccesses: state.consecutiveSuccesses + 1, consecutiveErrors: 0, consecutiveNoData: 0 };
    case 'Failure':
      return { ...state, consecutiveSuccesses: 0, failures: state.failures + 1, consecutiveErrors: 0, consecutiveNoData: 0 };
    case 'Error':
      return { ...state, consecutiveSuccesses: 0, errors: state.errors + 1, consecutiveErrors: state.consecutiveErrors + 1 };
    case 'NoData':
      return { ...state, consecutiveErrors: 0, consecutiveNoData: state.consecutiveNoData + 1 };
  }
}

/** The analysis' outcome: a failed metric fails it, an inconclusive one makes it inconclusive, all successful pass it. */
function overallOutcome(outcomes: readonly AnalysisOutcome[]): AnalysisOutcome {
  if (outcomes.includes('Failed')) return 'Failed';
  if (outcomes.includes('Inconclusive')) return 'Inconclusive';
  if (outcomes.every((o) => o === 'Successful')) return 'Successful';
  if (outcomes.includes('WaitingForData')) return 'WaitingForData';
  return 'Running';
}

function formatValue(value: number | undefined): string {
  return value === undefined ? '(none)' : String(value);
}

function transitionEvent(outcome: AnalysisOutcome, key: AnalysisKey, metrics: readonly MetricStatus[]): AnalysisEvent | undefined {
  const which = (o: AnalysisOutcome) =>
    metrics
      .filter((m) => m.outcome === o)
      .map((m) => m.name)
      .join(', ');
  const at = `rollout ${key.revision} group ${key.group}`;
  switch (outcome) {
    case 'Successful':
      return { type: 'Normal', reason: AnalysisEventReason.AnalysisPassed, message: `Analysis of ${at} passed: every metric succeeded` };
    case 'Failed':
      return { type: 'Warning', reason: AnalysisEventReason.AnalysisFailed, message: `Analysis of ${at} failed: ${which('Failed')}` };
    case 'Inconclusive':
      return {
        type: 'Warning',
        reason: AnalysisEventReason.AnalysisInconclusive,
        message: `Analysis of ${at} is inconclusive: ${which('Inconclusive')} (errors or no data past the limit)`,
      };
    case 'WaitingForData':
      return { type: 'Normal', reason: AnalysisEventReason.AnalysisNoData, message: `Analysis of ${at} waits for data: ${which('WaitingForData')}` };
    case 'Running':
      return undefined;
  }
}

function timeMs(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? undefined : ms;
}

/**
 * One look at a group barrier's analysis, pure: from the recorded status (another key starts afresh), the samples
 * just taken and now, the status to write, the outcome, the metrics due for a sample and when the next is due.
 *
 * The agent calls it twice when samples are due: first without samples (it learns which metrics are due), then, once
 * it has queried Prometheus, with them. The first sample is due one interval after the analysis starts, so that the
 * window holds traffic of the step just applied. A metric that concluded is not sampled again; the analysis
 * concludes Failed or Inconclusive as soon as one metric does, Successful once all have.
 */
export function stepAnalysis(input: AnalysisInput): AnalysisStep {
  const { spec, key, now } = input;
  const interval = spec.intervalSeconds * 1000;
  const same = input.status?.revision === key.revision && input.status.group === key.group;
  const previous = same ? input.status : undefined;
  const startedAt = (previous && timeMs(previous.startedAt)) ?? now;
  const recordedMetrics = new Map((previous?.metrics ?? []).map((m) => [m.name, m]));
  let metrics = spec.metrics.map((m) => recordedMetrics.get(m.name) ?? freshMetric(m.name));
  let nextSampleAt = (previous && timeMs(previous.nextSampleAt)) ?? startedAt + interval;

  const events: AnalysisEvent[] = [];
  const recorded: { metric: string; verdict: SampleVerdict }[] = [];
  const taken = input.samples ?? [];
  if (taken.length > 0) {
    metrics = metrics.map((state, i) => {
      const metric = spec.metrics[i];
      const sample = taken.find((s) => s.metric === state.name);
      if (!metric || !sample || CONCLUDED.has(state.outcome)) return state;
      const verdict = sampleVerdict(metric, sample.candidate, sample.stable);
      const noDataNote =
        verdict.verdict === 'NoData' && metric.noData !== 'Wait'
          ? `; counted as a ${metric.noData === 'Pass' ? 'success' : 'failure'} (noData ${metric.noData})`
          : '';
      const record: AnalysisSample = {
        time: new Date(now).toISOString(),
        query: sample.query,
        ...(verdict.value !== undefined && { value: verdict.value }),
        ...(verdict.stableValue !== undefined && { stableValue: verdict.stableValue }),
        verdict: verdict.verdict,
        message: `${verdict.message}${noDataNote}`,
      };
      const counted = applySample(metric, state, verdict.verdict);
      const next: MetricStatus = {
        ...counted,
        outcome: metricOutcome(metric, counted, verdict.verdict),
        samples: [...(state.samples ?? []), record].slice(-SAMPLES_KEPT),
      };
      recorded.push({ metric: state.name, verdict: verdict.verdict });
      events.push({
        type: verdict.verdict === 'Failure' || verdict.verdict === 'Error' ? 'Warning' : 'Normal',
        reason: AnalysisEventReason.AnalysisSample,
        message: `${state.name}: ${sample.query} = ${formatValue(verdict.value)}${verdict.stableValue !== undefined ? ` (stable ${verdict.stableValue})` : ''}: ${verdict.verdict} (${record.message})`,
      });
      return next;
    });
    nextSampleAt = now + interval;
  }

  const outcome = overallOutcome(metrics.map((m) => m.outcome));
  const concluded = CONCLUDED.has(outcome);
  if (outcome !== previous?.outcome) {
    const event = transitionEvent(outcome, key, metrics);
    if (event) events.push(event);
  }
  const due = !concluded && taken.length === 0 && now >= nextSampleAt ? metrics.filter((m) => !CONCLUDED.has(m.outcome)).map((m) => m.name) : [];
  const status: AnalysisStatus = {
    revision: key.revision,
    group: key.group,
    outcome,
    startedAt: new Date(startedAt).toISOString(),
    ...(!concluded && { nextSampleAt: new Date(nextSampleAt).toISOString() }),
    metrics,
  };
  return { status, outcome, due, nextSampleAt: concluded ? undefined : nextSampleAt, events, recorded };
}

/** The health the Argo CD and Flux health checks show for an analysis outcome. */
export type AnalysisHealth = 'Healthy' | 'Progressing' | 'Suspended' | 'Degraded';

/**
 * The health an analysis gives the ExtendedDeployment: Failed needs a human or a Git change (Degraded); Inconclusive
 * holds the rollout Paused until someone decides (Suspended, as a wait for approval); waiting for data or still
 * sampling is Progressing; passed adds nothing (Healthy).
 */
export function analysisHealth(outcome: AnalysisOutcome): AnalysisHealth {
  switch (outcome) {
    case 'Failed':
      return 'Degraded';
    case 'Inconclusive':
      return 'Suspended';
    case 'Successful':
      return 'Healthy';
    case 'Running':
    case 'WaitingForData':
      return 'Progressing';
  }
}

/** What the group barrier does with an analysis outcome. */
export interface AnalysisGate {
  /** The barrier may pass as far as analysis goes. */
  readonly pass: boolean;
  /** Hold the rollout Paused with this reason. */
  readonly holdReason?: 'AnalysisFailed' | 'AnalysisInconclusive';
  /** onFailure ShiftBack after a failure: the canary's weight goes to 0 (core/traffic/plan.ts `shiftBack`). */
  readonly shiftBack: boolean;
}

/**
 * The barrier's decision: only Successful passes. Failed holds (Paused, AnalysisFailed) and with onFailure ShiftBack
 * also shifts the canary's weight back to 0; Inconclusive holds without shifting (errors are no proof the canary is
 * bad); Running and WaitingForData wait.
 */
export function analysisGate(outcome: AnalysisOutcome, onFailure: AnalysisSpec['onFailure']): AnalysisGate {
  switch (outcome) {
    case 'Successful':
      return { pass: true, shiftBack: false };
    case 'Failed':
      return { pass: false, holdReason: 'AnalysisFailed', shiftBack: onFailure === 'ShiftBack' };
    case 'Inconclusive':
      return { pass: false, holdReason: 'AnalysisInconclusive', shiftBack: false };
    case 'Running':
    case 'WaitingForData':
      return { pass: false, shiftBack: false };
  }
}
