import type { ExtendedDeployment, ExtendedDeploymentStatus, FleetStatus } from '../api/extended-deployment.js';
import type { RolloutEvent } from '../rollout/planner.js';
import { fleetGate, type FleetGateDecision } from './gate.js';
import { fleetAdditions, type FleetAdditionsResult } from './failover.js';
import { fleetHandover, type FleetHandoverResult } from './handover.js';
import { mergePeerRecords, type FleetAdditionRecord, type PeerObservation } from './peer-view.js';
import { ED_KIND } from '../api/identity.js';
import { APPROVED_RELEASE_ANNOTATION } from '../labels.js';
import type { Problem } from '../problems.js';

/** What the agent read for one fleet member's look: the other members, and whether this release's wave is approved. */
export interface FleetObservation {
  /** Every other member as observed just now (agent/fleet-peers.ts); a member missing counts as unreachable. */
  readonly peers: readonly PeerObservation[];
  /** An approval of this member's wave for `spec.fleet.release` (the approved-release annotation). */
  readonly approved: boolean;
}

/** The fleet's part of one look at a member: whether its next rollout waits, the status.fleet to write, when to look again. */
export interface FleetLook {
  /** The first group of a rollout toward a new template waits (session.ts); undefined when the gate is open. */
  readonly wait: { readonly message: string } | undefined;
  /** status.fleet without `release`, which only the rollout's outcome sets (withFleetStatus). */
  readonly status: FleetStatus;
  readonly events: readonly RolloutEvent[];
  /** When the gate can open by time alone (a soak ending). */
  readonly wakeAt: number | undefined;
}

/** Event reasons of the fleet gate's transitions. */
export const FleetEventReason = {
  FleetGateOpened: 'FleetGateOpened',
  FleetGateWaiting: 'FleetGateWaiting',
  FleetFailoverAdded: 'FleetFailoverAdded',
  FleetFailoverReturned: 'FleetFailoverReturned',
  FleetHandoverWaiting: 'FleetHandoverWaiting',
  FleetHandoverDone: 'FleetHandoverDone',
} as const;

/**
 * The fleet gate of one member (gate.ts) as the planner applies it: undefined outside a fleet, and where nothing of the
 * fleet is observed (`edctl plan`, which simulates one cluster). The gate's record (soak starts, unreachability) goes to
 * status.fleet.peers, written before anything acts on it; a change of the gate's state or reason is an Event.
 */
export function lookAtFleet(
  ed: ExtendedDeployment,
  previous: ExtendedDeploymentStatus | undefined,
  observation: FleetObservation | undefined,
  now: number,
): FleetLook | undefined {
  const fleet = ed.spec.fleet;
  const strategy = ed.spec.strategy.fleet;
  if (fleet === undefined || strategy === undefined || observation === undefined) return undefined;
  const { decision, record } = fleetGate({ fleet, strategy, status: previous?.fleet, peers: observation.peers, approved: observation.approved, now });
  const failover = fleetAdditions({ fleet, strategy, status: previous?.fleet, peers: observation.peers, now });
  const handover =
    ed.spec.replicas === undefined ? undefined : fleetHandover({ fleet, share: ed.spec.replicas, status: previous?.fleet, peers: observation.peers, now });
  const gate = decision.state === 'Open' ? { state: 'Open' as const } : { state: 'Waiting' as const, reason: decision.reason, message: decision.message };
  const peers = mergePeerRecords(fleet.members, record, failover.record);
  const status: FleetStatus = {
    gate,
    ...(peers.length > 0 && { peers }),
    ...(failover.additions.length > 0 && { additions: [...failover.additions] }),
    ...(handover !== undefined && { share: handover.share }),
    ...(handover?.handover !== undefined && { handover: { ...handover.handover, waitingFor: [...handover.handover.waitingFor] } }),
  };
  const wakeAt = [decision.state === 'Waiting' ? decision.requeueAt : undefined, failover.requeueAt].filter((t) => t !== undefined);
  return {
    wait: decision.state === 'Waiting' ? { message: `release ${fleet.release} (wave ${fleet.wave}) ${decision.message}` } : undefined,
    status,
    events: [
      ...gateEvents(previous?.fleet?.gate, decision, fleet.release),
      ...failoverEvents(previous?.fleet?.additions ?? [], failover),
      ...handoverEvents(previous?.fleet?.handover !== undefined, handover),
    ],
    wakeAt: wakeAt.length > 0 ? Math.min(...wakeAt) : undefined,
  };
}

