import type { V1Node } from '@kubernetes/client-node';
import type { NodeView, Taint } from '../core/moves/nodes.js';
import { parseQuantity } from '../core/moves/quantity.js';
import type { Resources } from '../core/moves/resources.js';
import { timestampMs } from '../core/kube/objects.js';

/** A Node as core's region health and capacity read it; `requested` comes from the pods bound to it. */
export function nodeView(node: V1Node, requested: Resources): NodeView {
  const ready = node.status?.conditions?.find((c) => c.type === 'Ready');
  const allocatable: Record<string, number> = {};
  for (const [name, value] of Object.entries(node.status?.allocatable ?? {})) {
    const amount = parseQuantity(value);
    if (amount !== undefined) allocatable[name] = amount;
  }
  return {
    name: node.metadata?.name ?? '',
    labels: node.metadata?.labels ?? {},
    ready: ready?.status === 'True',
    readySince: timestampMs(ready?.lastTransitionTime),
    unschedulable: node.spec?.unschedulable === true,
    taints: (node.spec?.taints ?? []).map((t): Taint => ({ key: t.key, value: t.value, effect: t.effect, timeAdded: timestampMs(t.timeAdded) })),
    allocatable,
    requested,
  };
}
