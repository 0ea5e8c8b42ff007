import {
  clockTime,
  formatInstant,
  observationOf,
  parseInstant,
  type FleetPeerRecord,
  type FleetSpecView,
  type FleetStatusView,
  type FleetStrategyView,
  type PeerEd,
  type PeerObservation,
} from './peer-view.js';

/** Why a fleet member's rollout toward a new release waits. */
export type FleetGateReason = 'PredecessorNotReady' | 'PredecessorDegraded' | 'PredecessorUnreachable' | 'Soaking' | 'WaitingForApproval';

/** The gate's answer: open, or waiting with a reason, a message naming the clusters, and when to look again. */
export type FleetGateDecision =
  | { readonly state: 'Open' }
  | {
      readonly state: 'Waiting';
      readonly reason: FleetGateReason;
      /** Names every cluster it waits for and what is missing; absolute instants only, so it stays put between looks. */
      readonly message: string;
      /** The instant (ms) the answer can change by time alone: a soak ending, an unreachable peer counting as a failure. */
      readonly requeueAt?: number;
    };

/** Everything the fleet gate reads. */
export interface FleetGateInput {
  readonly fleet: FleetSpecView;
  readonly strategy: Pick<FleetStrategyView, 'minSuccessSeconds' | 'maxFailures' | 'onUnreachable' | 'approveWaves'>;
  /** `status.fleet` as recorded; undefined before the first record. */
  readonly status: FleetStatusView | undefined;
  /** What the agent observed of the other members just now; a member missing here counts as unreachable. */
  readonly peers: readonly PeerObservation[];
  /** An approval covers this wave for `fleet.release` (read by the caller). */
  readonly approved: boolean;
  readonly now: number;
}

/** The decision, and the `status.fleet.peers` entries of the earlier waves' members to write before acting on it. */
export interface FleetGateResult {
  readonly decision: FleetGateDecision;
  /** One entry per member of an earlier wave, in members order: `healthySince`/`healthyRelease` and `unreachableSince` only. */
  readonly record: readonly FleetPeerRecord[];
}

/** A predecessor as the gate sees it now. */
type Standing =
  | { readonly kind: 'soaked' }
  | { readonly kind: 'soaking'; readonly since: number; readonly end: number }
  | { readonly kind: 'notReady'; readonly why: string }
  | { readonly kind: 'degraded' }
  | { readonly kind: 'unreachable'; readonly since: number; readonly error: string | undefined; readonly countsAt: number | undefined };

/**
 * The release a peer is Healthy at, with a status that describes its current spec; undefined when it is not. Whatever
 * the release: a soak then counts from the first look at the peer Healthy at a release, even one this cluster has not
 * synced yet, and not from the first look of this cluster's gate.
 */
function healthyRelease(ed: PeerEd | undefined): string | undefined {
  if (ed === undefined || ed.phase !== 'Healthy' || ed.generation === undefined || ed.observedGeneration !== ed.generation) return undefined;
  return ed.statusRelease;
}

/** What keeps a reachable predecessor that is neither Healthy at the release nor Degraded from counting. */
function notReadyWhy(obs: PeerObservation, release: string): string {
  const ed = obs.ed;
  if (ed === undefined) return `ExtendedDeployment not read${obs.error === undefined ? '' : ` (${obs.error})`}`;
  if (ed.statusRelease !== release) {
    return `has completed ${ed.statusRelease ?? 'no release'}, not ${release} (rendered with ${ed.specRelease ?? 'unknown'}, phase ${ed.phase ?? 'unknown'})`;
  }
  if (ed.phase !== 'Healthy') return `${ed.phase ?? 'no phase'} at ${release}`;
  return `status describes generation ${ed.observedGeneration ?? 'none'}, spec is generation ${ed.generation ?? 'unknown'}`;
}

/**
 * The fleet gate of one member: whether its rollout toward `fleet.release` may start (the caller applies it to the
 * first group of a template change; count-only changes apply at once).
 *
 * A member with no earlier wave is open. Otherwise every member of an earlier wave must show `status.fleet.release`
 * equal to this release, phase Healthy and `observedGeneration == generation`, continuously for `minSuccessSeconds`
 * from this agent's first such observation. That observation is the returned record (`healthySince`, written before
 * acting and passed back in `status` at the next look), so a restarted agent keeps the soak, and only this agent's
 * clock measures it, so clock skew between clusters is irrelevant. The record follows the release the peer is Healthy
 * at, even one this cluster has not synced yet, so the soak counts from the peer's first look Healthy at the release,
 * not from the first evaluation of this gate. It is cleared as soon as the peer is seen otherwise (unreachable
 * included: an unobserved stretch is not a healthy one) or at another release.
 *
 * `maxFailures` earlier-wave members may instead be Degraded, or unreachable for `onUnreachable.afterSeconds` when the
 * action is Proceed (from the recorded `unreachableSince`); with Wait an unreachable predecessor always blocks. A wave
 * listed in `approveWaves` (the first one included: an approval asked for is never skipped) also needs `approved`,
 * asked only once everything else is met.
 *
 * Reasons in order of precedence: PredecessorDegraded or PredecessorUnreachable (more failures than allowed),
 * PredecessorUnreachable (not yet countable), PredecessorNotReady, Soaking, WaitingForApproval. The message names every
 * blocking member in members order.
 */
