import { randomBytes } from 'node:crypto';
import type { CoreV1Event } from '@kubernetes/client-node';
import { answerUnread, type CoreV1Api } from './runtime/kube-client.js';
import { DEFAULT_NAMESPACE } from '../core/api/common.js';
import { API_VERSION, ED_KIND } from '../core/api/identity.js';
import type { RolloutEvent } from '../core/rollout/planner.js';
import { realClock, type Clock } from './runtime/clock.js';
import { FIELD_MANAGER } from './field-manager.js';
import type { Logger } from './runtime/log.js';
import type { ExtendedDeploymentObject } from '../core/kube/objects.js';

/** The component name on every Event the agent records (what `kubectl describe` shows under From). */
export const REPORTING_COMPONENT = 'extendeddeployment-agent';

/** Records Kubernetes Events about ExtendedDeployments (and DeployRegions). */
export interface EventRecorder {
  /** Queues the Event and returns at once; never throws. */
  record(ed: ExtendedDeploymentObject, event: RolloutEvent): void;
  /** Resolves once every queued Event was sent (or failed), or after `timeoutMs`, whichever comes first. */
  flush(timeoutMs: number): Promise<void>;
}

/** Events waiting to be sent at most (client-go's broadcaster queues 1000 and drops beyond). */
export const EVENT_QUEUE_CAPACITY = 1000;
/** Events sent at once. */
export const EVENT_SENDERS = 4;

/** The core/v1 Event for one planner event about `ed`, as client-go's recorder would build it. */
export function eventFor(ed: ExtendedDeploymentObject, event: RolloutEvent, instance: string, now: Date, suffix: string): CoreV1Event {
  const name = ed.metadata?.name ?? '';
  // Events about a cluster-scoped object (a DeployRegion) go to the default namespace, as client-go's recorder does.
  const namespace = ed.metadata?.namespace ?? DEFAULT_NAMESPACE;
  return {
    metadata: { name: `${name}.${suffix}`, namespace },
    involvedObject: {
      apiVersion: ed.apiVersion ?? API_VERSION,
      kind: ed.kind ?? ED_KIND,
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
 * Creates one core/v1 Event per planner event, off the reconcile's path: `record` builds the Event (its timestamp is
 * the moment of recording) and queues it; up to `senders` requests send the queue. Recording is best effort, like
 * client-go's recorder: a failed Event is logged and never fails or retries the reconcile (which would write the same
 * status and actions again), and when `capacity` Events wait already, a new one is dropped and logged rather than
 * letting a slow API server hold workers or grow memory without bound.
 */
export function apiEventRecorder(
  core: CoreV1Api,
  instance: string,
  log: Logger,
  options: { readonly capacity?: number; readonly senders?: number; readonly clock?: Clock } = {},
): EventRecorder {
  const capacity = options.capacity ?? EVENT_QUEUE_CAPACITY;
  const senders = options.senders ?? EVENT_SENDERS;
  const clock = options.clock ?? realClock;
  const queue: { body: CoreV1Event; about: string }[] = [];
  let sending = 0;
  let idle: (() => void)[] = [];
  const pump = () => {
    while (sending < senders && queue.length > 0) {
      const { body, about } = queue.shift()!;
      sending++;
      void core
        .createNamespacedEvent({ namespace: body.metadata?.namespace ?? DEFAULT_NAMESPACE, body, fieldManager: FIELD_MANAGER }, answerUnread())
        .catch((error: unknown) => log.warn('could not record event', { reason: body.reason, ed: about, error }))
        .finally(() => {
          sending--;
          pump();
        });
    }
    if (sending === 0 && queue.length === 0) for (const resolve of idle.splice(0)) resolve();
  };
  return {
    record(ed, event) {
      const about = `${ed.metadata?.namespace}/${ed.metadata?.name}`;
      if (queue.length >= capacity) {
        log.warn('dropped event: too many waiting to be sent', { reason: event.reason, ed: about, waiting: queue.length });
        return;
      }
      // client-go names events <object>.<hex nanotime>; random hex is as unique and needs no clock resolution.
      queue.push({ body: eventFor(ed, event, instance, new Date(clock.now()), randomBytes(8).toString('hex')), about });
      pump();
    },
    flush(timeoutMs) {
      if (sending === 0 && queue.length === 0) return Promise.resolve();
      return new Promise<void>((resolve) => {
        const cancel = clock.setTimer(timeoutMs, () => {
          idle = idle.filter((r) => r !== done);
          resolve();
        });
        const done = () => {
          cancel();
          resolve();
        };
        idle.push(done);
      });
    },
  };
}
