import { describe, expect, it } from 'vitest';
import { fleetGate, type FleetGateDecision, type FleetGateInput } from './gate.js';
import type { FleetPeerRecord, FleetStrategyView, PeerEd, PeerObservation } from './peer-view.js';

const T0 = Date.UTC(2026, 10, 28, 10); // 10:00:00Z
const S = 1000;
const at = (ms: number) => new Date(ms).toISOString();
const R = '3f9a1c0d2e';
const OLD = '0123456789';

/** canary-1 in wave 0; eu-1 (self) and us-1 in wave 1; ap-1 in wave 2. */
const MEMBERS = [
  { cluster: 'canary-1', replicas: 2, wave: 0 },
  { cluster: 'eu-1', replicas: 11, wave: 1 },
  { cluster: 'us-1', replicas: 11, wave: 1 },
  { cluster: 'ap-1', replicas: 4, wave: 2 },
];
const DEFAULTS: FleetStrategyView = {
  minSuccessSeconds: 300,
  maxFailures: 0,
  onUnreachable: { action: 'Wait', afterSeconds: 600 },
  failover: { mode: 'Off', toleranceSeconds: 120, stabilizationSeconds: 600 },
};

/** A peer Healthy at R with a status that describes its spec, unless `ed` says otherwise. */
const healthy = (cluster: string, ed: Partial<PeerEd> = {}): PeerObservation => ({
  cluster,
  reachable: true,
  lease: { renewTime: T0, durationSeconds: 15 },
  ed: {
    generation: 3,
    observedGeneration: 3,
    phase: 'Healthy',
    statusRelease: R,
    specRelease: R,
    regions: [{ desired: 2, available: 2 }],
    allRegionsFailed: false,
    ...ed,
  },
});
const unreachable = (cluster: string, error = 'dial tcp 10.0.0.1:6443: i/o timeout'): PeerObservation => ({ cluster, reachable: false, error });
const soakedSince = (cluster: string, since = T0 - 3_600 * S, release = R): FleetPeerRecord => ({ cluster, healthySince: at(since), healthyRelease: release });

/** eu-1 (wave 1) at T0 with every other member Healthy at R and nothing recorded. */
function gateInput(
  over: { self?: string; strategy?: Partial<FleetStrategyView>; recorded?: FleetPeerRecord[]; peers?: PeerObservation[] } & Partial<
    Pick<FleetGateInput, 'approved' | 'now'>
  >,
): FleetGateInput {
  const self = over.self ?? 'eu-1';
  const wave = MEMBERS.find((m) => m.cluster === self)?.wave ?? 0;
  const observed = new Map((over.peers ?? []).map((p) => [p.cluster, p]));
  return {
    fleet: { cluster: self, wave, release: R, members: MEMBERS },
    strategy: { ...DEFAULTS, ...over.strategy },
    status: over.recorded === undefined ? undefined : { peers: over.recorded },
    peers: MEMBERS.filter((m) => m.cluster !== self).map((m) => observed.get(m.cluster) ?? healthy(m.cluster)),
    approved: over.approved ?? false,
    now: over.now ?? T0,
  };
}

const open: FleetGateDecision = { state: 'Open' };
const waiting = (reason: Extract<FleetGateDecision, { state: 'Waiting' }>['reason'], message: string, requeueAt?: number): FleetGateDecision => ({
  state: 'Waiting',
  reason,
  message,
  ...(requeueAt !== undefined && { requeueAt }),
});

