import { describe, expect, it } from 'vitest';
import type { MarkPodAction } from '../core/rollout/actions.js';
import { edKeyOf, type EdKey } from './keys.js';
import { OWN_WRITES_TTL_MS } from './own-writes.js';
import { FakeClock } from './runtime/clock.js';
import { MARKED_AT_ANNOTATION, POD_DELETION_COST_ANNOTATION } from '../core/labels.js';
import type { MetaObject } from '../core/kube/objects.js';
import { isMarkEcho, StandingMarks } from './standing-marks.js';

const mark = (pod: string): MarkPodAction => ({
  kind: 'markOld',
  region: 'a',
  pod,
  uid: `uid-${pod}`,
  at: '2026-01-01T00:00:00Z',
  cost: -2147483647,
  standing: true,
});

/** A lane whose sends wait until the test answers them, in any order. */
function lane(concurrency?: number | (() => number), idle?: () => boolean) {
  const clock = new FakeClock();
  const sent: string[] = [];
  const open = new Map<string, { resolve: () => void; reject: (error: unknown) => void }>();
  const woken: EdKey[] = [];
  const marks = new StandingMarks({
    clock,
    ...(concurrency !== undefined && { limit: typeof concurrency === 'number' ? () => concurrency : concurrency }),
    ...(idle !== undefined && { idle }),
    send: (key, _namespace, m) =>
      new Promise<void>((resolve, reject) => {
        sent.push(`${key}:${m.pod}`);
        open.set(m.pod, { resolve, reject });
      }),
    wake: (key) => woken.push(key),
  });
  /** Answers the send of `pod` and lets the lane go on. */
  const answer = async (pod: string, error?: unknown) => {
    const send = open.get(pod)!;
    open.delete(pod);
    if (error === undefined) send.resolve();
    else send.reject(error);
    await new Promise((resolve) => setImmediate(resolve));
  };
  return { clock, sent, woken, marks, answer, inFlight: () => open.size };
}

const web = edKeyOf('shop', 'web');
const api = edKeyOf('shop', 'api');

