import type { AdoptionStatus, ExtendedDeployment, ExtendedDeploymentStatus } from '../api/extended-deployment.js';
import { AVAILABLE_CONDITION, AvailableReason, PROGRESSING_CONDITION, ProgressingReason } from '../api/conditions.js';
import { setCondition } from '../kube/conditions.js';
import { selectorString } from '../selector.js';
import type { RolloutEvent } from './planner.js';
import { isPodActive } from './pod-activity.js';
import { Phases, RolloutEventReason, type Phase } from './reasons.js';
import { countWhere, isAvailable, type PodState, type RegionCounts, type RegionPods, type RegionState } from './snapshot.js';
import { forcedExits, forcedExitText } from './forced-exit.js';
import { takesPartition } from '../validate.js';
import { stuckPods } from './stuck-pods.js';

export type { Phase };

/** What the status is built from. */
export interface StatusInput {
  readonly ed: ExtendedDeployment;
  readonly generation: number;
  readonly rolloutRevision: string;
  readonly regions: readonly RegionState[];
  readonly counts: ReadonlyMap<string, RegionCounts>;
  readonly previous: ExtendedDeploymentStatus | undefined;
  readonly rolloutRegions: readonly string[];
  readonly totalGroups: number;
  readonly phase: Phase;
  readonly group: number;
  readonly groupStart: string | undefined;
  readonly reason: ProgressingReason;
  readonly message: string;
  readonly now: number;
  /** The regions' adoptions (core/adoption), kept in the status: the freeze policy reads them. */
  readonly adoptions?: readonly AdoptionStatus[] | undefined;
}

/** The reason of the status's Progressing condition: what the rollout does or waits for (undefined without one). */
export function progressingReason(
  status: { readonly conditions?: readonly { readonly type: string; readonly reason?: string | undefined }[] | undefined } | undefined,
): string | undefined {
  return status?.conditions?.find((c) => c.type === PROGRESSING_CONDITION)?.reason;
}

/**
 * Whether the status records its rollout as complete: Healthy, or past its last group and converging to changed counts.
 * A completed rollout stays complete: later count changes (Git, moves) are served at once, never paced by its groups.
 */
export function rolloutCompleted(
  status:
    | { readonly phase?: string | undefined; readonly conditions?: readonly { readonly type: string; readonly reason?: string | undefined }[] | undefined }
    | undefined,
): boolean {
  if (status?.phase === Phases.Healthy) return true;
  const reason = progressingReason(status);
  return reason === ProgressingReason.RolloutComplete || reason === ProgressingReason.Scaling;
}

/** `[Normal]amd: 6/6; arm: 2/4`: pods over desired per region, sorted by name, like the upstream operator. */
export function overview(regions: readonly { name: string; current: number; desired: number }[], prefix = 'Normal'): string {
  const parts = [...regions].sort((a, b) => (a.name < b.name ? -1 : 1)).map((r) => `${r.name}: ${r.current}/${r.desired}`);
  return `[${prefix}]${parts.join('; ')}`;
}

const swappedToTarget = (region: RegionState, p: PodState) => p.swap?.phase === 'done' && p.swap.revision === region.targetRevision;

/** Pods of the region that reached its target revision by an in-place swap (their swap state says so). */
function swappedInPlace(region: RegionState): number {
  return countWhere(region, (p) => isPodActive(p) && p.revision === region.targetRevision && swappedToTarget(region, p));
}

/**
 * Pods of the region the rollout created at its target revision (replacements): not swapped, and created since the
 * rollout started (creationTimestamp has whole seconds). Pods that already ran the target revision when it started (a
 * Git revert in the middle of a rollout) were neither swapped nor replaced. Without a known start (a status written
 * before rolloutStartTime existed), every target pod not swapped counts.
 */
function replacedPods(region: RegionState, rolloutStart: number | undefined): number {
  const since = rolloutStart === undefined ? undefined : Math.floor(rolloutStart / 1000) * 1000;
  return countWhere(
    region,
    (p) =>
      isPodActive(p) &&
      p.revision === region.targetRevision &&
      !swappedToTarget(region, p) &&
      (since === undefined || p.createdAt === undefined || p.createdAt >= since),
  );
}

/** Pods of the region in the middle of an in-place swap: out of endpoints for the grace period, or restarting. */
function swapping(region: RegionPods): number {
  return countWhere(region, (p) => isPodActive(p) && p.swap !== undefined && p.swap.phase !== 'done');
}

