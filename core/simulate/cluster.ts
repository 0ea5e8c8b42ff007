/**
 * The simulated cluster `edctl plan` runs the planner against: the Kubernetes objects the agent reads, as the API
 * server would hold them, plus what the models need to know about the near future (when a pod's containers become
 * ready, when a terminating pod is gone). Plain data: every model is a function from one cluster to the next.
 */
import type { IntOrPercent } from '../api/common.js';
import type { ExtendedDeploymentSpec } from '../api/extended-deployment.js';
import type { DeployRegionObject, ExtendedDeploymentObject, PodObject, PodTemplate, WorkloadObject } from '../kube/objects.js';
import { REGION_LABEL, REVISION_LABEL } from '../labels.js';
import type { OwnerReference } from '../ownership.js';

/** A regional workload with the fields its controller reads beyond what the agent reads. */
export interface SimWorkload extends WorkloadObject {
  spec?: WorkloadObject['spec'] & {
    minReadySeconds?: number;
    selector?: { matchLabels?: Record<string, string> };
    /** Deployments: RollingUpdate (maxSurge, maxUnavailable) or Recreate, as rendered. */
    strategy?: { type?: string; rollingUpdate?: { maxSurge?: number | string; maxUnavailable?: number | string } };
    /** StatefulSets: OrderedReady (the default) or Parallel, as rendered. */
    podManagementPolicy?: string;
  };
  status?: WorkloadObject['status'] & {
    /** StatefulSets: pods at the current revision. */
    currentReplicas?: number;
  };
}

/** A pod, and the next instant at which its kubelet changes it (containers ready, or the pod gone). */
export interface SimPod {
  readonly object: PodObject;
  readonly kubeletAt?: number;
}

/** Half-open range of pod serials `[from, to)`. */
export type SerialRange = readonly [from: number, to: number];

/**
 * Settled pods kept as a count (cohorts.ts): every member is `pod` but for its name, uid and container ids, which
 * derive from its serial. `pod` is the member that joined last, as it was when it joined.
 */
export interface Cohort {
  readonly pod: PodObject;
  /** Serials of the members, sorted and disjoint. */
  readonly serials: readonly SerialRange[];
}

/** What the simulation counts over the whole rollout. */
export interface Tally {
  /** Pods the workload controllers created. */
  readonly podsCreated: number;
  /** In-place swaps that completed (swapDone on a pod whose images were patched). */
  readonly podsSwapped: number;
  /** Pods at their region's target revision that a controller or the agent removed. */
  readonly newPodsRemoved: number;
}

/** The whole simulated cluster at one instant. */
export interface Cluster {
  readonly now: number;
  readonly ed: ExtendedDeploymentObject;
  readonly deployRegions: readonly DeployRegionObject[];
  readonly replicaSets: readonly SimWorkload[];
  readonly deployments: readonly SimWorkload[];
  /** Regional StatefulSets (subsetType StatefulSet). */
  readonly statefulSets: readonly SimWorkload[];
  /**
   * The StatefulSets' ControllerRevisions: the template of each revision, by revision name (`<statefulset>-<hash>`,
   * statefulset-controller.ts). Pods below a partition are made again from the current revision's.
   */
  readonly controllerRevisions: Readonly<Record<string, PodTemplate>>;
  /** Pods held one by one, sorted by name. */
  readonly pods: readonly SimPod[];
  readonly cohorts: readonly Cohort[];
  /**
   * The next pod serial of each ReplicaSet (by name): pod names, uids and container ids derive from it. Per
   * ReplicaSet, so that each one's pods have serials in a row (cohorts keep them as ranges). For a StatefulSet, the pods
   * it has made: its pods are named by ordinal, and the serial gives a pod made again under its name a uid of its own.
   */
  readonly serials: Readonly<Record<string, number>>;
  /** Writes to the objects the agent watches (its own status writes aside): it looks again after each. */
  readonly writes: number;
  readonly tally: Tally;
}

