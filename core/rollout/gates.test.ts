import { describe, expect, it } from 'vitest';
import { rolloutStrategy } from '../api/extended-deployment.js';
import { decideGate, type Gate, type GateInput, type RolloutControls } from './gates.js';

const T0 = Date.UTC(2026, 0, 1);
const DEADLINE = 300_000;

/** Group 2 of 3 of rollout R1, started at T0 and looked at 10 s later, neither available nor done, no controls. */
function gateInput(
  over: { strategy?: Record<string, unknown>; controls?: Partial<RolloutControls> } & Partial<Omit<GateInput, 'strategy' | 'controls'>>,
): GateInput {
  const { strategy, controls, ...rest } = over;
  return {
    strategy: rolloutStrategy.parse(strategy ?? {}),
    rolloutRevision: 'R1',
    controls: { paused: false, aborted: false, approvedThrough: undefined, resumedAt: undefined, ...controls },
    now: T0 + 10_000,
    group: 2,
    totalGroups: 3,
    groupAvailable: false,
    groupDone: false,
    groupStart: T0,
    ...rest,
  };
}

const confirm = { needWaitingForConfirm: true };
const paused = (message: string): Gate => ({ kind: 'hold', phase: 'Paused', reason: 'Paused', message });
const aborted: Gate = { kind: 'hold', phase: 'Paused', reason: 'Aborted', message: 'rollout aborted in group 2; it holds until Git changes or it is resumed' };
const waiting = (group: number): Gate => ({
  kind: 'hold',
  phase: 'WaitingForConfirmation',
  reason: 'WaitingForConfirmation',
  message: `group ${group} is done; group ${group + 1} waits for approval`,
});
const degraded = (group: number, seconds: number): Gate => ({
  kind: 'hold',
  phase: 'Degraded',
  reason: 'ProgressDeadlineExceeded',
  message: `group ${group} did not finish within ${seconds}s; the rollout stopped`,
});

