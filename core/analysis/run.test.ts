import { describe, expect, it } from 'vitest';
import { analysisSpec, type AnalysisOutcome, type AnalysisStatus } from '../api/traffic.js';
import type { SampleValue } from './prometheus.js';
import { analysisGate, analysisHealth, SAMPLES_KEPT, stepAnalysis, type AnalysisStep, type TakenSample } from './run.js';

const T0 = Date.UTC(2026, 10, 28, 10);
const S = 1000;
const at = (ms: number) => new Date(ms).toISOString();
const KEY = { revision: 'R1', group: 1 };

/** One metric "errors" (value < 1 passes), sampled every 30 s, with `over` on the metric. */
const spec = (over: Record<string, unknown> = {}, metrics?: Record<string, unknown>[]) =>
  analysisSpec.parse({
    prometheus: { address: 'http://prometheus:9090' },
    metrics: metrics ?? [{ name: 'errors', query: 'err{rev="{{revision}}"}', threshold: { op: '<', value: 1 }, ...over }],
  });

/** S: success, F: failure, N: no data, E: error. */
const SAMPLE: Record<string, SampleValue> = {
  S: { kind: 'value', value: 0.1 },
  F: { kind: 'value', value: 5 },
  N: { kind: 'noData', reason: 'the query returned no series' },
  E: { kind: 'error', message: 'connect ECONNREFUSED' },
};
const taken = (metric: string, code: string): TakenSample => ({ metric, query: `err{rev="R1"}`, candidate: SAMPLE[code] ?? (SAMPLE['E'] as SampleValue) });

/** Feeds one sample per interval (codes as in SAMPLE) and returns every step. */
function feed(analysis: ReturnType<typeof spec>, codes: string, status?: AnalysisStatus, metric = 'errors'): AnalysisStep[] {
  const steps: AnalysisStep[] = [];
  let current = status ?? stepAnalysis({ spec: analysis, status: undefined, key: KEY, now: T0 }).status;
  [...codes].forEach((code, i) => {
    const step = stepAnalysis({ spec: analysis, status: current, key: KEY, now: T0 + (i + 1) * 30 * S, samples: [taken(metric, code)] });
    steps.push(step);
    current = step.status;
  });
  return steps;
}
const outcomes = (steps: readonly AnalysisStep[]) => steps.map((s) => s.outcome);

describe('stepAnalysis: starting and due samples', () => {
  it('starts Running, with the first sample due one interval later', () => {
    const step = stepAnalysis({ spec: spec(), status: undefined, key: KEY, now: T0 });
    expect(step.outcome).toBe('Running');
    expect(step.due).toEqual([]);
    expect(step.nextSampleAt).toBe(T0 + 30 * S);
    expect(step.status).toEqual({
      revision: 'R1',
      group: 1,
      outcome: 'Running',
      startedAt: at(T0),
      nextSampleAt: at(T0 + 30 * S),
      metrics: [
        { name: 'errors', outcome: 'Running', consecutiveSuccesses: 0, failures: 0, errors: 0, consecutiveErrors: 0, consecutiveNoData: 0, samples: [] },
      ],
    });
    expect(step.events).toEqual([]);
  });

  it('names the metrics due once the interval has passed', () => {
    const start = stepAnalysis({ spec: spec(), status: undefined, key: KEY, now: T0 });
    expect(stepAnalysis({ spec: spec(), status: start.status, key: KEY, now: T0 + 29 * S }).due).toEqual([]);
    expect(stepAnalysis({ spec: spec(), status: start.status, key: KEY, now: T0 + 30 * S }).due).toEqual(['errors']);
  });

  it('starts afresh for another group or rollout', () => {
    const [last] = feed(spec({ consecutiveSuccesses: 1 }), 'S');
    expect(last?.outcome).toBe('Successful');
    const next = stepAnalysis({ spec: spec(), status: last?.status, key: { revision: 'R1', group: 2 }, now: T0 + 60 * S });
    expect(next.outcome).toBe('Running');
    expect(next.status.startedAt).toBe(at(T0 + 60 * S));
    expect(next.status.metrics?.[0]?.consecutiveSuccesses).toBe(0);
  });
});

