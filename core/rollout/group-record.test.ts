import { describe, expect, it } from 'vitest';
import type { ExtendedDeployment } from '../api/extended-deployment.js';
import { decide } from './decision.js';
import { formatGroupRecord, groupRecordedAhead, parseGroupRecord, startsGroupOnWorkloads, type GroupRecord } from './group-record.js';
import { planRollout, type RolloutInput } from './planner.js';
import { RolloutEventReason } from './reasons.js';
import type { PodState, RegionState } from './snapshot.js';
import { podState, rolloutInput, webEd } from './test-support.js';

const T0 = Date.UTC(2026, 10, 30, 12);
const S = 1000;
const beta = (subsetType: ExtendedDeployment['spec']['subsetType'] = 'ReplicaSet', strategy: Record<string, unknown> = {}) =>
  webEd([{ name: 'a', replicas: 4 }], { batchSize: 2, minReadySeconds: 0, ...strategy }, subsetType);
const old = (name: string): PodState => podState(name, { revision: 'old', ready: true, readySince: T0 - 600 * S, markedOld: true, markedAt: T0 - 600 * S });
const fresh = (name: string): PodState => podState(name, { ready: true, readySince: T0 - 10 * S });
const region = (pods: PodState[], replicas: number, groupRecord?: GroupRecord): RegionState => ({
  name: 'a',
  desired: 4,
  targetRevision: 'new',
  workload: { name: 'web-a', templateRevision: 'new', replicas, ...(groupRecord && { groupRecord }) },
  pods,
});

/** Rollout R1 started at T0 − 60 s; its Beta group (one new pod, surged) began then. */
const started = decide(rolloutInput(beta(), [region([old('o1'), old('o2'), old('o3'), old('o4')], 4)], T0 - 60 * S), undefined).plan.status;
/** Group 1 available: the new pod Ready, the ReplicaSet at 5 with the four old pods it surged over. */
const group1Done = (record?: GroupRecord) => region([fresh('n1'), old('o1'), old('o2'), old('o3'), old('o4')], 5, record);
const start0 = '2026-11-30T11:00:00.000Z';
const atGroup = (group: number, groupStart: string, rolloutStart = started.rolloutStartTime ?? ''): GroupRecord => ({
  revision: 'R1',
  rolloutStart,
  group,
  groupStart,
});

describe('the group record annotation', () => {
  it('reads what it writes, and nothing from a value it cannot read', () => {
    const record = atGroup(2, '2026-11-30T12:00:00.000Z', '2026-11-30T11:59:00.000Z');
    expect(parseGroupRecord(formatGroupRecord(record))).toEqual(record);
    expect(parseGroupRecord(undefined)).toBeUndefined();
    expect(parseGroupRecord('group 2')).toBeUndefined();
    expect(parseGroupRecord(JSON.stringify({ ...record, group: 0 }))).toBeUndefined();
    expect(parseGroupRecord(JSON.stringify({ revision: 'R1', group: 2 }))).toBeUndefined();
  });
});

