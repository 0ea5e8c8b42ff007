import type { IntOrPercent } from '../api/common.js';
import { parsePercent } from '../api/common.js';
import { controllerTainted, failing, failingSince, type NodeView } from './nodes.js';

/** When a region counts as Failed. */
export interface FailurePolicy {
  /** Failing nodes (count, or share of the region's nodes) at which the region fails. */
  readonly failureThreshold: IntOrPercent;
  /** How long that many nodes must have been failing. */
  readonly tolerationSeconds: number;
}

/** The DeployRegion default: every node failing for 30 s. */
export const DEFAULT_FAILURE_POLICY: FailurePolicy = { failureThreshold: '100%', tolerationSeconds: 30 };

/** Health of a region. */
export type RegionPhase = 'Healthy' | 'Degraded' | 'Failed';

/** A region's health under one failure policy, with the counts behind it. */
export interface RegionHealth {
  readonly phase: RegionPhase;
  readonly nodes: number;
  /** Ready, schedulable and not tainted by the node controller: nodes new pods can go to. */
  readonly readyNodes: number;
  readonly notReadyNodes: number;
  readonly unschedulableNodes: number;
  readonly taintedNodes: number;
  readonly failingNodes: number;
  /** Nodes that must fail for the region to fail. */
  readonly threshold: number;
  /** When the region failed, or will fail if its failing nodes stay failing (ms). */
  readonly failsAt?: number | undefined;
  /** Why, for a condition or an Event. */
  readonly message: string;
}

/** The threshold as a node count: a percentage of `nodes` rounded up, at least one node. */
export function thresholdNodes(threshold: IntOrPercent, nodes: number): number {
  const pct = typeof threshold === 'string' ? parsePercent(threshold) : undefined;
  const count = pct === undefined ? Number(threshold) : Math.ceil((nodes * pct) / 100);
  return Math.max(1, Number.isFinite(count) ? count : nodes);
}

/**
 * Decides a region's health from its nodes. Failed: at least `threshold` nodes have been failing (NotReady or tainted
 * by the node-lifecycle controller) for `tolerationSeconds`, or the region has no node at all. Degraded: some node is
 * failing or cordoned. Level-based: the times come from the nodes themselves (Ready condition, taints), so the
 * verdict survives an agent restart.
 */
export function regionHealth(nodes: readonly NodeView[], policy: FailurePolicy, now: number): RegionHealth {
  const failingNodes = nodes.filter(failing);
  const counts = {
    nodes: nodes.length,
    readyNodes: nodes.filter((n) => !failing(n) && !n.unschedulable).length,
    notReadyNodes: nodes.filter((n) => !n.ready).length,
    unschedulableNodes: nodes.filter((n) => n.unschedulable).length,
    taintedNodes: nodes.filter(controllerTainted).length,
    failingNodes: failingNodes.length,
  };
  const threshold = thresholdNodes(policy.failureThreshold, nodes.length);
  if (nodes.length === 0) return { phase: 'Failed', ...counts, threshold, failsAt: 0, message: 'no node matches the region' };
  const since = failingNodes.map((n) => failingSince(n) ?? now).sort((a, b) => a - b);
  // The threshold-th node to start failing decides when enough of them were failing.
  const reached = since[threshold - 1];
  const failsAt = reached === undefined ? undefined : reached + policy.tolerationSeconds * 1000;
  const of = `${counts.failingNodes} of ${counts.nodes} nodes failing`;
  if (failsAt !== undefined && failsAt <= now) {
    return { phase: 'Failed', ...counts, threshold, failsAt, message: `${of} (threshold ${threshold}) for ${policy.tolerationSeconds}s or more` };
  }
  if (counts.failingNodes > 0 || counts.unschedulableNodes > 0) {
    const cordoned = counts.unschedulableNodes > 0 ? `, ${counts.unschedulableNodes} cordoned` : '';
    return { phase: 'Degraded', ...counts, threshold, failsAt, message: `${of}${cordoned} (fails at ${threshold} failing for ${policy.tolerationSeconds}s)` };
  }
  return { phase: 'Healthy', ...counts, threshold, message: `${counts.nodes} of ${counts.nodes} nodes ready` };
}
