import type { RolloutAction } from './actions.js';
import { decideGate } from './gates.js';
import { regionOrderOf } from './groups.js';
import { isPodActive } from './pod-activity.js';
import { gateActions } from './readiness-gate.js';
import type { RolloutInput, RolloutPlan } from './planner.js';
import type { DeploymentProgress, RegionCounts, RegionState } from './snapshot.js';
import { buildStatus, type Phase } from './status.js';

/**
 * A region whose Deployment finished: its generation observed, every pod updated and available, nothing extra. With
 * `doneBefore` (the status recorded the region's group done) a paused Deployment may lag one generation behind: the
 * agent's own pause bumped it, and no pod changes for a pause.
 */
function finished(region: RegionState, progress: DeploymentProgress, doneBefore = false): boolean {
  return (
    (progress.observedGeneration >= progress.generation || (doneBefore && progress.paused)) &&
    progress.updatedReplicas >= region.desired &&
    progress.replicas === region.desired &&
    progress.availableReplicas >= region.desired
  );
}

function counts(progress: DeploymentProgress | undefined): RegionCounts {
  const p = progress ?? { replicas: 0, updatedReplicas: 0, readyReplicas: 0, availableReplicas: 0 };
  return {
    current: p.replicas,
    updated: p.updatedReplicas,
    old: Math.max(0, p.replicas - p.updatedReplicas),
    ready: p.readyReplicas,
    available: p.availableReplicas,
    updatedAvailable: Math.min(p.updatedReplicas, p.availableReplicas),
    oldAvailable: Math.max(0, p.availableReplicas - p.updatedReplicas),
    terminating: 0,
  };
}

/**
 * Compat mode (subsetType Deployment): the native Deployment controller rolls inside a region; the agent owns
 * spec.replicas and spec.paused. Every regional Deployment stays paused (scaling still works) except those whose
 * turn it is, so a template synced from Git waits for its group. Groups are whole regions: one region at a time
 * (Sequential, the default here) or all at once (Parallel); gates, pause, abort and deadline are the same as for
 * ReplicaSets (gates.ts).
 */