describe('decideGate', () => {
  const rows: readonly { name: string; input: GateInput; want: Gate }[] = [
    // Completion comes first: nothing holds a finished rollout.
    { name: 'no groups: complete', input: gateInput({ group: 0, totalGroups: 0 }), want: { kind: 'complete' } },
    { name: 'last group done: complete', input: gateInput({ group: 3, groupAvailable: true, groupDone: true }), want: { kind: 'complete' } },
    {
      name: 'last group done while aborted and paused: still complete',
      input: gateInput({ group: 3, groupDone: true, controls: { aborted: true, paused: true } }),
      want: { kind: 'complete' },
    },
    { name: 'last group available but not done: goes on until it settles', input: gateInput({ group: 3, groupAvailable: true }), want: { kind: 'continue' } },
    { name: 'recorded group past the last one, done: complete', input: gateInput({ group: 4, groupDone: true }), want: { kind: 'complete' } },
    // Abort and pause hold wherever the rollout is.
    { name: 'aborted: holds as Paused with reason Aborted', input: gateInput({ controls: { aborted: true } }), want: aborted },
    { name: 'aborted and paused: abort wins', input: gateInput({ controls: { aborted: true, paused: true } }), want: aborted },
    { name: 'edctl pause: holds', input: gateInput({ controls: { paused: true } }), want: paused('paused by edctl pause in group 2') },
    { name: 'strategy.pause: holds, and says so', input: gateInput({ strategy: { pause: true } }), want: paused('paused by strategy.pause in group 2') },
    {
      name: 'paused with the group available: holds instead of advancing',
      input: gateInput({ groupAvailable: true, groupDone: true, controls: { paused: true } }),
      want: paused('paused by edctl pause in group 2'),
    },
    {
      name: 'paused past the deadline: Paused, not Degraded',
      input: gateInput({ now: T0 + DEADLINE + 1, controls: { paused: true } }),
      want: paused('paused by edctl pause in group 2'),
    },
    // The barrier: the next group starts once every region's group is available.
    { name: 'group neither available nor done: continue', input: gateInput({}), want: { kind: 'continue' } },
    { name: 'group available (old pods still leaving): advance', input: gateInput({ groupAvailable: true }), want: { kind: 'advance' } },
    { name: 'group done: advance', input: gateInput({ groupDone: true }), want: { kind: 'advance' } },
    {
      name: 'group available past the deadline: advance, the deadline is for groups that stall',
      input: gateInput({ groupAvailable: true, now: T0 + DEADLINE + 1 }),
      want: { kind: 'advance' },
    },
    // Confirmation.
    {
      name: 'confirmation on, group available but not done: settles first',
      input: gateInput({ strategy: confirm, groupAvailable: true }),
      want: { kind: 'continue' },
    },
    {
      name: 'confirmation on, group done: waits for approval',
      input: gateInput({ strategy: confirm, groupAvailable: true, groupDone: true }),
      want: waiting(2),
    },
    {
      name: 'confirmation on, done, waiting past the deadline: still waiting, not Degraded',
      input: gateInput({ strategy: confirm, groupDone: true, now: T0 + DEADLINE + 1 }),
      want: waiting(2),
    },
    {
      name: 'edctl approve through the next group: advance',
      input: gateInput({ strategy: confirm, groupAvailable: true, controls: { approvedThrough: 3 } }),
      want: { kind: 'advance' },
    },
    {
      name: 'edctl approve through this group only: waits',
      input: gateInput({ strategy: confirm, groupDone: true, controls: { approvedThrough: 2 } }),
      want: waiting(2),
    },
    {
      name: 'strategy.approval for this revision through the next group: advance',
      input: gateInput({ strategy: { ...confirm, approval: { revision: 'R1', throughGroup: 3 } }, groupDone: true }),
      want: { kind: 'advance' },
    },
    {
      name: 'strategy.approval for another revision: waits',
      input: gateInput({ strategy: { ...confirm, approval: { revision: 'R0', throughGroup: 3 } }, groupDone: true }),
      want: waiting(2),
    },
    {
      name: 'strategy.approval through this group only: waits',
      input: gateInput({ strategy: { ...confirm, approval: { revision: 'R1', throughGroup: 2 } }, groupDone: true }),
      want: waiting(2),
    },
    {
      name: 'needFirstConfirm: the first gate waits',
      input: gateInput({ strategy: { ...confirm, needFirstConfirm: true }, group: 1, groupDone: true }),
      want: waiting(1),
    },
    {
      name: 'needFirstConfirm: later gates pass',
      input: gateInput({ strategy: { ...confirm, needFirstConfirm: true }, group: 2, groupDone: true }),
      want: { kind: 'advance' },
    },
    {
      name: 'needFirstConfirm without needWaitingForConfirm: no gate',
      input: gateInput({ strategy: { needFirstConfirm: true }, group: 1, groupDone: true }),
      want: { kind: 'advance' },
    },
    // The progress deadline.
    { name: 'deadline (syncWaitTimeout 0 means 300 s) passed: Degraded', input: gateInput({ now: T0 + DEADLINE + 1 }), want: degraded(2, 300) },
    { name: 'deadline reached exactly: not yet passed', input: gateInput({ now: T0 + DEADLINE }), want: { kind: 'continue' } },
    { name: 'syncWaitTimeout 60: Degraded after 60 s', input: gateInput({ strategy: { syncWaitTimeout: 60 }, now: T0 + 60_001 }), want: degraded(2, 60) },
    {
      name: 'syncWaitTimeout 600: not Degraded after 301 s',
      input: gateInput({ strategy: { syncWaitTimeout: 600 }, now: T0 + DEADLINE + 1_000 }),
      want: { kind: 'continue' },
    },
    {
      name: 'resumed after the group started: the deadline counts from the resume',
      input: gateInput({ now: T0 + DEADLINE + 1, controls: { resumedAt: T0 + 10_000 } }),
      want: { kind: 'continue' },
    },
    {
      name: 'resumed long enough ago: Degraded again',
      input: gateInput({ now: T0 + 10_000 + DEADLINE + 1, controls: { resumedAt: T0 + 10_000 } }),
      want: degraded(2, 300),
    },
    {
      name: 'resumed before the group started: the group start counts',
      input: gateInput({ now: T0 + DEADLINE + 1, controls: { resumedAt: T0 - 60_000 } }),
      want: degraded(2, 300),
    },
    {
      name: 'confirmation on, available but not settled past the deadline: Degraded',
      input: gateInput({ strategy: confirm, groupAvailable: true, now: T0 + DEADLINE + 1 }),
      want: degraded(2, 300),
    },
  ];

  it.each(rows)('$name', ({ input, want }) => {
    expect(decideGate(input)).toEqual(want);
  });
});
