import type { V1Node } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { ClusterNodes, type UsagePod, type UsageSource } from './cluster-nodes.js';
import { edKeyOf, regionKey, type EdKey, type RegionKey } from './keys.js';
import { AgentMetrics } from './metrics.js';
import { RegionStatusReconciler, type RegionStatusPorts } from './region-status-reconciler.js';
import { archNode, archRegion, cache, recorder } from './reconciler-test-support.js';
import { FakeClock } from './runtime/clock.js';
import { Controller } from './runtime/controller.js';
import { silentLogger } from './runtime/log.js';
import { WorkQueue } from './runtime/work-queue.js';

const NOW = Date.UTC(2026, 0, 1);
const region = archRegion;
const regions = [region('amd', 'amd64'), region('arm', 'arm64')];
const readyNode = (name: string, arch: string, ready = true): V1Node => archNode(name, arch, ready, NOW);

/** The DeployRegions amd and arm and the cluster's `nodes` (no pods: region health reads nodes alone). */
function world(nodes: V1Node[]) {
  const usage: UsageSource = { ...cache<UsagePod>([]), start: () => undefined, synced: () => true };
  return { caches: { deployRegions: cache(regions) }, cluster: new ClusterNodes(cache(nodes), usage) };
}

/** What the API server answers a request the agent's RBAC does not allow (client-node's ApiException shape). */
const forbidden = () =>
  Object.assign(new Error('forbidden'), {
    code: 403,
    body: { kind: 'Status', reason: 'Forbidden', message: 'pods "x" is forbidden: User cannot patch resource "pods"' },
  });

/** Resolves after every pending promise callback has run (no timers involved). */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('RegionStatusReconciler', () => {
  it('writes DeployRegion health: a region whose nodes are all down for the toleration is Failed, with an Event', async () => {
    const { caches, cluster } = world([readyNode('amd-1', 'amd64'), readyNode('arm-1', 'arm64', false)]);
    const { calls, ports } = recorder();
    const reconciler = new RegionStatusReconciler({ caches, ports, clock: new FakeClock(NOW), log: silentLogger, cluster });
    await reconciler.reconcile(regionKey('arm'));
    await reconciler.reconcile(regionKey('amd'));
    expect(calls).toEqual(['regionStatus:arm:Failed', 'event:RegionFailed', 'regionStatus:amd:Healthy']);
  });

  it('reports a forbidden DeployRegion status write on the DeployRegion', async () => {
    const metrics = new AgentMetrics({ queueDepth: () => 0 });
    const { calls, ports } = recorder();
    const events: string[] = [];
    const denied: RegionStatusPorts = {
      ...ports,
      recordEvent: (object, event) => events.push(`${object.kind} ${object.metadata?.name}: ${event.type} ${event.reason}: ${event.message}`),
      writeRegionStatus: async () => {
        throw forbidden();
      },
    };
    const { caches, cluster } = world([]);
    await expect(
      new RegionStatusReconciler({ caches, ports: denied, clock: new FakeClock(NOW), log: silentLogger, metrics, cluster }).reconcile(regionKey('amd')),
    ).rejects.toMatchObject({ code: 403 });
    expect(calls).toEqual([]);
    expect(events).toEqual([
      "DeployRegion amd: Warning Forbidden: the API server forbids the agent to update deployregions/status; it retries with backoff. Grant it in the agent's ClusterRole",
    ]);
    const counts = (await metrics.forbidden.get()).values.map((v) => ({ ...v.labels, value: v.value }));
    expect(counts).toEqual([{ verb: 'update', resource: 'deployregions/status', value: 1 }]);
  });
});

describe('DeployRegion status: a controller of its own, beside the ExtendedDeployment controller', () => {
  /**
   * Both controllers as the agent runs them, one worker each: the ExtendedDeployment reconciler is a fake that records
   * its keys; DeployRegion statuses are written through `writeRegionStatus`.
   */
  function controllers(writeRegionStatus: RegionStatusPorts['writeRegionStatus']) {
    const clock = new FakeClock(NOW);
    const { caches, cluster } = world([readyNode('amd-1', 'amd64'), readyNode('arm-1', 'arm64', false)]);
    const ports: RegionStatusPorts = { writeRegionStatus, recordEvent: () => undefined };
    const reconciled: EdKey[] = [];
    const eds = new WorkQueue<EdKey>({ clock });
    const regionQueue = new WorkQueue<RegionKey>({ clock });
    const edController = new Controller<EdKey>(
      {
        reconcile: async (key) => {
          reconciled.push(key);
          return { outcome: 'synced' };
        },
      },
      silentLogger,
      { name: 'extendeddeployment', keyField: 'ed' },
    );
    const regionController = new Controller(new RegionStatusReconciler({ caches, ports, clock, log: silentLogger, cluster }), silentLogger, {
      name: 'deployregion',
      keyField: 'region',
    });
    const running = Promise.all([edController.run(eds, 1), regionController.run(regionQueue, 1)]);
    const stop = async () => {
      eds.shutDown(true);
      regionQueue.shutDown(true);
      await running;
    };
    return { clock, eds, regions: regionQueue, reconciled, stop };
  }

  it('a failed status write backs off on the DeployRegion queue, and an ExtendedDeployment key goes through at once', async () => {
    let writes = 0;
    const {
      clock,
      eds,
      regions: queue,
      reconciled,
      stop,
    } = controllers(async () => {
      writes++;
      throw Object.assign(new Error('internal error'), { code: 500 });
    });
    const arm = regionKey('arm');
    const web = edKeyOf('shop', 'web');
    queue.add(arm);
    eds.add(web);
    await settle();
    expect(writes).toBe(1);
    expect([queue.numRequeues(arm), queue.delayed()]).toEqual([1, 1]);
    expect(reconciled).toEqual(['shop/web']);
    // The ExtendedDeployment queue's backoff knows nothing of the region's failure.
    expect([eds.numRequeues(web), eds.delayed()]).toEqual([0, 0]);
    eds.add(web);
    await settle();
    expect(reconciled).toEqual(['shop/web', 'shop/web']);
    expect(writes).toBe(1);

    clock.advance(5); // the first retry's backoff
    await settle();
    expect(writes).toBe(2);
    expect(queue.numRequeues(arm)).toBe(2);
    await stop();
  });

  it('a status write that hangs holds no ExtendedDeployment worker', async () => {
    let release: () => void = () => undefined;
    const { eds, regions: queue, reconciled, stop } = controllers(() => new Promise<void>((resolve) => (release = resolve)));
    queue.add(regionKey('arm'));
    await settle();
    eds.add(edKeyOf('shop', 'web'));
    eds.add(edKeyOf('shop', 'api'));
    await settle();
    expect(reconciled).toEqual(['shop/web', 'shop/api']);
    expect(queue.inFlight()).toBe(1);
    release();
    await stop();
  });
});
