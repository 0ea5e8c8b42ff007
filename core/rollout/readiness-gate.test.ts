import { describe, expect, it } from 'vitest';
import { extendedDeployment } from '../api/extended-deployment.js';
import { planRollout } from './planner.js';
import type { PodState, RegionState } from './snapshot.js';

const T0 = Date.UTC(2026, 0, 1);
const ed = (strategy: Record<string, unknown>) =>
  extendedDeployment.parse({
    apiVersion: 'extendeddeployment.io/v1beta1',
    kind: 'ExtendedDeployment',
    metadata: { name: 'llm' },
    spec: { selector: { matchLabels: { a: 'b' } }, template: { metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'c', image: 'i' }] } }, regions: [{ name: 'gpu', replicas: 3 }], strategy },
  });
const pod = (name: string, o: Partial<PodState>): PodState => ({ name, uid: `u-${name}`, revision: 'new', assigned: true, running: true, ready: false, readySince: undefined, terminating: false, markedOld: false, ...o });
const region = (pods: PodState[]): RegionState => ({ name: 'gpu', desired: 3, targetRevision: 'new', workload: { name: 'llm-gpu', templateRevision: 'new', replicas: 3 }, pods });
const gates = (strategy: Record<string, unknown>, pods: PodState[], controls = {}) =>
  planRollout({ ed: ed(strategy), generation: 1, rolloutRevision: 'R', regions: [region(pods)], status: undefined, controls: { paused: false, aborted: false, approvedThrough: undefined, resumedAt: undefined, ...controls }, now: T0 })
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
