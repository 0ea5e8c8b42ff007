import { KubeConfig, type Informer, type KubernetesObject, type ObjectCache } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { FakeClock } from './clock.js';
import { ResilientInformer, STUCK_GRACE_MS, type InformerEvent } from './informer.js';
import { silentLogger } from './log.js';

type Callback = (arg?: unknown) => void;

/**
 * A stand-in for client-node's ListWatch: `start()` plays the next scripted outcome. Like ListWatch, a failure calls
 * the error callbacks synchronously inside start() and start() still resolves; a later watch failure calls them from
 * outside.
 */
class FakeListWatch {
  readonly callbacks = new Map<string, Callback[]>();
  starts = 0;
  stops = 0;
  path = '';
  /** The list function the informer handed over (ResilientInformer wraps it to notice each completed list). */
  listFn: () => Promise<unknown> = async () => undefined;
  constructor(private readonly script: ('ok' | 'error')[]) {}
  on(verb: string, cb: Callback): void {
    this.callbacks.set(verb, [...(this.callbacks.get(verb) ?? []), cb]);
  }
  off(): void {}
  emit(verb: string, arg?: unknown): void {
    for (const cb of this.callbacks.get(verb) ?? []) cb(arg);
  }
  async start(): Promise<void> {
    this.starts++;
    if ((this.script.shift() ?? 'ok') === 'error') this.emit('error', Object.assign(new Error('list failed'), { code: 500 }));
  }
  async stop(): Promise<void> {
    this.stops++;
    this.emit('error', new Error('The operation was aborted')); // what aborting the watch request reports
  }
  list(): KubernetesObject[] {
    return [];
  }
  get(): KubernetesObject | undefined {
    return undefined;
  }
}

const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

function setup(script: ('ok' | 'error')[], path = '/api/v1/pods', indexBy?: (o: KubernetesObject) => string | undefined) {
  const clock = new FakeClock();
  const fake = new FakeListWatch(script);
  const events: [InformerEvent, string][] = [];
  const seenInIndex: string[][] = [];
  const restarts: string[] = [];
  const previousVersions: (string | undefined)[] = [];
  const informer = new ResilientInformer(
    new KubeConfig(),
    { resource: 'pods', path, list: async () => ({ items: [], metadata: {} }) },
    {
      clock,
      log: silentLogger,
      random: () => 1, // no jitter below the full delay, and the longest watch timeout
      onEvent: (event, object, previous) => {
        events.push([event, object.metadata?.name ?? '']);
        previousVersions.push(previous?.metadata?.resourceVersion);
        seenInIndex.push(informer.byIndex('web').map((o) => o.metadata?.name ?? ''));
      },
      onRestart: (resource) => restarts.push(resource),
      make: (_kc, p, list) => {
        fake.path = p;
        fake.listFn = list;
        return fake as unknown as Informer<KubernetesObject> & ObjectCache<KubernetesObject>;
      },
      ...(indexBy && { indexBy }),
    },
  );
  return { clock, fake, informer, events, restarts, seenInIndex, previousVersions };
}