/**
 * While Ready pods of the region wait out minReadySeconds: when (ms) the last of them counts as available; undefined
 * when none waits. Settled pods are available already.
 */
export function availableAt(region: RegionPods, minReadySeconds: number, now: number): number | undefined {
  const waiting = region.pods.filter((p) => p.ready && isPodActive(p) && p.readySince !== undefined && !isAvailable(p, minReadySeconds, now));
  return waiting.length === 0 ? undefined : Math.max(...waiting.map((p) => (p.readySince ?? 0) + minReadySeconds * 1000));
}

/** `(3 swapped in place, 1 replaced)` over the rollout's regions, or nothing when nothing was swapped. */
function swapSummary(regions: readonly { swappedInPlace?: number; replaced?: number }[]): string {
  const swapped = regions.reduce((s, r) => s + (r.swappedInPlace ?? 0), 0);
  const replaced = regions.reduce((s, r) => s + (r.replaced ?? 0), 0);
  return swapped > 0 ? ` (${swapped} swapped in place, ${replaced} replaced)` : '';
}

/**
 * Builds the status the agent writes and the Events of every transition since the previous status: rollout and
 * group starts and finishes, gates, pause and resume, deadline, completion.
 */
export function buildStatus(input: StatusInput): { status: ExtendedDeploymentStatus; events: RolloutEvent[] } {
  const { ed, previous, now } = input;
  // A Degraded rollout says which pods hold it and why, and the counts Git sets to keep what runs Ready instead, so that
  // every reader (edctl status, Argo CD, Flux, the Event) shows the cause and both ways out next to the verdict.
  const degraded = input.phase === Phases.Degraded;
  const stuck = degraded ? stuckPods(input.regions, input.rolloutRegions, now) : undefined;
  // Only where a region entry takes a partition: a forced exit is written as one.
  const exit = degraded && takesPartition(ed.spec) ? forcedExitText(forcedExits(input.regions, input.rolloutRegions, now)) : undefined;
  const message = [input.message, stuck, exit].filter((part) => part !== undefined).join('; ');
  // A new rollout revision starts now; the same one keeps its start.
  const rolloutStartTime = previous?.revision === input.rolloutRevision ? previous.rolloutStartTime : new Date(now).toISOString();
  const rolloutStart = rolloutStartTime === undefined ? undefined : Date.parse(rolloutStartTime);
  const { minReadySeconds } = ed.spec.strategy;
  const regions = input.regions.map((r) => {
    const c = input.counts.get(r.name);
    const swapped = swappedInPlace(r);
    const inSwap = swapping(r);
    const availableTime = availableAt(r, minReadySeconds, now);
    return {
      name: r.name,
      desired: r.desired,
      current: c?.current ?? 0,
      updated: c?.updated ?? 0,
      ready: c?.ready ?? 0,
      available: c?.available ?? 0,
      revision: r.targetRevision,
      ...(input.rolloutRegions.includes(r.name) && {
        swappedInPlace: swapped,
        replaced: replacedPods(r, Number.isNaN(rolloutStart) ? undefined : rolloutStart),
      }),
      ...(inSwap > 0 && { swapping: inSwap }),
      ...(availableTime !== undefined && { availableAt: new Date(availableTime).toISOString() }),
    };
  });
  const progressing = input.phase === Phases.Progressing || input.phase === Phases.WaitingForConfirmation || input.phase === Phases.Paused;
  const totalAvailable = regions.reduce((s, r) => s + r.available, 0);
  const totalDesired = regions.reduce((s, r) => s + r.desired, 0);
  // Only these two: the planner's status clears Valid and Authorized, and withMoves sets Moves again.
  const own = (previous?.conditions ?? []).filter((c) => c.type === PROGRESSING_CONDITION || c.type === AVAILABLE_CONDITION);
  const conditions = setCondition(
    setCondition(
      own,
      {
        type: PROGRESSING_CONDITION,
        status: progressing ? 'True' : 'False',
        reason: input.reason,
        message,
        observedGeneration: input.generation,
      },
      now,
    ),
    {
      type: AVAILABLE_CONDITION,
      status: totalAvailable >= totalDesired ? 'True' : 'False',
      reason: totalAvailable >= totalDesired ? AvailableReason.MinimumReplicasAvailable : AvailableReason.MinimumReplicasUnavailable,
      message: `${totalAvailable} of ${totalDesired} pods available`,
      observedGeneration: input.generation,
    },
    now,
  );
  const status: ExtendedDeploymentStatus = {
    observedGeneration: input.generation,
    phase: input.phase,
    replicas: regions.reduce((s, r) => s + r.current, 0),
    labelSelector: selectorString(ed.spec.selector),
    revision: input.rolloutRevision,
    rolloutRegions: [...input.rolloutRegions],
    currentGroup: input.group,
    totalGroups: input.totalGroups,
    groups: `${input.group}/${input.totalGroups}`,
    overview: overview(regions),
    ...(input.groupStart !== undefined && { lastGroupStartTime: input.groupStart }),
    ...(rolloutStartTime !== undefined && { rolloutStartTime }),
    regions,
    ...(input.adoptions !== undefined && input.adoptions.length > 0 && { adoptions: [...input.adoptions] }),
    conditions,
  };
  return { status, events: transitions(previous, status, { ...input, message }) };
}

