import type { V1ControllerRevision, V1ReplicaSet } from '@kubernetes/client-node';
// client-node's patch strategies and header middleware: modules that load nothing else of it.
import { PatchStrategy } from '@kubernetes/client-node/dist/patch.js';
import { setHeaderOptions } from '@kubernetes/client-node/dist/middleware.js';
import { answerUnread, type AppsV1Api, type CoreV1Api, type CustomObjectsApi } from './runtime/kube-client.js';
import { GROUP_RECORD_ANNOTATION, IN_PLACE_READINESS_GATE, REVISION_LABEL, SWAP_STATE_ANNOTATION } from '../core/labels.js';
import type { HistoryAction } from '../core/history/revisions.js';
import type { AdoptionAction } from '../core/adoption/actions.js';
import type {
  CreateKeeperAction,
  DropKeeperAction,
  PartitionAction,
  PauseAction,
  RolloutAction,
  ScaleAction,
  SwapAction,
  TrafficAction,
} from '../core/rollout/actions.js';
import { formatGroupRecord } from '../core/rollout/group-record.js';
import { markAnnotations } from '../core/rollout/removal-marks.js';
import { adoptPod, scaleSource, verifyFreeze } from './adoption.js';
import { keeperObject } from '../core/rollout/keeper.js';
import { evictPod } from './eviction.js';
import { FIELD_MANAGER } from './field-manager.js';
import { performTrafficWrite } from './traffic-actuator.js';
import { isConflict, isInvalid, isNotFound } from './runtime/kube-errors.js';
import type { MetaObject, WorkloadKind } from '../core/kube/objects.js';

/**
 * The field manager of a native Deployment's spec.paused (compat mode). Server-side apply takes an apply as the
 * manager's whole intent: applying `{paused}` under the manager that applied `{replicas}` would drop its claim on
 * replicas (reset to the default 1), and the next `{replicas}` would drop paused, so the agent would fight itself.
 * Each field the agent applies on its own therefore has a manager of its own.
 */
export const PAUSE_FIELD_MANAGER = `${FIELD_MANAGER}-pause`;

/** The field manager of a regional StatefulSet's rolling-update partition: a field of its own, for the reason above. */
export const PARTITION_FIELD_MANAGER = `${FIELD_MANAGER}-partition`;

/** The clients the actuators write with. */
export interface ActuatorClients {
  readonly core: CoreV1Api;
  readonly apps: AppsV1Api;
  /** Custom resources: the upstream InplaceSets an adoption scales down, the HTTPRoutes of traffic shifting. */
  readonly custom: CustomObjectsApi;
  /** The time written into conditions (the API server's, see ServerClock): another replica reads it back. */
  readonly now: () => number;
}

/**
 * Performs one planned action. Every action is idempotent and aimed at one exact object: a pod is addressed by name
 * and uid, so a pod recreated under the same name is never touched; a pod that is already gone counts as done.
 *
 * Returns the workload as the API server answered a scale or pause (the reconciler plans on it until its cache shows
 * it); nothing for pod writes, which the reconciler never plans on before its cache shows them, nor for traffic writes
 * (traffic-actuator.ts), whose objects are whole and applied again unchanged when a cache lags.
 */
export async function performAction(clients: ActuatorClients, namespace: string, kind: WorkloadKind, action: RolloutAction): Promise<MetaObject | undefined> {
  if (action.kind === 'scale') return scale(clients, namespace, kind, action);
  if (action.kind === 'setPaused') return setPaused(clients, namespace, action.workload, action.paused);
  if (action.kind === 'setPartition') return setPartition(clients, namespace, action.workload, action.partition);
  if (action.kind === 'createKeeper') return createKeeper(clients.apps, namespace, action);
  if (action.kind === 'dropKeeper') return dropKeeper(clients.apps, namespace, action);
  if (action.kind === 'verifyFreeze') await verifyFreeze(clients.core, namespace, action);
  else if (action.kind === 'adoptPod') await adoptPod(clients.core, namespace, action);
  else if (action.kind === 'scaleSource') await scaleSource(clients, namespace, action);
  else if (action.kind === 'traffic') await performTrafficWrite(clients, namespace, action.write);
  else await podAction(clients, namespace, action);
  return undefined;
}

/**
 * Creates a region's keeper (core/rollout/keeper.ts). AlreadyExists is done: either this keeper, which the caches show
 * soon, or another object by that name, which observe never takes for a keeper and which is left alone.
 */
async function createKeeper(apps: AppsV1Api, namespace: string, action: CreateKeeperAction): Promise<MetaObject | undefined> {
  try {
    return await apps.createNamespacedReplicaSet({ namespace, body: keeperObject(action, namespace) as V1ReplicaSet, fieldManager: FIELD_MANAGER });
  } catch (error) {
    if (isConflict(error)) return undefined;
    throw error;
  }
}

