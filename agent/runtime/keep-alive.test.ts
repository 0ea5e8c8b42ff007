import { Agent } from 'node:https';
import { HttpMethod, KubeConfig, RequestContext } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { MAX_CONNECTIONS, keepAliveKubeConfig } from './keep-alive.js';

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
