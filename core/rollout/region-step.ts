import { byName } from '../by-name.js';
import type { RolloutAction } from './actions.js';
import type { Budgets } from './budgets.js';
import { keptOld } from './partition.js';
import { isPodActive } from './pod-activity.js';
import { OLD_MARK_COST, standingMarkCost } from './removal-marks.js';
import { countPods, countWhere, isAvailable, markCostOf, markCosts, type PodState, type RegionCounts, type RegionState } from './snapshot.js';

/** What one region does now toward its group target. */
export interface RegionStep {
  readonly counts: RegionCounts;
  readonly actions: readonly RolloutAction[];
  /**
   * The region's group is available: at least `wantNew` new pods are available. This is the barrier the next group
   * waits for; the old pods this group replaces may still be leaving (the next group's first step removes them).
   */
  readonly available: boolean;
  /** Available, and at most desired − wantNew old pods are left: the region has settled on its group. */
  readonly done: boolean;
  /** Why the region cannot act, when it cannot. */
  readonly blocked?: string;
}

/** Whether a region with `counts` has its group of `wantNew` new pods (at most `desired`) available, and settled. */
export function groupProgress(counts: RegionCounts, wantNew: number, desired: number): { available: boolean; done: boolean } {
  const target = Math.min(wantNew, desired);
  const available = counts.updatedAvailable >= target;
  return { available, done: available && counts.old <= desired - target };
}

/**
 * Pods the region's ReplicaSet is creating at the rendered revision: its spec.replicas above the active pods, while its
 * template is the rendered one (what it creates is new).
 */
export function creatingNew(region: RegionState, counts: RegionCounts): number {
  const workload = region.workload;
  return workload?.templateRevision === region.targetRevision ? Math.max(0, workload.replicas - counts.current) : 0;
}

/**
 * How long a mark must have been on a pod before a scale-down relies on it. The ReplicaSet controller picks the pods to
 * remove from its own cache: a mark it has not seen yet protects no new pod, and nothing the controller reports shows
 * which pod annotations it has seen. So this bounds how far its watch of pods may lag behind the agent's write.
 */
export const MARK_SETTLE_MS = 2_000;

/** Whether a pod's mark (either) has been there long enough for the ReplicaSet controller to have seen it. */
const markSettled = (p: PodState, now: number) => p.markedAt === undefined || now - p.markedAt >= MARK_SETTLE_MS;

/**
 * The old pods a partition keeps (`kept` of them) get the hold mark; holds beyond that are released. Pods held already
 * stay held; more are taken among the unmarked first, available before not, by name, so the choice is stable; a pod
 * marked for removal is taken only when no other is left (the partition grew).
 */
function keptPods(region: RegionState, oldPods: readonly PodState[], kept: number): { hold: PodState[]; release: PodState[] } {
  const heldNow = countWhere(region, (p) => isPodActive(p) && p.revision !== region.targetRevision && p.held === true);
  const release = oldPods
    .filter((p) => p.held)
    .sort((a, b) => Number(leavesFirst(b)) - Number(leavesFirst(a)) || byName(b, a))
    .slice(0, Math.max(0, heldNow - kept));
  const hold = oldPods
    .filter((p) => !p.held)
    .sort((a, b) => Number(a.markedOld) - Number(b.markedOld) || Number(leavesFirst(a)) - Number(leavesFirst(b)) || byName(a, b))
    .slice(0, Math.max(0, kept - heldNow));
  return { hold, release };
}

/** The ReplicaSet controller removes pods that are not bound, not running or not Ready before any that are. */
const leavesFirst = (p: PodState) => !p.assigned || !p.running || !p.ready;

/**
 * The order in which old pods are marked for removal: those the ReplicaSet controller removes first anyway, then by
 * name, so the choice is stable from one look to the next.
 */
const markOrder = (a: PodState, b: PodState) => Number(leavesFirst(b)) - Number(leavesFirst(a)) || byName(a, b);

