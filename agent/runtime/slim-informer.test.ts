import { KubeConfig, type KubernetesObject } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import type { InformerFactory } from './informer.js';
import { SHORT_WATCH_MS, slimInformer, transformingInformer, watchEndError, withoutManagedFields } from './slim-informer.js';
import { retainedBytes } from '../../core/heap-test-support.js';
import { serveApi } from './test-support.js';

const managedFields = [{ manager: 'kube-controller-manager', operation: 'Update', fieldsType: 'FieldsV1', fieldsV1: { 'f:metadata': {} } }];
const pod = (name: string, rv: string) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'shop', resourceVersion: rv, labels: { app: 'web' }, managedFields },
});

describe('withoutManagedFields', () => {
  it('drops metadata.managedFields and nothing else', () => {
    const p = pod('a', '1') as KubernetesObject;
    expect(withoutManagedFields(p)).toEqual({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'a', namespace: 'shop', resourceVersion: '1', labels: { app: 'web' } },
    });
    expect(withoutManagedFields({ metadata: {} })).toEqual({ metadata: {} });
  });

  it('keeps the metadata as compact as it came: deleting the field made each a dictionary, 2.6 times the heap', () => {
    const text = JSON.stringify({
      creationTimestamp: '2026-11-30T02:23:26Z',
      generateName: 'web-amd-',
      generation: 1,
      labels: { app: 'web' },
      managedFields,
      name: 'web-amd-x1',
      namespace: 'shop',
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-amd', uid: 'u', controller: true }],
      resourceVersion: '518282',
      uid: '49d4d9d8-38f6-490f-8ed0-a99eb68daa41',
    });
    const parsed = () => Array.from({ length: 2000 }, () => ({ metadata: JSON.parse(text) as Record<string, unknown> }));
    const slim = retainedBytes(() => parsed().map((o) => withoutManagedFields(o).metadata));
    const deleted = retainedBytes(() =>
      parsed().map(({ metadata }) => {
        delete metadata['managedFields'];
        return metadata;
      }),
    );
    expect(slim).toBeLessThan(deleted * 0.6);
  });
});

