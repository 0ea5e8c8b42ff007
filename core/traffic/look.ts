import type { AnalysisSpec, AnalysisStatus, SampleVerdict, TrafficStatus } from '../api/traffic.js';
import { ED_KIND } from '../api/identity.js';
import { metricQueries } from '../analysis/query.js';
import { instantQueryUrl, parseQueryResponse, queryFailure, type SampleValue } from '../analysis/prometheus.js';
import { analysisGate, stepAnalysis, type AnalysisStep, type TakenSample } from '../analysis/run.js';
import type { Problem } from '../problems.js';
import type { RolloutAction } from '../rollout/actions.js';
import type { RolloutEvent, RolloutInput } from '../rollout/planner.js';
import type { AnalysisAnswer, AnalysisQuery } from './observation.js';
import { planTraffic, type LiveRevision, type TrafficPlan } from './plan.js';

/** Where the rollout stands when the traffic look runs: the group in progress and whether its pods are available. */
export interface BarrierPosition {
  readonly group: number;
  readonly totalGroups: number;
  /** Every region's current group is available: the group barrier is reached. */
  readonly groupAvailable: boolean;
  /** Paused, aborted or waiting for approval: the canary's share stays where it is. */
  readonly held: boolean;
}

/** What traffic and analysis decide at one look: whether the barrier may pass, the writes, the status and its Events. */
export interface TrafficLook {
  /** The group barrier may pass as far as traffic and analysis go. */
  readonly pass: boolean;
  /** A failed or inconclusive analysis holds the rollout Paused with this reason and message. */
  readonly hold?: { readonly reason: 'AnalysisFailed' | 'AnalysisInconclusive'; readonly message: string };
  /** Why the barrier waits (a weight step not yet accepted, an analysis running or waiting for data). */
  readonly waiting?: { readonly reason: 'TrafficShifting' | 'Analyzing'; readonly message: string };
  readonly actions: readonly RolloutAction[];
  /** status.traffic and status.analysis to write; undefined clears them. */
  readonly status: { readonly traffic: TrafficStatus | undefined; readonly analysis: AnalysisStatus | undefined };
  /** The status records new weights, a drain or a sample: it goes out before the writes. */
  readonly statusFirst: boolean;
  readonly events: readonly RolloutEvent[];
  /** Each sample recorded with its verdict, for the samples metric. */
  readonly samples: readonly { readonly metric: string; readonly verdict: SampleVerdict }[];
  readonly problems: readonly Problem[];
  readonly wakeAt: readonly number[];
}

/** Every revision with pods, with its Ready pods and whether the rollout goes to it. */
export function liveRevisions(input: Pick<RolloutInput, 'regions'>): LiveRevision[] {
  const targets = new Set(input.regions.map((r) => r.targetRevision));
  const byRevision = new Map<string, { pods: number; ready: number }>();
  for (const region of input.regions) {
    for (const pod of region.pods) {
      if (pod.revision === undefined || pod.terminating || pod.phase === 'Failed' || pod.phase === 'Succeeded') continue;
      const entry = byRevision.get(pod.revision) ?? { pods: 0, ready: 0 };
      byRevision.set(pod.revision, { pods: entry.pods + 1, ready: entry.ready + (pod.ready ? 1 : 0) });
    }
  }
  return [...byRevision].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([revision, counts]) => ({ revision, ...counts, target: targets.has(revision) }));
}

/** The analysis of the barrier the status records, while it samples: the rollout revision and group it belongs to. */
function runningAnalysis(input: RolloutInput): { spec: AnalysisSpec; status: AnalysisStatus } | undefined {
  const spec = input.ed.spec.strategy.traffic?.analysis;
  const status = input.status?.analysis;
  if (spec === undefined || status === undefined || status.revision !== input.rolloutRevision || status.group !== input.status?.currentGroup) return undefined;
  if (status.outcome === 'Successful' || status.outcome === 'Failed' || status.outcome === 'Inconclusive') return undefined;
  return { spec, status };
}

/** The placeholder values of this look: the canary's revisions and the stable ones (`a|b` when several: use `=~`). */
function queryValues(input: RolloutInput) {
  const live = liveRevisions(input);
  const join = (revisions: readonly string[]) => (revisions.length === 0 ? undefined : revisions.join('|'));
  const regions = input.regions.map((r) => r.name);
  return {
    namespace: input.ed.metadata.namespace ?? '',
    name: input.ed.metadata.name,
    revision: join([...new Set(input.regions.map((r) => r.targetRevision))].sort()),
    stableRevision: join(live.filter((r) => !r.target).map((r) => r.revision)),
    region: regions.length === 1 ? regions[0] : undefined,
    cluster: input.ed.spec.fleet?.cluster,
  };
}

const objectOf = (input: RolloutInput) => ({ kind: ED_KIND, namespace: input.ed.metadata.namespace, name: input.ed.metadata.name });

