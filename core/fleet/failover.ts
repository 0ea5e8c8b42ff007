import { apportionByRoom } from '../moves/apportion.js';
import {
  clockTime,
  formatInstant,
  observationOf,
  parseInstant,
  type FleetAdditionRecord,
  type FleetMemberView,
  type FleetPeerRecord,
  type FleetSpecView,
  type FleetStatusView,
  type FleetStrategyView,
  type PeerObservation,
} from './peer-view.js';

/** Everything the failover reads. */
export interface FleetAdditionsInput {
  readonly fleet: FleetSpecView;
  readonly strategy: Pick<FleetStrategyView, 'failover'>;
  /** `status.fleet` as recorded: `peers[].lostSince` and `additions`. */
  readonly status: FleetStatusView | undefined;
  /** What the agent observed of the other members just now; a member missing here counts as unreachable. */
  readonly peers: readonly PeerObservation[];
  readonly now: number;
}

/** One other member as the failover sees it. */
export interface MemberLoss {
  readonly cluster: string;
  /** It counts as lost: this cluster runs its part of the member's replicas. */
  readonly lost: boolean;
  /** Start (ms) of the current run of observations that make it a loss candidate; undefined when none holds now. */
  readonly lostSince: number | undefined;
  /** What makes it a candidate now (unreachable, stale Lease, every region Failed), or why it is still counted; for Events. */
  readonly why: string | undefined;
}

/** The failover decision of this cluster. */
export interface FleetAdditionsResult {
  /** Every other member, in members order. */
  readonly lost: readonly MemberLoss[];
  /** `status.fleet.peers` entries to write before acting: `lostSince` only (merge with the gate's, mergePeerRecords). */
  readonly record: readonly FleetPeerRecord[];
  /**
   * `status.fleet.additions` to write before acting: one per member counted as lost, with this cluster's part (0 when
   * the split gives it none: the entry is this agent's memory that the member counted as lost).
   */
  readonly additions: readonly FleetAdditionRecord[];
  /** Recorded additions that end now (member back and stable, removed from the fleet, or failover Off): for Events. */
  readonly removed: readonly FleetAdditionRecord[];
  /** Replicas this cluster adds over its own share: the sum of `additions`. */
  readonly added: number;
  /** The instant (ms) the answer can change by time alone: a tolerance or a stabilization ending, a Lease going stale. */
  readonly requeueAt?: number;
}

/** A survivor of the fleet and its weight in the split: its own share. */
export interface Survivor {
  readonly cluster: string;
  readonly replicas: number;
}

/**
 * Splits a lost member's `count` replicas over the survivors: largest remainder (Hamilton) in proportion to their
 * own replicas, ties by cluster name ascending, evenly when no survivor has any. Depends only on the set of survivors
 * (not their order), so every survivor that sees the same members lost computes the same split without talking, and
 * the parts sum to exactly `count`.
 */
export function failoverSplit(count: number, survivors: readonly Survivor[]): Map<string, number> {
  const sorted = [...survivors].sort((a, b) => (a.cluster < b.cluster ? -1 : a.cluster > b.cluster ? 1 : 0));
  const parts = new Map<string, number>();
  if (count <= 0 || sorted.length === 0) return parts;
  const anyWeight = sorted.some((s) => s.replicas > 0);
  const weights = sorted.map((s) => ({ name: s.cluster, room: anyWeight ? Math.max(0, s.replicas) : 1 }));
  const total = weights.reduce((a, w) => a + w.room, 0);
  // apportionByRoom caps every part at its room; Hamilton over count is exactly `whole` per unit of weight plus Hamilton
  // over the rest, which stays below every room (rest < total), so the cap never bites.
  const whole = Math.floor(count / total);
  const extra = apportionByRoom(count % total, weights);
  for (const w of weights) {
    const part = whole * w.room + (extra.get(w.name) ?? 0);
    if (part > 0) parts.set(w.name, part);
  }
  return parts;
}

/** Why a member is a loss candidate now, or undefined. */
function lossCause(obs: PeerObservation, now: number): string | undefined {
  if (!obs.reachable) return `API unreachable${obs.error === undefined ? '' : ` (${obs.error})`}`;
  // renewTime is on the peer's clock: skew beyond the Lease duration reads as stale, which the tolerance then has to absorb.
  const lease = obs.lease;
  if (lease !== undefined && lease.renewTime + lease.durationSeconds * 1000 < now) return `agent Lease not renewed since ${clockTime(lease.renewTime, now)}`;
  if (obs.ed?.allRegionsFailed === true) return 'every region Failed';
  return undefined;
}

/** Back: no cause, Healthy with a status that describes its spec, and every region's desired replicas available. */
function isBack(obs: PeerObservation): boolean {
  const ed = obs.ed;
  if (ed === undefined || ed.phase !== 'Healthy' || ed.generation === undefined || ed.observedGeneration !== ed.generation) return false;
  return ed.regions.every((r) => (r.available ?? 0) >= (r.desired ?? 0));
}

