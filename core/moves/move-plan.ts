import { MovesReason } from '../api/conditions.js';
import type { RolloutStrategy } from '../api/extended-deployment.js';
import { parsePercent, type IntOrPercent } from '../api/common.js';
import { batchPods } from '../rollout/groups.js';
import { isPodActive } from '../rollout/pod-activity.js';
import { countWhere, isAvailable, type PodState, type SettledPods } from '../rollout/snapshot.js';
import { apportionByRoom } from './apportion.js';
import { WHOLE_SECOND_SLACK_MS, type NodeView } from './nodes.js';
import { regionHealth, type RegionHealth } from './region-health.js';

/** Why replicas run away from their region. */
export type MoveReason = 'Shortage' | 'Fault';

/** Replicas of region `from` that run in region `to` meanwhile. */
export interface Move {
  readonly from: string;
  readonly to: string;
  /** Replicas still away. */
  readonly count: number;
  readonly reason: MoveReason;
  /** When they moved (ms). */
  readonly since: number;
  /**
   * Replicas already given back to `from` that `to` keeps until `from` has them available, so a return never lowers
   * the service's available pods.
   */
  readonly returning: number;
}

/** One region as the move planner sees it. */
export interface MoveRegion {
  readonly name: string;
  /** Replicas the spec gives the region, before moves. */
  readonly base: number;
  readonly targetRevision: string;
  readonly pods: readonly PodState[];
  /** Pods counted rather than listed (RegionState.settled: only edctl plan's simulation has them). */
  readonly settled?: readonly SettledPods[];
  /** The region's nodes; undefined when the agent cannot see them (then nothing moves to or from it). */
  readonly nodes: readonly NodeView[] | undefined;
  /** How many more of this ExtendedDeployment's pods the region's nodes can take now; undefined when not known. */
  readonly room: number | undefined;
  /** Since when the region has been healthy with room, as the last status recorded (ms). */
  readonly healthyWithRoomSince: number | undefined;
}

/** A condition about moves. */
export interface MovesCondition {
  readonly status: 'True' | 'False' | 'Unknown';
  readonly reason: MovesReason;
  readonly message: string;
}

/** Everything the move planner reads. */
export interface MoveInput {
  readonly strategy: RolloutStrategy;
  /** spec.replicas, or the regions' sum: what `maxReplicasPerMinute` percentages refer to. */
  readonly totalReplicas: number;
  readonly regions: readonly MoveRegion[];
  /** The moves the status records. */
  readonly moves: readonly Move[];
  /** The reason of the Moves condition the status records, to report a blocked move once. */
  readonly previousReason: string | undefined;
  readonly now: number;
}

/** A change the plan makes, for Events and metrics. */
export interface MoveChange {
  readonly kind: 'move' | 'return';
  readonly reason: MoveReason;
  readonly from: string;
  readonly to: string;
  readonly count: number;
}

/** What the move planner decided. */
export interface MovePlan {
  readonly moves: readonly Move[];
  /** Replicas per region, moves included: what the rollout planner steps each region toward. */
  readonly desired: ReadonlyMap<string, number>;
  readonly movedIn: ReadonlyMap<string, number>;
  readonly movedOut: ReadonlyMap<string, number>;
  readonly healthyWithRoomSince: ReadonlyMap<string, number>;
  /** Undefined when moves are off and none remain. */
  readonly condition: MovesCondition | undefined;
  readonly changes: readonly MoveChange[];
  readonly events: readonly { readonly type: 'Normal' | 'Warning'; readonly reason: string; readonly message: string }[];
  /** Instants (ms) at which the decision may change without any event: timeouts, tolerations, windows. */
  readonly wakeAt: readonly number[];
}

const MINUTE_MS = 60_000;

/** Replicas fault moves may move per minute. */
export function faultMovesPerMinute(limit: IntOrPercent, totalReplicas: number): number {
  const pct = typeof limit === 'string' ? parsePercent(limit) : undefined;
  const count = pct === undefined ? Number(limit) : Math.ceil((totalReplicas * pct) / 100);
  return Math.max(1, Number.isFinite(count) ? count : totalReplicas);
}

