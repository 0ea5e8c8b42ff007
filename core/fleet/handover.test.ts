import { describe, expect, it } from 'vitest';
import { fleetHandover, type FleetHandoverInput } from './handover.js';
import type { FleetHandoverRecord, FleetMemberView, PeerEd, PeerObservation } from './peer-view.js';

const T0 = Date.UTC(2026, 10, 29, 10); // 10:00:00Z
const at = (ms: number) => new Date(ms).toISOString();
const R = '3f9a1c0d2e';

/** A cluster d joined: a and b (self) went from 6 to 4, d has 4 of the 12. */
const MEMBERS: FleetMemberView[] = [
  { cluster: 'a', replicas: 4, wave: 0 },
  { cluster: 'b', replicas: 4, wave: 1 },
  { cluster: 'd', replicas: 4, wave: 1 },
];

/** A peer that synced release R, its status current, with `available` pods over its regions. */
const peer = (cluster: string, available: number, ed: Partial<PeerEd> = {}): PeerObservation => ({
  cluster,
  reachable: true,
  ed: {
    generation: 5,
    observedGeneration: 5,
    phase: 'Healthy',
    specRelease: R,
    regions: [
      { desired: 3, available: Math.min(3, available) },
      { desired: 3, available: Math.max(0, available - 3) },
    ],
    allRegionsFailed: false,
    ...ed,
  },
});

/** b at T0 with share 4 rendered and 6 recorded. */
function input(over: Partial<FleetHandoverInput> & { recorded?: number | undefined; handover?: FleetHandoverRecord } = {}): FleetHandoverInput {
  const recorded = 'recorded' in over ? over.recorded : 6;
  return {
    fleet: { cluster: 'b', wave: 1, release: R, members: MEMBERS },
    share: 4,
    status: { ...(recorded !== undefined && { share: recorded }), ...(over.handover && { handover: over.handover }) },
    peers: [peer('a', 6), peer('d', 4)],
    now: T0,
    ...over,
  };
}

describe('fleetHandover', () => {
  it.each([
    ['nothing recorded yet (a new member, or an agent before the field): its rendered share', undefined, 4],
    ['a grown share applies at once: growth is the make', 3, 4],
    ['an unchanged share', 4, 4],
  ])('%s', (_name, recorded, share) => {
    const out = fleetHandover(input({ recorded, peers: [] }));
    expect(out).toEqual({ share, handover: undefined });
  });

  it('a smaller share goes ahead once every other member runs its share at this release; the release is reported', () => {
    expect(fleetHandover(input())).toEqual({ share: 4, handover: undefined, released: { from: 6, to: 4 } });
  });

  it('a member still shrinking counts as running its share (more than it is available)', () => {
    expect(fleetHandover(input({ peers: [peer('a', 6), peer('d', 5)] })).share).toBe(4);
  });

  it.each<[string, PeerObservation, string]>([
    ['short of its share', peer('d', 3), 'd 3/4 available'],
    ['not yet synced to this release', peer('d', 4, { specRelease: '0000000000' }), 'd runs release 0000000000, not yet this one'],
    ['a status of an older generation', peer('d', 4, { observedGeneration: 4 }), 'd its agent has not observed the release yet'],
    ['unreachable', { cluster: 'd', reachable: false, error: 'i/o timeout' }, 'd cannot be read (i/o timeout)'],
    [
      'without the ExtendedDeployment',
      { cluster: 'd', reachable: true, error: 'it has no ExtendedDeployment shop/web' },
      'd it has no ExtendedDeployment shop/web',
    ],
  ])('holds the recorded share while a growing member is %s, and says why', (_name, d, why) => {
    const out = fleetHandover(input({ peers: [peer('a', 6), d] }));
    expect(out.share).toBe(6);
    expect(out.released).toBeUndefined();
    expect(out.handover).toEqual({
      replicas: 4,
      since: at(T0),
      waitingFor: ['d'],
      message: `keeps 6 replicas (its share is now 4) until every other member runs its share at release ${R}: ${why}`,
    });
  });

  it('a member not observed at all holds it too (nothing says it made up for the change)', () => {
    expect(fleetHandover(input({ peers: [peer('a', 6)] })).handover?.waitingFor).toEqual(['d']);
  });

  it('names every member it waits for, in members order', () => {
    const out = fleetHandover(input({ peers: [peer('d', 1), peer('a', 2)] }));
    expect(out.handover?.waitingFor).toEqual(['a', 'd']);
    expect(out.handover?.message).toContain(': a 2/4 available; d 1/4 available');
  });

  it('keeps the recorded start of a hold across looks (and agents)', () => {
    const since = at(T0 - 60_000);
    const handover = { replicas: 4, since, waitingFor: ['d'], message: 'earlier' };
    expect(fleetHandover(input({ handover, peers: [peer('a', 6), peer('d', 0)] })).handover?.since).toBe(since);
  });

  it('a share lowered again during a hold holds the same recorded share toward the new one', () => {
    const out = fleetHandover(input({ share: 2, peers: [peer('a', 6), peer('d', 0)] }));
    expect(out).toMatchObject({ share: 6, handover: { replicas: 2 } });
  });
});
