import { describe, expect, it } from 'vitest';
import type { ExtendedDeploymentStatus } from '../api/extended-deployment.js';
import type { RolloutInput, RolloutPlan } from './planner.js';
import { MARK_SETTLE_MS } from './region-step.js';
import type { PodState } from './snapshot.js';
import { MAX_REQUEUE_MS, SLACK_MS, awaitsWorkloads, nextRequeueMs } from './requeue.js';
import { webEd } from './test-support.js';

const NOW = Date.UTC(2026, 0, 1, 12);
const ed = webEd([{ name: 'a', replicas: 2 }], { minReadySeconds: 10, syncWaitTimeout: 60 });
const pod = (readySince: number | undefined, extra: Partial<PodState> = {}): PodState => ({
  name: 'p',
  uid: 'u',
  revision: 'new',
  assigned: true,
  running: true,
  ready: readySince !== undefined,
  readySince,
  terminating: false,
  markedOld: false,
  ...extra,
});
const input = (pods: PodState[], resumedAt?: number): RolloutInput => ({
  ed,
  generation: 1,
  rolloutRevision: 'R',
  regions: [{ name: 'a', desired: 2, targetRevision: 'new', workload: { name: 'web-a', templateRevision: 'new', replicas: 2 }, pods }],
  status: undefined,
  controls: { paused: false, aborted: false, approvedThrough: undefined, resumedAt },
  now: NOW,
});
const plan = (status: ExtendedDeploymentStatus, actions: RolloutPlan['actions'] = []): RolloutPlan => ({ status, actions, events: [] });

describe('nextRequeueMs', () => {
  it('leaves a Healthy object with nothing to do alone', () => {
    expect(nextRequeueMs(input([pod(NOW - 60_000)]), plan({ phase: 'Healthy' }))).toBeUndefined();
  });

  it('looks again at a Healthy object when something is about to change: a hold mark settling, a keeper pod becoming available', () => {
    // A partition's hold mark gates a scale-down of the new pods beside it, Healthy or not.
    const held = pod(NOW - 60_000, { revision: 'old', held: true, markedAt: NOW - 500 });
    expect(nextRequeueMs(input([pod(NOW - 60_000), held]), plan({ phase: 'Healthy' }))).toBe(MARK_SETTLE_MS - 500 + SLACK_MS);
    const keeperPod = pod(NOW - 4_000, { revision: 'old' });
    const withKeeper = input([pod(NOW - 60_000)]);
    const regions = withKeeper.regions.map((r) => ({ ...r, keeper: { name: 'k', uid: 'k', revision: 'old', replicas: 1, pods: [keeperPod] } }));
    expect(nextRequeueMs({ ...withKeeper, regions }, plan({ phase: 'Healthy' }))).toBe(6_000 + SLACK_MS);
  });

  it('looks again when the next pod becomes available', () => {
    const pods = [pod(NOW - 9_000), pod(NOW - 4_000), pod(NOW - 60_000), pod(NOW - 1_000, { terminating: true })];
    expect(nextRequeueMs(input(pods), plan({ phase: 'Progressing' }))).toBe(1_000 + SLACK_MS);
  });

  it('looks again when the progress deadline passes, counted from a resume', () => {
    const status = { phase: 'Progressing' as const, lastGroupStartTime: new Date(NOW - 59_000).toISOString() };
    expect(nextRequeueMs(input([]), plan(status))).toBe(1_000 + 1 + SLACK_MS);
    expect(nextRequeueMs(input([], NOW - 50_000), plan(status))).toBe(10_000 + 1 + SLACK_MS); // the resume moved the deadline
  });

  it('polls at most every MAX_REQUEUE_MS while unfinished', () => {
    expect(nextRequeueMs(input([]), plan({ phase: 'WaitingForConfirmation' }))).toBe(MAX_REQUEUE_MS);
    expect(
      nextRequeueMs(input([pod(NOW - 60_000)]), plan({ phase: 'Healthy' }, [{ kind: 'scale', region: 'a', workload: 'web-a', from: 1, replicas: 2 }])),
    ).toBe(MAX_REQUEUE_MS);
  });

  it("looks again when a draining pod's grace period ends: no event announces it, the images are swapped then", () => {
    const inPlace = {
      ...ed,
      spec: {
        ...ed.spec,
        strategy: { ...ed.spec.strategy, updateStrategy: { ...ed.spec.strategy.updateStrategy, type: 'InPlaceIfPossible' as const, gracePeriodSeconds: 5 } },
      },
    };
    const draining = pod(undefined, { revision: 'old', swap: { revision: 'new', phase: 'draining', since: NOW - 2_000 }, gated: true, gateOpen: false });
    expect(nextRequeueMs({ ...input([draining, pod(NOW - 60_000)]), ed: inPlace }, plan({ phase: 'Progressing' }))).toBe(3_000 + SLACK_MS);
    // a grace period already over, or a swap past draining, sets no instant of its own
    const swapping = pod(undefined, { swap: { revision: 'new', phase: 'swapping', since: NOW - 2_000 } });
    const over = pod(undefined, { revision: 'old', swap: { revision: 'new', phase: 'draining', since: NOW - 9_000 } });
    expect(nextRequeueMs({ ...input([swapping, over]), ed: inPlace }, plan({ phase: 'Progressing' }))).toBe(MAX_REQUEUE_MS);
  });

  it("looks again when an old pod's mark settles: a scale-down may rely on it then, and no event announces it", () => {
    const marked = (markedAt: number | undefined) => pod(NOW - 60_000, { revision: 'old', markedOld: true, markedAt });
    expect(nextRequeueMs(input([marked(NOW - 500)]), plan({ phase: 'Progressing' }))).toBe(MARK_SETTLE_MS - 500 + SLACK_MS);
    // a settled mark, or one without its time, sets no instant of its own
    expect(nextRequeueMs(input([marked(NOW - MARK_SETTLE_MS), marked(undefined)]), plan({ phase: 'Progressing' }))).toBe(MAX_REQUEUE_MS);
  });

  it('sets no instant for a standing mark (a pod at the rendered revision): nothing relies on it until the next rollout', () => {
    const standing = pod(NOW - 60_000, { markedOld: true, markedAt: NOW - 500 });
    expect(nextRequeueMs(input([standing]), plan({ phase: 'Healthy' }))).toBeUndefined();
  });

  it("looks again at the move planner's instants, also when Healthy", () => {
    expect(nextRequeueMs(input([pod(NOW - 60_000)]), { ...plan({ phase: 'Healthy' }), wakeAt: [NOW - 1, NOW + 4_000] })).toBe(4_000 + SLACK_MS);
  });

  it('polls while replicas are away with move-back on, and not with it off', () => {
    const away = { phase: 'Healthy' as const, moves: [{ from: 'a', to: 'b', count: 1, reason: 'Shortage' as const, since: new Date(NOW).toISOString() }] };
    expect(nextRequeueMs(input([pod(NOW - 60_000)]), plan(away))).toBe(MAX_REQUEUE_MS);
    const off = { ...ed, spec: { ...ed.spec, strategy: { ...ed.spec.strategy, moveBack: { enable: false, stabilizationSeconds: 300 } } } };
    expect(nextRequeueMs({ ...input([pod(NOW - 60_000)]), ed: off }, plan(away))).toBeUndefined();
  });
});

