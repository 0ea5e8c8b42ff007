import { describe, expect, it } from 'vitest';
import { forcedExits, forcedExitText } from './forced-exit.js';
import { STARTING_MS } from './stuck-pods.js';
import type { PodState, RegionState } from './snapshot.js';
import { podState } from './test-support.js';

const NOW = Date.UTC(2026, 0, 1);
const ready = (name: string, revision = 'new', o: Partial<PodState> = {}) => podState(name, { revision, ready: true, readySince: NOW - 60_000, ...o });
const region = (name: string, pods: PodState[]): RegionState => ({ name, desired: pods.length, targetRevision: 'new', workload: undefined, pods });

describe('forcedExits', () => {
  it.each<[string, PodState[], { replicas: number; partition: number } | undefined]>([
    [
      'Ready pods of both revisions; the stuck one is left out',
      [ready('o1', 'old'), ready('o2', 'old'), ready('n1'), podState('stuck')],
      { replicas: 3, partition: 2 },
    ],
    ['pods of any earlier revision count as old', [ready('o1', 'older'), ready('o2', 'old'), podState('stuck')], { replicas: 2, partition: 2 }],
    [
      'a terminating or evicted Ready pod is not kept',
      [ready('o1', 'old'), ready('o2', 'old', { terminating: true }), ready('o3', 'old', { phase: 'Failed' }), podState('stuck')],
      { replicas: 1, partition: 1 },
    ],
    ['an old pod that is not Ready is not kept', [ready('o1', 'old'), podState('o2', { revision: 'old' }), podState('stuck')], { replicas: 1, partition: 1 }],
    ['nothing when no new pod holds the region', [ready('o1', 'old'), podState('o2', { revision: 'old' }), ready('n1')], undefined],
    ['nothing while the new pod is still starting', [ready('o1', 'old'), podState('young', { createdAt: NOW - STARTING_MS / 2 })], undefined],
  ])('%s', (_, pods, expected) => {
    expect(forcedExits([region('a', pods)], ['a'], NOW)).toEqual(expected === undefined ? [] : [{ region: 'a', ...expected }]);
  });

  it('names only the regions of the rollout, in their order', () => {
    const stuck = (name: string) => region(name, [ready(`${name}-o`, 'old'), podState(`${name}-n`)]);
    expect(forcedExits([stuck('a'), stuck('b'), stuck('c')], ['c', 'a'], NOW).map((e) => e.region)).toEqual(['a', 'c']);
  });
});

describe('forcedExitText', () => {
  it('says which counts to set in Git, region by region', () => {
    expect(
      forcedExitText([
        { region: 'amd64', replicas: 10, partition: 7 },
        { region: 'arm64', replicas: 4, partition: 4 },
      ]),
    ).toBe('to keep what runs Ready instead (forced exit), set in Git: region amd64 replicas 10 partition 7, region arm64 replicas 4 partition 4');
    expect(forcedExitText([])).toBeUndefined();
  });
});
