/**
 * The shapes of the Kubernetes objects the project reads (the agent, the CLI) and renders (pod templates), as far as
 * it reads or writes them. Deliberately structural and loose: informer caches hold objects from list responses
 * (deserialized by client-node: timestamps are Date objects) and from watch events (raw JSON: timestamps are
 * strings), so every timestamp may be either.
 */
import type { OwnerReference } from '../ownership.js';

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

// The pod shapes below are type aliases, not interfaces, on purpose: a type alias converts to a JSON object
// (`{ [key: string]: unknown }`) without a cast, so the renderer can hand a template to JSON patches and the in-place
// comparison can walk a spec field by field.

/** Quantities by resource name, as Kubernetes writes them (`"500m"`, `"1Gi"`, `2`). */
export type ResourceList = Record<string, string | number>;

/** A container's resources. */
export type ResourceRequirements = { requests?: ResourceList; limits?: ResourceList };

/** An environment variable of a container. */
export type EnvVar = { name: string; value?: string; valueFrom?: unknown };

/** A container, as far as the project reads or writes it: rendering, in-place swaps and capacity. */
export type Container = {
  name: string;
  image?: string;
  env?: EnvVar[];
  resources?: ResourceRequirements;
  /** Init containers only: `Always` makes it a sidecar, which runs as long as the pod does. */
  restartPolicy?: string;
};

/** One requirement of a node selector term. */
export type NodeSelectorRequirement = { key: string; operator: string; values?: string[] };

/** A node selector term: its requirements are AND-ed, the terms of a selector OR-ed. */
export type NodeSelectorTerm = { matchExpressions?: NodeSelectorRequirement[]; matchFields?: unknown[] };

/** The node affinity every pod of a region gets its region's labels in. */
export type NodeAffinity = { requiredDuringSchedulingIgnoredDuringExecution?: { nodeSelectorTerms?: NodeSelectorTerm[] } };

/**
 * A toleration as pods and workloads carry it: any operator and effect string, where a spec the project validates
 * allows only the known ones (core/api/common.ts).
 */
export type PodToleration = { key?: string; operator?: string; value?: string; effect?: string; tolerationSeconds?: number };

/** A pod's spec, or a pod template's, as far as the project reads or writes it. */
export type PodSpec = {
  containers?: Container[];
  initContainers?: Container[];
  /** Pods only: the node the pod is bound to. */
  nodeName?: string;
  nodeSelector?: Record<string, string>;
  affinity?: { nodeAffinity?: NodeAffinity };
  tolerations?: PodToleration[];
  readinessGates?: { conditionType: string }[];
  overhead?: ResourceList;
};

/** A pod template: of an ExtendedDeployment, of a regional workload, or the template of a region being rendered. */
export type PodTemplate = {
  metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> };
  spec?: PodSpec;
};

/** A ReplicaSet, Deployment or StatefulSet. */
export interface WorkloadObject extends MetaObject {
  spec?: {
    replicas?: number;
    /** Deployments only. */
    paused?: boolean;
    template?: PodTemplate;
    /** StatefulSets only: the rolling update's partition, which the agent owns. */
    updateStrategy?: { type?: string; rollingUpdate?: { partition?: number } };
  };
  status?: {
    /** StatefulSets only: the revision the pods below the partition are made from, and the template's. */
    currentRevision?: string;
    updateRevision?: string;
    observedGeneration?: number;
    replicas?: number;
    updatedReplicas?: number;
    readyReplicas?: number;
    availableReplicas?: number;
    /** Pods with a deletionTimestamp (Kubernetes 1.33+). */
    terminatingReplicas?: number;
  };
}

/** A ControllerRevision (apps/v1) as the API returns it; `data` is unchecked until read (core/history/entries.ts). */
export interface ControllerRevisionObject extends MetaObject {
  revision?: number;
  data?: unknown;
}

/** Which kind the regional workloads of an ExtendedDeployment are. */
export type WorkloadKind = 'ReplicaSet' | 'Deployment' | 'StatefulSet';

/** The regional workloads the cache holds, by kind (list items carry no `kind`, so the caller keeps them apart). */
export interface Workloads {
  readonly replicaSets: readonly WorkloadObject[];
  readonly deployments: readonly WorkloadObject[];
  /** The regional StatefulSets (subsetType StatefulSet); undefined where none are read. */
  readonly statefulSets?: readonly WorkloadObject[] | undefined;
  /**
   * The ExtendedDeployment's history (ControllerRevisions labelled with its name), where the templates its keepers
   * make old pods from are kept; undefined where there is none to read (edctl plan, an agent without the history yet).
   */
  readonly controllerRevisions?: readonly ControllerRevisionObject[] | undefined;
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
  spec?: PodSpec;
  status?: { phase?: string; conditions?: PodCondition[]; containerStatuses?: ContainerStatus[]; initContainerStatuses?: ContainerStatus[] };
}

/** A container's status, as far as the in-place protocol and the reasons for a stuck rollout read it. */
export interface ContainerStatus {
  name: string;
  containerID?: string;
  restartCount?: number;
  ready?: boolean;
  state?: { running?: object; waiting?: { reason?: string; message?: string }; terminated?: { reason?: string; exitCode?: number } };
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