/**
 * The Prometheus queries the agent runs before this look (their answers come back in `input.traffic.answers`): those
 * of every metric still sampling whose next sample is due, by the status written at earlier looks. The analysis of a
 * barrier starts at the look that reaches it (status first), so the first samples come an interval later.
 */
export function analysisQueriesDue(input: RolloutInput): AnalysisQuery[] {
  const running = runningAnalysis(input);
  if (running === undefined) return [];
  const due = Date.parse(running.status.nextSampleAt ?? '');
  if (Number.isNaN(due) || due > input.now) return [];
  const { spec } = running;
  const values = queryValues(input);
  const concluded = new Set(
    (running.status.metrics ?? []).filter((m) => m.outcome === 'Successful' || m.outcome === 'Failed' || m.outcome === 'Inconclusive').map((m) => m.name),
  );
  return spec.metrics.flatMap((metric, i): AnalysisQuery[] => {
    if (concluded.has(metric.name)) return [];
    const queries = metricQueries(metric, i, spec.window, values, objectOf(input));
    if (!queries.ok) return [];
    const query = (role: AnalysisQuery['role'], text: string): AnalysisQuery => ({
      metric: metric.name,
      role,
      query: text,
      url: instantQueryUrl(spec.prometheus.address, text),
      timeoutSeconds: spec.prometheus.timeoutSeconds,
    });
    return [query('candidate', queries.value.query), ...(queries.value.stableQuery === undefined ? [] : [query('stable', queries.value.stableQuery)])];
  });
}

/** The samples the answers make, one per metric answered (a metric whose query could not be built errs: its problem). */
function takenSamples(input: RolloutInput, spec: AnalysisSpec, answers: readonly AnalysisAnswer[]): { samples: TakenSample[]; problems: Problem[] } {
  if (answers.length === 0) return { samples: [], problems: [] };
  const value = (answer: AnalysisAnswer | undefined, aggregate: (typeof spec.metrics)[number]['aggregate']): SampleValue =>
    answer === undefined ? queryFailure('no answer') : answer.error !== undefined ? queryFailure(answer.error) : parseQueryResponse(answer.body, aggregate);
  const problems: Problem[] = [];
  const samples = spec.metrics.flatMap((metric, i): TakenSample[] => {
    const mine = answers.filter((a) => a.query.metric === metric.name);
    if (mine.length === 0) return [];
    const candidate = mine.find((a) => a.query.role === 'candidate');
    const stable = mine.find((a) => a.query.role === 'stable');
    const built = metricQueries(metric, i, spec.window, queryValues(input), objectOf(input));
    if (!built.ok) problems.push(...built.problems);
    return [
      {
        metric: metric.name,
        query: candidate?.query.query ?? metric.query,
        candidate: value(candidate, metric.aggregate),
        ...(metric.compareToStable && { stable: value(stable, metric.aggregate) }),
      },
    ];
  });
  return { samples, problems };
}

/**
 * Traffic and analysis at one look (spec.strategy.traffic), pure. Undefined without a traffic strategy, and where the
 * agent read nothing of it (edctl plan): then no route is written and nothing gates the barrier.
 *
 * 1. The weights (core/traffic/plan.ts) for the group in progress, held while the rollout is, and with the canary at 0
 *    while a failed analysis shifted it back (onFailure ShiftBack).
 * 2. At a barrier between groups, once the group's weight step is applied (mode Weighted; at once in mode Replicas),
 *    the analysis of that barrier runs (core/analysis/run.ts) on the samples the agent took for it.
 * 3. The barrier passes when the step is applied and the analysis passed; a failed analysis holds Paused (and shifts
 *    back), an inconclusive one holds Paused, one running or waiting for data waits.
 * 4. Before the last group removes the stable side's pods, its weight goes to 0 (once the barrier's analysis passed)
 *    and the barrier waits until it drained for drainSeconds (core/traffic/drain.ts): no pod leaves while it has weight.
 */
