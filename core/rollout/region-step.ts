import type { RolloutAction } from './actions.js';
import type { Budgets } from './budgets.js';
import { countPods, isAvailable, type PodState, type RegionCounts, type RegionState } from './snapshot.js';

/** What one region does now toward its group target. */
export interface RegionStep {
  readonly counts: RegionCounts;
  readonly actions: readonly RolloutAction[];
  /** The region has at least `wantNew` available new pods and at most desired − wantNew old ones. */
  readonly done: boolean;
  /** Why the region cannot act, when it cannot. */
  readonly blocked?: string;
}

/**
 * Replica math for one region. Moves the region toward `wantNew` new-revision pods and `desired − wantNew` old ones
 * within the budgets: at most desired + maxSurge pods (terminating ones included) and at least
 * desired − maxUnavailable available. Old pods leave first because they are marked (pod-deletion-cost); a scale
 * down waits until every new pod is bound, running and Ready, so the ReplicaSet can never pick a new one. Targets
 * are absolute, so repeating a step on a stale view writes the same value again.
 */
export function stepRegion(region: RegionState, wantNewRaw: number, budgets: Budgets, minReadySeconds: number, now: number): RegionStep {
  const counts = countPods(region, minReadySeconds, now);
  const desired = region.desired;
  const wantNew = Math.min(wantNewRaw, desired);
  const wantOld = desired - wantNew;
  const done = counts.updatedAvailable >= wantNew && counts.old <= wantOld;
  const workload = region.workload;
  if (!workload) return { counts, actions: [], done: false, blocked: `workload of region ${region.name} does not exist yet` };
  if (workload.templateRevision !== region.targetRevision) {
    return { counts, actions: [], done: false, blocked: `workload ${workload.name} is not at revision ${region.targetRevision} yet (waiting for the sync)` };
  }

  const active = region.pods.filter((p) => !p.terminating);
  const isNew = (p: PodState) => p.revision === region.targetRevision;
  const actions: RolloutAction[] = [];
  for (const pod of active) {
    if (!isNew(pod) && !pod.markedOld) actions.push({ kind: 'markOld', region: region.name, pod: pod.name, uid: pod.uid });
    if (isNew(pod) && pod.markedOld) actions.push({ kind: 'unmark', region: region.name, pod: pod.name, uid: pod.uid });
  }

  const oldExcess = Math.max(0, counts.old - wantOld);
  const oldUnavailable = counts.old - counts.oldAvailable;
  const availableToLose = Math.max(0, counts.available - (desired - budgets.maxUnavailable));
  const removable = Math.min(oldExcess, oldUnavailable + availableToLose);
  const room = Math.max(0, desired + budgets.maxSurge - (counts.current + counts.terminating));
  const creatable = Math.min(Math.max(0, wantNew - counts.updated), room);

  let replicas: number;
  if (budgets.replaceDirectly) {
    const replace = Math.min(removable, room, Math.max(0, wantNew - counts.updated));
    const victims = active
      .filter((p) => !isNew(p))
      .sort((a, b) => Number(isAvailable(a, minReadySeconds, now)) - Number(isAvailable(b, minReadySeconds, now)) || (a.name < b.name ? -1 : 1))
      .slice(0, replace);
    for (const pod of victims) actions.push({ kind: 'deletePod', region: region.name, pod: pod.name, uid: pod.uid });
    replicas = desired;
  } else if (removable > 0) replicas = counts.current - removable;
  else if (creatable > 0) replicas = counts.current + creatable;
  else replicas = counts.current - (counts.old <= wantOld ? Math.max(0, counts.updated - wantNew) : 0);

  if (replicas < workload.replicas && counts.old > 0) {
    const newPods = active.filter(isNew);
    const unsafe = newPods.find((p) => !p.assigned || !p.running || !p.ready);
    if (unsafe) return { counts, actions, done, blocked: `new pod ${unsafe.name} is not Ready yet; old pods are removed only when every new pod is` };
    const unmarked = active.find((p) => !isNew(p) && !p.markedOld);
    if (unmarked) return { counts, actions, done, blocked: `old pod ${unmarked.name} is not marked for removal yet` };
  }
  if (replicas !== workload.replicas) actions.push({ kind: 'scale', region: region.name, workload: workload.name, from: workload.replicas, replicas });
  return { counts, actions, done };
}
