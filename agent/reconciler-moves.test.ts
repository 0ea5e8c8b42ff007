import type { V1Node } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import type { ExtendedDeploymentStatus } from '../core/api/extended-deployment.js';
import { NAME_LABEL, REGION_LABEL, REVISION_LABEL } from '../core/labels.js';
import { renderSet } from '../core/render.js';
import { FakeClock } from './runtime/clock.js';
import { ClusterNodes, usagePod, type UsagePod, type UsageSource } from './cluster-nodes.js';
import type { AgentCaches } from './informers.js';
import { silentLogger } from './runtime/log.js';
import type { ExtendedDeploymentObject, PodObject } from '../core/kube/objects.js';
import { edKeyOf } from './keys.js';
import { Reconciler } from './reconciler.js';
import { controlledBy } from '../core/kube/test-support.js';
import { archNode, archRegion, cache, edCache, recorder, STANDING_MARK } from './reconciler-test-support.js';

const NOW = Date.UTC(2026, 0, 1);
const region = archRegion;
const regions = [region('amd', 'amd64'), region('arm', 'arm64')];
const readyNode = (name: string, arch: string, ready = true): V1Node => archNode(name, arch, ready, NOW);

function world(options: { nodes: V1Node[]; strategy?: Record<string, unknown>; stuck?: number; status?: ExtendedDeploymentStatus; armReplicas?: number }) {
  const raw = {
    apiVersion: 'extendeddeployment.io/v1beta1',
    kind: 'ExtendedDeployment',
    metadata: { name: 'web', namespace: 'shop' },
    spec: {
      selector: { matchLabels: { app: 'web' } },
      template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'app', image: 'web:1', resources: { requests: { cpu: '1' } } }] } },
      regions: [
        { name: 'amd', replicas: 3 },
        { name: 'arm', replicas: 3 },
      ],
      strategy: { minReadySeconds: 0, ...options.strategy },
    },
  };
  const rendered = renderSet([...regions, raw]);
  if (!rendered.ok) throw new Error('render failed');
  const r = rendered.value.extendedDeployments[0]!;
  const ed: ExtendedDeploymentObject = {
    ...(r.manifest as ExtendedDeploymentObject),
    metadata: { ...(r.manifest as ExtendedDeploymentObject).metadata, resourceVersion: '10', generation: 1 },
    ...(options.status && { status: options.status }),
  };
  const revision = (name: string) => r.regions.find((x) => x.name === name)?.revision ?? '';
  const replicaSets = ['amd', 'arm'].map((name) => ({
    metadata: { name: `web-${name}`, namespace: 'shop', labels: { [NAME_LABEL]: 'web' } },
    spec: {
      replicas: name === 'arm' ? (options.armReplicas ?? 3) : 3,
      template: { metadata: { labels: { [REVISION_LABEL]: revision(name) } }, spec: { containers: [{ name: 'app', resources: { requests: { cpu: '1' } } }] } },
    },
  }));
  const pods: PodObject[] = [];
  const add = (name: string, regionName: string, node: string | undefined) =>
    pods.push({
      metadata: {
        name,
        namespace: 'shop',
        uid: name,
        labels: { [NAME_LABEL]: 'web', [REGION_LABEL]: regionName, [REVISION_LABEL]: revision(regionName) },
        annotations: STANDING_MARK,
        ownerReferences: controlledBy(`web-${regionName}`),
      },
      spec: { ...(node && { nodeName: node }), containers: [{ name: 'app', image: 'web:1' }] },
      status: node
        ? { phase: 'Running', conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: '2025-12-31T00:00:00Z' }] }
        : {
            phase: 'Pending',
            conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable', lastTransitionTime: new Date(NOW - 90_000).toISOString() }],
          },
    });
  for (let i = 0; i < 3; i++) add(`web-amd-${i}`, 'amd', 'amd-1');
  const stuck = options.stuck ?? 0;
  for (let i = 0; i < 3; i++) add(`web-arm-${i}`, 'arm', i < 3 - stuck ? 'arm-1' : undefined);
  const usage: UsageSource = {
    ...cache<UsagePod>(
      pods
        .filter((p) => p.spec?.nodeName)
        .map((p) => usagePod({ ...p, spec: { ...p.spec, containers: [{ name: 'app', resources: { requests: { cpu: '1' } } }] } } as never)),
    ),
    start: () => undefined,
    synced: () => true,
  };
  const caches = {
    extendedDeployments: edCache([ed]),
    deployRegions: cache(regions),
    replicaSets: cache(replicaSets),
    deployments: cache([]),
    statefulSets: cache([]),
    controllerRevisions: cache([]),
    pods: cache(pods),
    nodes: cache(options.nodes),
    usage,
  } as unknown as AgentCaches;
  const cluster = new ClusterNodes(caches.nodes, usage);
  return { caches, cluster };
}

