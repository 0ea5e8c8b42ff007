import { describe, expect, it } from 'vitest';
import { extendedDeployment } from '../api/extended-deployment.js';
import type { SwapState } from '../inplace/swap-state.js';
import type { SwapAction } from './actions.js';
import { graceEndsAt, stepInPlace, swapComplete } from './in-place-step.js';
import { planRollout } from './planner.js';
import { simulateFrom } from '../simulate/test-support.js';
import type { ContainerState, PodState, RegionState } from './snapshot.js';

const T0 = Date.UTC(2026, 0, 1);
const NEW_IMAGES = { server: 'llm:2' };

/** An in-place ExtendedDeployment whose template's one container `server` runs llm:2. */
function inPlaceEd(regions: { name: string; replicas: number }[], strategy: Record<string, unknown> = {}) {
  return extendedDeployment.parse({
    apiVersion: 'extendeddeployment.io/v1beta1',
    kind: 'ExtendedDeployment',
    metadata: { name: 'llm' },
    spec: {
      selector: { matchLabels: { a: 'b' } },
      template: { metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'server', image: 'llm:2' }] } },
      regions,
      strategy: { ...strategy, updateStrategy: { type: 'InPlaceIfPossible', gracePeriodSeconds: 1 } },
    },
  });
}

function pod(name: string, o: Partial<PodState> = {}): PodState {
  const containers: ContainerState[] = [{ name: 'server', image: 'llm:1', containerID: `cid-${name}`, restartCount: 0, running: true, ready: true }];
  return {
    name,
    uid: `u-${name}`,
    revision: 'old',
    assigned: true,
    running: true,
    ready: true,
    readySince: T0 - 3_600_000,
    terminating: false,
    markedOld: false,
    gated: true,
    gateOpen: true,
    resourceVersion: '7',
    swappable: NEW_IMAGES,
    containers,
    ...o,
  };
}
const region = (pods: PodState[], desired = pods.length): RegionState => ({
  name: 'gpu',
  desired,
  targetRevision: 'new',
  workload: { name: 'llm-gpu', templateRevision: 'new', replicas: desired },
  pods,
});
const kinds = (actions: readonly SwapAction[]) => actions.map((a) => `${a.kind}:${a.pod}`);

