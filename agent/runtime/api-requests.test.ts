import { CoordinationV1Api, CoreV1Api } from './kube-client.js';
import { KubeConfig } from './kube-config.js';
import { Watch } from './kube-watch.js';
import { describe, expect, it } from 'vitest';
import { countingKubeConfig, parseResourcePath, requestResource, requestVerb } from './api-requests.js';
import { serveApi } from './test-support.js';

const url = (path: string) => new URL(`https://api.example:6443${path}`);

describe('requestVerb and requestResource', () => {
  it.each([
    ['GET', '/api/v1/namespaces/shop/pods', 'LIST', 'pods'],
    ['GET', '/api/v1/pods?labelSelector=x', 'LIST', 'pods'],
    ['GET', '/api/v1/namespaces/shop/pods?watch=true&resourceVersion=5', 'WATCH', 'pods'],
    ['GET', '/api/v1/namespaces/shop/pods/web-1', 'GET', 'pods'],
    ['PATCH', '/api/v1/namespaces/shop/pods/web-1', 'PATCH', 'pods'],
    ['DELETE', '/api/v1/namespaces/shop/pods/web-1', 'DELETE', 'pods'],
    ['DELETE', '/api/v1/namespaces/shop/pods', 'DELETECOLLECTION', 'pods'],
    ['POST', '/api/v1/namespaces/shop/events', 'POST', 'events'],
    ['PATCH', '/apis/apps/v1/namespaces/shop/replicasets/web-amd', 'PATCH', 'replicasets'],
    ['PUT', '/apis/extendeddeployment.io/v1beta1/namespaces/shop/extendeddeployments/web/status', 'PUT', 'extendeddeployments/status'],
    ['GET', '/apis/extendeddeployment.io/v1beta1/deployregions', 'LIST', 'deployregions'],
    ['PUT', '/apis/coordination.k8s.io/v1/namespaces/ed-system/leases/extended-deployment-agent', 'PUT', 'leases'],
    ['GET', '/api/v1/nodes/n1', 'GET', 'nodes'],
    ['GET', '/api/v1/namespaces/shop', 'GET', 'namespaces'],
  ])('%s %s is %s %s', (method, path, verb, resource) => {
    expect(requestVerb(method, url(path))).toBe(verb);
    expect(requestResource(url(path))).toBe(resource);
  });

  it('names an unknown path as such', () => {
    expect(parseResourcePath('/healthz')).toEqual({ resource: 'unknown' });
  });
});

describe('countingKubeConfig', () => {
  let seen: string[] = [];
  const kc = new KubeConfig();
  serveApi(kc, (req, res) => {
    seen.push(`${req.method} ${req.url}`);
    res.writeHead(200, { 'content-type': 'application/json' });
    if (req.url?.includes('watch=true')) return res.end(`${JSON.stringify({ type: 'ADDED', object: { kind: 'Pod', metadata: { name: 'p' } } })}\n`);
    if (req.url?.includes('/leases/')) return res.end(JSON.stringify({ kind: 'Lease', metadata: { name: 'l' } }));
    res.end(JSON.stringify({ kind: 'PodList', apiVersion: 'v1', metadata: {}, items: [] }));
  });

  it('counts every request of API clients and watches, and still sends them as the wrapped KubeConfig would', async () => {
    seen = [];
    const counts: string[] = [];
    const counted = countingKubeConfig(kc, (verb, resource) => counts.push(`${verb} ${resource}`), 'pods');
    const core = counted.makeApiClient(CoreV1Api);
    await core.listNamespacedPod({ namespace: 'shop', labelSelector: 'a' });
    await core.listPodForAllNamespaces();
    await counted.makeApiClient(CoordinationV1Api).readNamespacedLease({ name: 'l', namespace: 'ns' });
    await new Promise<void>((resolve, reject) => {
      new Watch(counted)
        .watch(
          '/api/v1/namespaces/shop/pods',
          {},
          () => resolve(),
          (err) => (err ? reject(err as Error) : resolve()),
        )
        .catch(reject);
    });
    expect(counts).toEqual(['LIST pods', 'LIST pods', 'GET leases', 'WATCH pods']);
    expect(seen.map((s) => s.split('?')[0])).toEqual([
      'GET /api/v1/namespaces/shop/pods',
      'GET /api/v1/pods',
      'GET /apis/coordination.k8s.io/v1/namespaces/ns/leases/l',
      'GET /api/v1/namespaces/shop/pods',
    ]);
    // The wrapper inherits the configuration: same cluster and user, nothing copied or changed on the original.
    expect(counted.getCurrentCluster()?.server).toBe(kc.getCurrentCluster()?.server);
    expect(Object.prototype.hasOwnProperty.call(kc, 'applySecurityAuthentication')).toBe(false);
  });
});