describe('StandingMarks', () => {
  it('sends the marks of every key in the order offered, at most STANDING_MARK_CONCURRENCY (2) at once', async () => {
    const l = lane();
    l.marks.offer(web, 'shop', [mark('w0'), mark('w1'), mark('w2')]);
    l.marks.offer(api, 'shop', [mark('a0')]);
    expect(l.sent).toEqual(['shop/web:w0', 'shop/web:w1']);
    await l.answer('w1');
    expect(l.sent).toEqual(['shop/web:w0', 'shop/web:w1', 'shop/web:w2']);
    await l.answer('w0');
    await l.answer('w2');
    expect(l.sent.at(-1)).toBe('shop/api:a0');
    expect(l.inFlight()).toBe(1);
    await l.answer('a0');
    await l.marks.idle();
    expect(l.inFlight()).toBe(0);
  });

  it('sends the marks of a rollout under way (whenIdle) only while idle, two at a time, after those of completed rollouts', async () => {
    let idle = false;
    const l = lane(8, () => idle);
    l.marks.offer(web, 'shop', [mark('w0'), mark('w1'), mark('w2')], { whenIdle: true });
    expect(l.sent).toEqual([]);
    // A completed rollout's marks go out meanwhile, as many as the limit allows.
    l.marks.offer(api, 'shop', [mark('a0')]);
    expect(l.sent).toEqual(['shop/api:a0']);
    await l.answer('a0');
    // The last reconcile under way ended: two of them go.
    idle = true;
    l.marks.resume();
    expect(l.sent).toEqual(['shop/api:a0', 'shop/web:w0', 'shop/web:w1']);
    // Busy again: the third waits for the next idle moment, not for the two in flight.
    idle = false;
    await l.answer('w0');
    expect(l.inFlight()).toBe(1);
    idle = true;
    await l.answer('w1');
    expect(l.sent.at(-1)).toBe('shop/web:w2');
  });

  it('sends a mark that waited for an idle moment at once when its rollout completes (offered without whenIdle)', async () => {
    const l = lane(8, () => false);
    l.marks.offer(web, 'shop', [mark('w0'), mark('w1')], { whenIdle: true });
    expect(l.sent).toEqual([]);
    l.marks.offer(web, 'shop', [mark('w0'), mark('w1')]);
    expect(l.sent).toEqual(['shop/web:w0', 'shop/web:w1']);
    await l.answer('w0');
    await l.answer('w1');
    await l.marks.idle();
    expect(l.inFlight()).toBe(0);
  });

  it('reads the limit before each send: more in flight once it allows more, none beyond it until enough are answered', async () => {
    let limit = 1;
    const l = lane(() => limit);
    l.marks.offer(web, 'shop', [mark('w0'), mark('w1'), mark('w2'), mark('w3'), mark('w4')]);
    expect(l.inFlight()).toBe(1);
    limit = 3;
    await l.answer('w0');
    expect(l.sent).toEqual(['shop/web:w0', 'shop/web:w1', 'shop/web:w2', 'shop/web:w3']);
    limit = 1;
    await l.answer('w1');
    await l.answer('w2');
    expect(l.inFlight()).toBe(1);
    await l.answer('w3');
    expect(l.sent.at(-1)).toBe('shop/web:w4');
  });

  it('sends a mark once while the looks keep planning it, until the cache should show it (OWN_WRITES_TTL_MS)', async () => {
    const l = lane();
    l.marks.offer(web, 'shop', [mark('w0')]);
    l.marks.offer(web, 'shop', [mark('w0')]);
    expect(l.sent).toEqual(['shop/web:w0']);
    await l.answer('w0');
    l.clock.advance(OWN_WRITES_TTL_MS - 1);
    l.marks.offer(web, 'shop', [mark('w0')]);
    expect(l.sent).toEqual(['shop/web:w0']);
    // Still unmarked in the look after that: the mark is lost (or the watch is down), so it goes out again.
    l.clock.advance(1);
    l.marks.offer(web, 'shop', [mark('w0')]);
    expect(l.sent).toEqual(['shop/web:w0', 'shop/web:w0']);
  });

  it('drops the queued marks a look no longer plans (the cache shows them, the pod left, a rollout began)', async () => {
    const l = lane(1);
    l.marks.offer(web, 'shop', [mark('w0'), mark('w1'), mark('w2')]);
    l.marks.offer(web, 'shop', [mark('w0'), mark('w2')]);
    await l.answer('w0');
    await l.answer('w2');
    await l.marks.idle();
    expect(l.sent).toEqual(['shop/web:w0', 'shop/web:w2']);
    // An answered mark no longer planned is forgotten: planned again, it goes out again.
    l.marks.offer(web, 'shop', []);
    l.marks.offer(web, 'shop', [mark('w0')]);
    expect(l.sent).toEqual(['shop/web:w0', 'shop/web:w2', 'shop/web:w0']);
  });

  it('on a failure drops the key’s queued marks, wakes the key, and fails its next look without queueing any', async () => {
    const l = lane(1);
    const denied = Object.assign(new Error('forbidden'), { code: 403 });
    l.marks.offer(web, 'shop', [mark('w0'), mark('w1')]);
    l.marks.offer(api, 'shop', [mark('a0')]);
    await l.answer('w0', denied);
    expect(l.woken).toEqual([web]);
    // w1 is not sent: the other key's mark is next.
    expect(l.sent).toEqual(['shop/web:w0', 'shop/api:a0']);
    expect(l.marks.offer(web, 'shop', [mark('w0'), mark('w1')])).toEqual({ failure: denied });
    await l.answer('a0');
    expect(l.sent).toEqual(['shop/web:w0', 'shop/api:a0']);
    // The look after that (the key's backoff) tries again.
    expect(l.marks.offer(web, 'shop', [mark('w0'), mark('w1')])).toBeUndefined();
    expect(l.sent.at(-1)).toBe('shop/web:w0');
  });

  it('forgets a deleted key’s queued marks; at a term’s end drops every queued mark and waits for those in flight', async () => {
    const l = lane(1);
    l.marks.offer(web, 'shop', [mark('w0'), mark('w1')]);
    l.marks.offer(api, 'shop', [mark('a0'), mark('a1')]);
    l.marks.forget(web);
    await l.answer('w0');
    expect(l.sent).toEqual(['shop/web:w0', 'shop/api:a0']);
    let cleared = false;
    const clearing = l.marks.clear().then(() => (cleared = true));
    await new Promise((resolve) => setImmediate(resolve));
    expect(cleared).toBe(false);
    await l.answer('a0');
    await clearing;
    expect(l.sent).toEqual(['shop/web:w0', 'shop/api:a0']);
    // The next term's looks plan them again.
    l.marks.offer(api, 'shop', [mark('a1')]);
    expect(l.sent.at(-1)).toBe('shop/api:a1');
  });

  it('tells the echo of a mark of a rollout under way, sent or being sent; not of a queued one or a completed rollout’s', async () => {
    const l = lane(8, () => true);
    const echo = (name: string) => [pod(name, '2', marked(mark(name))), pod(name, '1')] as const;
    l.marks.offer(web, 'shop', [mark('w0')], { whenIdle: true });
    l.marks.offer(api, 'shop', [mark('a0')]);
    // In flight (the watch may bring the echo before the answer), then answered.
    expect(l.marks.isEcho(...echo('w0'))).toBe(true);
    await l.answer('w0');
    expect(l.marks.isEcho(...echo('w0'))).toBe(true);
    expect(l.marks.isEcho(echo('w0')[0], undefined)).toBe(false); // nothing to compare with
    // A completed rollout's mark is the key's own write: its look waits for it.
    expect(l.marks.isEcho(...echo('a0'))).toBe(false);
    expect(l.marks.isEcho(...echo('x0'))).toBe(false); // no mark of the lane's
    const busy = lane(8, () => false);
    busy.marks.offer(web, 'shop', [mark('w0')], { whenIdle: true });
    expect(busy.marks.isEcho(...echo('w0'))).toBe(false); // queued: not sent, so not its echo
  });
});