describe('fleetGate: decision', () => {
  const rows: readonly { name: string; input: FleetGateInput; want: FleetGateDecision }[] = [
    // The first wave.
    { name: 'wave 0: open, whatever the others show', input: gateInput({ self: 'canary-1', peers: [unreachable('eu-1')] }), want: open },
    {
      name: 'a self in the earliest wave (waves starting at 1): open',
      input: { ...gateInput({}), fleet: { cluster: 'eu-1', wave: 1, release: R, members: MEMBERS.filter((m) => m.wave > 0) } },
      want: open,
    },
    {
      name: 'members of the same and later waves are not waited for',
      input: gateInput({ recorded: [soakedSince('canary-1')], peers: [unreachable('us-1'), healthy('ap-1', { phase: 'Degraded' })] }),
      want: open,
    },
    // The soak.
    {
      name: 'predecessor first seen Healthy at the release: soaks from now',
      input: gateInput({}),
      want: waiting('Soaking', `waiting for canary-1: Healthy at ${R} since 10:00:00, soak ends at 10:05:00`, T0 + 300 * S),
    },
    {
      name: 'restart: the recorded healthySince keeps the soak',
      input: gateInput({ recorded: [soakedSince('canary-1', T0 - 48 * S)], now: T0 }),
      want: waiting('Soaking', `waiting for canary-1: Healthy at ${R} since 09:59:12, soak ends at 10:04:12`, T0 + 252 * S),
    },
    { name: 'soaked exactly minSuccessSeconds: open', input: gateInput({ recorded: [soakedSince('canary-1', T0 - 300 * S)] }), want: open },
    {
      name: 'recorded healthySince for another release: the soak starts anew',
      input: gateInput({ recorded: [soakedSince('canary-1', T0 - 3_600 * S, OLD)] }),
      want: waiting('Soaking', `waiting for canary-1: Healthy at ${R} since 10:00:00, soak ends at 10:05:00`, T0 + 300 * S),
    },
    {
      name: 'recorded healthySince without its release: the soak starts anew',
      input: gateInput({ recorded: [{ cluster: 'canary-1', healthySince: at(T0 - 3_600 * S) }] }),
      want: waiting('Soaking', `waiting for canary-1: Healthy at ${R} since 10:00:00, soak ends at 10:05:00`, T0 + 300 * S),
    },
    {
      name: 'unreadable recorded healthySince: the soak starts anew',
      input: gateInput({ recorded: [{ cluster: 'canary-1', healthySince: 'yesterday', healthyRelease: R }] }),
      want: waiting('Soaking', `waiting for canary-1: Healthy at ${R} since 10:00:00, soak ends at 10:05:00`, T0 + 300 * S),
    },
    {
      name: 'minSuccessSeconds 0: open at the first Healthy look',
      input: gateInput({ strategy: { minSuccessSeconds: 0 } }),
      want: open,
    },
    {
      name: 'an instant on another day than now names its date',
      input: gateInput({ recorded: [soakedSince('canary-1', T0 - 11 * 3_600 * S)], strategy: { minSuccessSeconds: 86_400 } }),
      want: waiting('Soaking', `waiting for canary-1: Healthy at ${R} since 2026-11-27T23:00:00Z, soak ends at 23:00:00`, T0 + 13 * 3_600 * S),
    },
    // Not ready.
    {
      name: 'release mismatch: waits for the predecessor to complete this release',
      input: gateInput({ recorded: [soakedSince('canary-1')], peers: [healthy('canary-1', { statusRelease: OLD, specRelease: OLD })] }),
      want: waiting('PredecessorNotReady', `waiting for canary-1: has completed ${OLD}, not ${R} (rendered with ${OLD}, phase Healthy)`),
    },
    {
      name: 'predecessor rolling out the release: waits',
      input: gateInput({ peers: [healthy('canary-1', { statusRelease: OLD, phase: 'Progressing' })] }),
      want: waiting('PredecessorNotReady', `waiting for canary-1: has completed ${OLD}, not ${R} (rendered with ${R}, phase Progressing)`),
    },
    {
      name: 'predecessor at the release but Paused: waits',
      input: gateInput({ peers: [healthy('canary-1', { phase: 'Paused' })] }),
      want: waiting('PredecessorNotReady', `waiting for canary-1: Paused at ${R}`),
    },
    {
      name: 'status behind the spec (observedGeneration < generation): waits',
      input: gateInput({ recorded: [soakedSince('canary-1')], peers: [healthy('canary-1', { generation: 4 })] }),
      want: waiting('PredecessorNotReady', 'waiting for canary-1: status describes generation 3, spec is generation 4'),
    },
    {
      name: 'ExtendedDeployment not read: waits, with the error',
      input: gateInput({ peers: [{ cluster: 'canary-1', reachable: true, error: 'extendeddeployments "web" not found' }] }),
      want: waiting('PredecessorNotReady', 'waiting for canary-1: ExtendedDeployment not read (extendeddeployments "web" not found)'),
    },
    // Degraded and maxFailures.
    {
      name: 'predecessor Degraded, maxFailures 0: waits',
      input: gateInput({ peers: [healthy('canary-1', { phase: 'Degraded' })] }),
      want: waiting('PredecessorDegraded', 'waiting for canary-1: Degraded (1 failed, maxFailures 0)'),
    },
    {
      name: 'predecessor Degraded, maxFailures 1: open',
      input: gateInput({ strategy: { maxFailures: 1 }, peers: [healthy('canary-1', { phase: 'Degraded' })] }),
      want: open,
    },
    {
      name: 'one Degraded within maxFailures, another still soaking: soaks',
      input: gateInput({
        self: 'ap-1',
        strategy: { maxFailures: 1 },
        recorded: [soakedSince('canary-1'), soakedSince('eu-1', T0 - 100 * S)],
        peers: [healthy('us-1', { phase: 'Degraded' })],
      }),
      want: waiting('Soaking', `waiting for eu-1: Healthy at ${R} since 09:58:20, soak ends at 10:03:20`, T0 + 200 * S),
    },
    // Unreachable.
    {
      name: 'unreachable with Wait: waits, no instant to look again',
      input: gateInput({ peers: [unreachable('canary-1')] }),
      want: waiting('PredecessorUnreachable', 'waiting for canary-1: unreachable since 10:00:00 (dial tcp 10.0.0.1:6443: i/o timeout), onUnreachable is Wait'),
    },
    {
      name: 'unreachable with Wait and maxFailures 1: still waits, for good',
      input: gateInput({
        strategy: { maxFailures: 1 },
        recorded: [{ cluster: 'canary-1', unreachableSince: at(T0 - 86_400 * S) }],
        peers: [unreachable('canary-1')],
      }),
      want: waiting(
        'PredecessorUnreachable',
        'waiting for canary-1: unreachable since 2026-11-27T10:00:00Z (dial tcp 10.0.0.1:6443: i/o timeout), onUnreachable is Wait',
      ),
    },
    {
      name: 'unreachable with Proceed, before afterSeconds: waits until they pass',
      input: gateInput({
        strategy: { maxFailures: 1, onUnreachable: { action: 'Proceed', afterSeconds: 600 } },
        recorded: [{ cluster: 'canary-1', unreachableSince: at(T0 - 300 * S) }],
        peers: [unreachable('canary-1')],
      }),
      want: waiting(
        'PredecessorUnreachable',
        'waiting for canary-1: unreachable since 09:55:00 (dial tcp 10.0.0.1:6443: i/o timeout), counts as a failure at 10:05:00',
        T0 + 300 * S,
      ),
    },
    {
      name: 'unreachable with Proceed for exactly afterSeconds, maxFailures 1: open',
      input: gateInput({
        strategy: { maxFailures: 1, onUnreachable: { action: 'Proceed', afterSeconds: 600 } },
        recorded: [{ cluster: 'canary-1', unreachableSince: at(T0 - 600 * S) }],
        peers: [unreachable('canary-1')],
      }),
      want: open,
    },
    {
      name: 'unreachable with Proceed past afterSeconds, maxFailures 0: waits, counted as a failure',
      input: gateInput({
        strategy: { onUnreachable: { action: 'Proceed', afterSeconds: 600 } },
        recorded: [{ cluster: 'canary-1', unreachableSince: at(T0 - 900 * S) }],
        peers: [unreachable('canary-1', 'connection refused')],
      }),
      want: waiting(
        'PredecessorUnreachable',
        'waiting for canary-1: unreachable since 09:45:00 (connection refused), counted as a failure (1 failed, maxFailures 0)',
      ),
    },
    {
      name: 'a member the caller observed nothing of counts as unreachable',
      input: { ...gateInput({}), peers: [] },
      want: waiting('PredecessorUnreachable', 'waiting for canary-1: unreachable since 10:00:00 (not observed), onUnreachable is Wait'),
    },
    // Several predecessors.
    {
      name: 'Degraded and unreachable over maxFailures 1: Degraded wins, both named in members order',
      input: gateInput({
        self: 'ap-1',
        strategy: { maxFailures: 1, onUnreachable: { action: 'Proceed', afterSeconds: 60 } },
        recorded: [soakedSince('eu-1'), { cluster: 'us-1', unreachableSince: at(T0 - 120 * S) }],
        peers: [healthy('canary-1', { phase: 'Degraded' }), unreachable('us-1', 'no route to host')],
      }),
      want: waiting(
        'PredecessorDegraded',
        'waiting for canary-1: Degraded; us-1: unreachable since 09:58:00 (no route to host), counted as a failure (2 failed, maxFailures 1)',
      ),
    },
    {
      name: 'unreachable before not ready before soaking; the earliest instant of any of them',
      input: gateInput({
        self: 'ap-1',
        strategy: { maxFailures: 1, onUnreachable: { action: 'Proceed', afterSeconds: 600 } },
        recorded: [soakedSince('canary-1', T0 - 60 * S), { cluster: 'us-1', unreachableSince: at(T0 - 400 * S) }],
        peers: [healthy('eu-1', { phase: 'Progressing' }), unreachable('us-1', 'EOF')],
      }),
      want: waiting(
        'PredecessorUnreachable',
        `waiting for canary-1: Healthy at ${R} since 09:59:00, soak ends at 10:04:00; eu-1: Progressing at ${R}; us-1: unreachable since 09:53:20 (EOF), counts as a failure at 10:03:20`,
        T0 + 200 * S,
      ),
    },
    {
      name: 'two soaking: the earlier soak end is the instant',
      input: gateInput({ self: 'ap-1', recorded: [soakedSince('canary-1'), soakedSince('eu-1', T0 - 250 * S), soakedSince('us-1', T0 - 200 * S)] }),
      want: waiting(
        'Soaking',
        `waiting for eu-1: Healthy at ${R} since 09:55:50, soak ends at 10:00:50; us-1: Healthy at ${R} since 09:56:40, soak ends at 10:01:40`,
        T0 + 50 * S,
      ),
    },
    // Approval.
    {
      name: 'wave listed in approveWaves, everything else met: waits for the approval',
      input: gateInput({ strategy: { approveWaves: [1] }, recorded: [soakedSince('canary-1')] }),
      want: waiting('WaitingForApproval', `wave 1 waits for an approval of release ${R}`),
    },
    {
      name: 'wave listed and approved: open',
      input: gateInput({ strategy: { approveWaves: [1] }, recorded: [soakedSince('canary-1')], approved: true }),
      want: open,
    },
    {
      name: 'wave listed, still soaking: the soak first, the approval after',
      input: gateInput({ strategy: { approveWaves: [1] }, approved: true }),
      want: waiting('Soaking', `waiting for canary-1: Healthy at ${R} since 10:00:00, soak ends at 10:05:00`, T0 + 300 * S),
    },
    { name: 'another wave listed: no approval needed', input: gateInput({ strategy: { approveWaves: [2] }, recorded: [soakedSince('canary-1')] }), want: open },
    {
      name: 'the first wave listed: an approval asked for is never skipped',
      input: gateInput({ self: 'canary-1', strategy: { approveWaves: [0] } }),
      want: waiting('WaitingForApproval', `wave 0 waits for an approval of release ${R}`),
    },
  ];

  it.each(rows)('$name', ({ input, want }) => {
    expect(fleetGate(input).decision).toEqual(want);
  });
});

