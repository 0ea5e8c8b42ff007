import type { NodeView } from './nodes.js';

/** A Ready, schedulable node of 4 cores, 8 GiB and 20 pod slots, with nothing on it; `over` changes any part. */
export function node(name: string, over: Partial<NodeView> = {}): NodeView {
  return {
    name,
    labels: {},
    ready: true,
    unschedulable: false,
    taints: [],
    allocatable: { cpu: 4, memory: 8 * 2 ** 30, pods: 20 },
    requested: {},
    ...over,
  };
}

/** A node the node-lifecycle controller marked: Ready Unknown since `since`, tainted unreachable. */
export function downNode(name: string, since: number, over: Partial<NodeView> = {}): NodeView {
  return node(name, {
    ready: false,
    readySince: since,
    taints: [{ key: 'node.kubernetes.io/unreachable', effect: 'NoExecute', timeAdded: since }],
    ...over,
  });
}
