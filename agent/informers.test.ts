import type { ServerResponse } from 'node:http';
import { KubeConfig } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { NAME_LABEL } from '../core/labels.js';
import { makeInformers } from './informers.js';
import type { EdKey, RegionKey } from './keys.js';
import { FakeClock } from './runtime/clock.js';
import { silentLogger } from './runtime/log.js';
import { serveApi } from './runtime/test-support.js';

const GROUP = '/apis/extendeddeployment.io/v1beta1';
const region = (name: string, rv = '1') => ({
  apiVersion: 'extendeddeployment.io/v1beta1',
  kind: 'DeployRegion',
  metadata: { name, resourceVersion: rv },
  spec: { matchLabels: { zone: name } },
});
const node = (name: string, rv = '1') => ({ apiVersion: 'v1', kind: 'Node', metadata: { name, resourceVersion: rv, labels: { zone: 'amd' } } });
const owned = (name: string) => ({ metadata: { name, namespace: 'shop', resourceVersion: '1', labels: { [NAME_LABEL]: 'web' } } });

/** What each list answers, by path. */
const LISTS: Record<string, unknown[]> = {
  [`${GROUP}/extendeddeployments`]: [
    {
      apiVersion: 'extendeddeployment.io/v1beta1',
      kind: 'ExtendedDeployment',
      metadata: { name: 'web', namespace: 'shop', resourceVersion: '1' },
      spec: { regions: [{ name: 'amd' }] },
    },
  ],
  [`${GROUP}/deployregions`]: [region('amd'), region('arm')],
  '/apis/apps/v1/replicasets': [owned('web-amd')],
  '/apis/apps/v1/deployments': [],
  '/api/v1/pods': [owned('web-amd-1')],
  '/apis/apps/v1/controllerrevisions': [owned('web-r1')],
  '/api/v1/nodes': [node('n1')],
};

describe('makeInformers: keys for two controllers', () => {
  /** The open watch of each path: the test sends events down it. */
  const watches = new Map<string, ServerResponse>();
  const kc = new KubeConfig();
  serveApi(kc, (req, res) => {
    const url = new URL(req.url ?? '', 'http://loopback');
    res.writeHead(200, { 'content-type': 'application/json' });
    if (url.searchParams.get('watch') === 'true') {
      watches.set(url.pathname, res);
      res.flushHeaders();
      return; // the watch stays open
    }
    res.end(JSON.stringify({ kind: 'List', apiVersion: 'v1', metadata: { resourceVersion: '1' }, items: LISTS[url.pathname] ?? [] }));
  });

  const until = async (condition: () => boolean) => {
    for (let i = 0; i < 400 && !condition(); i++) await new Promise((resolve) => setTimeout(resolve, 5));
    expect(condition()).toBe(true);
  };

  it('hands DeployRegion and node changes to the region queue, and never a region key to the ExtendedDeployment queue', async () => {
    const eds: EdKey[] = [];
    const regions: RegionKey[] = [];
    const informers = makeInformers(kc, {
      namespaces: undefined,
      clock: new FakeClock(),
      log: silentLogger,
      enqueue: (key) => eds.push(key),
      enqueueRegion: (key) => regions.push(key),
    });
    // The history's informer is not waited for: a role without ControllerRevisions holds no rollout back.
    expect(informers.besides.map((i) => i.resource)).toEqual(['controllerrevisions']);
    expect(informers.all.map((i) => i.resource)).not.toContain('controllerrevisions');
    const started = [...informers.all, ...informers.besides];
    for (const informer of started) informer.start();
    try {
      await until(() => started.every((i) => i.synced()) && watches.size === started.length);
      // Every list delivered its objects; in whatever order they came, each key went to its own queue.
      expect(new Set(eds)).toEqual(new Set(['shop/web']));
      expect(new Set(regions)).toEqual(new Set(['amd', 'arm']));

      const send = (path: string, object: unknown) => watches.get(path)?.write(`${JSON.stringify({ type: 'MODIFIED', object })}\n`);
      eds.length = 0;
      regions.length = 0;
      send('/api/v1/nodes', node('n1', '2'));
      await until(() => regions.length === 2);
      expect(regions.sort()).toEqual(['amd', 'arm']);
      expect(eds).toEqual([]);

      regions.length = 0;
      send(`${GROUP}/deployregions`, region('amd', '2'));
      await until(() => regions.length === 1 && eds.length === 1);
      // The region's status, and the ExtendedDeployment that runs in it: each on its own queue.
      expect(regions).toEqual(['amd']);
      expect(eds).toEqual(['shop/web']);

      eds.length = 0;
      regions.length = 0;
      send('/api/v1/pods', { ...owned('web-amd-1'), metadata: { ...owned('web-amd-1').metadata, resourceVersion: '2' } });
      await until(() => eds.length === 1);
      expect(eds).toEqual(['shop/web']);
      expect(regions).toEqual([]);

      // A revision of the ExtendedDeployment's history wakes it too (a pruned or renumbered one is decided again).
      eds.length = 0;
      send('/apis/apps/v1/controllerrevisions', { ...owned('web-r1'), metadata: { ...owned('web-r1').metadata, resourceVersion: '2' } });
      await until(() => eds.length === 1);
      expect(eds).toEqual(['shop/web']);
      expect(regions).toEqual([]);
    } finally {
      await Promise.all(started.map((i) => i.stop()));
    }
  });
});

