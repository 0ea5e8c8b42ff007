import { describe, expect, it } from 'vitest';
import { extendedDeployment, extendedDeploymentStatus, type ExtendedDeploymentStatus } from '../api/extended-deployment.js';
import { decide } from '../rollout/decision.js';
import type { RolloutInput } from '../rollout/planner.js';
import type { PodState, RegionState } from '../rollout/snapshot.js';
import { podState, rolloutInput } from '../rollout/test-support.js';
import { peerEdOf, type PeerObservation } from './peer-view.js';
import { fleetReplicas, memberProblems, releaseApproved } from './look.js';

// The wave gate through the planner, with the ReplicaSet adapter: a follower's rollout toward a new template waits
// for the earlier wave, records its soak before acting, and starts its first group once the soak is over.

const T0 = Date.UTC(2026, 10, 28, 10, 0, 0);
const RELEASE = '3f9a1c0d2e';

function member(cluster: string, wave: number, strategy: Record<string, unknown> = {}) {
  return extendedDeployment.parse({
    apiVersion: 'extendeddeployment.io/v1beta1',
    kind: 'ExtendedDeployment',
    metadata: { name: 'web', namespace: 'shop' },
    spec: {
      replicas: 4,
      selector: { matchLabels: { app: 'web' } },
      template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'i:2' }] } },
      regions: [{ name: 'a', replicas: 4 }],
      strategy: { rolloutStrategy: 'Group', batchSize: 2, fleet: { minSuccessSeconds: 60, ...strategy } },
      fleet: {
        name: 'prod',
        cluster,
        wave,
        release: RELEASE,
        members: [
          { cluster: 'canary-1', replicas: 4, wave: 0 },
          { cluster: 'eu-1', replicas: 4, wave: 1 },
        ],
      },
    },
  });
}

let uid = 0;
/** A pod Ready for an hour. */
const pod = (revision: string): PodState => podState(`p${++uid}`, { revision, ready: true, readySince: T0 - 3_600_000 });
/** Region a with four pods of the previous template, its ReplicaSet already synced to the new one. */
const oldRegion = (): RegionState => ({
  name: 'a',
  desired: 4,
  targetRevision: 'new',
  workload: { name: 'web-a', templateRevision: 'new', replicas: 4 },
  pods: [pod('old'), pod('old'), pod('old'), pod('old')],
});
const healthyCanary = (release = RELEASE): PeerObservation => ({
  cluster: 'canary-1',
  reachable: true,
  ed: { generation: 2, observedGeneration: 2, phase: 'Healthy', statusRelease: release, specRelease: RELEASE, regions: [], allRegionsFailed: false },
});
const previous: ExtendedDeploymentStatus = {
  observedGeneration: 1,
  phase: 'Healthy',
  revision: 'R0',
  rolloutRegions: ['a'],
  currentGroup: 2,
  totalGroups: 2,
  fleet: { release: '0000000000' },
};

/** One look of the agent at generation 2 (rollout R1) over `regions`; `peers` undefined: nothing of the fleet is read (edctl plan). */
function look(
  ed: ReturnType<typeof member>,
  status: ExtendedDeploymentStatus | undefined,
  peers: readonly PeerObservation[] | undefined,
  now: number,
  regions: RegionState[] = [oldRegion()],
) {
  const input: RolloutInput = {
    ...rolloutInput(ed, regions, now, status),
    generation: 2,
    ...(peers !== undefined && { fleet: { peers, approved: false } }),
  };
  return decide(input, status);
}

