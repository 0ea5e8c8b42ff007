import type { CoordinationV1Api, V1Lease } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { FakeClock } from './clock.js';
import { LeaderElector, leaderElectionTiming, type LostLeadership } from './leader-election.js';
import { jsonLogger } from './log.js';

/** How a candidate's Lease requests behave: answered, failed at once, never answered, or answered after 6 s. */
type Network = 'ok' | 'fail' | 'hang' | 'slow';

/** One Lease in memory with the API server's optimistic concurrency (a write with a stale resourceVersion gets 409). */
class LeaseStore {
  lease: V1Lease | undefined;
  private version = 0;
  reads = 0;
  writes = 0;

  read(): V1Lease {
    this.reads++;
    if (!this.lease) throw Object.assign(new Error('not found'), { code: 404 });
    return structuredClone(this.lease);
  }

  write(body: V1Lease, create: boolean): V1Lease {
    this.writes++;
    if (create ? this.lease : body.metadata?.resourceVersion !== this.lease?.metadata?.resourceVersion)
      throw Object.assign(new Error('conflict'), { code: 409 });
    this.lease = { ...structuredClone(body), metadata: { ...body.metadata, resourceVersion: String(++this.version) } };
    return structuredClone(this.lease);
  }
}

/** The part of CoordinationV1Api the elector uses, over a shared store, through a network this test controls. */
function leaseApi(store: LeaseStore, network: { mode: Network }, clock: FakeClock): CoordinationV1Api {
  const call = <T>(fn: () => T): Promise<T> => {
    if (network.mode === 'hang') return new Promise<T>(() => undefined);
    if (network.mode === 'fail') return Promise.reject(Object.assign(new Error('connection refused'), { code: 'ECONNREFUSED' }));
    const answer = (resolve: (value: T) => void, reject: (error: unknown) => void) => () => {
      try {
        resolve(fn());
      } catch (error) {
        reject(error);
      }
    };
    if (network.mode === 'slow') return new Promise<T>((resolve, reject) => clock.setTimer(6_000, answer(resolve, reject)));
    return new Promise<T>((resolve, reject) => queueMicrotask(answer(resolve, reject)));
  };
  const api = {
    readNamespacedLease: () => call(() => store.read()),
    createNamespacedLease: ({ body }: { body: V1Lease }) => call(() => store.write(body, true)),
    replaceNamespacedLease: ({ body }: { body: V1Lease }) => call(() => store.write(body, false)),
  };
  return api as unknown as CoordinationV1Api;
}

interface Candidate {
  readonly elector: LeaderElector;
  readonly network: { mode: Network };
  readonly lost: LostLeadership[];
  started: number;
}

const TIMING = leaderElectionTiming(15);

function candidate(store: LeaseStore, clock: FakeClock, identity: string): Candidate {
  const network = { mode: 'ok' as Network };
  const c: Candidate = {
    network,
    lost: [],
    started: 0,
    elector: new LeaderElector(
      leaseApi(store, network, clock),
      { namespace: 'ns', name: 'lease', identity, fieldManager: 'test', ...TIMING },
      {
        clock,
        log: jsonLogger({ write: () => undefined }),
        onStartedLeading: () => (c.started += 1),
        onStoppedLeading: (lost) => void c.lost.push(lost),
      },
    ),
  };
  return c;
}

/** Advances fake time in small steps, letting the promise chains of each step settle; calls `each` after every step. */
async function run(clock: FakeClock, ms: number, each: () => void = () => undefined): Promise<void> {
  for (let t = 0; t < ms; t += 50) {
    clock.advance(50);
    await new Promise((resolve) => setImmediate(resolve));
    each();
  }
}

/** A fresh Lease with `a` leading it, on a fake clock. */
async function aLeads(clock = new FakeClock()): Promise<{ clock: FakeClock; store: LeaseStore; a: Candidate }> {
  const store = new LeaseStore();
  const a = candidate(store, clock, 'a');
  a.elector.start();
  await run(clock, 100);
  return { clock, store, a };
}

