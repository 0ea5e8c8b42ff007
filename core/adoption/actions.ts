import type { AdoptionSource } from '../api/extended-deployment.js';
import type { ScaleAction } from '../rollout/actions.js';

/**
 * Prove that the adoption freeze holds before a step writes anything: a server-side dry run of a pod controlled by
 * `owner` must be refused by the freeze policy. The policy reads its params (the status) from an informer of its own,
 * which may lag the status write by a few milliseconds.
 */
export interface VerifyFreezeAction {
  readonly kind: 'verifyFreeze';
  readonly region: string;
  /** The old ReplicaSet (or InplaceSet) the status lists as frozen. */
  readonly owner: { readonly apiVersion: string; readonly kind: string; readonly name: string; readonly uid: string };
}

/**
 * Move one pod to the region's ReplicaSet: one JSON patch that tests the pod's uid and resourceVersion as read, so it
 * applies to exactly the pod that was planned on or not at all, replaces the controller reference and sets the labels
 * and annotations whole. Nothing about the running pod changes.
 */
export interface AdoptPodAction {
  readonly kind: 'adoptPod';
  readonly region: string;
  readonly pod: string;
  readonly uid: string;
  readonly resourceVersion: string;
  /** The region's ReplicaSet, with the uid read in the same look (a stale uid would make the garbage collector delete the pod). */
  readonly owner: { readonly name: string; readonly uid: string };
  /** The pod's labels afterwards: its own but the old ReplicaSet's pod-template-hash, and the region's template labels. */
  readonly labels: Readonly<Record<string, string>>;
  /** The pod's annotations afterwards: its own and where it came from. */
  readonly annotations: Readonly<Record<string, string>>;
}

/** Scale the adopted workload through its own scale subresource (a Deployment's, never its ReplicaSet's; an InplaceSet's). */
export interface ScaleSourceAction {
  readonly kind: 'scaleSource';
  readonly region: string;
  readonly source: AdoptionSource;
  readonly from: number;
  readonly replicas: number;
}

/** A write of an adoption step: these, and raising the region's ReplicaSet (ScaleAction). */
export type AdoptionAction = VerifyFreezeAction | AdoptPodAction | ScaleSourceAction | ScaleAction;
