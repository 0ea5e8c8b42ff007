import type { V1Service } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import type { ExtendedDeploymentStatus } from '../core/api/extended-deployment.js';
import { podState, rolloutInput, webEd } from '../core/rollout/test-support.js';
import type { RolloutInput } from '../core/rollout/planner.js';
import type { AnalysisQuery } from '../core/traffic/observation.js';
import type { CachedRoute, TrafficCaches } from './informers.js';
import { ERRORS, trafficCache } from './reconciler-test-support.js';
import { observeTraffic } from './traffic-observation.js';

const T0 = Date.UTC(2026, 10, 29, 10);
const GATEWAY = { parentRefs: [{ name: 'public' }] };

const svc = (name: string, namespace = 'shop'): V1Service => ({ metadata: { name, namespace } });
const route = (name: string, namespace = 'shop'): CachedRoute => ({ metadata: { name, namespace, generation: 3 } });

function caches(
  o: { services?: Parameters<typeof trafficCache>[2]; routes?: Parameters<typeof trafficCache>[2]; served?: boolean } = {},
): TrafficCaches & { reads: string[] } {
  const reads: string[] = [];
  const services = trafficCache('services', [svc('web-r1'), svc('web-r2'), svc('web'), svc('webshop-r1'), svc('db'), svc('web-r3', 'pay')], o.services);
  const routes = trafficCache('httproutes', [route('web'), route('web', 'pay'), route('other')], o.routes);
  return {
    reads,
    services: { ...services, list: (ns) => (reads.push(`services ${ns}`), services.list(ns)) },
    routes: { ...routes, get: (name, ns) => (reads.push(`route ${ns}/${name}`), routes.get(name, ns)) },
    routesServed: () => o.served ?? true,
  };
}

const weighted = (analysis?: Record<string, unknown>) =>
  webEd([{ name: 'a', replicas: 4 }], {
    rolloutStrategy: 'Group',
    batchSize: 2,
    traffic: { mode: 'Weighted', route: GATEWAY, ...(analysis && { analysis }) },
  });
const replicas = (analysis?: Record<string, unknown>) => webEd([{ name: 'a', replicas: 4 }], { traffic: { mode: 'Replicas', ...(analysis && { analysis }) } });

/** Region a in group 1 of rollout R1 (two new pods Ready, two old), with `status`. */
function input(ed: ReturnType<typeof webEd>, status?: ExtendedDeploymentStatus): RolloutInput {
  const ready = { ready: true, readySince: T0 - 3_600_000 };
  const pods = [podState('n1', ready), podState('n2', ready), podState('o1', { ...ready, revision: 'old' }), podState('o2', { ...ready, revision: 'old' })];
  return rolloutInput(
    ed,
    [{ name: 'a', desired: 4, targetRevision: 'new', workload: { name: 'web-a', templateRevision: 'new', replicas: 4 }, pods }],
    T0,
    status,
  );
}

/** Group 1 of R1 being analysed, its next sample due at `due`. */
const analysing = (due: number): ExtendedDeploymentStatus => ({
  observedGeneration: 1,
  phase: 'Progressing',
  revision: 'R1',
  rolloutRegions: ['a'],
  currentGroup: 1,
  totalGroups: 2,
  lastGroupStartTime: new Date(T0 - 600_000).toISOString(),
  analysis: { revision: 'R1', group: 1, outcome: 'Running', startedAt: new Date(T0 - 60_000).toISOString(), nextSampleAt: new Date(due).toISOString() },
});

/** A query port that records what it was asked and answers each query with an empty vector. */
function prometheus() {
  const asked: AnalysisQuery[][] = [];
  const query = async (queries: readonly AnalysisQuery[]) => {
    asked.push([...queries]);
    return queries.map((q) => ({ query: q, body: { status: 'success', data: { resultType: 'vector', result: [] } }, at: T0 + 5 }));
  };
  return { asked, query };
}

