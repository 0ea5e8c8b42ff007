import { describe, expect, it } from 'vitest';
import { trafficStrategy, type TrafficStrategyInput } from '../api/traffic.js';
import { NAME_LABEL, REVISION_LABEL } from '../labels.js';
import type { ObservedRoute } from './objects.js';
import { planTraffic, type LiveRevision, type ObservedTrafficService, type TrafficLook, type TrafficPlan } from './plan.js';

const T0 = Date.UTC(2026, 10, 28, 10);
const S = 1000;
const at = (ms: number) => new Date(ms).toISOString();
const OWNER = { name: 'web', namespace: 'shop', uid: 'u-1' };
const NEW = 'aaaaaaaaaa';
const OLD = 'bbbbbbbbbb';
const GATEWAY = { parentRefs: [{ name: 'public', namespace: 'gateways' }] };

const traffic = (over: TrafficStrategyInput = {}) => trafficStrategy.parse({ mode: 'Weighted', route: GATEWAY, steps: [10, 50], ...over });
const rev = (revision: string, target: boolean, ready: number, over: Partial<LiveRevision> = {}): LiveRevision => ({
  revision,
  target,
  ready,
  pods: ready,
  ...over,
});

/** Group 1 of rollout R1, its new pod not Ready yet, ten old pods. */
const look = (over: Partial<TrafficLook> = {}): TrafficLook => ({
  owner: OWNER,
  traffic: traffic(),
  rolloutRevision: 'R1',
  group: 1,
  groupReady: false,
  revisions: [rev(NEW, true, 0, { pods: 1 }), rev(OLD, false, 10)],
  route: undefined,
  services: [],
  status: undefined,
  hold: false,
  shiftBack: false,
  now: T0,
  ...over,
});

/** The cluster after `plan`'s writes: its route at `generation`, accepted by the Gateway at `acceptedGeneration`. */
function afterWrites(plan: TrafficPlan, generation: number, acceptedGeneration = generation, before: Partial<Pick<TrafficLook, 'route' | 'services'>> = {}) {
  const written = plan.writes.flatMap((w) => (w.kind === 'applyRoute' ? [w.route] : []))[0];
  const base = written ?? before.route;
  const route: ObservedRoute | undefined = base && {
    ...base,
    metadata: { ...base.metadata, generation, ownerReferences: [...(base.metadata?.ownerReferences ?? [])] },
    status: {
      parents: [
        {
          parentRef: { group: 'gateway.networking.k8s.io', kind: 'Gateway', namespace: 'gateways', name: 'public' },
          controllerName: 'traefik.io/gateway-controller',
          conditions: [
            { type: 'Accepted', status: 'True', observedGeneration: acceptedGeneration },
            { type: 'ResolvedRefs', status: 'True', observedGeneration: acceptedGeneration },
          ],
        },
      ],
    },
  };
  const deleted = new Set(plan.writes.flatMap((w) => (w.kind === 'deleteService' ? [w.name] : [])));
  const applied = plan.writes.flatMap((w) => (w.kind === 'applyService' ? [w.service] : []));
  const names = new Set(applied.map((s) => s.metadata?.name));
  const services: ObservedTrafficService[] = [
    ...(before.services ?? []).filter((s) => !names.has(s.metadata?.name ?? '') && !deleted.has(s.metadata?.name ?? '')),
    ...applied,
  ];
  return { route, services };
}

const weightsOf = (plan: TrafficPlan) => Object.fromEntries(plan.weights.map((w) => [w.revision, w.weight]));
const kinds = (plan: TrafficPlan) =>
  plan.writes.map((w) => `${w.kind} ${w.kind === 'applyService' ? w.service.metadata.name : w.kind === 'applyRoute' ? w.route.metadata.name : w.name}`);

