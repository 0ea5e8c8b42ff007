import type { V1Lease, V1LeaseSpec } from '@kubernetes/client-node';
import { V1MicroTime } from '@kubernetes/client-node/dist/types.js';
import type { CoordinationV1Api } from './kube-client.js';
import type { CancelTimer, Clock } from './clock.js';
import { apiError, isNotFound } from './kube-errors.js';
import { decideLease, mustStepDown, recordFingerprint, type LeaseDecision, type LeaseRecord, type LeaseSpecWrite } from './lease-decision.js';
import type { Logger } from './log.js';
import { timestampMs } from '../../core/kube/objects.js';

/** Leader election settings (controller-runtime's defaults). */
export interface LeaderElectionConfig {
  readonly namespace: string;
  readonly name: string;
  readonly identity: string;
  /** The field manager of every Lease write, so that managedFields name the program that holds the lease. */
  readonly fieldManager: string;
  /** How long a lease is valid without renewal, for the others. */
  readonly leaseDurationSeconds: number;
  /** How often the leader renews and standbys try to acquire. */
  readonly retryPeriodMs: number;
  /**
   * A leader whose last successful renewal was sent this long ago stops writing and steps down. Shorter than the lease,
   * so it stops before any standby may start.
   */
  readonly renewDeadlineMs: number;
  /** One try (read, then write the Lease) is abandoned after this long, so a hung request never stalls the loop. */
  readonly attemptTimeoutMs: number;
}

/** Defaults: lease 15 s, renew every 2 s, give up after 10 s without a successful renewal, 5 s per try. */
export const LEADER_ELECTION_DEFAULTS = { leaseDurationSeconds: 15, retryPeriodMs: 2_000, renewDeadlineMs: 10_000, attemptTimeoutMs: 5_000 } as const;

type LeaderElectionTiming = Pick<LeaderElectionConfig, 'leaseDurationSeconds' | 'retryPeriodMs' | 'renewDeadlineMs' | 'attemptTimeoutMs'>;

/**
 * The timing for a lease duration, in the proportions of the defaults: the renew deadline is 2/3 of the lease (a
 * leader that cannot renew steps down before the others may take over), the retry period 2/15 of it (several
 * renewals fit in the deadline, even with 20 % jitter) and one try at most half the deadline (two tries fit, however
 * they fail). 15 s gives exactly LEADER_ELECTION_DEFAULTS.
 */
export function leaderElectionTiming(leaseDurationSeconds: number): LeaderElectionTiming {
  const leaseMs = leaseDurationSeconds * 1000;
  const renewDeadlineMs = Math.round((leaseMs * 2) / 3);
  return { leaseDurationSeconds, retryPeriodMs: Math.round((leaseMs * 2) / 15), renewDeadlineMs, attemptTimeoutMs: Math.round(renewDeadlineMs / 2) };
}

/** Why the timing cannot keep two leaders apart (client-go's contract: lease > renew deadline > retry × 1.2), if it cannot. */
export function timingProblem(t: LeaderElectionTiming): string | undefined {
  if (t.renewDeadlineMs >= t.leaseDurationSeconds * 1000)
    return `renew deadline ${t.renewDeadlineMs} ms must be shorter than the lease (${t.leaseDurationSeconds} s)`;
  if (t.retryPeriodMs * 1.2 >= t.renewDeadlineMs)
    return `retry period ${t.retryPeriodMs} ms (+20 % jitter) must be shorter than the renew deadline ${t.renewDeadlineMs} ms`;
  if (t.attemptTimeoutMs > t.renewDeadlineMs) return `a try (${t.attemptTimeoutMs} ms) must fit in the renew deadline ${t.renewDeadlineMs} ms`;
  return undefined;
}

/** Why a leader stopped leading. */
export interface LostLeadership {
  readonly reason: string;
}

/**
 * Leader election on a coordination.k8s.io/v1 Lease, with client-go's semantics and a fence. Every write carries the
 * resourceVersion it read or last wrote, so two candidates can never both win a race (the loser gets 409). The
 * decisions are in lease-decision.ts; this class only reads, writes and keeps time, on the monotonic clock.
 *
 * The fence: {@link mayWrite} is true only while the last successful renewal was sent less than the renew deadline
 * ago, whatever the state of requests in flight; a timer of its own steps down at that instant, even when every lease
 * request hangs. A standby takes over no sooner than one lease duration after it saw that renewal, which came after
 * it was sent, so the old leader's last write starts before the new leader's first.
 *
 * Leading ends once: after `onStoppedLeading` the elector stops (the agent exits and its Deployment starts it again,
 * as controller-runtime does), so nothing from the lost term can linger into a later one.
 */
