import type { KubernetesObject } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { FakeClock } from './runtime/clock.js';
import type { RunningInformer } from './runtime/informer.js';
import { silentLogger } from './runtime/log.js';
import { resourceServed, SERVED_RECHECK_MS, ServedInformer } from './served-informer.js';

/** An informer over fixed objects that records its starts and stops, synced once started, forbidden when told. */
function fakeInformer(objects: KubernetesObject[]) {
  const calls: string[] = [];
  let running = false;
  let forbidden: 'list' | 'watch' | undefined;
  const informer: RunningInformer<KubernetesObject> = {
    resource: 'httproutes',
    list: () => objects,
    get: (name) => objects.find((o) => o.metadata?.name === name),
    byIndex: () => objects,
    synced: () => running,
    stuck: () => undefined,
    forbidden: () => forbidden,
    start: () => {
      running = true;
      calls.push('start');
    },
    stop: async () => {
      running = false;
      calls.push('stop');
    },
  };
  return { informer, calls, forbid: (verb: 'list' | 'watch' | undefined) => (forbidden = verb) };
}

/** Lets the discovery promise and the check after it run. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 0));

function gated(answers: (() => boolean)[]) {
  const clock = new FakeClock();
  const fake = fakeInformer([{ metadata: { name: 'web', namespace: 'shop' } }]);
  let made = 0;
  let asked = 0;
  const informer = new ServedInformer<KubernetesObject>({
    resource: 'httproutes',
    served: async () => (answers[Math.min(asked++, answers.length - 1)] ?? (() => false))(),
    make: () => {
      made++;
      return fake.informer;
    },
    clock,
    log: silentLogger,
  });
  return { clock, fake, informer, made: () => made, asked: () => asked };
}

describe('ServedInformer: an informer of an API the cluster may not serve', () => {
  it('reads empty and synced while not served, then starts watching at the next check once served', async () => {
    const g = gated([() => false, () => true]);
    expect(g.informer.synced()).toBe(false); // discovery has not answered yet
    g.informer.start();
    await settle();
    expect(g.informer.synced()).toBe(true);
    expect(g.informer.served()).toBe(false);
    expect(g.informer.list()).toEqual([]);
    expect(g.informer.get('web', 'shop')).toBeUndefined();
    expect(g.made()).toBe(0);

    g.clock.advance(SERVED_RECHECK_MS - 1);
    await settle();
    expect(g.asked()).toBe(1);
    g.clock.advance(1);
    await settle();
    expect(g.asked()).toBe(2);
    expect(g.fake.calls).toEqual(['start']);
    expect(g.informer.served()).toBe(true);
    expect(g.informer.get('web', 'shop')?.metadata?.name).toBe('web');
    expect(g.informer.byIndex('x')).toHaveLength(1);

    // Still served at later checks: the informer is neither made nor started again.
    g.clock.advance(3 * SERVED_RECHECK_MS);
    await settle();
    expect(g.made()).toBe(1);
    expect(g.fake.calls).toEqual(['start']);
    await g.informer.stop();
    expect(g.fake.calls).toEqual(['start', 'stop']);
    expect(g.clock.pending()).toBe(0);
  });

  it('stops watching when the API goes away (CRD deleted), and starts the same informer again when it comes back', async () => {
    let served = true;
    const g = gated([() => served]);
    g.informer.start();
    await settle();
    expect(g.informer.served()).toBe(true);
    g.fake.forbid('watch');
    expect(g.informer.forbidden()).toBe('watch');

    served = false;
    await g.informer.recheck();
    expect(g.fake.calls).toEqual(['start', 'stop']);
    expect(g.informer.served()).toBe(false);
    expect(g.informer.list()).toEqual([]);
    // A stopped informer's verdicts no longer count.
    expect(g.informer.forbidden()).toBeUndefined();

    served = true;
    await g.informer.recheck();
    expect(g.fake.calls).toEqual(['start', 'stop', 'start']);
    expect(g.made()).toBe(1);
    await g.informer.stop();
  });

  it('keeps the last answer when discovery fails, and counts the failure as an answer (nothing waits on it)', async () => {
    let fail = false;
    const g = gated([
      () => {
        if (fail) throw Object.assign(new Error('HTTP 503'), { code: 503 });
        return true;
      },
    ]);
    fail = true;
    g.informer.start();
    await settle();
    expect(g.informer.synced()).toBe(true);
    expect(g.informer.served()).toBe(false);
    fail = false;
    await g.informer.recheck();
    expect(g.informer.served()).toBe(true);
    fail = true;
    await g.informer.recheck();
    expect(g.informer.served()).toBe(true);
    expect(g.fake.calls).toEqual(['start']);
    await g.informer.stop();
  });

  it('starts nothing when stopped before discovery answers', async () => {
    let answer: (served: boolean) => void = () => undefined;
    const clock = new FakeClock();
    const fake = fakeInformer([]);
    const informer = new ServedInformer<KubernetesObject>({
      resource: 'httproutes',
      served: () => new Promise<boolean>((resolve) => (answer = resolve)),
      make: () => fake.informer,
      clock,
      log: silentLogger,
    });
    informer.start();
    await informer.stop();
    answer(true);
    await settle();
    expect(fake.calls).toEqual([]);
    expect(clock.pending()).toBe(0);
  });
});

describe('resourceServed: discovery of one group version', () => {
  const discovery = (answer: () => unknown) => ({
    getAPIResources: async () => {
      const result = answer();
      if (result instanceof Error) throw result;
      return result as { groupVersion: string; resources: { name: string; namespaced: boolean; kind: string; singularName: string; verbs: string[] }[] };
    },
  });
  const resource = (name: string) => ({ name, namespaced: true, kind: 'X', singularName: name, verbs: ['list'] });

  it('is true when the group version lists the resource, false when it does not or is not served (404)', async () => {
    const served = discovery(() => ({ groupVersion: 'gateway.networking.k8s.io/v1', resources: [resource('gateways'), resource('httproutes')] }));
    await expect(resourceServed(served, 'gateway.networking.k8s.io', 'v1', 'httproutes')).resolves.toBe(true);
    // An older Gateway API install: v1 without httproutes (they were v1beta1 only before Gateway API v1.0).
    const without = discovery(() => ({ groupVersion: 'gateway.networking.k8s.io/v1', resources: [resource('gateways')] }));
    await expect(resourceServed(without, 'gateway.networking.k8s.io', 'v1', 'httproutes')).resolves.toBe(false);
    const missing = discovery(() => Object.assign(new Error('HTTP 404'), { code: 404 }));
    await expect(resourceServed(missing, 'gateway.networking.k8s.io', 'v1', 'httproutes')).resolves.toBe(false);
  });

  it('throws any other failure: whether it is served is then unknown', async () => {
    const failing = discovery(() => Object.assign(new Error('HTTP 500'), { code: 500 }));
    await expect(resourceServed(failing, 'gateway.networking.k8s.io', 'v1', 'httproutes')).rejects.toThrow('HTTP 500');
  });
});