describe('planTraffic, mode Weighted', () => {
  it('first look: the revision Services, then the route with all the weight on the Ready old pods, the status first', () => {
    const plan = planTraffic(look());
    expect(kinds(plan)).toEqual([`applyService web-${NEW}`, `applyService web-${OLD}`, 'applyRoute web']);
    expect(weightsOf(plan)).toEqual({ [NEW]: 0, [OLD]: 10000 });
    expect(plan.statusFirst).toBe(true);
    expect(plan.status).toEqual({ revision: 'R1', group: 0, weights: plan.weights, message: 'writing the route' });
    expect(plan.applied).toBe(false);
    expect(plan.barrierMayAdvance).toBe(false);
  });

  it('walks a group: weight only once its pods are Ready, the barrier only once the gateway accepted the step', () => {
    const first = planTraffic(look());
    const cluster1 = afterWrites(first, 1);
    // Same look, the route accepted: nothing to write, applied, the pods of group 1 are not Ready yet.
    const settled = planTraffic(look({ ...cluster1, status: first.status }));
    expect(settled.writes).toEqual([]);
    expect(settled.applied).toBe(true);
    expect(settled.status?.appliedGeneration).toBe(1);
    expect(settled.statusFirst).toBe(false);
    expect(settled.barrierMayAdvance).toBe(false);
    // Group 1's pod Ready: steps[0] = 10 %, a new route; the barrier waits for the gateway.
    const revisions = [rev(NEW, true, 1), rev(OLD, false, 10)];
    const step = planTraffic(look({ ...cluster1, status: settled.status, revisions, groupReady: true }));
    expect(weightsOf(step)).toEqual({ [NEW]: 1000, [OLD]: 9000 });
    expect(kinds(step)).toEqual(['applyRoute web']);
    expect(step.statusFirst).toBe(true);
    expect(step.status?.group).toBe(1);
    expect(step.barrierMayAdvance).toBe(false);
    // Written (generation 2) but the gateway still reports generation 1: not applied.
    const lagging = planTraffic(look({ ...afterWrites(step, 2, 1, cluster1), status: step.status, revisions, groupReady: true }));
    expect(lagging.writes).toEqual([]);
    expect(lagging.applied).toBe(false);
    expect(lagging.barrierMayAdvance).toBe(false);
    expect(lagging.status?.message).toBe(
      'waiting for the route: Gateway gateways/public (traefik.io/gateway-controller) Accepted describes generation 1, not 2',
    );
    // Accepted at generation 2: the barrier may pass.
    const done = planTraffic(look({ ...afterWrites(step, 2, 2, cluster1), status: step.status, revisions, groupReady: true }));
    expect(done.applied).toBe(true);
    expect(done.barrierMayAdvance).toBe(true);
    expect(done.status?.appliedGeneration).toBe(2);
  });

  it('never gives weight to a canary without Ready endpoints, even when its group counts as Ready', () => {
    const plan = planTraffic(look({ groupReady: true, revisions: [rev(NEW, true, 0, { pods: 1 }), rev(OLD, false, 10)] }));
    expect(weightsOf(plan)).toEqual({ [NEW]: 0, [OLD]: 10000 });
  });

  it('past the steps, the canary follows its share of Ready pods', () => {
    const plan = planTraffic(look({ group: 3, groupReady: true, revisions: [rev(NEW, true, 6), rev(OLD, false, 4)] }));
    expect(weightsOf(plan)).toEqual({ [NEW]: 6000, [OLD]: 4000 });
  });

  it('held (paused, aborted), the canary keeps the share recorded for this rollout, re-split by Ready pods', () => {
    const status = {
      revision: 'R1',
      group: 1,
      weights: [
        { revision: NEW, weight: 1000 },
        { revision: OLD, weight: 9000 },
      ],
    };
    const held = planTraffic(look({ group: 2, groupReady: true, hold: true, status, revisions: [rev(NEW, true, 5), rev(OLD, false, 5)] }));
    expect(weightsOf(held)).toEqual({ [NEW]: 1000, [OLD]: 9000 });
    expect(held.barrierMayAdvance).toBe(false);
    // A share recorded for another rollout does not hold this one.
    const other = planTraffic(
      look({ group: 2, groupReady: true, hold: true, status: { ...status, revision: 'R0' }, revisions: [rev(NEW, true, 5), rev(OLD, false, 5)] }),
    );
    expect(weightsOf(other)).toEqual({ [NEW]: 5000, [OLD]: 5000 });
  });

  it('shifted back after a failed analysis: the canary at 0, its pods kept, the barrier closed', () => {
    const revisions = [rev(NEW, true, 2), rev(OLD, false, 8)];
    const plan = planTraffic(look({ groupReady: true, shiftBack: true, revisions }));
    expect(weightsOf(plan)).toEqual({ [NEW]: 0, [OLD]: 10000 });
    expect(plan.status?.shiftedBack).toBe(true);
    const settled = planTraffic(look({ ...afterWrites(plan, 1), groupReady: true, shiftBack: true, revisions, status: plan.status }));
    expect(settled.applied).toBe(true);
    expect(settled.barrierMayAdvance).toBe(false);
    // The canary at weight 0 does not drain: it waits for traffic, it is not leaving.
    expect(settled.drain.records).toEqual([]);
  });

  it('drains a leaving revision: weight 0 first, the drain recorded before any pod goes, its pods removable drainSeconds later', () => {
    const revisions = [rev(NEW, true, 10), rev(OLD, false, 2, { leaving: true })];
    const shift = planTraffic(look({ group: 3, groupReady: true, revisions }));
    expect(weightsOf(shift)).toEqual({ [NEW]: 10000, [OLD]: 0 });
    expect(shift.drain.removable).toEqual([]);
    const cluster = afterWrites(shift, 1);
    const started = planTraffic(look({ ...cluster, group: 3, groupReady: true, revisions, status: shift.status }));
    expect(started.drain.revisions).toEqual([{ revision: OLD, state: 'Draining', since: T0 }]);
    expect(started.status?.draining).toEqual([{ revision: OLD, since: at(T0) }]);
    expect(started.statusFirst).toBe(true);
    expect(started.drain.removable).toEqual([]);
    expect(started.wakeAt).toEqual([T0 + 30 * S]);
    const later = planTraffic(look({ ...cluster, group: 3, groupReady: true, revisions, status: started.status, now: T0 + 30 * S }));
    expect(later.drain.removable).toEqual([OLD]);
    expect(later.statusFirst).toBe(false);
  });

  it("deletes a gone revision's Service only once the route read no longer names it", () => {
    const both = planTraffic(look({ group: 3, groupReady: true, revisions: [rev(NEW, true, 10), rev(OLD, false, 2, { leaving: true })] }));
    const cluster = afterWrites(both, 1);
    // The old pods are gone; the route read still names web-OLD: rewrite the route, keep the Service.
    const gone = planTraffic(look({ ...cluster, group: 3, groupReady: true, revisions: [rev(NEW, true, 10)], status: both.status }));
    expect(kinds(gone)).toEqual(['applyRoute web']);
    // The route without it is in the cluster: now the Service goes.
    const after = afterWrites(gone, 2, 2, cluster);
    const cleanup = planTraffic(look({ ...after, group: 3, groupReady: true, revisions: [rev(NEW, true, 10)], status: gone.status }));
    expect(kinds(cleanup)).toEqual([`deleteService web-${OLD}`]);
  });

  it('re-applies a route whose template changed in Git; the step still counts as applied at the accepted generation', () => {
    const revisions = [rev(NEW, true, 1), rev(OLD, false, 9)];
    const first = planTraffic(look({ groupReady: true, revisions }));
    const cluster = afterWrites(first, 1);
    const plan = planTraffic(
      look({ ...cluster, groupReady: true, revisions, status: first.status, traffic: traffic({ route: { ...GATEWAY, hostnames: ['shop.example.com'] } }) }),
    );
    expect(kinds(plan)).toEqual(['applyRoute web']);
    expect(plan.applied).toBe(true);
    expect(plan.barrierMayAdvance).toBe(true);
  });

  it('updates a revision Service whose port changed in Git', () => {
    const first = planTraffic(look());
    const cluster = afterWrites(first, 1);
    const plan = planTraffic(look({ ...cluster, status: first.status, traffic: traffic({ service: { port: 8080 } }) }));
    expect(kinds(plan)).toEqual([`applyService web-${NEW}`, `applyService web-${OLD}`, 'applyRoute web']);
  });

  it.each<[string, Partial<TrafficLook>, string]>([
    [
      'a route from Git under the name',
      { route: { metadata: { name: 'web', namespace: 'shop', labels: { [NAME_LABEL]: 'web' } } } },
      'HTTPRoute shop/web exists',
    ],
    [
      'a Service someone else made under a revision Service name',
      { services: [{ metadata: { name: `web-${OLD}`, labels: { [REVISION_LABEL]: OLD } } }] },
      `Service shop/web-${OLD} exists`,
    ],
  ])('writes nothing when %s is in the way', (_, over, message) => {
    const plan = planTraffic(look({ groupReady: true, revisions: [rev(NEW, true, 1), rev(OLD, false, 9)], ...over }));
    expect(plan.problems).toHaveLength(1);
    expect(plan.problems[0]?.message).toContain(message);
    expect(plan.writes).toEqual([]);
    expect(plan.applied).toBe(false);
    expect(plan.barrierMayAdvance).toBe(false);
    expect(plan.status?.message).toContain(message);
  });
});