/** How a region steps, besides its target and budgets. */
export interface StepOptions {
  /** The next group's target: its old pods are marked now too (see stepRegion). */
  readonly nextWantNew?: number | undefined;
  /**
   * Every pod at the region's rendered revision carries a mark for removal (standing marks), one above every old pod's
   * (removal-marks.ts), made as soon as the pod is seen. A pod a later template creates comes without it, so that
   * rollout's first scale-down finds the old pods marked long ago instead of waiting MARK_SETTLE_MS for marks made as it
   * starts. Off where pods are swapped in place: a swapped pod keeps its annotations, and its mark would be cleared and
   * made again in every rollout. These marks are `standing` (MarkPodAction): nothing in the rollout waits for them.
   */
  readonly standingMarks?: boolean;
}

/**
 * Replica math for one region. Moves the region toward `wantNew` new-revision pods and `desired − wantNew` old ones
 * within the budgets: at most desired + maxSurge pods (terminating ones included; terminal ones, Failed or Succeeded,
 * are not: they hold nothing, and the ReplicaSet controller replaces them) and at least
 * desired − maxUnavailable available. Old pods leave first because they are marked (pod-deletion-cost); a scale
 * down waits until every new pod is bound, running and Ready and no new pod carries a mark as low as an old pod's,
 * and until as many old pods as leave are marked (for MARK_SETTLE_MS) or not Ready, so the ReplicaSet can never pick
 * a new one. Targets are absolute, so repeating a step on a stale view writes the same value again.
 *
 * Where old pods leave only after their replacements are available (maxUnavailable 0), each group marks the old pods
 * it removes and those the next group removes (`nextWantNew`, its target), when it starts: the old pods a group
 * replaces leave in the next group's first step, so their marks have had the whole of the previous group and this one
 * to settle (marks made only when their own group started kept a scale-down waiting whenever a group took less than
 * MARK_SETTLE_MS: pods Ready within a second), and a rollout's first moments, when Git syncs many objects at once,
 * still carry a write per pod of two groups rather than one per old pod. Where old pods may leave at once, every old
 * pod is marked at the rollout's start, so that each later group finds its marks settled. With standing marks
 * (StepOptions) every old pod was marked by the rollout before, and the first scale-down need not wait: these rules
 * then mark only pods that came without it (the agent was not running, a pod was replaced meanwhile).
 *
 * The old pods a partition keeps (partition.ts) are never marked for removal: they carry the hold mark, the highest
 * deletion cost, and new pods above the region's share leave around them only once every kept pod's mark has settled.
 */
