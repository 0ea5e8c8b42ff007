import { describe, expect, it } from 'vitest';
import { extendedDeployment } from '../api/extended-deployment.js';
import { planRollout, type RolloutInput } from '../rollout/planner.js';
import type { PodState, RegionState } from '../rollout/snapshot.js';
import { downNode, node } from './nodes-test-support.js';

const T0 = Date.UTC(2026, 0, 1);
const S = 1000;

function ed(strategy: Record<string, unknown>) {
  return extendedDeployment.parse({
    apiVersion: 'extendeddeployment.io/v1beta1',
    kind: 'ExtendedDeployment',
    metadata: { name: 'web', namespace: 'shop' },
    spec: {
      selector: { matchLabels: { app: 'web' } },
      template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'i' }] } },
      regions: [
        { name: 'a', replicas: 4 },
        { name: 'b', replicas: 4 },
      ],
      strategy: { minReadySeconds: 0, ...strategy },
    },
  });
}

let uid = 0;
const pod = (revision: string, over: Partial<PodState> = {}): PodState => {
  uid++;
  return {
    name: `p${uid}`,
    uid: `u${uid}`,
    revision,
    assigned: true,
    running: true,
    ready: true,
    readySince: T0 - 3600 * S,
    terminating: false,
    markedOld: false,
    ...over,
  };
};
const pods = (n: number, revision = 'new', over: Partial<PodState> = {}) => Array.from({ length: n }, () => pod(revision, over));
const region = (name: string, desired: number, list: PodState[], over: Partial<RegionState> = {}): RegionState => ({
  name,
  desired,
  targetRevision: 'new',
  workload: { name: `web-${name}`, templateRevision: 'new', replicas: list.length },
  pods: list,
  nodes: [node(`${name}-1`)],
  room: 10,
  ...over,
});
const input = (strategy: Record<string, unknown>, regions: RegionState[], over: Partial<RolloutInput> = {}): RolloutInput => ({
  ed: ed(strategy),
  generation: 1,
  rolloutRevision: 'R1',
  regions,
  status: undefined,
  controls: { paused: false, aborted: false, approvedThrough: undefined, resumedAt: undefined },
  now: T0,
  ...over,
});
const scales = (plan: ReturnType<typeof planRollout>) => plan.actions.flatMap((a) => (a.kind === 'scale' ? [`${a.region}:${a.replicas}`] : []));

describe('planRollout with moves', () => {
  it('a shortage move records the move in status and scales both regions', () => {
    const stuck = pods(2, 'new', { assigned: false, running: false, ready: false, readySince: undefined, unschedulableSince: T0 - 61 * S });
    const plan = planRollout(input({ autoReschedule: { enable: true } }, [region('a', 4, [...pods(2), ...stuck]), region('b', 4, pods(4))]));
    expect(scales(plan).sort()).toEqual(['a:2', 'b:6']);
    expect(plan.status.moves).toEqual([{ from: 'a', to: 'b', count: 2, reason: 'Shortage', since: new Date(T0).toISOString() }]);
    expect(plan.status.regions?.map((r) => [r.name, r.desired, r.movedOut, r.movedIn])).toEqual([
      ['a', 2, 2, undefined],
      ['b', 6, undefined, 2],
    ]);
    expect(plan.status.overview).toBe('[Shortage]a: 4/2; b: 4/6');
    expect(plan.status.conditions?.find((c) => c.type === 'Moves')).toMatchObject({ status: 'True', reason: 'Shortage' });
    expect(plan.events.map((e) => e.reason)).toContain('ReplicasMoved');
    expect(plan.moveChanges).toEqual([{ kind: 'move', reason: 'Shortage', from: 'a', to: 'b', count: 2 }]);
  });

  it('a failed region hands its replicas over mid-rollout, and the rollout goes on with the new counts', () => {
    const failed = [downNode('a-1', T0 - 60 * S)];
    const plan = planRollout(
      input({ faultMove: { enable: true } }, [
        // The node-lifecycle controller marks the pods of a NotReady node not Ready: they serve nothing, so they go at once.
        region('a', 4, pods(4, 'old', { markedOld: true, ready: false }), { nodes: failed, room: 0 }),
        region('b', 4, pods(4, 'old', { markedOld: true })),
      ]),
    );
    expect(plan.status.regions?.map((r) => [r.name, r.desired])).toEqual([
      ['a', 0],
      ['b', 8],
    ]);
    expect(plan.status.overview?.startsWith('[Fault]')).toBe(true);
    expect(plan.status.phase).toBe('Progressing');
    expect(scales(plan)).toContain('a:0');
  });

  it('without moves enabled the status has no trace of them', () => {
    const plan = planRollout(input({}, [region('a', 4, pods(4)), region('b', 4, pods(4))]));
    expect(plan.status.moves).toBeUndefined();
    expect(plan.status.conditions?.map((c) => c.type)).not.toContain('Moves');
    expect(plan.status.overview).toBe('[Normal]a: 4/4; b: 4/4');
  });

  it('recorded moves survive the next pass unchanged (no double counting)', () => {
    const stuck = pods(2, 'new', { assigned: false, running: false, ready: false, readySince: undefined, unschedulableSince: T0 - 61 * S });
    const first = planRollout(input({ autoReschedule: { enable: true } }, [region('a', 4, [...pods(2), ...stuck]), region('b', 4, pods(4))]));
    // The agent restarts before the ReplicaSets caught up: same pods, the status written.
    const again = planRollout(
      input({ autoReschedule: { enable: true } }, [region('a', 4, [...pods(2), ...stuck]), region('b', 4, pods(4))], { status: first.status, now: T0 + 5 * S }),
    );
    expect(again.status.moves).toEqual(first.status.moves);
    expect(again.moveChanges).toEqual([]);
    expect(scales(again).sort()).toEqual(['a:2', 'b:6']);
  });
});