describe('stepAnalysis: outcomes over samples', () => {
  it.each<[string, Record<string, unknown>, string, AnalysisOutcome[]]>([
    ['three successes in a row pass', {}, 'SSS', ['Running', 'Running', 'Successful']],
    ['an error breaks the row', {}, 'SESSS', ['Running', 'Running', 'Running', 'Running', 'Successful']],
    ['a failure fails at once (failureLimit 0)', {}, 'SF', ['Running', 'Failed']],
    ['failureLimit 1 tolerates one', { failureLimit: 1 }, 'FSF', ['Running', 'Running', 'Failed']],
    [
      'every sample in error: Inconclusive past errorLimit, never Successful',
      { consecutiveSuccesses: 1 },
      'EEEEE',
      ['Running', 'Running', 'Running', 'Running', 'Inconclusive'],
    ],
    ['errorLimit counts errors in a row', { errorLimit: 1 }, 'EEF', ['Running', 'Inconclusive', 'Inconclusive']],
    ['noData Wait: WaitingForData, counts for nothing, breaks no row', {}, 'SNSS', ['Running', 'WaitingForData', 'Running', 'Successful']],
    [
      'noData Wait never passes on its own',
      { consecutiveSuccesses: 1 },
      'NNNNNN',
      ['WaitingForData', 'WaitingForData', 'WaitingForData', 'WaitingForData', 'WaitingForData', 'WaitingForData'],
    ],
    ['noData Wait with inconclusiveLimit 2', { inconclusiveLimit: 2 }, 'NNN', ['WaitingForData', 'WaitingForData', 'Inconclusive']],
    ['noData Pass counts as success, explicitly', { noData: 'Pass' }, 'NNN', ['Running', 'Running', 'Successful']],
    ['noData Fail counts as failure', { noData: 'Fail' }, 'SN', ['Running', 'Failed']],
  ])('%s', (_, over, codes, expected) => {
    expect(outcomes(feed(spec(over), codes))).toEqual(expected);
  });

  it('stops sampling once concluded: a later sample changes nothing', () => {
    const steps = feed(spec({ consecutiveSuccesses: 1 }), 'SF');
    expect(outcomes(steps)).toEqual(['Successful', 'Successful']);
    expect(steps[1]?.recorded).toEqual([]);
    expect(steps[1]?.due).toEqual([]);
    expect(steps[1]?.nextSampleAt).toBeUndefined();
    expect(steps[1]?.status.nextSampleAt).toBeUndefined();
  });

  it('records every sample (time, query, value, verdict) and keeps the last ten', () => {
    const steps = feed(spec({ consecutiveSuccesses: 100 }), 'S'.repeat(12));
    const samples = steps[11]?.status.metrics?.[0]?.samples ?? [];
    expect(samples).toHaveLength(SAMPLES_KEPT);
    expect(samples[0]).toEqual({ time: at(T0 + 3 * 30 * S), query: 'err{rev="R1"}', value: 0.1, verdict: 'Success', message: '0.1 < 1' });
    expect(samples[9]?.time).toBe(at(T0 + 12 * 30 * S));
  });

  it('notes in the sample when no data was counted by policy', () => {
    const [step] = feed(spec({ noData: 'Pass' }), 'N');
    expect(step?.status.metrics?.[0]?.samples?.[0]).toMatchObject({
      verdict: 'NoData',
      message: 'the query returned no series; counted as a success (noData Pass)',
    });
    expect(step?.recorded).toEqual([{ metric: 'errors', verdict: 'NoData' }]);
  });

  it('emits an Event per sample and one per transition', () => {
    const steps = feed(spec(), 'NSSS');
    expect(steps.map((s) => s.events.map((e) => `${e.type} ${e.reason}`))).toEqual([
      ['Normal AnalysisSample', 'Normal AnalysisNoData'],
      ['Normal AnalysisSample'],
      ['Normal AnalysisSample'],
      ['Normal AnalysisSample', 'Normal AnalysisPassed'],
    ]);
    expect(steps[1]?.events[0]?.message).toBe('errors: err{rev="R1"} = 0.1: Success (0.1 < 1)');
    const failed = feed(spec(), 'F')[0];
    expect(failed?.events).toEqual([
      { type: 'Warning', reason: 'AnalysisSample', message: 'errors: err{rev="R1"} = 5: Failure (5 not < 1)' },
      { type: 'Warning', reason: 'AnalysisFailed', message: 'Analysis of rollout R1 group 1 failed: errors' },
    ]);
  });

  it('schedules the next sample one interval after the last', () => {
    const [step] = feed(spec(), 'S');
    expect(step?.nextSampleAt).toBe(T0 + 60 * S);
    expect(step?.due).toEqual([]);
  });
});