describe('in-place swap protocol, one pod at a time', () => {
  it('begins by draining: state draining toward the target, guarded by the pod resourceVersion', () => {
    const { actions } = stepInPlace(region([pod('a'), pod('b')]), 1, 1, 10, 0, T0);
    expect(actions).toEqual([
      { kind: 'swapBegin', region: 'gpu', pod: 'a', uid: 'u-a', resourceVersion: '7', state: { revision: 'new', phase: 'draining', since: T0 } },
    ]);
  });

  it('waits the grace period, then patches images recording containerID and restartCount', () => {
    const draining = pod('a', { swap: { revision: 'new', phase: 'draining', since: T0 }, ready: false, gateOpen: false });
    expect(stepInPlace(region([draining]), 1, 1, 10, 0, T0 + 9_000).actions).toEqual([]);
    // the gate must be closed (the pod out of endpoints) before its images change, whatever the time
    expect(stepInPlace(region([{ ...draining, gateOpen: true }]), 1, 1, 10, 0, T0 + 60_000).actions).toEqual([]);
    expect(stepInPlace(region([draining]), 1, 1, 10, 0, T0 + 10_000).actions).toEqual([
      {
        kind: 'swapImages',
        region: 'gpu',
        pod: 'a',
        uid: 'u-a',
        resourceVersion: '7',
        images: NEW_IMAGES,
        revision: 'new',
        state: {
          revision: 'new',
          phase: 'swapping',
          since: T0 + 10_000,
          containers: { server: { from: 'llm:1', to: 'llm:2', containerID: 'cid-a', restartCount: 0 } },
        },
      },
    ]);
  });

  it('counts the grace period from the gate closing when that came later (a leader died between begin and close)', () => {
    // The swap began a minute ago, but the gate closed only now: the pod was in endpoints all along. The condition's
    // lastTransitionTime has whole seconds (T0 is one), so the closing may have happened up to a second after it.
    const late = pod('a', { swap: { revision: 'new', phase: 'draining', since: T0 - 60_000 }, ready: true, gateOpen: false, gateClosedAt: T0 });
    expect(stepInPlace(region([late]), 1, 1, 10, 0, T0 + 500).actions).toEqual([]);
    expect(stepInPlace(region([late]), 1, 1, 10, 0, T0 + 10_999).actions).toEqual([]);
    expect(kinds(stepInPlace(region([late]), 1, 1, 10, 0, T0 + 11_000).actions)).toEqual(['swapImages:a']);
    // a gate closed before the swap began (a failed swap retried toward a new revision) waits from the begin only
    const retried = pod('a', { swap: { revision: 'new', phase: 'draining', since: T0 }, ready: false, gateOpen: false, gateClosedAt: T0 - 600_000 });
    expect(kinds(stepInPlace(region([retried]), 1, 1, 10, 0, T0 + 10_000).actions)).toEqual(['swapImages:a']);
    expect(graceEndsAt(late, 10)).toBe(T0 + 11_000);
    expect(graceEndsAt(retried, 10)).toBe(T0 + 10_000);
  });

  const swapping: SwapState = {
    revision: 'new',
    phase: 'swapping',
    since: T0,
    containers: { server: { from: 'llm:1', to: 'llm:2', containerID: 'cid-a', restartCount: 0 } },
  };
  const after = (c: Partial<ContainerState>) =>
    pod('a', {
      revision: 'new',
      ready: false,
      swap: swapping,
      containers: [{ name: 'server', image: 'llm:2', containerID: 'cid-a', restartCount: 0, running: true, ready: true, ...c }],
    });

  it.each<[string, Partial<ContainerState>, boolean]>([
    ['container restarted with a new containerID, running and ready', { containerID: 'cid-a2', restartCount: 1 }, true],
    ['same containerID but restartCount up (same digest, new tag): never waits on imageID', { restartCount: 1 }, true],
    ['not restarted yet', {}, false],
    ['restarted but not ready', { containerID: 'cid-a2', ready: false }, false],
    ['restarted but failing to run (image pull error, crash loop)', { containerID: 'cid-a2', running: false, ready: false }, false],
    ['the old image still in the spec', { image: 'llm:1', containerID: 'cid-a2' }, false],
  ])('completion: %s', (_n, container, complete) => {
    expect(swapComplete(after(container), swapping)).toBe(complete);
    expect(kinds(stepInPlace(region([after(container)]), 1, 1, 0, 0, T0).actions)).toEqual(complete ? ['swapDone:a'] : []);
  });

  it('keeps the gate closed during a swap, including a failed one, and opens it only after done', () => {
    const ed = inPlaceEd([{ name: 'gpu', replicas: 1 }]);
    const plan = (p: PodState) =>
      planRollout({
        ed,
        generation: 1,
        rolloutRevision: 'R',
        regions: [region([p])],
        status: undefined,
        controls: { paused: false, aborted: false, approvedThrough: undefined, resumedAt: undefined },
        now: T0,
      });
    const failing = after({ containerID: 'cid-a2', running: false, ready: false });
    expect(plan({ ...failing, gateOpen: false }).actions.map((a) => a.kind)).toEqual([]);
    expect(plan({ ...failing, gateOpen: true }).actions.map((a) => a.kind)).toEqual(['closeGate']);
    expect(plan(pod('a', { swap: { revision: 'new', phase: 'draining', since: T0 } })).actions.map((a) => a.kind)).toEqual(['closeGate']);
    expect(plan({ ...after({ containerID: 'cid-a2' }), gateOpen: false, swap: { ...swapping, phase: 'done' } }).actions.map((a) => a.kind)).toEqual([
      'openGate',
    ]);
  });

  it('releases a draining pod when Git moved the target away before its images were patched', () => {
    const stale = pod('a', { swap: { revision: 'older-target', phase: 'draining', since: T0 }, ready: false, swappable: undefined });
    expect(stepInPlace(region([stale]), 0, 1, 10, 0, T0).actions).toEqual([
      { kind: 'swapDone', region: 'gpu', pod: 'a', uid: 'u-a', resourceVersion: '7', state: { revision: 'older-target', phase: 'done', since: T0 } },
    ]);
  });

  it('swaps at most the unavailability budget at once, unavailable pods first (they cost nothing)', () => {
    const pods = [pod('a'), pod('b'), pod('c', { ready: false, readySince: undefined }), pod('d')];
    // one pod is already unavailable: a budget of 1 allows no available pod on top of it, a budget of 2 allows one
    expect(kinds(stepInPlace(region(pods), 4, 1, 0, 0, T0).actions)).toEqual(['swapBegin:c']);
    expect(kinds(stepInPlace(region(pods), 4, 2, 0, 0, T0).actions)).toEqual(['swapBegin:c', 'swapBegin:a']);
  });

  it('counts pods already draining toward the target, so a repeated step starts nothing more', () => {
    const pods = [pod('a', { swap: { revision: 'new', phase: 'draining', since: T0 }, ready: false }), pod('b')];
    expect(kinds(stepInPlace(region(pods), 1, 2, 10, 0, T0).actions)).toEqual([]);
  });

  it('a pod evicted in the middle of its swap is neither swapped on nor a swap under way: its replacement takes over', () => {
    // a was swapping when the kubelet evicted it (phase Failed): it never restarts, so its swap never completes.
    const evicted = pod('a', {
      phase: 'Failed',
      running: false,
      ready: false,
      swap: { revision: 'new', phase: 'swapping', since: T0, containers: { server: { from: 'llm:1', to: 'llm:2', containerID: 'cid-a', restartCount: 0 } } },
    });
    const step = stepInPlace(region([evicted, pod('b', { revision: 'new', swappable: undefined })], 2), 1, 1, 10, 0, T0);
    expect(step).toEqual({ actions: [], busy: false });
  });
});

