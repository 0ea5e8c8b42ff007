import { describe, expect, it } from 'vitest';
import type { MetaObject } from '../core/kube/objects.js';
import { OWN_WRITES_TTL_MS, OwnWrites, writtenId, type WrittenKind } from './own-writes.js';

const at = (name: string, resourceVersion: string): MetaObject => ({ metadata: { name, resourceVersion } });

/** A cache over `versions` (name → resourceVersion; undefined: gone). */
const cacheOf = (versions: Map<string, string | undefined>) => (_kind: WrittenKind, name: string) => {
  const version = versions.get(name);
  return version === undefined ? undefined : at(name, version);
};

describe('OwnWrites', () => {
  it("plans on the API server's answer while the cache shows an older version, then on the cache", () => {
    const own = new OwnWrites();
    const answer = at('web-amd', '12');
    own.record('shop/web', [{ kind: 'ReplicaSet', name: 'web-amd', replaced: '10', written: answer }], 0);
    const cache = new Map<string, string | undefined>([['web-amd', '10']]);
    expect(own.view('shop/web', cacheOf(cache), 1)).toEqual({ behind: false, newer: new Map([[writtenId('ReplicaSet', 'web-amd'), answer]]) });
    // Another writer's update between the read and the write (11) is still older than the answer: versions compare.
    cache.set('web-amd', '11');
    expect(own.view('shop/web', cacheOf(cache), 1)).toMatchObject({ newer: new Map([[writtenId('ReplicaSet', 'web-amd'), answer]]) });
    cache.set('web-amd', '12');
    expect(own.view('shop/web', cacheOf(cache), 1)).toEqual({ behind: false, newer: new Map() });
    // Forgotten once shown: an older version showing up again later is the cache's own business.
    cache.set('web-amd', '10');
    expect(own.view('shop/web', cacheOf(cache), 1)).toEqual({ behind: false, newer: new Map() });
  });

  it('is behind while the cache shows a write that has no answer (a delete) at the version it replaced', () => {
    const own = new OwnWrites();
    own.record(
      'shop/web',
      [
        { kind: 'Pod', name: 'web-amd-a', replaced: '7' },
        { kind: 'ReplicaSet', name: 'web-amd', replaced: '5', written: at('web-amd', '9') },
      ],
      0,
    );
    const cache = new Map<string, string | undefined>([
      ['web-amd-a', '7'],
      ['web-amd', '9'],
    ]);
    expect(own.view('shop/web', cacheOf(cache), 1)).toEqual({ behind: true });
    cache.set('web-amd-a', undefined); // gone: nothing left to wait for
    expect(own.view('shop/web', cacheOf(cache), 1)).toEqual({ behind: false, newer: new Map() });
  });

  it('without comparable versions, knows the cache is older by the versions the chain of writes replaced', () => {
    const own = new OwnWrites();
    const first = at('web', 'b');
    own.record('shop/web', [{ kind: 'ExtendedDeployment', name: 'web', replaced: 'a', written: first }], 0);
    // A second write built on the first answer, before the cache showed it.
    const second = at('web', 'c');
    own.record('shop/web', [{ kind: 'ExtendedDeployment', name: 'web', replaced: 'b', written: second }], 0);
    const cache = new Map<string, string | undefined>([['web', 'a']]);
    expect(own.view('shop/web', cacheOf(cache), 1)).toMatchObject({ newer: new Map([[writtenId('ExtendedDeployment', 'web'), second]]) });
    cache.set('web', 'b');
    expect(own.view('shop/web', cacheOf(cache), 1)).toMatchObject({ newer: new Map([[writtenId('ExtendedDeployment', 'web'), second]]) });
    cache.set('web', 'x'); // neither: someone else's newer version
    expect(own.view('shop/web', cacheOf(cache), 1)).toEqual({ behind: false, newer: new Map() });
  });

  it("plans on an object the key created as the API server answered until the cache shows it; another write's object, once gone, is forgotten", () => {
    const own = new OwnWrites();
    const answer = at('web-1', '3');
    own.record('shop/web', [{ kind: 'ControllerRevision', name: 'web-1', replaced: '', written: answer, created: true }], 0);
    const cache = new Map<string, string | undefined>();
    const id = writtenId('ControllerRevision', 'web-1');
    expect(own.view('shop/web', cacheOf(cache), 1)).toEqual({ behind: false, newer: new Map([[id, answer]]) });
    // Replaced on that answer before the cache showed either: still created, still not there.
    const replaced = at('web-1', '4');
    own.record('shop/web', [{ kind: 'ControllerRevision', name: 'web-1', replaced: '3', written: replaced }], 1);
    expect(own.view('shop/web', cacheOf(cache), 2)).toEqual({ behind: false, newer: new Map([[id, replaced]]) });
    expect(own.view('shop/web', cacheOf(cache), OWN_WRITES_TTL_MS + 1)).toEqual({ behind: false, newer: new Map() });
    // A replace the key did not create the object with: absent from the cache is gone.
    own.record('shop/web', [{ kind: 'ControllerRevision', name: 'web-2', replaced: '7', written: at('web-2', '8') }], 0);
    expect(own.view('shop/web', cacheOf(cache), 1)).toEqual({ behind: false, newer: new Map() });
  });

  it('stops after the TTL, and knows nothing of other keys or forgotten ones', () => {
    const own = new OwnWrites();
    const old = () => at('web-amd', '5');
    own.record('shop/web', [{ kind: 'ReplicaSet', name: 'web-amd', replaced: '5' }], 1000);
    expect(own.view('shop/api', old, 1000)).toEqual({ behind: false, newer: new Map() });
    expect(own.view('shop/web', old, 1000 + OWN_WRITES_TTL_MS - 1)).toEqual({ behind: true });
    expect(own.view('shop/web', old, 1000 + OWN_WRITES_TTL_MS)).toEqual({ behind: false, newer: new Map() });
    own.record('shop/web', [{ kind: 'ReplicaSet', name: 'web-amd', replaced: '5' }], 0);
    own.forget('shop/web');
    expect(own.view('shop/web', old, 0)).toEqual({ behind: false, newer: new Map() });
  });

  it("tells the API server's answer to the key's last write of an object from any other version of it", () => {
    const own = new OwnWrites();
    own.record('shop/web', [{ kind: 'ExtendedDeployment', name: 'web', replaced: '10', written: at('web', '12') }], 0);
    expect(own.isAnswer('shop/web', 'ExtendedDeployment', at('web', '12'))).toBe(true);
    expect(own.isAnswer('shop/web', 'ExtendedDeployment', at('web', '13'))).toBe(false);
    expect(own.isAnswer('shop/web', 'ExtendedDeployment', at('web', '10'))).toBe(false);
    expect(own.isAnswer('shop/api', 'ExtendedDeployment', at('web', '12'))).toBe(false);
    expect(own.isAnswer('shop/web', 'ReplicaSet', at('web', '12'))).toBe(false);
    // A write answered with nothing (a delete) has no answer to recognise.
    own.record('shop/web', [{ kind: 'Pod', name: 'web-a', replaced: '7' }], 0);
    expect(own.isAnswer('shop/web', 'Pod', at('web-a', '7'))).toBe(false);
  });
});