export class LeaderElector {
  private leading = false;
  private running = false;
  /** `stop` was called: the term ends on purpose, so its deadline passing is no lost leadership. */
  private stopped = false;
  private timer: CancelTimer | undefined;
  private deadlineTimer: CancelTimer | undefined;
  private inFlight: Promise<void> | undefined;
  private observed = { fingerprint: '', at: 0 };
  /** Monotonic time the last successful renewal was sent. */
  private renewedAt = Number.NEGATIVE_INFINITY;
  private lastProblem = '';
  private lastLeader = '';
  /** The Lease as this leader's last write left it (the API server's answer): what the next renewal writes over. */
  private written: V1Lease | undefined;

  constructor(
    private readonly api: CoordinationV1Api,
    private readonly config: LeaderElectionConfig,
    private readonly hooks: {
      readonly clock: Clock;
      readonly log: Logger;
      readonly onStartedLeading: () => void;
      readonly onStoppedLeading: (lost: LostLeadership) => void;
    },
  ) {
    const problem = timingProblem(config);
    if (problem) throw new Error(`leader election: ${problem}`);
  }

  /** Whether this candidate holds the lease. */
  isLeader(): boolean {
    return this.leading;
  }

  /** Whether a write may start now: leading, and the last successful renewal was sent within the renew deadline. */
  mayWrite(): boolean {
    return this.leading && !mustStepDown(this.renewedAt, this.hooks.clock.monotonic(), this.config.renewDeadlineMs);
  }

  /** Starts trying to acquire (and then renewing) the lease in the background. */
  start(): void {
    if (this.running) return;
    this.running = true;
    this.stopped = false;
    this.schedule(0);
  }

  /**
   * Stops trying and renewing (it keeps the lease until it expires or `release` is called). The fence still closes at
   * the renew deadline, but quietly: a drain longer than the deadline is a stop, not a lost leadership (which would
   * make the process exit 1).
   */
  async stop(): Promise<void> {
    this.running = false;
    this.stopped = true;
    this.timer?.();
    this.timer = undefined;
    await this.inFlight;
  }

