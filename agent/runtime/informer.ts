import type { Informer, KubernetesListObject, KubernetesObject, ObjectCache } from '@kubernetes/client-node';
import type { WatchAccess } from './kube-watch.js';
import { backoffDelay, type BackoffOptions } from './backoff.js';
import type { CancelTimer, Clock } from './clock.js';
import { apiError } from './kube-errors.js';
import type { Logger } from './log.js';
import { ObjectIndex, type IndexValues } from './object-index.js';
import { transformingInformer } from './slim-informer.js';

/** Read access to an informer's cache. Objects are shared with the cache: never modify them. */
export interface CacheReader<T> {
  /** Every cached object, or those of one namespace. */
  list(namespace?: string): readonly T[];
  get(name: string, namespace?: string): T | undefined;
}

/** A cache that also lists objects by an index value (client-go's `Indexer.ByIndex`). */
export interface IndexedCacheReader<T> extends CacheReader<T> {
  /** The cached objects whose index value is `value`. */
  byIndex(value: string): readonly T[];
}

/** An informer as the agent runs it: a cache it starts and stops, and can ask how it is doing. */
export interface RunningInformer<T> extends IndexedCacheReader<T> {
  /** The resource name (for logs and readiness). */
  readonly resource: string;
  /** Whether the cache is complete: its first list done and its watch started. */
  synced(): boolean;
  /** Why it is stuck (a request that hangs), or undefined. */
  stuck(): string | undefined;
  /** The read (list or watch) the API server forbids now, or undefined. */
  forbidden(): 'list' | 'watch' | undefined;
  start(): void;
  stop(): Promise<void>;
}

/** What an informer reports: an object was added, updated or deleted. */
export type InformerEvent = 'add' | 'update' | 'delete';

/** How to list and watch one resource. */
export interface InformerSpec<T extends KubernetesObject> {
  /** Name for logs and metrics, e.g. `pods`. */
  readonly resource: string;
  /** The watch path, e.g. `/api/v1/pods` or `/apis/apps/v1/namespaces/shop/replicasets`. */
  readonly path: string;
  /** Lists the resource (with the same label selector as the watch). */
  readonly list: () => Promise<KubernetesListObject<T>>;
  readonly labelSelector?: string;
}

/** Builds an informer: client-node's `makeInformer` signature. */
export type InformerFactory<T extends KubernetesObject> = (
  kc: WatchAccess,
  path: string,
  list: () => Promise<KubernetesListObject<T>>,
  labelSelector?: string,
) => Informer<T> & ObjectCache<T>;

/** Informer restart backoff: 0.5 s doubling to 30 s, jittered. */
export const INFORMER_BACKOFF: BackoffOptions = { baseMs: 500, capMs: 30_000 };

/** How long a restarted list and watch must run without error before a 403 counts as over (ResilientInformer.forbidden). */
export const FORBIDDEN_CLEARS_AFTER_MS = 2_000;
/** An informer that ran this long without an error starts its backoff from the beginning again. */
const HEALTHY_AFTER_MS = 60_000;
/**
 * How much longer than its watch timeout an informer may stay silent before it counts as stuck: room for the server to
 * close the watch, a backoff (at most INFORMER_BACKOFF's cap) and a slow list.
 */
export const STUCK_GRACE_MS = 120_000;

/**
 * A client-node informer (ListWatch) that keeps itself running. client-node relists by itself after `410 Gone`, but
 * any other error (a dropped connection, an API server restart, a list that failed) stops it for good; this wrapper
 * starts it again after an exponential, jittered, capped backoff, watching on from the last resourceVersion (or
 * relisting when that is too old). The watch carries a server-side timeout, so a connection that silently died is
 * replaced within minutes instead of never.
 *
 * It also knows when it is stuck (see `stuck`): every turn of its loop is heard of — a list completing, a watch event,
 * a watch ending (normally at its timeout, or with an error) — and a running informer that has heard nothing for
 * longer than its watch timeout plus STUCK_GRACE_MS has a request hanging that nothing will end. Watch bookmarks are
 * requested so that a watch restarted on a quiet resource resumes from a recent resourceVersion instead of relisting
 * after a 410; the bound does not count on them (the API server sends them only on a best-effort basis).
 */
