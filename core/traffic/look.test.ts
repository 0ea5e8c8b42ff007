import { describe, expect, it } from 'vitest';
import type { ExtendedDeploymentStatus } from '../api/extended-deployment.js';
import { extendedDeploymentStatus } from '../api/extended-deployment.js';
import { decide } from '../rollout/decision.js';
import type { RolloutInput } from '../rollout/planner.js';
import type { PodState, RegionState } from '../rollout/snapshot.js';
import { podState, rolloutInput, webEd } from '../rollout/test-support.js';
import type { HTTPRouteObject, ObservedRoute } from './objects.js';
import { analysisQueriesDue, liveRevisions } from './look.js';
import type { AnalysisAnswer, TrafficObservation } from './observation.js';

// Traffic and analysis through the planner (decide): the group barrier waits for the group's weight step to be
// accepted, then for its analysis; a failed analysis holds Paused (and shifts the canary back), one in error never passes.

const T0 = Date.UTC(2026, 10, 29, 10);
const S = 1000;
const GATEWAY = { parentRefs: [{ name: 'public', namespace: 'gateways' }] };
const PROMETHEUS = 'http://127.0.0.1:9090';

const errorRate = {
  name: 'error-rate',
  query: 'sum(rate(http_errors{service="{{name}}-{{revision}}"}[{{window}}])) / sum(rate(http_requests{service="{{name}}-{{revision}}"}[{{window}}]))',
  threshold: { op: '<', value: 0.05 },
  consecutiveSuccesses: 2,
  errorLimit: 1,
};
const ed = (analysis?: Record<string, unknown>) =>
  webEd([{ name: 'a', replicas: 6 }], {
    rolloutStrategy: 'Group',
    batchSize: 2,
    traffic: {
      mode: 'Weighted',
      route: GATEWAY,
      steps: [25, 50],
      ...(analysis && { analysis: { prometheus: { address: PROMETHEUS }, intervalSeconds: 30, ...analysis } }),
    },
  });

let uid = 0;
const pod = (revision: string, ready = true): PodState => podState(`p${++uid}`, { revision, ready, readySince: ready ? T0 - 3_600 * S : undefined });
/** Region a with group 1 of rollout R1 (of 3) available: two new pods Ready, four old ones. */
const group1 = (): RegionState => ({
  name: 'a',
  desired: 6,
  targetRevision: 'new',
  workload: { name: 'web-a', templateRevision: 'new', replicas: 6 },
  pods: [pod('new'), pod('new'), pod('old'), pod('old'), pod('old'), pod('old')],
});
const inGroup1: ExtendedDeploymentStatus = {
  observedGeneration: 1,
  phase: 'Progressing',
  revision: 'R1',
  rolloutRegions: ['a'],
  currentGroup: 1,
  totalGroups: 3,
  lastGroupStartTime: new Date(T0 - 60 * S).toISOString(),
};

/** The route as the API server holds it after `written` was applied, accepted by the Gateway at its generation. */
function accepted(written: HTTPRouteObject, generation = 1): ObservedRoute {
  return {
    ...written,
    metadata: { ...written.metadata, generation },
    status: {
      parents: [
        {
          parentRef: { group: 'gateway.networking.k8s.io', kind: 'Gateway', namespace: 'gateways', name: 'public' },
          controllerName: 'traefik.io/gateway-controller',
          conditions: [{ type: 'Accepted', status: 'True', observedGeneration: generation }],
        },
      ],
    },
  };
}

function look(
  spec: ReturnType<typeof ed>,
  status: ExtendedDeploymentStatus | undefined,
  now: number,
  observed: Partial<TrafficObservation> | null = {},
  controls: Partial<RolloutInput['controls']> = {},
) {
  const traffic: TrafficObservation | undefined =
    observed === null ? undefined : { route: undefined, services: [], routesServed: true, answers: [], ...observed };
  const input: RolloutInput = { ...rolloutInput(spec, [group1()], now, status, controls), ...(traffic && { traffic }) };
  return { input, decision: decide(input, status) };
}

