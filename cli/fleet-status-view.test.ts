import { describe, expect, it } from 'vitest';
import type { ExtendedDeploymentObject } from '../core/kube/objects.js';
import { fleetStatusReport, fleetStatusText, memberRow } from './fleet-status-view.js';

const R = '3f9a1c0d2e';

/** A member's object as its API server returns it. */
function member(cluster: string, wave: number, replicas: number, status: Record<string, unknown>, release = R, generation = 3): ExtendedDeploymentObject {
  return {
    metadata: { name: 'web', namespace: 'shop', generation },
    spec: { replicas, fleet: { name: 'prod', cluster, wave, release, members: [] } },
    status: { observedGeneration: 3, ...status },
  };
}

describe('memberRow', () => {
  it('a member Healthy at the release: its share, what it runs, available, and the release marked completed', () => {
    const row = memberRow({
      cluster: 'a',
      ed: member('a', 0, 4, { phase: 'Healthy', regions: [{ available: 3 }, { available: 1 }], fleet: { release: R, share: 4, gate: { state: 'Open' } } }),
    });
    expect(row).toEqual({
      cluster: 'a',
      wave: 0,
      share: 4,
      runs: 4,
      available: 4,
      release: R,
      completed: R,
      phase: 'Healthy',
      groups: undefined,
      gate: 'Open',
      notes: [],
    });
  });

  it('what it runs counts a handover and failover additions, each named in the notes', () => {
    const fleet = {
      share: 6,
      handover: { replicas: 4, since: 'x', waitingFor: ['d', 'e'], message: 'm' },
      additions: [
        { cluster: 'us-1', replicas: 2, since: 'x' },
        { cluster: 'ap-1', replicas: 0, since: 'x' },
      ],
      gate: { state: 'Waiting', reason: 'Soaking' },
    };
    const row = memberRow({ cluster: 'b', ed: member('b', 1, 4, { phase: 'Progressing', groups: '1/3', fleet }) });
    expect(row).toMatchObject({
      share: 4,
      runs: 8,
      gate: 'Waiting (Soaking)',
      groups: '1/3',
      notes: ['handover: keeps 6, waiting for d, e', '+2 for us-1 (failover)'],
    });
  });

  it('says when the status is behind the spec, and why a member could not be read', () => {
    expect(memberRow({ cluster: 'c', ed: member('c', 1, 2, {}, R, 4) }).notes).toEqual(['status behind the spec (generation 4)']);
    expect(memberRow({ cluster: 'd', error: 'cannot reach the Kubernetes API server at https://d:6443: ECONNREFUSED' })).toEqual({
      cluster: 'd',
      notes: ['cannot reach the Kubernetes API server at https://d:6443: ECONNREFUSED'],
    });
  });
});

describe('fleetStatusText', () => {
  it('one table over the members, the release they all render in the heading', () => {
    const report = fleetStatusReport('shop', 'web', [
      { cluster: 'a', ed: member('a', 0, 4, { phase: 'Healthy', regions: [{ available: 4 }], fleet: { release: R, share: 4 } }) },
      { cluster: 'b', error: 'context "b" does not exist' },
    ]);
    expect(fleetStatusText(report)).toBe(
      [
        'Fleet prod: ExtendedDeployment shop/web',
        `Release ${R} in every member read`,
        '',
        'CLUSTER  WAVE  SHARE  RUNS  AVAILABLE  COMPLETED     PHASE    GROUPS  GATE  NOTES',
        `a        0     4      4     4          ${R} ✓  Healthy  -       -`,
        'b        -     -      -     -          -             -        -       -     context "b" does not exist',
        '',
      ].join('\n'),
    );
  });

  it('members that render different releases are called out: a sync is on its way', () => {
    const report = fleetStatusReport('shop', 'web', [
      { cluster: 'a', ed: member('a', 0, 4, { fleet: { release: '0000000000' } }) },
      { cluster: 'b', ed: member('b', 1, 4, {}, '0000000000') },
    ]);
    expect(report.releases).toEqual(['0000000000', R]);
    expect(fleetStatusText(report)).toContain(`Releases 0000000000, ${R}: the members render different releases (a sync is on its way)`);
    expect(fleetStatusText(report)).toContain('0000000000  ');
  });
});
