import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeConfig, type KubernetesObject } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { slimInformer, withoutManagedFields } from './slim-informer.js';

const managedFields = [{ manager: 'kube-controller-manager', operation: 'Update', fieldsType: 'FieldsV1', fieldsV1: { 'f:metadata': {} } }];
const pod = (name: string, rv: string) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'shop', resourceVersion: rv, labels: { app: 'web' }, managedFields } });

describe('withoutManagedFields', () => {
  it('drops metadata.managedFields and nothing else', () => {
    const p = pod('a', '1') as KubernetesObject;
    expect(withoutManagedFields(p)).toEqual({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'a', namespace: 'shop', resourceVersion: '1', labels: { app: 'web' } } });
    expect(withoutManagedFields({ metadata: {} } as KubernetesObject)).toEqual({ metadata: {} });
  });
});

describe('slimInformer', () => {
  let server: Server;
  const kc = new KubeConfig();
  beforeAll(async () => {
    server = createServer((req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      if (req.url?.includes('watch=true')) {
        res.write(`${JSON.stringify({ type: 'ADDED', object: pod('b', '11') })}\n`);
        res.write(`${JSON.stringify({ type: 'MODIFIED', object: pod('a', '12') })}\n`);
        return; // the watch stays open
      }
      res.end(JSON.stringify({ kind: 'PodList', apiVersion: 'v1', metadata: { resourceVersion: '10' }, items: [pod('a', '10')] }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    kc.loadFromOptions({
      clusters: [{ name: 'c', server: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, skipTLSVerify: true }],
      users: [{ name: 'u', token: 't' }],
      contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
      currentContext: 'x',
    });
  });
  afterAll(() => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('caches listed and watched objects without managedFields', async () => {
    const list = async () => {
      const res = await fetch(`${kc.getCurrentCluster()!.server}/api/v1/namespaces/shop/pods`);
      return (await res.json()) as never;
    };
    const informer = slimInformer(kc, '/api/v1/namespaces/shop/pods', list);
    const seen: string[] = [];
    informer.on('update', (o) => seen.push(`${o.metadata?.name}@${o.metadata?.resourceVersion}`));
    await informer.start();
    for (let i = 0; i < 100 && seen.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
    expect(seen).toEqual(['a@12']);
    expect(informer.list('shop').map((o) => [o.metadata?.name, o.metadata?.resourceVersion, o.metadata?.managedFields])).toEqual([
      ['a', '12', undefined],
      ['b', '11', undefined],
    ]);
    await informer.stop();
  });
});