/**
 * Failover of one member (`failover.mode: Additive`): which other members count as lost, and the replicas this
 * cluster adds for each.
 *
 * A member becomes lost when, continuously for `toleranceSeconds` from the recorded `lostSince` (this agent's first
 * observation of the run, on its own clock), its API is unreachable, or its agent Lease was read and is stale
 * (`renewTime + leaseDuration < now`), or every region it uses is Failed. A run that ends before the tolerance was a
 * false alarm and leaves nothing behind. Once lost, the member stays lost (its addition recorded, even at 0 replicas)
 * until it has been back (reachable, Healthy, every region's replicas available) for `stabilizationSeconds` from the
 * addition's `returnedSince`; falling back restarts that wait.
 *
 * Every lost member's replicas are split over the survivors (every member not counted as lost, this one included) by
 * `failoverSplit`, so survivors that agree on who is lost add exactly the lost replicas between them, and a false
 * alarm costs at most the lost member's replicas fleet-wide. This cluster returns only its own part. With mode Off
 * nothing is added and every recorded addition is returned for removal.
 */
export function fleetAdditions(input: FleetAdditionsInput): FleetAdditionsResult {
  const { fleet, now } = input;
  const { failover } = input.strategy;
  const recordedAdditions = input.status?.additions ?? [];
  const others = fleet.members.filter((m) => m.cluster !== fleet.cluster);
  if (failover.mode === 'Off') {
    return {
      lost: others.map((m) => ({ cluster: m.cluster, lost: false, lostSince: undefined, why: undefined })),
      record: [],
      additions: [],
      removed: recordedAdditions,
      added: 0,
    };
  }

  const recordedPeers = new Map((input.status?.peers ?? []).map((p) => [p.cluster, p]));
  const additionOf = new Map(recordedAdditions.map((a) => [a.cluster, a]));
  const toleranceMs = failover.toleranceSeconds * 1000;
  const stabilizationMs = failover.stabilizationSeconds * 1000;
  const instants: number[] = [];
  const lost: MemberLoss[] = [];
  const record: FleetPeerRecord[] = [];
  /** Lost members with their addition's bookkeeping so far (replicas filled in by the split below). */
  const held: { readonly member: FleetMemberView; readonly since: string; readonly returnedSince: string | undefined }[] = [];

  for (const member of others) {
    const { cluster } = member;
    const obs = observationOf(input.peers, cluster);
    const addition = additionOf.get(cluster);
    const cause = lossCause(obs, now);
    if (obs.reachable && obs.lease !== undefined && cause === undefined) {
      // Nothing announces a Lease going stale: look again the moment it would be.
      instants.push(obs.lease.renewTime + obs.lease.durationSeconds * 1000 + 1);
    }
    if (cause !== undefined) {
      const recordedSince = recordedPeers.get(cluster)?.lostSince;
      const kept = parseInstant(recordedSince);
      const since = kept ?? now;
      record.push({ cluster, lostSince: kept === undefined ? formatInstant(now) : recordedSince });
      // Already counted (its addition recorded): a new run needs no second tolerance, and any return starts over.
      const isLost = addition !== undefined || since + toleranceMs <= now;
      if (!isLost) instants.push(since + toleranceMs);
      if (isLost) held.push({ member, since: addition?.since ?? formatInstant(now), returnedSince: undefined });
      lost.push({ cluster, lost: isLost, lostSince: since, why: cause });
      continue;
    }
    record.push({ cluster });
    if (addition === undefined) {
      // Never counted, or a run that ended before its tolerance: a false alarm, forgotten.
      lost.push({ cluster, lost: false, lostSince: undefined, why: undefined });
      continue;
    }
    if (!isBack(obs)) {
      held.push({ member, since: addition.since, returnedSince: undefined });
      lost.push({ cluster, lost: true, lostSince: undefined, why: 'reachable again, not yet Healthy with its replicas available' });
      continue;
    }
    const keptReturn = parseInstant(addition.returnedSince);
    const returned = keptReturn ?? now;
    if (returned + stabilizationMs <= now) {
      lost.push({ cluster, lost: false, lostSince: undefined, why: undefined });
      continue;
    }
    instants.push(returned + stabilizationMs);
    held.push({ member, since: addition.since, returnedSince: keptReturn === undefined ? formatInstant(now) : addition.returnedSince });
    lost.push({
      cluster,
      lost: true,
      lostSince: undefined,
      why: `back since ${clockTime(returned, now)}, stable at ${clockTime(returned + stabilizationMs, now)}`,
    });
  }

  const lostNames = new Set(held.map((h) => h.member.cluster));
  const survivors = fleet.members.filter((m) => !lostNames.has(m.cluster));
  const additions: FleetAdditionRecord[] = held.map(({ member, since, returnedSince }) => ({
    cluster: member.cluster,
    replicas: failoverSplit(member.replicas, survivors).get(fleet.cluster) ?? 0,
    since,
    ...(returnedSince !== undefined && { returnedSince }),
  }));
  const removed = recordedAdditions.filter((a) => !lostNames.has(a.cluster));
  const next = instants.filter((t) => t > now).reduce((a, b) => Math.min(a, b), Number.POSITIVE_INFINITY);
  return {
    lost,
    record,
    additions,
    removed,
    added: additions.reduce((a, b) => a + b.replicas, 0),
    ...(next !== Number.POSITIVE_INFINITY && { requeueAt: next }),
  };
}
