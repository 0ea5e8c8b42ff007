import type { AppsV1Api, CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import type { AdoptPodAction, VerifyFreezeAction } from '../core/adoption/actions.js';
import { adoptPod, fetchAdoptionObjects, scaleSource, verifyFreeze } from './adoption.js';

/** An error as client-node 1.x throws it: `code` and the Status as `body`. */
const apiError = (code: number, message = `HTTP ${code}`) => Object.assign(new Error(message), { code, body: { kind: 'Status', code, message } });

const FROZEN =
  "pods \"web-5d8f-freeze-probe\" is forbidden: ValidatingAdmissionPolicy 'extendeddeployment-adoption-freeze' with binding 'extendeddeployment-adoption-freeze' denied request: pod creation is frozen";
const VERIFY: VerifyFreezeAction = {
  kind: 'verifyFreeze',
  region: 'a',
  owner: { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-5d8f', uid: 'old-uid' },
};

/** A CoreV1Api whose pod creates answer `answers` in turn (an error, or success), recording each body and its dry run. */
function creates(answers: (Error | undefined)[]) {
  const calls: { dryRun?: string; ownerUid?: string }[] = [];
  const core = {
    createNamespacedPod: async (p: { dryRun?: string; body: { metadata: { ownerReferences: { uid: string }[] } } }) => {
      calls.push({ dryRun: p.dryRun, ownerUid: p.body.metadata.ownerReferences[0]?.uid });
      const answer = answers.shift();
      if (answer) throw answer;
      return p.body;
    },
  } as unknown as CoreV1Api;
  return { core, calls };
}

describe('verifyFreeze', () => {
  it('is proved by the freeze policy refusing a dry-run pod of the frozen owner, after the policy has caught up', async () => {
    const api = creates([undefined, undefined, apiError(403, FROZEN)]);
    await verifyFreeze(api.core, 'shop', VERIFY);
    expect(api.calls).toEqual([
      { dryRun: 'All', ownerUid: 'old-uid' },
      { dryRun: 'All', ownerUid: 'old-uid' },
      { dryRun: 'All', ownerUid: 'old-uid' },
    ]);
  });

  it('fails when the freeze never holds (no policy installed), and on any other refusal', async () => {
    await expect(verifyFreeze(creates([]).core, 'shop', VERIFY)).rejects.toThrow(
      'the adoption freeze does not hold: a pod of ReplicaSet web-5d8f could still be created',
    );
    // RBAC, Pod Security or another policy refusing the probe proves nothing about the freeze.
    await expect(verifyFreeze(creates([apiError(403, 'pods is forbidden: User cannot create')]).core, 'shop', VERIFY)).rejects.toThrow('forbidden');
  }, 20_000);
});

describe('adoptPod', () => {
  const ACTION: AdoptPodAction = {
    kind: 'adoptPod',
    region: 'a',
    pod: 'web-5d8f-x',
    uid: 'pod-uid',
    resourceVersion: '42',
    owner: { name: 'web-a', uid: 'ours-uid' },
    labels: { app: 'web', 'extendeddeployment.io/name': 'web' },
    annotations: { 'extendeddeployment.io/adopted-from': 'Deployment/web' },
  };

  it('is one JSON patch that tests uid and resourceVersion, then sets the controller reference, labels and annotations whole', async () => {
    const bodies: unknown[] = [];
    const core = { patchNamespacedPod: async (p: { body: unknown }) => void bodies.push(p.body) } as unknown as CoreV1Api;
    await adoptPod(core, 'shop', ACTION);
    expect(bodies).toEqual([
      [
        { op: 'test', path: '/metadata/uid', value: 'pod-uid' },
        { op: 'test', path: '/metadata/resourceVersion', value: '42' },
        {
          op: 'add',
          path: '/metadata/ownerReferences',
          value: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-a', uid: 'ours-uid', controller: true, blockOwnerDeletion: true }],
        },
        { op: 'add', path: '/metadata/labels', value: ACTION.labels },
        { op: 'add', path: '/metadata/annotations', value: ACTION.annotations },
      ],
    ]);
  });

  it('takes a pod that changed (a failed test, 422), is gone (404) or conflicts (409) as a reason to look again, not an error', async () => {
    for (const code of [404, 409, 422]) {
      const core = { patchNamespacedPod: async () => Promise.reject(apiError(code)) } as unknown as CoreV1Api;
      await expect(adoptPod(core, 'shop', ACTION)).resolves.toBeUndefined();
    }
    const core = { patchNamespacedPod: async () => Promise.reject(apiError(403)) } as unknown as CoreV1Api;
    await expect(adoptPod(core, 'shop', ACTION)).rejects.toThrow('HTTP 403');
  });
});

describe('scaleSource', () => {
  it("writes each kind's own scale subresource: a Deployment's (never its ReplicaSet's), a ReplicaSet's, an InplaceSet's", async () => {
    const calls: string[] = [];
    const record = (what: string) => async (p: { name: string; body: { spec: { replicas: number } } }) =>
      void calls.push(`${what} ${p.name} ${p.body.spec.replicas}`);
    const apps = {
      patchNamespacedDeploymentScale: record('deployments/scale'),
      patchNamespacedReplicaSetScale: record('replicasets/scale'),
    } as unknown as AppsV1Api;
    const custom = {
      patchNamespacedCustomObjectScale: async (p: { plural: string; name: string; body: { spec: { replicas: number } } }) =>
        void calls.push(`${p.plural}/scale ${p.name} ${p.body.spec.replicas}`),
    } as unknown as CustomObjectsApi;
    for (const kind of ['Deployment', 'ReplicaSet', 'InplaceSet'] as const)
      await scaleSource({ apps, custom }, 'shop', { kind: 'scaleSource', region: 'a', source: { kind, name: 'web' }, from: 3, replicas: 1 });
    expect(calls).toEqual(['deployments/scale web 1', 'replicasets/scale web 1', 'inplacesets/scale web 1']);
  });
});

describe('fetchAdoptionObjects', () => {
  it('reads no InplaceSet where that kind is not served (404), and each named Deployment by a field selector', async () => {
    const selectors: string[] = [];
    const core = { listNamespacedPod: async () => ({ items: [{ metadata: { name: 'p' } }] }) } as unknown as CoreV1Api;
    const apps = {
      listNamespacedReplicaSet: async () => ({ items: [] }),
      listNamespacedDeployment: async (p: { fieldSelector: string }) => (selectors.push(p.fieldSelector), { items: [{ metadata: { name: 'web' } }] }),
    } as unknown as AppsV1Api;
    const custom = { listNamespacedCustomObject: async () => Promise.reject(apiError(404)) } as unknown as CustomObjectsApi;
    const objects = await fetchAdoptionObjects({ core, apps, custom }, 'shop', { deployments: ['web'], inplaceSets: ['web-a'] });
    expect(objects).toEqual({ pods: [{ metadata: { name: 'p' } }], replicaSets: [], deployments: [{ metadata: { name: 'web' } }], inplaceSets: [] });
    expect(selectors).toEqual(['metadata.name=web']);
  });
});
