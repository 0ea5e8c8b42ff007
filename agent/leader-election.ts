import { V1MicroTime, type CoordinationV1Api, type V1Lease, type V1LeaseSpec } from '@kubernetes/client-node';
import type { CancelTimer, Clock } from './clock.js';
import { FIELD_MANAGER } from './field-manager.js';
import { apiError, isNotFound } from './kube-errors.js';
import { decideLease, mustStepDown, recordFingerprint, type LeaseRecord, type LeaseSpecWrite } from './lease-decision.js';
import type { Logger } from './log.js';
import { timestampMs } from './objects.js';

/** Leader election settings (controller-runtime's defaults). */
export interface LeaderElectionConfig {
  readonly namespace: string;
  readonly name: string;
  readonly identity: string;
  /** How long a lease is valid without renewal, for the others. */
  readonly leaseDurationSeconds: number;
  /** How often the leader renews and standbys try to acquire. */
  readonly retryPeriodMs: number;
  /** A leader whose renewals failed this long gives up (shorter than the lease, so it stops before others start). */
  readonly renewDeadlineMs: number;
}

/** Defaults: lease 15 s, renew every 2 s, give up after 10 s without a successful renewal. */
export const LEADER_ELECTION_DEFAULTS = { leaseDurationSeconds: 15, retryPeriodMs: 2_000, renewDeadlineMs: 10_000 } as const;

/**
 * The timing for a lease duration, in the proportions of the defaults: the renew deadline is 2/3 of the lease (a
 * leader that cannot renew steps down before the others may take over) and the retry period 2/15 of it (several
 * renewals fit in the deadline, even with 20 % jitter). 15 s gives exactly LEADER_ELECTION_DEFAULTS.
 */
export function leaderElectionTiming(leaseDurationSeconds: number): Pick<LeaderElectionConfig, 'leaseDurationSeconds' | 'retryPeriodMs' | 'renewDeadlineMs'> {
  const leaseMs = leaseDurationSeconds * 1000;
  return { leaseDurationSeconds, retryPeriodMs: Math.round((leaseMs * 2) / 15), renewDeadlineMs: Math.round((leaseMs * 2) / 3) };
}

/**
 * Leader election on a coordination.k8s.io/v1 Lease, with client-go's semantics. Every write carries the
 * resourceVersion it read, so two candidates can never both win a race (the loser gets 409). The decisions are in
 * lease-decision.ts; this class only reads, writes and keeps time.
 */
export class LeaderElector {
  private leading = false;
  private running = false;
  private timer: CancelTimer | undefined;
  private inFlight: Promise<void> | undefined;
  private observed = { fingerprint: '', at: 0 };
  private lastRenew = 0;
  private lastProblem = '';
  private lastLeader = '';

  constructor(
    private readonly api: CoordinationV1Api,
    private readonly config: LeaderElectionConfig,
    private readonly hooks: { readonly clock: Clock; readonly log: Logger; readonly onStartedLeading: () => void; readonly onStoppedLeading: () => void },
  ) {}

  /** Whether this candidate holds the lease. */
  isLeader(): boolean {
    return this.leading;
  }

  /** Starts trying to acquire (and then renewing) the lease in the background. */
  start(): void {
    if (this.running) return;
    this.running = true;
    this.schedule(0);
  }

  /** Stops trying and renewing (it keeps the lease until it expires or `release` is called). */
  async stop(): Promise<void> {
    this.running = false;
    this.timer?.();
    this.timer = undefined;
    await this.inFlight;
  }

  /**
   * Gives the lease up (holder emptied, duration 1 s) so that a standby takes over at its next try instead of
   * waiting for the lease to expire. Call after `stop` and after the work done as leader has finished.
   */
  async release(): Promise<void> {
    if (!this.leading) return;
    this.leading = false;
    try {
      const lease = await this.api.readNamespacedLease({ name: this.config.name, namespace: this.config.namespace });
      if (lease.spec?.holderIdentity !== this.config.identity) return;
      const now = this.hooks.clock.now();
      const spec: V1LeaseSpec = { ...lease.spec, holderIdentity: '', leaseDurationSeconds: 1, renewTime: micro(now), acquireTime: micro(now) };
      await this.api.replaceNamespacedLease({ name: this.config.name, namespace: this.config.namespace, body: { ...lease, spec }, fieldManager: FIELD_MANAGER });
      this.hooks.log.info('released leadership', { lease: this.leaseName() });
    } catch (error) {
      // Not fatal: the standby takes over once the lease expires.
      this.hooks.log.warn('could not release the lease', { lease: this.leaseName(), error: apiError(error).message });
    }
  }

