import type { AdoptionPlan } from '../adoption/adoption.js';
import { lookAtFleet, withFleetStatus, type FleetLook, type FleetObservation } from '../fleet/look.js';
import type { ExtendedDeployment, ExtendedDeploymentSpec, ExtendedDeploymentStatus } from '../api/extended-deployment.js';
import { moveInputOf, withMoves } from '../moves/apply-moves.js';
import { planMoves, type MoveChange } from '../moves/move-plan.js';
import type { RolloutAction } from './actions.js';
import type { TrafficObservation } from '../traffic/observation.js';
import { lookAtTraffic, type BarrierPosition, type TrafficLook } from '../traffic/look.js';
import type { SampleVerdict } from '../api/traffic.js';
import { deploymentAdapter } from './deployment-adapter.js';
import type { RolloutControls } from './gates.js';
import { replicaSetAdapter } from './replicaset-adapter.js';
import { statefulSetAdapter } from './statefulset-adapter.js';
import { withGroupRecord } from './group-record.js';
import { growingRegions } from './growth.js';
import { withHandOff } from './handoff.js';
import { planKeeper } from './keeper.js';
import { regionBudgets } from './budgets.js';
import { planSession } from './session.js';
import type { RegionState } from './snapshot.js';
import type { AdapterFactory } from './workload-adapter.js';
export type { RolloutControls } from './gates.js';

/** Everything the planner reads: one ExtendedDeployment and what the cluster shows of it. */
export interface RolloutInput {
  /** The validated ExtendedDeployment (defaults applied). */
  readonly ed: ExtendedDeployment;
  /** metadata.generation, for observedGeneration. */
  readonly generation: number;
  /**
   * The key of the rollout (rolloutKey in growth.ts): the rollout revision of the render the regions come from, or
   * `<revision>+<n>` when regions grow from zero on a render already rolled out.
   */
  readonly rolloutRevision: string;
  /** Regions in declared order, with their targets and observed workloads and pods. */
  readonly regions: readonly RegionState[];
  /** The status the agent last wrote. */
  readonly status: ExtendedDeploymentStatus | undefined;
  readonly controls: RolloutControls;
  /** Current time (ms since epoch). */
  readonly now: number;
  /** metadata.uid of the ExtendedDeployment (the owner of its keepers); undefined where it has none (edctl plan). */
  readonly uid?: string | undefined;
  /**
   * The regions' adoptions (core/adoption), planned by the agent from fresh reads; undefined where nothing is adopted
   * or nothing is read (edctl plan). While one is open, its steps are the plan.
   */
  readonly adoption?: AdoptionPlan | undefined;
  /**
   * What the agent read of the other members of this ExtendedDeployment's fleet (spec.fleet), for the wave gate
   * (core/fleet/look.ts); undefined outside a fleet and in `edctl plan`, which simulates one cluster.
   */
  readonly fleet?: FleetObservation | undefined;
  /**
   * What the agent read for spec.strategy.traffic (the route, the revision Services, the answers to the analysis
   * queries that were due: core/traffic/look.ts); undefined without it and in `edctl plan`.
   */
  readonly traffic?: TrafficObservation | undefined;
  /**
   * Every pod at a regional ReplicaSet's rendered revision carries a mark for removal, made as the pod is seen, so the
   * next rollout's first scale-down need not wait for marks to settle (region-step.ts, StepOptions.standingMarks). The
   * agent keeps them; `edctl plan`'s simulation asks without them, as no step waits for them (its pods start marked,
   * as the agent left them: core/simulate/start.ts).
   */
  readonly standingMarks?: boolean | undefined;
}

/** A Kubernetes Event to record on the ExtendedDeployment. */
export interface RolloutEvent {
  readonly type: 'Normal' | 'Warning';
  readonly reason: string;
  readonly message: string;
}

/** What the agent should do now. */
export interface RolloutPlan {
  /**
   * Writes, in order within each region (regions are independent: the agent acts on them concurrently). Whether the
   * status goes out before or after them is decided next to the planner (decision.ts): first when it records a new
   * rollout, group or move, so intent survives a crash, unless the writes record the new group themselves
   * (group-record.ts).
   */
  readonly actions: readonly RolloutAction[];
  readonly status: ExtendedDeploymentStatus;
  readonly events: readonly RolloutEvent[];
  /** Replicas moved or returned by this plan, for metrics. */
  readonly moveChanges?: readonly MoveChange[];
  /** Instants (ms) at which the plan may change although no object does (move timeouts and windows). */
  readonly wakeAt?: readonly number[];
  /** The analysis samples this look recorded, with their verdicts: the agent counts them (a metric by result). */
  readonly analysisSamples?: readonly { readonly metric: string; readonly verdict: SampleVerdict }[];
}

/** The adapter of every workload kind (subsetType): InplaceSet is a ReplicaSet with in-place updates on. */
const adapters: Readonly<Record<ExtendedDeploymentSpec['subsetType'], AdapterFactory>> = {
  ReplicaSet: replicaSetAdapter,
  InplaceSet: replicaSetAdapter,
  Deployment: deploymentAdapter,
  StatefulSet: statefulSetAdapter,
};