export function planDeploymentRollout(input: RolloutInput): RolloutPlan {
  const { ed, regions, now } = input;
  const prev = input.status ?? {};
  const progressOf = (r: RegionState) => r.workload?.deployment;
  const regionCounts = new Map(regions.map((r) => [r.name, counts(progressOf(r))]));
  const sameRollout = prev.revision === input.rolloutRevision && prev.rolloutRegions !== undefined;
  const unsynced = regions.find((r) => !r.workload || !progressOf(r) || r.workload.templateRevision !== r.targetRevision);

  const result = (phase: Phase, group: number, groupStart: number | undefined, reason: string, message: string, rolloutRegions: readonly string[], totalGroups: number, actions: RolloutAction[]): RolloutPlan => {
    const { status, events } = buildStatus({
      ed,
      generation: input.generation,
      rolloutRevision: input.rolloutRevision,
      regions,
      counts: regionCounts,
      previous: input.status,
      rolloutRegions,
      totalGroups,
      phase,
      group,
      groupStart: groupStart === undefined ? undefined : new Date(groupStart).toISOString(),
      reason,
      message,
      now,
    });
    return { actions: [...gateActions(regions), ...actions], status, events };
  };

  // A new rollout's regions: those whose pods run another revision than the rendered one (true before and after the
  // sync), or whose Deployment reports pods not at its template once its controller has observed that template (until
  // then its status still describes the previous one, where every pod looks updated). They are recorded with the
  // rollout's revision, also while it waits for the sync, and never re-derived for that revision.
  const changes = (r: RegionState) => {
    const p = progressOf(r);
    return r.pods.some((pod) => isPodActive(pod) && pod.revision !== r.targetRevision) || (p !== undefined && p.observedGeneration >= p.generation && p.updatedReplicas < p.replicas);
  };
  const rolloutRegions = sameRollout ? (prev.rolloutRegions ?? []) : regions.filter(changes).map((r) => r.name);
  const ordered = regions.filter((r) => rolloutRegions.includes(r.name));
  const groups: RegionState[][] = regionOrderOf(ed.spec) === 'Sequential' ? ordered.map((r) => [r]) : ordered.length > 0 ? [ordered] : [];

  if (unsynced) {
    const message = `waiting for the sync: Deployment of region ${unsynced.name} is not at revision ${unsynced.targetRevision}`;
    const group = sameRollout ? (prev.currentGroup ?? 0) : 0;
    return result('Progressing', group, sameRollout && prev.lastGroupStartTime ? Date.parse(prev.lastGroupStartTime) : undefined, 'WaitingForSync', message, rolloutRegions, groups.length, []);
  }

  const groupOf = (name: string) => groups.findIndex((g) => g.some((r) => r.name === name)) + 1;
  const started = regions.filter((r) => rolloutRegions.includes(r.name) && progressOf(r)?.paused === false && (progressOf(r)?.updatedReplicas ?? 0) > 0);
  let group = groups.length === 0 ? 0 : Math.max(sameRollout ? (prev.currentGroup ?? 1) : 1, ...started.map((r) => groupOf(r.name)), 1);
  let groupStart = sameRollout && prev.lastGroupStartTime !== undefined && group === prev.currentGroup ? Date.parse(prev.lastGroupStartTime) : now;
  // A group the status records as held for approval was done, and so was every group of a rollout it records Healthy.
  // Judged without that, a pause the controller has not observed yet would make the group look unfinished and get its
  // region unpaused in the middle of the gate.
  const doneBefore = (g: number) => sameRollout && ((prev.currentGroup === g && prev.phase === 'WaitingForConfirmation') || prev.phase === 'Healthy');
  const groupDone = (g: number) => (groups[g - 1] ?? []).every((r) => finished(r, progressOf(r) as DeploymentProgress, doneBefore(g)));

  // A region group is available only once its native rollout is done: the barrier and settling are one here.
  const done = groupDone(group);
  const gate = decideGate({ strategy: ed.spec.strategy, rolloutRevision: input.rolloutRevision, controls: input.controls, now, group, totalGroups: groups.length, groupAvailable: done, groupDone: done, groupStart });
  if (gate.kind === 'advance') {
    group += 1;
    groupStart = now;
  }
  const rolling = gate.kind === 'advance' || gate.kind === 'continue' ? new Set((groups[group - 1] ?? []).map((r) => r.name)) : new Set<string>();
  const actions: RolloutAction[] = [];
  for (const region of regions) {
    const workload = region.workload;
    const progress = progressOf(region);
    if (!workload || !progress) continue;
    if (workload.replicas !== region.desired) actions.push({ kind: 'scale', region: region.name, workload: workload.name, from: workload.replicas, replicas: region.desired });
    const paused = !rolling.has(region.name);
    if (progress.paused !== paused) actions.push({ kind: 'setPaused', region: region.name, workload: workload.name, paused });
  }

  if (gate.kind === 'complete') {
    const allDone = regions.every((r) => finished(r, progressOf(r) as DeploymentProgress, doneBefore(groups.length)));
    return allDone
      ? result('Healthy', groups.length, undefined, 'RolloutComplete', 'every region runs its rendered revision', rolloutRegions, groups.length, actions)
      : result('Progressing', group, undefined, 'Scaling', 'regions are converging to their replica counts', rolloutRegions, groups.length, actions);
  }
  if (gate.kind === 'hold') return result(gate.phase, group, groupStart, gate.reason, gate.message, rolloutRegions, groups.length, actions);
  const names = [...rolling].join(', ');
  return result('Progressing', group, groupStart, 'GroupProgressing', `group ${group} of ${groups.length} in progress: ${names}`, rolloutRegions, groups.length, actions);
}
