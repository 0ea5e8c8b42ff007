import { describe, expect, it } from 'vitest';
import { extendedDeployment, type ExtendedDeploymentStatus } from '../api/extended-deployment.js';
import type { RolloutAction } from './actions.js';
import type { RolloutInput } from './planner.js';
import { planSession } from './session.js';
import type { RegionState } from './snapshot.js';
import type { AdapterFactory, RegionMove } from './workload-adapter.js';

// The state machine against a made-up workload kind: each region says how far it is, and every write names what
// asked for it (step N, hold, converge), so the rows show which adapter answer the state machine used, and where.

const T0 = Date.UTC(2026, 0, 1);
const STARTED = new Date(T0 - 60_000).toISOString();

/** What a region of the made-up kind shows. */
interface Fake {
  readonly name: string;
  /** Its workload lacks the rendered template. */
  readonly unsynced?: boolean;
  /** It runs another revision, so a new rollout takes it (default true). */
  readonly joins?: boolean;
  /** Groups it takes (default 1). */
  readonly groups?: number;
  /** Its part of groups up to this one is available (default 0). */
  readonly availableThrough?: number;
  /** …and done (default 0). */
  readonly doneThrough?: number;
  /** Why it cannot act in any group. */
  readonly blocked?: string;
  /** It has settled once the rollout is complete (default true). */
  readonly settled?: boolean;
}

const write = (region: string, what: string, group = 0): RolloutAction => ({ kind: 'scale', region, workload: what, from: group, replicas: group });
const describeWrite = (a: RolloutAction) => (a.kind === 'scale' ? `${a.region} ${a.workload}${a.from > 0 ? ` ${a.from}` : ''}` : a.kind);

const fakeKind =
  (fakes: readonly Fake[], members?: string): AdapterFactory =>
  (_input, record) => {
    const of = (name: string): Fake => fakes.find((f) => f.name === name) ?? { name };
    return {
      counts: () => ({ current: 0, updated: 0, old: 0, ready: 0, available: 0, updatedAvailable: 0, oldAvailable: 0, terminating: 0 }),
      syncWait: (r) => (of(r.name).unsynced ? `waiting for ${r.name}` : undefined),
      joins: (r) => of(r.name).joins ?? true,
      groupsOf: (r) => of(r.name).groups ?? 1,
      currentGroup: () => (record?.group !== undefined && record.group >= 1 ? record.group : 1),
      step: (s, group): RegionMove => {
        const f = of(s.name);
        const blocked = f.blocked === undefined ? {} : { blocked: f.blocked };
        return { actions: [write(s.name, 'step', group)], available: group <= (f.availableThrough ?? 0), done: group <= (f.doneThrough ?? 0), ...blocked };
      },
      hold: (r) => [write(r.name, 'hold')],
      converge: (r) => ({ actions: [write(r.name, 'converge')], available: true, done: of(r.name).settled ?? true }),
      groupMembers: () => members,
    };
  };

const ed = (names: readonly string[], strategy: Record<string, unknown> = {}) =>
  extendedDeployment.parse({
    apiVersion: 'extendeddeployment.io/v1beta1',
    kind: 'ExtendedDeployment',
    metadata: { name: 'web', namespace: 'shop' },
    spec: {
      selector: { matchLabels: { app: 'web' } },
      template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'i' }] } },
      regions: names.map((name) => ({ name, replicas: 1 })),
      strategy: { regionOrder: 'Sequential', ...strategy },
    },
  });
const region = (name: string): RegionState => ({
  name,
  desired: 1,
  targetRevision: 'new',
  pods: [],
  workload: { name: `web-${name}`, templateRevision: 'new', replicas: 1 },
});
const recorded = (group: number, extra: Partial<ExtendedDeploymentStatus> = {}): ExtendedDeploymentStatus => ({
  revision: 'R1',
  rolloutRegions: ['a', 'b'],
  currentGroup: group,
  totalGroups: 2,
  phase: 'Progressing',
  lastGroupStartTime: STARTED,
  ...extra,
});

interface Row {
  readonly name: string;
  readonly fakes: readonly Fake[];
  readonly status?: ExtendedDeploymentStatus;
  readonly strategy?: Record<string, unknown>;
  readonly paused?: boolean;
  readonly members?: string;
  /** The fleet gate is closed (core/fleet/gate.ts) with this message. */
  readonly fleetWait?: string;
  readonly want: {
    phase: string;
    reason: string;
    group: number;
    groupStart: string | undefined;
    regions: readonly string[];
    message: string;
    writes: readonly string[];
  };
}