/** FleetFailoverAdded for a member newly counted as lost, FleetFailoverReturned for an addition that ends. */
function failoverEvents(before: readonly FleetAdditionRecord[], failover: FleetAdditionsResult): RolloutEvent[] {
  const added = failover.additions
    .filter((a) => !before.some((b) => b.cluster === a.cluster))
    .map((a): RolloutEvent => {
      const why = failover.lost.find((l) => l.cluster === a.cluster)?.why;
      return {
        type: 'Warning',
        reason: FleetEventReason.FleetFailoverAdded,
        message: `member ${a.cluster} is lost${why === undefined ? '' : ` (${why})`}: this cluster runs ${a.replicas} more replicas for it`,
      };
    });
  const returned = failover.removed.map((r): RolloutEvent => ({
    type: 'Normal',
    reason: FleetEventReason.FleetFailoverReturned,
    message: `member ${r.cluster} is back: the ${r.replicas} replicas run here for it go`,
  }));
  return [...added, ...returned];
}

/** FleetHandoverWaiting when a handover starts to hold, FleetHandoverDone when it ends with this member shrinking. */
function handoverEvents(held: boolean, handover: FleetHandoverResult | undefined): RolloutEvent[] {
  if (handover?.handover !== undefined && !held) return [{ type: 'Normal', reason: FleetEventReason.FleetHandoverWaiting, message: handover.handover.message }];
  if (handover?.released === undefined) return [];
  const { from, to } = handover.released;
  return [
    {
      type: 'Normal',
      reason: FleetEventReason.FleetHandoverDone,
      message: `every other member runs its share: this cluster goes from ${from} to its share of ${to} replicas`,
    },
  ];
}

/**
 * The replicas a fleet member distributes over its regions, as its status records them before anything acts on them:
 * its share (the rendered spec.replicas, or the larger recorded share while a handover holds: handover.ts) plus its
 * part of lost members' replicas (failover.ts). Outside a fleet, spec.replicas as written.
 */
export function fleetReplicas(
  ed: { readonly spec: { readonly fleet?: unknown; readonly replicas?: number | undefined } },
  status: ExtendedDeploymentStatus | undefined,
): number | undefined {
  const { replicas } = ed.spec;
  if (ed.spec.fleet === undefined || replicas === undefined) return replicas;
  const share = Math.max(replicas, status?.fleet?.share ?? replicas);
  return share + (status?.fleet?.additions ?? []).reduce((sum, a) => sum + Math.max(0, a.replicas), 0);
}

/** FleetGateWaiting when the gate starts waiting or waits for another reason; FleetGateOpened when it opens. */
function gateEvents(before: FleetStatus['gate'], decision: FleetGateDecision, release: string): RolloutEvent[] {
  if (decision.state === 'Open') {
    return before?.state === 'Waiting'
      ? [{ type: 'Normal', reason: FleetEventReason.FleetGateOpened, message: `the earlier waves completed release ${release}: the rollout may start` }]
      : [];
  }
  if (before?.state === 'Waiting' && before.reason === decision.reason) return [];
  return [{ type: 'Normal', reason: FleetEventReason.FleetGateWaiting, message: decision.message }];
}

/**
 * status.fleet after the rollout's own status: `release` becomes this member's spec.fleet.release once the rollout is
 * Healthy with the spec it describes (what followers wait for), and stays what it was otherwise; `regionsFailed` says
 * that every region of this member is Failed (what the others' failover reads of a member whose API still answers).
 */
export function withFleetStatus(
  ed: ExtendedDeployment,
  look: FleetLook | undefined,
  status: ExtendedDeploymentStatus,
  previous: ExtendedDeploymentStatus | undefined,
  regions: readonly { readonly failed?: boolean | undefined }[] = [],
): ExtendedDeploymentStatus {
  const fleet = ed.spec.fleet;
  if (fleet === undefined) return status;
  const release = status.phase === 'Healthy' ? fleet.release : previous?.fleet?.release;
  const { regionsFailed: _before, ...base } = look?.status ?? previous?.fleet ?? {};
  const regionsFailed = regions.length > 0 && regions.every((r) => r.failed === true);
  return { ...status, fleet: { ...base, ...(release !== undefined && { release }), ...(regionsFailed && { regionsFailed }) } };
}

/**
 * A member's ExtendedDeployment rendered for another cluster than the agent's (--cluster-name): synced to the wrong
 * cluster, acting on it would pace that cluster's share against the wrong waves. An agent without a cluster name
 * takes every member as its own (one agent per cluster).
 */
export function memberProblems(ed: ExtendedDeployment, clusterName: string | undefined): Problem[] {
  const cluster = ed.spec.fleet?.cluster;
  if (cluster === undefined || clusterName === undefined || cluster === clusterName) return [];
  const object = { kind: ED_KIND, namespace: ed.metadata.namespace, name: ed.metadata.name };
  return [
    {
      object,
      path: ['spec', 'fleet', 'cluster'],
      message: `is ${JSON.stringify(cluster)}, but this agent runs in ${JSON.stringify(clusterName)} (--cluster-name): the render of another cluster was synced here`,
    },
  ];
}

/** Whether `edctl approve` approved this release for the member's wave (its annotation names this release, no other). */
export function releaseApproved(annotations: Readonly<Record<string, string>> | undefined, release: string): boolean {
  return annotations?.[APPROVED_RELEASE_ANNOTATION] === release;
}
