import { describe, expect, it } from 'vitest';
import type { ExtendedDeploymentStatus } from '../api/extended-deployment.js';
import { decide, decideInvalid, type StatusWrite } from './decision.js';
import type { RolloutInput } from './planner.js';
import type { PodState } from './snapshot.js';
import { webEd } from './test-support.js';

const NOW = Date.UTC(2026, 0, 1, 12);
const ed = webEd([{ name: 'a', replicas: 2 }], { batchSize: 1, minReadySeconds: 0 });
const pod = (name: string, revision: string): PodState => ({
  name,
  uid: name,
  revision,
  assigned: true,
  running: true,
  ready: true,
  readySince: NOW - 60_000,
  terminating: false,
  markedOld: false,
});
const input = (pods: PodState[], status: ExtendedDeploymentStatus | undefined): RolloutInput => ({
  ed,
  generation: 1,
  rolloutRevision: 'R',
  regions: [{ name: 'a', desired: 2, targetRevision: 'new', workload: { name: 'web-a', templateRevision: 'new', replicas: 2 }, pods }],
  status,
  controls: { paused: false, aborted: false, approvedThrough: undefined, resumedAt: undefined },
  now: NOW,
});

describe('decide', () => {
  const settled = decide(input([pod('p1', 'new'), pod('p2', 'new')], undefined), undefined).plan.status;
  const rows: {
    name: string;
    pods: PodState[];
    status: ExtendedDeploymentStatus | undefined;
    written: unknown;
    statusWrite: StatusWrite;
    progressOnly: boolean;
    looks: boolean;
  }[] = [
    {
      name: 'a new rollout is recorded before anything acts on it',
      pods: [pod('p1', 'old'), pod('p2', 'old')],
      status: undefined,
      written: undefined,
      statusWrite: 'first',
      progressOnly: false,
      looks: true,
    },
    {
      name: 'a status the object already shows is not written',
      pods: [pod('p1', 'new'), pod('p2', 'new')],
      status: settled,
      written: settled,
      statusWrite: 'none',
      progressOnly: false,
      looks: false,
    },
    {
      name: 'a change of counts alone goes out after the actions and may be paced',
      pods: [pod('p1', 'new'), pod('p2', 'new')],
      status: settled,
      written: { ...settled, replicas: 1 },
      statusWrite: 'after',
      progressOnly: true,
      looks: false,
    },
    {
      name: 'a changed phase is not progress only',
      pods: [pod('p1', 'new'), pod('p2', 'new')],
      status: settled,
      written: { ...settled, phase: 'Progressing' },
      statusWrite: 'after',
      progressOnly: false,
      looks: false,
    },
  ];
  for (const row of rows) {
    it(row.name, () => {
      const decision = decide(input(row.pods, row.status), row.written);
      expect({ statusWrite: decision.statusWrite, progressOnly: decision.progressOnly, looks: decision.lookAgainInMs !== undefined }).toEqual({
        statusWrite: row.statusWrite,
        progressOnly: row.progressOnly,
        looks: row.looks,
      });
    });
  }

  it('a first write carries the group the actions start', () => {
    const decision = decide(input([pod('p1', 'old'), pod('p2', 'old')], undefined), undefined);
    expect(decision.plan.status.currentGroup).toBe(1);
    expect(decision.plan.actions.length).toBeGreaterThan(0);
  });
});

describe('decide: a wait for the sync', () => {
  const previous = { ...decide(input([pod('p1', 'old'), pod('p2', 'old')], undefined), undefined).plan.status, revision: 'Q', phase: 'Healthy' as const };
  // The rollout revision R is rendered, but region a's ReplicaSet still carries the template of the last one.
  const unsynced = (pods: PodState[], status: ExtendedDeploymentStatus | undefined): RolloutInput => {
    const base = input(pods, status);
    return { ...base, regions: base.regions.map((r) => ({ ...r, workload: { ...r.workload!, templateRevision: 'old' } })) };
  };
  const oldPods = [pod('p1', 'old'), pod('p2', 'old')];

  it('that has just begun may be held: its status reports nothing else and nothing acts', () => {
    const decision = decide(unsynced(oldPods, previous), previous);
    expect(decision.plan.status.conditions?.find((c) => c.type === 'Progressing')?.reason).toBe('WaitingForSync');
    expect(decision.plan.actions).toEqual([]);
    expect(decision.statusWrite).toBe('first');
    expect(decision.syncWaitBegins).toBe(true);
  });

  it('that the status reports already is not held again', () => {
    const reported = decide(unsynced(oldPods, previous), previous).plan.status;
    expect(decide(unsynced(oldPods, reported), reported).syncWaitBegins).toBe(false);
  });

  it('with a readiness gate to open is not held: the gate cannot wait', () => {
    const gated = [{ ...pod('p1', 'old'), gated: true, gateOpen: false }, pod('p2', 'old')];
    const decision = decide(unsynced(gated, previous), previous);
    expect(decision.plan.actions.map((a) => a.kind)).toEqual(['openGate']);
    expect(decision.syncWaitBegins).toBe(false);
  });

  it('is no wait once the workloads carry the template: the rollout starts', () => {
    const decision = decide(input(oldPods, previous), previous);
    expect(decision.plan.status.currentGroup).toBe(1);
    expect(decision.syncWaitBegins).toBe(false);
  });
});

describe('decideInvalid', () => {
  const problems = [{ object: { kind: 'ExtendedDeployment', namespace: 'shop', name: 'web' }, path: ['spec', 'replicas'], message: 'must not be negative' }];
  it('reports new problems in the status and an Event', () => {
    const decision = decideInvalid({ problems, generation: 3, status: undefined }, undefined, NOW);
    expect(decision.statusWrite).toBe('after');
    expect(decision.status.conditions?.find((c) => c.type === 'Valid')).toMatchObject({
      status: 'False',
      reason: 'InvalidSpec',
      message: 'spec.replicas: must not be negative',
    });
    expect(decision.events.map((e) => e.reason)).toEqual(['InvalidSpec']);
  });
  it('writes nothing and records no Event for problems already reported', () => {
    const first = decideInvalid({ problems, generation: 3, status: undefined }, undefined, NOW);
    const again = decideInvalid({ problems, generation: 3, status: first.status }, first.status, NOW + 1_000);
    expect({ statusWrite: again.statusWrite, events: again.events }).toEqual({ statusWrite: 'none', events: [] });
  });
});
