import { MOVES_CONDITION, MovesReason } from '../api/conditions.js';
/**
 * The shapes the fleet's decision functions read (core/fleet/gate.ts, core/fleet/failover.ts): this cluster's part of
 * the rendered `spec.fleet`, its `spec.strategy.fleet`, what its status recorded, and what the agent observed of every
 * other member just now. Plain structural interfaces: the zod output types of the API fit them, and the functions stay
 * free of the schemas.
 */

/** One member of the fleet, as `spec.fleet.members` lists it (the same list in every member's render). */
export interface FleetMemberView {
  readonly cluster: string;
  /** The member's share of `spec.replicas`. */
  readonly replicas: number;
  readonly wave: number;
}

/** `spec.fleet` as rendered into this cluster. */
export interface FleetSpecView {
  /** This cluster: the agent's `--cluster-name`. */
  readonly cluster: string;
  readonly wave: number;
  /** The release digest, identical in every member's render. */
  readonly release: string;
  /** Every member, this cluster included, in `spec.clusters` order. */
  readonly members: readonly FleetMemberView[];
}

/** `spec.strategy.fleet` with defaults applied. */
export interface FleetStrategyView {
  readonly minSuccessSeconds: number;
  readonly maxFailures: number;
  readonly onUnreachable: { readonly action: 'Wait' | 'Proceed'; readonly afterSeconds: number };
  readonly approveWaves?: readonly number[] | undefined;
  readonly failover: { readonly mode: 'Off' | 'Additive'; readonly toleranceSeconds: number; readonly stabilizationSeconds: number };
}

/**
 * One entry of `status.fleet.peers`: what this agent recorded about another member, every instant on its own clock
 * (RFC 3339). Recorded before the agent acts on it, so a restarted agent decides exactly as before.
 */
export interface FleetPeerRecord {
  readonly cluster: string;
  /** First observation of the peer Healthy at `healthyRelease` (the soak start); absent while it is not. */
  readonly healthySince?: string | undefined;
  /**
   * The release the peer was Healthy at (its `status.fleet.release`). Without it a release that changed between two
   * looks, with the peer Healthy at each, would inherit the old release's soak.
   */
  readonly healthyRelease?: string | undefined;
  /** First failed observation of the peer's API; cleared when it answers again. */
  readonly unreachableSince?: string | undefined;
  /** Failover: first observation of the peer unreachable, with a stale Lease or every region Failed, in the current run. */
  readonly lostSince?: string | undefined;
}

/** One entry of `status.fleet.additions`: replicas this cluster runs for a member it counts as lost. */
export interface FleetAdditionRecord {
  /** The lost member. */
  readonly cluster: string;
  /** This cluster's part of the lost member's replicas (0 when the split gives it none: the entry still records the loss). */
  readonly replicas: number;
  /** When this cluster first counted the member as lost. */
  readonly since: string;
  /** Since when the lost member has been back (reachable, Healthy, its replicas available): the stabilization start. */
  readonly returnedSince?: string | undefined;
}

/** `status.fleet.handover`: this member keeps more than its rendered share until the others run theirs (handover.ts). */
export interface FleetHandoverRecord {
  /** The rendered share this member goes down to once the others made up for it. */
  readonly replicas: number;
  /** When this agent first held the handover. */
  readonly since: string;
  /** The members it waits for. */
  readonly waitingFor: readonly string[];
  /** A sentence for people: what each of them lacks. */
  readonly message: string;
}

/** `status.fleet` as recorded: the parts the decision functions read back. */
export interface FleetStatusView {
  readonly peers?: readonly FleetPeerRecord[] | undefined;
  readonly additions?: readonly FleetAdditionRecord[] | undefined;
  /** The share this member runs (observe distributes it): the rendered one, or more during a handover. */
  readonly share?: number | undefined;
  readonly handover?: FleetHandoverRecord | undefined;
}

/** A peer agent's Lease, when it could be read. */
export interface PeerLease {
  /** `spec.renewTime` (ms), on the peer's clock. */
  readonly renewTime: number;
  /** `spec.leaseDurationSeconds`. */
  readonly durationSeconds: number;
}

