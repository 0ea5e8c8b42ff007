import { describe, expect, it } from 'vitest';
import type { RolloutAction } from './actions.js';
import type { Budgets } from './budgets.js';
import { MARK_SETTLE_MS, stepRegion } from './region-step.js';
import { OLD_MARK_COST } from './removal-marks.js';
import type { PodState, RegionState, ReplicaSetReport } from './snapshot.js';

const T0 = Date.UTC(2026, 0, 1);
const MIN_READY = 5;
/** The cost of the standing marks of the rollout before (none of their old pods carried one). */
const STANDING = OLD_MARK_COST + 1;

/**
 * A pod written as `revision[:flag...]`: marked (a settled mark), freshMark (made a second ago), legacyMark (a mark
 * without its time), cost=N (a settled mark costing N; the others cost the lowest), unready, young (Ready for less than
 * minReadySeconds), terminating, failed. Pods are named p0, p1… in the order written.
 */
function pod(spec: string, i: number): PodState {
  const [revision, ...flags] = spec.split(':');
  const has = (flag: string) => flags.includes(flag);
  const cost = flags.find((f) => f.startsWith('cost='));
  const mark = cost
    ? { markedOld: true, markedAt: T0 - 10_000, markCost: Number(cost.slice('cost='.length)) }
    : has('marked')
      ? { markedOld: true, markedAt: T0 - 10_000 }
      : has('freshMark')
        ? { markedOld: true, markedAt: T0 - MARK_SETTLE_MS / 2 }
        : { markedOld: has('legacyMark') };
  return {
    name: `p${i}`,
    uid: `u${i}`,
    revision,
    assigned: true,
    running: true,
    ready: !has('unready'),
    readySince: has('unready') ? undefined : has('young') ? T0 - 1_000 : T0 - 3_600_000,
    terminating: has('terminating'),
    ...(has('failed') && { phase: 'Failed' }),
    ...mark,
  };
}

interface Row {
  readonly name: string;
  readonly desired: number;
  readonly pods: readonly string[];
  /** The ReplicaSet's spec.replicas; the number of pods when omitted. */
  readonly replicas?: number;
  /** The ReplicaSet's template revision ('new' when omitted); null: no ReplicaSet yet. */
  readonly template?: string | null;
  readonly reported?: ReplicaSetReport;
  readonly wantNew: number;
  readonly budgets: Budgets;
  readonly actions: readonly string[];
  readonly available: boolean;
  readonly done: boolean;
  /** A piece of the reason it is blocked; undefined when it is not. */
  readonly blocked?: string;
  /** StepOptions.standingMarks (a completed rollout's look). */
  readonly standingMarks?: boolean;
}

const surgeOnly: Budgets = { maxSurge: 1, maxUnavailable: 0, replaceDirectly: false };
const unavailableOnly: Budgets = { maxSurge: 0, maxUnavailable: 1, replaceDirectly: false };
const replaceDirectly: Budgets = { maxSurge: 1, maxUnavailable: 1, replaceDirectly: true };

function regionOf(row: Row): RegionState {
  const pods = row.pods.map(pod);
  const workload =
    row.template === null
      ? undefined
      : { name: 'web-a', templateRevision: row.template ?? 'new', replicas: row.replicas ?? pods.length, reported: row.reported };
  return { name: 'a', desired: row.desired, targetRevision: 'new', pods, workload };
}

function describeAction(a: RolloutAction): string {
  switch (a.kind) {
    case 'scale':
      return `scale ${a.from}->${a.replicas}`;
    case 'setPaused':
      return `setPaused ${a.paused}`;
    case 'setPartition':
      return `setPartition ${a.from}->${a.partition}`;
    case 'createKeeper':
    case 'dropKeeper':
      return `${a.kind} ${a.workload}`;
    case 'verifyFreeze':
    case 'scaleSource':
    case 'traffic':
      return a.kind;
    case 'markOld':
      return `markOld ${a.pod}${a.standing ? ' (standing)' : ''}${a.cost === OLD_MARK_COST ? '' : ` at ${a.cost}`}`;
    default:
      return `${a.kind} ${a.pod}`;
  }
}

