import type { ExtendedDeploymentStatus } from '../api/extended-deployment.js';

/** Rollout phases, as `kubectl get ed` shows them. */
export type Phase = NonNullable<ExtendedDeploymentStatus['phase']>;

/**
 * Every phase by name. The API's enum spells them; this object lets the state machine (session.ts), the gates and
 * the status name them without a string of their own, and the `satisfies` clause breaks the build when the enum and
 * this list part.
 */
export const Phases = {
  Progressing: 'Progressing',
  Paused: 'Paused',
  WaitingForConfirmation: 'WaitingForConfirmation',
  Healthy: 'Healthy',
  Degraded: 'Degraded',
} as const satisfies { readonly [P in Phase]: P };

/**
 * Reasons of the Events that mark a rollout's transitions (status.ts). Events for a gate, a hold or the deadline carry
 * the reason of the Progressing condition instead (ProgressingReason, core/api/conditions.ts), so both read the same.
 */
export const RolloutEventReason = {
  RolloutStarted: 'RolloutStarted',
  /** A group started; its message names the groups that completed just before it. */
  GroupStarted: 'GroupStarted',
  /** The last group completed. */
  RolloutCompleted: 'RolloutCompleted',
  /** A Paused or Degraded rollout goes on. */
  Resumed: 'Resumed',
} as const;