describe('a group its ReplicaSet scale-down starts', () => {
  it('records the group on the ReplicaSet in the scale, and the status follows the scale', () => {
    const decision = decide(rolloutInput(beta(), [group1Done()], T0, started), started);
    expect(decision.plan.status.currentGroup).toBe(2);
    expect(decision.plan.actions).toEqual([
      { kind: 'scale', region: 'a', workload: 'web-a', from: 5, replicas: 4, record: atGroup(2, new Date(T0).toISOString()) },
    ]);
    expect(decision.statusWrite).toBe('after');
  });

  it('the status follows the scale too where the plan also marks new pods for the next rollout (standing marks)', () => {
    const input: RolloutInput = { ...rolloutInput(beta(), [group1Done()], T0, started), standingMarks: true };
    const decision = decide(input, started);
    expect(decision.plan.actions.map((a) => [a.kind, a.kind === 'markOld' && a.standing === true])).toEqual([
      ['markOld', true],
      ['scale', false],
    ]);
    expect(decision.statusWrite).toBe('after');
  });

  it('is recorded in the status first when it starts by adding pods', () => {
    // Four pods at 4 replicas: group 2 surges at once, a new pod that would run ahead of the group the status records.
    const decision = decide(rolloutInput(beta(), [region([fresh('n1'), old('o2'), old('o3'), old('o4')], 4)], T0, started), started);
    expect(decision.plan.actions).toMatchObject([{ kind: 'scale', from: 4, replicas: 6 }]);
    expect(decision.statusWrite).toBe('first');
  });

  it('is recorded in the status first for native Deployments and StatefulSets, whose scales carry no record', () => {
    for (const kind of ['Deployment', 'StatefulSet'] as const) {
      const input: RolloutInput = rolloutInput(beta(kind), [group1Done()], T0, started);
      const plan = planRollout(input);
      expect(plan.actions.filter((a) => a.kind === 'scale' && a.record !== undefined)).toEqual([]);
      expect(startsGroupOnWorkloads(plan, input)).toBe(false);
    }
  });

  it('is recorded in the status first with traffic shifting, whose analysis the status keeps per group', () => {
    const traffic = { mode: 'Weighted', route: { parentRefs: [{ name: 'public' }] }, steps: [50] };
    const input = rolloutInput(beta('ReplicaSet', { traffic }), [group1Done()], T0, started);
    expect(startsGroupOnWorkloads(planRollout(input), input)).toBe(false);
  });

  it('records no group outside a running one, and says so: a completed rollout scales with an empty record, never without one', () => {
    const all = [fresh('n1'), fresh('n2'), fresh('n3'), fresh('n4')];
    // Every pod new and available: each look starts the next group, until the rollout is complete.
    let status = started;
    for (let look = 0; look < 5 && status.phase !== 'Healthy'; look++) status = decide(rolloutInput(beta(), [region(all, 4)], T0, status), status).plan.status;
    expect([status.phase, status.lastGroupStartTime]).toEqual(['Healthy', undefined]);
    // Git raises the count: the scale names the record, empty, so the apply changes the annotation rather than removing it.
    const raised = decide(rolloutInput(beta(), [{ ...region(all, 4, atGroup(3, start0)), desired: 5 }], T0, status), status);
    expect(raised.plan.actions).toEqual([{ kind: 'scale', region: 'a', workload: 'web-a', from: 4, replicas: 5, record: null }]);
    expect(formatGroupRecord(null)).toBe('');
    expect(parseGroupRecord(formatGroupRecord(null))).toBeUndefined();
  });

  it("records no group on a keeper's scale, and an empty one on the regional ReplicaSet's as it sheds for the keeper", () => {
    // A grey phase (partition 1) after the rollout: the kept old pod was evicted and the regional ReplicaSet made a new
    // one in its place. The keeper makes the old pod again; once it is available the regional ReplicaSet sheds one.
    const status = { ...started, phase: 'Healthy' as const, currentGroup: undefined, lastGroupStartTime: undefined };
    const news = [fresh('n1'), fresh('n2'), fresh('n3'), fresh('n4')];
    const greyRegion = (keeper: NonNullable<RegionState['keeper']>): RegionState => ({ ...region(news, 4, atGroup(2, start0)), partition: 1, keeper });
    const making = planRollout(rolloutInput(beta(), [greyRegion({ name: 'web-a-old', uid: 'k1', revision: 'old', replicas: 0, pods: [] })], T0, status));
    expect(making.actions).toEqual([{ kind: 'scale', region: 'a', workload: 'web-a-old', from: 0, replicas: 1 }]);
    const made = { name: 'web-a-old', uid: 'k1', revision: 'old', replicas: 1, pods: [old('k-o1')] };
    const sheddingInput = rolloutInput(beta(), [greyRegion(made)], T0, status);
    const shedding = planRollout(sheddingInput);
    expect(shedding.actions).toEqual([{ kind: 'scale', region: 'a', workload: 'web-a', from: 4, replicas: 3, record: null }]);
    // A scale-down with an empty record starts no group.
    expect(startsGroupOnWorkloads(shedding, sheddingInput)).toBe(false);
  });
});

describe('a group a ReplicaSet records past the status (the status write did not happen)', () => {
  const start = new Date(T0 - 20 * S).toISOString();

  it('is the group a successor continues, with the start the record gives', () => {
    // The scale-down of group 2 happened 20 s ago (the ReplicaSet at 4 with its record); the status still says group 1.
    const input = rolloutInput(beta(), [region([fresh('n1'), old('o2'), old('o3'), old('o4')], 4, atGroup(2, start))], T0, started);
    expect(groupRecordedAhead(input)).toEqual(atGroup(2, start));
    const plan = planRollout(input);
    expect(plan.status).toMatchObject({ currentGroup: 2, lastGroupStartTime: start });
    // Group 2 goes on where the scale-down left it: its new pods, under the record, and its Event once written.
    expect(plan.actions).toEqual([{ kind: 'scale', region: 'a', workload: 'web-a', from: 4, replicas: 6, record: atGroup(2, start) }]);
    expect(plan.events.map((e) => e.reason)).toContain(RolloutEventReason.GroupStarted);
  });

  it('is not taken from an earlier rollout of the same revision, nor when the status is as far', () => {
    const rollback = atGroup(3, start, new Date(T0 - 3_600 * S).toISOString());
    const input = (record: GroupRecord) => rolloutInput(beta(), [region([fresh('n1'), old('o2'), old('o3'), old('o4')], 4, record)], T0, started);
    expect(groupRecordedAhead(input(rollback))).toBeUndefined();
    expect(groupRecordedAhead(input(atGroup(1, start)))).toBeUndefined();
    expect(groupRecordedAhead(input({ ...atGroup(2, start), revision: 'R0' }))).toBeUndefined();
    // An earlier rollout's record leaves group 1 where the status has it: its start stays the status's.
    expect(planRollout(input(rollback)).status.lastGroupStartTime).not.toBe(start);
  });
});
