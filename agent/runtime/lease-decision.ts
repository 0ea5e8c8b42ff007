/** What the agent reads of a coordination.k8s.io/v1 Lease (times in ms since the epoch). */
export interface LeaseRecord {
  readonly holderIdentity: string | undefined;
  readonly leaseDurationSeconds: number | undefined;
  readonly acquireTime: number | undefined;
  readonly renewTime: number | undefined;
  readonly leaseTransitions: number | undefined;
}

/** The spec the agent writes. */
export interface LeaseSpecWrite {
  readonly holderIdentity: string;
  readonly leaseDurationSeconds: number;
  readonly acquireTime: number;
  readonly renewTime: number;
  readonly leaseTransitions: number;
}

/** What the candidate does with the lease now. */
export type LeaseDecision =
  /** No lease exists: create it, holding it. */
  | { readonly action: 'create'; readonly spec: LeaseSpecWrite }
  /** The lease is free or expired: take it over (an update carrying the read resourceVersion). */
  | { readonly action: 'acquire'; readonly spec: LeaseSpecWrite }
  /** We hold it: extend it (an update carrying the read resourceVersion). */
  | { readonly action: 'renew'; readonly spec: LeaseSpecWrite }
  /** Someone else holds a live lease: stay standby until `expiresAt` (monotonic time) at the earliest. */
  | { readonly action: 'wait'; readonly holder: string; readonly expiresAt: number };

/** Everything the decision reads. */
export interface LeaseDecisionInput {
  /** The lease as read; undefined when it does not exist. */
  readonly lease: LeaseRecord | undefined;
  /**
   * Monotonic time at which this candidate first saw the lease's current record. Expiry is measured from here, not
   * from the record's renewTime, so clocks of different nodes never need to agree (client-go's rule): a holder that
   * stops renewing loses the lease one lease duration after anyone noticed the record stopped changing. Monotonic, so
   * a wall clock stepped forward never makes a standby take over early.
   */
  readonly observedAt: number;
  /** Monotonic time now (the frame of `observedAt`). */
  readonly monotonicNow: number;
  /** Wall time now: what is written into acquireTime and renewTime, for people and tools reading the Lease. */
  readonly now: number;
  readonly identity: string;
  /** Lease duration to write when taking or renewing the lease. */
  readonly leaseDurationSeconds: number;
}

/**
 * Leader election's pure decision: given the lease, the time and who we are, create, acquire, renew or wait. The
 * lease is free when its holder is empty (a leader released it on shutdown) and expired when its record has not
 * changed for its lease duration.
 */
export function decideLease(input: LeaseDecisionInput): LeaseDecision {
  const { lease, now, identity, leaseDurationSeconds } = input;
  const fresh = (transitions: number): LeaseSpecWrite => ({
    holderIdentity: identity,
    leaseDurationSeconds,
    acquireTime: now,
    renewTime: now,
    leaseTransitions: transitions,
  });
  if (!lease) return { action: 'create', spec: fresh(0) };
  const holder = lease.holderIdentity ?? '';
  if (holder === identity) {
    return {
      action: 'renew',
      spec: {
        holderIdentity: identity,
        leaseDurationSeconds,
        acquireTime: lease.acquireTime ?? now,
        renewTime: now,
        leaseTransitions: lease.leaseTransitions ?? 0,
      },
    };
  }
  const expiresAt = input.observedAt + (lease.leaseDurationSeconds ?? leaseDurationSeconds) * 1000;
  if (holder === '' || input.monotonicNow >= expiresAt) return { action: 'acquire', spec: fresh((lease.leaseTransitions ?? 0) + 1) };
  return { action: 'wait', holder, expiresAt };
}

/**
 * Whether a leader whose last successful renewal started at `lastRenew` (monotonic) must give up: no renewal
 * succeeded within the renew deadline. It steps down before the lease (15 s) can expire for the others (10 s < 15 s),
 * counted from the moment its renewal was sent, which is no later than when any standby observed it: so two leaders
 * never act at once as long as clocks tick at the same rate.
 */
export function mustStepDown(lastRenew: number, monotonicNow: number, renewDeadlineMs: number): boolean {
  return monotonicNow - lastRenew >= renewDeadlineMs;
}

/** The identity of the current record, to notice when it changes (a renewal or a new holder). */
export function recordFingerprint(lease: LeaseRecord | undefined, resourceVersion: string | undefined): string {
  return lease ? `${lease.holderIdentity ?? ''}|${lease.renewTime ?? ''}|${resourceVersion ?? ''}` : '';
}
