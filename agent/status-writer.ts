import { answerUnread, type CustomObjectsApi } from './runtime/kube-client.js';
import { API_GROUP, API_VERSION, ED_KIND, ED_PLURAL, REGION_KIND, REGION_PLURAL, VERSION } from '../core/api/identity.js';
import type { ExtendedDeploymentStatus } from '../core/api/extended-deployment.js';
import type { DeployRegionStatus } from '../core/api/deploy-region.js';
import { FIELD_MANAGER } from './field-manager.js';
import type { DeployRegionObject, ExtendedDeploymentObject } from '../core/kube/objects.js';

/**
 * Replaces an ExtendedDeployment's status through the status subresource, carrying the resourceVersion the agent
 * read: if the object changed since (a new spec, another writer), the API server answers 409 and the reconcile is
 * retried on fresh data instead of overwriting a status it never saw. Only status is sent: the subresource ignores
 * everything else, and the agent never writes spec. The agent's field manager goes with it, so that managedFields
 * show the agent as the owner of status.
 */
export async function replaceStatus(
  custom: CustomObjectsApi,
  ed: ExtendedDeploymentObject,
  status: ExtendedDeploymentStatus,
): Promise<ExtendedDeploymentObject> {
  const name = ed.metadata?.name ?? '';
  const namespace = ed.metadata?.namespace ?? '';
  const body = {
    apiVersion: ed.apiVersion ?? API_VERSION,
    kind: ed.kind ?? ED_KIND,
    metadata: { name, namespace, resourceVersion: ed.metadata?.resourceVersion },
    status,
  };
  const params = { group: API_GROUP, version: VERSION, namespace, plural: ED_PLURAL, name, body, fieldManager: FIELD_MANAGER };
  return (await custom.replaceNamespacedCustomObjectStatus(params)) as ExtendedDeploymentObject;
}

/** Replaces a DeployRegion's status the same way (resourceVersion carried, status only, the agent's field manager). */
export async function replaceRegionStatus(custom: CustomObjectsApi, region: DeployRegionObject, status: DeployRegionStatus): Promise<void> {
  const name = region.metadata?.name ?? '';
  const body = {
    apiVersion: region.apiVersion ?? API_VERSION,
    kind: region.kind ?? REGION_KIND,
    metadata: { name, resourceVersion: region.metadata?.resourceVersion },
    status,
  };
  await custom.replaceClusterCustomObjectStatus(
    { group: API_GROUP, version: VERSION, plural: REGION_PLURAL, name, body, fieldManager: FIELD_MANAGER },
    answerUnread(),
  );
}