/** The route and Services a decision writes. */
const writes = (decision: ReturnType<typeof decide>) => decision.plan.actions.flatMap((a) => (a.kind === 'traffic' ? [a.write] : []));
const routeOf = (decision: ReturnType<typeof decide>) => writes(decision).flatMap((w) => (w.kind === 'applyRoute' ? [w.route] : []))[0];
const weightsOf = (route: HTTPRouteObject | ObservedRoute | undefined) =>
  route?.spec?.rules?.[0]?.backendRefs?.map((b) => `${b.name}=${b.weight}`).sort() ?? [];

/** Group 1's weight step written and accepted: the status and route after it. */
function steppedIn(spec: ReturnType<typeof ed>) {
  const first = look(spec, inGroup1, T0).decision;
  const route = accepted(routeOf(first)!);
  const services = writes(first).flatMap((w) => (w.kind === 'applyService' ? [w.service] : []));
  return { status: first.plan.status, route, services };
}

describe('the weight step at a group barrier', () => {
  it('writes the step (status first) and holds the barrier until the Gateway accepted it; then the next group starts', () => {
    const { decision } = look(ed(), inGroup1, T0);
    expect(weightsOf(routeOf(decision))).toEqual(['web-new=2500', 'web-old=7500']);
    expect(writes(decision).filter((w) => w.kind === 'applyService')).toHaveLength(2);
    expect(decision.statusWrite).toBe('first');
    expect(decision.plan.status.phase).toBe('Progressing');
    expect(decision.plan.status.conditions?.find((c) => c.type === 'Progressing')?.reason).toBe('TrafficShifting');
    expect(decision.plan.status.currentGroup).toBe(1);
    expect(extendedDeploymentStatus.parse(decision.plan.status)).toEqual(decision.plan.status);

    const { status, route, services } = steppedIn(ed());
    const next = look(ed(), status, T0 + S, { route, services }).decision;
    expect(writes(next)).toEqual([]);
    expect(next.plan.status.currentGroup).toBe(2);
    expect(next.plan.status.traffic).toMatchObject({ appliedGeneration: 1 });
  });

  it('a route written but not accepted for its generation keeps the barrier closed', () => {
    const { status, route, services } = steppedIn(ed());
    const stale = accepted(route as HTTPRouteObject, 2);
    const unaccepted = {
      ...stale,
      status: { parents: stale.status!.parents!.map((p) => ({ ...p, conditions: [{ type: 'Accepted', status: 'True', observedGeneration: 1 }] })) },
    };
    expect(look(ed(), status, T0 + S, { route: unaccepted, services }).decision.plan.status.currentGroup).toBe(1);
  });

  it('where the agent reads nothing of traffic (edctl plan), nothing is written and nothing gates the barrier', () => {
    const { decision } = look(ed(), inGroup1, T0, null);
    expect(writes(decision)).toEqual([]);
    expect(decision.plan.status.currentGroup).toBe(2);
  });

  it('paused, the route keeps the step the status recorded', () => {
    const { status, route, services } = steppedIn(ed());
    const paused = look(ed(), status, T0 + S, { route, services }, { paused: true }).decision;
    expect(writes(paused)).toEqual([]);
    expect(paused.plan.status.phase).toBe('Paused');
  });
});