/**
 * Decides the next step of one ExtendedDeployment: first its moves (core/moves: which regions lend replicas to which,
 * and when they come back), then its rollout toward the resulting replica counts. Pure: the same input gives the same
 * plan, and every decision is re-derived from the input, so a new leader continues from what the cluster shows.
 *
 * A rollout starts when a region runs another revision than the rendered one, or when regions start from zero (a new
 * ExtendedDeployment, a region added or grown from 0: growth.ts), which are created by the same groups. It proceeds in global groups; a group
 * starts only when every region's previous group is available and the gate allows it (confirmation, pause, abort); a
 * group that does not finish within the progress deadline makes the rollout Degraded and stops it. Regions that the
 * rollout does not change only converge to their replica count; a region whose count drops sheds available pods only
 * as pods elsewhere become available (handoff.ts). One state machine (session.ts) runs every rollout;
 * what a group means for a kind of workload is its adapter's: pod batches per region for ReplicaSets
 * (replicaset-adapter.ts), whole regions for native Deployments in compat mode (deployment-adapter.ts), partition steps
 * for StatefulSets (statefulset-adapter.ts).
 */
export function planRollout(input: RolloutInput): RolloutPlan {
  const growing = growingRegions(input.ed.spec, input.regions, input.status);
  const moves = planMoves(moveInputOf(input));
  const moved: RolloutInput = { ...input, regions: input.regions.map((r) => ({ ...r, desired: moves.desired.get(r.name) ?? r.desired })) };
  const kept = planKeepers(moved);
  const fleet = lookAtFleet(input.ed, input.status, input.fleet, input.now);
  // Traffic and analysis look once the session knows the group and whether it is available (core/traffic/look.ts).
  let traffic: TrafficLook | undefined;
  const barrierAt = (at: BarrierPosition) => {
    traffic = lookAtTraffic(kept.input, at);
    return traffic;
  };
  const session = planSession(kept.input, adapters[input.ed.spec.subsetType], growing, fleet?.wait, barrierAt);
  const planned = withTraffic(withFleet(withHandOff(withMoves(session, moves, kept.input), kept.input), fleet, input), traffic);
  // An adoption that finished in this look reports it next to the rollout that starts (while open, its Events are the plan's).
  const plan = input.adoption && !input.adoption.open ? { ...planned, events: [...input.adoption.events, ...planned.events] } : planned;
  const keeping =
    kept.actions.length === 0 && kept.wakeAt.length === 0
      ? plan
      : { ...plan, actions: [...kept.actions, ...plan.actions], wakeAt: [...(plan.wakeAt ?? []), ...kept.wakeAt] };
  return withGroupRecord(keeping, input);
}

/**
 * The plan with traffic and analysis (core/traffic/look.ts): the route and Service writes after the regions' actions
 * (a weight step goes out once the group's pods are Ready), status.traffic and status.analysis, the samples' Events.
 */
function withTraffic(plan: RolloutPlan, traffic: TrafficLook | undefined): RolloutPlan {
  if (traffic === undefined) return plan;
  const { traffic: trafficStatus, analysis } = traffic.status;
  const { traffic: _traffic, analysis: _analysis, ...status } = plan.status;
  return {
    ...plan,
    actions: [...plan.actions, ...traffic.actions],
    status: { ...status, ...(trafficStatus !== undefined && { traffic: trafficStatus }), ...(analysis !== undefined && { analysis }) },
    events: [...plan.events, ...traffic.events],
    ...(traffic.samples.length > 0 && { analysisSamples: traffic.samples }),
    ...(traffic.wakeAt.length > 0 && { wakeAt: [...(plan.wakeAt ?? []), ...traffic.wakeAt] }),
  };
}

/** The plan with status.fleet (the gate's record, the release completed), the gate's Events and its wake-up. */
function withFleet(plan: RolloutPlan, fleet: FleetLook | undefined, input: RolloutInput): RolloutPlan {
  if (input.ed.spec.fleet === undefined) return plan;
  return {
    ...plan,
    status: withFleetStatus(input.ed, fleet, plan.status, input.status, input.regions),
    events: [...(fleet?.events ?? []), ...plan.events],
    ...(fleet?.wakeAt !== undefined && { wakeAt: [...(plan.wakeAt ?? []), fleet.wakeAt] }),
  };
}

/**
 * Every region's keeper (keeper.ts), before the rollout plans: the rollout then plans each region's regional
 * ReplicaSet for the share its keeper does not serve. Keeper writes come first: a scale-up is capacity.
 */
function planKeepers(input: RolloutInput): { input: RolloutInput; actions: readonly RolloutAction[]; wakeAt: readonly number[] } {
  const { strategy } = input.ed.spec;
  const owner = { name: input.ed.metadata.name, uid: input.uid ?? '' };
  const plans = input.regions.map((r) => planKeeper(r, owner, regionBudgets(strategy, r.desired), strategy.minReadySeconds, input.now));
  return { input: { ...input, regions: plans.map((p) => p.region) }, actions: plans.flatMap((p) => p.actions), wakeAt: plans.flatMap((p) => p.wakeAt) };
}
