import type { PodToleration } from '../kube/objects.js';
import type { Resources } from './resources.js';
import { byName } from '../by-name.js';
import { nodeInRegion, type RegionSelector } from '../region-selector.js';

/** Taints the node-lifecycle controller puts on nodes that stopped reporting or report NotReady. */
export const NODE_CONTROLLER_TAINTS: readonly string[] = ['node.kubernetes.io/unreachable', 'node.kubernetes.io/not-ready'];

/** A node taint. */
export interface Taint {
  readonly key: string;
  readonly value?: string | undefined;
  readonly effect: string;
  /** When the taint was added (ms), for NoExecute taints. */
  readonly timeAdded?: number | undefined;
}

/** A node as region health and capacity read it. */
export interface NodeView {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  /** Condition Ready is True. */
  readonly ready: boolean;
  /** When the Ready condition last changed (ms), if known. */
  readonly readySince?: number | undefined;
  /** Cordoned (spec.unschedulable). */
  readonly unschedulable: boolean;
  readonly taints: readonly Taint[];
  /** status.allocatable. */
  readonly allocatable: Resources;
  /** Requests of the pods bound to the node that still hold resources (not Succeeded or Failed), `pods` included. */
  readonly requested: Resources;
}

/** Whether the node-lifecycle controller tainted the node. */
export function controllerTainted(node: NodeView): boolean {
  return node.taints.some((t) => NODE_CONTROLLER_TAINTS.includes(t.key));
}

/** A failing node: not Ready, or tainted by the node-lifecycle controller. */
export function failing(node: NodeView): boolean {
  return !node.ready || controllerTainted(node);
}

/**
 * Kubernetes keeps whole seconds: an instant shown as second t happened within [t, t + 1 s). Timeouts count from its
 * latest possible instant, t + 999 ms, so none is ever cut short.
 */
export const WHOLE_SECOND_SLACK_MS = 999;

/**
 * Since when the node has been failing (ms): the earliest of its Ready condition's change to not-True and the
 * controller taints' timeAdded, taken as the latest instant that second allows, so a toleration is never cut short. A
 * failing node with neither time (it never reported) has failed since forever: 0.
 */
export function failingSince(node: NodeView): number | undefined {
  if (!failing(node)) return undefined;
  const times = [...(node.ready ? [] : [node.readySince]), ...node.taints.filter((t) => NODE_CONTROLLER_TAINTS.includes(t.key)).map((t) => t.timeAdded)].filter(
    (t): t is number => t !== undefined,
  );
  return times.length === 0 ? 0 : Math.min(...times) + WHOLE_SECOND_SLACK_MS;
}

/** Whether `toleration` tolerates `taint` (core/v1 semantics). */
export function tolerates(toleration: PodToleration, taint: Taint): boolean {
  if (toleration.effect && toleration.effect !== taint.effect) return false;
  if (toleration.operator === 'Exists') return !toleration.key || toleration.key === taint.key;
  return toleration.key === taint.key && (toleration.value ?? '') === (taint.value ?? '');
}

/** Whether a pod with `tolerations` may be scheduled onto the node: every NoSchedule and NoExecute taint tolerated. */
export function schedulableFor(node: NodeView, tolerations: readonly PodToleration[]): boolean {
  return node.taints.every((t) => t.effect === 'PreferNoSchedule' || tolerations.some((tol) => tolerates(tol, t)));
}

/** A region's node selection. */
export interface NamedRegionSelector extends RegionSelector {
  readonly name: string;
}

/** Which nodes belong to which region. */
export interface NodeAssignment {
  /** Region name → its nodes, by node name. A node matching several regions is listed under the first by name only. */
  readonly nodes: ReadonlyMap<string, readonly NodeView[]>;
  /** Region name → names of its nodes that also match other regions (sorted). */
  readonly overlaps: ReadonlyMap<string, readonly { readonly node: string; readonly regions: readonly string[] }[]>;
}

function matches(node: NodeView, region: NamedRegionSelector): boolean {
  return nodeInRegion(node.labels, region);
}

/**
 * Assigns nodes to regions by their labels. A node that matches two regions is counted in only one of them (the first
 * by name, so every agent decides alike) and reported on all of them, never silently counted twice.
 */
export function assignNodes(regions: readonly NamedRegionSelector[], nodes: readonly NodeView[]): NodeAssignment {
  const sortedRegions = [...regions].sort(byName);
  const assigned = new Map<string, NodeView[]>(sortedRegions.map((r) => [r.name, []]));
  const overlaps = new Map<string, { node: string; regions: string[] }[]>();
  for (const node of [...nodes].sort(byName)) {
    const owners = sortedRegions.filter((r) => matches(node, r)).map((r) => r.name);
    const first = owners[0];
    if (first === undefined) continue;
    assigned.get(first)?.push(node);
    if (owners.length < 2) continue;
    for (const region of owners) {
      const list = overlaps.get(region) ?? [];
      list.push({ node: node.name, regions: owners });
      overlaps.set(region, list);
    }
  }
  return { nodes: assigned, overlaps };
}
