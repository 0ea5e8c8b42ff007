import type { RolloutAction } from './actions.js';
import type { RegionSchedule } from './groups.js';
import { isPodActive } from './pod-activity.js';
import { Phases } from './reasons.js';
import { countWhere, type DeploymentProgress, type RegionCounts, type RegionState } from './snapshot.js';
import type { AdapterFactory, RegionMove } from './workload-adapter.js';

const progressOf = (region: RegionState): DeploymentProgress | undefined => region.workload?.deployment;

/**
 * A region whose Deployment finished: its generation observed, every pod updated and available, nothing extra. With
 * `doneBefore` (the status recorded the region's group done) a paused Deployment may lag one generation behind: the
 * agent's own pause bumped it, and no pod changes for a pause.
 */
function finished(region: RegionState, progress: DeploymentProgress, doneBefore: boolean): boolean {
  return (
    (progress.observedGeneration >= progress.generation || (doneBefore && progress.paused)) &&
    progress.updatedReplicas >= region.desired &&
    progress.replicas === region.desired &&
    progress.availableReplicas >= region.desired
  );
}

/** A region's counts from what its Deployment reports (the agent does not track a Deployment's pods one by one). */
function countsOf(progress: DeploymentProgress | undefined): RegionCounts {
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
 * A region of a new rollout: its pods run another revision than the rendered one (true before and after the sync), or
 * its Deployment reports pods not at its template once its controller has observed that template (until then its
 * status still describes the previous one, where every pod looks updated).
 */
function changes(region: RegionState): boolean {
  const p = progressOf(region);
  return (
    countWhere(region, (pod) => isPodActive(pod) && pod.revision !== region.targetRevision) > 0 ||
    (p !== undefined && p.observedGeneration >= p.generation && p.updatedReplicas < p.replicas)
  );
}

/** Whether the region rolls in global group `group`. */
const rollsIn = (scheduled: RegionSchedule, group: number): boolean =>
  scheduled.groups > 0 && group >= scheduled.firstGroup && group < scheduled.firstGroup + scheduled.groups;

/** The writes that bring a region's Deployment to its replica count and to `paused`. */
function drive(region: RegionState, paused: boolean): RolloutAction[] {
  const workload = region.workload;
  const progress = progressOf(region);
  if (!workload || !progress) return [];
  const actions: RolloutAction[] = [];
  if (workload.replicas !== region.desired)
    actions.push({ kind: 'scale', region: region.name, workload: workload.name, from: workload.replicas, replicas: region.desired });
  if (progress.paused !== paused) actions.push({ kind: 'setPaused', region: region.name, workload: workload.name, paused });
  return actions;
}

/**
 * Native Deployments (compat mode, subsetType Deployment): the Deployment controller rolls inside a region; the agent
 * owns spec.replicas and spec.paused. Every regional Deployment stays paused (scaling still works) except those whose
 * group runs, so a template synced from Git waits for its group. Groups are whole regions: one region at a time
 * (Sequential, the default here) or all at once (Parallel). A region's group is available only once its native
 * rollout is done: the barrier and settling are one here.
 */
export const deploymentAdapter: AdapterFactory = (_input, record) => {
  // A group the status records as held for approval was done, and so was every group of a rollout it records Healthy.
  // Judged without that, a pause the controller has not observed yet would make the group look unfinished and get its
  // region unpaused in the middle of the gate.
  const doneBefore = (group: number) =>
    record !== undefined && ((record.group === group && record.phase === Phases.WaitingForConfirmation) || record.phase === Phases.Healthy);
  const isFinished = (region: RegionState, group: number) => {
    const progress = progressOf(region);
    return progress !== undefined && finished(region, progress, doneBefore(group));
  };
  const settle = (region: RegionState, done: boolean): RegionMove => ({ actions: drive(region, true), available: done, done });

  return {
    counts: (region) => countsOf(progressOf(region)),
    syncWait: (region) =>
      !region.workload || !progressOf(region) || region.workload.templateRevision !== region.targetRevision
        ? `waiting for the sync: Deployment of region ${region.name} is not at revision ${region.targetRevision}`
        : undefined,
    joins: changes,
    groupsOf: () => 1,
    // The recorded group, or a later one whose Deployment already rolls (unpaused, with updated pods): the workloads
    // show that group started. Unlike pods of a ReplicaSet, a paused Deployment never moves on its own.
    currentGroup: (schedule) => {
      const started = schedule.regions.filter(
        (s) => s.groups > 0 && progressOf(s.region)?.paused === false && (progressOf(s.region)?.updatedReplicas ?? 0) > 0,
      );
      return Math.max(record?.group ?? 0, ...started.map((s) => s.firstGroup), 1);
    },
    step: (scheduled, group) => {
      // A region whose turn this is not is asked nothing now: it stays paused and holds no barrier.
      if (!rollsIn(scheduled, group)) return settle(scheduled.region, true);
      const done = isFinished(scheduled.region, group);
      return { actions: drive(scheduled.region, false), available: done, done };
    },
    hold: ({ region }) => drive(region, true),
    converge: (region, totalGroups) => settle(region, isFinished(region, totalGroups)),
    groupMembers: (schedule, group) =>
      schedule.regions
        .filter((s) => rollsIn(s, group))
        .map((s) => s.name)
        .join(', '),
  };
};