describe('ResilientInformer', () => {
  it('is synced once the first list and watch started, and forwards events', async () => {
    const { fake, informer, events } = setup(['ok']);
    expect(informer.synced()).toBe(false);
    informer.start();
    await settle();
    expect(informer.synced()).toBe(true);
    fake.emit('add', { metadata: { name: 'a' } });
    fake.emit('update', { metadata: { name: 'a' } });
    fake.emit('delete', { metadata: { name: 'a' } });
    expect(events).toEqual([
      ['add', 'a'],
      ['update', 'a'],
      ['delete', 'a'],
    ]);
  });

  it('keeps its index in step with the events, before the handler sees them', async () => {
    const app = (o: KubernetesObject) => o.metadata?.labels?.['app'];
    const { fake, informer, seenInIndex } = setup(['ok'], '/api/v1/pods', app);
    informer.start();
    await settle();
    fake.emit('add', { metadata: { name: 'a', labels: { app: 'web' } } });
    fake.emit('add', { metadata: { name: 'b', labels: { app: 'web' } } });
    fake.emit('update', { metadata: { name: 'a', labels: { app: 'api' } } });
    fake.emit('delete', { metadata: { name: 'b' } });
    expect(seenInIndex).toEqual([['a'], ['a', 'b'], ['b'], []]);
    expect(informer.byIndex('api').map((o) => o.metadata?.name)).toEqual(['a']);
    expect(setup([]).informer.byIndex('web')).toEqual([]); // no index function: nothing is indexed
  });

  it("gives an update's handler the object as cached before, where the index has it", async () => {
    const app = (o: KubernetesObject) => o.metadata?.labels?.['app'];
    const { fake, informer, previousVersions } = setup(['ok'], '/api/v1/pods', app);
    informer.start();
    await settle();
    const a = (resourceVersion: string, labels?: Record<string, string>) => ({ metadata: { name: 'a', resourceVersion, ...(labels && { labels }) } });
    fake.emit('add', a('1', { app: 'web' }));
    fake.emit('update', a('2', { app: 'web' }));
    fake.emit('update', a('3'));
    fake.emit('update', a('4', { app: 'web' }));
    // An add has none; the update to 3 had 2 before it; 3 had no index value, so the update to 4 is told of none.
    expect(previousVersions).toEqual([undefined, '1', '2', undefined]);
  });

  it('asks the server to end each watch after a randomized 5 to 10 minutes, and for bookmarks', () => {
    expect(setup([]).fake.path).toBe('/api/v1/pods?timeoutSeconds=600&allowWatchBookmarks=true');
    expect(setup([], '/x?a=b').fake.path).toBe('/x?a=b&timeoutSeconds=600&allowWatchBookmarks=true');
  });

  it('restarts after a failed start with exponential backoff, and is synced only after a success', async () => {
    const { clock, fake, informer, restarts } = setup(['error', 'error', 'error', 'ok']);
    informer.start();
    await settle();
    expect(fake.starts).toBe(1);
    expect(informer.synced()).toBe(false);
    for (const [delay, starts] of [
      [500, 2],
      [1000, 3],
      [2000, 4],
    ] as const) {
      clock.advance(delay - 1);
      await settle();
      expect(fake.starts).toBe(starts - 1); // not yet
      clock.advance(1);
      await settle();
      expect(fake.starts).toBe(starts);
    }
    expect(informer.synced()).toBe(true);
    expect(restarts).toEqual(['pods', 'pods', 'pods']);
    expect(clock.pending()).toBe(0);
  });

  it('restarts after a watch that fails later, staying synced (the cache is kept)', async () => {
    const { clock, fake, informer } = setup(['ok', 'ok']);
    informer.start();
    await settle();
    fake.emit('error', Object.assign(new Error('connection reset'), { code: 'ECONNRESET' }));
    fake.emit('error', new Error('again')); // a second report while a restart is pending schedules nothing more
    expect(clock.pending()).toBe(1);
    expect(informer.synced()).toBe(true);
    clock.advance(500);
    await settle();
    expect(fake.starts).toBe(2);
  });

  it('starts its backoff over after a long healthy run', async () => {
    const { clock, fake, informer } = setup(['error', 'ok', 'ok']);
    informer.start();
    await settle();
    clock.advance(500); // second start succeeds
    await settle();
    clock.advance(120_000); // healthy for two minutes
    fake.emit('error', new Error('watch closed with an error'));
    clock.advance(499);
    await settle();
    expect(fake.starts).toBe(2);
    clock.advance(1);
    await settle();
    expect(fake.starts).toBe(3); // 500 ms again, not 1000 ms
  });

  it('stops for good: the abort it causes is not an error, and pending restarts are cancelled', async () => {
    const { clock, fake, informer, restarts } = setup(['error']);
    informer.start();
    await settle();
    expect(clock.pending()).toBe(1);
    await informer.stop();
    expect(fake.stops).toBe(1);
    expect(clock.pending()).toBe(0);
    clock.advance(60_000);
    await settle();
    expect(fake.starts).toBe(1);
    expect(restarts).toEqual(['pods']);
  });

  describe('stuck (liveness)', () => {
    /** random() = 1: a 600 s watch timeout, so the bound is 600 s + STUCK_GRACE_MS. */
    const BOUND_MS = 600_000 + STUCK_GRACE_MS;

    it('is stuck once it has heard nothing for longer than its watch timeout plus the grace, and says so', async () => {
      const { clock, informer } = setup(['ok']);
      informer.start();
      await settle();
      clock.advance(BOUND_MS);
      expect(informer.stuck()).toBeUndefined();
      clock.advance(1_000);
      expect(informer.stuck()).toBe('informer pods: no list, watch event or watch end for 721 s (bound 720 s)');
    });

    it('hears every turn of its loop: a completed list, a watch event, a new round after a watch ended, an error', async () => {
      const signals: Record<string, (fake: FakeListWatch) => Promise<unknown> | void> = {
        list: (fake) => fake.listFn(),
        add: (fake) => fake.emit('add', { metadata: { name: 'a' } }),
        update: (fake) => fake.emit('update', { metadata: { name: 'a' } }),
        delete: (fake) => fake.emit('delete', { metadata: { name: 'a' } }),
        'watch ended, next round': (fake) => fake.emit('connect'),
        error: (fake) => fake.emit('error', new Error('watch closed with an error')),
      };
      for (const [name, signal] of Object.entries(signals)) {
        const { clock, fake, informer } = setup(['ok', 'ok']);
        informer.start();
        await settle();
        clock.advance(BOUND_MS - 1_000);
        await signal(fake);
        clock.advance(2_000);
        expect(informer.stuck(), name).toBeUndefined();
        clock.advance(BOUND_MS);
        expect(informer.stuck(), `${name}, then silence`).toMatch(/^informer pods: no list/);
        await informer.stop();
      }
    });

    it('is not stuck while it keeps failing: each try reports, and backs off at most 30 s', async () => {
      const { clock, informer } = setup(Array.from({ length: 200 }, () => 'error' as const));
      informer.start();
      await settle();
      for (let elapsed = 0; elapsed < 2 * BOUND_MS; elapsed += 10_000) {
        clock.advance(10_000);
        await settle();
        expect(informer.stuck()).toBeUndefined();
      }
    });

    it('is never stuck when not running: before start, and after stop', async () => {
      const { clock, informer } = setup(['ok']);
      clock.advance(2 * BOUND_MS);
      expect(informer.stuck()).toBeUndefined();
      informer.start();
      await settle();
      await informer.stop();
      clock.advance(2 * BOUND_MS);
      expect(informer.stuck()).toBeUndefined();
    });
  });
});