/** When a pod's unschedulable timeout ends (its condition time has whole seconds: see WHOLE_SECOND_SLACK_MS). */
const stuckAt = (p: PodState, timeoutMs: number) => (p.unschedulableSince ?? Number.POSITIVE_INFINITY) + WHOLE_SECOND_SLACK_MS + timeoutMs;

/** Pods of the region's current revision the scheduler has found no node for since at least `timeoutMs`. */
function stuckPods(region: MoveRegion, timeoutMs: number, now: number): PodState[] {
  return region.pods.filter((p) => isPodActive(p) && !p.assigned && p.revision === region.targetRevision && stuckAt(p, timeoutMs) <= now);
}

const unschedulable = (region: MoveRegion) => region.pods.some((p) => isPodActive(p) && !p.assigned && p.unschedulableSince !== undefined);
const active = (region: MoveRegion) => countWhere(region, isPodActive);
const sum = (values: Iterable<number>) => [...values].reduce((a, b) => a + b, 0);
const plural = (n: number) => `${n} replica${n === 1 ? '' : 's'}`;

/**
 * Decides the moves of one ExtendedDeployment: pure, from the nodes, the pods and the moves its status records, so a
 * new leader decides exactly what the old one would have.
 *
 * - Recorded moves that no longer make sense are cut first: a region gone from the spec, a move kind switched off,
 *   more replicas away from a region than the spec now gives it (newest first).
 * - Fault: a region Failed under `faultMove` gives all its replicas to regions that are not failing (not as many
 *   failing nodes as would make them Failed, toleration or not), in proportion to
 *   their room, at most `maxReplicasPerMinute` a minute; when every region looks failed nothing moves.
 * - Shortage: current-revision pods Unschedulable for `autoReschedule.timeoutSeconds` leave their region (it shrinks
 *   by that many; the ReplicaSet removes unassigned pods first) for regions with room, none with unschedulable pods
 *   of their own or a shortage of their own within the cool-down. Pods beyond the region's count are already going,
 *   which keeps a move from being made twice while the ReplicaSet catches up.
 * - Return: a region with replicas away that has been free of failing nodes and unschedulable pods, with room, for
 *   `moveBack.stabilizationSeconds` gets them back, a batch (`batchSize` of its replicas) at a time, newest moves
 *   first; the host keeps its extra pods until the region has the returned ones available.
 */
