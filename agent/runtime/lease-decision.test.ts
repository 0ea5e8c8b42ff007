import { describe, expect, it } from 'vitest';
import { decideLease, mustStepDown, recordFingerprint, type LeaseRecord } from './lease-decision.js';

const NOW = Date.UTC(2026, 0, 1, 12);
const held = (holder: string, extra: Partial<LeaseRecord> = {}): LeaseRecord => ({
  holderIdentity: holder,
  leaseDurationSeconds: 15,
  acquireTime: NOW - 60_000,
  renewTime: NOW - 1_000,
  leaseTransitions: 3,
  ...extra,
});

describe('decideLease', () => {
  it('creates the lease when there is none', () => {
    expect(decideLease({ lease: undefined, observedAt: NOW, monotonicNow: NOW, now: NOW, identity: 'me', leaseDurationSeconds: 15 })).toEqual({
      action: 'create',
      spec: { holderIdentity: 'me', leaseDurationSeconds: 15, acquireTime: NOW, renewTime: NOW, leaseTransitions: 0 },
    });
  });

  it('renews its own lease, keeping acquireTime and transitions', () => {
    expect(decideLease({ lease: held('me'), observedAt: NOW - 1_000, monotonicNow: NOW, now: NOW, identity: 'me', leaseDurationSeconds: 15 })).toEqual({
      action: 'renew',
      spec: { holderIdentity: 'me', leaseDurationSeconds: 15, acquireTime: NOW - 60_000, renewTime: NOW, leaseTransitions: 3 },
    });
  });

  it('renews its own lease even when it looks expired (it is still ours until someone else takes it)', () => {
    expect(decideLease({ lease: held('me'), observedAt: NOW - 60_000, monotonicNow: NOW, now: NOW, identity: 'me', leaseDurationSeconds: 15 }).action).toBe(
      'renew',
    );
  });

  it("waits while another holder's lease is live", () => {
    expect(decideLease({ lease: held('other'), observedAt: NOW - 14_999, monotonicNow: NOW, now: NOW, identity: 'me', leaseDurationSeconds: 15 })).toEqual({
      action: 'wait',
      holder: 'other',
      expiresAt: NOW + 1,
    });
  });

  it('acquires a lease whose record has not changed for its duration', () => {
    expect(decideLease({ lease: held('other'), observedAt: NOW - 15_000, monotonicNow: NOW, now: NOW, identity: 'me', leaseDurationSeconds: 15 })).toEqual({
      action: 'acquire',
      spec: { holderIdentity: 'me', leaseDurationSeconds: 15, acquireTime: NOW, renewTime: NOW, leaseTransitions: 4 },
    });
  });

  it("measures expiry from local observation, not the holder's clock", () => {
    // The holder's renewTime is an hour old (its clock is behind), but we saw the record change just now: wait.
    const skewed = held('other', { renewTime: NOW - 3_600_000 });
    expect(decideLease({ lease: skewed, observedAt: NOW, monotonicNow: NOW, now: NOW, identity: 'me', leaseDurationSeconds: 15 }).action).toBe('wait');
  });

  it('measures expiry on the monotonic clock: a wall clock stepped an hour ahead takes nothing over early', () => {
    const decision = decideLease({
      lease: held('other'),
      observedAt: NOW - 1_000,
      monotonicNow: NOW,
      now: NOW + 3_600_000,
      identity: 'me',
      leaseDurationSeconds: 15,
    });
    expect(decision).toEqual({ action: 'wait', holder: 'other', expiresAt: NOW + 14_000 });
  });

  it("uses the lease's own duration to decide expiry", () => {
    const long = held('other', { leaseDurationSeconds: 60 });
    expect(decideLease({ lease: long, observedAt: NOW - 30_000, monotonicNow: NOW, now: NOW, identity: 'me', leaseDurationSeconds: 15 }).action).toBe('wait');
  });

  it('acquires a released lease at once', () => {
    for (const holder of ['', undefined]) {
      const released = held('x', { holderIdentity: holder, leaseDurationSeconds: 1 });
      const decision = decideLease({ lease: released, observedAt: NOW, monotonicNow: NOW, now: NOW, identity: 'me', leaseDurationSeconds: 15 });
      expect(decision.action).toBe('acquire');
      expect(decision.action === 'acquire' && decision.spec.leaseDurationSeconds).toBe(15);
    }
  });

  it('counts a transition from missing fields as the first', () => {
    const bare: LeaseRecord = {
      holderIdentity: undefined,
      leaseDurationSeconds: undefined,
      acquireTime: undefined,
      renewTime: undefined,
      leaseTransitions: undefined,
    };
    const decision = decideLease({ lease: bare, observedAt: NOW, monotonicNow: NOW, now: NOW, identity: 'me', leaseDurationSeconds: 15 });
    expect(decision.action === 'acquire' && decision.spec.leaseTransitions).toBe(1);
  });
});

describe('mustStepDown', () => {
  it('steps down once the last successful renewal was sent a renew deadline ago', () => {
    expect(mustStepDown(NOW - 9_999, NOW, 10_000)).toBe(false);
    expect(mustStepDown(NOW - 10_000, NOW, 10_000)).toBe(true);
  });
});

describe('recordFingerprint', () => {
  it('changes with holder, renewal and resourceVersion', () => {
    const a = recordFingerprint(held('x'), '1');
    expect(recordFingerprint(held('x'), '1')).toBe(a);
    expect(recordFingerprint(held('x'), '2')).not.toBe(a);
    expect(recordFingerprint(held('y'), '1')).not.toBe(a);
    expect(recordFingerprint(held('x', { renewTime: NOW }), '1')).not.toBe(a);
    expect(recordFingerprint(undefined, undefined)).toBe('');
  });
});
