import { mkdtempSync, writeFileSync } from 'node:fs';
import { Agent as HttpAgent, type ClientRequest } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { PatchStrategy } from '@kubernetes/client-node/dist/patch.js';
import { setHeaderOptions } from '@kubernetes/client-node/dist/middleware.js';
import type { KubernetesObject } from '@kubernetes/client-node';
import { describe, expect, it, vi } from 'vitest';
import { collectGarbage } from '../../core/heap-test-support.js';
import {
  ApiException,
  AppsV1Api,
  CoreV1Api,
  CustomObjectsApi,
  GroupDiscoveryApi,
  RequestContext,
  answerUnread,
  makeApiClient,
  nodeHttpLibrary,
} from './kube-client.js';
import { http } from './node-http.js';
import { KubeConfig, type HttpsRequestOptions } from './kube-config.js';
import { ListWatch, Watch, eachLine } from './kube-watch.js';
import { apiError, isConflict, isNotFound, isUnreachable, retryAfterMs } from './kube-errors.js';
import { serveApi } from './test-support.js';

interface Seen {
  method: string;
  url: string;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

describe('kube-client: the agent API calls as client-node sends them', () => {
  const seen: Seen[] = [];
  const kc = new KubeConfig();
  let answer: (req: Seen) => { status: number; body?: unknown; headers?: Record<string, string> } = () => ({ status: 200, body: {} });
  serveApi(kc, (req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const s = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body };
      seen.push(s);
      const a = answer(s);
      res.writeHead(a.status, { 'Content-Type': 'application/json', ...a.headers });
      res.end(a.body === undefined ? '' : typeof a.body === 'string' ? a.body : JSON.stringify(a.body));
    });
  });

  it('builds paths, query parameters, bodies and headers; authenticates with the token', async () => {
    seen.length = 0;
    answer = () => ({ status: 200, body: { kind: 'PodList', metadata: { resourceVersion: '5' }, items: [] } });
    const core = makeApiClient(kc, CoreV1Api);
    const list = await core.listNamespacedPod({ namespace: 'shop', labelSelector: 'a=b', limit: 5 });
    expect(list.metadata?.resourceVersion).toBe('5');
    const apps = makeApiClient(kc, AppsV1Api);
    await apps.patchNamespacedReplicaSet(
      { name: 'web-eu', namespace: 'shop', body: { spec: { replicas: 3 } }, fieldManager: 'fm', force: true },
      setHeaderOptions('Content-Type', PatchStrategy.ServerSideApply),
    );
    await core.patchNamespacedPod({ name: 'p', namespace: 'shop', body: [{ op: 'remove', path: '/x' }] });
    const custom = makeApiClient(kc, CustomObjectsApi);
    await custom.replaceClusterCustomObjectStatus({ group: 'g.io', version: 'v1', plural: 'things', name: 'a b', body: { status: {} } });
    expect(seen.map((s) => `${s.method} ${s.url}`)).toEqual([
      'GET /api/v1/namespaces/shop/pods?labelSelector=a%3Db&limit=5',
      'PATCH /apis/apps/v1/namespaces/shop/replicasets/web-eu?fieldManager=fm&force=true',
      'PATCH /api/v1/namespaces/shop/pods/p',
      'PUT /apis/g.io/v1/things/a%20b/status',
    ]);
    expect(seen.map((s) => s.headers['content-type'])).toEqual([undefined, 'application/apply-patch+yaml', 'application/json-patch+json', 'application/json']);
    expect(seen[0]!.headers['authorization']).toBe('Bearer t');
    expect(seen[0]!.headers['accept']).toBe('application/json');
    expect(JSON.parse(seen[1]!.body)).toEqual({ spec: { replicas: 3 } });
  });

  it("sends traffic shifting's calls: Services, HTTPRoutes as custom objects, and a group version's discovery", async () => {
    seen.length = 0;
    answer = (s) =>
      s.url === '/apis/gateway.networking.k8s.io/v1'
        ? { status: 200, body: { kind: 'APIResourceList', groupVersion: 'gateway.networking.k8s.io/v1', resources: [{ name: 'httproutes' }] } }
        : { status: 200, body: {} };
    const core = makeApiClient(kc, CoreV1Api);
    const custom = makeApiClient(kc, CustomObjectsApi);
    const ssa = setHeaderOptions('Content-Type', PatchStrategy.ServerSideApply);
    await core.listServiceForAllNamespaces();
    await core.listNamespacedService({ namespace: 'shop' });
    await core.patchNamespacedService({ name: 'web-r1', namespace: 'shop', body: { kind: 'Service' }, fieldManager: 'fm', force: true }, ssa);
    await core.deleteNamespacedService({ name: 'web-r1', namespace: 'shop' });
    const route = { group: 'gateway.networking.k8s.io', version: 'v1', plural: 'httproutes', namespace: 'shop', name: 'web' };
    await custom.deleteNamespacedCustomObject(route);
    const discovery = makeApiClient(kc, GroupDiscoveryApi);
    const resources = await discovery.getAPIResources({ group: 'gateway.networking.k8s.io', version: 'v1' });
    expect(resources.resources.map((r) => r.name)).toEqual(['httproutes']);
    expect(seen.map((s) => `${s.method} ${s.url}`)).toEqual([
      'GET /api/v1/services',
      'GET /api/v1/namespaces/shop/services',
      'PATCH /api/v1/namespaces/shop/services/web-r1?fieldManager=fm&force=true',
      'DELETE /api/v1/namespaces/shop/services/web-r1',
      'DELETE /apis/gateway.networking.k8s.io/v1/namespaces/shop/httproutes/web',
      'GET /apis/gateway.networking.k8s.io/v1',
    ]);
    expect(seen[2]!.headers['content-type']).toBe('application/apply-patch+yaml');
  });

  it('throws an ApiException with the code, the Status and the headers, which kube-errors reads', async () => {
    answer = (s) =>
      s.url.includes('/gone')
        ? { status: 404, body: { kind: 'Status', reason: 'NotFound', message: 'pods "gone" not found', code: 404 } }
        : s.url.includes('/busy')
          ? { status: 429, body: 'too many', headers: { 'Retry-After': '3' } }
          : { status: 409, body: { kind: 'Status', reason: 'Conflict', message: 'conflict', code: 409 } };
    const core = makeApiClient(kc, CoreV1Api);
    const notFound = await core.readNamespacedPod({ name: 'gone', namespace: 'shop' }).catch((e: unknown) => e);
    expect(notFound).toBeInstanceOf(ApiException);
    expect(isNotFound(notFound)).toBe(true);
    expect(apiError(notFound)).toEqual({ code: 404, reason: 'NotFound', message: 'pods "gone" not found' });
    const busy = await core.readNamespacedPod({ name: 'busy', namespace: 'shop' }).catch((e: unknown) => e);
    expect(retryAfterMs(busy)).toBe(3000);
    expect(apiError(busy).message).toBe('too many');
    expect(isConflict(await core.deleteNamespacedPod({ name: 'p', namespace: 'shop' }).catch((e: unknown) => e))).toBe(true);
  });

  it('drains the answer of a call marked answerUnread: undefined for a success, an error read as always', async () => {
    seen.length = 0;
    answer = (s) =>
      s.url.includes('/gone')
        ? { status: 404, body: { kind: 'Status', reason: 'NotFound', code: 404 } }
        : { status: 201, body: { kind: 'Event', metadata: { name: 'e' } } };
    const core = makeApiClient(kc, CoreV1Api);
    expect(await core.createNamespacedEvent({ namespace: 'shop', body: { metadata: { name: 'e' }, involvedObject: {} } }, answerUnread())).toBeUndefined();
    const patch = answerUnread(setHeaderOptions('Content-Type', PatchStrategy.MergePatch));
    expect(await core.patchNamespacedPod({ name: 'p', namespace: 'shop', body: { metadata: {} } }, patch)).toBeUndefined();
    const gone = await core.patchNamespacedPod({ name: 'gone', namespace: 'shop', body: { metadata: {} } }, patch).catch((e: unknown) => e);
    expect(apiError(gone)).toMatchObject({ code: 404, reason: 'NotFound' });
    expect(seen.map((s) => `${s.method} ${s.url} ${String(s.headers['content-type'])}`)).toEqual([
      'POST /api/v1/namespaces/shop/events application/json',
      'PATCH /api/v1/namespaces/shop/pods/p application/merge-patch+json',
      'PATCH /api/v1/namespaces/shop/pods/gone application/merge-patch+json',
    ]);
    // The same calls without the mark read their answers.
    expect(await core.createNamespacedEvent({ namespace: 'shop', body: { metadata: { name: 'e' }, involvedObject: {} } })).toEqual({
      kind: 'Event',
      metadata: { name: 'e' },
    });
  });

  it("leaves nothing of an answer reachable from its request: Node.js 22 keeps an https connection's first request as long as the connection", async () => {
    answer = () => ({ status: 200, body: { kind: 'PodList', items: [] } });
    const requests: ClientRequest[] = [];
    const request = http.request;
    vi.spyOn(http, 'request').mockImplementation((...args: Parameters<typeof request>) => {
      const req = request(...args);
      requests.push(req);
      return req;
    });
    // The answer read and let go inside a function of its own, so that nothing of this test holds it.
    const kept = await (async () => {
      const response = await nodeHttpLibrary.send(new RequestContext(`${kc.getCurrentCluster()?.server}/api/v1/pods`, 'GET'));
      expect(response.body).toBe('{"kind":"PodList","items":[]}');
      return new WeakRef(response);
    })();
    vi.restoreAllMocks();
    await new Promise((resolve) => setImmediate(resolve));
    collectGarbage();
    expect(requests).toHaveLength(1);
    expect(kept.deref()).toBeUndefined();
  });

  it('fails on a missing path parameter before sending anything', async () => {
    seen.length = 0;
    await expect(makeApiClient(kc, CoreV1Api).readNamespacedPod({ name: 'p' } as never)).rejects.toThrow(/namespace/);
    expect(seen).toEqual([]);
  });
});

