/**
 * Which pods count, the way the ReplicaSet and Deployment controllers count them (controller.IsPodActive,
 * IsPodTerminating). A pod in phase Failed (evicted under node pressure, rejected by the kubelet's admission such as
 * OutOfcpu, shut down with its node) or Succeeded has stopped for good: the kubelet never restarts it, the ReplicaSet
 * controller no longer counts it and creates a replacement, yet the object stays until someone deletes it or PodGC
 * collects it (by default only past 12,500 such pods). Counted as running, it would stand in for the replacement:
 * a group would wait for a pod that never becomes Ready, and an old one would keep a rollout from ever being Healthy.
 */

/** What decides whether a pod counts: its phase and whether it is being deleted. */
export interface PodLife {
  /** status.phase; undefined while the API server has not reported one (counts as Pending). */
  readonly phase?: string | undefined;
  /** Has a deletionTimestamp. */
  readonly terminating: boolean;
}

/** Phase Succeeded or Failed: every container stopped for good (controller's IsPodTerminal). */
export function isPodTerminal(pod: PodLife): boolean {
  return pod.phase === 'Succeeded' || pod.phase === 'Failed';
}

/**
 * Counts as one of its workload's pods (controller.IsPodActive): neither terminal nor being deleted. Only such pods
 * run, become available, hold or complete a group, or are marked, swapped and removed.
 */
export function isPodActive(pod: PodLife): boolean {
  return !pod.terminating && !isPodTerminal(pod);
}

/**
 * Being deleted while its containers still run (controller.IsPodTerminating): it still holds its node's resources and
 * the surge room it took until it is gone, and the ReplicaSet controller reports it as terminatingReplicas. A terminal
 * pod being deleted holds nothing: its containers stopped already.
 */
export function isPodTerminating(pod: PodLife): boolean {
  return pod.terminating && !isPodTerminal(pod);
}
