import type { WorkloadObject } from '../kube/objects.js';

/**
 * What observe reads of a ReplicaSet (a regional one, a keeper, or one of a native Deployment's), as one string: its
 * labels, annotations, owners and deletion, its spec (through metadata.generation, which every spec change moves) and,
 * of its status, the controller's report (observedGeneration, terminatingReplicas: workloadState). Two versions with
 * the same string plan the same: an update between them changes only counts the ReplicaSet controller keeps
 * (replicas, ready, available), which the planner takes from the pods, whose own events bring them. The agent looks
 * again only when this changes.
 */
export function replicaSetReads(rs: WorkloadObject): string {
  const { metadata, status } = rs;
  return JSON.stringify([
    metadata?.generation,
    metadata?.deletionTimestamp,
    metadata?.labels,
    metadata?.annotations,
    metadata?.ownerReferences,
    status?.observedGeneration,
    status?.terminatingReplicas,
  ]);
}
