/**
 * The shapes of the objects traffic shifting reads and writes: Services and Gateway API HTTPRoutes, as far as it
 * reads them (loose, as core/kube/objects.ts: cached objects are not validated) and exactly as it writes them.
 */
import { API_VERSION, ED_KIND } from '../api/identity.js';
import type { ObjectMeta } from '../kube/objects.js';
import type { OwnerReference } from '../ownership.js';

/** Gateway API group and the HTTPRoute version the agent writes (v1: GA since Gateway API v1.0). */
export const GATEWAY_GROUP = 'gateway.networking.k8s.io';
/** apiVersion of the HTTPRoutes the render and the agent write. */
export const HTTPROUTE_API_VERSION = `${GATEWAY_GROUP}/v1`;

/**
 * `app.kubernetes.io/managed-by` value on every object the agent creates for traffic: the same name as its field
 * manager (agent/field-manager.ts), which core cannot import. Never Argo CD's tracking annotation, so no GitOps tool
 * prunes or diffs these objects; Argo CD shows them as children of the ExtendedDeployment through the ownerReference.
 */
export const AGENT_MANAGER = 'extendeddeployment-agent';
/** The recommended label that names who manages an object. */
export const MANAGED_BY_LABEL = 'app.kubernetes.io/managed-by';

/** The ExtendedDeployment traffic objects belong to. */
export interface TrafficOwner {
  readonly name: string;
  readonly namespace: string;
  /** Empty when never stored by an API server (a render, a test): then kind and name decide ownership. */
  readonly uid: string;
}

/** A condition as Gateway API route status carries it. */
export interface RouteCondition {
  readonly type?: string;
  readonly status?: string;
  readonly reason?: string;
  readonly message?: string;
  readonly observedGeneration?: number;
  readonly lastTransitionTime?: string | Date;
}

/** A Gateway API ParentReference, as written or read. */
export interface ParentReference {
  readonly group?: string;
  readonly kind?: string;
  readonly namespace?: string;
  readonly name?: string;
  readonly sectionName?: string;
  readonly port?: number;
}

/** One backendRef of a rule, fully defaulted. */
export interface BackendRef {
  readonly group: '';
  readonly kind: 'Service';
  readonly name: string;
  readonly port: number;
  readonly weight: number;
}

/** One rule of an HTTPRoute, as the agent writes it (template fields are kept as written, then defaulted). */
export interface RouteRule {
  readonly name?: string;
  readonly matches: readonly Record<string, unknown>[];
  readonly filters?: readonly Record<string, unknown>[];
  readonly timeouts?: { readonly request?: string; readonly backendRequest?: string };
  readonly backendRefs: readonly BackendRef[];
}

/** The metadata of a traffic object as the render or the agent writes it. */
export interface WrittenMetadata {
  readonly name: string;
  readonly namespace: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly ownerReferences?: OwnerReference[];
}

/** An HTTPRoute as the render or the agent writes it. */
export interface HTTPRouteObject {
  readonly apiVersion: typeof HTTPROUTE_API_VERSION;
  readonly kind: 'HTTPRoute';
  readonly metadata: WrittenMetadata;
  readonly spec: {
    readonly parentRefs: readonly ParentReference[];
    readonly hostnames?: readonly string[];
    readonly rules: readonly RouteRule[];
  };
}

/** An HTTPRoute as read from the cluster. */
export interface ObservedRoute {
  readonly metadata?: ObjectMeta;
  readonly spec?: { readonly parentRefs?: readonly ParentReference[]; readonly rules?: readonly { readonly backendRefs?: readonly Partial<BackendRef>[] }[] };
  readonly status?: {
    readonly parents?: readonly { readonly parentRef?: ParentReference; readonly controllerName?: string; readonly conditions?: readonly RouteCondition[] }[];
  };
}

/** A Service port, fully spelled. */
export interface ServicePort {
  readonly name: string;
  readonly port: number;
  readonly targetPort: number | string;
  readonly protocol: 'TCP';
  readonly appProtocol?: string;
}

/** A Service as the render or the agent writes it. */
export interface ServiceObject {
  readonly apiVersion: 'v1';
  readonly kind: 'Service';
  readonly metadata: WrittenMetadata;
  readonly spec: {
    readonly type: 'ClusterIP';
    readonly selector: Readonly<Record<string, string>>;
    readonly ports: readonly ServicePort[];
  };
}

/** A Service as read from the cluster. */
export interface ObservedService {
  readonly metadata?: ObjectMeta;
}

/**
 * The controller ownerReference of every object the agent creates for traffic: deleting the ExtendedDeployment deletes
 * them, and Argo CD shows them as its children. blockOwnerDeletion true, as the Deployment controller sets it on its
 * ReplicaSets, so a foreground deletion of the ExtendedDeployment waits until its route is gone.
 */
export function trafficOwnerReference(owner: TrafficOwner): OwnerReference & { blockOwnerDeletion: true } {
  return { apiVersion: API_VERSION, kind: ED_KIND, name: owner.name, uid: owner.uid, controller: true, blockOwnerDeletion: true };
}
