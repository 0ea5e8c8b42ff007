// The reconciler keeps each ExtendedDeployment's history (ControllerRevisions, decided by core/history/revisions.ts)
// after the rollout's own writes. Same level as reconciler.test.ts: fixed caches, recorded writes.
import { describe, expect, it } from 'vitest';
import type { HistoryAction } from '../core/history/revisions.js';
import { NAME_LABEL, REGION_LABEL, REVISION_LABEL, ROLLOUT_REVISION_ANNOTATION } from '../core/labels.js';
import type { RolloutAction } from '../core/rollout/actions.js';
import { SYNC_WAIT_REPORT_GRACE_MS } from '../core/rollout/status-pacing.js';
import type { ControllerRevisionObject } from '../core/history/entries.js';
import type { AgentCaches } from './informers.js';
import { edKeyOf } from './keys.js';
import { HISTORY_RETRY_MS, Reconciler, type ReconcilerPorts } from './reconciler.js';
import { archRegion, cache, edCache, recorder, webExtendedDeployment } from './reconciler-test-support.js';
import { FakeClock } from './runtime/clock.js';
import { silentLogger } from './runtime/log.js';

const NOW = Date.UTC(2026, 0, 1);
const regions = [archRegion('amd', 'amd64'), archRegion('arm', 'arm64')];

/**
 * ExtendedDeployment shop/web (image web:2, historyLimit `historyLimit`) whose ReplicaSets carry the rendered templates,
 * but `behind` (a region) which still carries the previous one; `revisions` are its ControllerRevisions' cache.
 */
function world(o: { behind?: string; historyLimit?: number; revisions?: ControllerRevisionObject[]; synced?: boolean } = {}) {
  const { ed, revisionOf } = webExtendedDeployment({
    regions,
    image: 'web:2',
    spec: { replicas: 4, regions: [{ name: 'amd' }, { name: 'arm' }], ...(o.historyLimit !== undefined && { historyLimit: o.historyLimit }) },
  });
  const replicaSets = ['amd', 'arm'].map((region) => {
    const [revision, image] = region === o.behind ? ['previous', 'web:1'] : [revisionOf(region), 'web:2'];
    return {
      metadata: { name: `web-${region}`, namespace: 'shop', resourceVersion: '1', labels: { [NAME_LABEL]: 'web' } },
      spec: { replicas: 2, template: { metadata: { labels: { app: 'web', [REVISION_LABEL]: revision } }, spec: { containers: [{ name: 'app', image }] } } },
    };
  });
  const revisions = cache(o.revisions ?? []);
  const caches = {
    extendedDeployments: edCache([ed]),
    deployRegions: cache(regions),
    replicaSets: cache(replicaSets),
    deployments: cache([]),
    statefulSets: cache([]),
    pods: cache([]),
    controllerRevisions: { ...revisions, synced: () => o.synced ?? true },
    nodes: cache([]),
  } as unknown as AgentCaches;
  return { caches, rollout: ed.metadata?.annotations?.[ROLLOUT_REVISION_ANNOTATION] ?? '', revisionOf };
}

/** A ControllerRevision of web's history (or, with `owner`, of another controller's) carrying web's name label. */
const revision = (name: string, number: number, owner = { kind: 'ExtendedDeployment', uid: 'uid-web' }): ControllerRevisionObject => ({
  metadata: {
    name,
    namespace: 'shop',
    uid: `uid-${name}`,
    labels: { [NAME_LABEL]: 'web' },
    ownerReferences: [{ apiVersion: 'x/v1', kind: owner.kind, name: 'web', uid: owner.uid, controller: true }],
  },
  revision: number,
});

const reconcile = async (caches: AgentCaches, ports: ReconcilerPorts) =>
  new Reconciler({ caches, ports, clock: new FakeClock(NOW), log: silentLogger }).reconcile(edKeyOf('shop', 'web'));

/** Actions in short: `create web-<rollout>#1`, `delete web-old`. */
const short = (actions: readonly HistoryAction[]) =>
  actions.map((a) => (a.kind === 'delete' ? `delete ${a.name}` : `${a.kind} ${a.object.metadata?.name}#${a.object.revision}`));

