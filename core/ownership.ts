/**
 * Which pods are a regional workload's, the way Kubernetes' controllers decide it (ClaimPods,
 * PodControllerRefManager): a pod is a controller's only when its controller ownerReference names it. Labels alone
 * do not make a pod the workload's: a `kubectl debug --copy-to` copy, a Job's pod or a pod the ReplicaSet released
 * (its labels edited) may carry the same labels, and the agent would count, mark, swap or delete a pod that the
 * ReplicaSet controller neither counts nor removes.
 */

/** An entry of metadata.ownerReferences, read loosely (cached objects are not validated). */
export interface OwnerReference {
  readonly apiVersion?: string;
  readonly kind?: string;
  readonly name?: string;
  readonly uid?: string;
  readonly controller?: boolean;
}

/** An object that may control others. */
export interface OwnerId {
  readonly kind: string;
  readonly name: string;
  /**
   * Its uid; empty or undefined when it was never stored by an API server (a render, a test), and then kind and name
   * decide. With it, a pod of a deleted namesake (Argo CD's Replace, a delete and re-create) is not the new one's.
   */
  readonly uid?: string | undefined;
}

/** An object as far as ownership reads it. */
export interface Owned {
  readonly metadata?: { readonly name?: string; readonly uid?: string; readonly ownerReferences?: readonly OwnerReference[] } | undefined;
}

/** Whether the controller among `references` (the one with `controller: true`; Kubernetes allows one) is `owner`. */
export function isControlledBy(references: readonly OwnerReference[] | undefined, owner: OwnerId): boolean {
  const controller = references?.find((r) => r.controller === true);
  return controller !== undefined && controller.kind === owner.kind && controller.name === owner.name && (!owner.uid || controller.uid === owner.uid);
}

/**
 * The controllers whose pods are a regional workload's: the ReplicaSet or StatefulSet itself, or for a Deployment
 * (compat mode) the ReplicaSets it controls, one per template it has run (its pods name their ReplicaSet, never the
 * Deployment). `replicaSets` are those of the workload's namespace (owner references never cross namespaces).
 */
export function podControllers(workload: Owned, kind: 'ReplicaSet' | 'Deployment' | 'StatefulSet', replicaSets: readonly Owned[]): OwnerId[] {
  const self = ownerId(kind, workload);
  if (kind !== 'Deployment') return [self];
  return replicaSets.filter((rs) => isControlledBy(rs.metadata?.ownerReferences, self)).map((rs) => ownerId('ReplicaSet', rs));
}

/** The OwnerId of `object` as a controller of kind `kind`. */
export function ownerId(kind: string, object: Owned): OwnerId {
  return { kind, name: object.metadata?.name ?? '', uid: object.metadata?.uid };
}