describe('the stable side drains before the last group', () => {
  /** Group 2 of 3 available: four new pods Ready, two old ones. */
  const group2 = (): RegionState => ({ ...group1(), pods: [pod('new'), pod('new'), pod('new'), pod('new'), pod('old'), pod('old')] });
  const inGroup2: ExtendedDeploymentStatus = { ...inGroup1, currentGroup: 2 };
  const at = (status: ExtendedDeploymentStatus, now: number, route?: ObservedRoute) => {
    const input: RolloutInput = {
      ...rolloutInput(ed(), [group2()], now, status),
      traffic: { route, services: [], routesServed: true, answers: [] },
    };
    return decide(input, status);
  };

  it("its weight goes to 0 once the group's step went out, and the last group starts only drainSeconds after the Gateway accepted it", () => {
    const step = at(inGroup2, T0);
    expect(weightsOf(routeOf(step))).toEqual(['web-new=5000', 'web-old=5000']);
    const stepped = at(step.plan.status, T0 + S, accepted(routeOf(step)!, 1));
    expect(stepped.plan.status.traffic?.appliedGeneration).toBe(1);
    expect(stepped.plan.status.currentGroup).toBe(2);

    const leaving = at(stepped.plan.status, T0 + 2 * S, accepted(routeOf(step)!, 1));
    expect(weightsOf(routeOf(leaving))).toEqual(['web-new=10000', 'web-old=0']);
    expect(leaving.statusWrite).toBe('first');
    const zero = accepted(routeOf(leaving)!, 2);
    const draining = at(leaving.plan.status, T0 + 3 * S, zero);
    expect(draining.plan.status.traffic?.draining).toEqual([{ revision: 'old', since: new Date(T0 + 3 * S).toISOString() }]);
    expect(draining.plan.status.conditions?.find((c) => c.type === 'Progressing')?.message).toContain('drain');
    const before = at(draining.plan.status, T0 + 32 * S, zero);
    for (const [i, look] of [step, stepped, leaving, draining, before].entries()) {
      expect(look.plan.status.currentGroup).toBe(2);
      expect(
        look.plan.actions.filter((a) => a.kind !== 'traffic'),
        `look ${i}`,
      ).toEqual([]);
    }
    expect(before.lookAgainInMs).toBeLessThanOrEqual(2 * S);
    const last = at(before.plan.status, T0 + 33 * S, zero);
    expect(last.plan.status.currentGroup).toBe(3);
    expect(writes(last).filter((w) => w.kind === 'applyRoute')).toEqual([]);
  });
});

