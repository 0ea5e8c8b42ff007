import { describe, expect, it } from 'vitest';
import type { ContainerState, PodState, RegionState } from './snapshot.js';
import { podTrouble, STARTING_MS, stuckPods } from './stuck-pods.js';
import { podState } from './test-support.js';

const NOW = Date.UTC(2026, 0, 1);

const pod = podState;

const container = (overrides: Partial<ContainerState> = {}): ContainerState => ({
  name: 'app',
  image: 'shop/web:2',
  containerID: undefined,
  restartCount: 0,
  running: false,
  ready: false,
  ...overrides,
});

describe('podTrouble', () => {
  const backOff = 'back-off 5m0s restarting failed container=app pod=web-amd64-abc_shop(0f1e)';
  it.each<[string, Partial<PodState>, string | undefined]>([
    ['the scheduler finds no node', { assigned: false, running: false, unschedulableSince: 1 }, 'Unschedulable'],
    ['not scheduled yet', { assigned: false, running: false }, 'Pending'],
    [
      'a crash loop, with the kubelet message',
      { containers: [container({ waiting: { reason: 'CrashLoopBackOff', message: backOff } })] },
      `CrashLoopBackOff (${backOff})`,
    ],
    ['an image that cannot be pulled', { containers: [container({ waiting: { reason: 'ImagePullBackOff' } })] }, 'ImagePullBackOff'],
    [
      'an init container that holds the pod, before the containers that wait for it',
      { initTrouble: 'Init:CrashLoopBackOff (back-off 10s)', containers: [container({ waiting: { reason: 'PodInitializing' } })] },
      'Init:CrashLoopBackOff (back-off 10s)',
    ],
    [
      'a long message, clipped',
      { containers: [container({ waiting: { reason: 'ErrImagePull', message: 'x'.repeat(300) } })] },
      `ErrImagePull (${'x'.repeat(119)}…)`,
    ],
    ['a terminated container', { containers: [container({ terminated: 'OOMKilled' })] }, 'container app terminated (OOMKilled)'],
    ['a failing readiness probe', { containers: [container({ running: true, ready: false })] }, 'container app is running but not ready (readiness probe)'],
    ['a closed in-place gate', { gated: true, gateOpen: false, containers: [container({ running: true, ready: true })] }, 'InPlaceUpdateReady is False'],
    ['nothing known', {}, undefined],
  ])('%s', (_, overrides, expected) => {
    expect(podTrouble(pod('p', overrides))).toBe(expected);
  });
});

describe('stuckPods', () => {
  const region = (name: string, pods: PodState[]): RegionState => ({ name, desired: pods.length, targetRevision: 'new', workload: undefined, pods });
  const crashing = { containers: [container({ waiting: { reason: 'CrashLoopBackOff' } })] };

  it('names the not-Ready pods at the target revision of the rollout regions, and why', () => {
    const regions = [
      region('amd64', [pod('a1', crashing), pod('a2', { ready: true }), pod('a3', { revision: 'old' }), pod('a4', { terminating: true })]),
      region('arm64', [pod('b1', { assigned: false, unschedulableSince: 1 })]),
      region('other', [pod('c1', crashing)]),
    ];
    expect(stuckPods(regions, ['amd64', 'arm64'], NOW)).toBe('not Ready: a1: CrashLoopBackOff; b1: Unschedulable');
    expect(stuckPods(regions, ['other'], NOW)).toBe('not Ready: c1: CrashLoopBackOff');
  });

  it('leaves out pods that are still starting', () => {
    const regions = [region('amd64', [pod('young', { createdAt: NOW - STARTING_MS + 1000 }), pod('old', { createdAt: NOW - STARTING_MS })])];
    expect(stuckPods(regions, ['amd64'], NOW)).toBe('not Ready: old');
  });

  it('names at most three pods and counts the rest', () => {
    const regions = [
      region(
        'amd64',
        ['a', 'b', 'c', 'd', 'e'].map((n) => pod(n)),
      ),
    ];
    expect(stuckPods(regions, ['amd64'], NOW)).toBe('not Ready: a; b; c; and 2 more');
  });

  it('is undefined when every pod at the target revision is Ready', () => {
    expect(stuckPods([region('amd64', [pod('a', { ready: true }), pod('b', { revision: 'old' })])], ['amd64'], NOW)).toBeUndefined();
  });
});
