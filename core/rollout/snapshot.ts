import { OLD_MARK_COST } from './removal-marks.js';
import type { SwapState } from '../inplace/swap-state.js';
import type { PodTemplate } from '../kube/objects.js';
import type { NodeView } from '../moves/nodes.js';
import type { GroupRecord } from './group-record.js';
import { isPodActive, isPodTerminating } from './pod-activity.js';

/** A container of a pod, as its status shows it. */
export interface ContainerState {
  readonly name: string;
  /** The image in the pod's spec. */
  readonly image: string;
  readonly containerID: string | undefined;
  readonly restartCount: number;
  readonly running: boolean;
  readonly ready: boolean;
  /** Why it does not run yet, as the kubelet says it (CrashLoopBackOff, ImagePullBackOff, ...); undefined when it runs. */
  readonly waiting?: { readonly reason: string; readonly message?: string | undefined } | undefined;
  /** Why it stopped (Error, OOMKilled, Completed), while it is terminated. */
  readonly terminated?: string | undefined;
}

/** A pod as the planner sees it. */
export interface PodState {
  readonly name: string;
  readonly uid: string;
  /** The pod's revision label; undefined for a pod the renderer never labelled. */
  readonly revision: string | undefined;
  /** Bound to a node. */
  readonly assigned: boolean;
  /** Phase Running. */
  readonly running: boolean;
  /** status.phase; a Failed or Succeeded pod never counts (see pod-activity.ts). Undefined when not reported. */
  readonly phase?: string | undefined;
  /** Condition Ready is True. */
  readonly ready: boolean;
  /** When Ready last became True (ms since epoch). */
  readonly readySince: number | undefined;
  /** Has a deletionTimestamp. */
  readonly terminating: boolean;
  /** While the scheduler finds no node for it (PodScheduled False, reason Unschedulable): since when (ms). */
  readonly unschedulableSince?: number | undefined;
  /** metadata.creationTimestamp (ms; whole seconds). */
  readonly createdAt?: number | undefined;
  /** Whether the pod carries a mark for removal: a negative pod-deletion-cost (removal-marks.ts). */
  readonly markedOld: boolean;
  /** The mark's cost, while it carries one; undefined reads as the lowest (a rollout's own mark). */
  readonly markCost?: number | undefined;
  /** Whether the agent marked the old pod to be kept by its region's partition, removed after any other (pod-deletion-cost). */
  readonly held?: boolean;
  /** When the agent marked it (ms), either mark, from the mark's own record; undefined for a mark without one. */
  readonly markedAt?: number | undefined;
  /** The pod carries the InPlaceUpdateReady readiness gate. */
  readonly gated?: boolean;
  /** Its InPlaceUpdateReady condition is True. */
  readonly gateOpen?: boolean;
  /**
   * When its InPlaceUpdateReady condition last turned False (ms; Kubernetes keeps whole seconds, so the gate may have
   * closed up to a second later), while it is False.
   */
  readonly gateClosedAt?: number | undefined;
  /** For writes guarded by optimistic concurrency. */
  readonly resourceVersion?: string;
  /** Its in-place swap, when one was started. */
  readonly swap?: SwapState | undefined;
  /** Images to set per container when the pod can reach its region's template by an in-place swap; else undefined. */
  readonly swappable?: Readonly<Record<string, string>> | undefined;
  /** Regular containers, from the pod's status. */
  readonly containers?: readonly ContainerState[];
  /**
   * While an init container holds the pod back: what `kubectl get pods` shows for it (`Init:CrashLoopBackOff`,
   * `Init:Error`, `Init:1/2`), with the kubelet's message when it gives one; undefined once every init container ran.
   */
  readonly initTrouble?: string | undefined;
}

