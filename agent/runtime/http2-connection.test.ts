import { readFileSync } from 'node:fs';
import http2, { type Http2SecureServer, type Http2ServerRequest, type Http2ServerResponse, type ServerHttp2Session } from 'node:http2';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import { createServer as createTcpServer, connect as tcpConnect, type AddressInfo, type Server as TcpServer, type Socket } from 'node:net';
import { join } from 'node:path';
import tls from 'node:tls';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { isFencedWrite, transportKubeConfig } from './api-transport.js';
import { realClock } from './clock.js';
import { HTTP2_TIMING, Http2Connection, type Http2Timing } from './http2-connection.js';
import { keepAliveKubeConfig } from './keep-alive.js';
import { ApiException, CoreV1Api, answerUnread, makeApiClient } from './kube-client.js';
import { KubeConfig } from './kube-config.js';
import { Watch } from './kube-watch.js';
import { hasOpenssl, makeCertDir } from './tls-test-support.js';

/** What a test server saw: each request's HTTP version, method, path and HTTP/2 session (its index), and each session. */
interface Seen {
  readonly requests: { version: string; method: string; path: string; authorization: string | undefined; session?: number }[];
  readonly sessions: ServerHttp2Session[];
  readonly connections: number;
}

let cert: Buffer;
let key: Buffer;
const closers: (() => void)[] = [];
afterEach(() => {
  for (const close of closers.splice(0)) close();
  vi.restoreAllMocks();
});

type Handler = (req: Http2ServerRequest, res: Http2ServerResponse) => void;

/** The API server's answers: a pod list, a watch of two events, 404 for an unknown pod, nothing for /hang. */
const api: Handler = (req, res) => {
  if (req.url.includes('/hang')) return;
  if (req.url.includes('watch=true')) {
    if (req.url.startsWith('/api/v1/namespaces/forbidden')) {
      res.writeHead(403).end('{"kind":"Status"}');
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.write('{"type":"ADDED","object":{"metadata":{"name":"a"}}}\n{"type":"MODIF');
    setTimeout(() => res.end('IED","object":{"metadata":{"name":"b"}}}\n'), 20);
    return;
  }
  if (req.url.endsWith('/pods/missing')) {
    res.writeHead(404, { 'content-type': 'application/json' }).end('{"kind":"Status","reason":"NotFound","code":404}');
    return;
  }
  res.writeHead(200, { 'content-type': 'application/json', 'x-served-by': 'test' }).end(JSON.stringify({ kind: 'PodList', method: req.method, items: [] }));
};

/** An HTTP/2 server that also speaks HTTP/1.1 (as kube-apiserver does), on loopback. */
async function h2Server(handler: Handler = api): Promise<{ server: Http2SecureServer; port: number; seen: Seen }> {
  const seen = { requests: [] as Seen['requests'], sessions: [] as ServerHttp2Session[], connections: 0 };
  const server = http2.createSecureServer({ cert, key, allowHTTP1: true }, (req, res) => {
    const session = req.stream?.session ? seen.sessions.findIndex((s) => s === req.stream.session) : -1;
    seen.requests.push({ version: req.httpVersion, method: req.method, path: req.url, authorization: req.headers.authorization, session });
    handler(req, res);
  });
  server.on('session', (session: ServerHttp2Session) => seen.sessions.push(session));
  server.on('secureConnection', () => seen.connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(() => {
    for (const session of seen.sessions) session.destroy();
    server.close();
  });
  return { server, port: (server.address() as AddressInfo).port, seen };
}

/** An HTTPS server that speaks HTTP/1.1 only. */
async function http1Server(): Promise<{ server: HttpsServer; port: number; seen: Seen }> {
  const seen = { requests: [] as Seen['requests'], sessions: [], connections: 0 };
  const server = createHttpsServer({ cert, key }, (req, res) => {
    seen.requests.push({ version: req.httpVersion, method: req.method ?? '', path: req.url ?? '', authorization: req.headers.authorization });
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"kind":"PodList","items":[]}');
  });
  server.on('secureConnection', () => seen.connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(() => {
    server.closeAllConnections();
    server.close();
  });
  return { server, port: (server.address() as AddressInfo).port, seen };
}

function kubeConfig(port: number, user: { token: string } | { username: string; password: string } = { token: 'secret-token' }): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: `https://127.0.0.1:${port}`, caData: cert.toString('base64'), skipTLSVerify: false }],
    users: [{ name: 'u', ...user }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  return kc;
}

