// client-node's patch strategies and header middleware: modules that load nothing else of it.
import { PatchStrategy } from '@kubernetes/client-node/dist/patch.js';
import { setHeaderOptions } from '@kubernetes/client-node/dist/middleware.js';
import { GATEWAY_GROUP } from '../core/traffic/objects.js';
import type { TrafficWrite } from '../core/traffic/plan.js';
import { answerUnread, type CoreV1Api, type CustomObjectsApi } from './runtime/kube-client.js';
import { FIELD_MANAGER } from './field-manager.js';
import { isNotFound } from './runtime/kube-errors.js';

/** Where the agent's HTTPRoutes live: the Gateway API's group, the version it writes (core/traffic/objects.ts), the plural. */
export const HTTPROUTE_RESOURCE = { group: GATEWAY_GROUP, version: 'v1', plural: 'httproutes' } as const;

/** The clients a traffic write uses: Services through the core API, HTTPRoutes as custom objects. */
export interface TrafficClients {
  readonly core: CoreV1Api;
  readonly custom: CustomObjectsApi;
}

const serverSideApply = () => setHeaderOptions('Content-Type', PatchStrategy.ServerSideApply);

/**
 * Performs one traffic write of mode Weighted (core/traffic/plan.ts):
 *
 * - applyService, applyRoute: server-side apply of the whole object under the agent's field manager, with force. The
 *   object is the agent's alone (it creates it, owner-referenced to the ExtendedDeployment), and core writes only
 *   objects it owns (a Service or route of that name that is someone else's is a problem, never a write), so a
 *   conflict can only be a field someone edited by hand on the agent's object: taking it back is the point.
 * - deleteService, deleteRoute: a delete by name; one already gone (404) is done.
 *
 * Any other failure throws, and the reconcile is retried (a 403 is reported as a missing permission).
 */
export async function performTrafficWrite(clients: TrafficClients, namespace: string, write: TrafficWrite): Promise<void> {
  switch (write.kind) {
    case 'applyService': {
      const name = write.service.metadata.name;
      await clients.core.patchNamespacedService(
        { name, namespace, body: write.service, fieldManager: FIELD_MANAGER, force: true },
        answerUnread(serverSideApply()),
      );
      return;
    }
    case 'applyRoute': {
      const name = write.route.metadata.name;
      await clients.custom.patchNamespacedCustomObject(
        { ...HTTPROUTE_RESOURCE, namespace, name, body: write.route, fieldManager: FIELD_MANAGER, force: true },
        answerUnread(serverSideApply()),
      );
      return;
    }
    case 'deleteService':
      return ignoreNotFound(clients.core.deleteNamespacedService({ name: write.name, namespace }, answerUnread()));
    case 'deleteRoute':
      return ignoreNotFound(clients.custom.deleteNamespacedCustomObject({ ...HTTPROUTE_RESOURCE, namespace, name: write.name }, answerUnread()));
  }
}

async function ignoreNotFound(request: Promise<unknown>): Promise<void> {
  try {
    await request;
  } catch (error) {
    if (!isNotFound(error)) throw error;
  }
}
