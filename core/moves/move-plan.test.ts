import { describe, expect, it } from 'vitest';
import { rolloutStrategy } from '../api/extended-deployment.js';
import type { PodState } from '../rollout/snapshot.js';
import { planMoves, type Move, type MoveInput, type MoveRegion } from './move-plan.js';
import { downNode, node } from './nodes-test-support.js';

const T0 = Date.UTC(2026, 0, 1);
const S = 1000;

const strategy = (over: Record<string, unknown> = {}) =>
  rolloutStrategy.parse({ autoReschedule: { enable: true }, faultMove: { enable: true }, minReadySeconds: 0, ...over });

let uid = 0;
function pod(over: Partial<PodState> = {}): PodState {
  uid++;
  return {
    name: `p${uid}`,
    uid: `u${uid}`,
    revision: 'r',
    assigned: true,
    running: true,
    ready: true,
    readySince: T0 - 3_600 * S,
    terminating: false,
    markedOld: false,
    ...over,
  };
}
const running = (n: number) => Array.from({ length: n }, () => pod());
const stuck = (n: number, since = T0 - 61 * S) =>
  Array.from({ length: n }, () => pod({ assigned: false, running: false, ready: false, readySince: undefined, unschedulableSince: since }));

function region(name: string, base: number, over: Partial<MoveRegion> = {}): MoveRegion {
  return { name, base, targetRevision: 'r', pods: running(base), nodes: [node(`${name}-1`)], room: 10, healthyWithRoomSince: undefined, ...over };
}

function plan(regions: MoveRegion[], over: Partial<MoveInput> = {}) {
  return planMoves({
    strategy: strategy(),
    totalReplicas: regions.reduce((s, r) => s + r.base, 0),
    regions,
    moves: [],
    previousReason: undefined,
    now: T0,
    ...over,
  });
}
const desired = (p: ReturnType<typeof plan>) => Object.fromEntries(p.desired);
const move = (from: string, to: string, count: number, reason: Move['reason'], since: number, returning = 0): Move => ({
  from,
  to,
  count,
  reason,
  since,
  returning,
});

describe('planMoves: shortage', () => {
  it('moves pods unschedulable past the timeout to other regions in proportion to their room', () => {
    const p = plan([region('a', 6, { pods: [...running(2), ...stuck(4)], room: 0 }), region('b', 4, { room: 6 }), region('c', 4, { room: 2 })]);
    expect(p.moves).toEqual([move('a', 'b', 3, 'Shortage', T0), move('a', 'c', 1, 'Shortage', T0)]);
    expect(desired(p)).toEqual({ a: 2, b: 7, c: 5 });
    expect(Object.fromEntries(p.movedOut)).toMatchObject({ a: 4 });
    expect(p.condition).toMatchObject({ status: 'True', reason: 'Shortage' });
    expect(p.events.map((e) => e.reason)).toEqual(['ReplicasMoved']);
    expect(p.changes).toEqual([
      { kind: 'move', reason: 'Shortage', from: 'a', to: 'b', count: 3 },
      { kind: 'move', reason: 'Shortage', from: 'a', to: 'c', count: 1 },
    ]);
  });

  it('waits for the timeout, and says when to look again', () => {
    const p = plan([region('a', 3, { pods: [...running(1), ...stuck(2, T0 - 59 * S)] }), region('b', 3)]);
    expect(p.moves).toEqual([]);
    expect(p.wakeAt).toContain(T0 + S + 999);
    // Shown as unschedulable since exactly 60 s ago: the condition has whole seconds, it may have been 59.001 s.
    expect(plan([region('a', 3, { pods: [...running(1), ...stuck(2, T0 - 60 * S)] }), region('b', 3)]).moves).toEqual([]);
  });

  it('counts only pods of the current revision (old pods are the rollout’s business)', () => {
    const p = plan([region('a', 3, { pods: [...running(1), ...stuck(2).map((x) => ({ ...x, revision: 'old' }))] }), region('b', 3)]);
    expect(p.moves).toEqual([]);
  });

  it('never moves the same pods twice: pods above the count are already leaving', () => {
    // The status already records the move of 2; the ReplicaSet has not removed the two pending pods yet.
    const recorded = [move('a', 'b', 2, 'Shortage', T0 - 5 * S)];
    const p = plan([region('a', 5, { pods: [...running(3), ...stuck(2)] }), region('b', 3, { pods: running(3) })], { moves: recorded });
    expect(p.moves).toEqual(recorded);
    expect(p.changes).toEqual([]);
    expect(desired(p)).toEqual({ a: 3, b: 5 });
  });

  it('does not pick a region with unschedulable pods of its own, nor one in its cool-down', () => {
    const regions = [
      region('a', 3, { pods: [...running(1), ...stuck(2)] }),
      region('b', 3, { pods: [...running(3), ...stuck(1, T0 - 5 * S)] }),
      region('c', 3),
      region('d', 3),
    ];
    const recent = [move('c', 'd', 1, 'Shortage', T0 - 100 * S)];
    const p = plan(regions, { moves: recent });
    expect(p.moves.filter((m) => m.since === T0)).toEqual([move('a', 'd', 2, 'Shortage', T0)]);
  });

  it('moves nothing when no region has room, and the condition and a Warning say so once', () => {
    const regions = [region('a', 3, { pods: [...running(1), ...stuck(2)], room: 0 }), region('b', 3, { room: 0 })];
    const p = plan(regions);
    expect(p.moves).toEqual([]);
    expect(p.condition).toMatchObject({ status: 'False', reason: 'NoRoom' });
    expect(p.condition?.message).toContain('region a has 2 replicas unschedulable');
    expect(p.events.map((e) => e.reason)).toEqual(['MoveBlocked']);
    expect(plan(regions, { previousReason: 'NoRoom' }).events).toEqual([]);
  });

  it('never puts more in a region than its room, counting pods it must still create', () => {
    // b has room for 4 but still has to create 2 pods of its own.
    const p = plan([region('a', 6, { pods: [...running(1), ...stuck(5)] }), region('b', 4, { pods: running(2), room: 4 })]);
    expect(p.moves).toEqual([move('a', 'b', 2, 'Shortage', T0)]);
  });

  it('does nothing when shortage moves are off', () => {
    const p = plan([region('a', 3, { pods: [...running(1), ...stuck(2)] }), region('b', 3)], { strategy: strategy({ autoReschedule: { enable: false } }) });
    expect(p.moves).toEqual([]);
  });
});

