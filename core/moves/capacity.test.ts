import { describe, expect, it } from 'vitest';
import { regionRoom, type PodPlacement } from './capacity.js';
import { downNode, node } from './nodes-test-support.js';

const small: PodPlacement = { requests: { cpu: 1, memory: 2 ** 30 }, tolerations: [], nodeSelector: {} };

describe('regionRoom', () => {
  it('sums what each node has left after the pods bound to it', () => {
    expect(regionRoom([node('a'), node('b', { requested: { cpu: 3, pods: 2 } })], small)).toBe(4 + 1);
  });

  it('skips failing, cordoned and untolerated nodes', () => {
    const nodes = [
      downNode('down', 0),
      node('cordoned', { unschedulable: true }),
      node('gpu', { taints: [{ key: 'nvidia.com/gpu', effect: 'NoSchedule' }] }),
      node('ok'),
    ];
    expect(regionRoom(nodes, small)).toBe(4);
    expect(regionRoom(nodes, { ...small, tolerations: [{ key: 'nvidia.com/gpu', operator: 'Exists' }] })).toBe(8);
  });

  it('honours the node selector', () => {
    const nodes = [node('a', { labels: { disk: 'ssd' } }), node('b')];
    expect(regionRoom(nodes, { ...small, nodeSelector: { disk: 'ssd' } })).toBe(4);
  });

  it('counts extended resources such as GPUs', () => {
    const gpuNode = node('g', { allocatable: { cpu: 8, memory: 32 * 2 ** 30, pods: 20, 'nvidia.com/gpu': 2 }, requested: { 'nvidia.com/gpu': 1, pods: 1 } });
    expect(regionRoom([gpuNode, node('cpu-only')], { ...small, requests: { cpu: 1, 'nvidia.com/gpu': 1 } })).toBe(1);
  });

  it('counts pods without requests against the pod limit', () => {
    expect(regionRoom([node('a', { requested: { pods: 19 } })], { ...small, requests: {} })).toBe(1);
  });
});