export function lookAtTraffic(input: RolloutInput, at: BarrierPosition): TrafficLook | undefined {
  const traffic = input.ed.spec.strategy.traffic;
  const observed = input.traffic;
  if (traffic === undefined || observed === undefined) return undefined;
  const spec = traffic.analysis;
  const key = { revision: input.rolloutRevision, group: at.group };
  // `edctl resume` after a failed or inconclusive analysis runs it again: the old one started before the resume.
  const resumed = (input.controls.resumedAt ?? 0) > (Date.parse(input.status?.analysis?.startedAt ?? '') || Number.POSITIVE_INFINITY);
  const recorded = resumed ? undefined : input.status?.analysis;
  const thisBarrier = recorded?.revision === key.revision && recorded.group === key.group;
  const failedBefore = thisBarrier && (recorded.outcome === 'Failed' || recorded.outcome === 'Inconclusive');
  const owner = { name: input.ed.metadata.name, namespace: input.ed.metadata.namespace ?? '', uid: input.uid ?? '' };
  const atBarrier = at.groupAvailable && at.group >= 1 && at.group < at.totalGroups;
  const live = liveRevisions(input);
  const recordedTraffic = input.status?.traffic;
  const atThisStep = recordedTraffic?.revision === input.status?.revision && recordedTraffic?.group === at.group;
  // The step of this group went out and was accepted, and its analysis (if any) passed.
  const stepPassed =
    atThisStep && recordedTraffic.appliedGeneration !== undefined && (spec === undefined || (thisBarrier && recorded.outcome === 'Successful'));
  // Once the stable side's weight 0 is recorded for this step it stays leaving (its drain may take several looks).
  const stableAtZero =
    atThisStep &&
    live.some((r) => !r.target) &&
    live.filter((r) => !r.target).every((r) => (recordedTraffic.weights ?? []).find((w) => w.revision === r.revision)?.weight === 0);
  // The stable side leaves before the last group removes its pods: at the barrier into the last group, once that
  // group's step went out (and its analysis passed), its weight goes to 0 and the barrier waits until it drained; in
  // the last group it stays at 0.
  const finalBarrier = atBarrier && at.group === at.totalGroups - 1;
  const leaving = at.group >= at.totalGroups || (finalBarrier && (stableAtZero || stepPassed));
  const revisions = live.map((r) => (leaving && !r.target ? { ...r, leaving: true } : r));
  const plan = (shiftBack: boolean, hold: boolean): TrafficPlan =>
    planTraffic({
      owner,
      traffic,
      rolloutRevision: input.status?.revision,
      group: at.group,
      groupReady: at.groupAvailable,
      revisions,
      route: observed.route,
      services: observed.services,
      status: input.status?.traffic,
      hold,
      shiftBack,
      now: input.now,
    });
  const shiftedBefore = failedBefore && recorded.outcome === 'Failed' && spec?.onFailure === 'ShiftBack';
  let weights = plan(shiftedBefore, at.held || failedBefore);
  const applied = traffic.mode === 'Replicas' || weights.applied;

  let analysis: AnalysisStep | undefined;
  const problems: Problem[] = [...weights.problems];
  if (spec !== undefined && atBarrier && applied) {
    const taken = takenSamples(input, spec, observed.answers);
    problems.push(...taken.problems);
    analysis = stepAnalysis({ spec, status: thisBarrier ? recorded : undefined, key, now: input.now, samples: taken.samples });
    const gate = analysisGate(analysis.outcome, spec.onFailure);
    if (gate.shiftBack && !shiftedBefore) weights = plan(true, true);
  }
  const gate = analysis === undefined || spec === undefined ? undefined : analysisGate(analysis.outcome, spec.onFailure);
  const stable = revisions.filter((r) => !r.target).map((r) => r.revision);
  // Into the last group only once the stable side drained; the other barriers need no drain.
  const drained = !finalBarrier || (leaving && stable.every((r) => weights.drain.removable.includes(r)));
  const trafficPass = traffic.mode === 'Replicas' || !atBarrier || (weights.barrierMayAdvance && drained);
  const pass = trafficPass && (spec === undefined || !atBarrier || gate?.pass === true);
  const hold = gate?.holdReason === undefined ? undefined : { reason: gate.holdReason, message: holdMessage(gate.holdReason, key, gate.shiftBack) };
  const waiting =
    pass || hold !== undefined
      ? undefined
      : !applied || !weights.barrierMayAdvance
        ? {
            reason: 'TrafficShifting' as const,
            message: `group ${at.group}'s weight step is not applied yet: ${weights.status?.message ?? 'writing the route'}`,
          }
        : !drained
          ? { reason: 'TrafficShifting' as const, message: `the previous revisions drain (weight 0) before group ${at.group + 1} removes their last pods` }
          : { reason: 'Analyzing' as const, message: `group ${at.group} is analysed before group ${at.group + 1} starts (${analysis?.outcome ?? 'Running'})` };
  // An analysis of another barrier stays in the status until this one starts: what was decided stays visible.
  const analysisStatus = analysis?.status ?? (spec === undefined ? undefined : recorded);
  return {
    pass,
    ...(hold !== undefined && { hold }),
    ...(waiting !== undefined && { waiting }),
    actions: weights.writes.map((write): RolloutAction => ({ kind: 'traffic', write })),
    status: { traffic: weights.status, analysis: analysisStatus },
    statusFirst: weights.statusFirst || (analysis !== undefined && (analysis.recorded.length > 0 || !thisBarrier)),
    events: analysis?.events ?? [],
    samples: analysis?.recorded ?? [],
    problems,
    wakeAt: [...weights.wakeAt, ...(analysis?.nextSampleAt !== undefined ? [analysis.nextSampleAt] : [])],
  };
}

function holdMessage(reason: 'AnalysisFailed' | 'AnalysisInconclusive', key: { revision: string; group: number }, shiftBack: boolean): string {
  const what = reason === 'AnalysisFailed' ? 'failed' : 'is inconclusive';
  const then = shiftBack ? '; the canary is shifted back to weight 0' : '';
  return `the analysis of group ${key.group} ${what}${then}: the rollout holds until Git changes, or edctl resume runs the analysis again`;
}