describe('in-place rollouts through the planner (simulated cluster)', () => {
  const ed = (strategy: Record<string, unknown>) =>
    inPlaceEd(
      [
        { name: 'a', replicas: 5 },
        { name: 'b', replicas: 3 },
      ],
      strategy,
    );
  const start = (swappable: boolean) => [
    { name: 'a', desired: 5, targetRevision: 'new', running: { old: 5 }, swappable: swappable ? NEW_IMAGES : undefined },
    { name: 'b', desired: 3, targetRevision: 'new', running: { old: 3 }, swappable: swappable ? NEW_IMAGES : undefined },
  ];

  it('an image-only change creates and deletes no pod, in the same groups as replacement, never above desired', () => {
    for (const strategy of [{ batchSize: 2 }, { rolloutStrategy: 'Group', batchSize: '50%' }, { batchSize: 1, upgradeMode: 'scaleInPriority' }]) {
      const swapped = simulateFrom(ed(strategy), 'R', start(true));
      const replaced = simulateFrom(ed(strategy), 'R', start(false));
      expect(swapped.finalStatus.phase).toBe('Healthy');
      expect([swapped.podsCreated, swapped.podsSwapped, swapped.newPodsRemoved]).toEqual([0, 8, 0]);
      expect(swapped.groups.map((g) => g.regions.map((r) => r.updated))).toEqual(replaced.groups.map((g) => g.regions.map((r) => r.updated)));
      for (const e of swapped.extremes) expect(e.maxPods).toBe(e.name === 'a' ? 5 : 3);
    }
  });

  it('with a partition, swaps stop short of it and never take a kept pod: the same pods stay old', () => {
    const partitioned = inPlaceEd([{ name: 'a', replicas: 5, partition: 2 } as { name: string; replicas: number }, { name: 'b', replicas: 3 }], {
      batchSize: 2,
    });
    const swapped = simulateFrom(partitioned, 'R', start(true));
    expect(swapped.finalStatus.phase).toBe('Healthy');
    expect([swapped.podsCreated, swapped.podsSwapped, swapped.newPodsRemoved]).toEqual([0, 6, 0]);
    expect(swapped.groups.at(-1)?.regions.map((r) => [r.updated, r.old])).toEqual([
      [3, 2],
      [3, 0],
    ]);
  });

  it('with a partition, the pods it holds are never the ones swapped', () => {
    const partitioned = inPlaceEd([{ name: 'gpu', replicas: 4, partition: 2 } as { name: string; replicas: number }], {
      rolloutStrategy: 'Group',
      batchSize: 4,
    });
    const pods = [pod('a', { held: true, markedAt: T0 - 60_000 }), pod('b', { held: true, markedAt: T0 - 60_000 }), pod('c'), pod('d')];
    const plan = planRollout({
      ed: partitioned,
      generation: 1,
      rolloutRevision: 'R',
      regions: [{ ...region(pods), partition: 2 }],
      status: undefined,
      controls: { paused: false, aborted: false, approvedThrough: undefined, resumedAt: undefined },
      now: T0,
    });
    expect(plan.actions.filter((a) => a.kind === 'swapBegin').map((a) => ('pod' in a ? a.pod : ''))).toEqual(['c', 'd']);
  });

  it('a change that is not image-only replaces pods as usual', () => {
    const replaced = simulateFrom(ed({ batchSize: 2 }), 'R', start(false));
    expect([replaced.podsSwapped, replaced.podsCreated]).toEqual([0, 8]);
  });
});

