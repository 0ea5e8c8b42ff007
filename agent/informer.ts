import { makeInformer, type Informer, type KubeConfig, type KubernetesListObject, type KubernetesObject, type ObjectCache } from '@kubernetes/client-node';
import { backoffDelay, type BackoffOptions } from './backoff.js';
import type { CancelTimer, Clock } from './clock.js';
import { apiError } from './kube-errors.js';
import type { Logger } from './log.js';
import { ObjectIndex } from './object-index.js';

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
  kc: KubeConfig,
  path: string,
  list: () => Promise<KubernetesListObject<T>>,
  labelSelector?: string,
) => Informer<T> & ObjectCache<T>;

/** Informer restart backoff: 0.5 s doubling to 30 s, jittered. */
export const INFORMER_BACKOFF: BackoffOptions = { baseMs: 500, capMs: 30_000 };
/** An informer that ran this long without an error starts its backoff from the beginning again. */
const HEALTHY_AFTER_MS = 60_000;

/**
 * A client-node informer (ListWatch) that keeps itself running. client-node relists by itself after `410 Gone`, but
 * any other error (a dropped connection, an API server restart, a list that failed) stops it for good; this wrapper
 * starts it again after an exponential, jittered, capped backoff, watching on from the last resourceVersion (or
 * relisting when that is too old). The watch carries a server-side timeout, so a connection that silently died is
 * replaced within minutes instead of never.
 */
export class ResilientInformer<T extends KubernetesObject> implements IndexedCacheReader<T> {
  private readonly informer: Informer<T> & ObjectCache<T>;
  private readonly index: ObjectIndex<T>;
  private running = false;
  private hasSynced = false;
  private attempt = 0;
  private lastStart = 0;
  private errorDuringStart = false;
  private starting = false;
  private restartTimer: CancelTimer | undefined;

  constructor(
    kc: KubeConfig,
    private readonly spec: InformerSpec<T>,
    private readonly options: {
      readonly clock: Clock;
      readonly log: Logger;
      readonly onEvent: (event: InformerEvent, object: T) => void;
      readonly onRestart?: (resource: string) => void;
      readonly random?: () => number;
      /** Builds the underlying informer (client-node's makeInformer; tests pass a fake). */
      readonly make?: InformerFactory<T>;
      /** The index value of an object, for `byIndex` (none: `byIndex` finds nothing). */
      readonly indexBy?: (object: T) => string | undefined;
    },
  ) {
    // client-go picks a watch timeout between 5 and 10 minutes at random; so do we, once per informer.
    const timeout = 300 + Math.floor((options.random ?? Math.random)() * 300);
    const path = `${spec.path}${spec.path.includes('?') ? '&' : '?'}timeoutSeconds=${timeout}`;
    this.informer = (options.make ?? makeInformer)(kc, path, spec.list, spec.labelSelector);
    this.index = new ObjectIndex(options.indexBy ?? (() => undefined));
    // The cache has changed when ListWatch calls back (relists included): the index follows before anyone is told.
    this.informer.on('add', (o) => {
      this.index.upsert(o);
      this.options.onEvent('add', o);
    });
    this.informer.on('update', (o) => {
      this.index.upsert(o);
      this.options.onEvent('update', o);
    });
    this.informer.on('delete', (o) => {
      this.index.delete(o);
      this.options.onEvent('delete', o);
    });
    this.informer.on('error', (e: unknown) => this.failed(e));
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
    void this.run();
  }

  /** Stops watching for good. Errors the abort itself causes are ignored. */
  async stop(): Promise<void> {
    this.running = false;
    this.restartTimer?.();
    this.restartTimer = undefined;
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
    if (!this.hasSynced) this.options.log.info('informer synced', { resource: this.spec.resource, objects: this.informer.list().length });
    this.hasSynced = true;
  }

  private failed(error: unknown): void {
    if (!this.running) return; // stop() aborts the watch, which reports an AbortError: expected
    if (this.starting) this.errorDuringStart = true;
    this.scheduleRestart(error);
  }

  private scheduleRestart(error: unknown): void {
    if (!this.running || this.restartTimer) return;
    if (this.options.clock.now() - this.lastStart > HEALTHY_AFTER_MS) this.attempt = 0;
    const delay = backoffDelay(this.attempt++, INFORMER_BACKOFF, this.options.random);
    const { code, message } = apiError(error);
    this.options.log.warn('informer stopped; restarting', { resource: this.spec.resource, code, error: message, retryInMs: delay });
    this.options.onRestart?.(this.spec.resource);
    this.restartTimer = this.options.clock.setTimer(delay, () => void this.run());
  }
}