describe('slimInformer', () => {
  const kc = new KubeConfig();
  serveApi(kc, (req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    if (req.url?.includes('watch=true')) {
      res.write(`${JSON.stringify({ type: 'ADDED', object: pod('b', '11') })}\n`);
      res.write(`${JSON.stringify({ type: 'MODIFIED', object: pod('a', '12') })}\n`);
      return; // the watch stays open
    }
    res.end(JSON.stringify({ kind: 'PodList', apiVersion: 'v1', metadata: { resourceVersion: '10' }, items: [pod('a', '10')] }));
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

describe('transformingInformer on objects its transform cannot read', () => {
  // A transform that, like one written for a kind's type, reads a field that type requires.
  const images = transformingInformer<KubernetesObject>((o) => {
    const spec = (o as { spec: { containers: { image: string }[] } }).spec;
    return { ...o, images: spec.containers.map((c) => c.image) } as KubernetesObject;
  });
  const full = (name: string, rv: string) => ({ ...pod(name, rv), spec: { containers: [{ image: `${name}:1` }] } });
  const kc = new KubeConfig();
  serveApi(kc, (req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    if (req.url?.includes('watch=true')) {
      // A bookmark as the API server sends one for pods: the kind's shape, its required fields null.
      const bookmark = { kind: 'Pod', apiVersion: 'v1', metadata: { resourceVersion: '13' }, spec: { containers: null } };
      res.write(`${JSON.stringify({ type: 'BOOKMARK', object: bookmark })}\n`);
      res.write(`${JSON.stringify({ type: 'ADDED', object: pod('bare', '14') })}\n`);
      res.write(`${JSON.stringify({ type: 'ADDED', object: full('b', '15') })}\n`);
      return;
    }
    res.end(JSON.stringify({ kind: 'PodList', apiVersion: 'v1', metadata: { resourceVersion: '10' }, items: [full('a', '10'), pod('listed-bare', '10')] }));
  });

  it('hands a BOOKMARK on as it came and caches an object the transform throws on as it came, without failing', async () => {
    const list = async () => (await (await fetch(`${kc.getCurrentCluster()!.server}/api/v1/namespaces/shop/pods`)).json()) as never;
    const informer = images(kc, '/api/v1/namespaces/shop/pods', list);
    const errors: unknown[] = [];
    informer.on('error', (e) => errors.push(e));
    await informer.start();
    for (let i = 0; i < 100 && informer.list('shop').length < 4; i++) await new Promise((r) => setTimeout(r, 10));
    const cached = informer
      .list('shop')
      .map((o) => [o.metadata?.name, (o as { images?: string[] }).images])
      .sort((x, y) => String(x[0]).localeCompare(String(y[0])));
    expect(cached).toEqual([
      ['a', ['a:1']],
      ['b', ['b:1']],
      ['bare', undefined],
      ['listed-bare', undefined],
    ]);
    expect(errors).toEqual([]);
    await informer.stop();
  });
});

describe('slimInformer when a watch ends at once', () => {
  // Each test sets how the server answers a watch; lists always succeed. Counts what the informer asked for.
  let answerWatch: (res: import('node:http').ServerResponse) => void = () => undefined;
  const requests: string[] = [];
  const kc = new KubeConfig();
  serveApi(kc, (req, res) => {
    const watch = req.url?.includes('watch=true') ?? false;
    requests.push(watch ? `WATCH rv=${new URL(req.url ?? '', 'http://x').searchParams.get('resourceVersion')}` : 'LIST');
    if (watch) return answerWatch(res);
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ kind: 'PodList', apiVersion: 'v1', metadata: { resourceVersion: '10' }, items: [pod('a', '10')] }));
  });

  const list = async () => {
    const res = await fetch(`${kc.getCurrentCluster()!.server}/api/v1/namespaces/shop/pods`);
    return (await res.json()) as never;
  };

  /** Starts an informer and resolves with the first error it reports (ResilientInformer restarts after a backoff then). */
  async function firstError(
    make: InformerFactory<KubernetesObject> = slimInformer,
  ): Promise<{ error: unknown; informer: ReturnType<InformerFactory<KubernetesObject>> }> {
    requests.length = 0;
    const informer = make(kc, '/api/v1/namespaces/shop/pods', list);
    const error = new Promise<unknown>((resolve) => informer.on('error', resolve));
    await informer.start();
    return { error: await error, informer };
  }

  const gone = JSON.stringify({
    type: 'ERROR',
    object: { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'Expired', code: 410, message: 'too old resource version' },
  });

  /** A watch answered 200 whose stream carries one ERROR event with 410 Gone, as the API server sends it. */
  const goneInStream = (res: import('node:http').ServerResponse) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(`${gone}\n`);
  };

  it('reports 410 Gone in the stream as an error instead of relisting at once, and relists on the next start', async () => {
    answerWatch = goneInStream;
    const { error, informer } = await firstError();
    expect(String(error)).toMatch(/410/);
    expect(requests).toEqual(['LIST', 'WATCH rv=10']);
    await informer.start();
    await informer.stop();
    expect(requests.slice(2, 3)).toEqual(['LIST']);
  });

  it('relists after 410 Gone also when the cache keeps objects transformed (the Status reaches ListWatch as it came)', async () => {
    answerWatch = goneInStream;
    const nameOnly = transformingInformer<KubernetesObject>((o) => ({
      metadata: { name: o.metadata?.name, namespace: o.metadata?.namespace, resourceVersion: o.metadata?.resourceVersion },
    }));
    const { informer } = await firstError(nameOnly);
    await informer.start();
    await informer.stop();
    expect(requests.slice(0, 3)).toEqual(['LIST', 'WATCH rv=10', 'LIST']);
  });

  it('reports an HTTP 410 answer to a watch as an error, and relists on the next start', async () => {
    answerWatch = (res) => {
      res.writeHead(410, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ kind: 'Status', code: 410, reason: 'Gone' }));
    };
    const { error, informer } = await firstError();
    expect(String(error)).toMatch(/410/);
    expect(requests).toEqual(['LIST', 'WATCH rv=10']);
    await informer.start();
    await informer.stop();
    expect(requests.slice(2, 3)).toEqual(['LIST']);
  });

  it('reports a watch closed at once without events as an error (a server that keeps closing watches gets backoff)', async () => {
    answerWatch = (res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end();
    };
    const { error, informer } = await firstError();
    await informer.stop();
    expect(String(error)).toMatch(/without events/);
    expect(requests).toEqual(['LIST', 'WATCH rv=10']);
  });
});

