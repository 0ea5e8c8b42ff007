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