export class ResilientInformer<T extends KubernetesObject> implements RunningInformer<T> {
  private readonly informer: Informer<T> & ObjectCache<T>;
  private readonly index: ObjectIndex<T>;
  private running = false;
  private hasSynced = false;
  private attempt = 0;
  private lastStart = 0;
  private errorDuringStart = false;
  private starting = false;
  private restartTimer: CancelTimer | undefined;
  /** When the loop last turned (monotonic ms); see `stuck`. */
  private lastHeard = 0;
  /** The last error a list failed with: tells a forbidden list from a forbidden watch. */
  private listFailure: unknown;
  /** The verb the API server last answered 403 to, until a list and watch start again and last without error. */
  private forbiddenVerb: 'list' | 'watch' | undefined;
  /** Failures so far: a restart clears forbiddenVerb only if none came since. */
  private failures = 0;
  private clearForbiddenTimer: (() => void) | undefined;
  private readonly silenceBoundMs: number;

  constructor(
    kc: WatchAccess,
    private readonly spec: InformerSpec<T>,
    private readonly options: {
      readonly clock: Clock;
      readonly log: Logger;
      /**
       * The cache changed. `previous`: an update's object as it was cached before, where the index knows it (the object
       * has an index value), so that a handler can tell what changed.
       */
      readonly onEvent: (event: InformerEvent, object: T, previous?: T) => void;
      readonly onRestart?: (resource: string) => void;
      /** The API server answered 403 to a list or watch of the resource (RBAC: no restart helps until it is granted). */
      readonly onForbidden?: (verb: 'list' | 'watch', resource: string) => void;
      readonly random?: () => number;
      /** Builds the underlying informer (default: a client-node ListWatch that caches objects as they come; tests pass a fake). */
      readonly make?: InformerFactory<T>;
      /** The index value or values of an object, for `byIndex` (none: `byIndex` finds nothing). */
      readonly indexBy?: (object: T) => IndexValues;
    },
  ) {
    // client-go picks a watch timeout between 5 and 10 minutes at random; so do we, once per informer.
    const timeout = 300 + Math.floor((options.random ?? Math.random)() * 300);
    this.silenceBoundMs = timeout * 1000 + STUCK_GRACE_MS;
    const path = `${spec.path}${spec.path.includes('?') ? '&' : '?'}timeoutSeconds=${timeout}&allowWatchBookmarks=true`;
    const list = async () => {
      const result = await spec.list().catch((error: unknown) => {
        this.listFailure = error;
        throw error;
      });
      this.heard();
      return result;
    };
    this.informer = (options.make ?? transformingInformer<T>((object) => object))(kc, path, list, spec.labelSelector);
    this.index = new ObjectIndex(options.indexBy ?? (() => undefined));
    // The cache has changed when ListWatch calls back (relists included): the index follows before anyone is told.
    this.informer.on('add', (o) => {
      this.heard();
      this.index.upsert(o);
      this.options.onEvent('add', o);
    });
    this.informer.on('update', (o) => {
      this.heard();
      const previous = this.index.upsert(o);
      this.options.onEvent('update', o, previous);
    });
    this.informer.on('delete', (o) => {
      this.heard();
      this.index.delete(o);
      this.options.onEvent('delete', o);
    });
    this.informer.on('error', (e: unknown) => this.failed(e));
    // A new list-and-watch round: the last watch ended (at its timeout, or after a 410 that makes it relist).
    this.informer.on('connect', () => this.heard());
  }

  /** The resource name (for logs and readiness). */
  get resource(): string {
    return this.spec.resource;
  }

  /** Whether the first list completed and the watch started: the cache is complete from then on. */
  synced(): boolean {
    return this.hasSynced;
  }

  /** Starts listing and watching; returns at once. Failures are retried in the background until `stop`. */
  start(): void {
    if (this.running) return;
    this.running = true;
    this.heard();
    void this.run();
  }