const clock = () => new FakeClock(NOW);

describe('Reconciler: moves', () => {
  it('moves unschedulable pods: status with the move first, then both regions scaled, then the Event', async () => {
    const { caches, cluster } = world({
      nodes: [readyNode('amd-1', 'amd64'), readyNode('arm-1', 'arm64')],
      strategy: { autoReschedule: { enable: true } },
      stuck: 2,
    });
    const { calls, statuses, ports } = recorder();
    await new Reconciler({ caches, ports, clock: clock(), log: silentLogger, cluster }).reconcile(edKeyOf('shop', 'web'));
    expect(calls).toEqual(['status:Progressing:0', 'scale:ReplicaSet:5', 'scale:ReplicaSet:1', 'event:ReplicasMoved']);
    expect(statuses[0]?.moves).toEqual([{ from: 'arm', to: 'amd', count: 2, reason: 'Shortage', since: new Date(NOW).toISOString() }]);
  });

  it('a restarted agent that finds the move recorded does not move again', async () => {
    const first = world({ nodes: [readyNode('amd-1', 'amd64'), readyNode('arm-1', 'arm64')], strategy: { autoReschedule: { enable: true } }, stuck: 2 });
    const before = recorder();
    await new Reconciler({ caches: first.caches, ports: before.ports, clock: clock(), log: silentLogger, cluster: first.cluster }).reconcile(
      edKeyOf('shop', 'web'),
    );
    // Killed after the status write: the ReplicaSets still have their old counts, the stuck pods are still there.
    const { caches, cluster } = world({
      nodes: [readyNode('amd-1', 'amd64'), readyNode('arm-1', 'arm64')],
      strategy: { autoReschedule: { enable: true } },
      stuck: 2,
      status: before.statuses[0],
    });
    const { calls, statuses, ports } = recorder();
    await new Reconciler({ caches, ports, clock: new FakeClock(NOW + 2_000), log: silentLogger, cluster }).reconcile(edKeyOf('shop', 'web'));
    expect(calls.filter((c) => c.startsWith('scale'))).toEqual(['scale:ReplicaSet:5', 'scale:ReplicaSet:1']);
    expect(calls).not.toContain('event:ReplicasMoved');
    expect((statuses[0] ?? before.statuses[0])?.moves).toEqual(before.statuses[0]?.moves);
  });

  it('without the cluster view (moves off in the agent) nothing moves', async () => {
    const { caches } = world({ nodes: [readyNode('amd-1', 'amd64'), readyNode('arm-1', 'arm64')], strategy: { autoReschedule: { enable: true } }, stuck: 2 });
    const { calls, ports } = recorder();
    await new Reconciler({ caches, ports, clock: clock(), log: silentLogger }).reconcile(edKeyOf('shop', 'web'));
    expect(calls.filter((c) => c.startsWith('scale'))).toEqual([]);
  });

  it('moves a Failed region’s replicas with fault moves on', async () => {
    const { caches, cluster } = world({ nodes: [readyNode('amd-1', 'amd64'), readyNode('arm-1', 'arm64', false)], strategy: { faultMove: { enable: true } } });
    const { calls, statuses, ports } = recorder();
    await new Reconciler({ caches, ports, clock: clock(), log: silentLogger, cluster }).reconcile(edKeyOf('shop', 'web'));
    expect(statuses[0]?.moves).toEqual([{ from: 'arm', to: 'amd', count: 3, reason: 'Fault', since: new Date(NOW).toISOString() }]);
    expect(calls.slice(0, 1)).toEqual(['status:Progressing:0']);
    expect(calls).toContain('scale:ReplicaSet:6');
  });
});

