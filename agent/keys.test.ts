import { describe, expect, it } from 'vitest';
import { NAME_LABEL } from '../core/labels.js';
import {
  edKey,
  keysSharingWorkloadNames,
  keysUsingRegion,
  namedForTraffic,
  ownerKey,
  trafficKeys,
  trafficOwnerKey,
  workloadNameIndex,
  workloadNameNeighbours,
} from './keys.js';
import { edCache } from './reconciler-test-support.js';
import { workloadNamesMayCollide } from '../core/render.js';
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

  it('maps a Service or HTTPRoute to the ExtendedDeployment that owns it, else to the one its name label names', () => {
    const edOwner = { apiVersion: 'extendeddeployment.io/v1beta1', kind: 'ExtendedDeployment', name: 'web', uid: 'u', controller: true };
    // The agent's revision Service web-r2 is keyed by its owner, whatever its labels say.
    expect(trafficOwnerKey({ metadata: { name: 'web-r2', namespace: 'shop', ownerReferences: [edOwner], labels: { [NAME_LABEL]: 'other' } } })).toBe(
      'shop/web',
    );
    // Another kind of owner (a Deployment's, say) or another group's ExtendedDeployment is not ours.
    const foreign = [
      { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', uid: 'd' },
      { apiVersion: 'example.com/v1', kind: 'ExtendedDeployment', name: 'web', uid: 'e' },
    ];
    expect(trafficOwnerKey({ metadata: { name: 'web', namespace: 'shop', ownerReferences: foreign } })).toBeUndefined();
    // A Service rendered into Git (mode Replicas) carries the name label and no ownerReference.
    expect(trafficOwnerKey({ metadata: { name: 'web', namespace: 'shop', labels: { [NAME_LABEL]: 'web' } } })).toBe('shop/web');
    expect(trafficOwnerKey({ metadata: { name: 'web-r2', ownerReferences: [edOwner] } })).toBeUndefined();
  });

  it("maps a Service or route of nobody's to the ExtendedDeployments of its namespace whose traffic objects take its name", () => {
    const ed = (name: string, namespace = 'shop') => ({ metadata: { name, namespace } });
    const eds = [ed('web'), ed('webshop'), ed('web', 'pay'), ed('api')];
    // In the way of web's revision Service, or of its route: web wakes when it appears or goes.
    expect(trafficKeys({ metadata: { name: 'web-5d8f7c9b4x', namespace: 'shop' } }, 'Service', eds)).toEqual(['shop/web']);
    expect(trafficKeys({ metadata: { name: 'web', namespace: 'shop' } }, 'HTTPRoute', eds)).toEqual(['shop/web']);
    expect(trafficKeys({ metadata: { name: 'webshop-r1', namespace: 'shop' } }, 'Service', eds)).toEqual(['shop/webshop']);
    expect(trafficKeys({ metadata: { name: 'db', namespace: 'shop' } }, 'Service', eds)).toEqual([]);
    // An owner decides alone.
    const owned = { apiVersion: 'extendeddeployment.io/v1beta1', kind: 'ExtendedDeployment', name: 'api', uid: 'u' };
    expect(trafficKeys({ metadata: { name: 'web-r1', namespace: 'shop', ownerReferences: [owned] } }, 'Service', eds)).toEqual(['shop/api']);
  });

  it('takes Service names `<ed>-…`, and the revision Service of a name cut to fit 63 characters', () => {
    expect(namedForTraffic('web', 'web-r1')).toBe(true);
    expect(namedForTraffic('web', 'web')).toBe(false);
    expect(namedForTraffic('web', 'webshop-r1')).toBe(false);
    expect(namedForTraffic('web', undefined)).toBe(false);
    const long = `a${'b'.repeat(60)}`; // 61 characters: `<ed>-<revision>` is cut to 63
    expect(namedForTraffic(long, `${long.slice(0, 52)}-5d8f7c9b4x`)).toBe(true);
    expect(namedForTraffic(long, `${long.slice(0, 51)}-5d8f7c9b4x`)).toBe(false);
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
    expect(keysSharingWorkloadNames({ metadata: { name: 'a-b', namespace: 'shop' } }, edCache(eds))).toEqual(['shop/a', 'shop/a-b-c']);
    expect(keysSharingWorkloadNames({ metadata: { name: 'a', namespace: 'shop' } }, edCache(eds))).toEqual(['shop/a-b', 'shop/a-b-c']);
    expect(keysSharingWorkloadNames({ metadata: { name: 'ab', namespace: 'shop' } }, edCache(eds))).toEqual([]);
    expect(keysSharingWorkloadNames({ metadata: {} }, edCache(eds))).toEqual([]);
  });

  it('files an ExtendedDeployment under each name its name extends with a dash, in its namespace', () => {
    expect(workloadNameIndex({ metadata: { name: 'a-b-c', namespace: 'shop' } })).toEqual(['shop/a', 'shop/a-b']);
    expect(workloadNameIndex({ metadata: { name: 'a--b', namespace: 'shop' } })).toEqual(['shop/a', 'shop/a-']);
    expect(workloadNameIndex({ metadata: { name: 'web', namespace: 'shop' } })).toEqual([]);
  });

  it('finds the neighbours by name exactly as a scan of the namespace with workloadNamesMayCollide would, without listing it', () => {
    // Every name of up to four characters from a, b and dashes (dashes inside only, as Kubernetes requires), in two namespaces.
    let words = [''];
    const all: string[] = [];
    for (let length = 1; length <= 4; length++) all.push(...(words = words.flatMap((w) => ['a', 'b', '-'].map((c) => `${w}${c}`))));
    const valid = all.filter((n) => !n.startsWith('-') && !n.endsWith('-'));
    const eds = ['shop', 'web'].flatMap((namespace) => valid.map((name) => ({ metadata: { name, namespace } })));
    const unlisted = { ...edCache(eds), list: () => expect.fail('the namespace was listed') };
    for (const name of valid) {
      const scanned = eds.filter((o) => o.metadata.namespace === 'shop' && workloadNamesMayCollide(name, o.metadata.name)).map((o) => o.metadata.name);
      const found = workloadNameNeighbours(unlisted, 'shop', name).map((o) => `${o.metadata?.namespace}/${o.metadata?.name}`);
      expect(found.sort(), name).toEqual(scanned.map((n) => `shop/${n}`).sort());
    }
    expect(valid).toHaveLength(2 + 4 + 12 + 36);
  });
});
