import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { failoverSplit, fleetAdditions, type FleetAdditionsInput, type FleetAdditionsResult } from './failover.js';
import {
  mergePeerRecords,
  type FleetAdditionRecord,
  type FleetMemberView,
  type FleetPeerRecord,
  type FleetStrategyView,
  type PeerEd,
  type PeerObservation,
} from './peer-view.js';

const T0 = Date.UTC(2026, 10, 28, 10); // 10:00:00Z
const S = 1000;
const at = (ms: number) => new Date(ms).toISOString();
const R = '3f9a1c0d2e';

/** canary-1 (2), eu-1 (11, self), us-1 (11), ap-1 (4). */
const MEMBERS: FleetMemberView[] = [
  { cluster: 'canary-1', replicas: 2, wave: 0 },
  { cluster: 'eu-1', replicas: 11, wave: 1 },
  { cluster: 'us-1', replicas: 11, wave: 1 },
  { cluster: 'ap-1', replicas: 4, wave: 2 },
];
const ADDITIVE: FleetStrategyView['failover'] = { mode: 'Additive', toleranceSeconds: 120, stabilizationSeconds: 600 };

/** A peer back for good: Healthy, its status describing its spec, every region's replicas available; its Lease not read. */
const healthy = (cluster: string, ed: Partial<PeerEd> = {}, extra: Partial<PeerObservation> = {}): PeerObservation => ({
  cluster,
  reachable: true,
  ed: {
    generation: 3,
    observedGeneration: 3,
    phase: 'Healthy',
    statusRelease: R,
    specRelease: R,
    regions: [{ desired: 4, available: 4 }],
    allRegionsFailed: false,
    ...ed,
  },
  ...extra,
});
const unreachable = (cluster: string): PeerObservation => ({ cluster, reachable: false, error: 'i/o timeout' });
const lease = (cluster: string, renewTime: number): PeerObservation => healthy(cluster, {}, { lease: { renewTime, durationSeconds: 15 } });
const addition = (cluster: string, replicas: number, since = T0 - 3_600 * S, returnedSince?: number): FleetAdditionRecord => ({
  cluster,
  replicas,
  since: at(since),
  ...(returnedSince !== undefined && { returnedSince: at(returnedSince) }),
});

/** eu-1 at T0, failover Additive, every other member back for good and nothing recorded. */
function additionsInput(over: {
  self?: string;
  failover?: Partial<FleetStrategyView['failover']>;
  peers?: PeerObservation[];
  lostSince?: Record<string, number>;
  additions?: FleetAdditionRecord[];
  now?: number;
}): FleetAdditionsInput {
  const self = over.self ?? 'eu-1';
  const observed = new Map((over.peers ?? []).map((p) => [p.cluster, p]));
  const peers: FleetPeerRecord[] = Object.entries(over.lostSince ?? {}).map(([cluster, since]) => ({ cluster, lostSince: at(since) }));
  return {
    fleet: { cluster: self, wave: MEMBERS.find((m) => m.cluster === self)?.wave ?? 0, release: R, members: MEMBERS },
    strategy: { failover: { ...ADDITIVE, ...over.failover } },
    status: { peers, additions: over.additions ?? [] },
    peers: MEMBERS.filter((m) => m.cluster !== self).map((m) => observed.get(m.cluster) ?? healthy(m.cluster)),
    now: over.now ?? T0,
  };
}