describe('stepRegion', () => {
  const rows: readonly Row[] = [
    // Nothing to act on.
    {
      name: 'no ReplicaSet yet: blocked, nothing written',
      desired: 2,
      pods: [],
      template: null,
      wantNew: 1,
      budgets: surgeOnly,
      actions: [],
      available: false,
      done: false,
      blocked: 'does not exist yet',
    },
    {
      name: 'ReplicaSet not at the rendered revision: waits for the sync',
      desired: 2,
      pods: ['old', 'old'],
      template: 'old',
      wantNew: 1,
      budgets: surgeOnly,
      actions: [],
      available: false,
      done: false,
      blocked: 'waiting for the sync',
    },
    // maxUnavailable 0: new pods first, then old ones leave.
    {
      name: 'Beta first group, surge only: one new pod on top, and the old pod it replaces marked',
      desired: 3,
      pods: ['old', 'old', 'old'],
      wantNew: 1,
      budgets: surgeOnly,
      actions: ['markOld p0', 'scale 3->4'],
      available: false,
      done: false,
    },
    {
      name: 'surge only: an old pod that is not Ready is marked and goes first (losing it costs no availability)',
      desired: 3,
      pods: ['old', 'old', 'old:unready'],
      wantNew: 1,
      budgets: surgeOnly,
      actions: ['markOld p2', 'scale 3->2'],
      available: false,
      done: false,
    },
    {
      name: 'surge only, new pod available: the marked old pod leaves',
      desired: 3,
      pods: ['old:marked', 'old', 'old', 'new'],
      wantNew: 1,
      budgets: surgeOnly,
      actions: ['scale 4->3'],
      available: true,
      done: false,
    },
    {
      name: 'mark made a moment ago: the scale-down waits for it to settle',
      desired: 3,
      pods: ['old:freshMark', 'old', 'old', 'new'],
      wantNew: 1,
      budgets: surgeOnly,
      actions: [],
      available: true,
      done: false,
      blocked: '0 of the 1 old pods to remove are marked',
    },
    {
      name: 'mark without its time (an older agent made it): counts as settled',
      desired: 3,
      pods: ['old:legacyMark', 'old', 'old', 'new'],
      wantNew: 1,
      budgets: surgeOnly,
      actions: ['scale 4->3'],
      available: true,
      done: false,
    },
    {
      name: 'old pod not Ready leaves without waiting for a settled mark',
      desired: 3,
      pods: ['old:unready', 'old', 'old', 'new'],
      wantNew: 1,
      budgets: surgeOnly,
      actions: ['markOld p0', 'scale 4->3'],
      available: true,
      done: false,
    },
    {
      name: 'new pod Ready for less than minReadySeconds: not available, no old pod leaves',
      desired: 3,
      pods: ['old:marked', 'old', 'old', 'new:young'],
      wantNew: 1,
      budgets: surgeOnly,
      actions: [],
      available: false,
      done: false,
    },
    // maxSurge 0: old pods first.
    {
      name: 'unavailable only: every old pod marked at the start; the removal waits for the marks to settle',
      desired: 3,
      pods: ['old', 'old', 'old'],
      wantNew: 1,
      budgets: unavailableOnly,
      actions: ['markOld p0', 'markOld p1', 'markOld p2'],
      available: false,
      done: false,
      blocked: '0 of the 1 old pods to remove are marked',
    },
    {
      name: 'unavailable only, marks settled: an old pod goes before its replacement comes',
      desired: 3,
      pods: ['old:marked', 'old:marked', 'old:marked'],
      wantNew: 1,
      budgets: unavailableOnly,
      actions: ['scale 3->2'],
      available: false,
      done: false,
    },
    {
      name: 'unavailable only, room freed: the replacement comes',
      desired: 3,
      pods: ['old:marked', 'old:marked'],
      wantNew: 1,
      budgets: unavailableOnly,
      actions: ['scale 2->3'],
      available: false,
      done: false,
    },
    {
      name: 'new pod not Ready: no scale-down, so the ReplicaSet cannot pick it',
      desired: 3,
      pods: ['old:marked', 'old:marked', 'old:marked', 'new:unready'],
      wantNew: 1,
      budgets: unavailableOnly,
      actions: [],
      available: false,
      done: false,
      blocked: 'new pod p3 is not Ready yet',
    },
    {
      name: 'new pod still marked (a rollback): unmarked, and no scale-down until the mark is gone',
      desired: 2,
      pods: ['old:marked', 'old:marked', 'new:marked'],
      wantNew: 1,
      budgets: surgeOnly,
      actions: ['unmark p2'],
      available: true,
      done: false,
      blocked: 'new pod p2 still carries the mark',
    },
    // Standing marks: a region at its revision keeps every pod marked for the next rollout.
    {
      name: 'standing marks: every active pod at the revision that lacks the mark gets it; terminating ones do not',
      desired: 3,
      pods: ['new', 'new:marked', 'new:freshMark', 'new:terminating'],
      replicas: 3,
      wantNew: 3,
      budgets: surgeOnly,
      standingMarks: true,
      actions: [`markOld p0 (standing) at ${STANDING}`],
      available: true,
      done: true,
    },
    {
      name: 'standing marks: a pod not Ready yet (a replacement) is marked too',
      desired: 2,
      pods: ['new:marked', 'new:unready'],
      wantNew: 2,
      budgets: surgeOnly,
      standingMarks: true,
      actions: [`markOld p1 (standing) at ${STANDING}`],
      available: false,
      done: false,
    },
    {
      name: 'standing marks during a rollout: each new pod, Ready or not, is marked one above the old pods, as it is seen',
      desired: 3,
      pods: [`old:cost=${STANDING}`, `old:cost=${STANDING}`, 'old', 'new', 'new:unready'],
      replicas: 5,
      wantNew: 2,
      budgets: { maxSurge: 2, maxUnavailable: 0, replaceDirectly: false },
      standingMarks: true,
      actions: [`markOld p3 (standing) at ${STANDING + 1}`, `markOld p4 (standing) at ${STANDING + 1}`],
      available: false,
      done: false,
      blocked: 'new pod p4 is not Ready yet',
    },
    {
      name: 'standing marks during a rollout: new pods marked above every old pod keep their marks, and old pods leave',
      desired: 2,
      pods: [`old:cost=${STANDING}`, 'old:marked', `new:cost=${STANDING + 1}`, `new:cost=${STANDING + 1}`],
      wantNew: 2,
      budgets: surgeOnly,
      standingMarks: true,
      actions: ['scale 4->2'],
      available: true,
      done: false,
    },
    {
      name: 'standing marks during a rollout: old pods that are not marked yet do not hold them back',
      desired: 2,
      pods: ['old', 'old', 'new'],
      wantNew: 1,
      budgets: surgeOnly,
      standingMarks: true,
      actions: ['markOld p0', `markOld p2 (standing) at ${STANDING}`],
      available: true,
      done: false,
      blocked: '0 of the 1 old pods to remove are marked',
    },
    {
      name: 'standing marks: a new pod marked no higher than an old pod (a rollback) is marked above them, and waited for',
      desired: 2,
      pods: ['old:cost=-5', 'old:marked', 'new:cost=-5'],
      wantNew: 1,
      budgets: surgeOnly,
      standingMarks: true,
      actions: ['markOld p2 at -4'],
      available: true,
      done: false,
      blocked: 'new pod p2 still carries the mark',
    },
    {
      name: 'standing marks: none above old pods marked up to -1; a new pod marked lower is unmarked, an unmarked one stays so',
      desired: 2,
      pods: ['old:cost=-1', 'old:marked', 'new:cost=-3', 'new'],
      wantNew: 2,
      budgets: surgeOnly,
      standingMarks: true,
      actions: ['unmark p2'],
      available: true,
      done: false,
      blocked: 'new pod p2 still carries the mark',
    },
    {
      name: 'standing marks, a rollout under way: an old pod it removes is marked as without them, not as a standing mark',
      desired: 3,
      pods: ['old', 'old', 'old'],
      wantNew: 1,
      budgets: surgeOnly,
      standingMarks: true,
      actions: ['markOld p0', 'scale 3->4'],
      available: false,
      done: false,
    },
    {
      name: 'without standing marks a region at its revision marks nothing and clears a mark left on a pod',
      desired: 2,
      pods: ['new', 'new:marked'],
      wantNew: 2,
      budgets: surgeOnly,
      actions: ['unmark p1'],
      available: true,
      done: true,
    },
    // scaleSimultaneously: old pods are deleted and the ReplicaSet replaces them at its count.
    {
      name: 'replace directly: deletes an old pod, the count stays',
      desired: 3,
      pods: ['old', 'old', 'old'],
      wantNew: 1,
      budgets: replaceDirectly,
      actions: ['markOld p0', 'markOld p1', 'markOld p2', 'deletePod p0'],
      available: false,
      done: false,
    },
    {
      name: 'replace directly: an unavailable old pod is deleted first',
      desired: 3,
      pods: ['old:marked', 'old:marked', 'old:marked:unready'],
      wantNew: 1,
      budgets: replaceDirectly,
      actions: ['deletePod p2'],
      available: false,
      done: false,
    },
    {
      name: 'DeleteAllFirst: every old pod goes before any new one comes',
      desired: 3,
      pods: ['old:marked', 'old:marked', 'old:marked'],
      wantNew: 3,
      budgets: { maxSurge: 0, maxUnavailable: 3, replaceDirectly: false },
      actions: ['scale 3->0'],
      available: false,
      done: false,
    },
    // Waiting for the ReplicaSet controller.
    {
      name: 'terminating pod holds its room: new pods are asked for once it is gone',
      desired: 3,
      pods: ['old:marked', 'old', 'old', 'old:terminating'],
      replicas: 3,
      wantNew: 1,
      budgets: surgeOnly,
      actions: [],
      available: false,
      done: false,
    },
    {
      name: 'ReplicaSet controller behind its generation: the count stays until it reports',
      desired: 3,
      pods: ['old', 'old', 'old'],
      reported: { generation: 2, observedGeneration: 1, terminatingReplicas: 0 },
      wantNew: 1,
      budgets: surgeOnly,
      actions: ['markOld p0'],
      available: false,
      done: false,
    },
    {
      name: 'ReplicaSet controller behind on terminating pods: the count stays',
      desired: 3,
      pods: ['old', 'old', 'old'],
      reported: { generation: 2, observedGeneration: 2, terminatingReplicas: 1 },
      wantNew: 1,
      budgets: surgeOnly,
      actions: ['markOld p0'],
      available: false,
      done: false,
    },
    {
      name: 'ReplicaSet controller caught up: the count goes up',
      desired: 3,
      pods: ['old', 'old', 'old'],
      reported: { generation: 2, observedGeneration: 2, terminatingReplicas: 0 },
      wantNew: 1,
      budgets: surgeOnly,
      actions: ['markOld p0', 'scale 3->4'],
      available: false,
      done: false,
    },
    // Edges of the counts.
    {
      name: 'desired 0: every old pod goes; available at once, done once they are gone',
      desired: 0,
      pods: ['old:marked', 'old:marked'],
      wantNew: 0,
      budgets: unavailableOnly,
      actions: ['scale 2->0'],
      available: true,
      done: false,
    },
    {
      name: 'desired 0 and nothing left: available and done, nothing written',
      desired: 0,
      pods: [],
      replicas: 0,
      wantNew: 0,
      budgets: unavailableOnly,
      actions: [],
      available: true,
      done: true,
    },
    {
      name: 'group target reached and settled: available and done, nothing written',
      desired: 3,
      pods: ['new', 'new', 'new'],
      wantNew: 3,
      budgets: surgeOnly,
      actions: [],
      available: true,
      done: true,
    },
    {
      name: 'more new pods than the group asks: they stay (a later group would make them again), and it is done',
      desired: 3,
      pods: ['new', 'new', 'old:marked'],
      wantNew: 1,
      budgets: surgeOnly,
      actions: [],
      available: true,
      done: true,
    },
    {
      name: 'surplus new pods after the count shrank are shed',
      desired: 2,
      pods: ['new', 'new', 'new'],
      wantNew: 2,
      budgets: surgeOnly,
      actions: ['scale 3->2'],
      available: true,
      done: true,
    },
    {
      name: 'a target above desired is capped at desired',
      desired: 2,
      pods: ['new', 'new'],
      wantNew: 5,
      budgets: surgeOnly,
      actions: [],
      available: true,
      done: true,
    },
    {
      name: 'a failed pod counts nowhere: the count stays for the ReplicaSet to replace it',
      desired: 3,
      pods: ['new', 'new', 'new:failed'],
      wantNew: 3,
      budgets: surgeOnly,
      actions: [],
      available: false,
      done: false,
    },
  ];

  it.each(rows)('$name', (row) => {
    const step = stepRegion(regionOf(row), row.wantNew, row.budgets, MIN_READY, T0, { standingMarks: row.standingMarks === true });
    expect({ actions: step.actions.map(describeAction), available: step.available, done: step.done }).toEqual({
      actions: row.actions,
      available: row.available,
      done: row.done,
    });
    if (row.blocked === undefined) expect(step.blocked).toBeUndefined();
    else expect(step.blocked).toContain(row.blocked);
  });
});
