import { ProgressingReason } from '../api/conditions.js';
import type { RolloutStrategy } from '../api/extended-deployment.js';
import { Phases, type Phase } from './reasons.js';

/** Controls written by `edctl` as annotations on the ExtendedDeployment. */
export interface RolloutControls {
  /** `edctl pause`: hold until resumed. */
  readonly paused: boolean;
  /** `edctl abort` for the current rollout revision: hold exactly where it is until Git changes or resume. */
  readonly aborted: boolean;
  /** `edctl approve` for the current rollout revision: groups up to this one may start. */
  readonly approvedThrough: number | undefined;
  /** `edctl resume` time (ms): restarts the progress deadline of the current group. */
  readonly resumedAt: number | undefined;
}

/** Where a rollout stands between two groups, whatever its workload kind. */
export interface GateInput {
  readonly strategy: RolloutStrategy;
  readonly rolloutRevision: string;
  readonly controls: RolloutControls;
  readonly now: number;
  readonly group: number;
  readonly totalGroups: number;
  /** Every region's current group is available (Ready for minReadySeconds at the new revision): the global barrier. */
  readonly groupAvailable: boolean;
  /** Every region finished the current group: available, and the old pods it replaces are gone. */
  readonly groupDone: boolean;
  /** When the current group started (ms). */
  readonly groupStart: number;
  /** Traffic and analysis at the group barrier (core/traffic/look.ts); undefined without spec.strategy.traffic. */
  readonly barrier?: Barrier | undefined;
}

/** What traffic and analysis say at a group barrier: pass, hold Paused (a failed analysis), or wait (and why). */
export interface Barrier {
  readonly pass: boolean;
  readonly hold?: { readonly reason: 'AnalysisFailed' | 'AnalysisInconclusive'; readonly message: string } | undefined;
  readonly waiting?: { readonly reason: 'TrafficShifting' | 'Analyzing'; readonly message: string } | undefined;
}

/** What the rollout does next: finish, hold in a phase, start the next group, or keep working on this one. */
export type Gate =
  | { readonly kind: 'complete' }
  | { readonly kind: 'hold'; readonly phase: Phase; readonly reason: ProgressingReason; readonly message: string }
  | { readonly kind: 'advance' }
  | { readonly kind: 'continue' };

/** The progress deadline of a group in ms (syncWaitTimeout 0 means 300 s). */
export function progressDeadlineMs(strategy: Pick<RolloutStrategy, 'syncWaitTimeout'>): number {
  return (strategy.syncWaitTimeout || 300) * 1000;
}

/**
 * Every gate of the rollout model in one place. In order: a done last group completes the rollout; abort and pause
 * hold wherever the rollout is; the next group starts as soon as every region's current group is available (the old
 * pods it replaces leave in the next group's first step, within the same budgets), unless confirmation is on (only
 * the first gate with needFirstConfirm) and no approval covers it (`edctl approve`, or `strategy.approval` naming this
 * rollout revision): then the group first settles (its old pods gone) and waits; a group past its progress deadline
 * (restarted by resume) holds as Degraded. With spec.strategy.traffic the barrier also waits for the group's weight
 * step and its analysis (core/traffic/look.ts): a failed or inconclusive analysis holds Paused, one running waits.
 */
export function decideGate(input: GateInput): Gate {
  const { strategy, controls, group } = input;
  if (input.totalGroups === 0 || (input.groupDone && group >= input.totalGroups)) return { kind: 'complete' };
  if (controls.aborted) {
    return {
      kind: 'hold',
      phase: Phases.Paused,
      reason: ProgressingReason.Aborted,
      message: `rollout aborted in group ${group}; it holds until Git changes or it is resumed`,
    };
  }
  if (strategy.pause || controls.paused) {
    return {
      kind: 'hold',
      phase: Phases.Paused,
      reason: ProgressingReason.Paused,
      message: `paused by ${strategy.pause ? 'strategy.pause' : 'edctl pause'} in group ${group}`,
    };
  }
  const barrier = input.barrier;
  const atBarrier = group < input.totalGroups && (input.groupAvailable || input.groupDone);
  if (atBarrier && barrier?.hold !== undefined) {
    return { kind: 'hold', phase: Phases.Paused, reason: ProgressingReason[barrier.hold.reason], message: barrier.hold.message };
  }
  if (atBarrier && (barrier === undefined || barrier.pass)) {
    const next = group + 1;
    const needsConfirm = strategy.needWaitingForConfirm && (!strategy.needFirstConfirm || group === 1);
    const approval = strategy.approval;
    const approved =
      (controls.approvedThrough ?? 0) >= next || (approval !== undefined && approval.revision === input.rolloutRevision && approval.throughGroup >= next);
    if (!needsConfirm || approved) return { kind: 'advance' };
    if (input.groupDone) {
      return {
        kind: 'hold',
        phase: Phases.WaitingForConfirmation,
        reason: ProgressingReason.WaitingForConfirmation,
        message: `group ${group} is done; group ${next} waits for approval`,
      };
    }
  }
  const deadline = progressDeadlineMs(strategy);
  if (input.now - Math.max(input.groupStart, controls.resumedAt ?? 0) > deadline) {
    return {
      kind: 'hold',
      phase: Phases.Degraded,
      reason: ProgressingReason.ProgressDeadlineExceeded,
      message: `group ${group} did not finish within ${deadline / 1000}s; the rollout stopped`,
    };
  }
  // The group's pods are there; its weight step or its analysis is not: the group waits as it is (its deadline runs).
  if (atBarrier && barrier?.waiting !== undefined) {
    return { kind: 'hold', phase: Phases.Progressing, reason: ProgressingReason[barrier.waiting.reason], message: barrier.waiting.message };
  }
  return { kind: 'continue' };
}