describe('makeInformers: several namespaces', () => {
  const inNamespace = (name: string, namespace: string) => ({ metadata: { name, namespace, resourceVersion: '1', labels: { [NAME_LABEL]: 'web' } } });
  const listed: string[] = [];
  const kc = new KubeConfig();
  serveApi(kc, (req, res) => {
    const url = new URL(req.url ?? '', 'http://loopback');
    res.writeHead(200, { 'content-type': 'application/json' });
    if (url.searchParams.get('watch') === 'true') {
      res.flushHeaders();
      return;
    }
    listed.push(url.pathname);
    const namespace = /\/namespaces\/([^/]+)\//.exec(url.pathname)?.[1];
    const items = namespace && url.pathname.endsWith('/replicasets') ? [inNamespace(`web-${namespace}`, namespace)] : [];
    res.end(JSON.stringify({ kind: 'List', apiVersion: 'v1', metadata: { resourceVersion: '1' }, items }));
  });

  it('lists and watches each namespaced resource in each namespace only, and reads them as one cache', async () => {
    const informers = makeInformers(kc, { namespaces: ['shop', 'pay'], clock: new FakeClock(), log: silentLogger, enqueue: () => {}, enqueueRegion: () => {} });
    const started = [...informers.all, ...informers.besides];
    for (const informer of started) informer.start();
    try {
      for (let i = 0; i < 400 && !started.every((x) => x.synced()); i++) await new Promise((resolve) => setTimeout(resolve, 5));
      expect(started.every((x) => x.synced())).toBe(true);
      // Cluster-wide only what is cluster-scoped: an install with Roles in these namespaces is allowed every request.
      expect(listed.filter((path) => !path.includes('/namespaces/')).sort()).toEqual(['/api/v1/nodes', `${GROUP}/deployregions`]);
      expect(listed.filter((path) => path.includes('/namespaces/pay/')).sort()).toEqual([
        '/api/v1/namespaces/pay/pods',
        '/apis/apps/v1/namespaces/pay/controllerrevisions',
        '/apis/apps/v1/namespaces/pay/deployments',
        '/apis/apps/v1/namespaces/pay/replicasets',
        '/apis/apps/v1/namespaces/pay/statefulsets',
        `${GROUP}/namespaces/pay/extendeddeployments`,
      ]);
      const { replicaSets } = informers.caches;
      expect(replicaSets.list().map((r) => r.metadata?.name)).toEqual(['web-shop', 'web-pay']);
      expect(replicaSets.list('pay').map((r) => r.metadata?.name)).toEqual(['web-pay']);
      expect(replicaSets.list('elsewhere')).toEqual([]);
      expect(replicaSets.get('web-pay', 'pay')?.metadata?.namespace).toBe('pay');
      expect(replicaSets.get('web-pay', 'shop')).toBeUndefined();
      expect(replicaSets.byIndex('pay/web').map((r) => r.metadata?.name)).toEqual(['web-pay']);
    } finally {
      await Promise.all(started.map((i) => i.stop()));
    }
  });
});
