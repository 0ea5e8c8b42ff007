import type { RolloutControls } from './planner.js';
import { ABORTED_ANNOTATION, APPROVED_ANNOTATION, PAUSED_ANNOTATION, RESUMED_AT_ANNOTATION } from '../labels.js';

/**
 * Reads the controls `edctl` writes as annotations on the ExtendedDeployment. Abort and approval name the rollout
 * revision they were given for and count only while that rollout is current: an approval of an earlier rollout must
 * never let a new one skip its gates. Malformed values count as absent (the agent never fails on them).
 */
export function parseControls(annotations: Readonly<Record<string, string>> | undefined, rolloutRevision: string): RolloutControls {
  const a = annotations ?? {};
  return {
    paused: a[PAUSED_ANNOTATION] === 'true',
    aborted: a[ABORTED_ANNOTATION] !== undefined && a[ABORTED_ANNOTATION] === rolloutRevision,
    approvedThrough: parseApproval(a[APPROVED_ANNOTATION], rolloutRevision),
    resumedAt: parseTime(a[RESUMED_AT_ANNOTATION]),
  };
}

/** `<rolloutRevision>/<group>` → group, when the revision is the current one and the group a non-negative integer. */
export function parseApproval(value: string | undefined, rolloutRevision: string): number | undefined {
  if (value === undefined) return undefined;
  const slash = value.lastIndexOf('/');
  if (slash <= 0) return undefined;
  const revision = value.slice(0, slash);
  const group = value.slice(slash + 1);
  if (revision !== rolloutRevision || !/^\d+$/.test(group)) return undefined;
  return Number(group);
}

/** An RFC 3339 time → ms since the epoch; undefined when absent or not a time. */
export function parseTime(value: string | undefined): number | undefined {
  if (value === undefined || !/^\d{4}-\d{2}-\d{2}T/.test(value)) return undefined;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? undefined : ms;
}

/** The annotation value `edctl approve` writes to let group `group` of rollout `rolloutRevision` start. */
export function approvalValue(rolloutRevision: string, group: number): string {
  return `${rolloutRevision}/${group}`;
}
