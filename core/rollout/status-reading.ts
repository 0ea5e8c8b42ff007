import { DEFAULT_NAMESPACE } from '../api/common.js';
import { PROGRESSING_CONDITION, ProgressingReason, VALID_CONDITION, type Condition } from '../api/conditions.js';
import { deployRegionStatus } from '../api/deploy-region.js';
import { extendedDeploymentStatus, type ExtendedDeploymentStatus } from '../api/extended-deployment.js';
import type { DeployRegionObject, ExtendedDeploymentObject } from '../kube/objects.js';
import type { Phase } from './reasons.js';
import { progressingReason } from './status.js';

/**
 * What the status the agent writes means, read once: `edctl status` (every view) and `--until-done` read it here, and
 * the GitOps health checks compute the same in their own languages (gitops/argocd/*.lua for Argo CD, the CEL
 * expressions in examples/gitops/flux-kustomization.yaml for Flux); gitops/health.test.ts holds all three to one table.
 */

/**
 * Health in Argo CD's words. Flux says Current for Healthy, Failed for Degraded and InProgress for the others; it has no
 * Suspended. Unknown: a status this version cannot read (written by a newer agent, or by hand).
 */
export type Health = 'Healthy' | 'Progressing' | 'Suspended' | 'Degraded' | 'Unknown';

/** Where a rollout is held: waiting for an approval, paused, aborted, or past its progress deadline. */
export type Gate = 'WaitingForConfirmation' | 'Paused' | 'Aborted' | 'Degraded';

/** An ExtendedDeployment's status, read. */
export interface RolloutReading {
  readonly health: Health;
  /** The health's reason in one line, as Argo CD shows it: the Progressing message and the per-region overview. */
  readonly message: string;
  /** The status, parsed; empty when there is none or this version cannot read it. */
  readonly status: ExtendedDeploymentStatus;
  /** Whether the agent reported anything yet: a phase or a condition. */
  readonly reported: boolean;
  /** Whether the status describes the spec as it is now: the agent observed `metadata.generation`. */
  readonly observed: boolean;
  /** Valid=False: the agent cannot act on the spec, and says why. */
  readonly invalid: Condition | undefined;
  /** The Progressing condition: what the rollout does or waits for. */
  readonly progressing: Condition | undefined;
  /** Where the rollout is held, if it is. */
  readonly gate: Gate | undefined;
}

/** The gate a status is held at, if any. An abort is phase Paused with the Progressing reason Aborted. */
export function gateOf(status: ExtendedDeploymentStatus): Gate | undefined {
  if (progressingReason(status) === ProgressingReason.Aborted) return 'Aborted';
  return status.phase === 'WaitingForConfirmation' || status.phase === 'Paused' || status.phase === 'Degraded' ? status.phase : undefined;
}

/** The health of each phase, once the agent observed the spec and can act on it. */
const PHASE_HEALTH: Readonly<Record<Phase, Health>> = {
  Progressing: 'Progressing',
  Paused: 'Suspended',
  WaitingForConfirmation: 'Suspended',
  Healthy: 'Healthy',
  Degraded: 'Degraded',
};

/** The health and message of a status of the current generation with a valid spec: by phase. */
function phaseHealth(ed: ExtendedDeploymentObject, status: ExtendedDeploymentStatus, progressing: Condition | undefined): { health: Health; message: string } {
  const { phase } = status;
  if (phase === undefined) return { health: 'Progressing', message: 'Waiting for the agent to report a rollout phase' };
  const said = progressing?.message || phase;
  const message = status.overview === undefined ? said : `${said} (${status.overview})`;
  // Approving is what the rollout waits for: say how, where it is seen waiting.
  const approve =
    phase === 'WaitingForConfirmation' ? `; approve with: edctl approve ${ed.metadata?.name ?? ''} -n ${ed.metadata?.namespace ?? DEFAULT_NAMESPACE}` : '';
  // A failed analysis holds the rollout Paused, but it is no wait for a person to approve: the canary is bad, and Git
  // (or edctl resume, which runs it again) must act. Degraded, as Argo CD and Flux show it.
  const failed = phase === 'Paused' && progressing?.reason === ProgressingReason.AnalysisFailed;
  return { health: failed ? 'Degraded' : PHASE_HEALTH[phase], message: `${message}${approve}` };
}

/** What a status this version cannot read says. */
const unreadable = (issues: readonly { message: string }[]) => `The status is not one this version reads: ${issues[0]?.message ?? ''}`;

/** Reads an ExtendedDeployment's status (see {@link RolloutReading}). */
export function rolloutReading(ed: ExtendedDeploymentObject): RolloutReading {
  const parsed = extendedDeploymentStatus.safeParse(ed.status ?? {});
  const status = parsed.success ? parsed.data : {};
  const generation = ed.metadata?.generation ?? 0;
  const invalid = status.conditions?.find((c) => c.type === VALID_CONDITION && c.status === 'False');
  const progressing = status.conditions?.find((c) => c.type === PROGRESSING_CONDITION);
  const observed = status.observedGeneration !== undefined && status.observedGeneration >= generation;
  const facts = { status, reported: status.phase !== undefined || (status.conditions?.length ?? 0) > 0, observed, invalid, progressing, gate: gateOf(status) };
  if (ed.status === undefined || ed.status === null)
    return { ...facts, health: 'Progressing', message: 'Waiting for the extended-deployment agent to report status' };
  if (!parsed.success) return { ...facts, health: 'Unknown', message: unreadable(parsed.error.issues) };
  if (!observed) return { ...facts, health: 'Progressing', message: `Waiting for the agent to observe generation ${generation}` };
  if (invalid) return { ...facts, health: 'Degraded', message: `Invalid spec: ${invalid.message ?? ''}` };
  return { ...facts, ...phaseHealth(ed, status, progressing) };
}

/** A DeployRegion's status, read. */
export interface RegionReading {
  /**
   * Healthy whatever its nodes do, once the agent observed the region: DeployRegions sit in sync wave -1, and a Degraded
   * resource of an earlier wave fails every later sync, so the fix for an outage could not be delivered during it.
   * Node trouble goes into the message instead. Unknown: a status this version cannot read.
   */
  readonly health: Health;
  /** The phase and ready nodes in one line, and where to look when the region is not Healthy. */
  readonly message: string;
}

/** Reads a DeployRegion's status (see {@link RegionReading}). */
export function regionReading(region: DeployRegionObject): RegionReading {
  const parsed = deployRegionStatus.safeParse(region.status ?? {});
  if (!parsed.success) return { health: 'Unknown', message: unreadable(parsed.error.issues) };
  const status = parsed.data;
  // A region is usable before the agent reports on it: Progressing would hold its sync wave until then.
  if (status.phase === undefined) return { health: 'Healthy', message: 'No node health reported for this region yet' };
  const generation = region.metadata?.generation ?? 0;
  if (status.observedGeneration !== undefined && status.observedGeneration < generation) {
    return { health: 'Progressing', message: `Waiting for the agent to observe generation ${generation}` };
  }
  const nodes = status.nodes === undefined ? status.phase : `${status.phase}: ${status.readyNodes ?? 0} of ${status.nodes} nodes ready`;
  const trouble = status.phase === 'Healthy' ? '' : ` (shown as Healthy so that syncs go on; see kubectl describe deployregion ${region.metadata?.name ?? ''})`;
  return { health: 'Healthy', message: `${nodes}${trouble}` };
}
