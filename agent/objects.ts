/**
 * The shapes of the Kubernetes objects the agent reads, as far as it reads them. Deliberately structural and loose:
 * informer caches hold objects from list responses (deserialized by client-node: timestamps are Date objects) and
 * from watch events (raw JSON: timestamps are strings), so every timestamp may be either.
 */
import type { OwnerReference } from '../core/ownership.js';

/** An RFC 3339 string (raw JSON) or a Date (client-node's deserialized lists). */
export type Timestamp = string | Date;

/** Object metadata the agent reads. */
export interface ObjectMeta {
  name?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  creationTimestamp?: Timestamp;
  deletionTimestamp?: Timestamp;
  /** Who controls the object: decides which workload a pod is (core/ownership.ts). */
  ownerReferences?: OwnerReference[];
}

/** Any object with metadata. */
export interface MetaObject {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
}

/** An ExtendedDeployment as the API returns it (spec and status unchecked until parsed by core). */
export interface ExtendedDeploymentObject extends MetaObject {
  spec?: unknown;
  status?: unknown;
}

/** A DeployRegion as the API returns it. */
export interface DeployRegionObject extends MetaObject {
  spec?: unknown;
  status?: unknown;
}

/** A ReplicaSet or Deployment. */
export interface WorkloadObject extends MetaObject {
  spec?: {
    replicas?: number;
    /** Deployments only. */
    paused?: boolean;
    template?: { metadata?: { labels?: Record<string, string> }; spec?: object };
  };
  status?: {
    observedGeneration?: number;
    replicas?: number;
    updatedReplicas?: number;
    readyReplicas?: number;
    availableReplicas?: number;
    /** Pods with a deletionTimestamp (Kubernetes 1.33+). */
    terminatingReplicas?: number;
  };
}

/** The regional workloads the cache holds, by kind (list items carry no `kind`, so the caller keeps them apart). */
export interface Workloads {
  readonly replicaSets: readonly WorkloadObject[];
  readonly deployments: readonly WorkloadObject[];
}

/** A pod condition. */
export interface PodCondition {
  type: string;
  status: string;
  reason?: string;
  lastTransitionTime?: Timestamp;
}

/** A pod. */
export interface PodObject extends MetaObject {
  spec?: { nodeName?: string; readinessGates?: { conditionType: string }[]; containers?: { name: string; image?: string }[] };
  status?: { phase?: string; conditions?: PodCondition[]; containerStatuses?: ContainerStatus[] };
}

/** A container's status, as far as the in-place protocol reads it. */
export interface ContainerStatus {
  name: string;
  containerID?: string;
  restartCount?: number;
  ready?: boolean;
  state?: { running?: object; waiting?: { reason?: string }; terminated?: object };
}

/** A timestamp in ms since the epoch; undefined when absent or unparsable. */
export function timestampMs(value: Timestamp | undefined): number | undefined {
  if (value === undefined || value === null) return undefined;
  const ms = value instanceof Date ? value.getTime() : Date.parse(value);
  return Number.isNaN(ms) ? undefined : ms;
}

/** `namespace/name`, the queue key of a namespaced object (`name` for a cluster-scoped one). */
export function objectKey(namespace: string | undefined, name: string): string {
  return namespace ? `${namespace}/${name}` : name;
}

/** Splits a key made by {@link objectKey}. */
export function splitKey(key: string): { namespace: string; name: string } {
  const slash = key.indexOf('/');
  return slash < 0 ? { namespace: '', name: key } : { namespace: key.slice(0, slash), name: key.slice(slash + 1) };
}
