import { formatInstant, observationOf, type FleetHandoverRecord, type FleetSpecView, type FleetStatusView, type PeerObservation } from './peer-view.js';

/** Everything the handover reads. */
export interface FleetHandoverInput {
  readonly fleet: FleetSpecView;
  /** This member's share as rendered (its spec.replicas). */
  readonly share: number;
  /** `status.fleet` as recorded: `share` and `handover`. */
  readonly status: FleetStatusView | undefined;
  /** What the agent observed of the other members just now; a member missing here counts as unreachable. */
  readonly peers: readonly PeerObservation[];
  readonly now: number;
}

/** The handover decision of this member. */
export interface FleetHandoverResult {
  /** `status.fleet.share` to write: the share the next look distributes over the regions (observe). */
  readonly share: number;
  /** `status.fleet.handover` to write while this member keeps more than its rendered share; undefined otherwise. */
  readonly handover: FleetHandoverRecord | undefined;
  /** The hold ended in this look: this member goes from `from` replicas to its share (for the Event). */
  readonly released?: { readonly from: number; readonly to: number };
}

/**
 * Make-before-break when Git moves replicas between members: a member whose rendered share drops below the share it
 * runs (`status.fleet.share`) keeps running the larger one until every other member of the release shows its own
 * share available, so replicas leave a cluster only once the fleet already runs the new split elsewhere. Growth is
 * never held: it is the "make". A member that cannot be read, has not synced this release, or shows a status of an
 * older generation holds the handover: nothing tells that it made up for the change.
 *
 * The recorded share is written before anything acts on it, like failover additions, so the first look at a smaller
 * share distributes the recorded one (observe), and a restarted agent holds exactly as its predecessor. A member that
 * records no share yet (new, or an agent before this field) starts from its rendered share: there is nothing to hand
 * over.
 */
export function fleetHandover(input: FleetHandoverInput): FleetHandoverResult {
  const { fleet, share, now } = input;
  const recorded = input.status?.share;
  if (recorded === undefined || share >= recorded) return { share, handover: undefined };
  const missing = fleet.members
    .filter((m) => m.cluster !== fleet.cluster)
    .flatMap((m) => shortOf(observationOf(input.peers, m.cluster), m.replicas, fleet.release));
  if (missing.length === 0) return { share, handover: undefined, released: { from: recorded, to: share } };
  const since = input.status?.handover?.since ?? formatInstant(now);
  return {
    share: recorded,
    handover: {
      replicas: share,
      since,
      waitingFor: missing.map((m) => m.cluster),
      message: `keeps ${recorded} replicas (its share is now ${share}) until every other member runs its share at release ${fleet.release}: ${missing.map((m) => `${m.cluster} ${m.why}`).join('; ')}`,
    },
  };
}

/** What a member lacks to count as having made up for the change: nothing (an empty list) once it has. */
function shortOf(obs: PeerObservation, replicas: number, release: string): { cluster: string; why: string }[] {
  const { cluster } = obs;
  if (!obs.reachable) return [{ cluster, why: `cannot be read${obs.error === undefined ? '' : ` (${obs.error})`}` }];
  const ed = obs.ed;
  if (ed === undefined) return [{ cluster, why: obs.error ?? 'not read yet' }];
  if (ed.specRelease !== release) return [{ cluster, why: `runs release ${ed.specRelease ?? '(none)'}, not yet this one` }];
  if (ed.generation === undefined || ed.observedGeneration !== ed.generation) return [{ cluster, why: 'its agent has not observed the release yet' }];
  const available = ed.regions.reduce((sum, r) => sum + (r.available ?? 0), 0);
  return available >= replicas ? [] : [{ cluster, why: `${available}/${replicas} available` }];
}
