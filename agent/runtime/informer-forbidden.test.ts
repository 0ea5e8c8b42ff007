// ResilientInformer on a 403: RBAC refuses the list or the watch. The restart goes on with its backoff, and the
// refusal is an error naming the resource and the verb, reported to onForbidden (the agent counts it in
// extendeddeployment_agent_forbidden_total).
import { KubeConfig, type Informer, type KubernetesListObject, type KubernetesObject, type ObjectCache } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { FakeClock } from './clock.js';
import { FORBIDDEN_CLEARS_AFTER_MS, ResilientInformer } from './informer.js';
import type { Logger, LogFields } from './log.js';

const forbidden = () =>
  Object.assign(new Error('forbidden'), { code: 403, body: { reason: 'Forbidden', message: 'pods is forbidden: User cannot list resource "pods"' } });

/** A ListWatch stand-in that lists as client-node does (a failed list reports its error as is) and can fail its watch later. */
class ListingFake {
  private readonly errorCallbacks: ((error: unknown) => void)[] = [];
  constructor(private readonly listFn: () => Promise<KubernetesListObject<KubernetesObject>>) {}
  on(verb: string, cb: (error: unknown) => void): void {
    if (verb === 'error') this.errorCallbacks.push(cb);
  }
  off(): void {}
  failWatch(error: unknown): void {
    for (const cb of this.errorCallbacks) cb(error);
  }
  async start(): Promise<void> {
    try {
      await this.listFn();
    } catch (error) {
      this.failWatch(error);
    }
  }
  async stop(): Promise<void> {}
  list(): KubernetesObject[] {
    return [];
  }
  get(): undefined {
    return undefined;
  }
}

function setup(list: () => Promise<KubernetesListObject<KubernetesObject>>) {
  const errors: [string, LogFields | undefined][] = [];
  const log: Logger = {
    debug: () => undefined,
    info: () => undefined,
    warn: () => undefined,
    error: (msg, fields) => errors.push([msg, fields]),
    with: () => log,
  };
  const forbiddenCalls: string[] = [];
  const restarts: string[] = [];
  let fake: ListingFake | undefined;
  const clock = new FakeClock();
  const informer = new ResilientInformer(
    new KubeConfig(),
    { resource: 'pods', path: '/api/v1/pods', list },
    {
      clock,
      log,
      random: () => 1,
      onEvent: () => undefined,
      onRestart: (resource) => restarts.push(resource),
      onForbidden: (verb, resource) => forbiddenCalls.push(`${verb} ${resource}`),
      make: (_kc, _path, wrappedList) => (fake = new ListingFake(wrappedList)) as unknown as Informer<KubernetesObject> & ObjectCache<KubernetesObject>,
    },
  );
  return { informer, errors, forbiddenCalls, restarts, clock, fake: () => fake! };
}

const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('ResilientInformer on 403 Forbidden', () => {
  it('reports a forbidden list as an error naming the resource, and restarts with its backoff as for any failure', async () => {
    const { informer, errors, forbiddenCalls, restarts } = setup(async () => {
      throw forbidden();
    });
    informer.start();
    await settle();
    expect(forbiddenCalls).toEqual(['list pods']);
    expect(errors).toEqual([
      [
        'forbidden: the agent may not list or watch a resource it needs',
        { resource: 'pods', verb: 'list', error: 'pods is forbidden: User cannot list resource "pods"' },
      ],
    ]);
    expect(restarts).toEqual(['pods']);
    expect(informer.synced()).toBe(false);
    await informer.stop();
  });

  it('tells a forbidden watch from a forbidden list', async () => {
    const { informer, forbiddenCalls, fake } = setup(async () => ({ items: [], metadata: {} }));
    informer.start();
    await settle();
    expect(informer.synced()).toBe(true);
    fake().failWatch(forbidden());
    expect(forbiddenCalls).toEqual(['watch pods']);
    await informer.stop();
  });

  it('says which read is forbidden until a list and watch start again without error', async () => {
    let allowed = false;
    const { informer, clock, fake } = setup(async () => {
      if (!allowed) throw forbidden();
      return { items: [], metadata: {} };
    });
    informer.start();
    await settle();
    expect(informer.forbidden()).toBe('list');
    // Granted: the next restart lists and watches again, and is still watching a moment later.
    allowed = true;
    clock.advance(60_000);
    await settle();
    expect([informer.synced(), informer.forbidden()]).toEqual([true, 'list']);
    clock.advance(FORBIDDEN_CLEARS_AFTER_MS);
    expect(informer.forbidden()).toBeUndefined();
    // A watch refused later (the grant revoked) is forbidden too; a restart whose watch is refused once open (start()
    // resolved first, as a watch resumed without a list is) does not clear it.
    fake().failWatch(forbidden());
    expect(informer.forbidden()).toBe('watch');
    clock.advance(60_000);
    await settle();
    fake().failWatch(forbidden());
    clock.advance(FORBIDDEN_CLEARS_AFTER_MS);
    expect(informer.forbidden()).toBe('watch');
    clock.advance(60_000);
    await settle();
    clock.advance(FORBIDDEN_CLEARS_AFTER_MS);
    expect(informer.forbidden()).toBeUndefined();
    await informer.stop();
  });

  it('reports nothing for other failures', async () => {
    const { informer, errors, forbiddenCalls, restarts } = setup(async () => {
      throw Object.assign(new Error('unavailable'), { code: 503 });
    });
    informer.start();
    await settle();
    expect(restarts).toEqual(['pods']);
    expect(forbiddenCalls).toEqual([]);
    expect(errors).toEqual([]);
    await informer.stop();
  });
});
