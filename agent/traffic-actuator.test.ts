import type { AppsV1Api, CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { weightedRoute } from '../core/traffic/route.js';
import { revisionService } from '../core/traffic/services.js';
import type { TrafficAction } from '../core/rollout/actions.js';
import { performAction } from './actuators.js';

const owner = { name: 'web', namespace: 'shop', uid: 'u-web' };
const service = revisionService(owner, 'r2', { port: 80, name: 'http' });
const route = weightedRoute(
  owner,
  { parentRefs: [{ name: 'gw' }] },
  [
    { revision: 'r1', weight: 9000 },
    { revision: 'r2', weight: 1000 },
  ],
  80,
);
const traffic = (write: TrafficAction['write']): TrafficAction => ({ kind: 'traffic', write });
const status = (code: number) => Object.assign(new Error(`HTTP ${code}`), { code, body: { kind: 'Status', code } });

/** The Content-Type the per-call options set (client-node's setHeaderOptions middleware). */
function contentTypeOf(options: unknown): string | undefined {
  const headers: Record<string, string> = {};
  const context = { setHeaderParam: (k: string, v: string) => (headers[k] = v), getHeaders: () => headers };
  for (const m of (options as { middleware?: { pre: (c: unknown) => unknown }[] } | undefined)?.middleware ?? []) m.pre(context);
  return headers['Content-Type'];
}

/** Core and custom-object clients whose Service and custom-object writes are recorded and answer `error` (or succeed). */
function clients(error?: Error) {
  const calls: { method: string; params: Record<string, unknown>; contentType: string | undefined }[] = [];
  const answer = (method: string) => async (params: Record<string, unknown>, options?: unknown) => {
    calls.push({ method, params, contentType: contentTypeOf(options) });
    if (error) throw error;
    return { metadata: { name: params['name'], resourceVersion: '9' } };
  };
  const core = { patchNamespacedService: answer('patchService'), deleteNamespacedService: answer('deleteService') } as unknown as CoreV1Api;
  const custom = { patchNamespacedCustomObject: answer('patchCustom'), deleteNamespacedCustomObject: answer('deleteCustom') } as unknown as CustomObjectsApi;
  return { calls, clients: { core, custom, apps: {} as AppsV1Api, now: () => 0 } };
}

describe('traffic writes (mode Weighted)', () => {
  it('applies a revision Service whole, by server-side apply under the agent field manager, forcing ownership', async () => {
    const c = clients();
    await expect(performAction(c.clients, 'shop', 'ReplicaSet', traffic({ kind: 'applyService', service }))).resolves.toBeUndefined();
    expect(c.calls).toEqual([
      {
        method: 'patchService',
        contentType: 'application/apply-patch+yaml',
        params: { name: 'web-r2', namespace: 'shop', body: service, fieldManager: 'extendeddeployment-agent', force: true },
      },
    ]);
    // The body is the whole object core built: owner-referenced, labelled as the agent's.
    expect(c.calls[0]?.params['body']).toMatchObject({ metadata: { ownerReferences: [{ kind: 'ExtendedDeployment', name: 'web', uid: 'u-web' }] } });
  });

  it('applies the HTTPRoute as a gateway.networking.k8s.io/v1 httproutes custom object, the same way', async () => {
    const c = clients();
    await performAction(c.clients, 'shop', 'ReplicaSet', traffic({ kind: 'applyRoute', route }));
    expect(c.calls).toEqual([
      {
        method: 'patchCustom',
        contentType: 'application/apply-patch+yaml',
        params: {
          group: 'gateway.networking.k8s.io',
          version: 'v1',
          plural: 'httproutes',
          namespace: 'shop',
          name: 'web',
          body: route,
          fieldManager: 'extendeddeployment-agent',
          force: true,
        },
      },
    ]);
    expect(route.spec.rules[0]?.backendRefs.map((b) => [b.name, b.weight])).toEqual([
      ['web-r1', 9000],
      ['web-r2', 1000],
    ]);
  });

  it('deletes a Service or the route by name, and takes one already gone (404) as deleted', async () => {
    const c = clients();
    await performAction(c.clients, 'shop', 'ReplicaSet', traffic({ kind: 'deleteService', name: 'web-r1' }));
    await performAction(c.clients, 'shop', 'ReplicaSet', traffic({ kind: 'deleteRoute', name: 'web' }));
    expect(c.calls.map(({ method, params }) => ({ method, params }))).toEqual([
      { method: 'deleteService', params: { name: 'web-r1', namespace: 'shop' } },
      { method: 'deleteCustom', params: { group: 'gateway.networking.k8s.io', version: 'v1', plural: 'httproutes', namespace: 'shop', name: 'web' } },
    ]);
    const gone = clients(status(404));
    await expect(performAction(gone.clients, 'shop', 'ReplicaSet', traffic({ kind: 'deleteService', name: 'web-r1' }))).resolves.toBeUndefined();
    await expect(performAction(gone.clients, 'shop', 'ReplicaSet', traffic({ kind: 'deleteRoute', name: 'web' }))).resolves.toBeUndefined();
  });

  it('throws any other failure, for the reconcile to retry and report (a 403 names the missing traffic permission)', async () => {
    await expect(performAction(clients(status(403)).clients, 'shop', 'ReplicaSet', traffic({ kind: 'applyRoute', route }))).rejects.toMatchObject({
      code: 403,
    });
    await expect(performAction(clients(status(404)).clients, 'shop', 'ReplicaSet', traffic({ kind: 'applyService', service }))).rejects.toMatchObject({
      code: 404,
    });
    await expect(performAction(clients(status(500)).clients, 'shop', 'ReplicaSet', traffic({ kind: 'deleteService', name: 'web-r1' }))).rejects.toMatchObject({
      code: 500,
    });
  });
});
