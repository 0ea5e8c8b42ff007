import { describe, expect, it } from 'vitest';
import { extendedDeployment } from '../api/extended-deployment.js';
import { planRollout } from './planner.js';
import { gateActions } from './readiness-gate.js';
import type { PodState, RegionState } from './snapshot.js';
import { podState } from './test-support.js';

const T0 = Date.UTC(2026, 0, 1);
const ed = (strategy: Record<string, unknown>) =>
  extendedDeployment.parse({
    apiVersion: 'extendeddeployment.io/v1beta1',
    kind: 'ExtendedDeployment',
    metadata: { name: 'llm' },
    spec: {
      selector: { matchLabels: { a: 'b' } },
      template: { metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'c', image: 'i' }] } },
      regions: [{ name: 'gpu', replicas: 3 }],
      strategy,
    },
  });
const pod = podState;
const region = (pods: PodState[]): RegionState => ({
  name: 'gpu',
  desired: 3,
  targetRevision: 'new',
  workload: { name: 'llm-gpu', templateRevision: 'new', replicas: 3 },
  pods,
});
const gates = (strategy: Record<string, unknown>, pods: PodState[], controls = {}) =>
  planRollout({
    ed: ed(strategy),
    generation: 1,
    rolloutRevision: 'R',
    regions: [region(pods)],
    status: undefined,
    controls: { paused: false, aborted: false, approvedThrough: undefined, resumedAt: undefined, ...controls },
    now: T0,
  })
    .actions.filter((a) => a.kind === 'openGate')
    .map((a) => ('pod' in a ? a.pod : ''));

describe('InPlaceUpdateReady gate on new pods', () => {
  const pods = [
    pod('closed', { gated: true, gateOpen: false }),
    pod('open', { gated: true, gateOpen: true, ready: true, readySince: T0 - 60_000 }),
    pod('ungated', { gated: false }),
    pod('leaving', { gated: true, gateOpen: false, terminating: true }),
    // Evicted: its containers stopped for good, so an open gate would serve nothing (and the write would be wasted).
    pod('evicted', { gated: true, gateOpen: false, running: false, phase: 'Failed' }),
  ];

  it('opens the gate of every gated pod whose condition is not True, and only those', () => {
    expect(gates({}, pods)).toEqual(['closed']);
  });

  it('opens it whatever the rollout phase: paused and aborted included', () => {
    expect(gates({ pause: true }, pods)).toEqual(['closed']);
    expect(gates({}, pods, { aborted: true })).toEqual(['closed']);
  });
});

describe('gateActions: the gate each pod needs, from the pods and their swap records alone', () => {
  const swap = (phase: 'draining' | 'swapping' | 'done') => ({ revision: 'new', phase, since: T0 });
  // [case, pod, expected action]
  const table: [string, Partial<PodState>, 'openGate' | 'closeGate' | undefined][] = [
    ['gated, closed, no swap record', { gated: true, gateOpen: false }, 'openGate'],
    ['gated, never set (a pod just created)', { gated: true }, 'openGate'],
    ['gated, open, no swap record', { gated: true, gateOpen: true }, undefined],
    ['gated, closed, swap done', { gated: true, gateOpen: false, swap: swap('done') }, 'openGate'],
    ['gated, closed, draining', { gated: true, gateOpen: false, swap: swap('draining') }, undefined],
    ['gated, closed, swapping', { gated: true, gateOpen: false, swap: swap('swapping') }, undefined],
    ['gated, open, swapping (the gate write was lost)', { gated: true, gateOpen: true, swap: swap('swapping') }, 'closeGate'],
    ['ungated', { gated: false }, undefined],
    ['gated, closed, terminating', { gated: true, gateOpen: false, terminating: true }, undefined],
    ['gated, closed, Failed', { gated: true, gateOpen: false, running: false, phase: 'Failed' }, undefined],
    ['gated, closed, Succeeded', { gated: true, gateOpen: false, running: false, phase: 'Succeeded' }, undefined],
  ];

  it.each(table)('%s', (_case, state, expected) => {
    const actions = gateActions([{ name: 'gpu', pods: [pod('p', state)] }]);
    expect(actions).toEqual(expected ? [{ kind: expected, region: 'gpu', pod: 'p', uid: 'u-p' }] : []);
  });

  it('covers every region, each pod under its own region', () => {
    const actions = gateActions([
      { name: 'a', pods: [pod('a1', { gated: true }), pod('a2', { gated: true, gateOpen: true })] },
      { name: 'b', pods: [pod('b1', { gated: true, gateOpen: false })] },
    ]);
    expect(actions.map((a) => `${a.kind} ${a.region}/${a.pod}`)).toEqual(['openGate a/a1', 'openGate b/b1']);
  });
});
