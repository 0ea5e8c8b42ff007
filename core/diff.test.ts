import { readFileSync } from 'node:fs';
import { parseAllDocuments } from 'yaml';
import { describe, expect, it } from 'vitest';
import { diffOf, fieldChanges } from './diff.js';
import { renderSet, type RenderedExtendedDeployment } from './render.js';

describe('fieldChanges', () => {
  it('lists changed leaves with Kubernetes paths, added and removed values', () => {
    expect(
      fieldChanges(
        { spec: { containers: [{ name: 'a', image: 'x:1', args: ['--a'] }], nodeSelector: { 'kubernetes.io/arch': 'amd64' } } },
        { spec: { containers: [{ name: 'a', image: 'x:2', args: ['--a', '--b'] }], tolerations: [{ key: 'gpu' }] } },
      ),
    ).toEqual([
      { path: 'spec.containers[0].image', from: 'x:1', to: 'x:2' },
      { path: 'spec.containers[0].args[1]', to: '--b' },
      { path: 'spec.tolerations', to: [{ key: 'gpu' }] },
      { path: 'spec.nodeSelector', from: { 'kubernetes.io/arch': 'amd64' } },
    ]);
  });

  it('quotes keys that are not identifiers, and reports a changed type as one change', () => {
    expect(
      fieldChanges({ metadata: { labels: { 'app.kubernetes.io/name': 'a' } }, x: 1 }, { metadata: { labels: { 'app.kubernetes.io/name': 'b' } }, x: { y: 1 } }),
    ).toEqual([
      { path: 'metadata.labels["app.kubernetes.io/name"]', from: 'a', to: 'b' },
      { path: 'x', from: 1, to: { y: 1 } },
    ]);
    expect(fieldChanges({ a: [1, 2] }, { a: [1, 2] })).toEqual([]);
  });
});

const regions = readFileSync('examples/upstream-sample/deployregions.yaml', 'utf8');
const sample = readFileSync('examples/upstream-sample/extendeddeployment.yaml', 'utf8');

function render(...texts: string[]): RenderedExtendedDeployment[] {
  const objects = texts.flatMap((t) => parseAllDocuments(t).map((d) => d.toJS() as unknown));
  const result = renderSet(objects);
  if (!result.ok) throw new Error(JSON.stringify(result.problems));
  return [...result.value.extendedDeployments];
}

describe('diffOf', () => {
  it('per region: template paths (revision label left out), in place or replace, and the groups from planOf', () => {
    const before = render(regions, sample);
    const after = render(regions, sample.replace('          image: alpine\n', '          image: alpine:3.20\n'));
    const [ed] = diffOf(after, before).extendedDeployments;
    expect(ed?.change).toBe('changed');
    expect(ed?.fromRolloutRevision).toBe(before[0]?.rolloutRevision);
    expect(ed?.regions.map((r) => [r.name, r.change, r.update, r.templateChanges])).toEqual([
      ['region1', 'none', undefined, []],
      ['region2', 'rollout', 'in-place', [{ path: 'spec.containers[0].image', from: 'alpine', to: 'alpine:3.20' }]],
    ]);
    expect(ed?.groups.length).toBeGreaterThan(0);
    expect(ed?.removedRegions).toEqual([]);
  });

  it('says what is new, unchanged and removed', () => {
    const before = render(regions, sample);
    expect(diffOf(before, before).extendedDeployments.map((e) => e.change)).toEqual(['none']);
    expect(diffOf(before, []).extendedDeployments.map((e) => e.change)).toEqual(['new']);
    const removed = diffOf([], before).extendedDeployments;
    expect(removed.map((e) => [e.change, e.fromReplicas, e.removedRegions])).toEqual([['removed', 2, ['region1', 'region2']]]);
  });

  it('takes an ExtendedDeployment that now names the default namespace for the same object as before, when it named none', () => {
    const before = render(regions, sample);
    const after = render(regions, sample.replace('  name: extendeddeployment-sample\n', '  name: extendeddeployment-sample\n  namespace: default\n'));
    expect(after[0]?.manifest['metadata']).toHaveProperty('namespace', 'default');
    expect(diffOf(after, before).extendedDeployments.map((e) => [e.namespace, e.name, e.change])).toEqual([['default', 'extendeddeployment-sample', 'none']]);
  });
});