describe('planMoves: fault', () => {
  const failedNodes = (name: string) => [downNode(`${name}-1`, T0 - 31 * S), downNode(`${name}-2`, T0 - 40 * S)];

  it('moves every replica of a Failed region at once (default rate), proportional to room', () => {
    const p = plan([region('a', 4, { nodes: failedNodes('a'), room: 0 }), region('b', 4, { room: 3 }), region('c', 2, { room: 1 })]);
    expect(p.moves).toEqual([move('a', 'b', 3, 'Fault', T0), move('a', 'c', 1, 'Fault', T0)]);
    expect(desired(p)).toEqual({ a: 0, b: 7, c: 3 });
    expect(p.condition).toMatchObject({ status: 'True', reason: 'Fault' });
  });

  it('waits out the toleration (and wakes up when it ends)', () => {
    const nodes = [downNode('a-1', T0 - 10 * S), downNode('a-2', T0 - 20 * S)];
    const p = plan([region('a', 4, { nodes }), region('b', 4)]);
    expect(p.moves).toEqual([]);
    expect(p.wakeAt).toContain(T0 + 20 * S + 999);
  });

  it('a partial failure below the threshold moves nothing', () => {
    const p = plan([region('a', 4, { nodes: [downNode('a-1', T0 - 600 * S), node('a-2')] }), region('b', 4)]);
    expect(p.moves).toEqual([]);
    expect(p.condition?.reason).toBe('NoMoves');
  });

  it('when every region looks failed nothing moves: an observer problem', () => {
    const p = plan([region('a', 4, { nodes: failedNodes('a') }), region('b', 4, { nodes: failedNodes('b') })]);
    expect(p.moves).toEqual([]);
    expect(p.condition).toMatchObject({ status: 'Unknown', reason: 'AllRegionsFailed' });
    expect(p.events.map((e) => e.reason)).toEqual(['AllRegionsFailed']);
  });

  it('moves nothing into a region about to fail: its failing nodes reach the threshold, the toleration still runs', () => {
    const failingNow = [downNode('b-1', T0 - 2 * S), downNode('b-2', T0 - 2 * S)];
    const p = plan([region('a', 4, { nodes: failedNodes('a') }), region('b', 4, { nodes: failingNow, room: 4 })]);
    expect(p.moves).toEqual([]);
    // One failing node of two is no threshold: b takes them.
    const partly = [downNode('b-1', T0 - 2 * S), node('b-2')];
    expect(plan([region('a', 4, { nodes: failedNodes('a') }), region('b', 4, { nodes: partly, room: 4 })]).moves).toEqual([move('a', 'b', 4, 'Fault', T0)]);
  });

  it('a region without nodes is Failed', () => {
    const p = plan([region('a', 2, { nodes: [] }), region('b', 2)]);
    expect(p.moves).toEqual([move('a', 'b', 2, 'Fault', T0)]);
  });

  it('limits fault moves per minute and resumes when the window passes', () => {
    const s = strategy({ faultMove: { enable: true, maxReplicasPerMinute: 2 } });
    const first = plan([region('a', 5, { nodes: failedNodes('a') }), region('b', 5)], { strategy: s });
    expect(first.moves).toEqual([move('a', 'b', 2, 'Fault', T0)]);
    expect(first.wakeAt).toContain(T0 + 60 * S);
    const later = plan([region('a', 5, { nodes: failedNodes('a') }), region('b', 5)], { strategy: s, moves: first.moves, now: T0 + 60 * S + 1 });
    expect(later.moves.map((m) => m.count)).toEqual([2, 2]);
  });

  it('moves replicas another region lent the failed one on to a third region, never back to a failed one', () => {
    const lent = [move('c', 'a', 2, 'Shortage', T0 - 600 * S)];
    const p = plan([region('a', 2, { nodes: failedNodes('a'), pods: running(4) }), region('b', 2), region('c', 4, { room: 0 })], { moves: lent });
    expect(desired(p)).toEqual({ a: 0, b: 6, c: 2 });
    expect(p.moves).toEqual([move('c', 'b', 2, 'Shortage', T0), move('a', 'b', 2, 'Fault', T0)]);
  });

  it('ignores region health when fault moves are off', () => {
    const p = plan([region('a', 4, { nodes: failedNodes('a') }), region('b', 4)], { strategy: strategy({ faultMove: { enable: false } }) });
    expect(p.moves).toEqual([]);
  });
});

