// The reconciler when it cannot carry out a plan: the fail-safe readiness gate (an invalid spec, a plan that threw, a
// status write that failed) and writes the API server forbids (403). Same level as reconciler.test.ts: fixed caches,
// recorded writes.
import { describe, expect, it } from 'vitest';
import type { ExtendedDeploymentStatus } from '../core/api/extended-deployment.js';
import { IN_PLACE_READINESS_GATE, NAME_LABEL, REGION_LABEL, REVISION_LABEL, SWAP_STATE_ANNOTATION } from '../core/labels.js';
import type { ApiRead } from '../core/kube/api-writes.js';
import type { RolloutAction } from '../core/rollout/actions.js';
import { FakeClock } from './runtime/clock.js';
import type { AgentCaches } from './informers.js';
import { silentLogger } from './runtime/log.js';
import { AgentMetrics } from './metrics.js';
import type { DeployRegionObject, PodObject } from '../core/kube/objects.js';
import { edKeyOf } from './keys.js';
import { FORBIDDEN_READ_RETRY_MS, Reconciler, type ReconcilerPorts } from './reconciler.js';
import { controlledBy } from '../core/kube/test-support.js';
import { cache, edCache, recorder, webExtendedDeployment } from './reconciler-test-support.js';
import { AUTHORIZED_CONDITION } from '../core/api/conditions.js';
import { ED_KIND } from '../core/api/identity.js';
import type { ExtendedDeploymentObject } from '../core/kube/objects.js';
import { OwnWrites } from './own-writes.js';

const NOW = Date.UTC(2026, 0, 1);
const region: DeployRegionObject = {
  apiVersion: 'extendeddeployment.io/v1beta1',
  kind: 'DeployRegion',
  metadata: { name: 'amd' },
  spec: { matchLabels: { 'kubernetes.io/arch': 'amd64' } },
};

/** What the API server answers a request the agent's RBAC does not allow (client-node's ApiException shape). */
const forbidden = () =>
  Object.assign(new Error('forbidden'), {
    code: 403,
    body: { kind: 'Status', reason: 'Forbidden', message: 'pods "x" is forbidden: User cannot patch resource "pods"' },
  });

/**
 * ExtendedDeployment shop/web with in-place updates on (its pods carry the InPlaceUpdateReady readiness gate) in one
 * region of 3: a and b Ready with the gate open, c just created (gate never set), d in the middle of a swap (gate
 * closed, swap record `swapping`). `spec` changes the spec (before the render: an invalid one is not rendered).
 */
function world(o: { spec?: Record<string, unknown>; status?: ExtendedDeploymentStatus; regions?: DeployRegionObject[] } = {}) {
  const { ed, revisionOf } = webExtendedDeployment({
    regions: [region],
    image: 'web:1',
    spec: { replicas: 4, regions: [{ name: 'amd' }], strategy: { minReadySeconds: 0, updateStrategy: { type: 'InPlaceIfPossible' } }, ...o.spec },
    ...(o.status && { status: o.status }),
  });
  const revision = revisionOf('amd');
  const pod = (name: string, gate: 'True' | 'False' | undefined, ready: boolean, swap?: string): PodObject => ({
    metadata: {
      name,
      namespace: 'shop',
      uid: `uid-${name}`,
      resourceVersion: '1',
      labels: { [NAME_LABEL]: 'web', [REGION_LABEL]: 'amd', [REVISION_LABEL]: revision },
      ...(swap && { annotations: { [SWAP_STATE_ANNOTATION]: JSON.stringify({ revision, phase: swap, since: NOW - 1_000 }) } }),
      ownerReferences: controlledBy('web-amd'),
    },
    spec: { nodeName: 'node', containers: [{ name: 'app', image: 'web:1' }], readinessGates: [{ conditionType: IN_PLACE_READINESS_GATE }] },
    status: {
      phase: 'Running',
      conditions: [
        { type: 'Ready', status: ready ? 'True' : 'False', lastTransitionTime: '2025-12-31T00:00:00Z' },
        ...(gate ? [{ type: IN_PLACE_READINESS_GATE, status: gate, lastTransitionTime: '2025-12-31T00:00:00Z' }] : []),
      ],
    },
  });
  const pods = [
    pod('web-amd-a', 'True', true),
    pod('web-amd-b', 'True', true),
    pod('web-amd-c', undefined, false),
    pod('web-amd-d', 'False', false, 'swapping'),
  ];
  const replicaSets = [
    {
      metadata: { name: 'web-amd', namespace: 'shop', resourceVersion: '1', labels: { [NAME_LABEL]: 'web' } },
      spec: { replicas: 4, template: { metadata: { labels: { [REVISION_LABEL]: revision } } } },
    },
  ];
  return {
    extendedDeployments: edCache([ed]),
    deployRegions: cache(o.regions ?? [region]),
    replicaSets: cache(replicaSets),
    deployments: cache([]),
    statefulSets: cache([]),
    controllerRevisions: cache([]),
    pods: cache(pods),
    nodes: cache([]),
  } as unknown as AgentCaches;
}