describe('awaitsWorkloads', () => {
  const progressing = plan({ phase: 'Progressing' });
  const withWorkload = (workload: RolloutInput['regions'][number]['workload'], pods: PodState[] = [pod(NOW - 60_000)]): RolloutInput => {
    const base = input(pods);
    return { ...base, regions: base.regions.map((r) => ({ ...r, workload })) };
  };
  const synced = { name: 'web-a', templateRevision: 'new', replicas: 2 };

  it('holds while Git has not synced the rendered template, the controller has not reported its count, or pods leave', () => {
    expect(awaitsWorkloads(withWorkload({ ...synced, templateRevision: 'old' }), progressing)).toBe(true);
    const reported = (observedGeneration: number) => ({ generation: 4, observedGeneration, terminatingReplicas: 0 });
    expect(awaitsWorkloads(withWorkload({ ...synced, reported: reported(3) }), progressing)).toBe(true);
    expect(awaitsWorkloads(withWorkload(synced, [pod(NOW - 60_000), pod(NOW - 60_000, { revision: 'old', terminating: true })]), progressing)).toBe(true);
    // Caught up, nothing leaving: the next step waits for time or pods, not for the controller.
    expect(awaitsWorkloads(withWorkload({ ...synced, reported: reported(4) }), progressing)).toBe(false);
    expect(awaitsWorkloads(withWorkload(synced, [pod(NOW - 60_000), pod(undefined)]), progressing)).toBe(false);
    // A region whose workload does not exist yet waits for Git, whose apply comes as the ExtendedDeployment's does.
    expect(awaitsWorkloads(withWorkload(undefined), progressing)).toBe(false);
  });

  it('holds after a plan that scales a workload down (the controller removes pods next), not after one that scales up', () => {
    const scale = (from: number, replicas: number) => plan({ phase: 'Progressing' }, [{ kind: 'scale', region: 'a', workload: 'web-a', from, replicas }]);
    expect(awaitsWorkloads(withWorkload(synced), scale(3, 2))).toBe(true);
    expect(awaitsWorkloads(withWorkload(synced), scale(2, 3))).toBe(false);
  });
});
