import { PROGRESSING_CONDITION } from '../api/conditions.js';
import type { RolloutAction, ScaleAction } from './actions.js';
import type { RolloutInput, RolloutPlan } from './planner.js';
import { isPodActive } from './pod-activity.js';
import { countPods, countWhere, isAvailable, markCostOf, markCosts, type PodState, type RegionCounts, type RegionState } from './snapshot.js';

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
 * first; then by pod-deletion-cost (the agent's marks, lowest first; unmarked last) before how long they have been
 * Ready, so within each cost those still waiting out minReadySeconds before the available ones. Runs of pods, each
 * available or not, in that order.
 */
interface RemovalOrder {
  readonly current: number;
  readonly runs: readonly { readonly count: number; readonly available: boolean }[];
}

function removalOrder(region: RegionState, counts: RegionCounts, minReadySeconds: number, now: number): RemovalOrder {
  const ready = (p: PodState) => isPodActive(p) && p.ready;
  const byCost = (cost: number | undefined) => (p: PodState) => (cost === undefined ? !p.markedOld : p.markedOld && markCostOf(p) === cost);
  const costs = [...new Set(markCosts(region, ready))].sort((a, b) => a - b);
  return {
    current: counts.current,
    runs: [
      { count: counts.current - counts.ready, available: false },
      ...[...costs, undefined].flatMap((cost) => {
        const atCost = byCost(cost);
        const available = countWhere(region, (p) => atCost(p) && isAvailable(p, minReadySeconds, now));
        return [
          { count: countWhere(region, (p) => ready(p) && atCost(p)) - available, available: false },
          { count: available, available: true },
        ];
      }),
    ],
  };
}

/** Available pods lost when the controller removes `k` pods. */
function availableLost(o: RemovalOrder, k: number): number {
  let left = k;
  let lost = 0;
  for (const run of o.runs) {
    const taken = Math.min(run.count, left);
    left -= taken;
    if (run.available) lost += taken;
  }
  return lost;
}

/** The most pods the controller may remove and lose at most `loss` available ones. */
function mostRemovable(o: RemovalOrder, loss: number): number {
  let left = loss;
  let removable = 0;
  for (const run of o.runs) {
    if (!run.available) removable += run.count;
    else if (left < run.count) return removable + left;
    else {
      removable += run.count;
      left -= run.count;
    }
  }
  return removable + left;
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
