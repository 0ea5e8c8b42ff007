import type { V1Pod } from '@kubernetes/client-node';
import { PatchStrategy } from '@kubernetes/client-node/dist/patch.js';
import { setHeaderOptions } from '@kubernetes/client-node/dist/middleware.js';
import { answerUnread, type AppsV1Api, type CoreV1Api, type CustomObjectsApi } from './runtime/kube-client.js';
import { API_GROUP, UPSTREAM_INPLACESET_PLURAL, VERSION } from '../core/api/identity.js';
import type { AdoptPodAction, ScaleSourceAction, VerifyFreezeAction } from '../core/adoption/actions.js';
import { ADOPTION_FREEZE_POLICY, type AdoptionObjects } from '../core/adoption/adoption.js';
import type { WorkloadObject } from '../core/kube/objects.js';
import { FIELD_MANAGER } from './field-manager.js';
import { apiError, isConflict, isForbidden, isInvalid, isNotFound } from './runtime/kube-errors.js';

/**
 * The objects an adoption decides on, read from the API server and not from the caches: the caches hold only objects
 * labelled with an ExtendedDeployment's name (informers.ts), which the adopted workload and its pods are not, and a
 * step is decided on the counts of two sets of pods that must come from one look. One list of the namespace's pods,
 * one of its ReplicaSets, and each named Deployment and upstream InplaceSet; only while an adoption is open (core/adoption
 * adoptionState).
 */
export async function fetchAdoptionObjects(
  clients: { readonly core: CoreV1Api; readonly apps: AppsV1Api; readonly custom: CustomObjectsApi },
  namespace: string,
  sources: { readonly deployments: readonly string[]; readonly inplaceSets: readonly string[] },
): Promise<AdoptionObjects> {
  const byName = (name: string) => `metadata.name=${name}`;
  const [pods, replicaSets, deployments, inplaceSets] = await Promise.all([
    clients.core.listNamespacedPod({ namespace }),
    clients.apps.listNamespacedReplicaSet({ namespace }),
    Promise.all(sources.deployments.map((name) => clients.apps.listNamespacedDeployment({ namespace, fieldSelector: byName(name) }))),
    Promise.all(sources.inplaceSets.map((name) => listInplaceSets(clients.custom, namespace, byName(name)))),
  ]);
  return {
    pods: pods.items,
    replicaSets: replicaSets.items,
    deployments: deployments.flatMap((list) => list.items as WorkloadObject[]),
    inplaceSets: inplaceSets.flat(),
  };
}

/** The upstream InplaceSets a field selector names; none where the kind is not served (its CRD is gone: nothing to adopt). */
async function listInplaceSets(custom: CustomObjectsApi, namespace: string, fieldSelector: string): Promise<WorkloadObject[]> {
  try {
    const list = (await custom.listNamespacedCustomObject({
      group: API_GROUP,
      version: VERSION,
      namespace,
      plural: UPSTREAM_INPLACESET_PLURAL,
      fieldSelector,
    })) as {
      items?: WorkloadObject[];
    };
    return list.items ?? [];
  } catch (error) {
    if (isNotFound(error)) return [];
    throw error;
  }
}

/** Tries of the freeze proof: the policy's params come from an informer of the API server's, a few ms behind. */
const FREEZE_PROOF_TRIES = 20;
const FREEZE_PROOF_PAUSE_MS = 25;

/**
 * Proves the adoption freeze holds for `owner`: a server-side dry run of a pod it controls must be refused by the
 * freeze policy. The probe meets the restricted Pod Security Standard, so no other admission refuses it first.
 * Throws when the freeze does not hold after the tries (the policy is not installed, or does not see the status).
 */
