import type { KubernetesObject, V1Node, V1Pod } from '@kubernetes/client-node';
import type { NodeView } from '../core/moves/nodes.js';
import { PODS, podRequests, type Resources } from '../core/moves/resources.js';
import type { CacheReader } from './runtime/informer.js';
import { nodeView } from './node-view.js';

/**
 * Pods that hold node resources: bound to a node and not terminal (core/rollout/pod-activity.ts's isPodTerminal, as a
 * field selector). Terminating pods stay in: their containers run, and hold their resources, until they are gone.
 */
export const USAGE_FIELD_SELECTOR = 'spec.nodeName!=,status.phase!=Succeeded,status.phase!=Failed';

/** What capacity counting keeps of a pod: where it runs and what it requests (a few hundred bytes a pod). */
export interface UsagePod extends KubernetesObject {
  readonly spec: { readonly nodeName: string };
  readonly requests: Resources;
}

/** Reduces a listed or watched pod to its UsagePod. */
export function usagePod(pod: V1Pod): UsagePod {
  const { name, namespace, uid, resourceVersion } = pod.metadata ?? {};
  return {
    metadata: { name, namespace, uid, resourceVersion },
    spec: { nodeName: pod.spec?.nodeName ?? '' },
    requests: podRequests(pod.spec),
  };
}

/** Starts and reports the cluster-wide pod usage informer. */
export interface UsageSource extends CacheReader<UsagePod> {
  start(): void;
  synced(): boolean;
}

/**
 * The cluster's nodes as region health and capacity read them. Node health needs only the Node cache; what pods
 * request is counted only once an ExtendedDeployment with moves on asks for it (`trackUsage`), so an agent without
 * moves never caches the cluster's other pods. Views are rebuilt lazily after a node or pod change.
 */
export class ClusterNodes {
  private views: readonly NodeView[] | undefined;
  private tracking = false;

  constructor(
    private readonly nodes: CacheReader<V1Node>,
    private readonly usage: UsageSource,
  ) {}

  /** Starts counting pod requests; idempotent. */
  trackUsage(): void {
    if (this.tracking) return;
    this.tracking = true;
    this.usage.start();
    this.views = undefined;
  }

  /** Whether `requested` on the nodes is complete. */
  usageKnown(): boolean {
    return this.tracking && this.usage.synced();
  }

  /** Marks the views stale: a node or a pod changed. */
  changed(): void {
    this.views = undefined;
  }

  /** Every node, with what its pods request when usage is known (empty otherwise). */
  list(): readonly NodeView[] {
    if (this.views) return this.views;
    const requested = new Map<string, Record<string, number>>();
    if (this.usageKnown()) {
      for (const pod of this.usage.list()) {
        const total = requested.get(pod.spec.nodeName) ?? { [PODS]: 0 };
        for (const [name, amount] of Object.entries(pod.requests)) total[name] = (total[name] ?? 0) + amount;
        total[PODS] = (total[PODS] ?? 0) + 1;
        requested.set(pod.spec.nodeName, total);
      }
    }
    this.views = this.nodes.list().map((n) => nodeView(n, requested.get(n.metadata?.name ?? '') ?? {}));
    return this.views;
  }
}
