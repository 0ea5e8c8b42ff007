import { describe, expect, it } from 'vitest';
import { nodeInRegion, regionOverlap, type RegionSelector } from './region-selector.js';

const labels = (matchLabels: Record<string, string>): RegionSelector => ({ matchLabels });
const expr = (key: string, operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist', values?: string[]): RegionSelector => ({
  matchExpressions: [{ key, operator, ...(values && { values }) }],
});

describe('regionOverlap: exact for label requirements', () => {
  it.each<[string, RegionSelector, RegionSelector, Record<string, string> | string]>([
    ['the same labels', labels({ zone: 'a' }), labels({ zone: 'a' }), { zone: 'a' }],
    ['labels on different keys', labels({ arch: 'amd64' }), labels({ zone: 'a' }), { arch: 'amd64', zone: 'a' }],
    ['different values of one key', labels({ zone: 'a' }), labels({ zone: 'b' }), 'zone'],
    ['In sets that share a value', expr('zone', 'In', ['a', 'b']), expr('zone', 'In', ['b', 'c']), { zone: 'b' }],
    ['In sets that share none', expr('zone', 'In', ['a', 'b']), expr('zone', 'In', ['c']), 'zone'],
    ['a label and NotIn of its value', labels({ zone: 'a' }), expr('zone', 'NotIn', ['a']), 'zone'],
    ['a label and NotIn of another value', labels({ zone: 'a' }), expr('zone', 'NotIn', ['b']), { zone: 'a' }],
    ['In and NotIn covering it', expr('zone', 'In', ['a', 'b']), expr('zone', 'NotIn', ['a', 'b', 'c']), 'zone'],
    ['the GPU pool and every node without the GPU label', labels({ gpu: 'a100' }), expr('gpu', 'DoesNotExist'), 'gpu'],
    ['Exists and DoesNotExist', expr('gpu', 'Exists'), expr('gpu', 'DoesNotExist'), 'gpu'],
    ['Exists and NotIn: a value neither names', expr('zone', 'Exists'), expr('zone', 'NotIn', ['x', 'y']), { zone: 'x1' }],
    ['two NotIn: a node without the label', expr('zone', 'NotIn', ['a']), expr('zone', 'NotIn', ['b']), {}],
    [
      'disjoint on one key of several',
      { matchLabels: { pool: 'general' }, matchExpressions: [{ key: 'zone', operator: 'In', values: ['a'] }] },
      { matchLabels: { pool: 'general' }, matchExpressions: [{ key: 'zone', operator: 'In', values: ['b'] }] },
      'zone',
    ],
  ])('%s', (_, a, b, expected) => {
    for (const [x, y] of [
      [a, b],
      [b, a],
    ] as const) {
      const overlap = regionOverlap(x, y);
      if (typeof expected === 'string') expect(overlap).toEqual({ disjoint: true, key: expected });
      else {
        expect(overlap).toEqual({ disjoint: false, node: expected });
        // The node given as proof is in both regions.
        expect([nodeInRegion(expected, x), nodeInRegion(expected, y)]).toEqual([true, true]);
      }
    }
  });
});

describe('nodeInRegion', () => {
  const general = {
    matchLabels: { pool: 'general' },
    matchExpressions: [
      { key: 'zone', operator: 'In' as const, values: ['a', 'b'] },
      { key: 'gpu', operator: 'DoesNotExist' as const },
    ],
  };
  it.each<[Record<string, string>, boolean]>([
    [{ pool: 'general', zone: 'a' }, true],
    [{ pool: 'general', zone: 'b', arch: 'arm64' }, true],
    [{ pool: 'general', zone: 'c' }, false],
    [{ pool: 'general', zone: 'a', gpu: 'a100' }, false],
    [{ zone: 'a' }, false],
  ])('%j: %s', (node, expected) => {
    expect(nodeInRegion(node, general)).toBe(expected);
  });
});
