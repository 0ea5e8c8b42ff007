import type { V1Service } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import type { ExtendedDeploymentStatus } from '../core/api/extended-deployment.js';
import { NAME_LABEL, REGION_LABEL, REVISION_LABEL } from '../core/labels.js';
import { controlledBy } from '../core/kube/test-support.js';
import { observe } from '../core/observe/observe.js';
import type { RolloutAction } from '../core/rollout/actions.js';
import type { TrafficWrite } from '../core/traffic/plan.js';
import type { AnalysisQuery } from '../core/traffic/observation.js';
import type { AgentCaches, CachedRoute } from './informers.js';
import { edKeyOf } from './keys.js';
import { AgentMetrics } from './metrics.js';
import { Reconciler, TRAFFIC_SYNC_RETRY_MS, type ReconcilerPorts } from './reconciler.js';
import { agentCaches, ERRORS, recorder, STANDING_MARK, trafficCache, webExtendedDeployment } from './reconciler-test-support.js';
import { FakeClock } from './runtime/clock.js';
import { jsonLogger, silentLogger } from './runtime/log.js';

// The reconciler's side of traffic shifting: what it reads for core (agent/traffic-observation.ts) and how it performs
// what core plans: traffic writes in a lane of their own, forbidden reads reported, samples counted.

const NOW = Date.UTC(2026, 0, 1);
const regions = [
  { apiVersion: 'extendeddeployment.io/v1beta1', kind: 'DeployRegion', metadata: { name: 'amd' }, spec: { matchLabels: { 'kubernetes.io/arch': 'amd64' } } },
];

/**
 * ExtendedDeployment shop/web in region amd with `traffic`, 4 replicas in groups of 2: every pod at the rendered
 * revision (nothing to roll out), or with `midRollout` two new pods Ready and two old ones, group 1 done.
 */
function world(
  traffic: Record<string, unknown>,
  o: {
    midRollout?: boolean;
    status?: (rolloutRevision: string) => ExtendedDeploymentStatus;
    services?: V1Service[];
    route?: CachedRoute;
    servicesState?: { synced?: boolean; forbidden?: 'list' | 'watch' };
    routesState?: { synced?: boolean; forbidden?: 'list' | 'watch' };
  } = {},
) {
  const spec = { replicas: 4, regions: [{ name: 'amd' }], strategy: { minReadySeconds: 0, rolloutStrategy: 'Group', batchSize: 2, traffic } };
  const { revisionOf } = webExtendedDeployment({ regions, image: 'web:2', spec });
  const revision = revisionOf('amd');
  const revisions = o.midRollout ? [revision, revision, 'old', 'old'] : [revision, revision, revision, revision];
  const pods = revisions.map((rev, i) => ({
    metadata: {
      name: `web-amd-${i}`,
      namespace: 'shop',
      uid: `uid-${i}`,
      resourceVersion: '1',
      labels: { [NAME_LABEL]: 'web', [REGION_LABEL]: 'amd', [REVISION_LABEL]: rev },
      ...(!o.midRollout && { annotations: STANDING_MARK }),
      ownerReferences: controlledBy('web-amd'),
    },
    spec: { nodeName: 'node' },
    status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: '2025-12-31T00:00:00Z' }] },
  }));
  const replicaSets = [
    {
      metadata: { name: 'web-amd', namespace: 'shop', resourceVersion: '1', labels: { [NAME_LABEL]: 'web' } },
      spec: { replicas: 4, template: { metadata: { labels: { [REVISION_LABEL]: revision } } } },
    },
  ];
  // The rollout revision as observe derives it, for a status that belongs to this rollout.
  const first = webExtendedDeployment({ regions, image: 'web:2', spec }).ed;
  const observed = observe(first, regions, { replicaSets, deployments: [], statefulSets: [] }, pods, NOW);
  const rolloutRevision = observed.ok ? observed.input.rolloutRevision : '';
  const { ed } = webExtendedDeployment({ regions, image: 'web:2', spec, ...(o.status && { status: o.status(rolloutRevision) }) });
  const caches = agentCaches(
    { eds: [ed], regions, replicaSets, pods },
    {
      traffic: {
        services: trafficCache('services', o.services ?? [], o.servicesState),
        routes: trafficCache('httproutes', o.route ? [o.route] : [], o.routesState),
        routesServed: () => true,
      },
    },
  );
  return { caches, revision, rolloutRevision };
}

/** The recorder's ports, with traffic writes recorded by kind and name, in `calls`. */
function ports(queryAnalysis?: ReconcilerPorts['queryAnalysis']) {
  const r = recorder();
  const name = (w: TrafficWrite) => (w.kind === 'applyService' ? w.service.metadata.name : w.kind === 'applyRoute' ? w.route.metadata.name : w.name);
  const actions: RolloutAction[] = [];
  const p: ReconcilerPorts = {
    ...r.ports,
    async performAction(ns, kind, action) {
      actions.push(action);
      if (action.kind === 'traffic') {
        r.calls.push(`${action.write.kind}:${name(action.write)}`);
        return undefined;
      }
      return r.ports.performAction(ns, kind, action);
    },
    ...(queryAnalysis && { queryAnalysis }),
  };
  return { ...r, actions, ports: p };
}

