import { randomBytes } from 'node:crypto';
import type { CoreV1Api, CoreV1Event } from '@kubernetes/client-node';
import type { RolloutEvent } from '../core/rollout/planner.js';
import type { Logger } from './log.js';
import type { ExtendedDeploymentObject } from './objects.js';

/** The component name on every Event the agent records (what `kubectl describe` shows under From). */
export const REPORTING_COMPONENT = 'extendeddeployment-agent';

/** Records Kubernetes Events about ExtendedDeployments. */
export interface EventRecorder {
  record(ed: ExtendedDeploymentObject, event: RolloutEvent): Promise<void>;
}

/** The core/v1 Event for one planner event about `ed`, as client-go's recorder would build it. */
export function eventFor(ed: ExtendedDeploymentObject, event: RolloutEvent, instance: string, now: Date, suffix: string): CoreV1Event {
  const name = ed.metadata?.name ?? '';
  // Events about a cluster-scoped object (a DeployRegion) go to the default namespace, as client-go's recorder does.
  const namespace = ed.metadata?.namespace ?? 'default';
  return {
    metadata: { name: `${name}.${suffix}`, namespace },
    involvedObject: {
      apiVersion: ed.apiVersion ?? 'extendeddeployment.io/v1beta1',
      kind: ed.kind ?? 'ExtendedDeployment',
      name,
      ...(ed.metadata?.namespace !== undefined && { namespace }),
      ...(ed.metadata?.uid !== undefined && { uid: ed.metadata.uid }),
      ...(ed.metadata?.resourceVersion !== undefined && { resourceVersion: ed.metadata.resourceVersion }),
    },
    type: event.type,
    reason: event.reason,
    // The API server rejects messages over 1 KiB on the events API; keep well under it.
    message: event.message.length > 1000 ? `${event.message.slice(0, 997)}...` : event.message,
    source: { component: REPORTING_COMPONENT },
    reportingComponent: REPORTING_COMPONENT,
    reportingInstance: instance,
    firstTimestamp: now,
    lastTimestamp: now,
    count: 1,
  };
}

/**
 * Creates one core/v1 Event per planner event. Recording is best effort, like client-go's recorder: a failed Event
 * is logged and never fails or retries the reconcile (which would write the same status and actions again).
 */
export function apiEventRecorder(core: CoreV1Api, instance: string, log: Logger): EventRecorder {
  return {
    async record(ed, event) {
      // client-go names events <object>.<hex nanotime>; random hex is as unique and needs no clock resolution.
      const body = eventFor(ed, event, instance, new Date(), randomBytes(8).toString('hex'));
      try {
        await core.createNamespacedEvent({ namespace: body.metadata?.namespace ?? 'default', body });
      } catch (error) {
        log.warn('could not record event', { reason: event.reason, ed: `${ed.metadata?.namespace}/${ed.metadata?.name}`, error });
      }
    },
  };
}