describe('kube-client: an API server that cannot be reached', () => {
  it('is a network error isUnreachable knows', async () => {
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'c', server: 'http://127.0.0.1:1', skipTLSVerify: true }],
      users: [{ name: 'u' }],
      contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
      currentContext: 'x',
    });
    const error = await makeApiClient(kc, CoreV1Api)
      .listNode()
      .catch((e: unknown) => e);
    expect(isUnreachable(error)).toBe(true);
  });
});

describe('kube-config: client-node rules without client-node', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kube-config-'));
  writeFileSync(join(dir, 'ca.crt'), 'CA');
  writeFileSync(join(dir, 'token'), 'from-file');

  it('reads a kubeconfig file, paths relative to it; client certificates, CA and server name go to the agent', async () => {
    const file = join(dir, 'config');
    writeFileSync(
      file,
      [
        'apiVersion: v1',
        'kind: Config',
        'current-context: x',
        'clusters: [{name: c, cluster: {server: "https://example:6443", certificate-authority: ca.crt, tls-server-name: api.example}}]',
        `users: [{name: u, user: {client-certificate-data: ${Buffer.from('CERT').toString('base64')}, client-key-data: ${Buffer.from('KEY').toString('base64')}, as: someone}}]`,
        'contexts: [{name: x, context: {cluster: c, user: u, namespace: shop}}]',
      ].join('\n'),
    );
    const kc = new KubeConfig();
    kc.loadFromFile(file);
    expect(kc.getCurrentCluster()).toMatchObject({ server: 'https://example:6443', caFile: join(dir, 'ca.crt'), tlsServerName: 'api.example' });
    expect(kc.getContextObject('x')?.namespace).toBe('shop');
    const context = new RequestContext('https://example:6443/api/v1/nodes', 'GET');
    await kc.applySecurityAuthentication(context);
    const agent = context.getAgent() as HttpsAgent & { options: Record<string, unknown> };
    expect(agent).toBeInstanceOf(HttpsAgent);
    const text = (key: string) => (agent.options[key] as Buffer).toString();
    expect([text('ca'), text('cert'), text('key')]).toEqual(['CA', 'CERT', 'KEY']);
    expect(agent.options['servername']).toBe('api.example');
    expect(context.getHeaders()['Impersonate-User']).toBe('someone');
  });

  it('gives a watch the TLS settings an API request gets, and the cluster its CA and skip-verify without any user', async () => {
    const cluster = {
      name: 'c',
      server: 'https://example:6443',
      skipTLSVerify: false,
      caData: Buffer.from('CA').toString('base64'),
      tlsServerName: 'api.example',
    };
    const kc = new KubeConfig();
    kc.loadFromOptions({ clusters: [cluster], users: [], contexts: [{ name: 'x', cluster: 'c', user: 'none' }], currentContext: 'x' });
    const context = new RequestContext('https://example:6443/api/v1/nodes', 'GET');
    await kc.applySecurityAuthentication(context);
    const opts: HttpsRequestOptions = {};
    await kc.applyToHTTPSOptions(opts);
    for (const agent of [context.getAgent(), opts.agent] as (HttpsAgent & { options: Record<string, unknown> })[]) {
      expect((agent.options['ca'] as Buffer).toString()).toBe('CA');
      expect(agent.options['servername']).toBe('api.example');
      expect(agent.options['rejectUnauthorized']).toBeUndefined();
    }
    kc.loadFromOptions({
      clusters: [{ ...cluster, skipTLSVerify: true }],
      users: [],
      contexts: [{ name: 'x', cluster: 'c', user: 'none' }],
      currentContext: 'x',
    });
    const skipping = new RequestContext('https://example:6443/api/v1/nodes', 'GET');
    await kc.applySecurityAuthentication(skipping);
    const watchOpts: HttpsRequestOptions = {};
    await kc.applyToHTTPSOptions(watchOpts);
    for (const agent of [skipping.getAgent(), watchOpts.agent] as (HttpsAgent & { options: Record<string, unknown> })[]) {
      expect(agent.options['rejectUnauthorized']).toBe(false);
    }
  });

  it('in a pod: the service account token file as bearer token, and basic auth for a user with a password', async () => {
    const kc = new KubeConfig();
    process.env['KUBERNETES_SERVICE_HOST'] = '10.96.0.1';
    process.env['KUBERNETES_SERVICE_PORT'] = '443';
    try {
      kc.loadFromCluster();
    } finally {
      delete process.env['KUBERNETES_SERVICE_HOST'];
      delete process.env['KUBERNETES_SERVICE_PORT'];
    }
    expect(kc.getCurrentCluster()?.server).toBe('https://10.96.0.1:443');
    kc.loadFromOptions({
      clusters: [{ name: 'c', server: 'http://127.0.0.1:8001', skipTLSVerify: true }],
      users: [
        { name: 'pod', authProvider: { name: 'tokenFile', config: { tokenFile: join(dir, 'token') } } },
        { name: 'basic', username: 'ann', password: 'pw' },
      ],
      contexts: [
        { name: 'pod', cluster: 'c', user: 'pod' },
        { name: 'basic', cluster: 'c', user: 'basic' },
      ],
      currentContext: 'pod',
    });
    const context = new RequestContext('http://127.0.0.1:8001/api', 'GET');
    await kc.applySecurityAuthentication(context);
    expect(context.getHeaders()['Authorization']).toBe('Bearer from-file');
    expect(context.getAgent()).toBeInstanceOf(HttpAgent);
    kc.setCurrentContext('basic');
    const basic = new RequestContext('http://127.0.0.1:8001/api', 'GET');
    await kc.applySecurityAuthentication(basic);
    expect(basic.getHeaders()['Authorization']).toBe(`Basic ${Buffer.from('ann:pw').toString('base64')}`);
    const opts: HttpsRequestOptions = {};
    await kc.applyToHTTPSOptions(opts);
    expect(opts.auth).toBe('ann:pw');
  });

  it('refuses an http:// server without skipTLSVerify, as client-node does', async () => {
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'c', server: 'http://h:80', skipTLSVerify: false }],
      users: [{ name: 'u' }],
      contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
      currentContext: 'x',
    });
    await expect(kc.applySecurityAuthentication(new RequestContext('http://h:80/api', 'GET'))).rejects.toThrow(/HTTP protocol is not allowed/);
  });
});