describe('stepAnalysis: several metrics', () => {
  const two = spec({}, [
    { name: 'errors', query: 'e', threshold: { op: '<', value: 1 }, consecutiveSuccesses: 1 },
    { name: 'latency', query: 'l', threshold: { op: '<', value: 1 }, consecutiveSuccesses: 2 },
  ]);

  it('passes only once every metric has, and samples only the metrics still running', () => {
    const start = stepAnalysis({ spec: two, status: undefined, key: KEY, now: T0 });
    const first = stepAnalysis({ spec: two, status: start.status, key: KEY, now: T0 + 30 * S, samples: [taken('errors', 'S'), taken('latency', 'S')] });
    expect(first.outcome).toBe('Running');
    expect(first.status.metrics?.map((m) => m.outcome)).toEqual(['Successful', 'Running']);
    expect(stepAnalysis({ spec: two, status: first.status, key: KEY, now: T0 + 60 * S }).due).toEqual(['latency']);
    const second = stepAnalysis({ spec: two, status: first.status, key: KEY, now: T0 + 60 * S, samples: [taken('latency', 'S')] });
    expect(second.outcome).toBe('Successful');
  });

  it('fails as soon as one metric fails', () => {
    const start = stepAnalysis({ spec: two, status: undefined, key: KEY, now: T0 });
    const step = stepAnalysis({ spec: two, status: start.status, key: KEY, now: T0 + 30 * S, samples: [taken('errors', 'S'), taken('latency', 'F')] });
    expect(step.outcome).toBe('Failed');
    expect(step.nextSampleAt).toBeUndefined();
  });
});

describe('analysisHealth', () => {
  it.each<[AnalysisOutcome, string]>([
    ['Failed', 'Degraded'],
    ['WaitingForData', 'Progressing'],
    ['Running', 'Progressing'],
    ['Inconclusive', 'Suspended'],
    ['Successful', 'Healthy'],
  ])('%s → %s', (outcome, health) => {
    expect(analysisHealth(outcome)).toBe(health);
  });
});

describe('analysisGate', () => {
  it.each<[AnalysisOutcome, 'Hold' | 'ShiftBack', ReturnType<typeof analysisGate>]>([
    ['Successful', 'Hold', { pass: true, shiftBack: false }],
    ['Running', 'ShiftBack', { pass: false, shiftBack: false }],
    ['WaitingForData', 'ShiftBack', { pass: false, shiftBack: false }],
    ['Failed', 'Hold', { pass: false, holdReason: 'AnalysisFailed', shiftBack: false }],
    ['Failed', 'ShiftBack', { pass: false, holdReason: 'AnalysisFailed', shiftBack: true }],
    ['Inconclusive', 'ShiftBack', { pass: false, holdReason: 'AnalysisInconclusive', shiftBack: false }],
  ])('%s with onFailure %s', (outcome, onFailure, expected) => {
    expect(analysisGate(outcome, onFailure)).toEqual(expected);
  });
});
