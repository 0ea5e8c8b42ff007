import { describe, expect, it } from 'vitest';
import { DEFAULT_FAILURE_POLICY, regionHealth } from './region-health.js';
import { regionStatus } from './region-status.js';
import { downNode, node } from './nodes-test-support.js';

const T0 = Date.UTC(2026, 0, 1);
const healthy = regionHealth([node('a'), node('b')], DEFAULT_FAILURE_POLICY, T0);
const failed = regionHealth([downNode('a', T0 - 60_000), downNode('b', T0 - 60_000)], DEFAULT_FAILURE_POLICY, T0);

describe('regionStatus', () => {
  it('reports counts and phase, and no overlap', () => {
    const { status, events } = regionStatus({ health: healthy, overlaps: [], generation: 2, previous: undefined, now: T0 });
    expect(status).toMatchObject({ observedGeneration: 2, phase: 'Healthy', nodes: 2, readyNodes: 2, failingNodes: 0 });
    expect(status.conditions).toEqual([expect.objectContaining({ type: 'NodesOverlap', status: 'False' })]);
    expect(events).toEqual([]);
  });

  it('reports a node in two regions with a condition and one Warning', () => {
    const overlaps = [{ node: 'n1', regions: ['amd', 'zone-a'] }];
    const first = regionStatus({ health: healthy, overlaps, generation: 1, previous: undefined, now: T0 });
    expect(first.status.conditions?.[0]).toMatchObject({
      status: 'True',
      reason: 'NodeInSeveralRegions',
      message: 'node n1 matches amd, zone-a and counts in amd only',
    });
    expect(first.events.map((e) => e.reason)).toEqual(['NodeInSeveralRegions']);
    const again = regionStatus({ health: healthy, overlaps, generation: 1, previous: first.status, now: T0 + 1000 });
    expect(again.events).toEqual([]);
    expect(again.status).toEqual(first.status);
  });

  it('emits RegionFailed and RegionRecovered on the transitions only', () => {
    const down = regionStatus({ health: failed, overlaps: [], generation: 1, previous: { phase: 'Healthy' }, now: T0 });
    expect(down.events.map((e) => e.reason)).toEqual(['RegionFailed']);
    expect(regionStatus({ health: failed, overlaps: [], generation: 1, previous: down.status, now: T0 }).events).toEqual([]);
    expect(regionStatus({ health: healthy, overlaps: [], generation: 1, previous: down.status, now: T0 }).events.map((e) => e.reason)).toEqual([
      'RegionRecovered',
    ]);
  });
});