  /**
   * Why the informer is stuck, or undefined when it is not: it runs, and for longer than its watch timeout plus
   * STUCK_GRACE_MS no list completed, no watch event arrived, no watch ended and no error was reported. A healthy
   * watch ends at its server-side timeout and a failing one reports an error at each try, so only a request that
   * hangs (a list that is never answered, a watch on a connection that died without a close) is silent that long;
   * only a restart of the process ends it.
   */
  stuck(): string | undefined {
    if (!this.running) return undefined;
    const silentMs = this.options.clock.monotonic() - this.lastHeard;
    if (silentMs <= this.silenceBoundMs) return undefined;
    return `informer ${this.spec.resource}: no list, watch event or watch end for ${Math.floor(silentMs / 1000)} s (bound ${this.silenceBoundMs / 1000} s)`;
  }

  /**
   * The verb (list or watch) the API server forbids (403) now: from the 403 until a list and watch of the resource
   * start again and run FORBIDDEN_CLEARS_AFTER_MS without error. Meanwhile the cache keeps what it had and no longer
   * follows the cluster.
   */
  forbidden(): 'list' | 'watch' | undefined {
    return this.forbiddenVerb;
  }

  /** Stops watching for good. Errors the abort itself causes are ignored. */
  async stop(): Promise<void> {
    this.running = false;
    this.restartTimer?.();
    this.restartTimer = undefined;
    this.clearForbiddenTimer?.();
    this.clearForbiddenTimer = undefined;
    await this.informer.stop();
  }

  list(namespace?: string): readonly T[] {
    return this.informer.list(namespace);
  }

  get(name: string, namespace?: string): T | undefined {
    return this.informer.get(name, namespace);
  }

  byIndex(value: string): readonly T[] {
    return this.index.get(value);
  }

  private async run(): Promise<void> {
    if (!this.running) return;
    this.restartTimer = undefined;
    this.errorDuringStart = false;
    this.starting = true;
    this.lastStart = this.options.clock.now();
    try {
      // Resolves once the list is in the cache and the watch request is open, or once either failed (then the
      // error handler has already run, synchronously, inside it).
      await this.informer.start();
    } catch (error) {
      this.errorDuringStart = true;
      this.starting = false;
      this.scheduleRestart(error);
      return;
    }
    this.starting = false;
    if (this.errorDuringStart || !this.running) return;
    if (this.forbiddenVerb !== undefined) {
      // A restart after a watch resumes from the last resourceVersion without a list, and its watch is refused only
      // once it is open: start() resolves first. Still allowed a moment later, it is.
      const failures = this.failures;
      this.clearForbiddenTimer?.();
      this.clearForbiddenTimer = this.options.clock.setTimer(FORBIDDEN_CLEARS_AFTER_MS, () => {
        this.clearForbiddenTimer = undefined;
        if (this.failures === failures) this.forbiddenVerb = undefined;
      });
    }
    if (!this.hasSynced) this.options.log.info('informer synced', { resource: this.spec.resource, objects: this.informer.list().length });
    this.hasSynced = true;
  }

  private failed(error: unknown): void {
    if (!this.running) return; // stop() aborts the watch, which reports an AbortError: expected
    if (this.starting) this.errorDuringStart = true;
    this.scheduleRestart(error);
  }

  private heard(): void {
    this.lastHeard = this.options.clock.monotonic();
  }

  private scheduleRestart(error: unknown): void {
    this.heard(); // a failure is a turn of the loop too: a failing informer is not a stuck one
    this.failures++;
    if (!this.running || this.restartTimer) return;
    if (this.options.clock.now() - this.lastStart > HEALTHY_AFTER_MS) this.attempt = 0;
    const delay = backoffDelay(this.attempt++, INFORMER_BACKOFF, this.options.random);
    const { code, message } = apiError(error);
    if (code === 403) {
      // The cache stays unsynced (or stale) until someone grants the verb: an error for the operator, not a blip.
      const verb = error === this.listFailure ? 'list' : 'watch';
      this.forbiddenVerb = verb;
      this.options.log.error('forbidden: the agent may not list or watch a resource it needs', { resource: this.spec.resource, verb, error: message });
      this.options.onForbidden?.(verb, this.spec.resource);
    }
    this.options.log.warn('informer stopped; restarting', { resource: this.spec.resource, code, error: message, retryInMs: delay });
    this.options.onRestart?.(this.spec.resource);
    this.restartTimer = this.options.clock.setTimer(delay, () => void this.run());
  }
}
