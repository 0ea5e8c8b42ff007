import type { Informer, KubernetesListObject, KubernetesObject, ObjectCache } from '@kubernetes/client-node';
import { ListWatch, Watch, type WatchAccess } from './kube-watch.js';

/**
 * Drops metadata.managedFields, which the API server sends with every object and the agent never reads: about a third
 * of a pod's JSON. Informer caches hold every pod of every ExtendedDeployment, so this is a third less memory for
 * them (controller-runtime's caches strip it for the same reason). Gives `object` a copy of its metadata without them
 * (deleting the field instead turns the metadata into a dictionary: 1,205 heap bytes for a lab pod's, against 470) and
 * returns it.
 */
export function withoutManagedFields<T extends { metadata?: object }>(object: T): T {
  const metadata = object?.metadata;
  if (metadata && 'managedFields' in metadata) {
    const { managedFields: _dropped, ...kept } = metadata as { managedFields?: unknown };
    object.metadata = kept;
  }
  return object;
}

/** A watch that ends sooner than this without delivering an event counts as failed (client-go's "very short watch"). */
export const SHORT_WATCH_MS = 1000;

/** How a watch ended, as far as {@link watchEndError} needs to know. */
export interface WatchEnd {
  /** The stream carried a `410 Gone` ERROR event (the resourceVersion is too old: a relist is needed). */
  readonly expired: boolean;
  /** Events delivered (ERROR events not counted). */
  readonly delivered: number;
  readonly lastedMs: number;
}

const isGone = (error: unknown) => {
  const e = (error ?? {}) as { statusCode?: unknown; code?: unknown };
  return e.statusCode === 410 || e.code === 410;
};

/**
 * What to report when a watch ends. client-node's ListWatch restarts at once after a watch that ended without an
 * error, and relists at once after a 410, neither with backoff: an API server (or a proxy) that keeps answering that
 * way gets a LIST and a WATCH in a tight loop. So, as client-go's reflector does, a 410 and a watch that closed within
 * SHORT_WATCH_MS without events become errors, which ResilientInformer retries after its backoff. A 410 error loses
 * its status code here: ListWatch would otherwise swallow it and relist at once (the caller resets the
 * resourceVersion itself). Any other end is passed on as it is.
 */
export function watchEndError(error: unknown, end: WatchEnd): unknown {
  if (isGone(error) || (!error && end.expired)) return new Error('watch answered 410 Gone (resource version too old); relisting after backoff');
  if (error) return error;
  if (end.delivered === 0 && end.lastedMs < SHORT_WATCH_MS) return new Error(`watch closed after ${end.lastedMs} ms without events`);
  return null;
}

/**
 * A Watch that hands every object on through `transform`, reports quick or expired ends as errors (watchEndError), and
 * opens nothing once closed.
 */
class TransformingWatch<T extends KubernetesObject> extends Watch {
  private closed = false;

  constructor(
    kc: WatchAccess,
    private readonly transform: (object: T) => T,
  ) {
    super(kc);
  }

  /** From now on no watch is opened, and one still being opened is aborted as soon as it is. */
  close(): void {
    this.closed = true;
  }

  /** Watches may be opened again (the informer was started again after a stop). */
  reopen(): void {
    this.closed = false;
  }

  override async watch(
    path: string,
    queryParams: Record<string, string | number | boolean | undefined>,
    callback: (phase: string, apiObj: unknown, watchObj?: unknown) => void,
    done: (err: unknown) => void,
  ): Promise<AbortController> {
    if (this.closed) {
      const aborted = new AbortController();
      aborted.abort();
      return aborted;
    }
    const started = Date.now();
    let delivered = 0;
    let expired = false;
    const onEvent = (phase: string, apiObj: unknown, watchObj?: unknown) => {
      // An ERROR event carries a Status, not an object of the cache: it goes on untransformed, so ListWatch still reads
      // its code (a 410 makes it forget the resourceVersion and relist).
      if (phase === 'ERROR') {
        expired ||= isGone(apiObj);
        return callback(phase, apiObj, watchObj);
      }
      delivered += 1;
      // A BOOKMARK carries only a resourceVersion, in an object of the kind's shape with its required fields null (a
      // pod's `spec.containers`): it goes on as it came, for ListWatch to read the resourceVersion.
      callback(phase, phase === 'BOOKMARK' ? apiObj : this.transform(apiObj as T), watchObj);
    };
    const onDone = (err: unknown) => {
      // ListWatch forgets its resourceVersion on a 410 ERROR event: give it one for a 410 answer too, so it relists.
      if (isGone(err)) callback('ERROR', { code: 410 });
      done(watchEndError(err, { expired, delivered, lastedMs: Date.now() - started }));
    };
    const controller = await super.watch(path, queryParams, onEvent, onDone);
    if (this.closed) controller.abort();
    return controller;
  }
}

/**
 * A ListWatch whose stop also holds for the watch it is about to open. client-node's ListWatch.stop aborts only the
 * watch already open: a stop during a list (from a handler of the listed objects, say) or while the watch request is
 * under way lets the next watch open after it, which then keeps the process alive until its server-side timeout.
 */
class StoppingListWatch<T extends KubernetesObject> extends ListWatch<T> {
  constructor(
    path: string,
    private readonly closingWatch: TransformingWatch<T>,
    list: () => Promise<KubernetesListObject<T>>,
    labelSelector?: string,
    fieldSelector?: string,
  ) {
    super(path, closingWatch, list, false, labelSelector, fieldSelector);
  }

  override async start(): Promise<void> {
    this.closingWatch.reopen();
    await super.start();
  }

  override async stop(): Promise<void> {
    this.closingWatch.close();
    await super.stop();
  }
}

/**
 * An informer factory (client-node's makeInformer signature, so ResilientInformer takes it) whose cache holds every
 * listed and watched object as `transform` returns it, optionally narrowed by a field selector.
 */
export function transformingInformer<T extends KubernetesObject>(unsafeTransform: (object: T) => T, fieldSelector?: string) {
  const transform = (object: T): T => {
    try {
      return unsafeTransform(object);
    } catch {
      // An object the transform cannot read (a field its type requires is missing) is cached as it came: a watch
      // handler that throws ends the process, and a list that throws is retried for good.
      return object;
    }
  };
  return (kc: WatchAccess, path: string, list: () => Promise<KubernetesListObject<T>>, labelSelector?: string): Informer<T> & ObjectCache<T> => {
    const transformedList = async () => {
      const result = await list();
      result.items = (result.items ?? []).map(transform);
      return result;
    };
    return new StoppingListWatch<T>(path, new TransformingWatch(kc, transform), transformedList, labelSelector, fieldSelector);
  };
}

/**
 * client-node's makeInformer (a ListWatch), with every listed and watched object stored without managedFields. Same
 * signature, so ResilientInformer takes it as its factory.
 */
export function slimInformer<T extends KubernetesObject>(
  kc: WatchAccess,
  path: string,
  list: () => Promise<KubernetesListObject<T>>,
  labelSelector?: string,
): Informer<T> & ObjectCache<T> {
  return transformingInformer<T>(withoutManagedFields)(kc, path, list, labelSelector);
}