/** A region's workload as observed. */
export interface WorkloadState {
  readonly name: string;
  /** Revision label of the workload's pod template: what new pods will run. */
  readonly templateRevision: string | undefined;
  /** spec.replicas (Kubernetes' default 1 when unset). */
  readonly replicas: number;
  /** What a native Deployment reports (compat mode, subsetType Deployment); undefined for a ReplicaSet. */
  readonly deployment?: DeploymentProgress | undefined;
  /** A regional StatefulSet's partition and what its controller reports (subsetType StatefulSet). */
  readonly statefulSet?: StatefulSetProgress | undefined;
  /** What the ReplicaSet controller last reported; undefined when unknown (then never waited for). */
  readonly reported?: ReplicaSetReport | undefined;
  /** The rollout's group as a regional ReplicaSet records it (group-record.ts); undefined when it records none. */
  readonly groupRecord?: GroupRecord | undefined;
}

/** The ReplicaSet controller's view of a regional ReplicaSet. */
export interface ReplicaSetReport {
  readonly generation: number;
  readonly observedGeneration: number;
  /** status.terminatingReplicas (Kubernetes 1.33+); undefined when the cluster does not report it. */
  readonly terminatingReplicas: number | undefined;
}

/** A native Deployment's own view of its rollout. */
export interface DeploymentProgress {
  readonly paused: boolean;
  readonly generation: number;
  readonly observedGeneration: number;
  /** status.replicas: pods of every revision. */
  readonly replicas: number;
  readonly updatedReplicas: number;
  readonly readyReplicas: number;
  readonly availableReplicas: number;
}

/** A regional StatefulSet's partition and its controller's view of its rollout. */
export interface StatefulSetProgress {
  /** spec.updateStrategy.rollingUpdate.partition: pods of lower ordinals stay at (or are made again from) the current revision. */
  readonly partition: number;
  readonly generation: number;
  readonly observedGeneration: number;
  /** status.currentRevision and status.updateRevision: equal once every pod runs the template (the controller's own rollout is done). */
  readonly currentRevision: string | undefined;
  readonly updateRevision: string | undefined;
}

/**
 * A region's keeper: the ReplicaSet the agent owns that makes old-revision pods again for the region's partition
 * (keeper.ts), as observed.
 */
export interface KeeperState {
  readonly name: string;
  readonly uid: string;
  /** The revision label of its template: the revision it keeps. */
  readonly revision: string | undefined;
  /** spec.replicas. */
  readonly replicas: number;
  /** The pods it controls. */
  readonly pods: readonly PodState[];
}

/** A region's pods: all that the decisions about single pods read (the readiness gate). */
export interface RegionPods {
  readonly name: string;
  readonly pods: readonly PodState[];
  /**
   * Pods counted rather than listed: each entry stands for `count` more pods like `pod` but for their names and uids.
   * Only `edctl plan`'s simulation sets it (core/simulate/cohorts.ts); the agent lists every pod it observes. Such pods
   * are settled: active, bound, running, Ready and available, every container ready, no swap under way, their gate
   * open when they have one (so no gate to set); and they are never the ones a pick by name would take first (the
   * simulation lists every pod the planner may act on). So a decision counts them (countWhere) and acts on none of
   * them. Their mark, when they carry one, may be recent (then all of them got it at once): its settling is their one
   * requeue instant.
   */
  readonly settled?: readonly SettledPods[];
}

/** `count` settled pods like `pod` (see RegionPods.settled). */
export interface SettledPods {
  readonly pod: PodState;
  readonly count: number;
}

/** How many pods of a region, listed or settled, satisfy `predicate`. */
export function countWhere(region: Pick<RegionPods, 'pods' | 'settled'>, predicate: (pod: PodState) => boolean): number {
  let n = 0;
  for (const pod of region.pods) if (predicate(pod)) n++;
  for (const s of region.settled ?? []) if (predicate(s.pod)) n += s.count;
  return n;
}

/** The cost of a pod's mark for removal; a mark without a recorded cost is a rollout's own, the lowest. */
export const markCostOf = (pod: PodState): number => pod.markCost ?? OLD_MARK_COST;

/** The costs of the marks for removal on a region's pods, listed or settled, that satisfy `predicate`. */
export function markCosts(region: Pick<RegionPods, 'pods' | 'settled'>, predicate: (pod: PodState) => boolean): number[] {
  const of = (pod: PodState) => (pod.markedOld && predicate(pod) ? [markCostOf(pod)] : []);
  return [...region.pods.flatMap(of), ...(region.settled ?? []).flatMap((s) => (s.count > 0 ? of(s.pod) : []))];
}

