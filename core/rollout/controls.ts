import type { RolloutControls } from './planner.js';
import { ABORTED_ANNOTATION, APPROVED_ANNOTATION, PAUSED_ANNOTATION, RESUMED_AT_ANNOTATION } from '../labels.js';

/**
 * The rollout a control names: `<rollout key>@<rolloutStartTime>` as `edctl` writes it, from the status of the rollout
 * under way. The start tells a rollout from an earlier one of the same key: a revert to a revision that was rolled out
 * (and approved, or aborted) before is a rollout of its own.
 */
export function controlTarget(status: { readonly revision?: string | undefined; readonly rolloutStartTime?: string | undefined }): string | undefined {
  if (!status.revision) return undefined;
  return status.rolloutStartTime ? `${status.revision}@${status.rolloutStartTime}` : status.revision;
}

/**
 * Reads the controls `edctl` writes as annotations on the ExtendedDeployment. Abort and approval name the rollout they
 * were given for (controlTarget) and count only while that rollout is current: an approval of an earlier rollout must
 * never let a new one skip its gates. `started` is the current rollout's start as its status records it (undefined
 * while no status records it yet); a value without a start (written by an earlier edctl) names the key alone.
 * Malformed values count as absent (the agent never fails on them).
 */
export function parseControls(annotations: Readonly<Record<string, string>> | undefined, rolloutKey: string, started?: string): RolloutControls {
  const a = annotations ?? {};
  const current = (value: string) => value === rolloutKey || (started !== undefined && value === `${rolloutKey}@${started}`);
  const aborted = a[ABORTED_ANNOTATION];
  return {
    paused: a[PAUSED_ANNOTATION] === 'true',
    aborted: aborted !== undefined && current(aborted),
    approvedThrough: parseApproval(a[APPROVED_ANNOTATION], current),
    resumedAt: parseTime(a[RESUMED_AT_ANNOTATION]),
  };
}

/** `<rollout>/<group>` → group, when `current` accepts the rollout and the group is a non-negative integer. */
export function parseApproval(value: string | undefined, current: (rollout: string) => boolean): number | undefined {
  if (value === undefined) return undefined;
  const slash = value.lastIndexOf('/');
  if (slash <= 0) return undefined;
  const rollout = value.slice(0, slash);
  const group = value.slice(slash + 1);
  if (!current(rollout) || !/^\d+$/.test(group)) return undefined;
  return Number(group);
}

/** An RFC 3339 time → ms since the epoch; undefined when absent or not a time. */
export function parseTime(value: string | undefined): number | undefined {
  if (value === undefined || !/^\d{4}-\d{2}-\d{2}T/.test(value)) return undefined;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? undefined : ms;
}

/** The annotation value `edctl approve` writes to let group `group` of rollout `rollout` (controlTarget) start. */
export function approvalValue(rollout: string, group: number): string {
  return `${rollout}/${group}`;
}

/**
 * The annotations `edctl resume` writes: the resume time, and the pause and abort cleared, each only if present. Cleared
 * means `paused: "false"` and `aborted: ""` (both read as absent), not removed: a field removed from an object Git
 * manages is what Argo CD's server-side diff can take for drift (see withGroupRecord in group-record.ts), and nothing but
 * Git removes one.
 */
export function resumeAnnotations(annotations: Readonly<Record<string, string>> | undefined, now: number): Record<string, string> {
  return {
    ...(annotations?.[PAUSED_ANNOTATION] !== undefined && { [PAUSED_ANNOTATION]: 'false' }),
    ...(annotations?.[ABORTED_ANNOTATION] !== undefined && { [ABORTED_ANNOTATION]: '' }),
    [RESUMED_AT_ANNOTATION]: new Date(now).toISOString(),
  };
}