export function planMoves(input: MoveInput): MovePlan {
  const { strategy, now } = input;
  const { autoReschedule, faultMove, moveBack } = strategy;
  const byName = new Map(input.regions.map((r) => [r.name, r]));
  const events: { type: 'Normal' | 'Warning'; reason: string; message: string }[] = [];
  const changes: MoveChange[] = [];
  const wakeAt: number[] = [];

  let moves = keptMoves(input, events);
  const out = (name: string) => sum(moves.filter((m) => m.from === name).map((m) => m.count));
  const hosted = (name: string) => sum(moves.filter((m) => m.to === name).map((m) => m.count + m.returning));
  const desired = (r: MoveRegion) => r.base - out(r.name) + hosted(r.name);

  // Returns whose pods are available at home: the hosts let their extra pods go.
  moves = moves
    .map((m) => {
      const home = byName.get(m.from);
      if (m.returning === 0 || !home) return m;
      const available = countWhere(home, (p) => p.revision === home.targetRevision && isAvailable(p, strategy.minReadySeconds, now));
      return available >= desired(home) ? { ...m, returning: 0 } : m;
    })
    .filter((m) => m.count + m.returning > 0);

  const health = new Map<string, RegionHealth | undefined>(input.regions.map((r) => [r.name, r.nodes ? regionHealth(r.nodes, faultMove, now) : undefined]));
  for (const h of health.values()) if (h?.failsAt !== undefined && h.failsAt > now) wakeAt.push(h.failsAt);
  const failed = (name: string) => faultMove.enable && health.get(name)?.phase === 'Failed';
  // A region with as many failing nodes as make it Failed, still within the toleration, takes no fault move: moved
  // there, the replicas would be lost again when it fails (every region failing at once must move nothing).
  const failing = (name: string) => faultMove.enable && health.get(name)?.failsAt !== undefined;
  const known = input.regions.filter((r) => health.get(r.name) !== undefined);
  const allFailed = faultMove.enable && input.regions.length > 0 && input.regions.every((r) => failed(r.name));
  // Room left per region; moves made in this pass take from it. Pods the region must still create take room too.
  const room = new Map(input.regions.map((r) => [r.name, r.room === undefined ? undefined : Math.max(0, r.room - Math.max(0, desired(r) - active(r)))]));
  const blocked: string[] = [];

  const place = (from: MoveRegion, count: number, reason: MoveReason, targets: readonly MoveRegion[]) => {
    const shares = apportionByRoom(
      count,
      targets.map((t) => ({ name: t.name, room: room.get(t.name) ?? 0 })),
    );
    for (const [to, n] of shares) {
      moves.push({ from: from.name, to, count: n, reason, since: now, returning: 0 });
      room.set(to, (room.get(to) ?? 0) - n);
      changes.push({ kind: 'move', reason, from: from.name, to, count: n });
    }
    return sum(shares.values());
  };

  if (!allFailed && faultMove.enable) {
    const limit = faultMovesPerMinute(faultMove.maxReplicasPerMinute, input.totalReplicas);
    const recent = moves.filter((m) => m.reason === 'Fault' && m.since > now - MINUTE_MS);
    let allowance = Math.max(0, limit - sum(recent.map((m) => m.count + m.returning)));
    for (const region of input.regions.filter((r) => failed(r.name))) {
      const targets = known.filter((t) => t.name !== region.name && !failing(t.name));
      // Replicas other regions lent the failed one move on first, to a region other than their own home's.
      let lentMoved = 0;
      for (const [i, lent] of moves.entries()) {
        if (lent.to !== region.name || allowance === 0) continue;
        const shares = apportionByRoom(
          Math.min(lent.count + lent.returning, allowance),
          targets.filter((t) => t.name !== lent.from).map((t) => ({ name: t.name, room: room.get(t.name) ?? 0 })),
        );
        const n = sum(shares.values());
        for (const [to, k] of shares) {
          moves.push({ from: lent.from, to, count: k, reason: lent.reason, since: now, returning: 0 });
          room.set(to, (room.get(to) ?? 0) - k);
          changes.push({ kind: 'move', reason: 'Fault', from: region.name, to, count: k });
        }
        const count = Math.max(0, lent.count - n);
        moves[i] = { ...lent, count, returning: Math.max(0, lent.returning - Math.max(0, n - lent.count)) };
        allowance -= n;
        lentMoved += n;
      }
      const own = region.base - out(region.name);
      const want = own + hosted(region.name);
      if (want === 0) continue;
      const moved = lentMoved + (allowance > 0 ? place(region, Math.min(own, allowance), 'Fault', targets) : 0);
      allowance -= moved - lentMoved;
      if (moved < want && allowance > 0)
        blocked.push(`region ${region.name} failed (${health.get(region.name)?.message}); no other region has room for ${plural(want - moved)}`);
      if (moved < want && allowance === 0)
        wakeAt.push(Math.min(now, ...moves.filter((m) => m.reason === 'Fault' && m.since > now - MINUTE_MS).map((m) => m.since)) + MINUTE_MS);
      if (moved > 0)
        events.push({
          type: 'Warning',
          reason: 'ReplicasMoved',
          message: `${plural(moved)} moved away from failed region ${region.name}: ${health.get(region.name)?.message}`,
        });
    }
    moves = moves.filter((m) => m.count + m.returning > 0);
  }

  if (!allFailed && autoReschedule.enable) {
    const timeoutMs = autoReschedule.timeoutSeconds * 1000;
    const coolingDown = (name: string) =>
      moves.some((m) => m.from === name && m.reason === 'Shortage' && m.since + autoReschedule.coolDownSeconds * 1000 > now);
    for (const m of moves)
      if (m.reason === 'Shortage' && m.since + autoReschedule.coolDownSeconds * 1000 > now) wakeAt.push(m.since + autoReschedule.coolDownSeconds * 1000);
    for (const region of input.regions) {
      if (failed(region.name) || !health.get(region.name)) continue;
      for (const p of region.pods) {
        if (isPodActive(p) && !p.assigned && p.unschedulableSince !== undefined && stuckAt(p, timeoutMs) > now) wakeAt.push(stuckAt(p, timeoutMs));
      }
      const stuck = stuckPods(region, timeoutMs, now).length;
      // Pods above the region's count are being removed already: a move made a moment ago, not yet carried out.
      const count = stuck - Math.max(0, active(region) - desired(region));
      if (count <= 0) continue;
      const targets = known.filter((t) => t.name !== region.name && !failed(t.name) && !unschedulable(t) && !coolingDown(t.name));
      const moved = place(region, count, 'Shortage', targets);
      if (moved < count)
        blocked.push(
          `region ${region.name} has ${plural(count - moved)} unschedulable for ${autoReschedule.timeoutSeconds}s or more; no other region has room`,
        );
      if (moved > 0)
        events.push({
          type: 'Warning',
          reason: 'ReplicasMoved',
          message: `${plural(moved)} moved away from region ${region.name}: pods unschedulable for ${autoReschedule.timeoutSeconds}s or more`,
        });
    }
  }

  const since = new Map<string, number>();
  if (moveBack.enable && !allFailed) {
    for (const region of input.regions) {
      const away = out(region.name);
      const h = health.get(region.name);
      const free = region.room ?? 0;
      const healthy = away > 0 && h !== undefined && h.phase !== 'Failed' && h.failingNodes === 0 && free > 0 && !unschedulable(region);
      if (!healthy) continue;
      const stableSince = region.healthyWithRoomSince ?? now;
      since.set(region.name, stableSince);
      const due = stableSince + moveBack.stabilizationSeconds * 1000;
      if (due > now) {
        wakeAt.push(due);
        continue;
      }
      if (moves.some((m) => m.from === region.name && m.returning > 0)) continue;
      let batch = Math.min(away, batchPods(strategy.batchSize, region.base), free);
      const returned = new Map<string, { count: number; reason: MoveReason }>();
      // Newest moves come back first: the oldest have been running elsewhere longest and are the least likely to flap.
      const order = moves
        .map((m, i) => ({ m, i }))
        .filter(({ m }) => m.from === region.name && m.count > 0)
        .sort((a, b) => b.m.since - a.m.since || b.i - a.i);
      for (const { i } of order) {
        const m = moves[i];
        if (!m || batch === 0) break;
        const n = Math.min(m.count, batch);
        moves[i] = { ...m, count: m.count - n, returning: m.returning + n };
        batch -= n;
        const r = returned.get(m.to) ?? { count: 0, reason: m.reason };
        returned.set(m.to, { count: r.count + n, reason: m.reason });
      }
      for (const [host, r] of returned) {
        changes.push({ kind: 'return', reason: r.reason, from: region.name, to: host, count: r.count });
        events.push({
          type: 'Normal',
          reason: 'ReplicasReturned',
          message: `${plural(r.count)} returning to region ${region.name} from ${host}: healthy with room for ${moveBack.stabilizationSeconds}s`,
        });
      }
    }
  }

  const movedOut = new Map(input.regions.map((r) => [r.name, out(r.name)]));
  const movedIn = new Map(input.regions.map((r) => [r.name, sum(moves.filter((m) => m.to === r.name).map((m) => m.count))]));
  const condition = movesCondition(input, moves, allFailed, blocked);
  if (
    condition &&
    condition.reason !== input.previousReason &&
    (condition.reason === MovesReason.NoRoom || condition.reason === MovesReason.AllRegionsFailed)
  ) {
    events.push({ type: 'Warning', reason: condition.reason === MovesReason.NoRoom ? 'MoveBlocked' : 'AllRegionsFailed', message: condition.message });
  }
  return {
    moves,
    desired: new Map(input.regions.map((r) => [r.name, desired(r)])),
    movedIn,
    movedOut,
    healthyWithRoomSince: since,
    condition,
    changes,
    events,
    wakeAt,
  };
}

