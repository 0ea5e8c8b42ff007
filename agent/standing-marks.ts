import type { MetaObject, ObjectMeta } from '../core/kube/objects.js';
import type { MarkPodAction } from '../core/rollout/actions.js';
import { markAnnotations } from '../core/rollout/removal-marks.js';
import type { Clock } from './runtime/clock.js';
import type { EdKey } from './keys.js';
import { OWN_WRITES_TTL_MS } from './own-writes.js';

/**
 * Standing marks in flight at once, across the agent, while a reconcile is under way. The marks of a completed rollout
 * wait for nothing, and a burst of them delays the writes other rollouts' next steps wait for: at 200 rollouts at
 * once, with 30 or more of them sent in the 500 ms before a step's write (up to 8 per region and reconcile), the API
 * server received that write 251 ms after it left the agent at p90 (14–36 ms without).
 */
export const STANDING_MARK_CONCURRENCY = 2;

/** What the lane needs of the agent. */
export interface StandingMarksDeps {
  /**
   * Sends one mark; rejects with the API server's error. `whenIdle`: offered so (OfferOptions), a mark of a rollout
   * under way.
   */
  readonly send: (key: EdKey, namespace: string, mark: MarkPodAction, whenIdle: boolean) => Promise<void>;
  /** Asks for a look at the key: a mark of it failed, and the look reports the failure (see offer). */
  readonly wake: (key: EdKey) => void;
  readonly clock: Clock;
  /** How many marks may be in flight now (read before each send); STANDING_MARK_CONCURRENCY when absent. */
  readonly limit?: () => number;
  /** Whether no reconcile is under way now (marks offered `whenIdle` go out only then); always when absent. */
  readonly idle?: () => boolean;
}

/** How a look's standing marks are to go out. */
export interface OfferOptions {
  /**
   * Only while no reconcile is under way, STANDING_MARK_CONCURRENCY at most in flight: the marks of a rollout under way.
   * Where the agent has time between looks (a few rollouts), they are made long before the rollout ends, which then
   * writes none; where its looks follow each other (many at once), they wait rather than delay the steps of the others
   * (bench:peers, 200 rollouts at once, sent two at a time like the marks of completed rollouts: reaction p99 331 ms
   * against 176), and go out with the marks of the completed rollout once it is.
   */
  readonly whenIdle?: boolean;
}

interface Entry {
  readonly key: EdKey;
  readonly namespace: string;
  readonly mark: MarkPodAction;
  state: 'queued' | 'sending' | 'sent';
  /** When the API server answered it (state sent). */
  sentAt?: number;
  /** Offered `whenIdle` only (OfferOptions), so queued in `whenIdle`, not `queue`. */
  whenIdle: boolean;
}

/**
 * Whether `pod` is `previous` with `mark` made on it and nothing else changed (its version and managed fields aside):
 * the watch's echo of the mark. Objects of the same pod as the API server serialises them, so equal content reads as
 * equal text; annotations are compared as maps (a mark added to them may sort anywhere).
 */
export function isMarkEcho(previous: MetaObject, pod: MetaObject, mark: MarkPodAction): boolean {
  const annotations = pod.metadata?.annotations ?? {};
  const marked: Record<string, string | null> = { ...previous.metadata?.annotations, ...markAnnotations(mark) };
  const names = Object.keys(annotations);
  if (names.length !== Object.keys(marked).length || names.some((name) => marked[name] !== annotations[name])) return false;
  const rest = ({ metadata, ...object }: MetaObject) => {
    const { resourceVersion: _version, managedFields: _fields, annotations: _annotations, ...meta }: ObjectMeta & { managedFields?: unknown } = metadata ?? {};
    return JSON.stringify({ ...object, metadata: meta });
  };
  return rest(previous) === rest(pod);
}

/**
 * The lane of standing marks (MarkPodAction.standing): the agent's one queue of writes that no reconcile waits for.
 * They go out in the order offered, a few at a time (as many as the agent allows now: `limit`), after the writes of
 * the reconciles that planned them, so the steps of rollouts under way are not queued behind them at the API server;
 * those of rollouts under way only while no reconcile is (OfferOptions.whenIdle).
 *
 * A pod's mark is sent once while the looks at its key keep planning it: until a look no longer plans it (the cache
 * shows it, the pod is gone, or a new rollout makes it an ordinary mark, performed in the reconcile), or, once
 * answered, for as long as the key's own writes are trusted to show in the cache (OWN_WRITES_TTL_MS). A failed mark
 * drops the key's queued ones and wakes the key; its next look fails with the error, as a failed write of its own
 * would (the controller's backoff, the Forbidden report). Nothing here is needed after a restart: the next leader's
 * looks plan the marks the pods lack.
 */
export class StandingMarks {
  private readonly entries = new Map<string, Entry>();
  private readonly byKey = new Map<EdKey, Set<string>>();
  private readonly failures = new Map<EdKey, unknown>();
  private queue: string[] = [];
  private whenIdle: string[] = [];
  private inFlight = 0;
  private sweptAt = Number.NEGATIVE_INFINITY;
  private readonly sending = new Set<Promise<void>>();

  constructor(private readonly deps: StandingMarksDeps) {}

