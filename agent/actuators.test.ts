import type { AppsV1Api, CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { GROUP_RECORD_ANNOTATION } from '../core/labels.js';
import { performAction, performHistoryAction } from './actuators.js';

/**
 * A Deployment behind a model of server-side apply's field ownership (what the API server does): an apply sets the
 * fields of its body and makes its field manager their owner; a field the same manager applied before but leaves
 * out now loses that owner, and a field left without any owner is removed (spec.replicas falls back to its
 * default 1, spec.paused to false).
 */
function ssaDeployment() {
  const spec: { replicas: number; paused: boolean } = { replicas: 1, paused: false };
  const defaults = { replicas: 1, paused: false };
  const owners = new Map<string, Set<keyof typeof spec>>();
  const calls: { manager: string; fields: string[] }[] = [];
  const apply = (manager: string, body: Partial<typeof spec>) => {
    const fields = Object.keys(body) as (keyof typeof spec)[];
    calls.push({ manager, fields });
    for (const f of fields) {
      (spec as Record<string, unknown>)[f] = body[f];
      for (const [m, owned] of owners) if (m !== manager) owned.delete(f); // force: conflicts are taken over
    }
    const before = owners.get(manager) ?? new Set();
    owners.set(manager, new Set(fields));
    for (const f of before) {
      if (!fields.includes(f) && ![...owners.values()].some((o) => o.has(f))) (spec as Record<string, unknown>)[f] = defaults[f];
    }
  };
  const apps = {
    patchNamespacedDeployment: async (params: { fieldManager?: string; body: { spec?: Partial<typeof spec> } }) => {
      apply(params.fieldManager ?? '', params.body.spec ?? {});
      return {};
    },
  } as unknown as AppsV1Api;
  return { spec, calls, clients: { apps, core: {} as CoreV1Api, custom: {} as CustomObjectsApi, now: () => 0 } };
}

describe('actuators on native Deployments (compat mode)', () => {
  it("scale and setPaused keep each other's field: the agent never fights itself over replicas and paused", async () => {
    const d = ssaDeployment();
    const scale = { kind: 'scale', region: 'a', workload: 'web-a', from: 1, replicas: 3 } as const;
    const pause = (paused: boolean) => ({ kind: 'setPaused', region: 'a', workload: 'web-a', paused }) as const;

    await performAction(d.clients, 'shop', 'Deployment', scale);
    await performAction(d.clients, 'shop', 'Deployment', pause(true));
    expect(d.spec).toEqual({ replicas: 3, paused: true });
    await performAction(d.clients, 'shop', 'Deployment', scale);
    expect(d.spec).toEqual({ replicas: 3, paused: true });
    await performAction(d.clients, 'shop', 'Deployment', pause(false));
    await performAction(d.clients, 'shop', 'Deployment', { ...scale, replicas: 5 });
    expect(d.spec).toEqual({ replicas: 5, paused: false });

    // Each apply names exactly one field, under a manager of the agent's own.
    expect(d.calls.every((c) => c.fields.length === 1 && c.manager.startsWith('extendeddeployment-agent'))).toBe(true);
  });
});

describe('actuators on StatefulSets', () => {
  it('applies replicas and the partition each under a manager of its own, each body naming that one field', async () => {
    const calls: { manager: string | undefined; body: unknown; force: boolean | undefined }[] = [];
    const apps = {
      patchNamespacedStatefulSet: async (params: { fieldManager?: string; body: unknown; force?: boolean }) => {
        calls.push({ manager: params.fieldManager, body: params.body, force: params.force });
        return {};
      },
    } as unknown as AppsV1Api;
    const clients = { apps, core: {} as CoreV1Api, custom: {} as CustomObjectsApi, now: () => 0 };
    await performAction(clients, 'shop', 'StatefulSet', { kind: 'scale', region: 'a', workload: 'db-a', from: 1, replicas: 3 });
    await performAction(clients, 'shop', 'StatefulSet', { kind: 'setPartition', region: 'a', workload: 'db-a', from: 3, partition: 2 });
    const meta = { name: 'db-a', namespace: 'shop' };
    expect(calls).toEqual([
      { manager: 'extendeddeployment-agent', force: true, body: { apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: meta, spec: { replicas: 3 } } },
      {
        manager: 'extendeddeployment-agent-partition',
        force: true,
        body: { apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: meta, spec: { updateStrategy: { rollingUpdate: { partition: 2 } } } },
      },
    ]);
  });
});

describe('actuators on regional ReplicaSets', () => {
  it("applies the rollout's group record in the same write as the replicas, empty outside a group, and none for a keeper", async () => {
    const bodies: unknown[] = [];
    const apps = {
      patchNamespacedReplicaSet: async (params: { fieldManager?: string; body: unknown }) => {
        bodies.push(params.body);
        return {};
      },
    } as unknown as AppsV1Api;
    const clients = { apps, core: {} as CoreV1Api, custom: {} as CustomObjectsApi, now: () => 0 };
    const record = { revision: 'R1', rolloutStart: '2026-11-30T12:00:00.000Z', group: 2, groupStart: '2026-11-30T12:01:00.000Z' };
    await performAction(clients, 'shop', 'ReplicaSet', { kind: 'scale', region: 'a', workload: 'web-a', from: 5, replicas: 4, record });
    await performAction(clients, 'shop', 'ReplicaSet', { kind: 'scale', region: 'a', workload: 'web-a', from: 4, replicas: 5, record: null });
    await performAction(clients, 'shop', 'ReplicaSet', { kind: 'scale', region: 'a', workload: 'web-a-old', from: 0, replicas: 1 });
    expect(bodies).toEqual([
      {
        apiVersion: 'apps/v1',
        kind: 'ReplicaSet',
        metadata: { name: 'web-a', namespace: 'shop', annotations: { [GROUP_RECORD_ANNOTATION]: JSON.stringify(record) } },
        spec: { replicas: 4 },
      },
      // Named, empty: an apply that left it out would remove it (core/rollout/group-record.ts).
      {
        apiVersion: 'apps/v1',
        kind: 'ReplicaSet',
        metadata: { name: 'web-a', namespace: 'shop', annotations: { [GROUP_RECORD_ANNOTATION]: '' } },
        spec: { replicas: 5 },
      },
      { apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: { name: 'web-a-old', namespace: 'shop' }, spec: { replicas: 1 } },
    ]);
  });
});

describe('markOld and unmark', () => {
  const MARK = { kind: 'markOld', region: 'amd', pod: 'web-1', uid: 'u-1', at: '2026-01-01T12:00:00.000Z', cost: -2147483640 } as const;
  /** A pod API that records the patches it receives and answers like the API server for a pod without annotations. */
  function podApi(answer: (body: unknown, contentType: string) => unknown) {
    const calls: { name: string; body: unknown; contentType: string }[] = [];
    const core = {
      patchNamespacedPod: async (params: { name: string; body: unknown }, options?: { middleware?: unknown[] }) => {
        const contentType = contentTypeOf(options);
        calls.push({ name: params.name, body: params.body, contentType });
        const result = answer(params.body, contentType);
        if (result instanceof Error) throw result;
        return {};
      },
    } as unknown as CoreV1Api;
    return { calls, clients: { core, apps: {} as AppsV1Api, custom: {} as CustomObjectsApi, now: () => 0 } };
  }
  const apiException = (code: number) => Object.assign(new Error(`HTTP ${code}`), { code, body: { kind: 'Status', code } });
  /** The Content-Type the per-call options set (client-node's setHeaderOptions middleware). */
  function contentTypeOf(options: unknown): string {
    const headers: Record<string, string> = {};
    const context = { setHeaderParam: (k: string, v: string) => (headers[k] = v), getHeaders: () => headers };
    for (const m of (options as { middleware?: { pre: (c: unknown) => unknown }[] } | undefined)?.middleware ?? []) m.pre(context);
    return headers['Content-Type'] ?? '';
  }

  it('marks a pod with one merge patch that carries its uid (a pod from a template without annotations has no map to add to)', async () => {
    // The API server rejects a JSON patch `add` under a missing annotations map with 422, as for a pod created from a
    // template without annotations; the merge patch creates the map.
    const pod = podApi((_body, contentType) => (contentType === 'application/json-patch+json' ? apiException(422) : undefined));
    await performAction(pod.clients, 'shop', 'ReplicaSet', MARK);
    expect(pod.calls).toEqual([
      {
        name: 'web-1',
        contentType: 'application/merge-patch+json',
        body: {
          metadata: {
            uid: 'u-1',
            annotations: { 'controller.kubernetes.io/pod-deletion-cost': '-2147483640', 'extendeddeployment.io/marked-at': '2026-01-01T12:00:00.000Z' },
          },
        },
      },
    ]);
  });

  it('unmarks with a merge patch that removes both annotations, so a mark without its time is removed too', async () => {
    // A JSON patch `remove` of a missing key fails the whole patch (422): a mark made before marks carried their time
    // would then stay forever.
    const pod = podApi((_body, contentType) => (contentType === 'application/json-patch+json' ? apiException(422) : undefined));
    await performAction(pod.clients, 'shop', 'ReplicaSet', { kind: 'unmark', region: 'amd', pod: 'web-1', uid: 'u-1' });
    expect(pod.calls).toEqual([
      {
        name: 'web-1',
        contentType: 'application/merge-patch+json',
        body: { metadata: { uid: 'u-1', annotations: { 'controller.kubernetes.io/pod-deletion-cost': null, 'extendeddeployment.io/marked-at': null } } },
      },
    ]);
  });

  it('counts a pod that is gone (404) or replaced by another of the same name (422: uid is immutable) as done', async () => {
    for (const code of [404, 422]) {
      const pod = podApi(() => apiException(code));
      await expect(performAction(pod.clients, 'shop', 'ReplicaSet', MARK)).resolves.toBeUndefined();
      expect(pod.calls).toHaveLength(1);
    }
  });

  it('fails on any other error, so the reconcile is retried', async () => {
    const pod = podApi(() => apiException(500));
    await expect(performAction(pod.clients, 'shop', 'ReplicaSet', MARK)).rejects.toThrow('HTTP 500');
  });
});

describe('performHistoryAction', () => {
  const object = { apiVersion: 'apps/v1', kind: 'ControllerRevision', metadata: { name: 'web-r1', namespace: 'shop' }, revision: 1 };
  const status = (code: number) => Object.assign(new Error(`HTTP ${code}`), { code });
  /** An AppsV1Api whose ControllerRevision calls are recorded and answer `error` (or succeed). */
  const apps = (error?: Error) => {
    const calls: unknown[] = [];
    const answer = (method: string) => async (params: unknown) => {
      calls.push({ method, params });
      if (error) throw error;
      return {};
    };
    const api = {
      createNamespacedControllerRevision: answer('create'),
      replaceNamespacedControllerRevision: answer('replace'),
      deleteNamespacedControllerRevision: answer('delete'),
    } as unknown as AppsV1Api;
    return { api, calls };
  };

  it('creates, replaces by name, and deletes with the uid as precondition', async () => {
    const a = apps();
    await performHistoryAction(a.api, 'shop', { kind: 'create', object });
    await performHistoryAction(a.api, 'shop', { kind: 'update', object });
    await performHistoryAction(a.api, 'shop', { kind: 'delete', name: 'web-r0', uid: 'u-0' });
    expect(a.calls).toEqual([
      { method: 'create', params: { namespace: 'shop', body: object, fieldManager: 'extendeddeployment-agent' } },
      { method: 'replace', params: { name: 'web-r1', namespace: 'shop', body: object, fieldManager: 'extendeddeployment-agent' } },
      { method: 'delete', params: { name: 'web-r0', namespace: 'shop', body: { preconditions: { uid: 'u-0' } } } },
    ]);
  });

  it.each([
    ['recorded already, or changed since read (409)', 409],
    ['gone (404)', 404],
  ])('takes a write that no longer applies as done: %s', async (_what, code) => {
    for (const action of [
      { kind: 'create', object },
      { kind: 'update', object },
      { kind: 'delete', name: 'web-r0', uid: 'u-0' },
    ] as const) {
      await expect(performHistoryAction(apps(status(code)).api, 'shop', action)).resolves.toBeUndefined();
    }
  });

  it('throws any other failure, for the reconcile to retry and report', async () => {
    await expect(performHistoryAction(apps(status(403)).api, 'shop', { kind: 'create', object })).rejects.toMatchObject({ code: 403 });
    await expect(performHistoryAction(apps(status(500)).api, 'shop', { kind: 'delete', name: 'web-r0', uid: 'u-0' })).rejects.toMatchObject({ code: 500 });
  });
});

describe('keepers (core/rollout/keeper.ts)', () => {
  const status = (code: number) => Object.assign(new Error(`HTTP ${code}`), { code });
  const template = { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'i:1' }] } };
  const create = {
    kind: 'createKeeper',
    region: 'a',
    workload: 'web-a-r1',
    replicas: 1,
    revision: 'r1',
    template,
    owner: { name: 'web', uid: 'ed-uid' },
  } as const;
  const drop = { kind: 'dropKeeper', region: 'a', workload: 'web-a-r1', uid: 'k-uid' } as const;
  const clients = (error?: Error) => {
    const calls: { method: string; params: Record<string, unknown> }[] = [];
    const answer = (method: string) => async (params: Record<string, unknown>) => {
      calls.push({ method, params });
      if (error) throw error;
      return { metadata: { name: 'web-a-r1', resourceVersion: '7' } };
    };
    const apps = { createNamespacedReplicaSet: answer('create'), deleteNamespacedReplicaSet: answer('delete') } as unknown as AppsV1Api;
    return { calls, clients: { apps, core: {} as CoreV1Api, custom: {} as CustomObjectsApi, now: () => 0 } };
  };

  it('creates the keeper with a create (never an apply), answering the object; deletes it with its uid as precondition', async () => {
    const c = clients();
    await expect(performAction(c.clients, 'shop', 'ReplicaSet', create)).resolves.toMatchObject({ metadata: { resourceVersion: '7' } });
    await performAction(c.clients, 'shop', 'ReplicaSet', drop);
    expect(c.calls.map((call) => call.method)).toEqual(['create', 'delete']);
    expect(c.calls[0]?.params).toMatchObject({
      namespace: 'shop',
      fieldManager: 'extendeddeployment-agent',
      body: { metadata: { name: 'web-a-r1', namespace: 'shop' } },
    });
    expect(c.calls[1]?.params).toEqual({ name: 'web-a-r1', namespace: 'shop', body: { preconditions: { uid: 'k-uid' } } });
  });

  it('takes a keeper that exists already (409) as created, and one gone or replaced (404, 409) as deleted', async () => {
    await expect(performAction(clients(status(409)).clients, 'shop', 'ReplicaSet', create)).resolves.toBeUndefined();
    for (const code of [404, 409]) await expect(performAction(clients(status(code)).clients, 'shop', 'ReplicaSet', drop)).resolves.toBeUndefined();
  });

  it('throws any other failure, for the reconcile to retry and report', async () => {
    await expect(performAction(clients(status(403)).clients, 'shop', 'ReplicaSet', create)).rejects.toMatchObject({ code: 403 });
    await expect(performAction(clients(status(404)).clients, 'shop', 'ReplicaSet', create)).rejects.toMatchObject({ code: 404 });
    await expect(performAction(clients(status(500)).clients, 'shop', 'ReplicaSet', drop)).rejects.toMatchObject({ code: 500 });
  });
});