describe('failoverSplit', () => {
  const survivors = [
    { cluster: 'canary-1', replicas: 2 },
    { cluster: 'eu-1', replicas: 11 },
    { cluster: 'ap-1', replicas: 4 },
  ];
  it.each([
    { name: 'largest remainder by the survivors’ shares', count: 11, survivors, want: { 'ap-1': 3, 'canary-1': 1, 'eu-1': 7 } },
    {
      name: 'more than the survivors run: whole multiples, then the remainder',
      count: 10,
      survivors: [
        { cluster: 'a', replicas: 1 },
        { cluster: 'b', replicas: 2 },
      ],
      want: { a: 3, b: 7 },
    },
    {
      name: 'ties by cluster name ascending, whatever the order given',
      count: 1,
      survivors: [
        { cluster: 'b', replicas: 5 },
        { cluster: 'a', replicas: 5 },
      ],
      want: { a: 1 },
    },
    {
      name: 'ties over three',
      count: 2,
      survivors: [
        { cluster: 'c', replicas: 1 },
        { cluster: 'b', replicas: 1 },
        { cluster: 'a', replicas: 1 },
      ],
      want: { a: 1, b: 1 },
    },
    {
      name: 'a survivor with no replicas takes none',
      count: 4,
      survivors: [
        { cluster: 'a', replicas: 0 },
        { cluster: 'b', replicas: 2 },
      ],
      want: { b: 4 },
    },
    {
      name: 'no survivor with replicas: evenly, ties by name',
      count: 3,
      survivors: [
        { cluster: 'b', replicas: 0 },
        { cluster: 'a', replicas: 0 },
      ],
      want: { a: 2, b: 1 },
    },
    { name: 'nothing to split', count: 0, survivors, want: {} },
    { name: 'no survivor', count: 5, survivors: [], want: {} },
  ])('$name', ({ count, survivors: s, want }) => {
    expect(Object.fromEntries(failoverSplit(count, s))).toEqual(want);
  });

  it('sums to the count, stays within one replica of the exact quota, and ignores the order of the survivors', () => {
    fc.assert(
      fc.property(fc.nat(200), fc.array(fc.nat(30), { minLength: 1, maxLength: 8 }), fc.nat(), (count, weights, rotate) => {
        const s = weights.map((replicas, i) => ({ cluster: `c${i}`, replicas }));
        const parts = failoverSplit(count, s);
        expect([...parts.values()].reduce((a, b) => a + b, 0)).toBe(count);
        const total = weights.reduce((a, b) => a + b, 0);
        for (const { cluster, replicas } of s) {
          const quota = total > 0 ? (count * replicas) / total : count / s.length;
          expect(Math.abs((parts.get(cluster) ?? 0) - quota)).toBeLessThan(1);
        }
        const k = rotate % s.length;
        expect(failoverSplit(count, [...s.slice(k), ...s.slice(0, k)])).toEqual(parts);
      }),
      { seed: 21, numRuns: 500 },
    );
  });
});

