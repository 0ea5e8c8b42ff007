import { describe, expect, it } from 'vitest';
import { ProgressingReason } from '../api/conditions.js';
import type { ExtendedDeploymentStatus } from '../api/extended-deployment.js';
import { Phases, type Phase } from './reasons.js';
import { countPods, type PodState, type RegionState } from './snapshot.js';
import { availableAt, buildStatus } from './status.js';
import { podState, webEd } from './test-support.js';

const T0 = Date.UTC(2026, 0, 1);

const ed = webEd([{ name: 'a', replicas: 3 }], { minReadySeconds: 30 });

/** A new pod, Ready for an hour. */
const pod = (name: string, overrides: Partial<PodState> = {}): PodState => podState(name, { ready: true, readySince: T0 - 3_600_000, ...overrides });

const region = (pods: PodState[]): RegionState => ({ name: 'a', desired: 3, targetRevision: 'new', workload: undefined, pods });

/** The transition buildStatus reports: from `previous` to `group` of `totalGroups` in `phase`. */
interface Transition {
  readonly phase?: Phase;
  readonly message?: string;
  readonly previous?: ExtendedDeploymentStatus;
  readonly group?: number;
  readonly totalGroups?: number;
}

function build(pods: PodState[], t: Transition = {}) {
  const { phase = Phases.Progressing, message = 'group 1 of 2 in progress', group = 1, totalGroups = 2 } = t;
  const r = region(pods);
  return buildStatus({
    ed,
    generation: 1,
    rolloutRevision: 'R1',
    regions: [r],
    counts: new Map([['a', countPods(r, 30, T0)]]),
    previous: 'previous' in t ? t.previous : { revision: 'R1', phase: 'Progressing', currentGroup: 1, totalGroups: 2 },
    rolloutRegions: ['a'],
    totalGroups,
    phase,
    group,
    groupStart: new Date(T0 - 60_000).toISOString(),
    reason: phase === Phases.Degraded ? ProgressingReason.ProgressDeadlineExceeded : ProgressingReason.GroupProgressing,
    message,
    now: T0,
  });
}

describe('availableAt', () => {
  it.each<[string, Partial<PodState>[], number | undefined]>([
    ['every Ready pod is available', [{}, {}], undefined],
    ['the last Ready pod still waiting decides', [{ readySince: T0 - 10_000 }, { readySince: T0 - 25_000 }, {}], T0 + 20_000],
    [
      'pods not Ready or terminating do not wait',
      [
        { ready: false, readySince: T0 },
        { terminating: true, readySince: T0 },
      ],
      undefined,
    ],
  ])('%s', (_, pods, expected) => {
    expect(availableAt(region(pods.map((p, i) => pod(`p${i}`, p))), 30, T0)).toBe(expected);
  });
});

describe('buildStatus', () => {
  it('records per region the swaps under way and when its Ready pods become available', () => {
    const swap = (phase: 'draining' | 'swapping' | 'done') => ({ revision: 'new', phase, since: T0 });
    const { status } = build([
      pod('p1', { revision: 'old', ready: false, swap: swap('draining') }),
      pod('p2', { ready: false, swap: swap('swapping') }),
      pod('p3', { swap: swap('done'), readySince: T0 - 5_000 }),
    ]);
    expect(status.regions?.[0]).toMatchObject({ swapping: 2, availableAt: new Date(T0 + 25_000).toISOString() });
    const settled = build([pod('p1'), pod('p2'), pod('p3')]).status.regions?.[0];
    expect(settled).not.toHaveProperty('swapping');
    expect(settled).not.toHaveProperty('availableAt');
  });

  it('names the pods that hold a Degraded rollout, why, and the forced exit, in the condition and the Event', () => {
    const crashing = pod('web-a-x', {
      ready: false,
      readySince: undefined,
      containers: [{ name: 'app', image: 'i', containerID: undefined, restartCount: 4, running: false, ready: false, waiting: { reason: 'CrashLoopBackOff' } }],
    });
    const deadline = 'group 1 did not finish within 60s; the rollout stopped';
    const { status, events } = build([pod('p1'), pod('p2'), crashing], { phase: Phases.Degraded, message: deadline });
    // And the counts that keep what runs Ready instead (forced-exit.ts): both Ready pods, none at a previous revision.
    const expected = `${deadline}; not Ready: web-a-x: CrashLoopBackOff; to keep what runs Ready instead (forced exit), set in Git: region a replicas 2 partition 0`;
    expect(status.conditions?.find((c) => c.type === 'Progressing')?.message).toBe(expected);
    expect(events).toContainEqual({ type: 'Warning', reason: 'ProgressDeadlineExceeded', message: expected });
    // While it progresses, the message stays the planner's.
    expect(build([pod('p1'), crashing]).status.conditions?.find((c) => c.type === 'Progressing')?.message).toBe('group 1 of 2 in progress');
  });
});

describe('transition Events: one per transition', () => {
  /** A status in group `currentGroup` of rollout `revision`, progressing. */
  const at = (revision: string, currentGroup: number) => ({ revision, currentGroup, phase: Phases.Progressing });
  const transition = (previous: { revision: string; currentGroup: number; phase: Phase } | undefined, group: number, phase: Phase) =>
    build([pod('p1'), pod('p2'), pod('p3')], { previous: previous && { ...previous, totalGroups: 4 }, group, totalGroups: 4, phase }).events.map(
      (e) => `${e.reason}: ${e.message}`,
    );

  it.each<[string, { revision: string; currentGroup: number; phase: Phase } | undefined, number, Phase, string[]]>([
    ['a rollout starting with its first group', undefined, 1, Phases.Progressing, ['RolloutStarted: rollout R1 started: 4 groups over a; group 1 started']],
    ['a rollout waiting before its first group', undefined, 0, Phases.Progressing, ['RolloutStarted: rollout R1 started: 4 groups over a']],
    [
      'a rollout resuming past groups its pods show done (a Git revert)',
      at('R0', 2),
      3,
      Phases.Progressing,
      ['RolloutStarted: rollout R1 started: 4 groups over a; group 3 started; groups 1–2 completed'],
    ],
    ['the first group after a wait', at('R1', 0), 1, Phases.Progressing, ['GroupStarted: group 1 of 4 started']],
    ['the next group', at('R1', 1), 2, Phases.Progressing, ['GroupStarted: group 2 of 4 started; group 1 completed']],
    ['two groups completed in one look', at('R1', 1), 3, Phases.Progressing, ['GroupStarted: group 3 of 4 started; groups 1–2 completed']],
    ['the last group completed', at('R1', 4), 4, Phases.Healthy, ['RolloutCompleted: rollout R1 completed']],
    ['the same group, still going', at('R1', 2), 2, Phases.Progressing, []],
  ])('%s', (_, previous, group, phase, expected) => {
    expect(transition(previous, group, phase)).toEqual(expected);
  });
});