/** A peer's ExtendedDeployment of the same name, when it could be read. */
export interface PeerEd {
  readonly generation?: number | undefined;
  readonly observedGeneration?: number | undefined;
  /** `status.phase`. */
  readonly phase?: string | undefined;
  /** `status.fleet.release`: the release the peer's rollout has completed. */
  readonly statusRelease?: string | undefined;
  /** `spec.fleet.release`: the release the peer was rendered with (for messages). */
  readonly specRelease?: string | undefined;
  /** `status.regions` counts. */
  readonly regions: readonly { readonly desired?: number | undefined; readonly available?: number | undefined }[];
  /** Every DeployRegion the peer's ED uses is Failed in the peer's cluster (capacity gone, API alive). */
  readonly allRegionsFailed: boolean;
}

/** What this agent observed of one other member just now. */
export interface PeerObservation {
  readonly cluster: string;
  /** The peer's API answered. */
  readonly reachable: boolean;
  /** Why the API did not answer, or why the ExtendedDeployment could not be read: for messages. */
  readonly error?: string | undefined;
  /** The peer agent's Lease; undefined when it was not read. */
  readonly lease?: PeerLease | undefined;
  /** The peer's ExtendedDeployment; undefined when it was not read (or does not exist). */
  readonly ed?: PeerEd | undefined;
}

/** The observation of a member; a member the caller observed nothing of counts as unreachable. */
export function observationOf(peers: readonly PeerObservation[], cluster: string): PeerObservation {
  return peers.find((p) => p.cluster === cluster) ?? { cluster, reachable: false, error: 'not observed' };
}

/** A recorded instant in ms; undefined when absent or unreadable (a broken record restarts what it measured). */
export function parseInstant(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? undefined : ms;
}

/** An instant to record (RFC 3339, as the rest of the status). */
export function formatInstant(ms: number): string {
  return new Date(ms).toISOString();
}

/**
 * An instant for a message, in UTC: the time of day when it falls on the same day as `now`, the full date otherwise.
 * Messages name instants, not durations from now, so a waiting gate's message does not change at every look.
 */
export function clockTime(ms: number, now: number): string {
  const iso = new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
  return iso.slice(0, 10) === new Date(now).toISOString().slice(0, 10) ? iso.slice(11, 19) : iso;
}

/**
 * `status.fleet.peers` from the records of both decision functions (the gate's soak and reachability, the failover's
 * loss), one entry per member that either records, in members order.
 */
export function mergePeerRecords(members: readonly FleetMemberView[], ...records: readonly (readonly FleetPeerRecord[])[]): FleetPeerRecord[] {
  const merged: FleetPeerRecord[] = [];
  for (const { cluster } of members) {
    const parts = records.flatMap((list) => list.filter((r) => r.cluster === cluster));
    if (parts.length === 0) continue;
    const fields = parts.reduce<Record<string, string>>((acc, part) => {
      for (const [key, value] of Object.entries(part)) if (typeof value === 'string') acc[key] = value;
      return acc;
    }, {});
    merged.push({ ...fields, cluster });
  }
  return merged;
}

/**
 * What the gate and the failover read of a peer's ExtendedDeployment object (as a peer's watch caches it, unvalidated:
 * a field of the wrong type counts as absent). Every region counts as Failed when the peer's agent says so
 * (status.fleet.regionsFailed), or that no region can take its replicas (Moves condition, reason AllRegionsFailed).
 */
export function peerEdOf(object: unknown): PeerEd {
  const o = (object ?? {}) as { metadata?: { generation?: unknown }; spec?: { fleet?: { release?: unknown } }; status?: Record<string, unknown> };
  const status = o.status ?? {};
  const fleet = (status['fleet'] ?? {}) as { release?: unknown; regionsFailed?: unknown };
  const text = (v: unknown) => (typeof v === 'string' ? v : undefined);
  const int = (v: unknown) => (typeof v === 'number' && Number.isInteger(v) ? v : undefined);
  const regions = Array.isArray(status['regions']) ? (status['regions'] as { desired?: unknown; available?: unknown }[]) : [];
  const conditions = Array.isArray(status['conditions']) ? (status['conditions'] as { type?: unknown; reason?: unknown }[]) : [];
  return {
    generation: int(o.metadata?.generation),
    observedGeneration: int(status['observedGeneration']),
    phase: text(status['phase']),
    statusRelease: text(fleet.release),
    specRelease: text(o.spec?.fleet?.release),
    regions: regions.map((r) => ({ desired: int(r?.desired), available: int(r?.available) })),
    allRegionsFailed: fleet.regionsFailed === true || conditions.some((c) => c?.type === MOVES_CONDITION && c.reason === MovesReason.AllRegionsFailed),
  };
}