const clock = () => new FakeClock(NOW);
const reconcilerOf = (caches: AgentCaches, ports: ReconcilerPorts, metrics?: AgentMetrics) =>
  new Reconciler({ caches, ports, clock: clock(), log: silentLogger, ...(metrics && { metrics }) });

describe('Reconciler: the fail-safe readiness gate', () => {
  it('opens the gate of a new pod of an invalid ExtendedDeployment, never that of a pod being swapped, and reports the spec', async () => {
    const { calls, ports } = recorder();
    const result = await reconcilerOf(world({ spec: { replicas: 1, regions: [{ name: 'amd', replicas: 3, minReplicas: 4 }] } }), ports).reconcile(
      edKeyOf('shop', 'web'),
    );
    expect(result).toEqual({ outcome: 'invalid' });
    expect([...calls].sort()).toEqual(['event:InvalidSpec', 'openGate:web-amd-c', 'status:undefined:undefined']);
  });

  it('opens it for an ExtendedDeployment made invalid by a deleted DeployRegion', async () => {
    const { calls, ports } = recorder();
    expect(await reconcilerOf(world({ regions: [] }), ports).reconcile(edKeyOf('shop', 'web'))).toEqual({ outcome: 'invalid' });
    expect(calls).toContain('openGate:web-amd-c');
  });

  it('opens it while the invalid status cannot be written, and the reconcile still fails for a retry', async () => {
    const { calls, ports } = recorder(true);
    await expect(
      reconcilerOf(world({ spec: { replicas: 1, regions: [{ name: 'amd', replicas: 3, minReplicas: 4 }] } }), ports).reconcile(edKeyOf('shop', 'web')),
    ).rejects.toThrow('conflict');
    expect(calls).toEqual(['openGate:web-amd-c']);
  });

  it("opens it when the status that must precede the plan's actions cannot be written", async () => {
    // No status yet: the plan records the rollout first, and that write fails.
    const { calls, ports } = recorder(true);
    await expect(reconcilerOf(world(), ports).reconcile(edKeyOf('shop', 'web'))).rejects.toThrow('conflict');
    expect(calls).toEqual(['openGate:web-amd-c']);
  });

  it('opens it when planning throws', async () => {
    const caches = world();
    const broken = {
      ...caches,
      deployRegions: {
        ...caches.deployRegions,
        list: () => {
          throw new RangeError('Maximum call stack size exceeded');
        },
      },
    } as AgentCaches;
    const { calls, ports } = recorder();
    await expect(reconcilerOf(broken, ports).reconcile(edKeyOf('shop', 'web'))).rejects.toThrow(RangeError);
    expect(calls).toEqual(['openGate:web-amd-c']);
  });
});

describe('Reconciler: writes the API server forbids (403)', () => {
  /** Ports whose actions of `kind` answer 403; everything else is recorded as by `recorder`. */
  const forbidding = (kind: RolloutAction['kind'], base = recorder()) => {
    const ports: ReconcilerPorts = {
      ...base.ports,
      async performAction(ns, workloadKind, action) {
        if (action.kind === kind) throw forbidden();
        return base.ports.performAction(ns, workloadKind, action);
      },
    };
    return { ...base, ports };
  };
  const forbiddenCounts = async (metrics: AgentMetrics) => (await metrics.forbidden.get()).values.map((v) => ({ ...v.labels, value: v.value }));

  it('reports a forbidden action as Authorized=False naming verb and resource, one Warning Event and the metric; retried, nothing more', async () => {
    const metrics = new AgentMetrics({ queueDepth: () => 0 });
    // The status a reconcile writes for this world: from then on the gate is the only write to make.
    const settled = recorder();
    await reconcilerOf(world(), settled.ports).reconcile(edKeyOf('shop', 'web'));
    const status = settled.statuses.at(-1);
    const first = forbidding('openGate');
    await expect(reconcilerOf(world({ status }), first.ports, metrics).reconcile(edKeyOf('shop', 'web'))).rejects.toMatchObject({ code: 403 });
    expect(first.calls).toEqual(['status:Progressing:0', 'event:Forbidden']);
    expect(first.statuses[0]?.conditions?.find((c) => c.type === AUTHORIZED_CONDITION)).toMatchObject({
      status: 'False',
      reason: 'Forbidden',
      message: "the API server forbids the agent to patch pods/status in namespace shop; it retries with backoff. Grant it in the agent's ClusterRole",
    });
    expect(await forbiddenCounts(metrics)).toEqual([{ verb: 'patch', resource: 'pods/status', value: 1 }]);

    // The retry (the caller backs off) finds the condition: the same 403 writes no status and records no Event again.
    const again = forbidding('openGate');
    await expect(reconcilerOf(world({ status: first.statuses[0] }), again.ports, metrics).reconcile(edKeyOf('shop', 'web'))).rejects.toMatchObject({
      code: 403,
    });
    expect(again.calls).toEqual([]);
    expect(await forbiddenCounts(metrics)).toEqual([{ verb: 'patch', resource: 'pods/status', value: 2 }]);

    // Granted: the next reconcile writes its status without the condition.
    const granted = recorder();
    await reconcilerOf(world({ status: first.statuses[0] }), granted.ports, metrics).reconcile(edKeyOf('shop', 'web'));
    expect(granted.calls).toContain('openGate:web-amd-c');
    expect(granted.statuses.at(-1)?.conditions?.map((c) => c.type)).not.toContain(AUTHORIZED_CONDITION);
  });

  it('reports a forbidden status write with an Event and the metric, without trying the status again', async () => {
    const metrics = new AgentMetrics({ queueDepth: () => 0 });
    const { calls, ports } = recorder();
    let statusWrites = 0;
    const denied: ReconcilerPorts = {
      ...ports,
      async writeStatus() {
        statusWrites++;
        throw forbidden();
      },
    };
    await expect(reconcilerOf(world(), denied, metrics).reconcile(edKeyOf('shop', 'web'))).rejects.toMatchObject({ code: 403 });
    expect(statusWrites).toBe(1);
    expect(calls).toEqual(['openGate:web-amd-c', 'event:Forbidden']);
    expect(await forbiddenCounts(metrics)).toEqual([{ verb: 'update', resource: 'extendeddeployments/status', value: 1 }]);
  });
});

