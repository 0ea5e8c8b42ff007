import { deployRegionStatus, type DeployRegionStatus } from '../core/api/deploy-region.js';
import { REGION_STATUS_WRITE } from '../core/kube/api-writes.js';
import type { DeployRegionObject } from '../core/kube/objects.js';
import { assignNodes } from '../core/moves/nodes.js';
import { DEFAULT_FAILURE_POLICY, regionHealth } from '../core/moves/region-health.js';
import { regionStatus } from '../core/moves/region-status.js';
import { regionSelectors } from '../core/observe/observe.js';
import type { RolloutEvent } from '../core/rollout/planner.js';
import { forbiddenMessage, jsonEqual } from '../core/rollout/status-decision.js';
import type { ClusterNodes } from './cluster-nodes.js';
import type { RegionKey } from './keys.js';
import type { AgentMetrics } from './metrics.js';
import type { ReconcileResult } from './reconciler.js';
import type { Clock } from './runtime/clock.js';
import type { CacheReader } from './runtime/informer.js';
import { apiError, isForbidden } from './runtime/kube-errors.js';
import type { Logger } from './runtime/log.js';

/** The writes of a DeployRegion status reconcile; injected so that they can be tested without a cluster. */
export interface RegionStatusPorts {
  /** Replaces a DeployRegion's status (optimistic concurrency on its resourceVersion). */
  writeRegionStatus(region: DeployRegionObject, status: DeployRegionStatus): Promise<void>;
  /** Queues an Event about a DeployRegion (best effort): returns at once and never throws, so no reconcile waits for it. */
  recordEvent(region: DeployRegionObject, event: RolloutEvent): void;
}

/**
 * Reconciles one DeployRegion's status: its health, from its nodes as assigned over every DeployRegion (a node in two
 * regions counts in one), judged by the default failure policy. Its own controller, queue and backoff: a region whose
 * status cannot be written is retried without holding back any ExtendedDeployment.
 */
export class RegionStatusReconciler {
  constructor(
    private readonly deps: {
      readonly caches: { readonly deployRegions: CacheReader<DeployRegionObject> };
      readonly ports: RegionStatusPorts;
      readonly clock: Clock;
      readonly log: Logger;
      readonly metrics?: AgentMetrics;
      /** Nodes (region health); without it, no region status is written. */
      readonly cluster?: ClusterNodes;
    },
  ) {}

  /**
   * Writes the status of the DeployRegion `key` when it changed; looks again when the region would turn Failed. Throws
   * when the write failed: the caller retries with backoff. A write the API server forbade (403) is counted, logged
   * and reported as a Forbidden Warning Event on the DeployRegion first, so that RBAC trouble shows on the object.
   */
  async reconcile(key: RegionKey): Promise<ReconcileResult> {
    const { caches, ports, clock, metrics, cluster } = this.deps;
    const name: string = key;
    const region = caches.deployRegions.get(name);
    if (!region || region.metadata?.deletionTimestamp || !cluster) return { outcome: 'gone' };
    const selectors = regionSelectors(caches.deployRegions.list());
    if (!selectors.some((s) => s.name === name)) return { outcome: 'invalid' };
    const now = clock.now();
    const assignment = assignNodes(selectors, cluster.list());
    const health = regionHealth(assignment.nodes.get(name) ?? [], DEFAULT_FAILURE_POLICY, now);
    const previous = deployRegionStatus.safeParse(region.status ?? {});
    const { status, events } = regionStatus({
      health,
      overlaps: assignment.overlaps.get(name) ?? [],
      generation: region.metadata?.generation ?? 0,
      previous: previous.success ? previous.data : undefined,
      now,
    });
    if (!jsonEqual(region.status ?? {}, status)) {
      await this.write(region, status);
      metrics?.regionStatusWrites.inc();
      for (const event of events) ports.recordEvent(region, event);
    }
    const failsIn = health.phase !== 'Failed' && health.failsAt !== undefined ? health.failsAt - now : undefined;
    return failsIn !== undefined && failsIn > 0 ? { outcome: 'synced', requeueAfterMs: failsIn + 50 } : { outcome: 'synced' };
  }

  private async write(region: DeployRegionObject, status: DeployRegionStatus): Promise<void> {
    const { ports, metrics } = this.deps;
    try {
      await ports.writeRegionStatus(region, status);
    } catch (error) {
      if (isForbidden(error)) {
        const { verb, resource } = REGION_STATUS_WRITE;
        metrics?.forbidden.inc({ verb, resource });
        this.deps.log
          .with({ region: region.metadata?.name })
          .error('forbidden: the agent lacks a permission', { verb, resource, error: apiError(error).message });
        ports.recordEvent(region, { type: 'Warning', reason: 'Forbidden', message: forbiddenMessage(REGION_STATUS_WRITE, undefined) });
      }
      throw error;
    }
  }
}