/** `group 2` or `groups 2–3` of the groups `from`..`to` (inclusive). */
function groupRange(from: number, to: number): string {
  return from === to ? `group ${from}` : `groups ${from}–${to}`;
}

/**
 * The Events of the transitions from `previous` to `next`, one per transition: a group starting is one Event that also
 * names the groups it follows (they completed at that moment, never earlier: a group waiting at a gate is still the
 * current one), and the rollout's start and end carry its first group's start and its last group's completion. Each
 * Event is an API write, so a rollout of N groups without gates costs N + 1 of them, not 2N + 2.
 */
function transitions(previous: ExtendedDeploymentStatus | undefined, next: ExtendedDeploymentStatus, input: StatusInput): RolloutEvent[] {
  const events: RolloutEvent[] = [];
  const sameRollout = previous?.revision === next.revision;
  const prevGroup = sameRollout ? (previous?.currentGroup ?? 0) : 0;
  const prevPhase = sameRollout ? previous?.phase : undefined;
  const group = next.currentGroup ?? 0;
  const total = input.totalGroups;
  const groupStarted = group > prevGroup && total > 0 && next.phase !== Phases.Healthy;
  // The groups before the one starting completed just now (a rollout that resumes where its pods are, after a Git
  // revert, starts past groups it finds done).
  const firstDone = Math.max(prevGroup, 1);
  const started = groupStarted
    ? `group ${group}${sameRollout ? ` of ${total}` : ''} started${firstDone < group ? `; ${groupRange(firstDone, group - 1)} completed${swapSummary(next.regions ?? [])}` : ''}`
    : '';
  if (!sameRollout && total > 0) {
    events.push({
      type: 'Normal',
      reason: RolloutEventReason.RolloutStarted,
      message: `rollout ${input.rolloutRevision} started: ${total} groups over ${input.rolloutRegions.join(', ')}${started ? `; ${started}` : ''}`,
    });
  } else if (groupStarted) {
    events.push({ type: 'Normal', reason: RolloutEventReason.GroupStarted, message: started });
  }
  if (next.phase === prevPhase) return events;
  switch (next.phase) {
    case Phases.WaitingForConfirmation:
      events.push({ type: 'Normal', reason: ProgressingReason.WaitingForConfirmation, message: input.message });
      break;
    case Phases.Paused:
      events.push({ type: 'Normal', reason: input.reason, message: input.message });
      break;
    case Phases.Degraded:
      events.push({ type: 'Warning', reason: ProgressingReason.ProgressDeadlineExceeded, message: input.message });
      break;
    case Phases.Healthy:
      // Once: a completed rollout that scaled since (Progressing, Scaling) and settled again completes nothing new.
      if (total > 0 && prevPhase !== undefined && !rolloutCompleted(previous)) {
        events.push({
          type: 'Normal',
          reason: RolloutEventReason.RolloutCompleted,
          message: `rollout ${input.rolloutRevision} completed${swapSummary(next.regions ?? [])}`,
        });
      }
      break;
    case Phases.Progressing:
      if (prevPhase === Phases.Paused || prevPhase === Phases.Degraded)
        events.push({ type: 'Normal', reason: RolloutEventReason.Resumed, message: `rollout resumed in group ${group}` });
      break;
  }
  return events;
}