describe('Reconciler: reads the API server forbids (403 to a list or watch)', () => {
  const blindTo = (reads: ApiRead[]) => (caches: AgentCaches, ports: ReconcilerPorts) =>
    new Reconciler({ caches, ports, clock: clock(), log: silentLogger, forbiddenReads: () => reads });
  // A watch refused, then its relist: the message stays the same (one Event).
  const podsRefused = blindTo([
    { verb: 'watch', resource: 'pods' },
    { verb: 'list', resource: 'pods' },
  ]);

  it('acts on nothing, reports Authorized=False naming the reads and one Warning Event, and looks again', async () => {
    const first = recorder();
    const result = await podsRefused(world(), first.ports).reconcile(edKeyOf('shop', 'web'));
    expect(result).toEqual({ outcome: 'blocked', requeueAfterMs: FORBIDDEN_READ_RETRY_MS });
    // No action (this world's plan would open a gate and record a rollout): only the report.
    expect(first.calls).toEqual(['status:undefined:undefined', 'event:Forbidden']);
    expect(first.statuses[0]?.conditions?.find((c) => c.type === AUTHORIZED_CONDITION)).toMatchObject({
      status: 'False',
      reason: 'Forbidden',
      message:
        "the API server forbids the agent to list and watch pods; its caches no longer follow the cluster, so it acts on no ExtendedDeployment until it may. Grant it in the agent's ClusterRole (or Role)",
    });
    // Looked at again while still refused: nothing more is written or recorded.
    const again = recorder();
    await podsRefused(world({ status: first.statuses[0] }), again.ports).reconcile(edKeyOf('shop', 'web'));
    expect(again.calls).toEqual([]);
    // Allowed again: the planner acts and its status has no such condition.
    const granted = recorder();
    await blindTo([])(world({ status: first.statuses[0] }), granted.ports).reconcile(edKeyOf('shop', 'web'));
    expect(granted.calls).toContain('openGate:web-amd-c');
    expect(granted.statuses.at(-1)?.conditions?.map((c) => c.type)).not.toContain(AUTHORIZED_CONDITION);
  });

  it("reports on the object the cache shows once it is newer than the agent's own last status write", async () => {
    const caches = world();
    const cached = caches.extendedDeployments.get('web', 'shop')!;
    // The agent's last status write was answered with version 9; Git has changed the object since: the cache shows 10.
    const ownWrites = new OwnWrites();
    const answered = { ...cached, metadata: { ...cached.metadata, resourceVersion: '9' } };
    ownWrites.record('shop/web', [{ kind: ED_KIND, name: 'web', replaced: '8', written: answered }], NOW);
    const { ports } = recorder();
    const versions: (string | undefined)[] = [];
    const writeStatus: ReconcilerPorts['writeStatus'] = (ed: ExtendedDeploymentObject, status) => {
      versions.push(ed.metadata?.resourceVersion);
      return ports.writeStatus(ed, status);
    };
    const reconciler = new Reconciler({
      caches,
      ports: { ...ports, writeStatus },
      clock: clock(),
      log: silentLogger,
      ownWrites,
      forbiddenReads: () => [{ verb: 'watch', resource: 'pods' }],
    });
    expect(await reconciler.reconcile(edKeyOf('shop', 'web'))).toEqual({ outcome: 'blocked', requeueAfterMs: FORBIDDEN_READ_RETRY_MS });
    // Written on version 10: on 9 the API server would answer 409 at every retry.
    expect(versions).toEqual(['10']);
  });
});