export function fleetGate(input: FleetGateInput): FleetGateResult {
  const { fleet, strategy, now } = input;
  const recorded = new Map((input.status?.peers ?? []).map((p) => [p.cluster, p]));
  const predecessors = fleet.members.filter((m) => m.wave < fleet.wave && m.cluster !== fleet.cluster);
  const record: FleetPeerRecord[] = [];
  const standings: { readonly cluster: string; readonly standing: Standing }[] = [];

  for (const { cluster } of predecessors) {
    const obs = observationOf(input.peers, cluster);
    const rec = recorded.get(cluster);
    if (!obs.reachable) {
      const kept = parseInstant(rec?.unreachableSince);
      const since = kept ?? now;
      record.push({ cluster, unreachableSince: kept === undefined ? formatInstant(now) : rec?.unreachableSince });
      const countsAt = strategy.onUnreachable.action === 'Proceed' ? since + strategy.onUnreachable.afterSeconds * 1000 : undefined;
      standings.push({ cluster, standing: { kind: 'unreachable', since, error: obs.error, countsAt } });
      continue;
    }
    // The soak counts from the first look that saw the peer Healthy at its release; a record for another one starts anew.
    const healthy = healthyRelease(obs.ed);
    const kept = healthy !== undefined && rec?.healthyRelease === healthy ? parseInstant(rec.healthySince) : undefined;
    const since = kept ?? now;
    record.push(
      healthy === undefined ? { cluster } : { cluster, healthySince: kept === undefined ? formatInstant(now) : rec?.healthySince, healthyRelease: healthy },
    );
    const end = since + strategy.minSuccessSeconds * 1000;
    const standing: Standing =
      healthy === fleet.release
        ? end <= now
          ? { kind: 'soaked' }
          : { kind: 'soaking', since, end }
        : obs.ed?.phase === 'Degraded'
          ? { kind: 'degraded' }
          : { kind: 'notReady', why: notReadyWhy(obs, fleet.release) };
    standings.push({ cluster, standing });
  }

  return { decision: decide(input, standings), record };
}

/** The decision from every predecessor's standing: failures against the budget first, then what blocks, then the approval. */
function decide(input: FleetGateInput, standings: readonly { readonly cluster: string; readonly standing: Standing }[]): FleetGateDecision {
  const { fleet, strategy, now } = input;
  const counted = (s: Standing) => s.kind === 'degraded' || (s.kind === 'unreachable' && s.countsAt !== undefined && s.countsAt <= now);
  const failures = standings.filter((s) => counted(s.standing));
  const overBudget = failures.length > strategy.maxFailures;
  const blocking = standings.filter(({ standing: s }) => s.kind !== 'soaked' && (overBudget || !counted(s)));
  const has = (kind: Standing['kind']) => blocking.some((b) => b.standing.kind === kind);

  const instants = standings.flatMap(({ standing: s }) =>
    s.kind === 'soaking' ? [s.end] : s.kind === 'unreachable' && s.countsAt !== undefined ? [s.countsAt] : [],
  );
  const next = instants.filter((t) => t > now).reduce((a, b) => Math.min(a, b), Number.POSITIVE_INFINITY);

  if (blocking.length > 0) {
    const reason: FleetGateReason = overBudget
      ? failures.some((f) => f.standing.kind === 'degraded')
        ? 'PredecessorDegraded'
        : 'PredecessorUnreachable'
      : has('unreachable')
        ? 'PredecessorUnreachable'
        : has('notReady')
          ? 'PredecessorNotReady'
          : 'Soaking';
    const parts = blocking.map(({ cluster, standing }) => `${cluster}: ${describe(standing, input)}`);
    const budget = overBudget ? ` (${failures.length} failed, maxFailures ${strategy.maxFailures})` : '';
    return {
      state: 'Waiting',
      reason,
      message: `waiting for ${parts.join('; ')}${budget}`,
      ...(next !== Number.POSITIVE_INFINITY && { requeueAt: next }),
    };
  }
  if ((strategy.approveWaves ?? []).includes(fleet.wave) && !input.approved) {
    return { state: 'Waiting', reason: 'WaitingForApproval', message: `wave ${fleet.wave} waits for an approval of release ${fleet.release}` };
  }
  return { state: 'Open' };
}

/** What a blocking predecessor lacks, with absolute instants only (see FleetGateDecision.message). */
function describe(s: Standing, input: FleetGateInput): string {
  const { now, fleet } = input;
  switch (s.kind) {
    case 'soaked':
      return `Healthy at ${fleet.release}`;
    case 'soaking':
      return `Healthy at ${fleet.release} since ${clockTime(s.since, now)}, soak ends at ${clockTime(s.end, now)}`;
    case 'notReady':
      return s.why;
    case 'degraded':
      return 'Degraded';
    case 'unreachable': {
      const base = `unreachable since ${clockTime(s.since, now)}${s.error === undefined ? '' : ` (${s.error})`}`;
      if (s.countsAt === undefined) return `${base}, onUnreachable is Wait`;
      return s.countsAt <= now ? `${base}, counted as a failure` : `${base}, counts as a failure at ${clockTime(s.countsAt, now)}`;
    }
  }
}
