import * as z from 'zod';
import type { ExtendedDeploymentStatus } from '../api/extended-deployment.js';
import { parseJsonAnnotation } from '../kube/json-annotation.js';
import { workloadKindOf } from '../kube/workload-kinds.js';
import { isStandingMark, type RolloutAction } from './actions.js';
import type { RolloutInput, RolloutPlan } from './planner.js';

/**
 * The rollout's record of its group, as a regional ReplicaSet carries it (annotation GROUP_RECORD_ANNOTATION, JSON):
 * the status fields that say which group runs since when. The agent writes it with every scale of the ReplicaSet, in
 * the same write, so a group whose first write is a scale-down needs no status write before it: a leader that dies
 * between the scale-down and the status leaves the group and its start in the cluster all the same.
 */
export const groupRecord = z.object({
  /** status.revision: the rollout revision. */
  revision: z.string(),
  /** status.rolloutStartTime (RFC 3339): tells this rollout from an earlier one of the same revision (a rollback). */
  rolloutStart: z.string(),
  /** status.currentGroup. */
  group: z.number().int().min(1),
  /** status.lastGroupStartTime (RFC 3339). */
  groupStart: z.string(),
});

/** The rollout's record of its group on a regional ReplicaSet. */
export type GroupRecord = z.infer<typeof groupRecord>;

/** Reads the annotation; undefined when absent or unreadable (the status alone then records the group). */
export function parseGroupRecord(text: string | undefined): GroupRecord | undefined {
  return parseJsonAnnotation(groupRecord, text);
}

/** The annotation's value: the record, or empty outside a running group (`null`, see withGroupRecord). */
export function formatGroupRecord(record: GroupRecord | null): string {
  return record === null ? '' : JSON.stringify(record);
}

/** The record of the group a status describes; undefined when it records no running group (none yet, or complete). */
function recordIn(status: ExtendedDeploymentStatus): GroupRecord | undefined {
  const { revision, rolloutStartTime, currentGroup, lastGroupStartTime } = status;
  if (revision === undefined || rolloutStartTime === undefined || currentGroup === undefined || currentGroup < 1 || lastGroupStartTime === undefined) {
    return undefined;
  }
  return { revision, rolloutStart: rolloutStartTime, group: currentGroup, groupStart: lastGroupStartTime };
}

/**
 * The plan with the group its status records on each scale of a regional ReplicaSet (not of a keeper, whose record
 * nobody reads). Native Deployments and StatefulSets carry none: their groups are recorded in the status first.
 *
 * Outside a running group the record is `null`, written as an empty annotation, never left out of the apply: leaving
 * it out would remove the annotation (the agent's field manager alone owns it), and Argo CD's server-side diff takes a
 * field removed from an object Git manages for drift when its comparison holds the object from its cache before the
 * removal and dry-runs Git's manifest against the API server after it: it then syncs the ReplicaSet again (a
 * self-heal no commit caused). A changed or added annotation the diff leaves alone.
 */
export function withGroupRecord(plan: RolloutPlan, input: RolloutInput): RolloutPlan {
  if (workloadKindOf(input.ed.spec.subsetType) !== 'ReplicaSet') return plan;
  const record = recordIn(plan.status) ?? null;
  const regional = new Set(input.regions.flatMap((r) => (r.workload === undefined ? [] : [r.workload.name])));
  if (!plan.actions.some((a) => a.kind === 'scale' && regional.has(a.workload))) return plan;
  return { ...plan, actions: plan.actions.map((a) => (a.kind === 'scale' && regional.has(a.workload) ? { ...a, record } : a)) };
}

/**
 * The group a regional ReplicaSet records past the one the status records, for the same rollout (revision and
 * start): the agent scaled it down for that group and did not get to write the status (it died, or the write failed).
 * The highest such group; undefined when the status is as far as any workload.
 */
export function groupRecordedAhead(input: RolloutInput): GroupRecord | undefined {
  const status = input.status;
  if (status?.revision !== input.rolloutRevision || status.rolloutStartTime === undefined) return undefined;
  let ahead: GroupRecord | undefined;
  for (const region of input.regions) {
    const record = region.workload?.groupRecord;
    if (record === undefined || record.revision !== status.revision || record.rolloutStart !== status.rolloutStartTime) continue;
    if (record.group > (ahead?.group ?? status.currentGroup ?? 0)) ahead = record;
  }
  return ahead;
}

/** A scale-down that records the plan's group (withGroupRecord gives every such scale the plan's own). */
const isRecordedScaleDown = (a: RolloutAction) => a.kind === 'scale' && a.record !== undefined && a.record !== null && a.replicas < a.from;

/**
 * Whether the plan starts its group on the workloads alone: its writes are scale-downs of regional ReplicaSets that
 * record the group (and readiness gates, which follow the pods alone, and standing marks, which no step waits for), so
 * the status can follow them. A scale-down adds no pod, so no pod runs ahead of the group the status records
 * meanwhile. Not with traffic shifting, whose analysis is kept per group in the status.
 */
export function startsGroupOnWorkloads(plan: RolloutPlan, input: RolloutInput): boolean {
  if (input.ed.spec.strategy.traffic !== undefined) return false;
  const alongside = (a: RolloutAction) => a.kind === 'openGate' || a.kind === 'closeGate' || isStandingMark(a);
  return plan.actions.some(isRecordedScaleDown) && plan.actions.every((a) => isRecordedScaleDown(a) || alongside(a));
}