/** One region as observed. */
export interface RegionState extends RegionPods {
  /** The region's rendered revision: where its pods are headed. */
  readonly targetRevision: string;
  /** Replicas the region should run: the spec's share (the planner adds moves). */
  readonly desired: number;
  /** Its DeployRegion's status says Failed (the agent's region health): a fleet member publishes when all are. */
  readonly failed?: boolean | undefined;
  /** Pods its partition keeps on previous revisions (spec.regions[].partition of the spec's share); 0 when unset. */
  readonly partition?: number | undefined;
  /** The region's nodes, when the agent tracks them (moves are on); undefined otherwise. */
  readonly nodes?: readonly NodeView[] | undefined;
  /** How many more pods of the region's template its nodes can take now; undefined when not tracked. */
  readonly room?: number | undefined;
  /** Undefined until Git has created the workload. */
  readonly workload: WorkloadState | undefined;
  /** The region's keeper, when the agent made one (keeper.ts); its pods are not among `pods`. */
  readonly keeper?: KeeperState | undefined;
  /**
   * Templates a keeper can make old pods from, by region revision: what the region ran in the revisions the
   * ExtendedDeployment's history recorded (core/history/), for the revisions its old pods run. Only for a region with
   * a partition; undefined otherwise.
   */
  readonly keptTemplates?: Readonly<Record<string, PodTemplate>> | undefined;
  /**
   * Set by the planner on the view the rollout plans with (keeper.ts): how many of the region's pods its keeper serves,
   * which `desired` and `partition` no longer count. The status adds them back.
   */
  readonly keeperServes?: number;
  /**
   * Set by the planner beside `keeperServes`: the keeper's pods it does not serve yet (being made, not available yet, or
   * terminating), which take surge room the regional ReplicaSet must leave them.
   */
  readonly keeperOccupies?: number;
  /**
   * Set by the planner where a keeper holds the region's partition: the old pods the whole region keeps (its partition
   * within its count), which the keeper makes up for where the regional ReplicaSet has fewer. The groups are laid out on
   * it, so they do not change as the keeper makes them.
   */
  readonly keptWhole?: number;
}

/**
 * When a pod counts as available: `minReadySeconds` after it became Ready, while it is active (neither terminal nor
 * terminating). Undefined for a pod that is not Ready or not active.
 */
export function availableAt(pod: PodState, minReadySeconds: number): number | undefined {
  return pod.ready && isPodActive(pod) && pod.readySince !== undefined ? pod.readySince + minReadySeconds * 1000 : undefined;
}

/** Whether a pod counts as available (availableAt) at `now`. */
export function isAvailable(pod: PodState, minReadySeconds: number, now: number): boolean {
  const at = availableAt(pod, minReadySeconds);
  return at !== undefined && at <= now;
}

/** Counts of one region's pods. */
export interface RegionCounts {
  readonly current: number;
  readonly updated: number;
  readonly old: number;
  readonly ready: number;
  readonly available: number;
  readonly updatedAvailable: number;
  readonly oldAvailable: number;
  /** Pods being deleted whose containers still run: they hold room until gone. */
  readonly terminating: number;
}

/**
 * Counts a region's pods: active ones by revision and availability, and those terminating. Terminal pods (Failed,
 * Succeeded) count nowhere: the ReplicaSet controller replaces them, and they hold no room.
 */
export function countPods(region: RegionState, minReadySeconds: number, now: number): RegionCounts {
  const isNew = (p: PodState) => p.revision === region.targetRevision;
  const available = (p: PodState) => isAvailable(p, minReadySeconds, now);
  const current = countWhere(region, isPodActive);
  const updated = countWhere(region, (p) => isPodActive(p) && isNew(p));
  const updatedAvailable = countWhere(region, (p) => available(p) && isNew(p));
  const all = countWhere(region, available);
  return {
    current,
    updated,
    old: current - updated,
    ready: countWhere(region, (p) => isPodActive(p) && p.ready),
    available: all,
    updatedAvailable,
    oldAvailable: all - updatedAvailable,
    terminating: countWhere(region, isPodTerminating),
  };
}
