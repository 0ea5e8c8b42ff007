import type { RolloutAction } from './actions.js';
import { regionGroups, shownGroup, targetAtGroup } from './groups.js';
import { isPodActive } from './pod-activity.js';
import { groupProgress } from './region-step.js';
import { regionSyncWait } from './replicaset-adapter.js';
import { countPods, type RegionCounts, type RegionState } from './snapshot.js';
import type { AdapterFactory, RegionMove } from './workload-adapter.js';

/**
 * Whether a region's StatefulSet has nothing to roll: every pod it runs is at the rendered revision and its controller,
 * having observed its template, says so (current and update revision equal). Only then may its partition cover every
 * pod: the pods a raise adds are made from the current revision below the partition, which is the rendered one only
 * then.
 */
function atRest(region: RegionState, counts: RegionCounts): boolean {
  const sts = region.workload?.statefulSet;
  return (
    sts !== undefined &&
    counts.old === 0 &&
    sts.observedGeneration >= sts.generation &&
    sts.currentRevision !== undefined &&
    sts.currentRevision === sts.updateRevision
  );
}

/**
 * The pods a region's StatefulSet should run when `wantNew` of them are to be new. A region with old pods runs its count
 * (pods are replaced, and a raise is capacity, served at once, at the revision the partition gives each new ordinal).
 * A region without old pods is being created, or grows, by groups: it runs the new pods its group asks for, never fewer
 * than it runs (pods of its template are not removed to go back) and never more than its count.
 */
function replicasFor(region: RegionState, counts: RegionCounts, wantNew: number): number {
  if (counts.old > 0) return region.desired;
  return Math.min(region.desired, Math.max(wantNew, region.workload?.replicas ?? 0));
}

/**
 * The partition that leaves the region `wantNew` pods at the rendered revision once the controller has rolled: the
 * controller makes every ordinal at or above it from the template and leaves those below as they are, so with `P` the
 * region ends with its rendered pods below `P` plus `replicas − P`. The lowest `P` that does not go beyond `wantNew`:
 * `replicas − wantNew` in a rollout that starts from old pods only, higher where rendered pods already run below it (a
 * Git revert finds the pods it returns to at the lowest ordinals, and replaces the others group by group).
 */
function partitionFor(region: RegionState, replicas: number, wantNew: number): number {
  const prefix = `${region.workload?.name ?? ''}-`;
  const rendered = new Set(
    region.pods
      .filter((p) => isPodActive(p) && p.revision === region.targetRevision && p.name.startsWith(prefix))
      .map((p) => Number(p.name.slice(prefix.length))),
  );
  let below = 0;
  for (let partition = 0; partition < replicas; partition++) {
    if (below + replicas - partition <= wantNew) return partition;
    if (rendered.has(partition)) below++;
  }
  return replicas;
}

/**
 * The writes that bring a region's StatefulSet to `replicas` with `partition`. The partition goes first when the count
 * grows (pods the raise adds below it are made from the current revision, not ahead of the group), the count first when
 * it shrinks (the pods it removes are not updated first).
 */
function drive(region: RegionState, replicas: number, partition: number): RolloutAction[] {
  const workload = region.workload;
  const sts = workload?.statefulSet;
  if (!workload || !sts) return [];
  const scale: RolloutAction[] =
    workload.replicas === replicas ? [] : [{ kind: 'scale', region: region.name, workload: workload.name, from: workload.replicas, replicas }];
  const part: RolloutAction[] =
    sts.partition === partition ? [] : [{ kind: 'setPartition', region: region.name, workload: workload.name, from: sts.partition, partition }];
  return replicas >= workload.replicas ? [...part, ...scale] : [...scale, ...part];
}

/**
 * Regional StatefulSets (subsetType StatefulSet). The StatefulSet controller replaces pods, one at a time from the
 * highest ordinal down, and only those at or above the rolling update's partition; the agent owns spec.replicas and
 * that partition. A group of `n` new pods is the partition that leaves `n` (partitionFor: `replicas − n` from old pods
 * only): groups are partition steps, with the same sizes, barrier and gates as pod batches of ReplicaSets (groups.ts,
 * gates.ts). Between rollouts the partition covers every pod, so a template Git syncs changes no pod before its first
 * group starts; so does a hold with no pod in flight (a gate). A template Git syncs while a group runs is rolled by the
 * controller over the pods above the partition at once: no write of the agent can come between Git's and the
 * controller's. Counts follow Git and moves at once, as for ReplicaSets; a StatefulSet scales down from its highest
 * ordinals, the pods a rollout updates first.
 */
export const statefulSetAdapter: AdapterFactory = (input, record) => {
  const { strategy } = input.ed.spec;
  const { minReadySeconds } = strategy;
  const { now } = input;
  const counts = (region: RegionState) => countPods(region, minReadySeconds, now);

  /** Moves a region toward `wantNew` pods at the rendered revision. */
  const move = (region: RegionState, wantNew: number): RegionMove => {
    const c = counts(region);
    const replicas = replicasFor(region, c, wantNew);
    const partition = atRest(region, c) ? replicas : partitionFor(region, replicas, wantNew);
    const progress = groupProgress(c, wantNew, region.desired);
    const settled = c.current === replicas && c.terminating === 0;
    return { actions: drive(region, replicas, partition), available: progress.available, done: progress.done && settled };
  };

  return {
    counts,
    syncWait: (region) => regionSyncWait(region) ?? (region.workload?.statefulSet ? undefined : `waiting for the StatefulSet of region ${region.name}`),
    joins: (region) => counts(region).old > 0,
    groupsOf: (region) => regionGroups(strategy, region.desired),
    // As for ReplicaSets (replicaset-adapter.ts): the recorded group holds; the pods decide only where none is recorded.
    currentGroup: (schedule) =>
      record?.group !== undefined && record.group >= 1
        ? record.group
        : Math.max(
            shownGroup(strategy, schedule, ({ region }) => counts(region)),
            1,
          ),
    step: (scheduled, group) => move(scheduled.region, targetAtGroup(strategy, scheduled, group)),
    // A region being created keeps the pods it has; one with old pods follows its count. With no pod in flight (every
    // pod there, none terminating: a gate, a finished group) the partition covers every pod, as between rollouts, so a
    // template Git syncs meanwhile (a revert, the next release) waits for the agent's next group. With a pod in flight
    // it never goes lower (the controller finishes that pod and goes no further), and higher where it would take the
    // region past the group (a partition a previous rollout left).
    hold: (scheduled, group) => {
      const { region } = scheduled;
      const sts = region.workload?.statefulSet;
      if (!sts) return [];
      const c = counts(region);
      const replicas = replicasFor(region, c, c.updated);
      const inFlight = c.current < replicas || c.terminating > 0;
      const partition =
        atRest(region, c) || !inFlight ? replicas : Math.max(sts.partition, partitionFor(region, replicas, targetAtGroup(strategy, scheduled, group)));
      return drive(region, replicas, partition);
    },
    converge: (region) => move(region, region.desired),
    groupMembers: () => undefined,
  };
};