describe('Reconciler: moves never exceed room', () => {
  it('moves only what fits on the other region (cpu counted with the pods already there) and says the rest is blocked', async () => {
    const small = (name: string, arch: string): V1Node => ({
      ...readyNode(name, arch),
      status: { ...readyNode(name, arch).status, allocatable: { cpu: '4', memory: '8Gi', pods: '20' } },
    });
    const { caches, cluster } = world({ nodes: [small('amd-1', 'amd64'), small('arm-1', 'arm64')], strategy: { autoReschedule: { enable: true } }, stuck: 2 });
    const { calls, statuses, ports } = recorder();
    await new Reconciler({ caches, ports, clock: clock(), log: silentLogger, cluster }).reconcile(edKeyOf('shop', 'web'));
    // amd-1 has 4 cores and runs 3 pods of 1 core: room for one.
    expect(statuses[0]?.moves?.map((m) => m.count)).toEqual([1]);
    expect(calls).toContain('event:MoveBlocked');
    expect(statuses[0]?.conditions?.find((c) => c.type === 'Moves')).toMatchObject({ status: 'True', reason: 'NoRoom' });
  });
});

describe('Reconciler: a DeployRegion deleted under a rendered ExtendedDeployment', () => {
  const nodes = [readyNode('amd-1', 'amd64'), readyNode('arm-1', 'arm64')];
  /** The world without the DeployRegion arm (its node, workload and pods are all still there). */
  const withoutArm = (w: ReturnType<typeof world>) => ({ ...w.caches, deployRegions: cache(regions.slice(0, 1)) }) as AgentCaches;

  it('is invalid, naming the region, and moves and scales nothing (fault moves on, every pod running); back, it is valid again', async () => {
    const healthy = recorder();
    await new Reconciler({ ...world({ nodes, strategy: { faultMove: { enable: true } } }), ports: healthy.ports, clock: clock(), log: silentLogger }).reconcile(
      edKeyOf('shop', 'web'),
    );
    expect(healthy.statuses[0]?.phase).toBe('Healthy');

    const w = world({ nodes, strategy: { faultMove: { enable: true } }, status: healthy.statuses[0] });
    const { calls, statuses, ports } = recorder();
    const reconciler = new Reconciler({ caches: withoutArm(w), ports, clock: clock(), log: silentLogger, cluster: w.cluster });
    expect(await reconciler.reconcile(edKeyOf('shop', 'web'))).toEqual({ outcome: 'invalid' });
    // Read as a region without nodes, arm would count as Failed at once and its 3 replicas would move to amd.
    expect(calls).toEqual(['status:Healthy:0', 'event:InvalidSpec']);
    expect(statuses[0]?.moves).toBeUndefined();
    expect(statuses[0]?.conditions?.find((c) => c.type === 'Valid')).toMatchObject({
      status: 'False',
      reason: 'InvalidSpec',
      message: 'spec.regions[1].name: DeployRegion "arm" not found (known: amd)',
    });

    const back = recorder();
    const again = world({ nodes, strategy: { faultMove: { enable: true } }, status: statuses[0] });
    // The status written alone brings the next look at once (Reconciler.reconcile).
    expect(await new Reconciler({ ...again, ports: back.ports, clock: clock(), log: silentLogger }).reconcile(edKeyOf('shop', 'web'))).toEqual({
      outcome: 'synced',
      requeueAfterMs: 0,
    });
    expect(back.calls).toEqual(['status:Healthy:0']);
    expect(back.statuses[0]?.conditions?.map((c) => c.type)).not.toContain('Valid');
  });

  it('keeps the moves its status records and acts on none of them while the region is gone', async () => {
    const down = [readyNode('amd-1', 'amd64'), readyNode('arm-1', 'arm64', false)];
    const moved = recorder();
    await new Reconciler({
      ...world({ nodes: down, strategy: { faultMove: { enable: true } } }),
      ports: moved.ports,
      clock: clock(),
      log: silentLogger,
    }).reconcile(edKeyOf('shop', 'web'));
    const recorded = moved.statuses[0]?.moves;
    expect(recorded).toHaveLength(1);

    // arm's node is back, and its DeployRegion is gone: nothing returns, nothing moves, the record stays as it was.
    const w = world({ nodes, strategy: { faultMove: { enable: true }, moveBack: { enable: true, stabilizationSeconds: 0 } }, status: moved.statuses[0] });
    const { calls, statuses, ports } = recorder();
    expect(
      await new Reconciler({ caches: withoutArm(w), ports, clock: new FakeClock(NOW + 600_000), log: silentLogger, cluster: w.cluster }).reconcile(
        edKeyOf('shop', 'web'),
      ),
    ).toEqual({ outcome: 'invalid' });
    expect(calls.filter((c) => !c.startsWith('status') && !c.startsWith('event:InvalidSpec'))).toEqual([]);
    expect(statuses[0]?.moves).toEqual(recorded);
  });
});