export async function verifyFreeze(core: CoreV1Api, namespace: string, action: VerifyFreezeAction): Promise<void> {
  const body: V1Pod = {
    metadata: {
      name: `${action.owner.name}-freeze-probe`,
      ownerReferences: [{ apiVersion: action.owner.apiVersion, kind: action.owner.kind, name: action.owner.name, uid: action.owner.uid, controller: true }],
    },
    spec: {
      automountServiceAccountToken: false,
      securityContext: { runAsNonRoot: true, runAsUser: 65534, seccompProfile: { type: 'RuntimeDefault' } },
      containers: [
        {
          name: 'probe',
          image: 'registry.k8s.io/pause:3.10',
          securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } },
          resources: { requests: { cpu: '1m', memory: '1Mi' }, limits: { cpu: '1m', memory: '1Mi' } },
        },
      ],
    },
  };
  for (let attempt = 1; attempt <= FREEZE_PROOF_TRIES; attempt++) {
    try {
      await core.createNamespacedPod({ namespace, body, dryRun: 'All', fieldManager: FIELD_MANAGER }, answerUnread());
    } catch (error) {
      if (isForbidden(error) && apiError(error).message.includes(ADOPTION_FREEZE_POLICY)) return;
      throw error;
    }
    await new Promise((resolve) => setTimeout(resolve, FREEZE_PROOF_PAUSE_MS * attempt));
  }
  throw new Error(
    `the adoption freeze does not hold: a pod of ReplicaSet ${action.owner.name} could still be created; is the ValidatingAdmissionPolicy ${ADOPTION_FREEZE_POLICY} of the agent's install in place?`,
  );
}

/**
 * Moves a pod to the region's ReplicaSet (AdoptPodAction): one JSON patch whose tests make it apply to the pod as it
 * was read or not at all. A failed test (422), a pod gone (404) or changed (409) is no error: the next look decides
 * again on fresh reads.
 */
export async function adoptPod(core: CoreV1Api, namespace: string, action: AdoptPodAction): Promise<void> {
  const body = [
    { op: 'test', path: '/metadata/uid', value: action.uid },
    { op: 'test', path: '/metadata/resourceVersion', value: action.resourceVersion },
    {
      op: 'add',
      path: '/metadata/ownerReferences',
      value: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: action.owner.name, uid: action.owner.uid, controller: true, blockOwnerDeletion: true }],
    },
    { op: 'add', path: '/metadata/labels', value: action.labels },
    { op: 'add', path: '/metadata/annotations', value: action.annotations },
  ];
  try {
    await core.patchNamespacedPod(
      { name: action.pod, namespace, body, fieldManager: FIELD_MANAGER },
      answerUnread(setHeaderOptions('Content-Type', PatchStrategy.JsonPatch)),
    );
  } catch (error) {
    if (!isNotFound(error) && !isConflict(error) && !isInvalid(error)) throw error;
  }
}

/** Scales the adopted workload through its own scale subresource (a Deployment's, never its ReplicaSet's); gone is done. */
export async function scaleSource(
  clients: { readonly apps: AppsV1Api; readonly custom: CustomObjectsApi },
  namespace: string,
  action: ScaleSourceAction,
): Promise<void> {
  const { name } = action.source;
  const body = { spec: { replicas: action.replicas } };
  const options = answerUnread(setHeaderOptions('Content-Type', PatchStrategy.MergePatch));
  try {
    if (action.source.kind === 'Deployment') await clients.apps.patchNamespacedDeploymentScale({ name, namespace, body, fieldManager: FIELD_MANAGER }, options);
    else if (action.source.kind === 'ReplicaSet')
      await clients.apps.patchNamespacedReplicaSetScale({ name, namespace, body, fieldManager: FIELD_MANAGER }, options);
    else
      await clients.custom.patchNamespacedCustomObjectScale(
        { group: API_GROUP, version: VERSION, namespace, plural: UPSTREAM_INPLACESET_PLURAL, name, body, fieldManager: FIELD_MANAGER },
        options,
      );
  } catch (error) {
    if (!isNotFound(error)) throw error;
  }
}