const key = edKeyOf('shop', 'web');
const reconcile = (caches: AgentCaches, p: ReconcilerPorts, metrics?: AgentMetrics) =>
  new Reconciler({ caches, ports: p, clock: new FakeClock(NOW), log: silentLogger, ...(metrics && { metrics }) }).reconcile(key);

describe('Reconciler: traffic shifting (mode Weighted)', () => {
  const WEIGHTED = { mode: 'Weighted', route: { parentRefs: [{ name: 'public' }] } };

  it("creates the revision's Service, then the route that sends to it, as traffic actions of no region", async () => {
    const { caches, revision } = world(WEIGHTED);
    const r = ports();
    const result = await reconcile(caches, r.ports);
    expect(result.outcome).toBe('synced');
    const traffic = r.calls.filter((c) => c.startsWith('apply') || c.startsWith('delete'));
    expect(traffic).toEqual([`applyService:web-${revision}`, 'applyRoute:web']);
    const route = r.actions.flatMap((a) => (a.kind === 'traffic' && a.write.kind === 'applyRoute' ? [a.write.route] : []))[0];
    expect(route?.spec.rules[0]?.backendRefs).toEqual([{ group: '', kind: 'Service', name: `web-${revision}`, port: 80, weight: 10000 }]);
    // status.traffic records the weights before the route changes.
    expect(r.calls.indexOf(`applyService:web-${revision}`)).toBeGreaterThan(r.calls.findIndex((c) => c.startsWith('status:')));
    expect(r.statuses[0]?.traffic?.weights).toEqual([{ revision, weight: 10000 }]);
  });

  it('logs a traffic action by what it writes and its name, not the whole object', async () => {
    const lines: string[] = [];
    const r = ports();
    const log = jsonLogger({ write: (line) => lines.push(line) });
    await new Reconciler({ caches: world(WEIGHTED).caches, ports: r.ports, clock: new FakeClock(NOW), log }).reconcile(key);
    const actions = lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l['msg'] === 'action' && l['kind'] === 'traffic');
    expect(actions.map((a) => [a['write'], a['name']])).toEqual([
      ['applyService', expect.stringMatching(/^web-/)],
      ['applyRoute', 'web'],
    ]);
    expect(actions.every((a) => !('service' in a) && !('route' in a))).toBe(true);
  });

  it('plans on the route and Services the caches show: once they are as written and accepted, nothing is written again', async () => {
    const first = ports();
    await reconcile(world(WEIGHTED).caches, first.ports);
    const written = first.actions.flatMap((a) => (a.kind === 'traffic' ? [a.write] : []));
    const services = written.flatMap((w) => (w.kind === 'applyService' ? [w.service as unknown as V1Service] : []));
    const applied = written.flatMap((w) => (w.kind === 'applyRoute' ? [w.route] : []))[0]!;
    const route: CachedRoute = {
      ...applied,
      metadata: { ...applied.metadata, generation: 1 },
      status: {
        parents: [
          {
            parentRef: { group: 'gateway.networking.k8s.io', kind: 'Gateway', name: 'public' },
            controllerName: 'example.com/gateway',
            conditions: [{ type: 'Accepted', status: 'True', observedGeneration: 1 }],
          },
        ],
      },
    } as CachedRoute;
    const status = first.statuses.at(-1)!;
    const again = ports();
    await reconcile(world(WEIGHTED, { services, route, status: () => status }).caches, again.ports);
    expect(again.actions).toEqual([]);
    // The step is applied: the status says so (the barrier may pass).
    expect(again.statuses.at(-1)?.traffic?.appliedGeneration).toBe(1);
  });

  it("never writes over a Service of that name that is someone else's", async () => {
    const { revision } = world(WEIGHTED);
    const { caches } = world(WEIGHTED, {
      services: [{ metadata: { name: `web-${revision}`, namespace: 'shop', labels: { app: 'someone-else' } }, spec: { selector: { app: 'x' } } }],
    });
    const r = ports();
    await reconcile(caches, r.ports);
    expect(r.actions.filter((a) => a.kind === 'traffic')).toEqual([]);
    expect(r.statuses.at(-1)?.traffic?.message).toContain(`web-${revision}`);
  });

  it('reports a forbidden read of routes or Services on the object (Authorized=False) and plans nothing', async () => {
    const { caches } = world(WEIGHTED, { routesState: { forbidden: 'list', synced: false } });
    const r = ports();
    const result = await reconcile(caches, r.ports);
    expect(result.outcome).toBe('blocked');
    expect(r.actions).toEqual([]);
    const authorized = r.statuses.at(-1)?.conditions?.find((c) => c.type === 'Authorized');
    expect(authorized?.status).toBe('False');
    expect(authorized?.message).toContain('httproutes');
    expect(r.calls).toContain('event:Forbidden');
  });

  it('reports a forbidden traffic write (an install without `traffic`) on the object, naming the resource', async () => {
    const { caches } = world(WEIGHTED);
    const r = ports();
    const refusing: ReconcilerPorts = {
      ...r.ports,
      async performAction(ns, kind, action) {
        if (action.kind === 'traffic') throw Object.assign(new Error('HTTP 403'), { code: 403, body: { kind: 'Status', code: 403, reason: 'Forbidden' } });
        return r.ports.performAction(ns, kind, action);
      },
    };
    const metrics = new AgentMetrics({ queueDepth: () => 0 });
    await expect(reconcile(caches, refusing, metrics)).rejects.toThrow('HTTP 403');
    const authorized = r.statuses.at(-1)?.conditions?.find((c) => c.type === 'Authorized');
    expect(authorized?.status).toBe('False');
    expect(authorized?.message).toContain('services');
    const forbidden = (await metrics.registry.getSingleMetric('extendeddeployment_agent_forbidden_total')?.get())?.values;
    expect(forbidden?.map((v) => v.labels)).toEqual([{ verb: 'patch', resource: 'services' }]);
  });

  it('waits (without writing) for traffic caches that have not synced, and looks again soon', async () => {
    const { caches } = world(WEIGHTED, { servicesState: { synced: false } });
    const r = ports();
    expect(await reconcile(caches, r.ports)).toEqual({ outcome: 'stale', requeueAfterMs: TRAFFIC_SYNC_RETRY_MS });
    expect(r.calls).toEqual([]);
  });
});

