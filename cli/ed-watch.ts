import type { KubernetesListObject, KubernetesObject } from '@kubernetes/client-node';
import { API_GROUP, ED_PLURAL, VERSION } from '../core/api/identity.js';
import { realClock } from '../agent/runtime/clock.js';
import { ResilientInformer } from '../agent/runtime/informer.js';
import { silentLogger, type Logger } from '../agent/runtime/log.js';
import type { ExtendedDeploymentObject } from '../core/kube/objects.js';
import type { Kube } from './kube.js';

/** What a watch of one ExtendedDeployment reports. */
export interface EdWatchHandlers {
  /** The object as it is now (after every change of spec, metadata or status). */
  readonly onChange: (ed: ExtendedDeploymentObject) => void;
  /** The object was deleted. */
  readonly onDelete: () => void;
  /** The watch failed and is being restarted (a dropped connection, an API server restart); it recovers by itself. */
  readonly onRetry?: (message: string) => void;
}

/**
 * Watches one ExtendedDeployment (a Kubernetes list-watch with a field selector on its name), with the agent's
 * self-restarting informer: a watch that ends or fails is started again after a backoff, relisting when needed.
 * Returns the function that stops it.
 */
export function watchExtendedDeployment(kube: Kube, name: string, handlers: EdWatchHandlers): () => Promise<void> {
  const fieldSelector = `metadata.name=${name}`;
  const log: Logger = {
    ...silentLogger,
    // The informer logs its restarts with the failure's message (a string) as `error`.
    warn: (_msg, fields) => {
      const error = fields?.['error'];
      handlers.onRetry?.(typeof error === 'string' ? error : 'watch stopped');
    },
    with: () => log,
  };
  const informer = new ResilientInformer<ExtendedDeploymentObject & KubernetesObject>(
    kube.kc,
    {
      resource: ED_PLURAL,
      path: `/apis/${API_GROUP}/${VERSION}/namespaces/${encodeURIComponent(kube.namespace)}/${ED_PLURAL}?fieldSelector=${encodeURIComponent(fieldSelector)}`,
      list: () =>
        kube.custom.listNamespacedCustomObject({ group: API_GROUP, version: VERSION, namespace: kube.namespace, plural: ED_PLURAL, fieldSelector }) as Promise<
          KubernetesListObject<ExtendedDeploymentObject & KubernetesObject>
        >,
    },
    {
      clock: realClock,
      log,
      onEvent: (event, ed) => (event === 'delete' ? handlers.onDelete() : handlers.onChange(ed)),
    },
  );
  informer.start();
  return () => informer.stop();
}
