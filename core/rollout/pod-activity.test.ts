import { describe, expect, it } from 'vitest';
import { isPodActive, isPodTerminal, isPodTerminating } from './pod-activity.js';
import { countPods, isAvailable, type PodState, type RegionState } from './snapshot.js';

const T0 = Date.UTC(2026, 0, 1);

describe('pod activity, as the ReplicaSet controller counts pods (IsPodActive, IsPodTerminating)', () => {
  it.each([
    // phase, being deleted → terminal, active, terminating (holds room)
    [undefined, false, false, true, false],
    ['Pending', false, false, true, false],
    ['Running', false, false, true, false],
    ['Unknown', false, false, true, false],
    ['Running', true, false, false, true],
    ['Failed', false, true, false, false],
    ['Succeeded', false, true, false, false],
    ['Failed', true, true, false, false],
    ['Succeeded', true, true, false, false],
  ] as const)('phase %s, deletionTimestamp %s: terminal %s, active %s, terminating %s', (phase, terminating, terminal, active, holding) => {
    const pod = { phase, terminating };
    expect([isPodTerminal(pod), isPodActive(pod), isPodTerminating(pod)]).toEqual([terminal, active, holding]);
  });
});

describe('countPods: terminal pods count nowhere, terminating ones only as holding room', () => {
  let uid = 0;
  const pod = (revision: string, overrides: Partial<PodState> = {}): PodState => {
    uid++;
    return {
      name: `p${uid}`,
      uid: `u${uid}`,
      revision,
      assigned: true,
      running: true,
      phase: 'Running',
      ready: true,
      readySince: T0 - 60_000,
      terminating: false,
      markedOld: false,
      ...overrides,
    };
  };
  // An evicted pod as the kubelet leaves it: phase Failed (reason Evicted), its containers stopped, Ready False.
  const evicted = (revision: string, overrides: Partial<PodState> = {}) => pod(revision, { running: false, phase: 'Failed', ready: false, ...overrides });
  const region = (pods: PodState[]): RegionState => ({ name: 'a', desired: 3, targetRevision: 'new', workload: undefined, pods });
  const counts = (pods: PodState[]) => countPods(region(pods), 0, T0);
  const base = [pod('new'), pod('old'), pod('old')];

  it.each([
    ['nothing else', [], { current: 3, updated: 1, old: 2, ready: 3, available: 3, updatedAvailable: 1, oldAvailable: 2, terminating: 0 }],
    ['an evicted new pod', [evicted('new')], { current: 3, updated: 1, old: 2, ready: 3, available: 3, updatedAvailable: 1, oldAvailable: 2, terminating: 0 }],
    ['an evicted old pod', [evicted('old')], { current: 3, updated: 1, old: 2, ready: 3, available: 3, updatedAvailable: 1, oldAvailable: 2, terminating: 0 }],
    [
      'a Failed pod whose Ready condition was never updated',
      [evicted('new', { ready: true })],
      { current: 3, updated: 1, old: 2, ready: 3, available: 3, updatedAvailable: 1, oldAvailable: 2, terminating: 0 },
    ],
    [
      'a Succeeded pod',
      [pod('new', { running: false, phase: 'Succeeded', ready: false })],
      { current: 3, updated: 1, old: 2, ready: 3, available: 3, updatedAvailable: 1, oldAvailable: 2, terminating: 0 },
    ],
    [
      'an evicted pod being deleted (it holds no room)',
      [evicted('old', { terminating: true })],
      { current: 3, updated: 1, old: 2, ready: 3, available: 3, updatedAvailable: 1, oldAvailable: 2, terminating: 0 },
    ],
    [
      'a terminating Ready pod (not available, holds room)',
      [pod('new', { terminating: true })],
      { current: 3, updated: 1, old: 2, ready: 3, available: 3, updatedAvailable: 1, oldAvailable: 2, terminating: 1 },
    ],
  ])('%s', (_what, extra, expected) => {
    expect(counts([...base, ...extra])).toEqual(expected);
  });

  it.each([
    ['Running and Ready', true, pod('new')],
    ['terminating', false, pod('new', { terminating: true })],
    ['Failed with Ready still True', false, evicted('new', { ready: true })],
    ['Succeeded with Ready still True', false, pod('new', { phase: 'Succeeded', running: false, ready: true })],
  ])('a pod %s is available: %s', (_what, available, p) => {
    expect(isAvailable(p, 0, T0)).toBe(available);
  });
});
