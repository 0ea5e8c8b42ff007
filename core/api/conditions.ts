import type * as z from 'zod';
import type { condition } from './common.js';

/**
 * The conditions this API writes into status: their shape, types and reasons, spelled once. The agent writes them
 * (through core/kube/conditions.ts), and the CLI and the GitOps health checks read them (core/rollout/status-reading.ts,
 * gitops/argocd/*.lua, the Flux expressions in examples/gitops/), so a reason renamed here is renamed for every reader.
 */

/** A condition in the shape every Kubernetes API uses. */
export type Condition = z.output<typeof condition>;

/** ExtendedDeployment: True while a rollout is under way (phase Progressing, Paused or WaitingForConfirmation). */
export const PROGRESSING_CONDITION = 'Progressing';
/** ExtendedDeployment: True when every desired pod is available. */
export const AVAILABLE_CONDITION = 'Available';
/** ExtendedDeployment: False when the agent cannot act on the spec. */
export const VALID_CONDITION = 'Valid';
/** ExtendedDeployment: False when the API server forbids one of the agent's writes (RBAC). */
export const AUTHORIZED_CONDITION = 'Authorized';
/** ExtendedDeployment: whether replicas run away from their region, and why not when they cannot. */
export const MOVES_CONDITION = 'Moves';
/** DeployRegion: whether nodes of the region also match other regions. */
export const OVERLAP_CONDITION = 'NodesOverlap';

/** Reasons of the Progressing condition: what the rollout does, or what it waits for. */
export const ProgressingReason = {
  WaitingForSync: 'WaitingForSync',
  /** A region takes over the pods of another workload (core/adoption); the rollout starts afterwards. */
  Adopting: 'Adopting',
  /**
   * A fleet member's rollout toward a new release waits for the clusters of earlier waves (core/fleet/gate.ts): Healthy
   * at the release for the soak, and an approval where the wave needs one. Its count changes apply meanwhile.
   */
  WaitingForFleet: 'WaitingForFleet',
  Scaling: 'Scaling',
  GroupProgressing: 'GroupProgressing',
  RolloutComplete: 'RolloutComplete',
  Paused: 'Paused',
  /** Phase Paused by `edctl abort`: told apart from a pause only by this reason. */
  Aborted: 'Aborted',
  WaitingForConfirmation: 'WaitingForConfirmation',
  ProgressDeadlineExceeded: 'ProgressDeadlineExceeded',
  /** Mode Weighted: the group's weight step is written but not yet accepted by every parent Gateway (core/traffic/look.ts). */
  TrafficShifting: 'TrafficShifting',
  /** The analysis of the group barrier samples Prometheus (or waits for data) before the next group starts. */
  Analyzing: 'Analyzing',
  /** Phase Paused: the analysis of a group barrier failed (with onFailure ShiftBack the canary is at weight 0). */
  AnalysisFailed: 'AnalysisFailed',
  /** Phase Paused: the analysis could not decide (errors, or no data past its limit). */
  AnalysisInconclusive: 'AnalysisInconclusive',
} as const;
/** A reason of the Progressing condition. */
export type ProgressingReason = (typeof ProgressingReason)[keyof typeof ProgressingReason];

/** Reasons of the Available condition (Deployment's words). */
export const AvailableReason = {
  MinimumReplicasAvailable: 'MinimumReplicasAvailable',
  MinimumReplicasUnavailable: 'MinimumReplicasUnavailable',
} as const;

/** The reason of Valid=False. */
export const INVALID_SPEC_REASON = 'InvalidSpec';
/** The reason of Authorized=False. */
export const FORBIDDEN_REASON = 'Forbidden';

/** Reasons of the Moves condition; replicas away for a shortage or a fault carry the move's own reason. */
export const MovesReason = {
  NoMoves: 'NoMoves',
  Shortage: 'Shortage',
  Fault: 'Fault',
  /** Every replica moved away is on its way back. */
  Returning: 'Returning',
  /** Replicas should move but no region has room: the moves are blocked. */
  NoRoom: 'NoRoom',
  /** Every region looks failed: nothing moves, and the moves are blocked. */
  AllRegionsFailed: 'AllRegionsFailed',
} as const;
/** A reason of the Moves condition. */
export type MovesReason = (typeof MovesReason)[keyof typeof MovesReason];

/** Reasons of the NodesOverlap condition. */
export const OverlapReason = {
  NodeInSeveralRegions: 'NodeInSeveralRegions',
  NoOverlap: 'NoOverlap',
} as const;
