import { OVERLAP_CONDITION, OverlapReason } from '../api/conditions.js';
import type { DeployRegion } from '../api/deploy-region.js';
import { setCondition, type ConditionUpdate } from '../kube/conditions.js';
import type { RegionHealth } from './region-health.js';

type RegionStatus = NonNullable<DeployRegion['status']>;

/** What a DeployRegion's status is built from. */
export interface RegionStatusInput {
  readonly health: RegionHealth;
  /** This region's nodes that also match other regions (see assignNodes). */
  readonly overlaps: readonly { readonly node: string; readonly regions: readonly string[] }[];
  readonly generation: number;
  readonly previous: RegionStatus | undefined;
  readonly now: number;
}

/** An Event about a DeployRegion. */
export interface RegionEvent {
  readonly type: 'Normal' | 'Warning';
  readonly reason: string;
  readonly message: string;
}

/**
 * A DeployRegion's status (phase and node counts under the default failure policy, and whether nodes overlap other
 * regions) and the Events of its transitions: failed, recovered, overlapping nodes found. ExtendedDeployments judge
 * the region by their own `faultMove` policy from the same nodes.
 */
export function regionStatus(input: RegionStatusInput): { status: RegionStatus; events: RegionEvent[] } {
  const { health, previous, now } = input;
  const overlapMessage = input.overlaps.map((o) => `node ${o.node} matches ${o.regions.join(', ')} and counts in ${o.regions[0]} only`).join('; ');
  const old = previous?.conditions?.find((c) => c.type === OVERLAP_CONDITION);
  const overlap: ConditionUpdate = {
    type: OVERLAP_CONDITION,
    status: input.overlaps.length > 0 ? 'True' : 'False',
    reason: input.overlaps.length > 0 ? OverlapReason.NodeInSeveralRegions : OverlapReason.NoOverlap,
    message: overlapMessage || 'every node of the region matches no other region',
    observedGeneration: input.generation,
  };
  const status: RegionStatus = {
    observedGeneration: input.generation,
    phase: health.phase,
    nodes: health.nodes,
    readyNodes: health.readyNodes,
    notReadyNodes: health.notReadyNodes,
    unschedulableNodes: health.unschedulableNodes,
    taintedNodes: health.taintedNodes,
    failingNodes: health.failingNodes,
    message: health.message,
    conditions: setCondition(previous?.conditions ?? [], overlap, now),
  };
  const events: RegionEvent[] = [];
  if (input.overlaps.length > 0 && (old?.status !== 'True' || old.message !== overlapMessage))
    events.push({ type: 'Warning', reason: 'NodeInSeveralRegions', message: overlapMessage });
  if (health.phase === 'Failed' && previous?.phase !== 'Failed') events.push({ type: 'Warning', reason: 'RegionFailed', message: health.message });
  if (health.phase !== 'Failed' && previous?.phase === 'Failed') events.push({ type: 'Normal', reason: 'RegionRecovered', message: health.message });
  return { status, events };
}
