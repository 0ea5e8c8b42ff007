import type { PodToleration } from '../kube/objects.js';
import { failing, schedulableFor, type NodeView } from './nodes.js';
import { podsThatFit, type Resources } from './resources.js';

/** What decides where one of an ExtendedDeployment's pods can run in a region (from the region's pod template). */
export interface PodPlacement {
  readonly requests: Resources;
  readonly tolerations: readonly PodToleration[];
  readonly nodeSelector: Readonly<Record<string, string>>;
}

/** Whether a new pod could land on the node at all: Ready, not failing, not cordoned, taints tolerated, labels matched. */
export function nodeAccepts(node: NodeView, pod: PodPlacement): boolean {
  return (
    !failing(node) && !node.unschedulable && schedulableFor(node, pod.tolerations) && Object.entries(pod.nodeSelector).every(([k, v]) => node.labels[k] === v)
  );
}

/**
 * How many more such pods the region's nodes can take now: per accepting node, what its allocatable minus the
 * requests of the pods already bound to it leaves (pod slots included), summed. Required node affinity beyond the
 * node selector is not evaluated; the region's labels already narrow the nodes.
 */
export function regionRoom(nodes: readonly NodeView[], pod: PodPlacement): number {
  return nodes.filter((n) => nodeAccepts(n, pod)).reduce((sum, n) => sum + podsThatFit(n.allocatable, n.requested, pod.requests), 0);
}
