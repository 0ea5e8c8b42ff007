import type { SwapState } from '../inplace/swap-state.js';
import type { PodTemplate } from '../kube/objects.js';
import type { AdoptPodAction, ScaleSourceAction, VerifyFreezeAction } from '../adoption/actions.js';
import type { TrafficWrite } from '../traffic/plan.js';
import type { GroupRecord } from './group-record.js';

/** Set a regional workload's spec.replicas (server-side apply under the agent's field manager). */
export interface ScaleAction {
  readonly kind: 'scale';
  readonly region: string;
  readonly workload: string;
  readonly from: number;
  readonly replicas: number;
  /**
   * The rollout's group, recorded on a regional ReplicaSet in the same write (group-record.ts): a group this scale-down
   * starts is then in the cluster before the status says so. `null` on a regional ReplicaSet outside a running group
   * (the annotation written empty, never removed: withGroupRecord says why); absent for other workloads.
   */
  readonly record?: GroupRecord | null;
}

/**
 * Mark a pod for removal (pod-deletion-cost): an old-revision pod, so the ReplicaSet removes it first; or, standing, a
 * pod at the rendered revision, for the next rollout.
 */
export interface MarkPodAction {
  readonly kind: 'markOld';
  readonly region: string;
  readonly pod: string;
  readonly uid: string;
  /** When the mark is made (RFC 3339), recorded on the pod: a scale-down relies on the mark only once it has settled. */
  readonly at: string;
  /** The pod-deletion-cost it sets, negative: the lowest for an old pod the rollout removes (removal-marks.ts). */
  readonly cost: number;
  /**
   * A standing mark (StepOptions.standingMarks): made on a pod at the rendered revision for the next rollout, so nothing
   * in this rollout waits for it, and it may go out after the actions planned with it.
   */
  readonly standing?: true;
}

/** Whether the action is a standing mark, which no step of the rollout waits for (MarkPodAction.standing). */
export const isStandingMark = (action: RolloutAction): action is MarkPodAction => action.kind === 'markOld' && action.standing === true;

/**
 * Mark an old-revision pod its region's partition keeps, so a scale-down removes it after any other pod
 * (pod-deletion-cost); it replaces a mark for removal.
 */
export interface HoldPodAction {
  readonly kind: 'holdOld';
  readonly region: string;
  readonly pod: string;
  readonly uid: string;
  /** When the mark is made (RFC 3339): new pods leave around it only once it has settled. */
  readonly at: string;
}

/** Clear the agent's mark (either) from a pod: at the target revision again (a rollback), or no longer kept by a partition. */
export interface UnmarkPodAction {
  readonly kind: 'unmark';
  readonly region: string;
  readonly pod: string;
  readonly uid: string;
}

/** Delete an old-revision pod; its ReplicaSet replaces it at the new revision (scaleSimultaneously). */
export interface DeletePodAction {
  readonly kind: 'deletePod';
  readonly region: string;
  readonly pod: string;
  readonly uid: string;
}

/**
 * Set a regional StatefulSet's rolling-update partition (server-side apply under the agent's field manager): its pods
 * of this ordinal and above run the template, the ones below stay at the revision they run.
 */
export interface PartitionAction {
  readonly kind: 'setPartition';
  readonly region: string;
  readonly workload: string;
  readonly from: number;
  readonly partition: number;
}

/** Pause or resume a native Deployment (compat mode): it rolls inside its region only while unpaused. */
export interface PauseAction {
  readonly kind: 'setPaused';
  readonly region: string;
  readonly workload: string;
  readonly paused: boolean;
}

/**
 * Set a gated pod's InPlaceUpdateReady condition: True (openGate), or the pod never becomes Ready; False (closeGate)
 * while it is swapped in place, which takes it out of Service endpoints.
 */
export interface GateAction {
  readonly kind: 'openGate' | 'closeGate';
  readonly region: string;
  readonly pod: string;
  readonly uid: string;
}

/**
 * One step of an in-place swap, each a write guarded by the pod's resourceVersion: begin (state draining, gate
 * False), images (patch images and revision label, state swapping), done (state done; the gate then opens).
 */
export interface SwapAction {
  readonly kind: 'swapBegin' | 'swapImages' | 'swapDone';
  readonly region: string;
  readonly pod: string;
  readonly uid: string;
  readonly resourceVersion: string;
  /** The pod's state annotation after this step. */
  readonly state: SwapState;
  /** swapImages: image per container name; and the revision label to set. */
  readonly images?: Readonly<Record<string, string>>;
  readonly revision?: string;
}

/**
 * Create a region's keeper (keeper.ts): a create, never an apply, so it never takes over an object someone else wrote
 * by that name (AlreadyExists is left alone; observe only ever takes a keeper the ExtendedDeployment controls). It is
 * scaled like the regional workloads afterwards (ScaleAction).
 */
export interface CreateKeeperAction {
  readonly kind: 'createKeeper';
  readonly region: string;
  /** The keeper's name. */
  readonly workload: string;
  readonly replicas: number;
  /** The revision it keeps: its template's revision label, also in its selector. */
  readonly revision: string;
  /** The template the region ran at that revision, from the ExtendedDeployment's history. */
  readonly template: PodTemplate;
  /** The ExtendedDeployment that controls it (ownerReference): deleting it deletes the keeper. */
  readonly owner: { readonly name: string; readonly uid: string };
}

/** Delete a keeper that keeps nothing any more (no replicas, no pods), guarded by its uid. */
export interface DropKeeperAction {
  readonly kind: 'dropKeeper';
  readonly region: string;
  readonly workload: string;
  readonly uid: string;
}

/**
 * A traffic write of mode Weighted (core/traffic/plan.ts): apply a revision Service or the route `<ed>` (server-side
 * apply, the agent's field manager, the whole object: it is the agent's alone), or delete one the agent made.
 */
export interface TrafficAction {
  readonly kind: 'traffic';
  readonly write: TrafficWrite;
}

/** A write the agent performs. Every action is idempotent: performing it twice has the effect of once. */
export type RolloutAction =
  | ScaleAction
  | MarkPodAction
  | HoldPodAction
  | UnmarkPodAction
  | DeletePodAction
  | PauseAction
  | PartitionAction
  | GateAction
  | SwapAction
  | CreateKeeperAction
  | DropKeeperAction
  | VerifyFreezeAction
  | AdoptPodAction
  | ScaleSourceAction
  | TrafficAction;