export function stepRegion(
  region: RegionState,
  wantNewRaw: number,
  budgets: Budgets,
  minReadySeconds: number,
  now: number,
  options: StepOptions = {},
): RegionStep {
  const { nextWantNew } = options;
  const counts = countPods(region, minReadySeconds, now);
  const desired = region.desired;
  // The group's target is the least new pods it needs. More (up to desired) stay: the ReplicaSet controller replaces an
  // evicted or deleted old pod at the template's revision, and scaled back to the target it would remove a new pod
  // (unmarked, the most recently Ready goes first) for a later group to create again. The old pods make room instead.
  // Pods it is creating count too: a ReplicaSet Git has just created has spec.replicas 1 before its pod exists.
  // A partition keeps old pods: the new ones stop short of them, and new pods above that (Git lowered the count, or the
  // ReplicaSet replaced a kept pod that died at its own template) are surplus.
  // And capacity comes first: a region that runs old pods but fewer pods than desired (its count was raised, by Git or
  // by a move, or pods were lost) gets the missing ones at once, as the only template it has, the new one. A region
  // without old pods is being created: its groups pace it.
  const shortfall = counts.old > 0 ? desired - counts.old : 0;
  const kept = keptOld(region, counts.old);
  const wantNew = Math.min(Math.max(wantNewRaw, counts.updated + creatingNew(region, counts), shortfall), desired - kept);
  const wantOld = desired - wantNew;
  const { available, done } = groupProgress(counts, Math.min(wantNewRaw, desired), desired);
  const workload = region.workload;
  if (!workload) return { counts, actions: [], available: false, done: false, blocked: `workload of region ${region.name} does not exist yet` };
  if (workload.templateRevision !== region.targetRevision) {
    return {
      counts,
      actions: [],
      available: false,
      done: false,
      blocked: `workload ${workload.name} is not at revision ${region.targetRevision} yet (waiting for the sync)`,
    };
  }

  const active = region.pods.filter(isPodActive);
  const isNew = (p: PodState) => p.revision === region.targetRevision;
  const actions: RolloutAction[] = [];
  const oldExcess = Math.max(0, counts.old - wantOld);
  const oldPods = active.filter((p) => !isNew(p));
  const at = new Date(now).toISOString();
  // The old pods a partition keeps carry the opposite mark: a scale-down removes them after any other pod.
  const holds = keptPods(region, oldPods, kept);
  for (const pod of holds.hold) actions.push({ kind: 'holdOld', region: region.name, pod: pod.name, uid: pod.uid, at });
  for (const pod of holds.release) actions.push({ kind: 'unmark', region: region.name, pod: pod.name, uid: pod.uid });
  const unmarked = oldPods.filter((p) => !p.markedOld && !p.held && !holds.hold.includes(p)).sort(markOrder);
  // Counted with the pods the plan's simulation keeps as counts (RegionState.settled); picks are among listed pods.
  const marked = countWhere(region, (p) => isPodActive(p) && !isNew(p) && p.markedOld);
  // The next group's old pods are marked too: its scale-down then finds them settled, however short this group is.
  const wantOldNext = nextWantNew === undefined ? wantOld : desired - Math.min(Math.max(nextWantNew, wantNew), desired - kept);
  const markNow =
    budgets.maxUnavailable > 0 ? Math.min(unmarked.length, Math.max(0, counts.old - kept - marked)) : Math.max(0, counts.old - wantOldNext - marked);
  for (const pod of unmarked.slice(0, markNow)) actions.push({ kind: 'markOld', region: region.name, pod: pod.name, uid: pod.uid, at, cost: OLD_MARK_COST });
  // A new pod's mark must rank above every old pod's; a rollback's new pods may carry the marks they had as old ones.
  const oldMarks = markCosts(region, (p) => isPodActive(p) && !isNew(p));
  const highestOld = oldMarks.reduce((highest, c) => Math.max(highest, c), Number.NEGATIVE_INFINITY);
  const markedBelowOld = (p: PodState) => p.markedOld && markCostOf(p) <= highestOld;
  const standingCost = options.standingMarks ? standingMarkCost(oldMarks) : undefined;
  for (const pod of active.filter(isNew)) {
    const below = markedBelowOld(pod);
    if (pod.markedOld && !below && options.standingMarks) continue;
    // Only a mark that replaces one below an old pod's is waited for (`exposed` below); an unmarked pod ranks above them.
    if (standingCost !== undefined)
      actions.push({ kind: 'markOld', region: region.name, pod: pod.name, uid: pod.uid, at, cost: standingCost, ...(!below && { standing: true as const }) });
    else if (pod.markedOld || pod.held) actions.push({ kind: 'unmark', region: region.name, pod: pod.name, uid: pod.uid });
  }

  const oldUnavailable = counts.old - counts.oldAvailable;
  const availableToLose = Math.max(0, counts.available - (desired - budgets.maxUnavailable));
  const removable = Math.min(oldExcess, oldUnavailable + availableToLose);
  // Terminating pods still run on their nodes and hold the room they took until they are gone; terminal ones (Failed,
  // Succeeded) are not in counts.terminating: they hold none, and waiting for them to go would wait for PodGC.
  // The region's keeper may hold some of that room with pods it does not serve yet (keeper.ts).
  const room = Math.max(0, desired + budgets.maxSurge - (counts.current + counts.terminating + (region.keeperOccupies ?? 0)));
  const missing = Math.max(0, wantNew - counts.updated);
  // Pods still terminating hold room they are about to free. Asking for part of the missing pods now and the rest as
  // each one goes costs a ReplicaSet write and a ReplicaSet controller round per step (at scale the controller's API
  // budget is the bottleneck of a rollout), so the missing pods are asked for at once when the room allows.
  const roomComing = counts.terminating > 0 && room < missing;
  // A ReplicaSet controller that has not yet reported the last count or the pods that left since is writing its status
  // right now: a count written meanwhile makes that write conflict, and the controller re-reads and writes again
  // (bench/agent at 200 rollouts at once: 3.4 conflicts per rollout, the whole rollout 10% slower). Its report follows
  // within its own round, so new pods are asked for once it is in.
  const reported = workload.reported;
  const controllerBehind =
    reported !== undefined && (reported.observedGeneration < reported.generation || (reported.terminatingReplicas ?? 0) > counts.terminating);
  // Meanwhile the count stays: lowering it to the pods left would make the ReplicaSet delete a replacement it just made.
  const askLater = missing > 0 && (roomComing || controllerBehind);
  const creatable = askLater ? 0 : Math.min(missing, room);

  let replicas: number;
  if (budgets.replaceDirectly) {
    const replace = Math.min(removable, room, missing);
    const victims = active
      .filter((p) => !isNew(p) && !p.held && !holds.hold.includes(p))
      .sort((a, b) => Number(isAvailable(a, minReadySeconds, now)) - Number(isAvailable(b, minReadySeconds, now)) || (a.name < b.name ? -1 : 1))
      .slice(0, replace);
    for (const pod of victims) actions.push({ kind: 'deletePod', region: region.name, pod: pod.name, uid: pod.uid });
    // The count stays at desired while old pods are replaced; a region being created grows by its groups. Where the
    // region's keeper holds surge room with pods it does not serve yet, the count grows only into the room left.
    const direct = Math.min(desired, counts.old + wantNew);
    replicas = (region.keeperOccupies ?? 0) > 0 && direct > workload.replicas ? Math.max(workload.replicas, Math.min(direct, counts.current + room)) : direct;
  } else if (removable > 0) replicas = counts.current - removable;
  else if (creatable > 0) replicas = counts.current + creatable;
  else if (askLater) replicas = workload.replicas;
  else replicas = counts.current - (counts.old <= wantOld ? Math.max(0, counts.updated - wantNew) : 0);

  if (replicas < workload.replicas && counts.old > 0 && kept > 0 && counts.old <= wantOld) {
    // New pods leave while the partition keeps every old pod: each of those must rank after them.
    const unheld = oldPods.find((p) => !p.held || !markSettled(p, now));
    if (unheld) return { counts, actions, available, done, blocked: `old pod ${unheld.name}, which the partition keeps, is not marked to stay yet` };
  } else if (replicas < workload.replicas && counts.old > 0) {
    const leaving = counts.current - replicas;
    // The ReplicaSet removes pods that are not bound, running and Ready first, and marked ones next: a new pod among
    // those may go instead of an old one. The region keeps every new pod up to its count (see wantNew), so that is
    // safe only where its count fell below its new pods (a move away from a failed region, Git lowering it): then
    // the not-Ready ones go first, as they should. Pods the ReplicaSet is creating right now (its count above the pods
    // seen: an evicted pod being replaced) are new and not Ready, and it removes from those too.
    const creating = Math.max(0, workload.replicas - counts.current);
    const exposed = active.filter((p) => isNew(p) && (leavesFirst(p) || markedBelowOld(p)));
    const newPods = counts.updated + creating;
    if (newPods - Math.min(leaving + creating, exposed.length + creating) < Math.min(newPods, desired)) {
      const unsafe = exposed.find(leavesFirst);
      if (unsafe)
        return { counts, actions, available, done, blocked: `new pod ${unsafe.name} is not Ready yet; old pods are removed only when every new pod is` };
      const stillMarked = exposed.find(markedBelowOld);
      if (stillMarked) return { counts, actions, available, done, blocked: `new pod ${stillMarked.name} still carries the mark for removal` };
    }
    const settled = (p: PodState) => p.markedOld && markSettled(p, now);
    const goFirst = countWhere(region, (p) => isPodActive(p) && !isNew(p) && (leavesFirst(p) || settled(p)));
    if (removable > 0 && goFirst < leaving) {
      return {
        counts,
        actions,
        available,
        done,
        blocked: `${goFirst} of the ${leaving} old pods to remove are marked for removal (a mark counts ${MARK_SETTLE_MS / 1000} s after it is made)`,
      };
    }
  }
  if (replicas !== workload.replicas) actions.push({ kind: 'scale', region: region.name, workload: workload.name, from: workload.replicas, replicas });
  return { counts, actions, available, done };
}