describe('Reconciler: history', () => {
  it('records the rollout revision once every workload carries its template, with the templates the workloads carry', async () => {
    const w = world();
    const { history, calls, ports } = recorder();
    await reconcile(w.caches, ports);
    expect(short(history)).toEqual([`create web-${w.rollout}#1`]);
    const [created] = history;
    expect(created?.kind === 'create' && created.object.data).toEqual({
      regions: ['amd', 'arm'].map((region) => ({
        region,
        revision: w.revisionOf(region),
        template: { metadata: { labels: { app: 'web', [REVISION_LABEL]: w.revisionOf(region) } }, spec: { containers: [{ name: 'app', image: 'web:2' }] } },
      })),
    });
    // The rollout went first, as without history.
    expect(calls[0]).toMatch(/^status:/);
  });

  it('creates a revision once while its cache does not show it yet, and plans on the answer until it does', async () => {
    const w = world();
    const { history, ports } = recorder();
    const reconciler = new Reconciler({ caches: w.caches, ports, clock: new FakeClock(NOW), log: silentLogger });
    await reconciler.reconcile(edKeyOf('shop', 'web'));
    // Looked at again before the history's watch brings the revision: the same create would be answered 409.
    await reconciler.reconcile(edKeyOf('shop', 'web'));
    expect(short(history)).toEqual([`create web-${w.rollout}#1`]);
  });

  it('records nothing while a workload still carries the previous template (Git not synced yet)', async () => {
    const { history, calls, ports } = recorder();
    const clock = new FakeClock(NOW);
    const reconciler = new Reconciler({
      caches: world({ behind: 'arm', historyLimit: 0, revisions: [revision('web-old', 1)] }).caches,
      ports,
      clock,
      log: silentLogger,
    });
    await reconciler.reconcile(edKeyOf('shop', 'web'));
    // Looked at again once the wait is reported (SYNC_WAIT_REPORT_GRACE_MS): still nothing recorded.
    clock.advance(SYNC_WAIT_REPORT_GRACE_MS);
    await reconciler.reconcile(edKeyOf('shop', 'web'));
    expect(history).toEqual([]);
    expect(calls).toContain('status:Progressing:0');
  });

  it("prunes beyond historyLimit, and never touches another controller's revision that carries the name label", async () => {
    const w = world({
      historyLimit: 1,
      revisions: [revision('web-old1', 1), revision('web-old2', 2), revision('web-sts', 0, { kind: 'StatefulSet', uid: 'uid-sts' })],
    });
    const { history, ports } = recorder();
    await reconcile(w.caches, ports);
    expect(short(history)).toEqual([`create web-${w.rollout}#3`, 'delete web-old1']);
  });

  it('decides nothing on a history cache that has not synced, and looks again', async () => {
    const { history, ports } = recorder();
    const result = await reconcile(world({ synced: false }).caches, ports);
    expect(history).toEqual([]);
    expect(result.requeueAfterMs).toBeLessThanOrEqual(HISTORY_RETRY_MS);
  });

  it("makes a partitioned region's keeper from the template its history recorded, and keeps that revision beyond historyLimit", async () => {
    // amd keeps 1 of its 2 pods at the previous revision; its ReplicaSet carries the new template already.
    const { ed, revisionOf } = webExtendedDeployment({
      regions,
      image: 'web:2',
      spec: { replicas: 4, historyLimit: 0, regions: [{ name: 'amd', partition: 1 }, { name: 'arm' }] },
    });
    const previous = { metadata: { labels: { app: 'web', [REVISION_LABEL]: 'previous' } }, spec: { containers: [{ name: 'app', image: 'web:1' }] } };
    const replicaSets = ['amd', 'arm'].map((region) => ({
      metadata: { name: `web-${region}`, namespace: 'shop', uid: `uid-rs-${region}`, resourceVersion: '1', labels: { [NAME_LABEL]: 'web' } },
      spec: {
        replicas: 2,
        template: { metadata: { labels: { app: 'web', [REVISION_LABEL]: revisionOf(region) } }, spec: { containers: [{ name: 'app', image: 'web:2' }] } },
      },
    }));
    const pod = (name: string, region: string, revision: string) => ({
      metadata: {
        name,
        namespace: 'shop',
        uid: `uid-${name}`,
        labels: { app: 'web', [NAME_LABEL]: 'web', [REGION_LABEL]: region, [REVISION_LABEL]: revision },
        ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: `web-${region}`, uid: `uid-rs-${region}`, controller: true }],
      },
      spec: { nodeName: 'n' },
      status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: new Date(NOW - 60_000).toISOString() }] },
    });
    const recorded = { ...revision('web-old', 1), data: { regions: [{ region: 'amd', revision: 'previous', template: previous }] } };
    const caches = (synced: boolean) =>
      ({
        extendedDeployments: edCache([ed]),
        deployRegions: cache(regions),
        replicaSets: cache(replicaSets),
        deployments: cache([]),
        statefulSets: cache([]),
        pods: cache([pod('a1', 'amd', 'previous'), pod('a2', 'amd', 'previous'), pod('r1', 'arm', revisionOf('arm')), pod('r2', 'arm', revisionOf('arm'))]),
        controllerRevisions: { ...cache([recorded]), synced: () => synced },
        nodes: cache([]),
      }) as unknown as AgentCaches;
    const actions: RolloutAction[] = [];
    const base = recorder();
    const ports: ReconcilerPorts = { ...base.ports, performAction: async (_ns, _kind, action) => void actions.push(action) };
    await reconcile(caches(true), ports);
    expect(actions.filter((a) => a.kind === 'createKeeper')).toEqual([
      {
        kind: 'createKeeper',
        region: 'amd',
        workload: 'web-amd-previous',
        replicas: 0,
        revision: 'previous',
        template: previous,
        owner: { name: 'web', uid: 'uid-web' },
      },
    ]);
    // historyLimit 0 would prune web-old: it holds the template amd's partition keeps.
    expect(short(base.history)).toEqual([expect.stringMatching(/^create /)]);
    // A history cache that has not synced shows no templates: no keeper is made from a partial history.
    actions.length = 0;
    await reconcile(caches(false), ports);
    expect(actions.filter((a) => a.kind === 'createKeeper')).toEqual([]);
  });

  it('reports a forbidden history write like any other, after the rollout made its writes', async () => {
    const base = recorder();
    const ports: ReconcilerPorts = {
      ...base.ports,
      performHistoryAction: () =>
        Promise.reject(Object.assign(new Error('forbidden'), { code: 403, body: { kind: 'Status', reason: 'Forbidden', message: 'forbidden' } })),
    };
    await expect(reconcile(world().caches, ports)).rejects.toMatchObject({ code: 403 });
    expect(base.calls[0]).toMatch(/^status:/);
    expect(base.calls).toContain('event:Forbidden');
  });
});
