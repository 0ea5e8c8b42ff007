import { describe, expect, it } from 'vitest';
import { OWN_WRITES_TTL_MS, OwnWrites, type WrittenObject } from './own-writes.js';

describe('OwnWrites', () => {
  const written: WrittenObject[] = [
    { kind: 'ReplicaSet', name: 'web-amd', resourceVersion: '5' },
    { kind: 'Pod', name: 'web-amd-a', resourceVersion: '7' },
  ];

  it('is behind while the cache shows any written object at the version the write replaced', () => {
    const own = new OwnWrites();
    own.expect('shop/web', written, 0);
    const cache = new Map<string, string | undefined>([
      ['web-amd', '5'],
      ['web-amd-a', '7'],
    ]);
    const current = (o: WrittenObject) => cache.get(o.name);
    expect(own.behind('shop/web', current, 10)).toBe(true);
    cache.set('web-amd', '9');
    expect(own.behind('shop/web', current, 10)).toBe(true); // the pod's mark does not show yet
    cache.set('web-amd-a', undefined); // gone meanwhile: nothing left to wait for
    expect(own.behind('shop/web', current, 10)).toBe(false);
    cache.set('web-amd-a', '7');
    expect(own.behind('shop/web', current, 10)).toBe(false); // forgotten once caught up
  });

  it('stops waiting after the TTL, and knows nothing of other keys or forgotten ones', () => {
    const own = new OwnWrites();
    const stale = () => '5';
    own.expect('shop/web', [written[0]!], 1000);
    expect(own.behind('shop/api', stale, 1000)).toBe(false);
    expect(own.behind('shop/web', stale, 1000 + OWN_WRITES_TTL_MS - 1)).toBe(true);
    expect(own.behind('shop/web', stale, 1000 + OWN_WRITES_TTL_MS)).toBe(false);
    own.expect('shop/web', [written[0]!], 0);
    own.forget('shop/web');
    expect(own.behind('shop/web', stale, 0)).toBe(false);
    own.expect('shop/web', [], 0);
    expect(own.behind('shop/web', stale, 0)).toBe(false);
  });
});