describe('kube-watch: Watch and ListWatch as client-node has them', () => {
  const kc = new KubeConfig();
  let watchAnswer: 'events' | 'gone' | 'forbidden' = 'events';
  const queries: string[] = [];
  let lists = 0;
  serveApi(kc, (req, res) => {
    queries.push(req.url ?? '');
    if (!req.url?.includes('watch=true')) {
      lists++;
      res.writeHead(200, { 'Content-Type': 'application/json' });
      return res.end(JSON.stringify({ metadata: { resourceVersion: '10' }, items: [{ metadata: { name: 'a', namespace: 'n', resourceVersion: '9' } }] }));
    }
    if (watchAnswer === 'forbidden') return res.writeHead(403).end('{}');
    res.writeHead(200, { 'Content-Type': 'application/json' });
    if (watchAnswer === 'gone') return res.end(`${JSON.stringify({ type: 'ERROR', object: { kind: 'Status', code: 410 } })}\n`);
    res.write(`${JSON.stringify({ type: 'ADDED', object: { metadata: { name: 'b', namespace: 'n', resourceVersion: '11' } } })}\n`);
    res.write('not json\n');
    res.write(`${JSON.stringify({ type: 'BOOKMARK', object: { metadata: { resourceVersion: '12' } } })}\n`);
    res.end(`${JSON.stringify({ type: 'DELETED', object: { metadata: { name: 'a', namespace: 'n', resourceVersion: '13' } } })}\n`);
  });
  const list = async () => {
    const res = await fetch(`${kc.getCurrentCluster()!.server}/api/v1/pods`);
    return (await res.json()) as never;
  };

  it('delivers events, skips lines that are not JSON, ends with done(null); a non-200 answer is an error with statusCode', async () => {
    watchAnswer = 'events';
    const events: string[] = [];
    const end = await new Promise<unknown>((resolve) => {
      void new Watch(kc).watch('/api/v1/pods', { resourceVersion: '10', labelSelector: undefined }, (type) => events.push(type), resolve);
    });
    expect(events).toEqual(['ADDED', 'BOOKMARK', 'DELETED']);
    expect(end).toBeNull();
    watchAnswer = 'forbidden';
    const error = await new Promise<unknown>((resolve) => void new Watch(kc).watch('/api/v1/pods', {}, () => undefined, resolve));
    expect((error as { statusCode?: number }).statusCode).toBe(403);
  });

  /** A stream split by eachLine: the lines it gave, and its close. */
  function splitLines() {
    const stream = new PassThrough();
    const lines: string[] = [];
    eachLine(stream, (line) => lines.push(line));
    const closed = new Promise((resolve) => stream.on('close', resolve));
    return { stream, lines, closed };
  }

  it('splits a watch stream into lines however its chunks fall: a line over several chunks, a character split, the last line without newline', async () => {
    const { stream, lines, closed } = splitLines();
    const text = Buffer.from('{"a":1}\n{"b":"zwölf"}\r\n\n{"c":', 'utf8');
    const umlaut = text.indexOf(0xc3);
    // Chunks end inside the first line, inside the two bytes of "ö", and inside the last line.
    for (const [from, to] of [
      [0, 3],
      [3, umlaut + 1],
      [umlaut + 1, text.length],
    ])
      stream.write(text.subarray(from, to));
    stream.end('3}');
    await closed;
    expect(lines).toEqual(['{"a":1}', '{"b":"zwölf"}\r', '', '{"c":3}']);
  });

  it('keeps the start of a line a chunk ended inside as its own copy, not a view of the chunk (a source may reuse it)', async () => {
    const { stream, lines, closed } = splitLines();
    const chunk = Buffer.from('{"a":1}\n{"b":', 'utf8');
    stream.write(chunk);
    await new Promise((resolve) => setImmediate(resolve));
    chunk.fill(0x78); // the source writes its next data into the same buffer
    stream.end('2}\n');
    await closed;
    expect(lines).toEqual(['{"a":1}', '{"b":2}']);
  });

  it('lists, then watches from the resourceVersion (bookmarks move it), and relists after a 410', async () => {
    watchAnswer = 'events';
    queries.length = 0;
    lists = 0;
    const lw = new ListWatch<KubernetesObject>('/api/v1/pods', new Watch(kc), list, false, 'app');
    const changes: string[] = [];
    lw.on('add', (o) => changes.push(`add ${o.metadata?.name}`));
    lw.on('delete', (o) => changes.push(`delete ${o.metadata?.name}`));
    const errors: unknown[] = [];
    lw.on('error', (e) => void errors.push(e));
    await lw.start();
    for (let i = 0; i < 100 && !queries.some((q) => q.includes('resourceVersion=13')); i++) await new Promise((r) => setTimeout(r, 10));
    await lw.stop();
    expect(changes.slice(0, 3)).toEqual(['add a', 'add b', 'delete a']);
    expect(queries[1]).toMatch(/watch=true&resourceVersion=10&labelSelector=app/);
    expect(queries[2]).toMatch(/resourceVersion=13/);
    expect(lw.list().map((o) => o.metadata?.name)).toEqual(['b']);
    expect(lists).toBe(1);

    watchAnswer = 'gone';
    lists = 0;
    const relisting = new ListWatch<KubernetesObject>('/api/v1/pods', new Watch(kc), list, false);
    await relisting.start();
    for (let i = 0; i < 100 && lists < 2; i++) await new Promise((r) => setTimeout(r, 10));
    await relisting.stop();
    expect(lists).toBeGreaterThanOrEqual(2);
    expect(errors).toEqual([]);
  });
});