/**
 * The recorded moves that still make sense under the current spec. A spec change does not discard moves wholesale:
 * only those naming a region that is gone or a move kind switched off, and replicas beyond what the spec now gives a
 * region (newest first), are returned at once.
 */
function keptMoves(input: MoveInput, events: { type: 'Normal' | 'Warning'; reason: string; message: string }[]): Move[] {
  const { strategy } = input;
  const base = new Map(input.regions.map((r) => [r.name, r.base]));
  const enabled = (reason: MoveReason) => (reason === 'Shortage' ? strategy.autoReschedule.enable : strategy.faultMove.enable);
  const kept = input.moves.filter((m) => base.has(m.from) && base.has(m.to) && m.from !== m.to && enabled(m.reason) && m.count + m.returning > 0);
  const dropped = input.moves.length - kept.length;
  const trimmed: Move[] = [];
  const away = new Map<string, number>();
  // Oldest first, so the newest are the ones cut.
  for (const m of [...kept].sort((a, b) => a.since - b.since)) {
    const left = (base.get(m.from) ?? 0) - (away.get(m.from) ?? 0);
    const count = Math.min(m.count, left);
    const returning = Math.min(m.returning, left - count);
    away.set(m.from, (away.get(m.from) ?? 0) + count + returning);
    if (count + returning > 0) trimmed.push({ ...m, count, returning });
  }
  const order = new Map(kept.map((m, i) => [m, i]));
  const result = trimmed.sort((a, b) => a.since - b.since || (order.get(a) ?? 0) - (order.get(b) ?? 0));
  if (dropped > 0 || sum(result.map((m) => m.count + m.returning)) < sum(kept.map((m) => m.count + m.returning))) {
    events.push({ type: 'Normal', reason: 'MovesReevaluated', message: 'the spec changed: moves that no longer apply were returned' });
  }
  return result;
}

