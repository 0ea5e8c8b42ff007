// The reconciler keeps each ExtendedDeployment's history (ControllerRevisions, decided by core/history/revisions.ts)
// after the rollout's own writes. Same level as reconciler.test.ts: fixed caches, recorded writes.
import { describe, expect, it } from 'vitest';
import type { HistoryAction } from '../core/history/revisions.js';
import { NAME_LABEL, REVISION_LABEL, ROLLOUT_REVISION_ANNOTATION } from '../core/labels.js';
import type { ControllerRevisionObject } from '../core/history/entries.js';
import type { AgentCaches } from './informers.js';
import { edKeyOf } from './keys.js';
import { HISTORY_RETRY_MS, Reconciler, type ReconcilerPorts } from './reconciler.js';
import { archRegion, cache, recorder, webExtendedDeployment } from './reconciler-test-support.js';
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
    extendedDeployments: cache([ed]),
    deployRegions: cache(regions),
    replicaSets: cache(replicaSets),
    deployments: cache([]),
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

  it('records nothing while a workload still carries the previous template (Git not synced yet)', async () => {
    const { history, calls, ports } = recorder();
    await reconcile(world({ behind: 'arm', historyLimit: 0, revisions: [revision('web-old', 1)] }).caches, ports);
    expect(history).toEqual([]);
    expect(calls.length).toBeGreaterThan(0);
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