describe('the fleet gate in the planner', () => {
  it('a follower waits while its predecessor is not at the release: no pod for the new template, nothing recorded of the rollout', () => {
    const { plan } = look(member('eu-1', 1), previous, [healthyCanary('0000000000')], T0);
    expect(plan.status.phase).toBe('Progressing');
    expect(plan.status.conditions?.find((c) => c.type === 'Progressing')?.reason).toBe('WaitingForFleet');
    expect(plan.status.revision).toBe('R0');
    expect(plan.status.fleet?.gate).toMatchObject({ state: 'Waiting', reason: 'PredecessorNotReady' });
    expect(plan.actions.filter((a) => a.kind === 'scale' && a.replicas > a.from)).toEqual([]);
    expect(plan.status.fleet?.release).toBe('0000000000');
    expect(plan.events.map((e) => e.reason)).toEqual(['FleetGateWaiting']);
  });

  it('the first look at the predecessor Healthy at the release records the soak start and waits until it ends', () => {
    const { plan, lookAgainInMs } = look(member('eu-1', 1), previous, [healthyCanary()], T0);
    expect(plan.status.fleet?.peers).toEqual([{ cluster: 'canary-1', healthySince: new Date(T0).toISOString(), healthyRelease: RELEASE }]);
    expect(plan.status.fleet?.gate).toMatchObject({ state: 'Waiting', reason: 'Soaking' });
    expect(plan.status.revision).toBe('R0');
    expect(lookAgainInMs).toBeLessThanOrEqual(60_000);
  });

  it('a restarted agent reads the soak start back: before its end it waits, after it the first group starts (status first)', () => {
    const soaking = look(member('eu-1', 1), previous, [healthyCanary()], T0).plan.status;
    const before = look(member('eu-1', 1), soaking, [healthyCanary()], T0 + 59_000);
    expect(before.plan.status.fleet?.gate?.reason).toBe('Soaking');
    expect(before.plan.status.fleet?.peers?.[0]?.healthySince).toBe(new Date(T0).toISOString());
    // Every field recorded survives the API server's pruning (the CRD is the schema): a dropped one would differ at every look.
    expect(extendedDeploymentStatus.parse(soaking)).toEqual(soaking);
    const after = look(member('eu-1', 1), soaking, [healthyCanary()], T0 + 60_000);
    expect(after.plan.status.fleet?.gate).toEqual({ state: 'Open' });
    expect(after.plan.status).toMatchObject({ revision: 'R1', currentGroup: 1, phase: 'Progressing' });
    expect(after.statusWrite).toBe('first');
    expect(after.plan.actions.some((a) => a.kind === 'scale' && a.replicas > a.from)).toBe(true);
    expect(after.plan.events.map((e) => e.reason)).toContain('FleetGateOpened');
  });

  it('wave 0 starts at once and publishes the release once Healthy', () => {
    const started = look(member('canary-1', 0), previous, [], T0);
    expect(started.plan.status).toMatchObject({ revision: 'R1', currentGroup: 1 });
    expect(started.plan.status.fleet).toEqual({ gate: { state: 'Open' }, release: '0000000000', share: 4 });
    const done: RegionState = { ...oldRegion(), pods: [pod('new'), pod('new'), pod('new'), pod('new')] };
    const healthy = look(member('canary-1', 0), { ...started.plan.status, currentGroup: 2 }, [], T0 + 120_000, [done]).plan.status;
    expect(healthy.phase).toBe('Healthy');
    expect(healthy.fleet?.release).toBe(RELEASE);
  });

  it('a count-only change is not gated: a follower with nothing to replace scales at once', () => {
    const region: RegionState = { ...oldRegion(), desired: 6, pods: [pod('new'), pod('new'), pod('new'), pod('new')] };
    const { plan } = look(member('eu-1', 1), { ...previous, revision: 'R1' }, [healthyCanary('0000000000')], T0, [region]);
    expect(plan.actions).toContainEqual(expect.objectContaining({ kind: 'scale', from: 4, replicas: 6 }));
    expect(plan.status.fleet?.gate?.state).toBe('Waiting');
  });

  it('outside a fleet, and where nothing of the fleet is observed (edctl plan), status.fleet is not touched', () => {
    const { plan } = look(member('eu-1', 1), previous, undefined, T0);
    expect(plan.status.fleet).toEqual({ release: '0000000000' });
    expect(plan.status.currentGroup).toBe(1);
  });
});

describe('failover through the look (Additive)', () => {
  const lost: PeerObservation = { cluster: 'canary-1', reachable: false, error: 'connect ECONNREFUSED' };
  const additive = member('eu-1', 1, { failover: { mode: 'Additive', toleranceSeconds: 10, stabilizationSeconds: 30 } });

  it('records the loss first, adds its part once the toleration is over (an Event), and keeps it while the member is lost', () => {
    const first = look(additive, previous, [lost], T0).plan.status;
    expect(first.fleet?.peers?.[0]).toMatchObject({ cluster: 'canary-1', lostSince: new Date(T0).toISOString() });
    expect(first.fleet?.additions).toBeUndefined();
    const after = look(additive, first, [lost], T0 + 10_000);
    expect(after.plan.status.fleet?.additions).toEqual([{ cluster: 'canary-1', replicas: 4, since: new Date(T0 + 10_000).toISOString() }]);
    expect(after.plan.events.map((e) => e.reason)).toContain('FleetFailoverAdded');
    expect(extendedDeploymentStatus.parse(after.plan.status)).toEqual(after.plan.status);
    expect(fleetReplicas(additive, after.plan.status)).toBe(8);
    expect(look(additive, after.plan.status, [lost], T0 + 60_000).plan.status.fleet?.additions).toHaveLength(1);
  });

  it('with failover Off nothing is added however long a member is lost', () => {
    const off = member('eu-1', 1);
    const first = look(off, previous, [lost], T0).plan.status;
    expect(look(off, first, [lost], T0 + 3_600_000).plan.status.fleet?.additions).toBeUndefined();
    expect(fleetReplicas(off, first)).toBe(4);
  });
});