describe('fleetGate: record', () => {
  const rows: readonly { name: string; input: FleetGateInput; want: FleetPeerRecord[] }[] = [
    { name: 'wave 0 records nothing', input: gateInput({ self: 'canary-1' }), want: [] },
    {
      name: 'first Healthy look: healthySince now, with the release',
      input: gateInput({}),
      want: [{ cluster: 'canary-1', healthySince: at(T0), healthyRelease: R }],
    },
    {
      name: 'continuously Healthy: the recorded string is kept as it is',
      input: gateInput({ recorded: [{ cluster: 'canary-1', healthySince: '2026-11-28T09:00:00Z', healthyRelease: R }] }),
      want: [{ cluster: 'canary-1', healthySince: '2026-11-28T09:00:00Z', healthyRelease: R }],
    },
    {
      name: 'Healthy at a release this cluster has not synced: recorded for that release',
      input: gateInput({ peers: [healthy('canary-1', { statusRelease: OLD })] }),
      want: [{ cluster: 'canary-1', healthySince: at(T0), healthyRelease: OLD }],
    },
    {
      name: 'Healthy at another release than recorded: starts anew',
      input: gateInput({ recorded: [soakedSince('canary-1', T0 - 60 * S, OLD)] }),
      want: [{ cluster: 'canary-1', healthySince: at(T0), healthyRelease: R }],
    },
    {
      name: 'Degraded: cleared',
      input: gateInput({ recorded: [soakedSince('canary-1')], peers: [healthy('canary-1', { phase: 'Degraded' })] }),
      want: [{ cluster: 'canary-1' }],
    },
    {
      name: 'status behind its spec: cleared',
      input: gateInput({ recorded: [soakedSince('canary-1')], peers: [healthy('canary-1', { observedGeneration: 2 })] }),
      want: [{ cluster: 'canary-1' }],
    },
    {
      name: 'unreachable: unreachableSince now, healthySince cleared (an unobserved stretch is not a healthy one)',
      input: gateInput({ recorded: [soakedSince('canary-1')], peers: [unreachable('canary-1')] }),
      want: [{ cluster: 'canary-1', unreachableSince: at(T0) }],
    },
    {
      name: 'still unreachable: unreachableSince kept',
      input: gateInput({ recorded: [{ cluster: 'canary-1', unreachableSince: '2026-11-28T09:30:00Z' }], peers: [unreachable('canary-1')] }),
      want: [{ cluster: 'canary-1', unreachableSince: '2026-11-28T09:30:00Z' }],
    },
    {
      name: 'reachable again: unreachableSince cleared, the soak starts',
      input: gateInput({ recorded: [{ cluster: 'canary-1', unreachableSince: '2026-11-28T09:30:00Z' }] }),
      want: [{ cluster: 'canary-1', healthySince: at(T0), healthyRelease: R }],
    },
    {
      name: 'one entry per earlier-wave member, in members order; recorded entries of others dropped',
      input: gateInput({ self: 'ap-1', recorded: [soakedSince('us-1'), soakedSince('gone-1')], peers: [unreachable('eu-1')] }),
      want: [
        { cluster: 'canary-1', healthySince: at(T0), healthyRelease: R },
        { cluster: 'eu-1', unreachableSince: at(T0) },
        { cluster: 'us-1', healthySince: at(T0 - 3_600 * S), healthyRelease: R },
      ],
    },
  ];

  it.each(rows)('$name', ({ input, want }) => {
    expect(fleetGate(input).record).toEqual(want);
  });
});