/** What stays the same through one simulation. */
export interface Setting {
  readonly namespace: string;
  /** The kind of the regional workloads. */
  readonly subsetType: ExtendedDeploymentSpec['subsetType'];
  /** Each region's target revision, from the rendered ExtendedDeployment. */
  readonly targets: ReadonlyMap<string, string>;
  /** The ExtendedDeployment's minReadySeconds (also its workloads'). */
  readonly minReadySeconds: number;
  /** Its batchSize. */
  readonly batchSize: IntOrPercent;
  /**
   * Whether settled pods are kept as counts (cohorts.ts); off, every pod is an object, as for the agent. Never for
   * StatefulSet regions (settingOf).
   */
  readonly cohorts: boolean;
  /**
   * The pods that ran before the change at another revision carry the agent's mark for removal, as a completed
   * rollout leaves them (RolloutInput.standingMarks): regional ReplicaSets without in-place updates, unless the start
   * says they do not (SimulationStart.standingMarks).
   */
  readonly standingMarks: boolean;
}

/** Digits of a pod's serial in its name: fixed, so that names sort as their serials do (the planner picks by name). */
const SERIAL_DIGITS = 12;

/** The name of the pod with `serial` of the ReplicaSet `owner`. */
export function podName(owner: string, serial: number): string {
  return `${owner}-${String(serial).padStart(SERIAL_DIGITS, '0')}`;
}

/** The serial a pod's name ends with. */
export function serialOf(name: string): number {
  return Number(name.slice(-SERIAL_DIGITS));
}

/** The name with another serial. */
export function renamed(name: string, serial: number): string {
  return `${name.slice(0, -SERIAL_DIGITS)}${String(serial).padStart(SERIAL_DIGITS, '0')}`;
}

/**
 * An object's uid, derived from the name it is given: names are never reused in a simulation but by a StatefulSet's
 * pods, whose uid is given their name and serial (statefulset-controller.ts).
 */
export function uidOf(name: string): string {
  return `uid-${name}`;
}

/** A container's id after `restarts` restarts. */
export function containerIdOf(pod: string, container: string, restarts: number): string {
  return `containerd://${pod}-${container}-${restarts}`;
}

/** The pod's region (its region label). */
export const regionOf = (pod: PodObject): string => pod.metadata?.labels?.[REGION_LABEL] ?? '';

/** The pod's revision label. */
export const revisionOf = (pod: PodObject): string | undefined => pod.metadata?.labels?.[REVISION_LABEL];

/** Whether the pod runs its region's target revision. */
export const isTarget = (setting: Setting, pod: PodObject): boolean => revisionOf(pod) === setting.targets.get(regionOf(pod));

/** The controller ownerReference of an object. */
export const controllerOf = (object: { metadata?: { ownerReferences?: readonly OwnerReference[] } }): OwnerReference | undefined =>
  object.metadata?.ownerReferences?.find((r) => r.controller === true);

/** Whether `object` is controlled by the workload `owner`. */
export const ownedBy = (object: { metadata?: { ownerReferences?: readonly OwnerReference[] } }, owner: SimWorkload): boolean =>
  controllerOf(object)?.uid === owner.metadata?.uid;

/** The controller ownerReference a workload controller sets on what it creates. */
export function controllerReference(owner: SimWorkload, kind: 'ReplicaSet' | 'Deployment' | 'StatefulSet'): OwnerReference {
  return { apiVersion: 'apps/v1', kind, name: owner.metadata?.name ?? '', uid: owner.metadata?.uid ?? '', controller: true };
}

/** An RFC 3339 time with milliseconds (the API server keeps seconds; see timing.ts for why the simulation does not). */
export const iso = (ms: number): string => new Date(ms).toISOString();

/**
 * The object after one write: resourceVersion counts its writes (per object rather than cluster-wide, so that a pod
 * kept as a count and the same pod kept as an object carry the same one; it is opaque to every reader either way).
 */
export function written<T extends { metadata?: { resourceVersion?: string } }>(object: T, change: Partial<T>): T {
  const next = { ...object, ...change };
  return { ...next, metadata: { ...next.metadata, resourceVersion: String(Number(object.metadata?.resourceVersion ?? '0') + 1) } };
}

/** A workload's spec after a write that changes it: its generation goes up, as the API server's does. */
export function withSpec(workload: SimWorkload, spec: Partial<NonNullable<SimWorkload['spec']>>): SimWorkload {
  const next = written(workload, { spec: { ...workload.spec, ...spec } });
  return { ...next, metadata: { ...next.metadata, generation: (workload.metadata?.generation ?? 0) + 1 } };
}

/** The pod template of a workload. */
export const templateOf = (workload: SimWorkload): PodTemplate => workload.spec?.template ?? {};

/** Replaces the item at `index`. */
export function replaced<T>(items: readonly T[], index: number, item: T): T[] {
  return items.map((x, i) => (i === index ? item : x));
}
