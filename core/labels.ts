import { API_GROUP } from './api/identity.js';

/** Label on every regional workload and pod: the ExtendedDeployment's name. */
export const NAME_LABEL = `${API_GROUP}/name`;
/** Label on every regional workload and pod: the region's name. */
export const REGION_LABEL = `${API_GROUP}/region`;
/** Pod template label: the revision of the regional template (see revision.ts). */
export const REVISION_LABEL = `${API_GROUP}/revision`;
/** Annotation on the rendered ExtendedDeployment: JSON map of region name to the revision it should reach. */
export const REVISIONS_ANNOTATION = `${API_GROUP}/revisions`;
/** Annotation on the rendered ExtendedDeployment: the rollout revision that approvals refer to. */
export const ROLLOUT_REVISION_ANNOTATION = `${API_GROUP}/rollout-revision`;
/** Annotation `edctl pause` sets on the ExtendedDeployment ("true"): hold the rollout until resumed. */
export const PAUSED_ANNOTATION = `${API_GROUP}/paused`;
/** Annotation `edctl abort` sets: the rollout revision to hold; it counts only while that rollout is current. */
export const ABORTED_ANNOTATION = `${API_GROUP}/aborted`;
/** Annotation `edctl approve` sets: `<rolloutRevision>/<group>`, groups up to that one may start. */
export const APPROVED_ANNOTATION = `${API_GROUP}/approved`;
/**
 * Annotation `edctl approve --release` sets on a fleet member waiting for an approval of its wave: the release
 * (spec.fleet.release) it approves; another release's approval does not count.
 */
export const APPROVED_RELEASE_ANNOTATION = `${API_GROUP}/approved-release`;
/** Annotation `edctl resume` sets: when (RFC 3339) the rollout was resumed; restarts the group's progress deadline. */
export const RESUMED_AT_ANNOTATION = `${API_GROUP}/resumed-at`;
/** Kubernetes' pod annotation: the ReplicaSet controller removes pods with a lower cost first. */
export const POD_DELETION_COST_ANNOTATION = 'controller.kubernetes.io/pod-deletion-cost';
/**
 * The deletion cost the agent gives the old-revision pods a rollout removes: the lowest there is (pod-deletion-cost is an
 * int32), so a scale-down removes them before any other Ready pod, standing marks included (removal-marks.ts).
 */
export const OLD_POD_DELETION_COST = '-2147483648';
/** The deletion cost the agent gives old-revision pods a partition keeps, so a scale-down removes them after any other. */
export const HELD_POD_DELETION_COST = '100';
/** Pod annotation the agent sets with its deletion cost: when (RFC 3339) it marked the pod. */
export const MARKED_AT_ANNOTATION = `${API_GROUP}/marked-at`;
/** Readiness gate and pod condition the agent flips around an in-place image swap. */
export const IN_PLACE_READINESS_GATE = 'InPlaceUpdateReady';
/** Argo CD's apply-order annotation. Flux ignores it. */
export const SYNC_WAVE_ANNOTATION = 'argocd.argoproj.io/sync-wave';

/**
 * Label on a keeper ReplicaSet ("true"): the agent-owned ReplicaSet that makes the old-revision pods a region's
 * partition keeps (core/rollout/keeper.ts). Git never renders one.
 */
export const KEEPER_LABEL = `${API_GROUP}/keeper`;

/** Labels the renderer owns in pod templates; overrides may not set them. */
export const RESERVED_LABELS: readonly string[] = [NAME_LABEL, REGION_LABEL, REVISION_LABEL];
/**
 * Annotation the agent writes on a regional ReplicaSet with each scale: the rollout's group and since when (JSON, see
 * core/rollout/group-record.ts).
 */
export const GROUP_RECORD_ANNOTATION = `${API_GROUP}/rollout-group`;
/** Pod annotation: where the pod's in-place image swap stands (JSON, see core/inplace/swap-state.ts). */
export const SWAP_STATE_ANNOTATION = `${API_GROUP}/inplace-update-state`;
/** Kubernetes' annotation for why an object changed (`kubectl rollout history` shows it): copied into each revision. */
export const CHANGE_CAUSE_ANNOTATION = 'kubernetes.io/change-cause';
/** Annotation on a ControllerRevision the agent records: when (RFC 3339) its rollout revision last became current. */
export const CURRENT_SINCE_ANNOTATION = `${API_GROUP}/current-since`;

/** On a pod a region adopted (core/adoption): the workload it came from, as Kind/name. */
export const ADOPTED_FROM_ANNOTATION = `${API_GROUP}/adopted-from`;
