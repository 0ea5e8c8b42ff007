// evictPod through the agent's CoreV1Api (kube-client.ts) against a loopback server answering as the API server's eviction
// subresource does (kubernetes/pkg/registry/core/pod/storage/eviction.go): 201 when evicted, 429 with a DisruptionBudget
// cause when a budget allows no disruption, 429 without one when API Priority and Fairness throttles.
import { CoreV1Api } from './runtime/kube-client.js';
import { KubeConfig } from './runtime/kube-config.js';
import { describe, expect, it } from 'vitest';
import { EvictionBlockedError, evictPod } from './eviction.js';
import { serveApi } from './runtime/test-support.js';

const status = (code: number, reason: string, message: string, causes?: { reason: string; message: string }[]) => ({
  kind: 'Status',
  apiVersion: 'v1',
  status: code < 300 ? 'Success' : 'Failure',
  code,
  reason,
  message,
  ...(causes && { details: { causes } }),
});

/** What the server answers next, and what it received. */
let answer: { code: number; body: object; headers?: Record<string, string> } = { code: 201, body: status(201, '', '') };
const received: { method: string; path: string; body: unknown }[] = [];

const kc = new KubeConfig();
serveApi(kc, (req, res) => {
  let body = '';
  req.on('data', (chunk: Buffer) => (body += chunk.toString()));
  req.on('end', () => {
    received.push({ method: req.method ?? '', path: new URL(req.url ?? '', 'http://loopback').pathname, body: JSON.parse(body || '{}') });
    res.writeHead(answer.code, { 'content-type': 'application/json', ...answer.headers });
    res.end(JSON.stringify(answer.body));
  });
});

const BUDGET = 'The disruption budget web-pdb needs 2 healthy pods and has 2 currently';
const evict = () => evictPod(kc.makeApiClient(CoreV1Api), 'shop', 'web-amd-a', 'uid-a');

describe('evictPod', () => {
  it('posts an Eviction for the exact pod: its uid is a precondition, so a pod recreated under the name is never evicted', async () => {
    received.length = 0;
    answer = { code: 201, body: status(201, '', '') };
    await evict();
    expect(received).toEqual([
      {
        method: 'POST',
        path: '/api/v1/namespaces/shop/pods/web-amd-a/eviction',
        body: {
          apiVersion: 'policy/v1',
          kind: 'Eviction',
          metadata: { name: 'web-amd-a', namespace: 'shop' },
          deleteOptions: { preconditions: { uid: 'uid-a' } },
        },
      },
    ]);
  });

  it('counts a pod that is gone (404) or replaced by another of its name (409) as done', async () => {
    for (const [code, reason] of [
      [404, 'NotFound'],
      [409, 'Conflict'],
    ] as const) {
      answer = { code, body: status(code, reason, 'gone') };
      await expect(evict(), reason).resolves.toBeUndefined();
    }
  });

  it('reports a budget that allows no disruption as EvictionBlockedError, naming the pod and the budget', async () => {
    answer = {
      code: 429,
      body: status(429, 'TooManyRequests', "Cannot evict pod as it would violate the pod's disruption budget.", [
        { reason: 'DisruptionBudget', message: BUDGET },
      ]),
    };
    const error = await evict().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(EvictionBlockedError);
    expect(error).toMatchObject({ namespace: 'shop', pod: 'web-amd-a', budget: 'web-pdb', detail: BUDGET });
    expect((error as Error).message).toBe(`eviction of pod shop/web-amd-a blocked by PodDisruptionBudget web-pdb: ${BUDGET}`);
  });

  it('also when the budget is not processed yet (its cause names it), and when an older server sends only the message', async () => {
    const pending = 'The disruption budget web-pdb is still being processed by the server.';
    answer = {
      code: 429,
      body: status(429, 'TooManyRequests', "Cannot evict pod as it would violate the pod's disruption budget.", [
        { reason: 'DisruptionBudget', message: pending },
      ]),
      headers: { 'retry-after': '10' },
    };
    await expect(evict()).rejects.toMatchObject({ budget: 'web-pdb', detail: pending });
    answer = { code: 429, body: status(429, 'TooManyRequests', "Cannot evict pod as it would violate the pod's disruption budget.") };
    await expect(evict()).rejects.toMatchObject({ name: 'EvictionBlockedError', budget: undefined });
  });

  it('passes any other failure on as it is: a throttled request (429 without a budget) and a server error are retried as errors', async () => {
    for (const [code, reason] of [
      [429, 'TooManyRequests'],
      [500, 'InternalError'],
    ] as const) {
      answer = {
        code,
        body: status(
          code,
          reason,
          code === 429
            ? 'Too many requests, please try again later.'
            : 'This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.',
        ),
      };
      const error = await evict().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error, reason).toMatchObject({ code });
      expect(error, reason).not.toBeInstanceOf(EvictionBlockedError);
    }
  });
});