describe('LeaderElector', () => {
  it('acquires a missing lease, renews it every retry period and keeps the fence open', async () => {
    const { clock, store, a } = await aLeads();
    expect(a.elector.isLeader()).toBe(true);
    expect(a.started).toBe(1);
    const renewed = store.lease?.spec?.renewTime;
    let closed = 0;
    await run(clock, 60_000, () => void (a.elector.mayWrite() || closed++));
    expect(closed).toBe(0);
    expect(store.lease?.spec?.renewTime).not.toEqual(renewed);
    expect(store.lease?.spec?.holderIdentity).toBe('a');
  });

  it('a leader renews with one write per retry period, over the Lease it last wrote, without reading it', async () => {
    const { clock, store, a } = await aLeads();
    const [reads, writes] = [store.reads, store.writes];
    await run(clock, 60_000);
    expect(store.reads - reads).toBe(0);
    // One renewal every 2–2.4 s.
    expect(store.writes - writes).toBeGreaterThanOrEqual(25);
    expect(store.writes - writes).toBeLessThanOrEqual(30);
    expect([a.elector.mayWrite(), a.lost]).toEqual([true, []]);
  });

  it('a leader whose Lease someone else wrote reads it again: it keeps a Lease still its own, and steps down from a taken one', async () => {
    const { clock, store, a } = await aLeads();
    // A label added by someone else: the Lease is still a's, but its resourceVersion moved on.
    store.write({ ...store.read(), metadata: { ...store.lease!.metadata, labels: { team: 'x' } } }, false);
    const reads = store.reads;
    await run(clock, 5_000);
    expect(store.reads - reads).toBe(1);
    expect(store.lease?.metadata?.labels).toEqual({ team: 'x' });
    expect([a.elector.mayWrite(), a.lost, store.lease?.spec?.holderIdentity]).toEqual([true, [], 'a']);

    // Taken over (as by a standby that saw the lease expire): the renewal's 409 leads to the read that shows it.
    const taken = store.read();
    store.write({ ...taken, spec: { ...taken.spec, holderIdentity: 'b' } }, false);
    await run(clock, 5_000);
    expect(a.lost).toEqual([{ reason: 'the lease is held by b' }]);
    expect(store.lease?.spec?.holderIdentity).toBe('b');
  });

  it.each<Network>(['hang', 'fail'])(
    'a leader whose lease requests %s stops writing at its renew deadline, before a standby may start, and never leads again',
    async (mode) => {
      const { clock, store, a } = await aLeads();
      const b = candidate(store, clock, 'b');
      b.elector.start();
      await run(clock, 5_000);
      expect([a.elector.isLeader(), b.elector.isLeader()]).toEqual([true, false]);

      a.network.mode = mode;
      const cut = clock.monotonic();
      let both = 0;
      let aClosedAt: number | undefined;
      let bOpenedAt: number | undefined;
      await run(clock, 60_000, () => {
        if (a.elector.mayWrite() && b.elector.mayWrite()) both++;
        if (aClosedAt === undefined && !a.elector.mayWrite()) aClosedAt = clock.monotonic();
        if (bOpenedAt === undefined && b.elector.mayWrite()) bOpenedAt = clock.monotonic();
      });
      expect(both).toBe(0);
      // The fence closed within a renew deadline of the last renewal that got through (before the cut).
      expect(aClosedAt! - cut).toBeLessThanOrEqual(TIMING.renewDeadlineMs);
      expect(a.lost).toEqual([{ reason: `no renewal succeeded within the renew deadline (${TIMING.renewDeadlineMs} ms)` }]);
      expect(b.elector.isLeader()).toBe(true);
      // The standby started no sooner than a lease duration after the last renewal it saw.
      expect(bOpenedAt! - cut).toBeGreaterThanOrEqual(TIMING.leaseDurationSeconds * 1000 - TIMING.retryPeriodMs * 1.2);
      expect(bOpenedAt!).toBeGreaterThan(aClosedAt!);

      // The network heals: the deposed leader stays deposed (it exits; its Deployment starts a new one).
      a.network.mode = 'ok';
      await run(clock, 30_000);
      expect([a.elector.isLeader(), a.elector.mayWrite(), a.started]).toEqual([false, false, 1]);
      expect(store.lease?.spec?.holderIdentity).toBe('b');
    },
  );

  it('steps down even when its deadline timer fires a fraction of a millisecond early (timers count whole ms)', async () => {
    const fake = new FakeClock();
    // Every timer fires half a millisecond before it is due, as a timer rounded to whole milliseconds can.
    const clock = Object.assign(Object.create(fake) as FakeClock, { setTimer: (ms: number, fn: () => void) => fake.setTimer(ms - 0.5, fn) });
    const store = new LeaseStore();
    const a = candidate(store, clock, 'a');
    a.elector.start();
    await run(fake, 100);
    a.network.mode = 'hang';
    await run(fake, 30_000);
    expect(a.lost).toHaveLength(1);
  });

  it('renewals slower than a try count for nothing, even though the API server applies them', async () => {
    const { clock, store, a } = await aLeads();
    a.network.mode = 'slow'; // every request is answered after 6 s; a try is abandoned after 5 s
    const cut = clock.monotonic();
    let closedAt: number | undefined;
    await run(clock, 30_000, () => void (closedAt ??= a.elector.mayWrite() ? undefined : clock.monotonic()));
    expect(closedAt! - cut).toBeLessThanOrEqual(TIMING.renewDeadlineMs);
    expect(a.lost).toHaveLength(1);
    expect(store.lease?.spec?.holderIdentity).toBe('a');
  });

  it('keeps trying after a hung try: a standby whose requests hung once still takes over an abandoned lease', async () => {
    const { clock, store, a } = await aLeads();
    await a.elector.stop(); // a dies without releasing
    const b = candidate(store, clock, 'b');
    b.network.mode = 'hang';
    b.elector.start();
    await run(clock, 3_000);
    b.network.mode = 'ok';
    await run(clock, 30_000);
    expect(b.elector.isLeader()).toBe(true);
  });

  it('measures the lease on the monotonic clock: a standby whose wall clock jumps an hour ahead waits the full lease', async () => {
    const { clock, store, a } = await aLeads();
    const b = candidate(store, clock, 'b');
    b.elector.start();
    await run(clock, 1_000);
    await a.elector.stop(); // a stops renewing, keeps the lease until it expires
    clock.stepWall(3_600_000);
    await run(clock, 10_000);
    expect(b.elector.isLeader()).toBe(false);
    await run(clock, 10_000);
    expect(b.elector.isLeader()).toBe(true);
  });

  it('a stop (SIGTERM, then a drain longer than the renew deadline) never reports lost leadership, yet its fence closes at the deadline', async () => {
    const { clock, a } = await aLeads();
    await run(clock, 3_000);
    const stopping = a.elector.stop();
    await run(clock, 50);
    await stopping;
    const stoppedAt = clock.monotonic();
    // The drain may still write: the lease is surely ours until the renew deadline of the last renewal.
    expect(a.elector.mayWrite()).toBe(true);
    let openAfterDeadline = 0;
    let closedAt: number | undefined;
    await run(clock, 30_000, () => {
      if (!a.elector.mayWrite()) closedAt ??= clock.monotonic();
      else if (clock.monotonic() - stoppedAt > TIMING.renewDeadlineMs) openAfterDeadline++;
    });
    expect(closedAt! - stoppedAt).toBeLessThanOrEqual(TIMING.renewDeadlineMs);
    expect(openAfterDeadline).toBe(0);
    expect(a.elector.isLeader()).toBe(false);
    // onStoppedLeading was never called: the agent would report LostLeadership and exit 1 on it.
    expect(a.lost).toEqual([]);
  });

  it('release gives the lease up only while it is surely still ours', async () => {
    const { clock, store, a } = await aLeads();
    await a.elector.stop();
    const released = a.elector.release();
    await run(clock, 100);
    await released;
    expect(store.lease?.spec?.holderIdentity).toBe('');

    const b = candidate(store, clock, 'b');
    b.elector.start();
    await run(clock, 100);
    await b.elector.stop();
    await run(clock, TIMING.renewDeadlineMs); // the fence closed: the lease may be someone else's by now
    await b.elector.release();
    expect(store.lease?.spec?.holderIdentity).toBe('b');
  });

  it('refuses a timing that cannot keep two leaders apart', () => {
    const store = new LeaseStore();
    const hooks = { clock: new FakeClock(), log: jsonLogger({ write: () => undefined }), onStartedLeading: () => undefined, onStoppedLeading: () => undefined };
    const config = { namespace: 'ns', name: 'lease', identity: 'a', fieldManager: 'test', ...TIMING, renewDeadlineMs: 15_000 };
    expect(() => new LeaderElector(leaseApi(store, { mode: 'ok' }, hooks.clock), config, hooks)).toThrow(
      /renew deadline 15000 ms must be shorter than the lease/,
    );
  });
});
