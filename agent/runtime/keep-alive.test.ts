import { readFileSync } from 'node:fs';
import { Agent, createServer, get as httpsGet, type RequestOptions, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import tls from 'node:tls';
import { HttpMethod, KubeConfig, RequestContext } from '@kubernetes/client-node';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { MAX_CONNECTIONS, keepAliveKubeConfig } from './keep-alive.js';
import type { HttpsRequestOptions } from './kube-config.js';
import { hasOpenssl, makeCertDir } from './tls-test-support.js';

const b64 = (s: string) => Buffer.from(s).toString('base64');
/** A TLS option as text: client-node decodes caData, certData and keyData into Buffers. */
const text = (v: unknown) => (Buffer.isBuffer(v) ? v.toString() : v);

function kubeConfig(cert = 'client-cert'): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: 'https://127.0.0.1:6443', caData: b64('ca') }],
    users: [{ name: 'u', certData: b64(cert), keyData: b64('client-key') }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  return kc;
}

async function agentOf(kc: KubeConfig): Promise<Agent> {
  const context = new RequestContext('https://127.0.0.1:6443/api/v1/pods', HttpMethod.GET);
  await kc.applySecurityAuthentication(context);
  return context.getAgent() as Agent;
}

describe('keepAliveKubeConfig', () => {
  it('client-node alone gives every request a new agent (a new connection and TLS handshake each time)', async () => {
    const kc = kubeConfig();
    expect(await agentOf(kc)).not.toBe(await agentOf(kc));
  });

  it('gives requests one keep-alive agent with the same TLS settings', async () => {
    const kc = keepAliveKubeConfig(kubeConfig());
    const first = await agentOf(kc);
    expect(await agentOf(kc)).toBe(first);
    const options = (first as Agent & { options: Record<string, unknown> }).options;
    expect(options['keepAlive']).toBe(true);
    // Bounded: Node's default opens a connection per concurrent request and keeps 256 idle, each holding TLS buffers.
    expect([first.maxSockets, first.maxFreeSockets]).toEqual([MAX_CONNECTIONS, MAX_CONNECTIONS]);
    expect(text(options['ca'])).toBe('ca');
    expect(text(options['cert'])).toBe('client-cert');
    expect(text(options['key'])).toBe('client-key');
  });

  it('uses another agent when the TLS settings differ (a rotated client certificate)', async () => {
    const base = kubeConfig('cert-1');
    const kc = keepAliveKubeConfig(base);
    const first = await agentOf(kc);
    base.users = [{ name: 'u', certData: b64('cert-2'), keyData: b64('client-key') }];
    const second = await agentOf(kc);
    expect(second).not.toBe(first);
    expect(String((second as Agent & { options: Record<string, unknown> }).options['cert'])).toBe('cert-2');
  });
});

describe.skipIf(!hasOpenssl)('keepAliveKubeConfig over TLS', () => {
  let server: Server;
  let port = 0;
  let ca: Buffer;
  beforeAll(async () => {
    const dir = makeCertDir();
    ca = readFileSync(join(dir, 'tls.crt'));
    // Each answer waits, so that the requests sent at once are on connections open at once.
    server = createServer({ cert: ca, key: readFileSync(join(dir, 'tls.key')) }, (_req, res) => setTimeout(() => res.end('{}'), 50));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => {
    server.closeAllConnections();
    server.close();
  });
  afterEach(() => vi.restoreAllMocks());

  function loopback(): KubeConfig {
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'c', server: `https://127.0.0.1:${port}`, caData: ca.toString('base64') }],
      users: [{ name: 'u', token: 't' }],
      contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
      currentContext: 'x',
    });
    return kc;
  }

  async function getAtOnce(agent: Agent, count: number, options: RequestOptions = {}): Promise<void> {
    const get = () =>
      new Promise<void>((resolve, reject) => {
        httpsGet({ ...options, host: '127.0.0.1', port, path: '/', agent }, (res) => res.resume().on('end', resolve)).on('error', reject);
      });
    await Promise.all(Array.from({ length: count }, get));
  }

  it("opens its requests' and its watches' connections with one TLS context (Node makes one per connection from the options)", async () => {
    const contexts = vi.spyOn(tls, 'createSecureContext');
    const kc = keepAliveKubeConfig(loopback());
    const agent = await agentOf(kc);
    await getAtOnce(agent, 6);
    expect(Object.values(agent.freeSockets).flat()).toHaveLength(6);
    // A watch's options as kube-watch takes them: CA, agent, headers.
    const watch: HttpsRequestOptions = {};
    await kc.applyToHTTPSOptions(watch);
    expect(watch.agent).toBeInstanceOf(Agent);
    expect(watch.agent).not.toBe(agent);
    await getAtOnce(watch.agent as Agent, 3, watch);
    expect(contexts).toHaveBeenCalledTimes(1);
    agent.destroy();
  });

  it('closes connections left idle for idleMs (and keeps them open until then)', async () => {
    const idle = await agentOf(keepAliveKubeConfig(loopback(), 200));
    const kept = await agentOf(keepAliveKubeConfig(loopback()));
    await Promise.all([getAtOnce(idle, 3), getAtOnce(kept, 3)]);
    expect(Object.values(idle.freeSockets).flat()).toHaveLength(3);
    await vi.waitFor(() => expect(Object.values(idle.freeSockets).flat()).toHaveLength(0), { timeout: 5000, interval: 50 });
    expect(Object.values(kept.freeSockets).flat()).toHaveLength(3);
    kept.destroy();
  });
});