const timing = (over: Partial<Http2Timing> = {}): Http2Timing => ({ ...HTTP2_TIMING, idleMs: 90_000, ...over });

function connectionTo(port: number, over: Partial<Http2Timing> = {}): Http2Connection {
  const connection = new Http2Connection(new URL(`https://127.0.0.1:${port}`), () => ({ ca: cert }), timing(over));
  closers.push(() => connection.close());
  return connection;
}

/** A TCP relay to `port` that can stop passing bytes (a peer gone without a FIN). */
async function relay(port: number): Promise<{ port: number; freeze: () => void }> {
  const sockets: Socket[] = [];
  const server: TcpServer = createTcpServer((client) => {
    const upstream = tcpConnect(port, '127.0.0.1');
    sockets.push(client, upstream);
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(() => {
    for (const socket of sockets) socket.destroy();
    server.close();
  });
  return {
    port: (server.address() as AddressInfo).port,
    freeze: () => {
      for (const socket of sockets) {
        socket.unpipe();
        socket.pause();
      }
    },
  };
}

describe.skipIf(!hasOpenssl)('HTTP/2 to the API server', () => {
  beforeAll(() => {
    const dir = makeCertDir();
    cert = readFileSync(join(dir, 'tls.crt'));
    key = readFileSync(join(dir, 'tls.key'));
  });

  it('sends requests at once as streams of one connection, and answers as node:https would', async () => {
    const { port, seen } = await h2Server();
    const core = makeApiClient(keepAliveKubeConfig(kubeConfig(port)), CoreV1Api);
    const lists = await Promise.all(Array.from({ length: 12 }, (_, i) => core.listNamespacedPod({ namespace: `n${i}` })));
    expect(lists.every((list) => (list as unknown as { kind: string }).kind === 'PodList')).toBe(true);
    const missing = await core.readNamespacedPod({ name: 'missing', namespace: 'n' }).catch((error: unknown) => error);
    expect(missing).toBeInstanceOf(ApiException);
    expect((missing as ApiException<{ reason: string }>).code).toBe(404);
    expect((missing as ApiException<{ reason: string }>).body.reason).toBe('NotFound');
    expect((missing as ApiException).headers['content-type']).toBe('application/json');
    const patched = await core.patchNamespacedPod({ name: 'p', namespace: 'n', body: [{ op: 'add', path: '/metadata/labels', value: {} }] });
    expect((patched as unknown as { method: string }).method).toBe('PATCH');
    // An answer nobody reads is drained: a success gives undefined, an error is read as always.
    expect(await core.patchNamespacedPod({ name: 'p', namespace: 'n', body: [] }, answerUnread())).toBeUndefined();
    const unreadMissing = await core.patchNamespacedPod({ name: 'missing', namespace: 'n', body: [] }, answerUnread()).catch((error: unknown) => error);
    expect((unreadMissing as ApiException<{ reason: string }>).body.reason).toBe('NotFound');
    expect(seen.requests).toHaveLength(16);
    expect(new Set(seen.requests.map((r) => r.version))).toEqual(new Set(['2.0']));
    expect(new Set(seen.requests.map((r) => r.authorization))).toEqual(new Set(['Bearer secret-token']));
    expect([seen.sessions.length, seen.connections]).toEqual([1, 1]);
  });

  it('carries watches on a connection of their own: events split across frames, the end, a refused watch', async () => {
    const { port, seen } = await h2Server();
    const kc = keepAliveKubeConfig(kubeConfig(port));
    await makeApiClient(kc, CoreV1Api).listNamespacedPod({ namespace: 'n' });
    const events: string[] = [];
    const ended = await new Promise<unknown>((resolve) => {
      void new Watch(kc).watch(
        '/api/v1/pods',
        { resourceVersion: '5' },
        (type, object) => events.push(`${type} ${(object as { metadata: { name: string } }).metadata.name}`),
        resolve,
      );
    });
    expect(ended).toBeNull();
    expect(events).toEqual(['ADDED a', 'MODIFIED b']);
    const refused = await new Promise<unknown>((resolve) => {
      void new Watch(kc).watch('/api/v1/namespaces/forbidden/pods', {}, () => undefined, resolve);
    });
    expect((refused as { statusCode?: number }).statusCode).toBe(403);
    await makeApiClient(kc, CoreV1Api).listNamespacedPod({ namespace: 'm' });
    expect(seen.requests.map((r) => [r.version, r.session, r.path])).toEqual([
      ['2.0', 0, '/api/v1/namespaces/n/pods'],
      ['2.0', 1, '/api/v1/pods?watch=true&resourceVersion=5'],
      ['2.0', 1, '/api/v1/namespaces/forbidden/pods?watch=true'],
      ['2.0', 0, '/api/v1/namespaces/m/pods'],
    ]);
    expect(seen.sessions).toHaveLength(2);
  });

  it("authenticates a watch as its requests are: a kubeconfig's basic auth becomes the stream's Authorization header", async () => {
    const { port, seen } = await h2Server();
    const kc = kubeConfig(port, { username: 'ann', password: 'pw' });
    const ended = await new Promise<unknown>((resolve) => void new Watch(keepAliveKubeConfig(kc)).watch('/api/v1/pods', {}, () => undefined, resolve));
    expect(ended).toBeNull();
    expect(seen.requests.map((r) => [r.version, r.authorization])).toEqual([['2.0', `Basic ${Buffer.from('ann:pw').toString('base64')}`]]);
  });

  it('falls back to HTTP/1.1 for a server that chooses it in the TLS handshake, asking it once', async () => {
    const { port, seen } = await http1Server();
    const connects = vi.spyOn(tls, 'connect');
    const kc = keepAliveKubeConfig(kubeConfig(port));
    const core = makeApiClient(kc, CoreV1Api);
    await core.listNamespacedPod({ namespace: 'a' });
    await core.listNamespacedPod({ namespace: 'b' });
    const ended = await new Promise<unknown>((resolve) => void new Watch(kc).watch('/api/v1/pods', {}, () => undefined, resolve));
    expect(ended).toBeNull();
    expect(seen.requests.map((r) => r.version)).toEqual(['1.1', '1.1', '1.1']);
    // The handshake that learnt it, the requests' kept-alive connection, the watch's.
    expect(connects).toHaveBeenCalledTimes(3);
    expect(connects.mock.calls[0]![0]).toMatchObject({ ALPNProtocols: ['h2', 'http/1.1'] });
  });

  it('falls back to HTTP/1.1 as well when a watch is the first to ask, its requests not asking again', async () => {
    const { port, seen } = await http1Server();
    const connects = vi.spyOn(tls, 'connect');
    const kc = keepAliveKubeConfig(kubeConfig(port));
    const ended = await new Promise<unknown>((resolve) => void new Watch(kc).watch('/api/v1/pods', {}, () => undefined, resolve));
    expect(ended).toBeNull();
    const core = makeApiClient(kc, CoreV1Api);
    await core.listNamespacedPod({ namespace: 'a' });
    await core.listNamespacedPod({ namespace: 'b' });
    expect(seen.requests.map((r) => [r.version, r.path])).toEqual([
      ['1.1', '/api/v1/pods?watch=true'],
      ['1.1', '/api/v1/namespaces/a/pods'],
      ['1.1', '/api/v1/namespaces/b/pods'],
    ]);
    // The handshake that learnt it, the watch's connection, the requests' kept-alive one.
    expect(connects).toHaveBeenCalledTimes(3);
  });

  it('speaks HTTP/1.1 only when HTTP/2 is switched off (DISABLE_HTTP2)', async () => {
    const { port, seen } = await h2Server();
    process.env['DISABLE_HTTP2'] = '1';
    let kc: KubeConfig;
    try {
      kc = keepAliveKubeConfig(kubeConfig(port));
    } finally {
      delete process.env['DISABLE_HTTP2'];
    }
    await makeApiClient(kc, CoreV1Api).listNamespacedPod({ namespace: 'a' });
    expect(seen.requests.map((r) => r.version)).toEqual(['1.1']);
    expect(seen.sessions).toHaveLength(0);
  });

  it('asks the leadership fence again once the connection is up, and a write it then refuses is never sent', async () => {
    const { port, seen } = await h2Server();
    let asked = 0;
    const kc = transportKubeConfig(keepAliveKubeConfig(kubeConfig(port)), {
      timeoutMs: 5_000,
      userAgent: 'ua',
      clock: realClock,
      mayWrite: () => asked++ === 0,
    });
    const refused = await makeApiClient(kc, CoreV1Api)
      .deleteNamespacedPod({ name: 'p', namespace: 'n' })
      .catch((error: unknown) => error);
    expect(isFencedWrite(refused)).toBe(true);
    expect(asked).toBe(2);
    expect(seen.requests).toEqual([]);
  });

  it('finds a peer gone without a FIN by an unanswered PING: its streams fail as unreachable, the next request connects again', async () => {
    const { port, seen } = await h2Server();
    const gone = await relay(port);
    const connection = connectionTo(gone.port, { pingMs: 50, pingTimeoutMs: 100 });
    const hanging = connection.request('/hang', { method: 'GET', headers: {} }).catch((error: unknown) => error);
    await expect.poll(() => seen.requests.length).toBe(1);
    gone.freeze();
    expect(await hanging).toMatchObject({ code: 'ETIMEDOUT', message: 'the API server did not answer a PING within 100 ms' });
    expect((await connection.request('/api/v1/pods', { method: 'GET', headers: {} }))?.status).toBe(200);
    expect(seen.sessions).toHaveLength(2);
  });

  it('gives up a TCP connection whose TLS handshake does not finish within connectTimeoutMs, and stops waiting when aborted', async () => {
    const silent = createTcpServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    closers.push(() => silent.close());
    const port = (silent.address() as AddressInfo).port;
    const timedOut = await connectionTo(port, { connectTimeoutMs: 100 })
      .request('/', { method: 'GET', headers: {} })
      .catch((error: unknown) => error);
    expect(timedOut).toMatchObject({ code: 'ETIMEDOUT' });
    const controller = new AbortController();
    setTimeout(() => controller.abort(new DOMException('no answer', 'TimeoutError')), 50);
    const aborted = await connectionTo(port, { connectTimeoutMs: 300 })
      .request('/', { method: 'GET', headers: {}, signal: controller.signal })
      .catch((error: unknown) => error);
    expect(aborted).toMatchObject({ name: 'AbortError', cause: { name: 'TimeoutError' } });
  });

  it('sends a stream the server refused (REFUSED_STREAM: not processed) once more, and fails on a second refusal', async () => {
    let refusals = 1;
    const { port, seen } = await h2Server((req, res) => {
      if (refusals-- > 0) req.stream.close(http2.constants.NGHTTP2_REFUSED_STREAM);
      else api(req, res);
    });
    const connection = connectionTo(port);
    expect((await connection.request('/api/v1/pods', { method: 'GET', headers: {} }))?.status).toBe(200);
    expect(seen.requests).toHaveLength(2);
    refusals = 2;
    const refused = await connection.request('/api/v1/pods', { method: 'GET', headers: {} }).catch((error: unknown) => error);
    expect(refused).toMatchObject({ code: 'ERR_HTTP2_STREAM_ERROR' });
    expect(seen.requests).toHaveLength(4);
  });

  it('opens a new connection after the server sent GOAWAY', async () => {
    const { port, seen } = await h2Server();
    const connection = connectionTo(port);
    expect((await connection.request('/api/v1/pods', { method: 'GET', headers: {} }))?.status).toBe(200);
    seen.sessions[0]!.goaway();
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect((await connection.request('/api/v1/pods', { method: 'GET', headers: {} }))?.status).toBe(200);
    expect(seen.sessions).toHaveLength(2);
  });

  it('closes a connection left without streams for idleMs', async () => {
    const { port, seen } = await h2Server();
    const connection = connectionTo(port, { idleMs: 100 });
    const answer = await connection.request('/api/v1/pods', { method: 'GET', headers: {} });
    answer?.stream.resume();
    await new Promise((resolve) => answer?.stream.once('close', resolve));
    expect(seen.sessions[0]!.closed).toBe(false);
    await new Promise((resolve) => seen.sessions[0]!.once('close', resolve));
    const again = await connection.request('/api/v1/pods', { method: 'GET', headers: {} });
    expect(again?.status).toBe(200);
    expect(seen.sessions).toHaveLength(2);
  });
});