describe('watchEndError', () => {
  it('keeps a real error and a normal end, and turns 410 and a short empty watch into errors', () => {
    const failure = new Error('socket hang up');
    expect(watchEndError(failure, { expired: false, delivered: 0, lastedMs: 5 })).toBe(failure);
    expect(watchEndError(null, { expired: false, delivered: 3, lastedMs: 5 })).toBeNull();
    expect(watchEndError(null, { expired: false, delivered: 0, lastedMs: SHORT_WATCH_MS })).toBeNull();
    expect(String(watchEndError(null, { expired: false, delivered: 0, lastedMs: SHORT_WATCH_MS - 1 }))).toMatch(/without events/);
    expect(String(watchEndError(null, { expired: true, delivered: 2, lastedMs: 60_000 }))).toMatch(/410/);
    expect(String(watchEndError(Object.assign(new Error('Gone'), { statusCode: 410 }), { expired: false, delivered: 0, lastedMs: 1 }))).toMatch(/410/);
  });
});

describe('a stopped informer opens no watch', () => {
  // Lists succeed at once; a watch is held open (answered or not, as each test says) and its end is recorded.
  let answerWatch = true;
  const watches: { ended: boolean; res: import('node:http').ServerResponse }[] = [];
  const kc = new KubeConfig();
  serveApi(kc, (req, res) => {
    if (req.url?.includes('watch=true')) {
      const w = { ended: false, res };
      res.on('close', () => (w.ended = true));
      watches.push(w);
      if (answerWatch) res.writeHead(200, { 'content-type': 'application/json' }).flushHeaders();
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ kind: 'PodList', apiVersion: 'v1', metadata: { resourceVersion: '10' }, items: [pod('a', '10')] }));
  });
  const list = async () => {
    const res = await fetch(`${kc.getCurrentCluster()!.server}/api/v1/namespaces/shop/pods`);
    return (await res.json()) as never;
  };
  const until = async (what: () => boolean) => {
    for (let i = 0; i < 200 && !what(); i++) await new Promise((r) => setTimeout(r, 10));
  };

  it('when stopped by a handler of the listed objects (before the watch that follows the list)', async () => {
    watches.length = 0;
    answerWatch = true;
    const informer = slimInformer(kc, '/api/v1/namespaces/shop/pods', list);
    informer.on('add', () => void informer.stop());
    await informer.start();
    await new Promise((r) => setTimeout(r, 100));
    expect(watches).toHaveLength(0);
  });

  it('when stopped while the watch request is under way: it is closed as soon as the server answers', async () => {
    watches.length = 0;
    answerWatch = false;
    const informer = slimInformer(kc, '/api/v1/namespaces/shop/pods', list);
    const started = informer.start();
    await until(() => watches.length > 0);
    await informer.stop();
    watches[0]!.res.writeHead(200, { 'content-type': 'application/json' }).flushHeaders();
    await started;
    await until(() => watches[0]!.ended);
    expect(watches.map((w) => w.ended)).toEqual([true]);
  });

  it('watches again when started again after a stop', async () => {
    watches.length = 0;
    answerWatch = true;
    const informer = slimInformer(kc, '/api/v1/namespaces/shop/pods', list);
    await informer.start();
    await informer.stop();
    await informer.start();
    await until(() => watches.length === 2);
    expect(watches.map((w) => w.ended)).toEqual([true, false]);
    await informer.stop();
  });
});
