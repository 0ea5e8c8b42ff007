import { describe, expect, it } from 'vitest';
import { placeInRegion, regionsMayOverlap } from './placement.js';

const amd = { name: 'amd', matchLabels: { 'kubernetes.io/arch': 'amd64', pool: 'general' } };
const term = (...keys: [string, string, string[]][]) => ({ matchExpressions: keys.map(([key, operator, values]) => ({ key, operator, values })) });
const requiredTerms = (t: { spec?: unknown }) =>
  (t.spec as { affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: unknown[] } } } }).affinity.nodeAffinity
    .requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms;

describe('placeInRegion', () => {
  it('creates one required term with the region labels, sorted by key, when the template has none', () => {
    const { template } = placeInRegion({ spec: { containers: [] } }, amd);
    expect(requiredTerms(template)).toEqual([term(['kubernetes.io/arch', 'In', ['amd64']], ['pool', 'In', ['general']])]);
  });

  it('ANDs the region into every existing term instead of appending an OR-ed term', () => {
    const spec = {
      affinity: {
        nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [term(['disk', 'In', ['ssd']]), term(['gen', 'In', ['4']])] } },
      },
    };
    const { template } = placeInRegion({ spec }, amd);
    expect(requiredTerms(template)).toEqual([
      term(['disk', 'In', ['ssd']], ['kubernetes.io/arch', 'In', ['amd64']], ['pool', 'In', ['general']]),
      term(['gen', 'In', ['4']], ['kubernetes.io/arch', 'In', ['amd64']], ['pool', 'In', ['general']]),
    ]);
  });

  it('keeps preferred affinity and matchFields untouched', () => {
    const nodeAffinity = {
      preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 1, preference: term(['x', 'In', ['y']]) }],
      requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: ['n1'] }] }] },
    };
    const { template } = placeInRegion({ spec: { affinity: { nodeAffinity } } }, { name: 'r', matchLabels: { a: 'b' } });
    const out = (template['spec'] as { affinity: { nodeAffinity: typeof nodeAffinity } }).affinity.nodeAffinity;
    expect(out.preferredDuringSchedulingIgnoredDuringExecution).toEqual(nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution);
    expect(out.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms).toEqual([
      { matchFields: [{ key: 'metadata.name', operator: 'In', values: ['n1'] }], matchExpressions: [{ key: 'a', operator: 'In', values: ['b'] }] },
    ]);
  });

  it('drops terms the region cannot satisfy and reports when none is left', () => {
    const spec = {
      affinity: {
        nodeAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [term(['kubernetes.io/arch', 'In', ['arm64']]), term(['disk', 'In', ['ssd']])] },
        },
      },
    };
    expect(requiredTerms(placeInRegion({ spec }, amd).template)).toEqual([
      term(['disk', 'In', ['ssd']], ['kubernetes.io/arch', 'In', ['amd64']], ['pool', 'In', ['general']]),
    ]);
    const only = {
      affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [term(['kubernetes.io/arch', 'NotIn', ['amd64']])] } } },
    };
    expect(placeInRegion({ spec: only }, amd).conflict).toBe('every required node-selector term of the template excludes the nodes of region amd');
  });

  it('reports a nodeSelector that excludes the region', () => {
    expect(placeInRegion({ spec: { nodeSelector: { 'kubernetes.io/arch': 'arm64' } } }, amd).conflict).toBe(
      "the template's nodeSelector kubernetes.io/arch=arm64 excludes every node of region amd (kubernetes.io/arch=amd64)",
    );
  });

  it('adds the region tolerations once', () => {
    const gpu = {
      name: 'gpu',
      matchLabels: { pool: 'gpu' },
      tolerations: [{ key: 'nvidia.com/gpu', operator: 'Exists' as const, effect: 'NoSchedule' as const }],
    };
    const { template } = placeInRegion({ spec: { tolerations: [{ key: 'nvidia.com/gpu', operator: 'Exists', effect: 'NoSchedule' }] } }, gpu);
    expect((template['spec'] as { tolerations: unknown[] }).tolerations).toHaveLength(1);
    expect((placeInRegion({ spec: {} }, gpu).template['spec'] as { tolerations: unknown[] }).tolerations).toEqual(gpu.tolerations);
  });
});

