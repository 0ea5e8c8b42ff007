// startAgent's cache-sync bound: caches that never sync end the agent (the CLI exits 1 on `failed`), so a replica that
// cannot list what it needs crash-loops visibly instead of holding on and doing nothing. And its connection: informers'
// lists are streams of one HTTP/2 connection to the API server, their watches streams of a second one.
import { readFileSync } from 'node:fs';
import { createSecureServer, type Http2SecureServer, type ServerHttp2Session } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startAgent, type Agent, type AgentFailure } from './agent.js';
import { FakeClock } from './runtime/clock.js';
import { jsonLogger } from './runtime/log.js';
import { serveApi } from './runtime/test-support.js';
import { hasOpenssl, makeCertDir } from './runtime/tls-test-support.js';

/** The pods list of the pods informer (the usage informer lists pods too, by field selector, and is answered). */
const isPodList = (url: URL) => url.pathname === '/api/v1/pods' && url.searchParams.has('labelSelector') && url.searchParams.get('watch') !== 'true';

/** How the fake API server treats the pods informer's list: it answers it, or never does. */
const network = { pods: 'answer' as 'answer' | 'hang' };

const TIMEOUT_S = 120;

async function start(kc: KubeConfig): Promise<{ agent: Agent; clock: FakeClock; errors: string[]; failure: () => AgentFailure | undefined }> {
  const clock = new FakeClock();
  const errors: string[] = [];
  const log = jsonLogger({ level: 'error', write: (line) => void errors.push((JSON.parse(line) as { msg: string }).msg) });
  const agent = await startAgent({
    kubeConfig: kc,
    clock,
    log,
    leaderElect: false,
    metricsBindAddress: '127.0.0.1:0',
    healthProbeBindAddress: '127.0.0.1:0',
    cacheSyncTimeoutSeconds: TIMEOUT_S,
  });
  let failure: AgentFailure | undefined;
  void agent.failed.then((f) => (failure = f));
  return { agent, clock, errors, failure: () => failure };
}

/** Polls /readyz (real time) until it answers `expected`: the informers that can sync have synced. */
async function readyz(agent: Agent, expected: string): Promise<void> {
  let body = '';
  for (let i = 0; i < 400 && body !== expected; i++) {
    body = await (await fetch(`http://127.0.0.1:${agent.healthAddress.port}/readyz`)).text();
    if (body !== expected) await new Promise((resolve) => setTimeout(resolve, 10));
  }
  expect(body).toBe(expected);
}

/** Lets the shutdown's real I/O (informers, servers) run; fails with a clear value rather than a test timeout. */
const within = <T>(promise: Promise<T>, ms = 5_000) =>
  Promise.race([promise, new Promise<'still running'>((resolve) => setTimeout(() => resolve('still running'), ms))]);

describe('startAgent: cache-sync timeout', () => {
  const kc = new KubeConfig();
  serveApi(kc, (req, res) => {
    const url = new URL(req.url ?? '', 'http://loopback');
    if (isPodList(url) && network.pods === 'hang') return; // never answered, as behind a hung connection
    res.writeHead(200, { 'content-type': 'application/json' });
    if (url.searchParams.get('watch') === 'true') return void res.flushHeaders(); // the watch stays open, silent
    res.end(JSON.stringify({ kind: 'List', apiVersion: 'v1', metadata: { resourceVersion: '1' }, items: [] }));
  });

  it('ends the agent with CacheSyncTimeout and an error naming the unsynced cache once the bound passes', async () => {
    network.pods = 'hang';
    const { agent, clock, errors, failure } = await start(kc);
    await readyz(agent, 'not ready: informers not synced: pods\n');

    clock.advance(TIMEOUT_S * 1000 - 1);
    await new Promise((resolve) => setImmediate(resolve));
    expect(failure()).toBeUndefined();

    clock.advance(1);
    const message = `caches did not sync within ${TIMEOUT_S}s: pods (see the informers' warnings for the API errors)`;
    expect(await within(agent.failed)).toEqual({ reason: 'CacheSyncTimeout', message });
    expect(errors).toContain(message);
    // Everything is stopped by then: the probes no longer answer.
    await expect(fetch(`http://127.0.0.1:${agent.healthAddress.port}/readyz`)).rejects.toThrow();
  });

  it('does not end an agent whose caches synced in time', async () => {
    network.pods = 'answer';
    const { agent, clock, errors, failure } = await start(kc);
    try {
      await readyz(agent, 'ok\n');
      clock.advance(TIMEOUT_S * 1000 * 2);
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(failure()).toBeUndefined();
      expect(errors).toEqual([]);
    } finally {
      expect(await within(agent.stop())).toBeUndefined();
    }
  });
});

describe.skipIf(!hasOpenssl)('startAgent: its connections to the API server', () => {
  const requests: { version: string; watch: boolean; session: number }[] = [];
  const sessions: ServerHttp2Session[] = [];
  const kc = new KubeConfig();
  let server: Http2SecureServer;
  beforeAll(async () => {
    const dir = makeCertDir();
    const cert = readFileSync(join(dir, 'tls.crt'));
    server = createSecureServer({ cert, key: readFileSync(join(dir, 'tls.key')), allowHTTP1: true }, (req, res) => {
      const url = new URL(req.url, 'https://loopback');
      requests.push({
        version: req.httpVersion,
        watch: url.searchParams.get('watch') === 'true',
        session: req.stream?.session ? sessions.findIndex((s) => s === req.stream.session) : -1,
      });
      res.writeHead(200, { 'content-type': 'application/json' });
      if (url.searchParams.get('watch') === 'true') return void res.write(''); // the watch stays open, silent
      res.end(JSON.stringify({ kind: 'List', apiVersion: 'v1', metadata: { resourceVersion: '1' }, items: [] }));
    });
    server.on('session', (session) => sessions.push(session));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    kc.loadFromOptions({
      clusters: [{ name: 'c', server: `https://127.0.0.1:${(server.address() as AddressInfo).port}`, caData: cert.toString('base64'), skipTLSVerify: false }],
      users: [{ name: 'u', token: 't' }],
      contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
      currentContext: 'x',
    });
  });
  afterAll(() => {
    for (const session of sessions) session.destroy();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it("sends its informers' lists as streams of one HTTP/2 connection, their watches as streams of another", async () => {
    const { agent, errors } = await start(kc);
    try {
      await readyz(agent, 'ok\n');
      await vi.waitFor(() => expect(requests.filter((r) => r.watch).length).toBeGreaterThan(5));
      expect(new Set(requests.map((r) => r.version))).toEqual(new Set(['2.0']));
      expect(sessions).toHaveLength(2);
      const sessionsOf = (watch: boolean) => new Set(requests.filter((r) => r.watch === watch).map((r) => r.session));
      expect([sessionsOf(false), sessionsOf(true)]).toEqual([new Set([0]), new Set([1])]);
      expect(errors).toEqual([]);
    } finally {
      expect(await within(agent.stop())).toBeUndefined();
    }
  });
});
