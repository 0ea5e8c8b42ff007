import { describe, expect, it } from 'vitest';
import { NAME_LABEL } from '../core/labels.js';
import { edKey, keysSharingWorkloadNames, keysUsingRegion, ownerKey } from './keys.js';
import { splitKey } from '../core/kube/objects.js';

describe('event keys', () => {
  it('keys an ExtendedDeployment by namespace/name', () => {
    expect(edKey({ metadata: { name: 'web', namespace: 'shop' } })).toBe('shop/web');
    expect(edKey({ metadata: {} })).toBeUndefined();
    expect(splitKey('shop/web')).toEqual({ namespace: 'shop', name: 'web' });
    expect(splitKey('amd')).toEqual({ namespace: '', name: 'amd' });
  });

  it('maps pods and workloads to their ExtendedDeployment by the name label', () => {
    expect(ownerKey({ metadata: { name: 'web-amd-x1', namespace: 'shop', labels: { [NAME_LABEL]: 'web' } } })).toBe('shop/web');
    expect(ownerKey({ metadata: { name: 'x', namespace: 'shop', labels: {} } })).toBeUndefined();
    expect(ownerKey({ metadata: { name: 'x', labels: { [NAME_LABEL]: 'web' } } })).toBeUndefined();
  });

  it('maps a DeployRegion to every ExtendedDeployment that uses it, tolerating invalid specs', () => {
    const eds = [
      { metadata: { name: 'web', namespace: 'shop' }, spec: { regions: [{ name: 'amd' }, { name: 'arm' }] } },
      { metadata: { name: 'api', namespace: 'core' }, spec: { regions: [{ name: 'amd' }] } },
      { metadata: { name: 'gpu', namespace: 'ml' }, spec: { regions: [{ name: 'gpu' }] } },
      { metadata: { name: 'broken', namespace: 'x' }, spec: { regions: 'amd' } },
      { metadata: { name: 'broken2', namespace: 'x' }, spec: { regions: [null, { name: 3 }] } },
      { metadata: { name: 'nospec', namespace: 'x' } },
    ];
    expect(keysUsingRegion({ metadata: { name: 'amd' } }, eds)).toEqual(['shop/web', 'core/api']);
    expect(keysUsingRegion({ metadata: { name: 'none' } }, eds)).toEqual([]);
    expect(keysUsingRegion({ metadata: {} }, eds)).toEqual([]);
  });

  it('maps an ExtendedDeployment to the others of its namespace whose workload names it can collide with, whatever their regions', () => {
    const eds = [
      { metadata: { name: 'a', namespace: 'shop' } },
      { metadata: { name: 'a-b', namespace: 'shop' }, spec: { regions: 'broken' } },
      { metadata: { name: 'a-b-c', namespace: 'shop' } },
      { metadata: { name: 'ab', namespace: 'shop' } },
      { metadata: { name: 'a-b', namespace: 'web' } },
    ];
    // Both ways: a change of `a-b` can start or end a collision with a shorter name or a longer one.
    expect(keysSharingWorkloadNames({ metadata: { name: 'a-b', namespace: 'shop' } }, eds)).toEqual(['shop/a', 'shop/a-b-c']);
    expect(keysSharingWorkloadNames({ metadata: { name: 'a', namespace: 'shop' } }, eds)).toEqual(['shop/a-b', 'shop/a-b-c']);
    expect(keysSharingWorkloadNames({ metadata: { name: 'ab', namespace: 'shop' } }, eds)).toEqual([]);
    expect(keysSharingWorkloadNames({ metadata: {} }, eds)).toEqual([]);
  });
});