describe('fleetAdditions', () => {
  const none = { additions: [], removed: [], added: 0 };
  const rows: readonly { name: string; input: FleetAdditionsInput; want: Partial<FleetAdditionsResult> }[] = [
    // Off.
    {
      name: 'Off: nothing added even for an unreachable member, recorded additions returned for removal',
      input: additionsInput({
        failover: { mode: 'Off' },
        peers: [unreachable('us-1')],
        lostSince: { 'us-1': T0 - 3_600 * S },
        additions: [addition('us-1', 7)],
      }),
      want: {
        lost: [
          { cluster: 'canary-1', lost: false, lostSince: undefined, why: undefined },
          { cluster: 'us-1', lost: false, lostSince: undefined, why: undefined },
          { cluster: 'ap-1', lost: false, lostSince: undefined, why: undefined },
        ],
        record: [],
        additions: [],
        removed: [addition('us-1', 7)],
        added: 0,
        requeueAt: undefined,
      },
    },
    // Becoming lost.
    {
      name: 'everyone reachable and Healthy: nothing lost, nothing recorded but the entries',
      input: additionsInput({}),
      want: { record: [{ cluster: 'canary-1' }, { cluster: 'us-1' }, { cluster: 'ap-1' }], ...none, requeueAt: undefined },
    },
    {
      name: 'unreachable, first look: lostSince now, not lost yet, look again when the tolerance ends',
      input: additionsInput({ peers: [unreachable('us-1')] }),
      want: { record: [{ cluster: 'canary-1' }, { cluster: 'us-1', lostSince: at(T0) }, { cluster: 'ap-1' }], ...none, requeueAt: T0 + 120 * S },
    },
    {
      name: 'unreachable for just under the tolerance: not lost yet',
      input: additionsInput({ peers: [unreachable('us-1')], lostSince: { 'us-1': T0 - 119 * S } }),
      want: { ...none, requeueAt: T0 + S },
    },
    {
      name: 'unreachable for the tolerance: lost, this cluster adds its part (7 of 11 over 2+11+4)',
      input: additionsInput({ peers: [unreachable('us-1')], lostSince: { 'us-1': T0 - 120 * S } }),
      want: { additions: [addition('us-1', 7, T0)], removed: [], added: 7, requeueAt: undefined },
    },
    {
      name: 'a member the caller observed nothing of counts as unreachable',
      input: { ...additionsInput({}), peers: [healthy('canary-1'), healthy('ap-1')] },
      want: { record: [{ cluster: 'canary-1' }, { cluster: 'us-1', lostSince: at(T0) }, { cluster: 'ap-1' }], requeueAt: T0 + 120 * S },
    },
    // The Lease.
    {
      name: 'Lease stale (renewTime + duration before now): a loss candidate',
      input: additionsInput({ peers: [lease('us-1', T0 - 16 * S)] }),
      want: { record: [{ cluster: 'canary-1' }, { cluster: 'us-1', lostSince: at(T0) }, { cluster: 'ap-1' }], requeueAt: T0 + 120 * S },
    },
    {
      name: 'Lease stale for the tolerance: lost',
      input: additionsInput({ peers: [lease('us-1', T0 - 200 * S)], lostSince: { 'us-1': T0 - 120 * S } }),
      want: { additions: [addition('us-1', 7, T0)], added: 7 },
    },
    {
      name: 'Lease expiring exactly now: fresh, look again the moment it would be stale',
      input: additionsInput({ peers: [lease('us-1', T0 - 15 * S)] }),
      want: { record: [{ cluster: 'canary-1' }, { cluster: 'us-1' }, { cluster: 'ap-1' }], ...none, requeueAt: T0 + 1 },
    },
    {
      name: 'Lease fresh: look again when it would go stale',
      input: additionsInput({ peers: [lease('us-1', T0 - 5 * S)] }),
      want: { ...none, requeueAt: T0 + 10 * S + 1 },
    },
    {
      name: 'Lease not read: no verdict from it',
      input: additionsInput({ peers: [healthy('us-1')], lostSince: { 'us-1': T0 - 3_600 * S } }),
      want: { record: [{ cluster: 'canary-1' }, { cluster: 'us-1' }, { cluster: 'ap-1' }], ...none },
    },
    // Every region Failed.
    {
      name: 'every region Failed for the tolerance: lost although its API answers',
      input: additionsInput({ peers: [healthy('us-1', { phase: 'Degraded', allRegionsFailed: true })], lostSince: { 'us-1': T0 - 120 * S } }),
      want: { additions: [addition('us-1', 7, T0)], added: 7 },
    },
    // False alarms.
    {
      name: 'a run that ends before the tolerance: forgotten',
      input: additionsInput({ lostSince: { 'us-1': T0 - 60 * S } }),
      want: { record: [{ cluster: 'canary-1' }, { cluster: 'us-1' }, { cluster: 'ap-1' }], ...none },
    },
    {
      name: 'a run that ended unseen past its tolerance (no addition recorded): forgotten, nothing was added',
      input: additionsInput({ lostSince: { 'us-1': T0 - 600 * S } }),
      want: { record: [{ cluster: 'canary-1' }, { cluster: 'us-1' }, { cluster: 'ap-1' }], ...none },
    },
    // Coming back.
    {
      name: 'lost, reachable again but Degraded: still lost, the addition kept',
      input: additionsInput({ peers: [healthy('us-1', { phase: 'Degraded' })], additions: [addition('us-1', 7)] }),
      want: { additions: [addition('us-1', 7)], removed: [], added: 7 },
    },
    {
      name: 'lost, reachable with a region short of available: still lost',
      input: additionsInput({
        peers: [
          healthy('us-1', {
            regions: [
              { desired: 4, available: 4 },
              { desired: 7, available: 6 },
            ],
          }),
        ],
        additions: [addition('us-1', 7)],
      }),
      want: { additions: [addition('us-1', 7)], added: 7 },
    },
    {
      name: 'lost, Healthy but its status behind its spec: still lost',
      input: additionsInput({ peers: [healthy('us-1', { observedGeneration: 2 })], additions: [addition('us-1', 7)] }),
      want: { additions: [addition('us-1', 7)], added: 7 },
    },
    {
      name: 'lost and back: the stabilization starts, the addition stays',
      input: additionsInput({ additions: [addition('us-1', 7)] }),
      want: { additions: [addition('us-1', 7, T0 - 3_600 * S, T0)], removed: [], added: 7, requeueAt: T0 + 600 * S },
    },
    {
      name: 'back for just under stabilizationSeconds: the addition stays',
      input: additionsInput({ additions: [addition('us-1', 7, T0 - 3_600 * S, T0 - 599 * S)] }),
      want: { additions: [addition('us-1', 7, T0 - 3_600 * S, T0 - 599 * S)], added: 7, requeueAt: T0 + S },
    },
    {
      name: 'back for stabilizationSeconds: the addition is removed',
      input: additionsInput({ additions: [addition('us-1', 7, T0 - 3_600 * S, T0 - 600 * S)] }),
      want: {
        lost: [
          { cluster: 'canary-1', lost: false, lostSince: undefined, why: undefined },
          { cluster: 'us-1', lost: false, lostSince: undefined, why: undefined },
          { cluster: 'ap-1', lost: false, lostSince: undefined, why: undefined },
        ],
        additions: [],
        removed: [addition('us-1', 7, T0 - 3_600 * S, T0 - 600 * S)],
        added: 0,
        requeueAt: undefined,
      },
    },
    {
      name: 'returning, then unreachable again: lost at once (no second tolerance), the stabilization starts over later',
      input: additionsInput({ peers: [unreachable('us-1')], additions: [addition('us-1', 7, T0 - 3_600 * S, T0 - 300 * S)] }),
      want: { record: [{ cluster: 'canary-1' }, { cluster: 'us-1', lostSince: at(T0) }, { cluster: 'ap-1' }], additions: [addition('us-1', 7)], added: 7 },
    },
    // Several members.
    {
      name: 'two lost: each split over the survivors only (us-1 9 and ap-1 3 of canary-1 2 + eu-1 11)',
      input: additionsInput({ peers: [unreachable('us-1'), unreachable('ap-1')], lostSince: { 'us-1': T0 - 200 * S, 'ap-1': T0 - 120 * S } }),
      want: { additions: [addition('us-1', 9, T0), addition('ap-1', 3, T0)], added: 12 },
    },
    {
      name: 'a returning member stays out of the survivors of another loss',
      input: additionsInput({
        peers: [unreachable('ap-1')],
        lostSince: { 'ap-1': T0 - 120 * S },
        additions: [addition('us-1', 7, T0 - 3_600 * S, T0 - 60 * S)],
      }),
      want: { additions: [addition('us-1', 9, T0 - 3_600 * S, T0 - 60 * S), addition('ap-1', 3, T0)], added: 12 },
    },
    {
      name: 'a part of 0 is still recorded: the entry remembers the loss',
      input: additionsInput({ self: 'canary-1', peers: [unreachable('ap-1')], lostSince: { 'ap-1': T0 - 120 * S } }),
      want: { additions: [addition('ap-1', 0, T0)], removed: [], added: 0 },
    },
    {
      name: 'an addition for a member no longer in the fleet is removed',
      input: additionsInput({ additions: [addition('gone-1', 3)] }),
      want: { additions: [], removed: [addition('gone-1', 3)], added: 0 },
    },
  ];

  it.each(rows)('$name', ({ input, want }) => {
    // Exactly the fields the row names (toEqual on each, so a field that must be absent is checked too).
    const result = fleetAdditions(input);
    expect(Object.fromEntries(Object.keys(want).map((k) => [k, result[k as keyof FleetAdditionsResult]]))).toEqual(want);
  });

  it('reports why a member is lost', () => {
    const lostAt = fleetAdditions(additionsInput({ peers: [lease('us-1', T0 - 200 * S)], lostSince: { 'us-1': T0 - 120 * S } })).lost;
    expect(lostAt[1]).toEqual({ cluster: 'us-1', lost: true, lostSince: T0 - 120 * S, why: 'agent Lease not renewed since 09:56:40' });
    const returning = fleetAdditions(additionsInput({ additions: [addition('us-1', 7, T0 - 3_600 * S, T0 - 60 * S)] })).lost;
    expect(returning[1]).toEqual({ cluster: 'us-1', lost: true, lostSince: undefined, why: 'back since 09:59:00, stable at 10:09:00' });
  });

  it('over time: suspected, lost, back, stable, removed, with each look reading what the previous one recorded', () => {
    let status: FleetAdditionsInput['status'] = undefined;
    const look = (now: number, us: PeerObservation) => {
      const result = fleetAdditions({ ...additionsInput({ peers: [us], now }), status });
      status = { peers: result.record, additions: result.additions };
      return result;
    };
    expect(look(T0, unreachable('us-1'))).toMatchObject({ added: 0, requeueAt: T0 + 120 * S });
    expect(look(T0 + 120 * S, unreachable('us-1'))).toMatchObject({ added: 7, additions: [addition('us-1', 7, T0 + 120 * S)] });
    expect(look(T0 + 300 * S, healthy('us-1', { phase: 'Progressing' }))).toMatchObject({ added: 7 });
    expect(look(T0 + 400 * S, healthy('us-1'))).toMatchObject({ added: 7, requeueAt: T0 + 1_000 * S });
    expect(look(T0 + 999 * S, healthy('us-1'))).toMatchObject({ added: 7, requeueAt: T0 + 1_000 * S });
    expect(look(T0 + 1_000 * S, healthy('us-1'))).toMatchObject({ added: 0, additions: [], removed: [addition('us-1', 7, T0 + 120 * S, T0 + 400 * S)] });
  });

  it('survivors that agree on who is lost add exactly the lost replicas between them, for many member sets', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.record({ cluster: fc.stringMatching(/^[a-z]{1,3}-[0-9]$/), replicas: fc.nat(40) }), {
          minLength: 2,
          maxLength: 9,
          selector: (m) => m.cluster,
        }),
        fc.array(fc.boolean(), { minLength: 9, maxLength: 9 }),
        (drawn, lostFlags) => {
          const members = drawn.map((m) => ({ ...m, wave: 0 }));
          const lostNames = members.filter((_, i) => lostFlags[i] === true).map((m) => m.cluster);
          const survivors = members.filter((m) => !lostNames.includes(m.cluster));
          if (survivors.length === 0 || lostNames.length === 0) return;
          const totals = new Map<string, number>();
          for (const self of survivors) {
            const result = fleetAdditions({
              fleet: { cluster: self.cluster, wave: 0, release: R, members },
              strategy: { failover: ADDITIVE },
              status: { peers: lostNames.map((cluster) => ({ cluster, lostSince: at(T0 - 120 * S) })) },
              peers: members
                .filter((m) => m.cluster !== self.cluster)
                .map((m) => (lostNames.includes(m.cluster) ? unreachable(m.cluster) : healthy(m.cluster))),
              now: T0,
            });
            expect(result.additions.map((a) => a.cluster).sort()).toEqual([...lostNames].sort());
            for (const a of result.additions) totals.set(a.cluster, (totals.get(a.cluster) ?? 0) + a.replicas);
          }
          for (const m of members.filter((x) => lostNames.includes(x.cluster))) expect(totals.get(m.cluster)).toBe(m.replicas);
        },
      ),
      { seed: 21, numRuns: 300 },
    );
  });
});

describe('mergePeerRecords', () => {
  it("combines the gate's and the failover's entries per member, in members order, without empty fields", () => {
    const gate = [{ cluster: 'canary-1', healthySince: at(T0), healthyRelease: R }];
    const failover = [{ cluster: 'us-1', lostSince: at(T0) }, { cluster: 'canary-1', lostSince: undefined }, { cluster: 'ap-1' }];
    expect(mergePeerRecords(MEMBERS, gate, failover)).toEqual([
      { cluster: 'canary-1', healthySince: at(T0), healthyRelease: R },
      { cluster: 'us-1', lostSince: at(T0) },
      { cluster: 'ap-1' },
    ]);
  });
});