describe('analysis at the barrier', () => {
  const answer = (input: RolloutInput, value: string | undefined, error?: string): AnalysisAnswer[] =>
    analysisQueriesDue(input).map((query) => ({
      query,
      at: input.now,
      ...(error !== undefined
        ? { error }
        : { body: { status: 'success', data: { resultType: 'vector', result: value === undefined ? [] : [{ metric: {}, value: [0, value] }] } } }),
    }));

  /** Looks every 30 s from the accepted step on, answering each due query with `value` (or `error`); returns the decisions. */
  function sample(spec: ReturnType<typeof ed>, looks: number, value: string | undefined, error?: string) {
    const stepped = steppedIn(spec);
    let status = stepped.status;
    const decisions = [];
    for (let i = 0; i < looks; i++) {
      const now = T0 + S + i * 30 * S;
      const asked = look(spec, status, now, { route: stepped.route, services: stepped.services }).input;
      const { decision } = look(spec, status, now, { route: stepped.route, services: stepped.services, answers: answer(asked, value, error) });
      decisions.push(decision);
      status = decision.plan.status;
    }
    return decisions;
  }

  it('starts when the step is applied (Analyzing), samples once an interval has passed, and lets the next group start after the successes in a row', () => {
    const [start, first, second] = sample(ed({ metrics: [errorRate] }), 3, '0.01');
    expect(start!.plan.status.conditions?.find((c) => c.type === 'Progressing')?.reason).toBe('Analyzing');
    expect(start!.plan.status.analysis).toMatchObject({ revision: 'R1', group: 1, outcome: 'Running' });
    expect(first!.plan.status.currentGroup).toBe(1);
    expect(first!.plan.analysisSamples).toEqual([{ metric: 'error-rate', verdict: 'Success' }]);
    const recorded = first!.plan.status.analysis?.metrics?.[0]?.samples?.[0];
    expect(recorded).toMatchObject({ value: 0.01, verdict: 'Success', query: expect.stringContaining('service="web-new"') });
    expect(first!.plan.events.map((e) => e.reason)).toContain('AnalysisSample');
    expect(second!.plan.status.currentGroup).toBe(2);
    expect(extendedDeploymentStatus.parse(second!.plan.status)).toEqual(second!.plan.status);
  });

  it('no query is due before the interval, nor once the analysis concluded', () => {
    const { status, route, services } = steppedIn(ed({ metrics: [errorRate] }));
    const started = look(ed({ metrics: [errorRate] }), status, T0 + S, { route, services }).decision.plan.status;
    expect(analysisQueriesDue(look(ed({ metrics: [errorRate] }), started, T0 + 20 * S).input)).toEqual([]);
    const due = analysisQueriesDue(look(ed({ metrics: [errorRate] }), started, T0 + 31 * S).input);
    expect(due).toHaveLength(1);
    expect(due[0]?.url).toBe(`${PROMETHEUS}/api/v1/query?query=${encodeURIComponent(due[0]!.query)}`);
  });

  it('a failing canary holds the rollout Paused (AnalysisFailed), its weights unchanged with onFailure Hold', () => {
    const decisions = sample(ed({ metrics: [errorRate] }), 2, '0.5');
    const failed = decisions[1]!;
    expect(failed.plan.status.phase).toBe('Paused');
    expect(failed.plan.status.conditions?.find((c) => c.type === 'Progressing')?.reason).toBe('AnalysisFailed');
    expect(writes(failed)).toEqual([]);
    expect(failed.plan.events.map((e) => e.reason)).toContain('AnalysisFailed');
  });

  it('with onFailure ShiftBack the canary goes to weight 0 (its pods stay) and the rollout holds', () => {
    const decisions = sample(ed({ metrics: [errorRate], onFailure: 'ShiftBack' }), 2, '0.5');
    const failed = decisions[1]!;
    expect(weightsOf(routeOf(failed))).toEqual(['web-new=0', 'web-old=10000']);
    expect(failed.plan.status.traffic?.shiftedBack).toBe(true);
    expect(failed.plan.status.phase).toBe('Paused');
    expect(failed.plan.actions.filter((a) => a.kind !== 'traffic')).toEqual([]);
  });

  it('Prometheus in error makes it Inconclusive (Paused), never Successful', () => {
    const decisions = sample(ed({ metrics: [errorRate] }), 4, undefined, 'connect ECONNREFUSED 127.0.0.1:9090');
    expect(decisions.map((d) => d.plan.status.analysis?.outcome)).toEqual(['Running', 'Running', 'Inconclusive', 'Inconclusive']);
    expect(decisions[2]!.plan.status.conditions?.find((c) => c.type === 'Progressing')?.reason).toBe('AnalysisInconclusive');
    expect(decisions.every((d) => d.plan.status.currentGroup === 1)).toBe(true);
  });

  it('no data waits (WaitingForData, Progressing) without counting toward a pass', () => {
    const decisions = sample(ed({ metrics: [errorRate] }), 4, undefined);
    expect(decisions.slice(1).map((d) => d.plan.status.analysis?.outcome)).toEqual(['WaitingForData', 'WaitingForData', 'WaitingForData']);
    expect(decisions[3]!.plan.status.phase).toBe('Progressing');
    expect(decisions[3]!.plan.status.currentGroup).toBe(1);
  });

  it('edctl resume after a failure runs the analysis again', () => {
    const spec = ed({ metrics: [errorRate] });
    const failed = sample(spec, 2, '0.5')[1]!.plan.status;
    const { route, services } = steppedIn(spec);
    const resumedAt = T0 + 120 * S;
    const again = look(spec, failed, resumedAt + S, { route, services }, { resumedAt }).decision;
    expect(again.plan.status.analysis).toMatchObject({ outcome: 'Running', startedAt: new Date(resumedAt + S).toISOString() });
    expect(again.plan.status.phase).toBe('Progressing');
  });
});

describe('liveRevisions', () => {
  it('counts the pods and Ready pods of each revision, marks the target, leaves out terminating and finished pods', () => {
    const region: RegionState = {
      ...group1(),
      pods: [pod('new'), pod('new', false), pod('old'), { ...pod('old'), terminating: true }, { ...pod('old'), phase: 'Failed' }],
    };
    expect(liveRevisions({ regions: [region] })).toEqual([
      { revision: 'new', pods: 2, ready: 1, target: true },
      { revision: 'old', pods: 1, ready: 1, target: false },
    ]);
  });
});