describe('mixed regions', () => {
  it('swaps the pods that can be swapped first, then replaces the others', () => {
    const ed = inPlaceEd([{ name: 'gpu', replicas: 2 }], { rolloutStrategy: 'Group', batchSize: 2 });
    const input = (pods: PodState[]) => ({
      ed,
      generation: 1,
      rolloutRevision: 'R',
      regions: [region(pods, 2)],
      status: undefined,
      controls: { paused: false, aborted: false, approvedThrough: undefined, resumedAt: undefined },
      now: T0,
    });
    const first = planRollout(input([pod('a'), pod('b', { swappable: undefined })]));
    expect(first.actions.map((a) => `${a.kind}${'pod' in a ? `:${a.pod}` : ''}`)).toEqual(['swapBegin:a']);
    const swappedA = pod('a', { revision: 'new', swap: { revision: 'new', phase: 'done', since: T0 }, swappable: undefined });
    const second = planRollout(input([swappedA, pod('b', { swappable: undefined })]));
    expect(second.actions.map((a) => a.kind)).toEqual(['markOld', 'scale']);
  });
});

describe('status and events of an in-place rollout', () => {
  it('count pods swapped in place and replaced per region, and say so when the rollout completes', () => {
    const ed = inPlaceEd([{ name: 'a', replicas: 3 }], { rolloutStrategy: 'Group', batchSize: 3 });
    const sim = simulateFrom(ed, 'R', [{ name: 'a', desired: 3, targetRevision: 'new', running: { old: 3 }, swappable: NEW_IMAGES }]);
    expect(sim.finalStatus.regions?.[0]).toMatchObject({ name: 'a', updated: 3, swappedInPlace: 3, replaced: 0 });
    expect(sim.events.find((e) => e.reason === 'RolloutCompleted')?.message).toBe('rollout R completed (3 swapped in place, 0 replaced)');
  });

  it('count only what this rollout did: pods already at the target revision (a Git revert mid-rollout) are neither swapped nor replaced', () => {
    const ed = inPlaceEd([{ name: 'a', replicas: 3 }], { rolloutStrategy: 'Group', batchSize: 3 });
    const back = simulateFrom(ed, 'R', [{ name: 'a', desired: 3, targetRevision: 'new', running: { new: 1, old: 2 }, swappable: NEW_IMAGES }]);
    expect(back.finalStatus.regions?.[0]).toMatchObject({ updated: 3, swappedInPlace: 2, replaced: 0 });
    expect(back.events.find((e) => e.reason === 'RolloutCompleted')?.message).toBe('rollout R completed (2 swapped in place, 0 replaced)');
    expect(back.finalStatus.rolloutStartTime).toBe(new Date(Date.UTC(2026, 0, 1)).toISOString());
    const replaced = simulateFrom(ed, 'R', [{ name: 'a', desired: 3, targetRevision: 'new', running: { new: 1, old: 2 } }]);
    expect(replaced.finalStatus.regions?.[0]).toMatchObject({ updated: 3, swappedInPlace: 0, replaced: 2 });
  });
});