  /**
   * The standing marks a look at `key` planned (all of them: marks not among them are dropped unless in flight).
   * Returns the failure of one of the key's marks since its last look, if any; nothing is queued for the key then, so
   * that the key's backoff paces the next try.
   */
  offer(key: EdKey, namespace: string, marks: readonly MarkPodAction[], options: OfferOptions = {}): { readonly failure: unknown } | undefined {
    if (this.failures.has(key)) {
      const failure = this.failures.get(key);
      this.failures.delete(key);
      return { failure };
    }
    const now = this.deps.clock.now();
    this.sweep(now);
    const planned = new Set(marks.map((m) => m.uid));
    for (const uid of this.byKey.get(key) ?? []) {
      const entry = this.entries.get(uid)!;
      if (entry.state !== 'sending' && (!planned.has(uid) || this.expired(entry, now))) this.drop(uid);
    }
    const whenIdle = options.whenIdle === true;
    for (const mark of marks) {
      const entry = this.entries.get(mark.uid);
      if (entry) {
        // The rollout completed while its mark waited for an idle moment: it goes out as the completed rollout's now.
        if (entry.state === 'queued' && entry.whenIdle && !whenIdle) {
          entry.whenIdle = false;
          this.queue.push(mark.uid);
        }
        continue;
      }
      this.entries.set(mark.uid, { key, namespace, mark, state: 'queued', whenIdle });
      this.byKey.set(key, (this.byKey.get(key) ?? new Set()).add(mark.uid));
      (whenIdle ? this.whenIdle : this.queue).push(mark.uid);
    }
    this.pump();
    return undefined;
  }

  /**
   * Whether a pod's update (`previous`, as cached before it) is the echo of a mark of a rollout under way
   * (OfferOptions.whenIdle) sent or being sent: it wakes no look. None of the rollout's steps waits for the mark, and
   * the look on it finds nothing to do (bench:peers, one rollout: 40.8 reconciles per rollout with them woken, 37.6
   * before the marks were made during the rollout). The marks of completed rollouts are the key's own writes, which
   * its looks wait for (see Reconciler.sendStandingMark).
   */
  isEcho(pod: MetaObject, previous: MetaObject | undefined): boolean {
    const entry = this.entries.get(pod.metadata?.uid ?? '');
    return previous !== undefined && entry !== undefined && entry.whenIdle && entry.state !== 'queued' && isMarkEcho(previous, pod, entry.mark);
  }

  /** Sends what may go now: called when the last reconcile under way ended (see OfferOptions.whenIdle). */
  resume(): void {
    this.pump();
  }

  /** Forgets the key (deleted): its queued marks are dropped. */
  forget(key: EdKey): void {
    for (const uid of this.byKey.get(key) ?? []) if (this.entries.get(uid)?.state !== 'sending') this.drop(uid);
    this.failures.delete(key);
  }

  /** Drops every queued mark (the leadership term ended); resolves once the marks in flight are answered. */
  async clear(): Promise<void> {
    for (const key of [...this.byKey.keys()]) this.forget(key);
    this.queue = [];
    this.whenIdle = [];
    await Promise.all(this.sending);
  }

  /** Resolves once nothing is queued or in flight. */
  async idle(): Promise<void> {
    while (this.sending.size > 0) await Promise.all(this.sending);
  }

  private pump(): void {
    for (let entry = this.next(); entry; entry = this.next()) {
      entry.state = 'sending';
      this.inFlight += 1;
      const sent: Promise<void> = this.deps
        .send(entry.key, entry.namespace, entry.mark, entry.whenIdle)
        .then(
          () => {
            entry.state = 'sent';
            entry.sentAt = this.deps.clock.now();
          },
          (error: unknown) => this.failed(entry, error),
        )
        .finally(() => {
          this.inFlight -= 1;
          this.sending.delete(sent);
          this.pump();
        });
      this.sending.add(sent);
    }
  }

  /** The next mark that may go now: the completed rollouts' in the order offered, then (when idle) the others'. */
  private next(): Entry | undefined {
    while (this.inFlight < (this.deps.limit?.() ?? STANDING_MARK_CONCURRENCY) && this.queue.length > 0) {
      const entry = this.entries.get(this.queue.shift()!);
      if (entry?.state === 'queued' && !entry.whenIdle) return entry;
    }
    if (this.inFlight >= STANDING_MARK_CONCURRENCY || !(this.deps.idle?.() ?? true)) return undefined;
    while (this.whenIdle.length > 0) {
      const entry = this.entries.get(this.whenIdle.shift()!);
      if (entry?.state === 'queued' && entry.whenIdle) return entry;
    }
    return undefined;
  }

  /** Whether an answered mark is past the time its key's look should show it (the cache or the pod moved on otherwise). */
  private expired(entry: Entry, now: number): boolean {
    return entry.state === 'sent' && now - entry.sentAt! >= OWN_WRITES_TTL_MS;
  }

  /** Drops every expired answered mark, at most once per OWN_WRITES_TTL_MS: keys no longer looked at keep none. */
  private sweep(now: number): void {
    if (now - this.sweptAt < OWN_WRITES_TTL_MS) return;
    this.sweptAt = now;
    for (const [uid, entry] of this.entries) if (this.expired(entry, now)) this.drop(uid);
  }

  private failed(entry: Entry, error: unknown): void {
    // Dropped meanwhile (a new term, the key deleted): the looks of whoever plans it now decide.
    if (this.entries.get(entry.mark.uid) !== entry) return;
    this.drop(entry.mark.uid);
    for (const uid of this.byKey.get(entry.key) ?? []) if (this.entries.get(uid)?.state === 'queued') this.drop(uid);
    if (this.failures.has(entry.key)) return;
    this.failures.set(entry.key, error);
    this.deps.wake(entry.key);
  }

  private drop(uid: string): void {
    const entry = this.entries.get(uid);
    if (!entry) return;
    this.entries.delete(uid);
    const uids = this.byKey.get(entry.key);
    uids?.delete(uid);
    if (uids?.size === 0) this.byKey.delete(entry.key);
  }
}