describe('planSession', () => {
  const rows: readonly Row[] = [
    {
      name: 'a new rollout waiting for the sync: its regions recorded, no group, no start, nothing written',
      fakes: [
        { name: 'a', unsynced: true },
        { name: 'b', joins: false },
      ],
      status: { revision: 'R0', rolloutRegions: ['b'], currentGroup: 3, lastGroupStartTime: STARTED },
      want: { phase: 'Progressing', reason: 'WaitingForSync', group: 0, groupStart: undefined, regions: ['a'], message: 'waiting for a', writes: [] },
    },
    {
      name: 'the recorded rollout waiting for the sync keeps its regions, group and start',
      fakes: [{ name: 'a' }, { name: 'b', unsynced: true, joins: false }],
      status: recorded(2),
      want: { phase: 'Progressing', reason: 'WaitingForSync', group: 2, groupStart: STARTED, regions: ['a', 'b'], message: 'waiting for b', writes: [] },
    },
    {
      name: 'a new rollout starts its first group now, over the regions that join',
      fakes: [{ name: 'a' }, { name: 'b', joins: false }],
      want: {
        phase: 'Progressing',
        reason: 'GroupProgressing',
        group: 1,
        groupStart: new Date(T0).toISOString(),
        regions: ['a'],
        message: 'group 1 of 1 in progress',
        writes: ['a step 1', 'b step 1'],
      },
    },
    {
      name: 'the recorded group keeps its start',
      fakes: [{ name: 'a' }, { name: 'b' }],
      status: recorded(2),
      want: {
        phase: 'Progressing',
        reason: 'GroupProgressing',
        group: 2,
        groupStart: STARTED,
        regions: ['a', 'b'],
        message: 'group 2 of 2 in progress',
        writes: ['a step 2', 'b step 2'],
      },
    },
    {
      name: 'every region available: the next group starts now, and the regions step toward it',
      fakes: [
        { name: 'a', availableThrough: 1 },
        { name: 'b', availableThrough: 1 },
      ],
      status: recorded(1),
      want: {
        phase: 'Progressing',
        reason: 'GroupProgressing',
        group: 2,
        groupStart: new Date(T0).toISOString(),
        regions: ['a', 'b'],
        message: 'group 2 of 2 in progress',
        writes: ['a step 2', 'b step 2'],
      },
    },
    {
      name: 'one region not available: the group goes on',
      fakes: [{ name: 'a', availableThrough: 1 }, { name: 'b' }],
      status: recorded(1),
      want: {
        phase: 'Progressing',
        reason: 'GroupProgressing',
        group: 1,
        groupStart: STARTED,
        regions: ['a', 'b'],
        message: 'group 1 of 2 in progress',
        writes: ['a step 1', 'b step 1'],
      },
    },
    {
      name: 'a blocked region: its reason is the message',
      fakes: [{ name: 'a' }, { name: 'b', blocked: 'b cannot' }],
      status: recorded(1),
      want: {
        phase: 'Progressing',
        reason: 'GroupProgressing',
        group: 1,
        groupStart: STARTED,
        regions: ['a', 'b'],
        message: 'b cannot',
        writes: ['a step 1', 'b step 1'],
      },
    },
    {
      name: 'the adapter names what moves in the group',
      fakes: [{ name: 'a' }, { name: 'b' }],
      status: recorded(1),
      members: 'a',
      want: {
        phase: 'Progressing',
        reason: 'GroupProgressing',
        group: 1,
        groupStart: STARTED,
        regions: ['a', 'b'],
        message: 'group 1 of 2 in progress: a',
        writes: ['a step 1', 'b step 1'],
      },
    },
    {
      name: 'a hold: the rollout regions hold, the others keep converging, in region order',
      fakes: [{ name: 'a', joins: false }, { name: 'b' }, { name: 'c' }],
      status: { revision: 'R1', rolloutRegions: ['b', 'c'], currentGroup: 1, lastGroupStartTime: STARTED },
      paused: true,
      want: {
        phase: 'Paused',
        reason: 'Paused',
        group: 1,
        groupStart: STARTED,
        regions: ['b', 'c'],
        message: 'paused by edctl pause in group 1',
        writes: ['a step 1', 'b hold', 'c hold'],
      },
    },
    {
      name: 'waiting for confirmation holds too',
      fakes: [
        { name: 'a', doneThrough: 1 },
        { name: 'b', doneThrough: 1 },
      ],
      status: recorded(1),
      strategy: { needWaitingForConfirm: true },
      want: {
        phase: 'WaitingForConfirmation',
        reason: 'WaitingForConfirmation',
        group: 1,
        groupStart: STARTED,
        regions: ['a', 'b'],
        message: 'group 1 is done; group 2 waits for approval',
        writes: ['a hold', 'b hold'],
      },
    },
    {
      name: 'last group done and every region settled: Healthy, every region converging',
      fakes: [
        { name: 'a', doneThrough: 2 },
        { name: 'b', doneThrough: 2 },
      ],
      status: recorded(2),
      want: {
        phase: 'Healthy',
        reason: 'RolloutComplete',
        group: 2,
        groupStart: undefined,
        regions: ['a', 'b'],
        message: 'every region runs its rendered revision',
        writes: ['a converge', 'b converge'],
      },
    },
    {
      name: 'last group done, a region not settled: Scaling',
      fakes: [
        { name: 'a', doneThrough: 2 },
        { name: 'b', doneThrough: 2, settled: false },
      ],
      status: recorded(2),
      want: {
        phase: 'Progressing',
        reason: 'Scaling',
        group: 2,
        groupStart: undefined,
        regions: ['a', 'b'],
        message: 'regions are converging to their replica counts',
        writes: ['a converge', 'b converge'],
      },
    },
    {
      name: 'no region joins: no groups, complete at once',
      fakes: [
        { name: 'a', joins: false },
        { name: 'b', joins: false },
      ],
      want: {
        phase: 'Healthy',
        reason: 'RolloutComplete',
        group: 0,
        groupStart: undefined,
        regions: [],
        message: 'every region runs its rendered revision',
        writes: ['a converge', 'b converge'],
      },
    },
    {
      name: 'a new rollout of a fleet member waits for the earlier waves: not recorded, the joining regions hold, the others converge',
      fakes: [{ name: 'a', joins: false }, { name: 'b' }],
      status: { revision: 'R0', rolloutRegions: ['a'], rolloutStartTime: STARTED, currentGroup: 1, totalGroups: 1, phase: 'Healthy' },
      fleetWait: 'waiting for canary-1',
      want: {
        phase: 'Progressing',
        reason: 'WaitingForFleet',
        group: 0,
        groupStart: undefined,
        regions: ['a'],
        message: 'waiting for canary-1',
        writes: ['a step', 'b hold'],
      },
    },
    {
      name: 'a rollout recorded while it waited for the sync, without a group yet, waits for the earlier waves too',
      fakes: [{ name: 'a' }, { name: 'b' }],
      status: { revision: 'R1', rolloutRegions: ['a', 'b'], currentGroup: 0, phase: 'Progressing' },
      fleetWait: 'waiting for canary-1',
      want: {
        phase: 'Progressing',
        reason: 'WaitingForFleet',
        group: 0,
        groupStart: undefined,
        regions: ['a', 'b'],
        message: 'waiting for canary-1',
        writes: ['a hold', 'b hold'],
      },
    },
    {
      name: 'a rollout already recorded goes on when the fleet gate closes (the gate gates the first group only)',
      fakes: [{ name: 'a' }, { name: 'b' }],
      status: recorded(1),
      fleetWait: 'waiting for canary-1',
      want: {
        phase: 'Progressing',
        reason: 'GroupProgressing',
        group: 1,
        groupStart: STARTED,
        regions: ['a', 'b'],
        message: 'group 1 of 2 in progress',
        writes: ['a step 1', 'b step 1'],
      },
    },
    {
      name: 'a closed fleet gate holds no count-only change: no region joins, complete at once',
      fakes: [
        { name: 'a', joins: false },
        { name: 'b', joins: false },
      ],
      fleetWait: 'waiting for canary-1',
      want: {
        phase: 'Healthy',
        reason: 'RolloutComplete',
        group: 0,
        groupStart: undefined,
        regions: [],
        message: 'every region runs its rendered revision',
        writes: ['a converge', 'b converge'],
      },
    },
  ];

  it.each(rows)('$name', (row) => {
    const names = row.fakes.map((f) => f.name);
    const input: RolloutInput = {
      ed: ed(names, row.strategy),
      generation: 1,
      rolloutRevision: 'R1',
      regions: names.map(region),
      status: row.status,
      controls: { paused: row.paused ?? false, aborted: false, approvedThrough: undefined, resumedAt: undefined },
      now: T0,
    };
    const plan = planSession(input, fakeKind(row.fakes, row.members), new Set(), row.fleetWait === undefined ? undefined : { message: row.fleetWait });
    const progressing = plan.status.conditions?.find((c) => c.type === 'Progressing');
    expect({
      phase: plan.status.phase,
      reason: progressing?.reason,
      group: plan.status.currentGroup,
      groupStart: plan.status.lastGroupStartTime,
      regions: plan.status.rolloutRegions,
      message: progressing?.message,
      writes: plan.actions.map(describeWrite),
    }).toEqual(row.want);
  });
});