describe('Reconciler: analysis', () => {
  const ANALYSIS = { mode: 'Replicas', analysis: { prometheus: { address: 'http://prometheus:9090' }, intervalSeconds: 30, metrics: [ERRORS] } };
  /** Group 1 of the rollout done and being analysed, its next sample due. */
  const analysing = (rolloutRevision: string): ExtendedDeploymentStatus => ({
    observedGeneration: 1,
    phase: 'Progressing',
    revision: rolloutRevision,
    rolloutRegions: ['amd'],
    currentGroup: 1,
    totalGroups: 2,
    lastGroupStartTime: new Date(NOW - 600_000).toISOString(),
    analysis: {
      revision: rolloutRevision,
      group: 1,
      outcome: 'Running',
      startedAt: new Date(NOW - 60_000).toISOString(),
      nextSampleAt: new Date(NOW - 1).toISOString(),
    },
  });

  it('sends the queries core finds due, plans on their answers, and counts the samples the written status records', async () => {
    const { caches } = world(ANALYSIS, { midRollout: true, status: analysing });
    const asked: AnalysisQuery[] = [];
    const r = ports(async (queries) => {
      asked.push(...queries);
      return queries.map((query) => ({
        query,
        body: { status: 'success', data: { resultType: 'vector', result: [{ metric: {}, value: [0, '0.5'] }] } },
        at: NOW,
      }));
    });
    const metrics = new AgentMetrics({ queueDepth: () => 0 });
    await reconcile(caches, r.ports, metrics);
    expect(asked.map((q) => [q.metric, q.role])).toEqual([['errors', 'candidate']]);
    expect(asked[0]?.url).toMatch(/^http:\/\/prometheus:9090\/api\/v1\/query\?query=/);
    // The sample is recorded in status, and counted once it is written.
    const recorded = r.statuses.at(-1)?.analysis?.metrics?.[0]?.samples?.at(-1);
    expect(recorded).toMatchObject({ value: 0.5, verdict: 'Success' });
    const counted = (await metrics.registry.getSingleMetric('extendeddeployment_analysis_samples_total')?.get())?.values;
    expect(Object.fromEntries((counted ?? []).map((v) => [v.labels['result'], v.value]))).toEqual({ Success: 1, Failure: 0, NoData: 0, Error: 0 });
  });

  it('counts nothing when the status recording the samples could not be written', async () => {
    const { caches } = world(ANALYSIS, { midRollout: true, status: analysing });
    const failing = recorder(true);
    const p: ReconcilerPorts = {
      ...failing.ports,
      queryAnalysis: async (queries) => queries.map((query) => ({ query, error: 'connection refused', at: NOW })),
    };
    const metrics = new AgentMetrics({ queueDepth: () => 0 });
    await expect(reconcile(caches, p, metrics)).rejects.toThrow('conflict');
    const counted = (await metrics.registry.getSingleMetric('extendeddeployment_analysis_samples_total')?.get())?.values;
    expect((counted ?? []).every((v) => v.value === 0)).toBe(true);
  });
});