describe('regionsMayOverlap', () => {
  it.each([
    ['identical sets', { a: '1' }, { a: '1' }, { a: '1' }],
    ['a subset', { a: '1' }, { a: '1', b: '2' }, { a: '1', b: '2' }],
    ['different keys (a node may carry both)', { arch: 'amd64' }, { zone: 'a' }, { arch: 'amd64', zone: 'a' }],
    ['one key with different values', { arch: 'amd64' }, { arch: 'arm64' }, undefined],
    ['a shared key differing among others', { arch: 'amd64', zone: 'a' }, { arch: 'amd64', zone: 'b' }, undefined],
  ])('%s', (_n, a, b, expected) => {
    expect(regionsMayOverlap({ matchLabels: a }, { matchLabels: b })).toEqual(expected);
    expect(regionsMayOverlap({ matchLabels: b }, { matchLabels: a })).toEqual(expected);
  });
});

describe('placeInRegion: regions by expressions', () => {
  const notGpu = { name: 'general', matchLabels: { pool: 'general' }, matchExpressions: [{ key: 'gpu', operator: 'DoesNotExist' as const }] };
  const zones = { name: 'ab', matchExpressions: [{ key: 'zone', operator: 'In' as const, values: ['a', 'b'] }] };

  it('ANDs the labels, then the expressions as written, into every term', () => {
    expect(requiredTerms(placeInRegion({ spec: {} }, notGpu).template)).toEqual([
      {
        matchExpressions: [
          { key: 'pool', operator: 'In', values: ['general'] },
          { key: 'gpu', operator: 'DoesNotExist' },
        ],
      },
    ]);
  });

  it('drops a term that requires what the region rules out, and keeps one it can meet', () => {
    const spec = {
      affinity: {
        nodeAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [term(['gpu', 'Exists', []]), term(['zone', 'In', ['b', 'c']])] },
        },
      },
    };
    // The zones say nothing of GPUs: both terms stay, each ANDed with the zones. (Placement changes the template it
    // is given: each region places its own copy.)
    expect(requiredTerms(placeInRegion({ spec: structuredClone(spec) }, zones).template)).toEqual([
      term(['gpu', 'Exists', []], ['zone', 'In', ['a', 'b']]),
      term(['zone', 'In', ['b', 'c']], ['zone', 'In', ['a', 'b']]),
    ]);
    // Every node but the GPU pool: the term that requires a GPU goes.
    expect(requiredTerms(placeInRegion({ spec: structuredClone(spec) }, notGpu).template)).toEqual([
      {
        matchExpressions: [
          { key: 'zone', operator: 'In', values: ['b', 'c'] },
          { key: 'pool', operator: 'In', values: ['general'] },
          { key: 'gpu', operator: 'DoesNotExist' },
        ],
      },
    ]);
    const onlyC = { affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [term(['zone', 'In', ['c']])] } } } };
    expect(placeInRegion({ spec: onlyC }, zones).conflict).toBe('every required node-selector term of the template excludes the nodes of region ab');
  });

  it("reports a nodeSelector the region's expressions rule out, in kubectl's words", () => {
    expect(placeInRegion({ spec: { nodeSelector: { zone: 'c' } } }, zones).conflict).toBe(
      "the template's nodeSelector zone=c excludes every node of region ab (zone in (a,b))",
    );
    expect(placeInRegion({ spec: { nodeSelector: { gpu: 'a100' } } }, notGpu).conflict).toBe(
      "the template's nodeSelector gpu=a100 excludes every node of region general (!gpu)",
    );
    expect(placeInRegion({ spec: { nodeSelector: { zone: 'b' } } }, zones).conflict).toBeUndefined();
  });
});
