import { MOVES_CONDITION, type Condition } from '../api/conditions.js';
import type { ExtendedDeploymentStatus } from '../api/extended-deployment.js';
import { setCondition } from '../kube/conditions.js';
import type { RolloutInput, RolloutPlan } from '../rollout/planner.js';
import { overview } from '../rollout/status.js';
import type { Move, MoveInput, MovePlan } from './move-plan.js';

const ms = (iso: string | undefined) => (iso === undefined ? Number.NaN : Date.parse(iso));

/** The moves a status records, as the move planner reads them (unparseable times count as long ago). */
export function recordedMoves(status: ExtendedDeploymentStatus | undefined): Move[] {
  return (status?.moves ?? []).map((m) => ({ from: m.from, to: m.to, count: m.count, reason: m.reason, since: ms(m.since) || 0, returning: m.returning ?? 0 }));
}

/** The move planner's input for one ExtendedDeployment: the spec's shares, nodes, room and the recorded moves. */
export function moveInputOf(input: RolloutInput): MoveInput {
  const previous = new Map((input.status?.regions ?? []).map((r) => [r.name, r]));
  return {
    strategy: input.ed.spec.strategy,
    totalReplicas: input.ed.spec.replicas ?? input.regions.reduce((s, r) => s + r.desired, 0),
    regions: input.regions.map((r) => {
      const since = ms(previous.get(r.name)?.healthyWithRoomSince);
      return {
        name: r.name,
        base: r.desired,
        targetRevision: r.targetRevision,
        pods: r.pods,
        settled: r.settled,
        nodes: r.nodes,
        room: r.room,
        healthyWithRoomSince: Number.isNaN(since) ? undefined : since,
      };
    }),
    moves: recordedMoves(input.status),
    previousReason: input.status?.conditions?.find((c) => c.type === MOVES_CONDITION)?.reason,
    now: input.now,
  };
}

/**
 * The plan's conditions with the Moves condition set to `next`, or without it. The plan's status is built afresh, so the
 * Moves condition it had is taken from the status before the plan (`previous`), for its lastTransitionTime.
 */
function withCondition(
  conditions: readonly Condition[],
  previous: readonly Condition[] | undefined,
  next: MovePlan['condition'],
  generation: number,
  now: number,
): Condition[] {
  const others = conditions.filter((c) => c.type !== MOVES_CONDITION);
  if (!next) return others;
  const old = previous?.filter((c) => c.type === MOVES_CONDITION) ?? [];
  return setCondition([...others, ...old], { type: MOVES_CONDITION, ...next, observedGeneration: generation }, now);
}

/**
 * Adds the move plan to a rollout plan: the moves and per-region counts in status, the Moves condition, the overview's
 * prefix (`[Shortage]`, `[Fault]`), the move Events and the instants to look again. Regions without moves keep the
 * status they had before moves existed (no zero counts), so objects that never move never see a status change.
 */
export function withMoves(plan: RolloutPlan, moves: MovePlan, input: RolloutInput): RolloutPlan {
  const active = moves.moves.length > 0;
  const regions = (plan.status.regions ?? []).map((r) => {
    const movedIn = moves.movedIn.get(r.name) ?? 0;
    const movedOut = moves.movedOut.get(r.name) ?? 0;
    const since = moves.healthyWithRoomSince.get(r.name);
    return {
      ...r,
      ...(movedIn > 0 && { movedIn }),
      ...(movedOut > 0 && { movedOut }),
      ...(since !== undefined && { healthyWithRoomSince: new Date(since).toISOString() }),
    };
  });
  const prefix = !active ? 'Normal' : moves.moves.some((m) => m.reason === 'Fault') ? 'Fault' : 'Shortage';
  const status: ExtendedDeploymentStatus = {
    ...plan.status,
    overview: overview(
      regions.map((r) => ({ name: r.name, current: r.current ?? 0, desired: r.desired ?? 0 })),
      prefix,
    ),
    regions,
    ...(active && {
      moves: moves.moves.map((m) => ({
        from: m.from,
        to: m.to,
        count: m.count,
        ...(m.returning > 0 && { returning: m.returning }),
        reason: m.reason,
        since: new Date(m.since).toISOString(),
      })),
    }),
    conditions: withCondition(plan.status.conditions ?? [], input.status?.conditions, moves.condition, input.generation, input.now),
  };
  if (!active) delete status.moves;
  return { ...plan, status, events: [...moves.events, ...plan.events], moveChanges: moves.changes, wakeAt: moves.wakeAt };
}