describe('observeTraffic: what the agent reads for spec.strategy.traffic', () => {
  it('leaves an ExtendedDeployment without a traffic strategy as it is, reading nothing', async () => {
    const c = caches({ services: { forbidden: 'list' } });
    const p = prometheus();
    const plain = input(webEd([{ name: 'a', replicas: 4 }]));
    const read = await observeTraffic(plain, c, p.query);
    expect(read).toEqual({ kind: 'observed', input: plain });
    expect(c.reads).toEqual([]);
    expect(p.asked).toEqual([]);
  });

  it('passes the route named like the ExtendedDeployment and the Services named for it, of its own namespace only', async () => {
    const p = prometheus();
    const read = await observeTraffic(input(weighted()), caches({ served: true }), p.query);
    expect(read.kind).toBe('observed');
    const traffic = read.kind === 'observed' ? read.input.traffic : undefined;
    expect(traffic?.route).toEqual(route('web'));
    // web-r3 is in another namespace; webshop-r1 and db are another's; `web` itself is the Replicas-mode Service's name.
    expect(traffic?.services.map((s) => s.metadata?.name)).toEqual(['web-r1', 'web-r2']);
    expect(traffic?.routesServed).toBe(true);
    // Nothing due: no query sent.
    expect(traffic?.answers).toEqual([]);
    expect(p.asked).toEqual([]);
  });

  it('tells core when the HTTPRoute API is not served', async () => {
    const read = await observeTraffic(input(weighted()), caches({ served: false }), prometheus().query);
    expect(read.kind === 'observed' && read.input.traffic?.routesServed).toBe(false);
  });

  it('mode Weighted: a forbidden read is reported rather than planned on, an incomplete cache is waited for', async () => {
    expect(await observeTraffic(input(weighted()), caches({ routes: { forbidden: 'watch' } }), prometheus().query)).toEqual({
      kind: 'forbidden',
      reads: [{ verb: 'watch', resource: 'httproutes' }],
    });
    expect(await observeTraffic(input(weighted()), caches({ services: { forbidden: 'list', synced: false } }), prometheus().query)).toEqual({
      kind: 'forbidden',
      reads: [{ verb: 'list', resource: 'services' }],
    });
    expect(await observeTraffic(input(weighted()), caches({ routes: { synced: false } }), prometheus().query)).toEqual({
      kind: 'unsynced',
      resources: ['httproutes'],
    });
  });

  it('mode Replicas plans without the caches it cannot read (it then sees nothing to delete), and its analysis still runs', async () => {
    const p = prometheus();
    const spec = replicas({ prometheus: { address: 'http://prometheus:9090' }, metrics: [ERRORS] });
    const read = await observeTraffic(input(spec, analysing(T0 - 1)), caches({ services: { forbidden: 'list' }, routes: { synced: false } }), p.query);
    expect(read.kind).toBe('observed');
    const traffic = read.kind === 'observed' ? read.input.traffic : undefined;
    expect(traffic?.route).toBeUndefined();
    expect(traffic?.services).toEqual([]);
    expect(traffic?.answers.map((a) => a.query.metric)).toEqual(['errors']);
  });

  it('sends the analysis queries due now, once, and passes their answers in order', async () => {
    const p = prometheus();
    const spec = weighted({ prometheus: { address: 'http://prometheus:9090', timeoutSeconds: 7 }, metrics: [ERRORS] });
    const read = await observeTraffic(input(spec, analysing(T0 - 1)), caches(), p.query);
    expect(p.asked).toHaveLength(1);
    expect(p.asked[0]).toEqual([
      {
        metric: 'errors',
        role: 'candidate',
        query: 'sum(rate(errors{service="web-new"}[2m]))',
        url: `http://prometheus:9090/api/v1/query?query=${encodeURIComponent('sum(rate(errors{service="web-new"}[2m]))')}`,
        timeoutSeconds: 7,
      },
    ]);
    expect(read.kind === 'observed' && read.input.traffic?.answers).toEqual([
      { query: p.asked[0]![0], body: { status: 'success', data: { resultType: 'vector', result: [] } }, at: T0 + 5 },
    ]);
    // Not yet due: nothing is sent.
    const early = prometheus();
    await observeTraffic(input(spec, analysing(T0 + 1_000)), caches(), early.query);
    expect(early.asked).toEqual([]);
  });
});