describe('handover through the look (make-before-break)', () => {
  /** eu-1 rendered with 2 of 8 after Git moved 2 replicas to canary-1, which now has 6. */
  const shrunk = () => {
    const ed = member('eu-1', 1);
    const members = [
      { cluster: 'canary-1', replicas: 6, wave: 0 },
      { cluster: 'eu-1', replicas: 2, wave: 1 },
    ];
    return { ...ed, spec: { ...ed.spec, replicas: 2, fleet: { ...ed.spec.fleet!, members } } };
  };
  const canary = (available: number): PeerObservation => ({
    cluster: 'canary-1',
    reachable: true,
    ed: { ...healthyCanary().ed!, regions: [{ desired: 6, available }] },
  });
  const held: ExtendedDeploymentStatus = { ...previous, fleet: { ...previous.fleet, share: 4 } };

  it('records the hold (status before act: the recorded share stays) with an Event, and lets go once the other member runs its share', () => {
    const waiting = look(shrunk(), held, [canary(5)], T0).plan;
    expect(waiting.status.fleet?.share).toBe(4);
    expect(waiting.status.fleet?.handover).toMatchObject({ replicas: 2, waitingFor: ['canary-1'] });
    expect(extendedDeploymentStatus.parse(waiting.status)).toEqual(waiting.status);
    expect(waiting.events.map((e) => e.reason)).toContain('FleetHandoverWaiting');
    expect(fleetReplicas(shrunk(), waiting.status)).toBe(4);
    expect(look(shrunk(), waiting.status, [canary(5)], T0 + 1000).plan.events.map((e) => e.reason)).not.toContain('FleetHandoverWaiting');

    const done = look(shrunk(), waiting.status, [canary(6)], T0 + 2000).plan;
    expect(done.status.fleet?.share).toBe(2);
    expect(done.status.fleet?.handover).toBeUndefined();
    expect(done.events).toContainEqual(expect.objectContaining({ reason: 'FleetHandoverDone', message: expect.stringContaining('from 4 to its share of 2') }));
    expect(fleetReplicas(shrunk(), done.status)).toBe(2);
  });
});

describe('every region Failed', () => {
  it('a member whose regions all Failed publishes it (what the others read as lost capacity); one that still has a region does not', () => {
    const failedRegion: RegionState = { ...oldRegion(), failed: true };
    const failed = look(member('eu-1', 1), previous, [healthyCanary()], T0, [failedRegion]).plan.status;
    expect(failed.fleet?.regionsFailed).toBe(true);
    expect(extendedDeploymentStatus.parse(failed)).toEqual(failed);
    expect(peerEdOf({ status: failed }).allRegionsFailed).toBe(true);
    const healthy = look(member('eu-1', 1), failed, [healthyCanary()], T0).plan.status;
    expect(healthy.fleet?.regionsFailed).toBeUndefined();
    expect(peerEdOf({ status: healthy }).allRegionsFailed).toBe(false);
  });
});

describe('memberProblems', () => {
  it('a member rendered for another cluster is invalid here; the same cluster, or an agent without a name, is not', () => {
    expect(memberProblems(member('eu-1', 1), 'us-1')).toEqual([
      {
        object: { kind: 'ExtendedDeployment', namespace: 'shop', name: 'web' },
        path: ['spec', 'fleet', 'cluster'],
        message: 'is "eu-1", but this agent runs in "us-1" (--cluster-name): the render of another cluster was synced here',
      },
    ]);
    expect(memberProblems(member('eu-1', 1), 'eu-1')).toEqual([]);
    expect(memberProblems(member('eu-1', 1), undefined)).toEqual([]);
  });
});

describe('releaseApproved', () => {
  it('counts the approval of this release only', () => {
    expect(releaseApproved({ 'extendeddeployment.io/approved-release': RELEASE }, RELEASE)).toBe(true);
    expect(releaseApproved({ 'extendeddeployment.io/approved-release': '0000000000' }, RELEASE)).toBe(false);
    expect(releaseApproved(undefined, RELEASE)).toBe(false);
  });
});
