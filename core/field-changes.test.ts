import { describe, expect, it } from 'vitest';
import { fieldChanges } from './field-changes.js';

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
