import { describe, expect, it } from 'vitest';
import type { ExtendedDeploymentStatus } from '../api/extended-deployment.js';
import { growingRegions, renderedRevisionOf, rolloutKey } from './growth.js';
import type { RegionState } from './snapshot.js';
import { podState } from './test-support.js';

const region = (name: string, desired: number, pods = 0, revision = 'new'): RegionState => ({
  name,
  desired,
  targetRevision: 'new',
  workload: { name: `web-${name}`, templateRevision: 'new', replicas: pods },
  pods: Array.from({ length: pods }, (_, i) => podState(`${name}-${i}`, { revision, ready: true })),
});
const rs = { subsetType: 'ReplicaSet' as const };

describe('growingRegions: regions created by groups', () => {
  const recorded = (regions: ExtendedDeploymentStatus['regions']): ExtendedDeploymentStatus => ({ revision: 'R', phase: 'Healthy', regions });
  it.each<[string, RegionState[], ExtendedDeploymentStatus | undefined, string[]]>([
    ['a new ExtendedDeployment: every region with replicas', [region('a', 3, 1), region('b', 2), region('z', 0)], undefined, ['a', 'b']],
    ['a region added', [region('a', 3, 3), region('b', 2)], recorded([{ name: 'a', desired: 3 }]), ['b']],
    [
      'a region grown from 0 in Git',
      [region('a', 3, 3), region('b', 2)],
      recorded([
        { name: 'a', desired: 3 },
        { name: 'b', desired: 0 },
      ]),
      ['b'],
    ],
    ['a region that runs its count already (an adopted workload)', [region('a', 3, 3)], undefined, []],
    ['a region that runs old pods at its count (an upgrade, not a creation)', [region('a', 3, 3, 'old')], undefined, []],
    ['a region scaled up from a count above 0', [region('a', 5, 3)], recorded([{ name: 'a', desired: 3 }]), []],
    ['a region whose replicas all moved away is not new (its share was recorded)', [region('a', 3, 0)], recorded([{ name: 'a', desired: 0, movedOut: 3 }]), []],
    [
      'a region that was empty but ran replicas moved in is new by its own share',
      [region('a', 2, 1)],
      recorded([{ name: 'a', desired: 1, movedIn: 1 }]),
      ['a'],
    ],
  ])('%s', (_, regions, status, want) => {
    expect([...growingRegions(rs, regions, status)]).toEqual(want);
  });

  it('native Deployments (compat mode) are created at once', () => {
    expect([...growingRegions({ subsetType: 'Deployment' }, [region('a', 3)], undefined)]).toEqual([]);
  });
});

describe('rolloutKey: which rollout approvals and aborts name', () => {
  const status = (revision: string | undefined, phase: ExtendedDeploymentStatus['phase']): ExtendedDeploymentStatus => ({ revision, phase });
  const grows = new Set(['b']);
  const none = new Set<string>();
  it.each<[string, ExtendedDeploymentStatus | undefined, ReadonlySet<string>, string]>([
    ['a first rollout', undefined, grows, 'R'],
    ['a new render', status('Q', 'Healthy'), grows, 'R'],
    ['a new render after growth sessions of the previous one', status('Q+2', 'Progressing'), none, 'R'],
    ['the rollout under way continues', status('R', 'Progressing'), grows, 'R'],
    ['a completed rollout with nothing growing stays', status('R', 'Healthy'), none, 'R'],
    ['growth after the rollout of the same render completed', status('R', 'Healthy'), grows, 'R+1'],
    ['the second growth on it', status('R+1', 'Healthy'), grows, 'R+2'],
    ['a growth under way continues', status('R+1', 'WaitingForConfirmation'), none, 'R+1'],
  ])('%s', (_, recorded, growing, want) => {
    expect(rolloutKey('R', recorded, growing)).toBe(want);
  });

  it.each([
    ['R', 'R'],
    ['R+3', 'R'],
  ])('%s belongs to the render %s', (key, rendered) => {
    expect(renderedRevisionOf(key)).toBe(rendered);
  });
});