/** Deletes a keeper that keeps nothing; guarded by its uid (a 409 says another object took the name), gone is done. */
async function dropKeeper(apps: AppsV1Api, namespace: string, action: DropKeeperAction): Promise<undefined> {
  try {
    await apps.deleteNamespacedReplicaSet({ name: action.workload, namespace, body: { preconditions: { uid: action.uid } } }, answerUnread());
  } catch (error) {
    if (!isNotFound(error) && !isConflict(error)) throw error;
  }
  return undefined;
}

async function podAction(
  { core, now }: ActuatorClients,
  namespace: string,
  action: Exclude<RolloutAction, AdoptionAction | PauseAction | PartitionAction | CreateKeeperAction | DropKeeperAction | TrafficAction>,
): Promise<void> {
  switch (action.kind) {
    case 'markOld':
    case 'holdOld':
    case 'unmark':
      return mark(core, namespace, action.pod, action.uid, markAnnotations(action));
    case 'deletePod':
      return evictPod(core, namespace, action.pod, action.uid);
    case 'openGate':
    case 'closeGate':
      return setGate(core, namespace, action.pod, action.uid, action.kind === 'openGate', now());
    case 'swapBegin':
    case 'swapImages':
    case 'swapDone':
      return swapStep(core, namespace, action);
    default:
      return unreachable(action);
  }
}

function unreachable(action: never): never {
  throw new Error(`unknown action ${JSON.stringify(action)}`);
}

/**
 * One step of an in-place swap as a strategic merge patch carrying the pod's resourceVersion, so the API server
 * refuses it (409) when the pod changed since the agent looked: the next reconcile decides again on fresh state.
 * swapImages also sets each changed container's image (containers merge by name) and the revision label.
 */
async function swapStep(core: CoreV1Api, namespace: string, action: SwapAction): Promise<void> {
  const metadata: Record<string, unknown> = {
    uid: action.uid,
    resourceVersion: action.resourceVersion,
    annotations: { [SWAP_STATE_ANNOTATION]: JSON.stringify(action.state) },
    ...(action.revision !== undefined && action.kind === 'swapImages' && { labels: { [REVISION_LABEL]: action.revision } }),
  };
  const spec = action.kind === 'swapImages' ? { containers: Object.entries(action.images ?? {}).map(([name, image]) => ({ name, image })) } : undefined;
  try {
    const body = { metadata, ...(spec && { spec }) };
    await core.patchNamespacedPod({ name: action.pod, namespace, body, fieldManager: FIELD_MANAGER }, answerUnread(patchAs(PatchStrategy.StrategicMergePatch)));
  } catch (error) {
    // 404: gone. 409: changed since we looked; 422: another pod by that name. The next reconcile decides again.
    if (!isNotFound(error) && !isConflict(error) && !isInvalid(error)) throw error;
  }
}

/**
 * Sets a pod's InPlaceUpdateReady condition (status subresource; strategic merge keyed by condition type): False
 * takes the pod out of endpoints for an in-place swap, True lets it become Ready. The uid in the patch makes the API
 * server refuse it for another pod that took the name: uid is immutable.
 */
async function setGate(core: CoreV1Api, namespace: string, name: string, uid: string, open: boolean, now: number): Promise<void> {
  const condition = {
    type: IN_PLACE_READINESS_GATE,
    status: open ? 'True' : 'False',
    reason: open ? 'NotUpdating' : 'StartInPlaceUpdate',
    lastTransitionTime: new Date(now).toISOString(),
  };
  try {
    const body = { metadata: { uid }, status: { conditions: [condition] } };
    await core.patchNamespacedPodStatus({ name, namespace, body, fieldManager: FIELD_MANAGER }, answerUnread(patchAs(PatchStrategy.StrategicMergePatch)));
  } catch (error) {
    // 404: the pod is gone; 409/422: another pod by that name. Either way nothing is left to open.
    if (!isNotFound(error) && !isInvalid(error) && !isConflict(error)) throw error;
  }
}

/** Sets a native Deployment's spec.paused (compat mode), owned by the agent like spec.replicas (see PAUSE_FIELD_MANAGER). */
async function setPaused(clients: ActuatorClients, namespace: string, name: string, paused: boolean): Promise<MetaObject> {
  const body = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name, namespace }, spec: { paused } };
  const params = { name, namespace, body, fieldManager: PAUSE_FIELD_MANAGER, force: true };
  return clients.apps.patchNamespacedDeployment(params, setHeaderOptions('Content-Type', PatchStrategy.ServerSideApply));
}