  /**
   * Gives the lease up (holder emptied, duration 1 s) so that a standby takes over at its next try instead of
   * waiting for the lease to expire. Call after `stop`, and only once the work done as leader has stopped: the standby
   * starts at once. Does nothing when the lease may already be someone else's (the renew deadline passed).
   */
  async release(): Promise<void> {
    const mine = this.mayWrite();
    this.endTerm();
    if (!mine) return;
    try {
      await this.attempt(async () => {
        const lease = await this.api.readNamespacedLease({ name: this.config.name, namespace: this.config.namespace });
        if (lease.spec?.holderIdentity !== this.config.identity) return;
        const now = this.hooks.clock.now();
        const spec: V1LeaseSpec = { ...lease.spec, holderIdentity: '', leaseDurationSeconds: 1, renewTime: micro(now), acquireTime: micro(now) };
        await this.api.replaceNamespacedLease({
          name: this.config.name,
          namespace: this.config.namespace,
          body: { ...lease, spec },
          fieldManager: this.config.fieldManager,
        });
      });
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

  /** Runs one try, abandoned (rejected) after the attempt timeout; the request itself is aborted by the transport. */
  private attempt<T>(work: () => Promise<T>): Promise<T> {
    const { clock } = this.hooks;
    return new Promise<T>((resolve, reject) => {
      const cancel = clock.setTimer(this.config.attemptTimeoutMs, () => reject(new Error(`lease request timed out after ${this.config.attemptTimeoutMs} ms`)));
      work().then(
        (value) => {
          cancel();
          resolve(value);
        },
        (error: unknown) => {
          cancel();
          reject(error instanceof Error ? error : new Error(String(error), { cause: error }));
        },
      );
    });
  }

  private async tick(): Promise<void> {
    const { clock, log } = this.hooks;
    const { name, namespace } = this.config;
    // A renewal counts from before it was sent: the lease it writes is seen by others no earlier than this.
    const sentAt = clock.monotonic();
    try {
      const won = await this.attempt(async () => {
        if (await this.renewOverWritten()) return true;
        let lease: V1Lease | undefined;
        try {
          lease = await this.api.readNamespacedLease({ name, namespace });
        } catch (error) {
          if (!isNotFound(error)) throw error;
        }
        const record = lease ? toRecord(lease.spec) : undefined;
        const fingerprint = recordFingerprint(record, lease?.metadata?.resourceVersion);
        if (fingerprint !== this.observed.fingerprint) this.observed = { fingerprint, at: clock.monotonic() };
        const decision = this.decide(record);
        if (!this.running) return false;
        switch (decision.action) {
          case 'create':
            this.written = await this.api.createNamespacedLease({
              namespace,
              body: { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name, namespace }, spec: toSpec(decision.spec) },
              fieldManager: this.config.fieldManager,
            });
            return true;
          case 'acquire':
          case 'renew':
            // `lease` carries the resourceVersion just read: a concurrent writer makes this fail with 409.
            await this.replace(lease, decision.spec);
            return true;
          case 'wait':
            this.written = undefined;
            if (decision.holder !== this.lastLeader) log.info('another agent leads', { lease: this.leaseName(), leader: decision.holder });
            this.lastLeader = decision.holder;
            if (this.leading) this.stepDown(`the lease is held by ${decision.holder}`);
            return false;
        }
      });
      if (won) this.renewed(sentAt);
    } catch (error) {
      const message = apiError(error).message;
      if (message !== this.lastProblem) log.warn('leader election: lease update failed', { lease: this.leaseName(), error: message });
      this.lastProblem = message;
    }
  }

  /**
   * client-go's fast path: a leader whose fence is open writes its renewal over the Lease it last wrote, without
   * reading it first (one request per retry period instead of two). The write carries that Lease's resourceVersion:
   * if anyone wrote the Lease since, it fails with 409 and the try goes on with a read, as a standby's does.
   */
  private async renewOverWritten(): Promise<boolean> {
    const last = this.written;
    if (!last || !this.running || !this.mayWrite()) return false;
    const decision = this.decide(toRecord(last.spec));
    if (decision.action !== 'renew') return false;
    try {
      await this.replace(last, decision.spec);
      return true;
    } catch {
      // Not reported: the read that follows in the same try finds out whether the Lease is still ours.
      this.written = undefined;
      return false;
    }
  }

  private decide(lease: LeaseRecord | undefined): LeaseDecision {
    const { clock } = this.hooks;
    return decideLease({
      lease,
      observedAt: this.observed.at,
      monotonicNow: clock.monotonic(),
      now: clock.now(),
      identity: this.config.identity,
      leaseDurationSeconds: this.config.leaseDurationSeconds,
    });
  }

  /** Writes `spec` over `lease` (as read or last written), whose resourceVersion makes the write fail with 409 if anyone wrote since. */
  private async replace(lease: V1Lease | undefined, spec: LeaseSpecWrite): Promise<void> {
    this.written = await this.api.replaceNamespacedLease({
      name: this.config.name,
      namespace: this.config.namespace,
      body: { ...lease, spec: toSpec(spec) },
      fieldManager: this.config.fieldManager,
    });
  }

  private renewed(sentAt: number): void {
    const { clock } = this.hooks;
    if (!this.running || sentAt <= this.renewedAt) return;
    // A renewal that came back after its own deadline gives no time to act; one that came back after the term's
    // deadline does not revive the term (the deadline timer ends it).
    if (mustStepDown(sentAt, clock.monotonic(), this.config.renewDeadlineMs) || (this.leading && !this.mayWrite())) return;
    this.renewedAt = sentAt;
    this.lastProblem = '';
    this.lastLeader = this.config.identity;
    this.armDeadline();
    if (this.leading) return;
    this.leading = true;
    this.hooks.log.info('became leader', { lease: this.leaseName(), identity: this.config.identity });
    this.hooks.onStartedLeading();
  }

  /**
   * Steps down at the renew deadline of the last renewal, by a timer of its own so that no hung request can delay it.
   * Timers count whole milliseconds and may fire a fraction early: one that finds the deadline not yet passed waits
   * for the rest.
   */
  private armDeadline(): void {
    const { clock } = this.hooks;
    this.deadlineTimer?.();
    const remaining = this.renewedAt + this.config.renewDeadlineMs - clock.monotonic();
    this.deadlineTimer = clock.setTimer(Math.max(1, Math.ceil(remaining)), () => {
      if (!this.leading) return;
      if (this.mayWrite()) this.armDeadline();
      else if (this.stopped) this.endQuietly();
      else this.stepDown(`no renewal succeeded within the renew deadline (${this.config.renewDeadlineMs} ms)`);
    });
  }

  private stepDown(why: string): void {
    this.endTerm();
    this.running = false;
    this.timer?.();
    this.timer = undefined;
    this.hooks.log.warn('lost leadership', { lease: this.leaseName(), reason: why });
    this.hooks.onStoppedLeading({ reason: why });
  }

  /** The deadline of a stopped elector: the term ends (mayWrite was already false by the clock), nothing is reported. */
  private endQuietly(): void {
    this.endTerm();
    this.hooks.log.info('renew deadline passed while stopping; writes are refused from now on', { lease: this.leaseName() });
  }

  private endTerm(): void {
    this.leading = false;
    this.written = undefined;
    this.deadlineTimer?.();
    this.deadlineTimer = undefined;
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
    acquireTime: timestampMs(spec?.acquireTime),
    renewTime: timestampMs(spec?.renewTime),
    leaseTransitions: spec?.leaseTransitions,
  };
}
