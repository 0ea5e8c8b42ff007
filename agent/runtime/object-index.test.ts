import type { KubernetesObject } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { NAME_LABEL } from '../../core/labels.js';
import { objectKey } from '../../core/kube/objects.js';
import { ObjectIndex } from './object-index.js';

/** The index the agent files pods under: `namespace/<name label>` (no label, no value). */
const ownerKey = (object: KubernetesObject) => {
  const owner = object.metadata?.labels?.[NAME_LABEL];
  return owner && object.metadata?.namespace ? objectKey(object.metadata.namespace, owner) : undefined;
};

const pod = (name: string, owner: string | undefined, namespace = 'shop', rv = '1') => ({
  metadata: { name, namespace, resourceVersion: rv, ...(owner !== undefined && { labels: { [NAME_LABEL]: owner } }) },
});
const names = (objects: readonly { metadata?: { name?: string } }[]) => objects.map((o) => o.metadata?.name).sort();

describe('ObjectIndex', () => {
  it('files objects under their value, per namespace, and leaves out objects without one', () => {
    const index = new ObjectIndex(ownerKey);
    index.upsert(pod('web-1', 'web'));
    index.upsert(pod('web-2', 'web'));
    index.upsert(pod('api-1', 'api'));
    index.upsert(pod('web-1', 'web', 'other'));
    index.upsert(pod('stray', undefined));
    expect(names(index.get('shop/web'))).toEqual(['web-1', 'web-2']);
    expect(names(index.get('shop/api'))).toEqual(['api-1']);
    expect(names(index.get('other/web'))).toEqual(['web-1']);
    expect(index.get('shop/stray')).toEqual([]);
  });

  it('an update replaces the object, and moves it when its value changes', () => {
    const index = new ObjectIndex(ownerKey);
    index.upsert(pod('p', 'web', 'shop', '1'));
    index.upsert(pod('p', 'web', 'shop', '2'));
    expect(index.get('shop/web').map((o) => o.metadata?.resourceVersion)).toEqual(['2']);
    index.upsert(pod('p', 'api', 'shop', '3'));
    expect(index.get('shop/web')).toEqual([]);
    expect(names(index.get('shop/api'))).toEqual(['p']);
    index.upsert(pod('p', undefined, 'shop', '4'));
    expect(index.get('shop/api')).toEqual([]);
  });

  it('returns the object an upsert replaces, as filed: none when new or when it had no value', () => {
    const index = new ObjectIndex(ownerKey);
    const version = (o: KubernetesObject | undefined) => o?.metadata?.resourceVersion;
    expect(index.upsert(pod('p', 'web', 'shop', '1'))).toBeUndefined();
    expect(version(index.upsert(pod('p', 'api', 'shop', '2')))).toBe('1');
    expect(version(index.upsert(pod('p', undefined, 'shop', '3')))).toBe('2');
    expect(index.upsert(pod('p', 'web', 'shop', '4'))).toBeUndefined();
    expect(index.upsert(pod('p', 'web', 'other', '5'))).toBeUndefined(); // another namespace's p
  });

  it('forgets a deleted object, found by name even when the deleted copy carries other labels', () => {
    const index = new ObjectIndex(ownerKey);
    index.upsert(pod('p', 'web'));
    index.upsert(pod('q', 'web'));
    index.delete(pod('p', undefined));
    expect(names(index.get('shop/web'))).toEqual(['q']);
    index.delete(pod('never-seen', 'web'));
    expect(names(index.get('shop/web'))).toEqual(['q']);
  });

  it('files an object under each of its values, and moves or forgets it under each', () => {
    const index = new ObjectIndex((object: KubernetesObject) => object.metadata?.labels?.['tiers']?.split(','));
    const tiered = (name: string, tiers: string | undefined) => ({ metadata: { name, namespace: 'shop', ...(tiers !== undefined && { labels: { tiers } }) } });
    index.upsert(tiered('p', 'a,b'));
    index.upsert(tiered('q', 'b'));
    expect([names(index.get('a')), names(index.get('b'))]).toEqual([['p'], ['p', 'q']]);
    index.upsert(tiered('p', 'b,c'));
    expect([names(index.get('a')), names(index.get('b')), names(index.get('c'))]).toEqual([[], ['p', 'q'], ['p']]);
    index.upsert(tiered('q', undefined));
    expect(names(index.get('b'))).toEqual(['p']);
    index.delete(tiered('p', undefined));
    expect([names(index.get('b')), names(index.get('c'))]).toEqual([[], []]);
  });
});
