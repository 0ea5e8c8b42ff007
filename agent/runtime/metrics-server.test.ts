// The metrics server as a scraper sees it: a real HTTP(S) server on loopback, fake reviews in place of the API server.
// The TLS tests make their certificates with openssl at test time (skipped where there is none).
import { readFileSync, renameSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import { Counter, Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { FakeClock } from './clock.js';
import type { HttpEndpoint } from './http-server.js';
import { silentLogger } from './log.js';
import { MetricsAccess, type AccessReviews } from './metrics-access.js';
import { startMetricsServer, type MetricsServing } from './metrics-server.js';
import { hasOpenssl, makeCertDir } from './tls-test-support.js';

interface Answer {
  readonly status: number;
  readonly body: string;
  readonly headers: Record<string, string | string[] | undefined>;
  /** The server certificate's SHA-256 fingerprint (HTTPS only). */
  readonly fingerprint?: string;
}

/** GET `path` with an optional bearer token; over HTTPS when `ca` is given (the server's certificate is trusted alone). */
function get(endpoint: HttpEndpoint, path: string, options: { token?: string; ca?: Buffer; method?: string } = {}): Promise<Answer> {
  const headers = options.token === undefined ? {} : { Authorization: `Bearer ${options.token}` };
  const common = { host: '127.0.0.1', port: endpoint.address.port, path, method: options.method ?? 'GET', headers, agent: false as const };
  return new Promise((resolve, reject) => {
    const onResponse = (res: import('node:http').IncomingMessage) => {
      let body = '';
      const fingerprint = options.ca ? (res.socket as TLSSocket).getPeerCertificate().fingerprint256 : undefined;
      res.on('data', (chunk: Buffer) => (body += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, headers: res.headers, ...(fingerprint && { fingerprint }) }));
    };
    const req = options.ca ? httpsRequest({ ...common, ca: options.ca }, onResponse) : httpRequest(common, onResponse);
    req.on('error', reject);
    req.end();
  });
}

/** Reviews of an API server where `prom-token` is Prometheus, allowed to get /metrics, and `web-token` a user who is not. */
const reviews: AccessReviews = {
  authenticate: async (token) => (token === 'prom-token' ? { username: 'prometheus' } : token === 'web-token' ? { username: 'web' } : undefined),
  authorize: async (user, path, verb) => user.username === 'prometheus' && path === '/metrics' && verb === 'get',
};

function registry(): Registry {
  const r = new Registry();
  new Counter({ name: 'test_scrapes_total', help: 'a metric to find', registers: [r] }).inc();
  return r;
}

const servers: HttpEndpoint[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function serve(serving: MetricsServing): Promise<HttpEndpoint> {
  const server = await startMetricsServer({ host: '127.0.0.1', port: 0 }, registry(), serving, silentLogger);
  servers.push(server);
  return server;
}

const secure = (): MetricsServing => ({ access: new MetricsAccess(reviews, new FakeClock(), silentLogger) });

describe('metrics server', () => {
  it('without access checks, serves /metrics to anyone and nothing else', async () => {
    const server = await serve({});
    const metrics = await get(server, '/metrics');
    expect(metrics.status).toBe(200);
    expect(metrics.headers['content-type']).toContain('text/plain');
    expect(metrics.body).toContain('test_scrapes_total 1');
    for (const path of ['/healthz', '/readyz', '/']) expect((await get(server, path)).status, path).toBe(404);
    expect((await get(server, '/metrics', { method: 'POST' })).status).toBe(405);
  });

  it('with access checks: 401 without a token or with one the API server rejects, 403 when not allowed, 200 when allowed', async () => {
    const server = await serve(secure());
    const none = await get(server, '/metrics');
    expect(none.status).toBe(401);
    expect(none.headers['www-authenticate']).toBe('Bearer');
    expect(none.body).not.toContain('test_scrapes_total');
    expect((await get(server, '/metrics', { token: 'forged' })).status).toBe(401);
    const denied = await get(server, '/metrics', { token: 'web-token' });
    expect(denied.status).toBe(403);
    expect(denied.body).toBe('Authorization denied for user web (get /metrics)\n');
    const allowed = await get(server, '/metrics', { token: 'prom-token' });
    expect(allowed.status).toBe(200);
    expect(allowed.body).toContain('test_scrapes_total 1');
  });

  it('answers 500 when a review fails unexpectedly, and keeps serving', async () => {
    const broken: AccessReviews = { ...reviews, authorize: async () => Promise.reject(new Error('HTTP 503')) };
    const server = await serve({ access: new MetricsAccess(broken, new FakeClock(), silentLogger) });
    expect((await get(server, '/metrics', { token: 'prom-token' })).status).toBe(500);
    expect((await get(server, '/metrics', { token: 'forged' })).status).toBe(401);
  });

  it.skipIf(!hasOpenssl)('serves TLS with the certificate of --metrics-cert-dir, access checks included', async () => {
    const dir = makeCertDir();
    const ca = readFileSync(join(dir, 'tls.crt'));
    const server = await serve({ ...secure(), certDir: dir });
    expect((await get(server, '/metrics', { ca })).status).toBe(401);
    const allowed = await get(server, '/metrics', { ca, token: 'prom-token' });
    expect(allowed.status).toBe(200);
    expect(allowed.body).toContain('test_scrapes_total 1');
    // Plain HTTP gets no metrics from it.
    await expect(get(server, '/metrics', { token: 'prom-token' })).rejects.toThrow();
  });

  it.skipIf(!hasOpenssl)('picks up a renewed certificate without a restart', async () => {
    const dir = makeCertDir();
    const server = await serve({ certDir: dir, certPollMs: 20 });
    const before = (await get(server, '/metrics', { ca: readFileSync(join(dir, 'tls.crt')) })).fingerprint;
    const renewed = makeCertDir();
    const ca = readFileSync(join(renewed, 'tls.crt'));
    // As a Secret volume does: both files replaced at once (renames), not rewritten in place.
    renameSync(join(renewed, 'tls.key'), join(dir, 'tls.key'));
    renameSync(join(renewed, 'tls.crt'), join(dir, 'tls.crt'));
    let after: string | undefined;
    // Until the poll has seen the change; the test's own timeout bounds the wait.
    while (after === undefined || after === before) {
      after = await get(server, '/metrics', { ca }).then(
        (a) => a.fingerprint,
        () => undefined,
      );
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(after).not.toBe(before);
  });

  it('refuses to start with a certificate directory it cannot read, saying which', async () => {
    await expect(serve({ certDir: '/nonexistent/certs' })).rejects.toThrow(/cannot read the metrics certificate: .*\/nonexistent\/certs\/tls.crt/);
  });
});
