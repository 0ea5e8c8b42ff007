import { describe, expect, it } from 'vitest';
import { assignNodes, failing, type NamedRegionSelector, failingSince, schedulableFor, tolerates } from './nodes.js';
import { downNode, node } from './nodes-test-support.js';

describe('failing nodes', () => {
  it('a Ready node without controller taints is not failing', () => {
    expect(failing(node('a'))).toBe(false);
    expect(failingSince(node('a'))).toBeUndefined();
  });

  it('counts from the earliest sign: NotReady or the controller taint', () => {
    const n = node('a', { ready: false, readySince: 5_000, taints: [{ key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule', timeAdded: 3_000 }] });
    // Whole seconds: the latest instant of that second, so a toleration is never cut short.
    expect(failingSince(n)).toBe(3_999);
    expect(failingSince(downNode('b', 7_000))).toBe(7_999);
  });

  it('a Ready node still carrying the controller taint is failing', () => {
    expect(failing(node('a', { taints: [{ key: 'node.kubernetes.io/unreachable', effect: 'NoExecute', timeAdded: 1 }] }))).toBe(true);
  });

  it('a node that never reported has failed since forever', () => {
    expect(failingSince(node('a', { ready: false }))).toBe(0);
  });
});

describe('tolerations', () => {
  const gpu = { key: 'nvidia.com/gpu', value: 'present', effect: 'NoSchedule' };
  it.each([
    [{ key: 'nvidia.com/gpu', operator: 'Exists' as const }, true],
    [{ key: 'nvidia.com/gpu', operator: 'Equal' as const, value: 'present' }, true],
    [{ key: 'nvidia.com/gpu', value: 'present', effect: 'NoSchedule' as const }, true],
    [{ key: 'nvidia.com/gpu', value: 'absent' }, false],
    [{ key: 'nvidia.com/gpu', operator: 'Exists' as const, effect: 'NoExecute' as const }, false],
    [{ operator: 'Exists' as const }, true],
    [{ key: 'other', operator: 'Exists' as const }, false],
  ])('%j tolerates the GPU taint: %s', (toleration, expected) => {
    expect(tolerates(toleration, gpu)).toBe(expected);
  });

  it('ignores PreferNoSchedule taints and needs every hard one tolerated', () => {
    const n = node('a', { taints: [gpu, { key: 'soft', effect: 'PreferNoSchedule' }] });
    expect(schedulableFor(n, [])).toBe(false);
    expect(schedulableFor(n, [{ key: 'nvidia.com/gpu', operator: 'Exists' }])).toBe(true);
  });
});

describe('assignNodes', () => {
  const regions: NamedRegionSelector[] = [
    { name: 'zone-b', matchLabels: { zone: 'b' } },
    { name: 'amd', matchLabels: { arch: 'amd64' } },
    { name: 'arm', matchLabels: { arch: 'arm64' } },
  ];

  it('puts each node in the regions whose labels it carries', () => {
    const result = assignNodes(regions, [node('n1', { labels: { arch: 'arm64', zone: 'a' } }), node('n2', { labels: { arch: 'amd64', zone: 'a' } })]);
    expect(result.nodes.get('arm')?.map((n) => n.name)).toEqual(['n1']);
    expect(result.nodes.get('amd')?.map((n) => n.name)).toEqual(['n2']);
    expect(result.nodes.get('zone-b')).toEqual([]);
    expect(result.overlaps.size).toBe(0);
  });

  it('counts a node matching two regions once (first region by name) and reports it on both', () => {
    const result = assignNodes(regions, [node('n3', { labels: { arch: 'amd64', zone: 'b' } })]);
    expect(result.nodes.get('amd')?.map((n) => n.name)).toEqual(['n3']);
    expect(result.nodes.get('zone-b')).toEqual([]);
    expect(result.overlaps.get('amd')).toEqual([{ node: 'n3', regions: ['amd', 'zone-b'] }]);
    expect(result.overlaps.get('zone-b')).toEqual([{ node: 'n3', regions: ['amd', 'zone-b'] }]);
    const total = [...result.nodes.values()].reduce((s, l) => s + l.length, 0);
    expect(total).toBe(1);
  });
});
