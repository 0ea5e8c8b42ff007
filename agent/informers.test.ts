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
    // Keys woken by the objects an ExtendedDeployment owns: the agent holds them in bursts (WorkQueue.addBatched).
    const owners: EdKey[] = [];
    const regions: RegionKey[] = [];
    // Instants at which a pod of a key turns available, told from the pod's event.
    const availableAt: [EdKey, number][] = [];
    const informers = makeInformers(kc, {
      namespaces: undefined,
      clock: new FakeClock(),
      log: silentLogger,
      enqueue: (key) => eds.push(key),
      enqueueOwned: (key) => owners.push(key),
      enqueueAt: (key, at) => availableAt.push([key, at]),
      enqueueRegion: (key) => regions.push(key),
      // The agent's own status write, as the API server answered it: version 3 here.
      isOwnStatusAnswer: (ed) => ed.metadata?.resourceVersion === '3',
      // The echo of a standing mark: a pod's update from version 6 to 7 here.
      isStandingMarkEcho: (pod, previous) => previous?.metadata?.resourceVersion === '6' && pod.metadata?.resourceVersion === '7',
    });
    // The history's and traffic's informers are not waited for: a role without them holds no rollout back.
    expect(informers.besides.map((i) => i.resource)).toEqual(['controllerrevisions', 'services', 'httproutes']);
    expect(informers.all.map((i) => i.resource)).not.toEqual(expect.arrayContaining(['controllerrevisions', 'services', 'httproutes']));
    const started = [...informers.all, ...informers.besides];
    for (const informer of started) informer.start();
    try {
      // HTTPRoutes are not served here (discovery answers no such resource): no watch for them.
      await until(() => started.every((i) => i.synced()) && watches.size === started.length - 1);
      expect(informers.caches.traffic.routesServed()).toBe(false);
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
      owners.length = 0;
      send('/api/v1/pods', { ...owned('web-amd-1'), metadata: { ...owned('web-amd-1').metadata, resourceVersion: '2' } });
      await until(() => owners.length === 1);
      expect(owners).toEqual(['shop/web']);
      expect([eds, regions]).toEqual([[], []]);

      // The ExtendedDeployment's own change (Git's, a control, a status) is not batched.
      owners.length = 0;
      const ed = LISTS[`${GROUP}/extendeddeployments`]![0] as { metadata: object };
      send(`${GROUP}/extendeddeployments`, { ...ed, metadata: { ...ed.metadata, resourceVersion: '2' } });
      await until(() => eds.length === 1);
      expect(eds).toEqual(['shop/web']);
      expect([owners, regions]).toEqual([[], []]);

      // The echo of the agent's own status write wakes no key (the events come in order: only the next one counts).
      eds.length = 0;
      send(`${GROUP}/extendeddeployments`, { ...ed, metadata: { ...ed.metadata, resourceVersion: '3' } });
      send(`${GROUP}/extendeddeployments`, { ...ed, metadata: { ...ed.metadata, resourceVersion: '4' } });
      await until(() => eds.length > 0 && informers.caches.extendedDeployments.get('web', 'shop')?.metadata?.resourceVersion === '4');
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(eds).toEqual(['shop/web']);

      // A revision of the ExtendedDeployment's history wakes it too (a pruned or renumbered one is decided again).
      eds.length = 0;
      owners.length = 0;
      send('/apis/apps/v1/controllerrevisions', { ...owned('web-r1'), metadata: { ...owned('web-r1').metadata, resourceVersion: '2' } });
      await until(() => owners.length === 1);
      expect(owners).toEqual(['shop/web']);
      expect([eds, regions]).toEqual([[], []]);

      // A ReplicaSet wakes its owner when what the agent reads of it changes (its spec, through metadata.generation; the
      // controller's report), not when the ReplicaSet controller only counts ready and available pods.
      owners.length = 0;
      const rs = (rv: string, generation: number, status: object) => ({
        ...owned('web-amd'),
        metadata: { ...owned('web-amd').metadata, resourceVersion: rv, generation },
        status,
      });
      send('/apis/apps/v1/replicasets', rs('2', 1, { observedGeneration: 1, replicas: 2, readyReplicas: 1 }));
      await until(() => owners.length === 1);
      send('/apis/apps/v1/replicasets', rs('3', 1, { observedGeneration: 1, replicas: 2, readyReplicas: 2, availableReplicas: 2 }));
      send('/apis/apps/v1/replicasets', rs('4', 2, { observedGeneration: 1, replicas: 2, readyReplicas: 2, availableReplicas: 2 }));
      await until(() => informers.caches.replicaSets.get('web-amd', 'shop')?.metadata?.resourceVersion === '4' && owners.length === 2);
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(owners).toEqual(['shop/web', 'shop/web']);

      // A pod shown Ready tells when it turns available under its ExtendedDeployment's minReadySeconds (2 here), besides
      // waking its owner; one not Ready, or of an ExtendedDeployment whose spec is invalid (the list's), tells nothing.
      const readyPod = (ready: boolean, rv: string) => ({
        ...owned('web-amd-1'),
        metadata: { ...owned('web-amd-1').metadata, resourceVersion: rv },
        spec: { nodeName: 'n1', containers: [{ name: 'app', image: 'web:2' }] },
        status: { phase: 'Running', conditions: [{ type: 'Ready', status: ready ? 'True' : 'False', lastTransitionTime: '2026-01-01T00:00:10Z' }] },
      });
      owners.length = 0;
      send('/api/v1/pods', readyPod(true, '3'));
      await until(() => owners.length === 1);
      expect(availableAt).toEqual([]);
      const valid = {
        ...ed,
        metadata: { ...ed.metadata, resourceVersion: '5' },
        spec: {
          selector: { matchLabels: { app: 'web' } },
          template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'app', image: 'web:2' }] } },
          regions: [{ name: 'amd', replicas: 2 }],
          strategy: { minReadySeconds: 2 },
        },
      };
      send(`${GROUP}/extendeddeployments`, valid);
      await until(() => informers.caches.extendedDeployments.get('web', 'shop')?.metadata?.resourceVersion === '5');
      owners.length = 0;
      send('/api/v1/pods', readyPod(false, '4'));
      send('/api/v1/pods', readyPod(true, '5'));
      await until(() => owners.length === 2 && availableAt.length > 0);
      expect(availableAt).toEqual([['shop/web', Date.parse('2026-01-01T00:00:12Z')]]);

      // The echo of a standing mark wakes no key, nor tells an availability (the pod's update before it did).
      owners.length = 0;
      availableAt.length = 0;
      send('/api/v1/pods', readyPod(true, '6'));
      send('/api/v1/pods', readyPod(true, '7'));
      await until(() => informers.caches.pods.get('web-amd-1', 'shop')?.metadata?.resourceVersion === '7');
      send('/api/v1/pods', readyPod(true, '8'));
      await until(() => informers.caches.pods.get('web-amd-1', 'shop')?.metadata?.resourceVersion === '8' && owners.length === 2);
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect([owners, availableAt.length]).toEqual([['shop/web', 'shop/web'], 2]);
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
    const informers = makeInformers(kc, {
      namespaces: ['shop', 'pay'],
      clock: new FakeClock(),
      log: silentLogger,
      enqueue: () => {},
      enqueueOwned: () => {},
      enqueueRegion: () => {},
    });
    const started = [...informers.all, ...informers.besides];
    for (const informer of started) informer.start();
    try {
      for (let i = 0; i < 400 && !started.every((x) => x.synced()); i++) await new Promise((resolve) => setTimeout(resolve, 5));
      expect(started.every((x) => x.synced())).toBe(true);
      // Cluster-wide only what is cluster-scoped: an install with Roles in these namespaces is allowed every request.
      // (and the Gateway API's discovery, which the system:discovery role allows everyone).
      expect(listed.filter((path) => !path.includes('/namespaces/')).sort()).toEqual([
        '/api/v1/nodes',
        `${GROUP}/deployregions`,
        '/apis/gateway.networking.k8s.io/v1',
      ]);
      expect(listed.filter((path) => path.includes('/namespaces/pay/')).sort()).toEqual([
        '/api/v1/namespaces/pay/pods',
        '/api/v1/namespaces/pay/services',
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

describe('makeInformers: traffic caches (Services, and HTTPRoutes once the Gateway API is served)', () => {
  const edOwner = { apiVersion: 'extendeddeployment.io/v1beta1', kind: 'ExtendedDeployment', name: 'web', uid: 'u-web', controller: true };
  const managedFields = [{ manager: 'extendeddeployment-agent', operation: 'Apply', fieldsV1: { 'f:spec': {} } }];
  const lastApplied = { 'kubectl.kubernetes.io/last-applied-configuration': '{"a huge":"copy"}', keep: 'me' };
  const service = (name: string, rv: string) => ({
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, namespace: 'shop', resourceVersion: rv, ownerReferences: [edOwner], managedFields, annotations: lastApplied },
    spec: { type: 'ClusterIP', clusterIP: '10.0.0.7', clusterIPs: ['10.0.0.7'], selector: { app: 'web' }, ports: [{ name: 'http', port: 80 }] },
    status: { loadBalancer: {} },
  });
  const route = (rv: string, accepted: boolean) => ({
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'HTTPRoute',
    metadata: { name: 'web', namespace: 'shop', resourceVersion: rv, generation: 1, ownerReferences: [edOwner], managedFields },
    spec: { parentRefs: [{ name: 'gw' }], rules: [{ backendRefs: [{ name: 'web-r1', port: 80, weight: 100 }] }] },
    status: { parents: [{ parentRef: { name: 'gw' }, conditions: [{ type: 'Accepted', status: accepted ? 'True' : 'False', observedGeneration: 1 }] }] },
  });
  let gatewayServed = false;
  const watches = new Map<string, ServerResponse>();
  const kc = new KubeConfig();
  serveApi(kc, (req, res) => {
    const url = new URL(req.url ?? '', 'http://loopback');
    if (url.pathname === '/apis/gateway.networking.k8s.io/v1') {
      if (!gatewayServed) {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'NotFound', code: 404 }));
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ kind: 'APIResourceList', groupVersion: 'gateway.networking.k8s.io/v1', resources: [{ name: 'httproutes', namespaced: true }] }));
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    if (url.searchParams.get('watch') === 'true') {
      watches.set(url.pathname, res);
      res.flushHeaders();
      return;
    }
    const items =
      url.pathname === '/api/v1/namespaces/shop/services'
        ? [service('web-r1', '1')]
        : url.pathname === '/apis/gateway.networking.k8s.io/v1/namespaces/shop/httproutes'
          ? [route('1', false)]
          : [];
    res.end(JSON.stringify({ kind: 'List', apiVersion: 'v1', metadata: { resourceVersion: '1' }, items }));
  });

  const until = async (condition: () => boolean) => {
    for (let i = 0; i < 400 && !condition(); i++) await new Promise((resolve) => setTimeout(resolve, 5));
    expect(condition()).toBe(true);
  };

  it('caches Services slim, watches HTTPRoutes once discovery serves them, and wakes the owner of either on a change', async () => {
    const eds: EdKey[] = [];
    const clock = new FakeClock();
    const informers = makeInformers(kc, {
      namespaces: ['shop'],
      clock,
      log: silentLogger,
      enqueue: (key) => eds.push(key),
      enqueueOwned: (key) => eds.push(key),
      enqueueRegion: () => {},
    });
    const { traffic } = informers.caches;
    const started = [...informers.all, ...informers.besides];
    for (const informer of started) informer.start();
    try {
      await until(() => traffic.services.synced() && traffic.routes.synced());
      // Only what core/traffic reads: no managedFields, no kubectl copy of the object, no cluster IPs or status.
      expect(traffic.services.list('shop')).toEqual([
        {
          apiVersion: 'v1',
          kind: 'Service',
          metadata: { name: 'web-r1', namespace: 'shop', resourceVersion: '1', ownerReferences: [edOwner], annotations: { keep: 'me' } },
          spec: { selector: { app: 'web' }, ports: [{ name: 'http', port: 80 }] },
        },
      ]);
      // Not served: nothing watched, an empty cache, and core is told so.
      expect(traffic.routesServed()).toBe(false);
      expect(traffic.routes.get('web', 'shop')).toBeUndefined();
      expect(watches.has('/apis/gateway.networking.k8s.io/v1/namespaces/shop/httproutes')).toBe(false);

      // The Gateway API CRDs get installed: the next discovery (a minute later) starts the informer.
      gatewayServed = true;
      clock.advance(60_000);
      await until(() => traffic.routesServed());
      expect(traffic.routes.get('web', 'shop')?.metadata).toEqual({
        name: 'web',
        namespace: 'shop',
        resourceVersion: '1',
        generation: 1,
        ownerReferences: [edOwner],
      });

      // A route's status change (its parent accepting it) and a Service change wake the ExtendedDeployment that owns them.
      await until(() => watches.has('/apis/gateway.networking.k8s.io/v1/namespaces/shop/httproutes') && watches.has('/api/v1/namespaces/shop/services'));
      eds.length = 0;
      const send = (path: string, object: unknown) => watches.get(path)?.write(`${JSON.stringify({ type: 'MODIFIED', object })}\n`);
      send('/apis/gateway.networking.k8s.io/v1/namespaces/shop/httproutes', route('2', true));
      await until(() => eds.length === 1);
      expect(eds).toEqual(['shop/web']);
      expect(traffic.routes.get('web', 'shop')?.status?.parents?.[0]?.conditions?.[0]?.status).toBe('True');
      send('/api/v1/namespaces/shop/services', service('web-r1', '2'));
      await until(() => eds.length === 2);
      expect(eds).toEqual(['shop/web', 'shop/web']);
      // A Service of nobody's wakes nobody.
      send('/api/v1/namespaces/shop/services', { apiVersion: 'v1', kind: 'Service', metadata: { name: 'db', namespace: 'shop', resourceVersion: '3' } });
      await until(() => traffic.services.get('db', 'shop') !== undefined);
      expect(eds).toHaveLength(2);
    } finally {
      await Promise.all(started.map((i) => i.stop()));
    }
  });
});