function movesCondition(input: MoveInput, moves: readonly Move[], allFailed: boolean, blocked: readonly string[]): MovesCondition | undefined {
  const { autoReschedule, faultMove } = input.strategy;
  if (!autoReschedule.enable && !faultMove.enable && moves.length === 0) return undefined;
  const away = sum(moves.map((m) => m.count));
  const summary = moves.map((m) => `${m.from}→${m.to} ${m.count}${m.returning > 0 ? ` (+${m.returning} returning)` : ''} (${m.reason})`).join(', ');
  if (allFailed) {
    return {
      status: 'Unknown',
      reason: MovesReason.AllRegionsFailed,
      message: 'every region looks failed, which points at the node controller or the agent, not the regions: nothing moves',
    };
  }
  if (blocked.length > 0)
    return {
      status: moves.length > 0 ? 'True' : 'False',
      reason: MovesReason.NoRoom,
      message: [...blocked, ...(summary ? [`moved: ${summary}`] : [])].join('; '),
    };
  if (moves.length === 0) return { status: 'False', reason: MovesReason.NoMoves, message: 'every region runs its own replicas' };
  const reason = moves.some((m) => m.reason === 'Fault') ? MovesReason.Fault : MovesReason.Shortage;
  return { status: 'True', reason: away === 0 ? MovesReason.Returning : reason, message: `${plural(away)} away from their region: ${summary}` };
}
