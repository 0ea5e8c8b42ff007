import type { ExtendedDeploymentObject } from '../kube/objects.js';
import { controlTarget, parseControls } from './controls.js';
import { rolloutReading, type RolloutReading } from './status-reading.js';

/** What `edctl approve` or `edctl abort` acts on: a group of the current rollout, or why there is nothing to act on. */
export type ControlTarget =
  | {
      readonly ok: true;
      readonly revision: string;
      /** What the annotation names (controlTarget): the rollout and its start. */
      readonly rollout: string;
      readonly group: number;
      readonly phase: string | undefined;
    }
  | { readonly ok: false; readonly reason: string };

/** The rollout the agent last reported, or why there is none to act on. */
function current({ status }: RolloutReading): ControlTarget {
  const rollout = controlTarget(status);
  if (!status.revision || !rollout) return { ok: false, reason: 'no rollout yet (no status.revision): is the agent running?' };
  return { ok: true, revision: status.revision, rollout, group: status.currentGroup ?? 0, phase: status.phase };
}

/** A rollout that ended Healthy has no group left to approve or to stop. */
function finished(ed: ExtendedDeploymentObject, { observed }: RolloutReading, revision: string, what: string): ControlTarget {
  // A spec the agent has not seen yet starts a new rollout: the refusal says to wait for it.
  const behind = observed ? '' : `; the agent has not yet seen generation ${ed.metadata?.generation ?? 0}, try again once its rollout started`;
  return { ok: false, reason: `rollout ${revision} is finished (Healthy): nothing to ${what}${behind}` };
}

/**
 * The group `edctl approve` lets start: the one after the current group. Refused when the rollout finished, when the
 * current group is its last one, and when that group is approved already (by `edctl approve` or by
 * `strategy.approval` in Git).
 */
export function approveTarget(ed: ExtendedDeploymentObject): ControlTarget {
  const reading = rolloutReading(ed);
  const target = current(reading);
  if (!target.ok) return target;
  const { revision, rollout, group, phase } = target;
  if (phase === 'Healthy') return finished(ed, reading, revision, 'approve');
  const { totalGroups } = reading.status;
  const next = group + 1;
  if (totalGroups !== undefined && next > totalGroups) {
    return { ok: false, reason: `rollout ${revision} is in its last group (${group} of ${totalGroups}): there is no later group to approve` };
  }
  const byEdctl = parseControls(ed.metadata?.annotations, revision, reading.status.rolloutStartTime).approvedThrough ?? 0;
  const git = (ed.spec as { strategy?: { approval?: { revision?: unknown; throughGroup?: unknown } } } | undefined)?.strategy?.approval;
  const byGit = git?.revision === revision && typeof git.throughGroup === 'number' ? git.throughGroup : 0;
  if (Math.max(byEdctl, byGit) >= next) {
    return { ok: false, reason: `group ${next} of rollout ${revision} is approved already (${byEdctl >= next ? 'by edctl approve' : 'by strategy.approval'})` };
  }
  return { ok: true, revision, rollout, group: next, phase };
}

/** The rollout `edctl abort` stops. Refused when it finished or is aborted already. */
export function abortTarget(ed: ExtendedDeploymentObject): ControlTarget {
  const reading = rolloutReading(ed);
  const target = current(reading);
  if (!target.ok) return target;
  if (target.phase === 'Healthy') return finished(ed, reading, target.revision, 'abort');
  if (parseControls(ed.metadata?.annotations, target.revision, reading.status.rolloutStartTime).aborted) {
    return { ok: false, reason: `rollout ${target.revision} is aborted already (continue it with: edctl resume ${ed.metadata?.name ?? ''})` };
  }
  return target;
}

/**
 * The release `edctl approve` lets a fleet member's wave start when its gate waits only for that approval
 * (status.fleet.gate reason WaitingForApproval, core/fleet/gate.ts); undefined otherwise, when approve acts on groups.
 */
export function fleetApprovalTarget(ed: ExtendedDeploymentObject): { readonly release: string; readonly wave: number } | undefined {
  const spec = ed.spec as { fleet?: { release?: unknown; wave?: unknown } } | undefined;
  const status = ed.status as { fleet?: { gate?: { reason?: unknown } } } | undefined;
  const { release, wave } = spec?.fleet ?? {};
  if (status?.fleet?.gate?.reason !== 'WaitingForApproval' || typeof release !== 'string' || typeof wave !== 'number') return undefined;
  return { release, wave };
}