describe('planMoves: return', () => {
  const away = [move('a', 'b', 3, 'Shortage', T0 - 900 * S)];

  it('starts the stabilization clock when the region is healthy with room', () => {
    const p = plan([region('a', 5, { pods: running(2), room: 5 }), region('b', 3, { pods: running(6) })], { moves: away });
    expect(Object.fromEntries(p.healthyWithRoomSince)).toEqual({ a: T0 });
    expect(p.moves).toEqual(away);
    expect(p.wakeAt).toContain(T0 + 300 * S);
  });

  it('returns a batch once stable for the period; the host keeps its pods until they are available at home', () => {
    const regions = [region('a', 5, { pods: running(2), room: 5, healthyWithRoomSince: T0 - 300 * S }), region('b', 3, { pods: running(6) })];
    const p = plan(regions, { moves: away, strategy: strategy({ batchSize: 2 }) });
    expect(p.moves).toEqual([move('a', 'b', 1, 'Shortage', T0 - 900 * S, 2)]);
    expect(desired(p)).toEqual({ a: 4, b: 6 });
    expect(p.events.map((e) => e.reason)).toEqual(['ReplicasReturned']);
    expect(p.changes).toEqual([{ kind: 'return', reason: 'Shortage', from: 'a', to: 'b', count: 2 }]);
    // Home has the returned pods available: the host lets those go, and the last one starts back at once.
    const settled = plan([region('a', 5, { pods: running(4), room: 3, healthyWithRoomSince: T0 - 300 * S }), region('b', 3, { pods: running(6) })], {
      moves: p.moves,
      strategy: strategy({ batchSize: 2 }),
    });
    expect(desired(settled)).toEqual({ a: 5, b: 4 });
    expect(settled.moves).toEqual([move('a', 'b', 0, 'Shortage', T0 - 900 * S, 1)]);
  });

  it('holds the return while the region has no room, failing nodes or unschedulable pods', () => {
    const cases: Partial<MoveRegion>[] = [{ room: 0 }, { nodes: [downNode('a-1', T0 - S), node('a-2')] }, { pods: [...running(2), ...stuck(1, T0 - S)] }];
    for (const over of cases) {
      const p = plan([region('a', 5, { pods: running(2), room: 5, healthyWithRoomSince: T0 - 900 * S, ...over }), region('b', 3, { pods: running(6) })], {
        moves: away,
      });
      expect(p.moves).toEqual(away);
      expect(p.healthyWithRoomSince.get('a')).toBeUndefined();
    }
  });

  it('never returns when move-back is off', () => {
    const p = plan([region('a', 5, { pods: running(2), room: 5, healthyWithRoomSince: T0 - 900 * S }), region('b', 3, { pods: running(6) })], {
      moves: away,
      strategy: strategy({ moveBack: { enable: false } }),
    });
    expect(p.moves).toEqual(away);
  });
});

describe('planMoves: spec changes re-evaluate recorded moves', () => {
  it('keeps moves that still apply', () => {
    const moves = [move('a', 'b', 2, 'Shortage', T0 - 10 * S)];
    const p = plan([region('a', 5, { pods: running(3), room: 0 }), region('b', 3, { pods: running(5) })], { moves });
    expect(p.moves).toEqual(moves);
    expect(p.events).toEqual([]);
  });

  it('drops moves naming a removed region or a kind switched off, and trims what exceeds a shrunk region (newest first)', () => {
    const moves = [
      move('a', 'b', 2, 'Shortage', T0 - 20 * S),
      move('a', 'c', 2, 'Shortage', T0 - 10 * S),
      move('a', 'gone', 1, 'Shortage', T0 - 5 * S),
      move('b', 'a', 1, 'Fault', T0 - 5 * S),
    ];
    const p = plan([region('a', 3, { pods: running(1), room: 0 }), region('b', 3), region('c', 3)], {
      moves,
      strategy: strategy({ faultMove: { enable: false } }),
    });
    expect(p.moves).toEqual([move('a', 'b', 2, 'Shortage', T0 - 20 * S), move('a', 'c', 1, 'Shortage', T0 - 10 * S)]);
    expect(p.events.map((e) => e.reason)).toEqual(['MovesReevaluated']);
  });

  it('has no condition when moves are off and none remain', () => {
    const p = plan([region('a', 3), region('b', 3)], { strategy: strategy({ autoReschedule: { enable: false }, faultMove: { enable: false } }) });
    expect(p.condition).toBeUndefined();
  });
});