describe('fleetGate: over time', () => {
  /** Looks at `now` with what the previous look recorded, as the agent does (it writes the record before acting). */
  const look = (recorded: FleetPeerRecord[] | undefined, now: number, canary: PeerObservation, strategy: Partial<FleetStrategyView> = {}) => {
    const result = fleetGate(gateInput({ recorded, now, peers: [canary], strategy }));
    return { decision: result.decision, recorded: [...result.record] };
  };

  it('restart: the same record and instant give the same decision', () => {
    const first = look(undefined, T0, healthy('canary-1'));
    const later = look(first.recorded, T0 + 120 * S, healthy('canary-1'));
    // A new agent reads the record back from the status: nothing else survives.
    const restarted = look(JSON.parse(JSON.stringify(first.recorded)) as FleetPeerRecord[], T0 + 120 * S, healthy('canary-1'));
    expect(restarted).toEqual(later);
    expect(later.decision).toEqual(waiting('Soaking', `waiting for canary-1: Healthy at ${R} since 10:00:00, soak ends at 10:05:00`, T0 + 300 * S));
    expect(look(later.recorded, T0 + 300 * S, healthy('canary-1')).decision).toEqual(open);
  });

  it('flapping Healthy → Degraded → Healthy restarts the soak', () => {
    const a = look(undefined, T0, healthy('canary-1'));
    const b = look(a.recorded, T0 + 200 * S, healthy('canary-1', { phase: 'Degraded' }));
    expect(b.decision).toMatchObject({ reason: 'PredecessorDegraded' });
    const c = look(b.recorded, T0 + 260 * S, healthy('canary-1'));
    expect(c.decision).toEqual(waiting('Soaking', `waiting for canary-1: Healthy at ${R} since 10:04:20, soak ends at 10:09:20`, T0 + 560 * S));
    expect(look(c.recorded, T0 + 300 * S, healthy('canary-1')).decision).toMatchObject({ reason: 'Soaking' });
    expect(look(c.recorded, T0 + 560 * S, healthy('canary-1')).decision).toEqual(open);
  });

  it('the soak counts from the first look at the peer Healthy at the release, even before this cluster synced it', () => {
    // eu-1 still renders OLD while canary-1 already completed R: recorded for R, the gate of OLD waits on it.
    const before = fleetGate({ ...gateInput({ now: T0 }), fleet: { cluster: 'eu-1', wave: 1, release: OLD, members: MEMBERS } });
    expect(before.decision).toMatchObject({ state: 'Waiting', reason: 'PredecessorNotReady' });
    // eu-1 syncs R 4 minutes later: one minute of soak is left, not five.
    expect(look([...before.record], T0 + 240 * S, healthy('canary-1')).decision).toEqual(
      waiting('Soaking', `waiting for canary-1: Healthy at ${R} since 10:00:00, soak ends at 10:05:00`, T0 + 300 * S),
    );
  });

  it('a release that changes between two looks, the peer Healthy at each: the soak starts anew', () => {
    const a = look(undefined, T0, healthy('canary-1', { statusRelease: OLD }));
    const b = look(a.recorded, T0 + 600 * S, healthy('canary-1'));
    expect(b.decision).toEqual(waiting('Soaking', `waiting for canary-1: Healthy at ${R} since 10:10:00, soak ends at 10:15:00`, T0 + 900 * S));
  });

  it('unreachable with Proceed: counts as a failure afterSeconds after the first failed look, and is forgotten once read again', () => {
    const proceed = { maxFailures: 1, onUnreachable: { action: 'Proceed' as const, afterSeconds: 600 } };
    const a = look(undefined, T0, unreachable('canary-1'), proceed);
    expect(a.decision).toMatchObject({ reason: 'PredecessorUnreachable', requeueAt: T0 + 600 * S });
    expect(look(a.recorded, T0 + 599 * S, unreachable('canary-1'), proceed).decision).toMatchObject({ reason: 'PredecessorUnreachable' });
    expect(look(a.recorded, T0 + 600 * S, unreachable('canary-1'), proceed).decision).toEqual(open);
    const back = look(a.recorded, T0 + 700 * S, healthy('canary-1'), proceed);
    expect(back.recorded).toEqual([{ cluster: 'canary-1', healthySince: at(T0 + 700 * S), healthyRelease: R }]);
    expect(look(back.recorded, T0 + 800 * S, unreachable('canary-1'), proceed).decision).toMatchObject({ requeueAt: T0 + 1_400 * S });
  });

  it('is deterministic: the same input gives the same answer', () => {
    const input = gateInput({ self: 'ap-1', peers: [unreachable('us-1'), healthy('eu-1', { phase: 'Degraded' })] });
    expect(fleetGate(input)).toEqual(fleetGate(structuredClone(input)));
  });
});