  private schedule(ms: number): void {
    if (!this.running) return;
    this.timer = this.hooks.clock.setTimer(ms, () => {
      this.inFlight = this.tick().finally(() => {
        this.inFlight = undefined;
        // Up to 20 % jitter keeps standbys from hitting the API server in lockstep.
        this.schedule(this.config.retryPeriodMs * (1 + Math.random() * 0.2));
      });
    });
  }

  private async tick(): Promise<void> {
    const { clock, log } = this.hooks;
    const { name, namespace, identity } = this.config;
    const now = clock.now();
    try {
      let lease: V1Lease | undefined;
      try {
        lease = await this.api.readNamespacedLease({ name, namespace });
      } catch (error) {
        if (!isNotFound(error)) throw error;
      }
      const record = lease ? toRecord(lease.spec) : undefined;
      const fingerprint = recordFingerprint(record, lease?.metadata?.resourceVersion);
      if (fingerprint !== this.observed.fingerprint) this.observed = { fingerprint, at: now };
      const decision = decideLease({ lease: record, observedAt: this.observed.at, now, identity, leaseDurationSeconds: this.config.leaseDurationSeconds });
      if (!this.running) return;
      switch (decision.action) {
        case 'create':
          await this.api.createNamespacedLease({
            namespace,
            body: { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name, namespace }, spec: toSpec(decision.spec) },
            fieldManager: FIELD_MANAGER,
          });
          return this.renewed(now);
        case 'acquire':
        case 'renew':
          // `lease` carries the resourceVersion just read: a concurrent writer makes this fail with 409.
          await this.api.replaceNamespacedLease({ name, namespace, body: { ...lease, spec: toSpec(decision.spec) }, fieldManager: FIELD_MANAGER });
          return this.renewed(now);
        case 'wait':
          if (decision.holder !== this.lastLeader) log.info('another agent leads', { lease: this.leaseName(), leader: decision.holder });
          this.lastLeader = decision.holder;
          if (this.leading) this.stepDown(`the lease is held by ${decision.holder}`);
          return;
      }
    } catch (error) {
      const message = apiError(error).message;
      if (message !== this.lastProblem) log.warn('leader election: lease update failed', { lease: this.leaseName(), error: message });
      this.lastProblem = message;
      if (this.leading && mustStepDown(this.lastRenew, clock.now(), this.config.renewDeadlineMs)) this.stepDown('renewals failed past the renew deadline');
    }
  }

  private renewed(now: number): void {
    this.lastRenew = now;
    this.lastProblem = '';
    this.lastLeader = this.config.identity;
    if (this.leading || !this.running) return;
    this.leading = true;
    this.hooks.log.info('became leader', { lease: this.leaseName(), identity: this.config.identity });
    this.hooks.onStartedLeading();
  }

  private stepDown(why: string): void {
    this.leading = false;
    this.hooks.log.warn('lost leadership', { lease: this.leaseName(), reason: why });
    this.hooks.onStoppedLeading();
  }

  private leaseName(): string {
    return `${this.config.namespace}/${this.config.name}`;
  }
}

/** Lease times are MicroTime: client-node's V1MicroTime serializes with the 6 fractional digits the API requires. */
function micro(ms: number): V1MicroTime {
  return new V1MicroTime(ms);
}

function toSpec(spec: LeaseSpecWrite): V1LeaseSpec {
  return {
    holderIdentity: spec.holderIdentity,
    leaseDurationSeconds: spec.leaseDurationSeconds,
    acquireTime: micro(spec.acquireTime),
    renewTime: micro(spec.renewTime),
    leaseTransitions: spec.leaseTransitions,
  };
}

/** Reads a lease spec; client-node leaves MicroTime as the raw string at runtime despite its Date type. */
function toRecord(spec: V1LeaseSpec | undefined): LeaseRecord {
  return {
    holderIdentity: spec?.holderIdentity,
    leaseDurationSeconds: spec?.leaseDurationSeconds,
    acquireTime: timestampMs(spec?.acquireTime as Date | string | undefined),
    renewTime: timestampMs(spec?.renewTime as Date | string | undefined),
    leaseTransitions: spec?.leaseTransitions,
  };
}
