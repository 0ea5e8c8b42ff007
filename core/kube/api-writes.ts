import type { HistoryAction } from '../history/revisions.js';
import type { RolloutAction, TrafficAction } from '../rollout/actions.js';
import type { WorkloadKind } from './objects.js';
import { ED_PLURAL, REGION_PLURAL } from '../api/identity.js';

/** A write the agent makes, as RBAC names it: the verb and the resource (with its subresource). */
export interface ApiWrite {
  readonly verb: 'create' | 'patch' | 'update' | 'delete';
  readonly resource: string;
}

/** A read an informer of the agent makes, as RBAC names it: a list or watch of a resource, in every watched namespace. */
export interface ApiRead {
  readonly verb: 'list' | 'watch';
  readonly resource: string;
}

/** The resource of each kind of regional workload. */
export const WORKLOAD_RESOURCES: Readonly<Record<WorkloadKind, string>> = { ReplicaSet: 'replicasets', Deployment: 'deployments', StatefulSet: 'statefulsets' };

/** An ExtendedDeployment's status (status-writer.ts replaces it). */
export const STATUS_WRITE: ApiWrite = { verb: 'update', resource: `${ED_PLURAL}/status` };

/** A DeployRegion's status (status-writer.ts replaces it). */
export const REGION_STATUS_WRITE: ApiWrite = { verb: 'update', resource: `${REGION_PLURAL}/status` };

/**
 * The write an action makes, as actuators.ts performs it: a scale, pause or partition is an apply (patch) of the regional
 * workload (or of a keeper), a keeper is created and deleted, a mark or swap step a patch of the pod, a gate a patch of the pod's status, a deletion an eviction
 * (create pods/eviction); an adoption proves its freeze with a dry-run pod create, moves a pod by a patch and scales the
 * adopted workload through its scale subresource. A 403 on it names what the agent's ClusterRole lacks.
 */
export function actionWrite(kind: WorkloadKind, action: RolloutAction): ApiWrite {
  switch (action.kind) {
    case 'scale':
      return { verb: 'patch', resource: WORKLOAD_RESOURCES[kind] };
    case 'setPaused':
      return { verb: 'patch', resource: 'deployments' };
    case 'setPartition':
      return { verb: 'patch', resource: 'statefulsets' };
    case 'createKeeper':
      return { verb: 'create', resource: 'replicasets' };
    case 'dropKeeper':
      return { verb: 'delete', resource: 'replicasets' };
    case 'deletePod':
      return { verb: 'create', resource: 'pods/eviction' };
    case 'openGate':
    case 'closeGate':
      return { verb: 'patch', resource: 'pods/status' };
    case 'markOld':
    case 'holdOld':
    case 'unmark':
    case 'swapBegin':
    case 'swapImages':
    case 'swapDone':
    case 'adoptPod':
      return { verb: 'patch', resource: 'pods' };
    case 'verifyFreeze':
      return { verb: 'create', resource: 'pods' };
    case 'scaleSource':
      return { verb: 'patch', resource: action.source.kind === 'Deployment' ? 'deployments/scale' : 'replicasets/scale' };
    case 'traffic':
      return trafficWrite(action.write);
  }
}

/** A traffic write (core/traffic/plan.ts): an apply (patch) or a delete of a revision Service or the HTTPRoute. */
function trafficWrite(write: TrafficAction['write']): ApiWrite {
  switch (write.kind) {
    case 'applyService':
      return { verb: 'patch', resource: 'services' };
    case 'applyRoute':
      return { verb: 'patch', resource: 'httproutes.gateway.networking.k8s.io' };
    case 'deleteService':
      return { verb: 'delete', resource: 'services' };
    case 'deleteRoute':
      return { verb: 'delete', resource: 'httproutes.gateway.networking.k8s.io' };
  }
}

/** The write a history action makes (actuators.ts performHistoryAction): a create, replace or delete of a ControllerRevision. */
export function historyWrite(action: HistoryAction): ApiWrite {
  return { verb: action.kind, resource: 'controllerrevisions' };
}