describe('a hold (pause, abort, progress deadline) in the middle of swaps', () => {
  const ed = inPlaceEd([{ name: 'gpu', replicas: 3 }], { rolloutStrategy: 'Group', batchSize: 3, syncWaitTimeout: 60 });
  const swapped: SwapState = {
    revision: 'new',
    phase: 'swapping',
    since: T0 - 30_000,
    containers: { server: { from: 'llm:1', to: 'llm:2', containerID: 'cid-a', restartCount: 0 } },
  };
  // a: images swapped, restarted and ready (only its swapDone is missing); b: draining, grace over; c: failing to start; d: not begun
  const pods = [
    pod('a', {
      revision: 'new',
      ready: false,
      gateOpen: false,
      swap: swapped,
      containers: [{ name: 'server', image: 'llm:2', containerID: 'cid-a2', restartCount: 1, running: true, ready: true }],
    }),
    pod('b', { ready: false, gateOpen: false, swap: { revision: 'new', phase: 'draining', since: T0 - 30_000 } }),
    pod('c', {
      revision: 'new',
      ready: false,
      gateOpen: false,
      swap: { ...swapped, containers: { server: { from: 'llm:1', to: 'llm:2', containerID: 'cid-c', restartCount: 0 } } },
      containers: [{ name: 'server', image: 'llm:2', containerID: 'cid-c2', restartCount: 1, running: false, ready: false }],
    }),
    pod('d'),
  ];
  const plan = (controls: Partial<{ paused: boolean; aborted: boolean }>, groupStart = T0 - 30_000) =>
    planRollout({
      ed,
      generation: 1,
      rolloutRevision: 'R',
      regions: [{ ...region(pods), desired: 4 }],
      status: { revision: 'R', rolloutRegions: ['gpu'], currentGroup: 1, lastGroupStartTime: new Date(groupStart).toISOString(), phase: 'Progressing' },
      controls: { paused: false, aborted: false, approvedThrough: undefined, resumedAt: undefined, ...controls },
      now: T0,
    });

  it.each<[string, ReturnType<typeof plan>]>([
    ['edctl pause', plan({ paused: true })],
    ['edctl abort', plan({ aborted: true })],
    ['the progress deadline (Degraded)', plan({}, T0 - 120_000)],
  ])('%s: finished swaps are done and drains released (their pods back in endpoints); nothing new is swapped; a failed swap stays out', (_n, p) => {
    expect(p.status.phase === 'Paused' || p.status.phase === 'Degraded').toBe(true);
    const swaps = p.actions.filter((a): a is SwapAction => a.kind.startsWith('swap'));
    expect(kinds(swaps)).toEqual(['swapDone:a', 'swapDone:b']);
    // b is released where it is: still the old revision and image, its swap state done so the gate opens
    expect(swaps[1]).toMatchObject({ state: { revision: 'new', phase: 'done', since: T0 } });
    expect(swaps[1]?.images).toBeUndefined();
  });

  it('without a hold the same pods advance: a is done, b gets its images, d is not started while the budget is used', () => {
    expect(kinds(plan({}).actions.filter((a): a is SwapAction => a.kind.startsWith('swap')))).toEqual(['swapDone:a', 'swapImages:b']);
  });
});
