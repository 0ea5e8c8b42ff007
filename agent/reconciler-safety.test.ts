// The reconciler on specs that must be reported, not acted on: nesting past core's limit, and workload names that
// collide with another ExtendedDeployment's. Same level as reconciler.test.ts: fixed caches, recorded writes.
import { describe, expect, it } from 'vitest';
import type { ExtendedDeploymentStatus } from '../core/api/extended-deployment.js';
import { MAX_NESTING } from '../core/nesting.js';
import { FakeClock } from './runtime/clock.js';
import type { AgentCaches } from './informers.js';
import { silentLogger } from './runtime/log.js';
import type { DeployRegionObject, ExtendedDeploymentObject } from '../core/kube/objects.js';
import { edKeyOf, type EdKey } from './keys.js';
import { Reconciler } from './reconciler.js';
import { cache, edCache, recorder } from './reconciler-test-support.js';

const zoneRegion = (name: string): DeployRegionObject => ({
  apiVersion: 'extendeddeployment.io/v1beta1',
  kind: 'DeployRegion',
  metadata: { name },
  spec: { matchLabels: { zone: name } },
});

/** An ExtendedDeployment as the API server stores it, applied without rendering; `x` goes into its container. */
function edObject(
  name: string,
  namespace: string,
  regions: string[],
  options: { x?: unknown; status?: ExtendedDeploymentStatus } = {},
): ExtendedDeploymentObject {
  return {
    apiVersion: 'extendeddeployment.io/v1beta1',
    kind: 'ExtendedDeployment',
    metadata: { name, namespace, uid: `uid-${name}`, resourceVersion: '10', generation: 1 },
    spec: {
      replicas: 2,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: { containers: [{ name: 'app', image: 'web:1', ...(options.x !== undefined && { x: options.x }) }] },
      },
      regions: regions.map((region) => ({ name: region })),
    },
    ...(options.status && { status: options.status }),
  };
}

function caches(eds: ExtendedDeploymentObject[], regions: DeployRegionObject[]): AgentCaches {
  return {
    // A look reads the ExtendedDeployments whose names may collide with its own from the index, never by listing its
    // namespace (N looks would cost N² in all).
    extendedDeployments: { ...edCache(eds), list: () => expect.fail('a look listed the ExtendedDeployments') },
    deployRegions: cache(regions),
    replicaSets: cache([]),
    deployments: cache([]),
    statefulSets: cache([]),
    controllerRevisions: cache([]),
    pods: cache([]),
    nodes: cache([]),
  } as unknown as AgentCaches;
}

async function reconcile(key: EdKey, eds: ExtendedDeploymentObject[], regions: DeployRegionObject[]) {
  const recorded = recorder();
  const reconciler = new Reconciler({ caches: caches(eds, regions), ports: recorded.ports, clock: new FakeClock(Date.UTC(2026, 0, 1)), log: silentLogger });
  return { result: await reconciler.reconcile(key), ...recorded };
}

describe('Reconciler on a spec nested past the limit', () => {
  it('marks a template 2,000 levels deep invalid (condition with the path, one event) instead of throwing, and acts on nothing', async () => {
    let deep: Record<string, unknown> = {};
    for (let i = 1; i < 2_000; i++) deep = { a: deep };
    const regions = [zoneRegion('amd')];
    const first = await reconcile(edKeyOf('shop', 'web'), [edObject('web', 'shop', ['amd'], { x: deep })], regions);
    expect(first.result).toEqual({ outcome: 'invalid' });
    expect(first.calls).toEqual(['status:undefined:undefined', 'event:InvalidSpec']);
    const condition = first.statuses[0]?.conditions?.[0];
    expect(condition).toMatchObject({ type: 'Valid', status: 'False', reason: 'InvalidSpec' });
    // The container's x is level 7: the first object past the limit is MAX_NESTING - 6 levels into it.
    expect(condition?.message).toBe(`spec.template.spec.containers[0].x${'.a'.repeat(MAX_NESTING - 6)}: nesting deeper than ${MAX_NESTING} levels`);
    // Looked at again (a resync, a pod event), the object is reported, not retried: nothing more is written.
    const again = await reconcile(edKeyOf('shop', 'web'), [edObject('web', 'shop', ['amd'], { x: deep, status: first.statuses[0] })], regions);
    expect(again.result).toEqual({ outcome: 'invalid' });
    expect(again.calls).toEqual([]);
  });
});

describe('Reconciler on workload names that collide', () => {
  const regions = [zoneRegion('b-c'), zoneRegion('c')];

  it('is in sync for either ExtendedDeployment alone', async () => {
    expect((await reconcile(edKeyOf('shop', 'a'), [edObject('a', 'shop', ['b-c'])], regions)).result.outcome).toBe('synced');
    expect((await reconcile(edKeyOf('shop', 'a-b'), [edObject('a-b', 'shop', ['c'])], regions)).result.outcome).toBe('synced');
  });

  it('marks both invalid, each naming the other, when both render a-b-c in one namespace, and acts on nothing', async () => {
    const both = [edObject('a', 'shop', ['b-c']), edObject('a-b', 'shop', ['c'])];
    const a = await reconcile(edKeyOf('shop', 'a'), both, regions);
    expect(a.result).toEqual({ outcome: 'invalid' });
    expect(a.calls).toEqual(['status:undefined:undefined', 'event:InvalidSpec']);
    expect(a.statuses[0]?.conditions?.[0]).toMatchObject({
      type: 'Valid',
      status: 'False',
      reason: 'InvalidSpec',
      message: "spec.regions[0].name: workload a-b-c collides with ExtendedDeployment shop/a-b's region c",
    });
    const ab = await reconcile(edKeyOf('shop', 'a-b'), both, regions);
    expect(ab.result).toEqual({ outcome: 'invalid' });
    expect(ab.statuses[0]?.conditions?.[0]?.message).toBe("spec.regions[0].name: workload a-b-c collides with ExtendedDeployment shop/a's region b-c");
  });

  it("lists a collision after the object's other problems", async () => {
    const both = [edObject('a', 'shop', ['b-c', 'missing']), edObject('a-b', 'shop', ['c'])];
    const a = await reconcile(edKeyOf('shop', 'a'), both, regions);
    expect(a.statuses[0]?.conditions?.[0]?.message).toBe(
      'spec.regions[1].name: DeployRegion "missing" not found (known: b-c, c); ' +
        "spec.regions[0].name: workload a-b-c collides with ExtendedDeployment shop/a-b's region c",
    );
  });

  it('lets the same workload name live in another namespace', async () => {
    const apart = [edObject('a', 'shop', ['b-c']), edObject('a-b', 'web', ['c'])];
    expect((await reconcile(edKeyOf('shop', 'a'), apart, regions)).result.outcome).toBe('synced');
    expect((await reconcile(edKeyOf('web', 'a-b'), apart, regions)).result.outcome).toBe('synced');
  });
});