/** Sets a regional StatefulSet's rolling-update partition, owned by the agent like spec.replicas (see PARTITION_FIELD_MANAGER). */
async function setPartition(clients: ActuatorClients, namespace: string, name: string, partition: number): Promise<MetaObject> {
  const body = { apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: { name, namespace }, spec: { updateStrategy: { rollingUpdate: { partition } } } };
  const params = { name, namespace, body, fieldManager: PARTITION_FIELD_MANAGER, force: true };
  return clients.apps.patchNamespacedStatefulSet(params, setHeaderOptions('Content-Type', PatchStrategy.ServerSideApply));
}

/**
 * Sets spec.replicas by server-side apply under the agent's own field manager, forcing ownership of that one field
 * (the architecture gives it to the agent), and the rollout's group record when the action carries one: one write, so
 * the group a scale-down starts is recorded if and only if the scale happened. The body names nothing else, so every
 * other field stays Git's. A regional ReplicaSet's scale always names the record, empty outside a running group, so no
 * apply ever removes it (core/rollout/group-record.ts, withGroupRecord, says why).
 */
async function scale(clients: ActuatorClients, namespace: string, kind: WorkloadKind, action: ScaleAction): Promise<MetaObject> {
  const name = action.workload;
  const annotations = action.record === undefined ? undefined : { [GROUP_RECORD_ANNOTATION]: formatGroupRecord(action.record) };
  const body = { apiVersion: 'apps/v1', kind, metadata: { name, namespace, ...(annotations && { annotations }) }, spec: { replicas: action.replicas } };
  const options = setHeaderOptions('Content-Type', PatchStrategy.ServerSideApply);
  const params = { name, namespace, body, fieldManager: FIELD_MANAGER, force: true };
  if (kind === 'Deployment') return clients.apps.patchNamespacedDeployment(params, options);
  return kind === 'StatefulSet' ? clients.apps.patchNamespacedStatefulSet(params, options) : clients.apps.patchNamespacedReplicaSet(params, options);
}

/** Per-call options that set the patch content type (client-node 1.x defaults a patch to JSON patch otherwise). */
const patchAs = (strategy: (typeof PatchStrategy)[keyof typeof PatchStrategy]) => setHeaderOptions('Content-Type', strategy);

/**
 * Sets (or, with null values, removes) the agent's mark on a pod: its deletion cost, so the ReplicaSet removes an old
 * pod before any new pod on a scale-down, and when it was made. One merge patch that carries the pod's uid: uid is
 * immutable, so the API server rejects the patch (422) when the pod by that name is another one; it creates the
 * annotations map when there is none, removing a key that is not there is no error, and it never drops annotations
 * someone else just wrote. (A JSON patch `add` cannot add a key to a missing map, and pods created from templates
 * without annotations have none: trying it first cost a rejected request for almost every pod.)
 */
async function mark(core: CoreV1Api, namespace: string, name: string, uid: string, annotations: Readonly<Record<string, string | null>>): Promise<void> {
  try {
    await core.patchNamespacedPod(
      { name, namespace, body: { metadata: { uid, annotations } }, fieldManager: FIELD_MANAGER },
      answerUnread(patchAs(PatchStrategy.MergePatch)),
    );
  } catch (error) {
    // 404: gone meanwhile; 422: the uid differs, so the pod we meant is gone and another took its name.
    if (!isNotFound(error) && !isInvalid(error)) throw error;
  }
}

/**
 * Performs one write of an ExtendedDeployment's history (core/history/revisions.ts) on its ControllerRevisions. Each is
 * idempotent and decided again from the caches when it does not apply: a create that finds the revision recorded
 * (409 AlreadyExists), a replace whose resourceVersion is outdated (409) or whose object is gone (404), a delete whose
 * object is gone or is another one by that name now (404, or 409 from the uid precondition) are all done. Returns the
 * revision a create or replace wrote, as the API server answered.
 */
export async function performHistoryAction(apps: AppsV1Api, namespace: string, action: HistoryAction): Promise<MetaObject | undefined> {
  try {
    if (action.kind === 'create')
      return await apps.createNamespacedControllerRevision({ namespace, body: action.object as V1ControllerRevision, fieldManager: FIELD_MANAGER });
    if (action.kind === 'update') {
      const name = action.object.metadata?.name ?? '';
      return await apps.replaceNamespacedControllerRevision({ name, namespace, body: action.object as V1ControllerRevision, fieldManager: FIELD_MANAGER });
    }
    await apps.deleteNamespacedControllerRevision({ name: action.name, namespace, body: { preconditions: { uid: action.uid } } }, answerUnread());
  } catch (error) {
    if (!isNotFound(error) && !isConflict(error)) throw error;
  }
  return undefined;
}
