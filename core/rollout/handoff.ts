import { PROGRESSING_CONDITION } from '../api/conditions.js';
import type { RolloutAction, ScaleAction } from './actions.js';
import type { RolloutInput, RolloutPlan } from './planner.js';
import { isPodActive } from './pod-activity.js';
import { countPods, countWhere, isAvailable, type PodState, type RegionCounts, type RegionState } from './snapshot.js';

/** A scale-down the hand-off keeps smaller than the plan asked: the region keeps pods until others have theirs. */
export interface HeldScaleDown {
  readonly region: string;
  /** The count the plan asked for, and the count written instead (the workload's own when nothing may go yet). */
  readonly wanted: number;
  readonly replicas: number;
  /** Pods that must become available in other regions before the region lets the rest go. */
  readonly waitingFor: number;
}

/** A plan's scale-downs as the hand-off lets them go, and those it holds. */
export interface HandOff {
  readonly actions: readonly RolloutAction[];
  readonly held: readonly HeldScaleDown[];
}

const isScaleDown = (a: RolloutAction): a is ScaleAction => a.kind === 'scale' && a.replicas < a.from;

/**
 * A region's active pods in the order the ReplicaSet controller removes them, as far as availability goes: not Ready
 * first; then by pod-deletion-cost (the agent's marks) before how long they have been Ready, so marked pods still
 * waiting out minReadySeconds, marked available ones, unmarked ones still waiting, unmarked available ones.
 */
interface RemovalOrder {
  readonly current: number;
  readonly available: number;
  /** Removed before any available pod: not Ready, or marked and not available yet. */
  readonly first: number;
  readonly markedAvailable: number;
  readonly unmarkedWaiting: number;
}

function removalOrder(region: RegionState, counts: RegionCounts, minReadySeconds: number, now: number): RemovalOrder {
  const waiting = (p: PodState) => isPodActive(p) && p.ready && !isAvailable(p, minReadySeconds, now);
  const markedWaiting = countWhere(region, (p) => waiting(p) && p.markedOld);
  return {
    current: counts.current,
    available: counts.available,
    first: counts.current - counts.ready + markedWaiting,
    markedAvailable: countWhere(region, (p) => p.markedOld && isAvailable(p, minReadySeconds, now)),
    unmarkedWaiting: countWhere(region, (p) => waiting(p) && !p.markedOld),
  };
}

/** Available pods lost when the controller removes `k` pods. */
function availableLost(o: RemovalOrder, k: number): number {
  const unmarkedAvailable = o.available - o.markedAvailable;
  return Math.min(o.markedAvailable, Math.max(0, k - o.first)) + Math.min(unmarkedAvailable, Math.max(0, k - o.first - o.markedAvailable - o.unmarkedWaiting));
}

/** The most pods the controller may remove and lose at most `loss` available ones. */
function mostRemovable(o: RemovalOrder, loss: number): number {
  return loss < o.markedAvailable ? o.first + loss : o.first + o.markedAvailable + o.unmarkedWaiting + (loss - o.markedAvailable);
}

/**
 * Make-before-break between regions. When replicas shift between regions (Git lowers one region's count and raises
 * others', percentages redistribute, a region goes to 0 before it is removed, a move returns), a region sheds available
 * pods only as far as the ExtendedDeployment keeps min(total desired, available now) available pods: pods gained
 * elsewhere must be available before the ones they replace go. Scale-ups are never held back.
 *
 * What a scale-down costs is judged per region, as the ReplicaSet controller removes pods (RemovalOrder). Only the
 * part of that loss above the region's desired count is shedding; what it takes below is bounded by the region's
 * budgets (maxUnavailable) and never held. A region that runs old-revision pods is in a rollout, whose scale-downs are
 * its own: its surge leaving, old pods making room for new ones, also above a count lowered meanwhile. Held, they could
 * wait for a region created by groups (growth.ts) whose next group waits for them; so they are never held, and a region
 * is drained make-before-break outside a rollout. A region whose pods are not available (its nodes failed, its pods
 * do not fit) sheds them freely: they serve nothing. The pods other regions lose by their own rollouts count against
 * what shedding may take. What may be shed goes to the regions in declared order.
 */
export function handOff(actions: readonly RolloutAction[], regions: readonly RegionState[], input: Pick<RolloutInput, 'ed' | 'now'>): HandOff {
  const { strategy } = input.ed.spec;
  const { minReadySeconds } = strategy;
  const counts = new Map(regions.map((r) => [r.name, countPods(r, minReadySeconds, input.now)]));
  const available = [...counts.values()].reduce((n, c) => n + c.available, 0);
  const desired = regions.reduce((n, r) => n + r.desired, 0);
  const cuts = new Map<ScaleAction, { readonly order: RemovalOrder; readonly lost: number; readonly shed: number }>();
  for (const region of regions) {
    const c = counts.get(region.name);
    const action = actions.find((a): a is ScaleAction => isScaleDown(a) && a.region === region.name);
    if (!c || !action) continue;
    const order = removalOrder(region, c, minReadySeconds, input.now);
    const lost = availableLost(order, c.current - action.replicas);
    cuts.set(action, { order, lost, shed: c.old > 0 ? 0 : Math.min(lost, Math.max(0, c.available - region.desired)) });
  }
  let allowance = available - Math.min(desired, available) - [...cuts.values()].reduce((n, cut) => n + cut.lost - cut.shed, 0);
  const held: HeldScaleDown[] = [];
  const granted = new Map<ScaleAction, number>();
  for (const [action, cut] of cuts) {
    const grant = Math.min(cut.shed, Math.max(0, allowance));
    allowance -= grant;
    if (grant === cut.shed) continue;
    const replicas = Math.min(action.from, Math.max(action.replicas, cut.order.current - mostRemovable(cut.order, cut.lost - cut.shed + grant)));
    granted.set(action, replicas);
    held.push({ region: action.region, wanted: action.replicas, replicas, waitingFor: cut.shed - grant });
  }
  return {
    actions: actions.flatMap((a) => {
      const replicas = isScaleDown(a) ? granted.get(a) : undefined;
      if (replicas === undefined || a.kind !== 'scale') return [a];
      return replicas < a.from ? [{ ...a, replicas }] : [];
    }),
    held,
  };
}

/** `region c keeps 2 pods until 2 more are available in other regions`, one clause per held region. */
export function heldMessage(held: readonly HeldScaleDown[]): string {
  return held
    .map((h) => `region ${h.region} keeps ${h.replicas - h.wanted} pods until ${h.waitingFor} more are available in other regions (make-before-break)`)
    .join('; ');
}

/**
 * The plan with its scale-downs handed off (handOff) over the regions it was planned for (moves included). A held
 * scale-down says so in the Progressing condition's message, which `edctl status` and the GitOps health checks show,
 * so that a region that still runs pods above its count says why.
 */
export function withHandOff(plan: RolloutPlan, input: RolloutInput): RolloutPlan {
  const { actions, held } = handOff(plan.actions, input.regions, input);
  if (held.length === 0) return plan;
  const conditions = (plan.status.conditions ?? []).map((c) =>
    c.type === PROGRESSING_CONDITION ? { ...c, message: [c.message, heldMessage(held)].filter(Boolean).join('; ') } : c,
  );
  return { ...plan, actions, status: { ...plan.status, conditions } };
}
