import { CoreV1Api, nodeHttpLibrary } from './kube-client.js';
import { KubeConfig } from './kube-config.js';
import { describe, expect, it, vi } from 'vitest';
import { countingKubeConfig } from './api-requests.js';
import { FencedWriteError, isFencedWrite, transportKubeConfig } from './api-transport.js';
import { realClock } from './clock.js';
import { serveApi } from './test-support.js';

const SERVER_DATE = 'Wed, 01 Jan 2031 00:00:00 GMT';
const received: { method: string; path: string; userAgent: string | undefined }[] = [];
const kc = new KubeConfig();
serveApi(kc, (req, res) => {
  received.push({ method: req.method ?? '', path: req.url ?? '', userAgent: req.headers['user-agent'] });
  if (req.url?.includes('/hang')) return; // never answers
  res.writeHead(200, { 'Content-Type': 'application/json', Date: SERVER_DATE });
  res.end(JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'ns' } }));
});

describe('transportKubeConfig', () => {
  it("sends the agent's User-Agent, reports the server's Date and keeps the wrappers around it working", async () => {
    const responses: number[] = [];
    const counted: string[] = [];
    const client = countingKubeConfig(
      transportKubeConfig(kc, {
        timeoutMs: 5_000,
        userAgent: 'extended-deployment-agent (a-1)',
        clock: realClock,
        onResponse: (date) => void responses.push(date),
      }),
      (verb, resource) => void counted.push(`${verb} ${resource}`),
    ).makeApiClient(CoreV1Api);
    received.length = 0;
    await client.readNamespacedPod({ name: 'p', namespace: 'ns' });
    expect(received).toEqual([{ method: 'GET', path: '/api/v1/namespaces/ns/pods/p', userAgent: 'extended-deployment-agent (a-1)' }]);
    expect(responses).toEqual([Date.parse(SERVER_DATE)]);
    expect(counted).toEqual(['GET pods']);
  });

  it('aborts a request the server never answers', async () => {
    const client = transportKubeConfig(kc, { timeoutMs: 200, userAgent: 'ua', clock: realClock }).makeApiClient(CoreV1Api);
    await expect(client.readNamespacedPod({ name: 'hang', namespace: 'ns' })).rejects.toThrow(/abort|timeout/i);
  });

  it('leaves nothing to fire once a request is answered: its signal is never aborted afterwards', async () => {
    const send = vi.spyOn(nodeHttpLibrary, 'send');
    try {
      const client = transportKubeConfig(kc, { timeoutMs: 50, userAgent: 'ua', clock: realClock }).makeApiClient(CoreV1Api);
      await client.readNamespacedPod({ name: 'p', namespace: 'ns' });
      const signal = send.mock.calls[0]![0].getSignal();
      await new Promise((resolve) => setTimeout(resolve, 150));
      expect(signal?.aborted).toBe(false);
    } finally {
      send.mockRestore();
    }
  });

  it('refuses writes unsent while the fence is closed, and lets reads through', async () => {
    let open = false;
    const client = transportKubeConfig(kc, { timeoutMs: 5_000, userAgent: 'ua', clock: realClock, mayWrite: () => open }).makeApiClient(CoreV1Api);
    received.length = 0;
    const refused = client.deleteNamespacedPod({ name: 'p', namespace: 'ns' }).catch((error: unknown) => error);
    expect(isFencedWrite(await refused)).toBe(true);
    expect(await refused).toBeInstanceOf(FencedWriteError);
    await client.readNamespacedPod({ name: 'p', namespace: 'ns' });
    open = true;
    await client.deleteNamespacedPod({ name: 'p', namespace: 'ns' });
    expect(received.map((r) => r.method)).toEqual(['GET', 'DELETE']);
  });

  it('asks the fence again once the connection is ready, and a write it then refuses never reaches the server', async () => {
    // Open when the write is sent, closed by the time its connection is up (a process paused in between).
    let asked = 0;
    const client = transportKubeConfig(kc, { timeoutMs: 5_000, userAgent: 'ua', clock: realClock, mayWrite: () => asked++ === 0 }).makeApiClient(CoreV1Api);
    received.length = 0;
    const refused = await client.deleteNamespacedPod({ name: 'p', namespace: 'ns' }).catch((error: unknown) => error);
    expect(String(refused)).toMatch(/not sent: this agent is not \(or no longer surely\) the leader/);
    expect(asked).toBe(2);
    expect(received).toEqual([]);
  });
});
