// The pieces of the API-fault suite that need no cluster: the seeded schedule, which requests a fault can hit, the
// verdicts, and the request-count bounds derived from the agent's retry policies.
import { describe, expect, it } from 'vitest';
import { maxInformerStartsWithin, maxRetriesWithin } from '../e2e/backoff-bounds.js';
import { applies, endpointOf, FAULT_KINDS, FaultInjector, faultSchedule } from '../e2e/fault-injector.js';

const request = (method: string, path: string, at: number) => ({ method, path, body: Buffer.alloc(0), at });

describe('faultSchedule', () => {
  it('is a function of the seed, covers every kind, and stays inside the duration', () => {
    const a = faultSchedule(42, 30_000, 12);
    expect(faultSchedule(42, 30_000, 12)).toEqual(a);
    expect(faultSchedule(43, 30_000, 12)).not.toEqual(a);
    expect(new Set(a.map((w) => w.kind))).toEqual(new Set(FAULT_KINDS));
    for (const w of a) {
      expect(w.from).toBeGreaterThanOrEqual(0);
      expect(w.to).toBeLessThanOrEqual(30_000);
      expect(w.to - w.from).toBeGreaterThanOrEqual(1500);
    }
  });
});

describe('fault targets', () => {
  it('names endpoints as the agent metrics do', () => {
    expect(endpointOf(request('PUT', '/apis/extendeddeployment.io/v1beta1/namespaces/n/extendeddeployments/web/status', 0))).toBe(
      'PUT extendeddeployments/status',
    );
    expect(endpointOf(request('GET', '/api/v1/namespaces/n/pods?labelSelector=x&watch=true&resourceVersion=5', 0))).toBe('WATCH pods');
    expect(endpointOf(request('GET', '/apis/apps/v1/namespaces/n/replicasets?labelSelector=x', 0))).toBe('LIST replicasets');
  });

  it('hits watches only with watch faults, writes only with conflicts, never events', () => {
    expect(applies('watchGone', 'WATCH pods')).toBe(true);
    expect(applies('watchGone', 'LIST pods')).toBe(false);
    expect(applies('serverError', 'WATCH pods')).toBe(false);
    expect(applies('conflict', 'PATCH replicasets')).toBe(true);
    expect(applies('conflict', 'LIST replicasets')).toBe(false);
    expect(applies('slow', 'PUT leases')).toBe(true);
    expect(applies('conflict', 'PUT leases')).toBe(true);
    expect(applies('serverError', 'POST events')).toBe(false);
  });
});

describe('FaultInjector', () => {
  it('forwards outside windows and hits every matching request of a window with probability 1', () => {
    const injector = new FaultInjector(1, [{ kind: 'throttled', from: 1000, to: 2000, probability: 1, endpoints: ['PUT extendeddeployments/status'] }], 0);
    const status = (at: number) => request('PUT', '/apis/extendeddeployment.io/v1beta1/namespaces/n/extendeddeployments/web/status', at);
    expect(injector.verdict(status(999))).toBe('forward');
    expect(injector.verdict(status(1000))).toEqual({ status: 429, reason: 'TooManyRequests', headers: { 'retry-after': '2' } });
    expect(injector.verdict(request('PATCH', '/apis/apps/v1/namespaces/n/replicasets/web-a', 1500))).toBe('forward');
    expect(injector.verdict(status(2000))).toBe('forward');
    expect(injector.injected.get('throttled')).toBe(1);
    expect(injector.count('PUT extendeddeployments/status', 0, 3000)).toBe(3);
    expect(injector.totals()).toEqual({ 'PUT extendeddeployments/status': 3, 'PATCH replicasets': 1 });
  });

  it('hits Lease requests only in a window that names them', () => {
    const lease = (at: number) => request('PUT', '/apis/coordination.k8s.io/v1/namespaces/n/leases/agent', at);
    const random = new FaultInjector(1, [{ kind: 'serverError', from: 0, to: 1000, probability: 1 }], 0);
    expect(random.verdict(lease(10))).toBe('forward');
    const named = new FaultInjector(1, [{ kind: 'serverError', from: 0, to: 1000, probability: 1, endpoints: ['PUT leases'] }], 0);
    expect(named.verdict(lease(10))).toMatchObject({ status: 500 });
  });
});

describe('retry bounds from the agent policies', () => {
  it('work queue: 5 ms doubling per key, so 1 + 7 tries fit in 1 s and 1 + 10 in 10 s', () => {
    // Delays 5, 10, …, 320 ms add up to 635 ms (the next, 640, would end at 1275); up to 2560 ms they add up to 5115.
    expect(maxRetriesWithin(1000)).toBe(8);
    expect(maxRetriesWithin(10_000)).toBe(11);
  });

  it('informer: restarts after 0.25, 0.5, 1, 2, 4 s at the least, so 5 starts fit in 6 s and 6 in 8 s', () => {
    expect(maxInformerStartsWithin(6000)).toBe(5);
    expect(maxInformerStartsWithin(8000)).toBe(6);
  });
});