/** A pod with a Ready condition, at `version`, with `annotations`. */
function pod(name: string, version: string, annotations?: Record<string, string>, ready = 'True'): MetaObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'shop', uid: `uid-${name}`, resourceVersion: version, ...(annotations && { annotations }) },
    status: { conditions: [{ type: 'Ready', status: ready }] },
  } as MetaObject;
}

/** The annotations `m` writes, after `others`. */
const marked = (m: MarkPodAction, others: Record<string, string> = {}) => ({
  ...others,
  [POD_DELETION_COST_ANNOTATION]: String(m.cost),
  [MARKED_AT_ANNOTATION]: m.at,
});

describe('isMarkEcho', () => {
  const m = mark('p');
  const team = { 'team.example/owner': 'shop' };
  it.each<[string, MetaObject, MetaObject, boolean]>([
    ['the mark made, nothing else', pod('p', '1'), pod('p', '2', marked(m)), true],
    [
      'the mark made beside other annotations, in any order',
      pod('p', '1', team),
      pod('p', '2', { [MARKED_AT_ANNOTATION]: m.at, ...team, [POD_DELETION_COST_ANNOTATION]: String(m.cost) }),
      true,
    ],
    ['an earlier mark replaced', pod('p', '1', marked({ ...m, cost: -2147483648, at: '2025-01-01T00:00:00Z' })), pod('p', '2', marked(m)), true],
    [
      'managed fields changed with it',
      pod('p', '1'),
      { ...pod('p', '2', marked(m)), metadata: { ...pod('p', '2', marked(m)).metadata, managedFields: [{ manager: 'x' }] } } as MetaObject,
      true,
    ],
    ['the pod turned unready as well (a watch that missed an update)', pod('p', '1'), pod('p', '2', marked(m), 'False'), false],
    ['another annotation changed as well', pod('p', '1'), pod('p', '2', marked(m, team)), false],
    ['another cost', pod('p', '1'), pod('p', '2', marked({ ...m, cost: -5 })), false],
    ['another time', pod('p', '1'), pod('p', '2', marked({ ...m, at: '2026-01-01T00:00:01Z' })), false],
    ['the mark removed', pod('p', '1', marked(m)), pod('p', '2'), false],
  ])('%s: %s', (_name, previous, now, echo) => {
    expect(isMarkEcho(previous, now, m)).toBe(echo);
  });
});
