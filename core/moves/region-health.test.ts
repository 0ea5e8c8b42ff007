import { describe, expect, it } from 'vitest';
import { DEFAULT_FAILURE_POLICY, regionHealth, thresholdNodes } from './region-health.js';
import { downNode, node } from './nodes-test-support.js';

const T0 = 1_000_000;

describe('thresholdNodes', () => {
  it.each([
    ['100%', 3, 3],
    ['50%', 3, 2],
    ['1%', 3, 1],
    [2, 3, 2],
    [0, 3, 1],
    ['100%', 0, 1],
  ] as const)('%j of %d nodes is %d', (threshold, nodes, expected) => {
    expect(thresholdNodes(threshold, nodes)).toBe(expected);
  });
});

describe('regionHealth', () => {
  it('all nodes ready: Healthy', () => {
    const h = regionHealth([node('a'), node('b')], DEFAULT_FAILURE_POLICY, T0);
    expect(h).toMatchObject({ phase: 'Healthy', nodes: 2, readyNodes: 2, failingNodes: 0 });
  });

  it('no node: Failed at once', () => {
    expect(regionHealth([], DEFAULT_FAILURE_POLICY, T0)).toMatchObject({ phase: 'Failed', nodes: 0, failsAt: 0 });
  });

  it('every node failing but for less than the toleration: Degraded, failing at the last one + toleration', () => {
    const h = regionHealth([downNode('a', T0 - 20_000), downNode('b', T0 - 10_000)], DEFAULT_FAILURE_POLICY, T0);
    expect(h).toMatchObject({ phase: 'Degraded', failingNodes: 2, taintedNodes: 2, notReadyNodes: 2, readyNodes: 0, failsAt: T0 + 20_999 });
  });

  it('every node failing for the toleration: Failed', () => {
    const h = regionHealth([downNode('a', T0 - 40_000), downNode('b', T0 - 31_000)], DEFAULT_FAILURE_POLICY, T0);
    expect(h.phase).toBe('Failed');
    // Shown as failing since exactly 30 s ago: it may have been 29.001 s, so not yet.
    expect(regionHealth([downNode('a', T0 - 40_000), downNode('b', T0 - 30_000)], DEFAULT_FAILURE_POLICY, T0).phase).toBe('Degraded');
  });

  it('a partial failure below the threshold never fails the region', () => {
    const h = regionHealth([downNode('a', T0 - 600_000), node('b')], DEFAULT_FAILURE_POLICY, T0);
    expect(h).toMatchObject({ phase: 'Degraded', failsAt: undefined });
  });

  it('a lower threshold fails the region on part of its nodes', () => {
    const h = regionHealth([downNode('a', T0 - 600_000), node('b'), node('c')], { failureThreshold: '30%', tolerationSeconds: 60 }, T0);
    expect(h).toMatchObject({ phase: 'Failed', threshold: 1 });
  });

  it('a cordoned node degrades the region but is not failing', () => {
    const h = regionHealth([node('a', { unschedulable: true }), node('b')], DEFAULT_FAILURE_POLICY, T0);
    expect(h).toMatchObject({ phase: 'Degraded', unschedulableNodes: 1, readyNodes: 1, failingNodes: 0 });
  });
});