describe('planTraffic, mode Replicas', () => {
  const owned = { apiVersion: 'extendeddeployment.io/v1beta1', kind: 'ExtendedDeployment', name: 'web', uid: 'u-1', controller: true };
  const agentLabels = { 'app.kubernetes.io/managed-by': 'extendeddeployment-agent', [REVISION_LABEL]: OLD };

  it('writes no route and never holds the barrier', () => {
    const plan = planTraffic(look({ traffic: traffic({ mode: 'Replicas', steps: undefined }) }));
    expect(plan.writes).toEqual([]);
    expect(plan.barrierMayAdvance).toBe(true);
    expect(plan.status).toBeUndefined();
  });

  it('deletes what mode Weighted left, route first, and nothing Git or a GitOps engine claims', () => {
    const plan = planTraffic(
      look({
        traffic: traffic({ mode: 'Replicas', steps: undefined }),
        route: { metadata: { name: 'web', labels: { 'app.kubernetes.io/managed-by': 'extendeddeployment-agent' }, ownerReferences: [owned] } },
        services: [
          { metadata: { name: `web-${OLD}`, labels: agentLabels, ownerReferences: [owned] } },
          { metadata: { name: 'web', labels: { [NAME_LABEL]: 'web' } } },
          {
            metadata: {
              name: `web-${NEW}`,
              labels: agentLabels,
              annotations: { 'argocd.argoproj.io/tracking-id': 'shop:/Service:shop/web' },
              ownerReferences: [owned],
            },
          },
        ],
      }),
    );
    expect(kinds(plan)).toEqual(['deleteRoute web', `deleteService web-${OLD}`]);
  });

  it("leaves Git's route alone", () => {
    const plan = planTraffic(
      look({ traffic: traffic({ mode: 'Replicas', steps: undefined }), route: { metadata: { name: 'web', labels: { [NAME_LABEL]: 'web' } } } }),
    );
    expect(plan.writes).toEqual([]);
  });
});
