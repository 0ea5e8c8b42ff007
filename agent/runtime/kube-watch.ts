/**
 * client-node's Watch and ListWatch (1.4) over node:http(s), without loading client-node (its cache.js imports the
 * ObjectSerializer, hence every model; its watch.js imports node-fetch). Same methods, same events, same ends: a watch
 * calls `done` once, with null when the stream ends and with the error otherwise (a non-200 answer is an Error with
 * `statusCode`); ListWatch lists when it has no resourceVersion, forgets it on a 410, and reports other errors to its
 * `error` handlers without restarting (the agent's ResilientInformer restarts it after a backoff).
 */
import type { ClientRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { Readable } from 'node:stream';
import type { Informer, KubernetesListObject, KubernetesObject, ObjectCache, ObjectCallback, ErrorCallback } from '@kubernetes/client-node';
import type { HttpsRequestOptions } from './kube-config.js';
import type { Cluster } from '@kubernetes/client-node';
import type { Http2Answer } from './http2-connection.js';
import { http2ConnectionOf } from './keep-alive.js';
import { http } from './node-http.js';

/** What a watch needs of a KubeConfig (this module's or client-node's). */
export interface WatchAccess {
  getCurrentCluster(): Cluster | null;
  applyToHTTPSOptions(opts: HttpsRequestOptions): Promise<void>;
}

export class Watch {
  constructor(readonly config: WatchAccess) {}

  /**
   * Opens a watch of `path`: `callback(type, object, event)` for every event line, `done(error or null)` once when
   * it ends. Abort the returned controller to end it.
   */
  async watch(
    path: string,
    queryParams: Record<string, string | number | boolean | undefined>,
    callback: (phase: string, apiObj: unknown, watchObj?: unknown) => void,
    done: (err: unknown) => void,
  ): Promise<AbortController> {
    const cluster = this.config.getCurrentCluster();
    if (!cluster) throw new Error('No currently active cluster');
    const url = new URL(cluster.server + path);
    url.searchParams.set('watch', 'true');
    for (const [key, value] of Object.entries(queryParams ?? {})) if (value !== undefined) url.searchParams.set(key, value.toString());
    const opts: HttpsRequestOptions = {};
    await this.config.applyToHTTPSOptions(opts);
    const controller = new AbortController();
    let doneCalled = false;
    const doneOnce = (err: unknown) => {
      if (doneCalled) return;
      doneCalled = true;
      controller.abort();
      done(err);
    };
    // Status and body of the answer, whichever protocol carried it.
    const answered = (statusCode: number | undefined, statusMessage: string | undefined, body: Readable) => {
      if (statusCode !== 200) {
        body.on('error', () => undefined); // ended by doneOnce's abort: nothing more to report
        body.resume();
        const error = new Error(statusMessage || http.STATUS_CODES[statusCode ?? 500] || 'Internal Server Error') as Error & { statusCode?: number };
        error.statusCode = statusCode;
        doneOnce(error);
        return;
      }
      body.on('error', doneOnce);
      const event = (line: string) => {
        let data: { type: string; object: unknown };
        try {
          data = JSON.parse(line) as { type: string; object: unknown };
        } catch {
          return; // ignore parse errors, as client-node does
        }
        callback(data.type, data.object, data);
      };
      eachLine(body, event);
      body.on('close', () => doneOnce(null));
    };
    // Like client-node's (which awaits fetch), the watch is returned once the server answered or the request failed.
    const overHttp2 = await this.overHttp2(url, opts, controller.signal).catch((error: unknown) => {
      doneOnce(error);
      return 'failed' as const;
    });
    if (overHttp2 === 'failed') return controller;
    if (overHttp2) {
      answered(overHttp2.status, undefined, overHttp2.stream);
      return controller;
    }
    const send = url.protocol === 'http:' ? http.request : httpsRequest;
    await new Promise<void>((resolve) => {
      let req: ClientRequest;
      try {
        req = send(url, { ...opts, method: 'GET', signal: controller.signal }, (res) => {
          resolve();
          answered(res.statusCode, res.statusMessage, res);
        });
      } catch (error) {
        doneOnce(error);
        resolve();
        return;
      }
      // A watch is long-lived: probe a dead connection as client-node does.
      req.on('socket', (socket) => socket.setKeepAlive(true, 30_000));
      req.on('error', (error) => {
        doneOnce(error);
        resolve();
      });
      req.end();
    });
    return controller;
  }

  /** The watch as a stream of the agent's HTTP/2 connection (keep-alive.ts); undefined where there is none. */
  private async overHttp2(url: URL, opts: HttpsRequestOptions, signal: AbortSignal): Promise<Http2Answer | undefined> {
    const connection = http2ConnectionOf(opts.agent, url);
    if (!connection) return undefined;
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(opts.headers ?? {}))
      if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : String(value);
    if (opts.auth) headers['authorization'] = `Basic ${Buffer.from(opts.auth).toString('base64')}`;
    return connection.request(url.pathname + url.search, { method: 'GET', headers, signal });
  }
}

/** The byte that ends a watch event's line (UTF-8 never uses it inside a character). */
const NEWLINE = 0x0a;

/**
 * Calls `line` for each line of `stream` (a watch answers one JSON event per line), the last one also without its
 * newline, before the stream's `close`. What readline does for a watch, without its terminal handling: splitting each
 * chunk with a regular expression into an array was 6 % of the agent's allocations at 200 rollouts at once. Lines are
 * cut from the chunk's bytes and each decoded alone. Decoding each chunk whole (the stream's encoding set) made a string
 * of it beside its lines, and the start of a line a chunk ended inside, kept as a slice of that string until the next
 * chunk, kept all of it: at 200 rollouts at once this handler's allocations were 8 % of what the young generation's
 * collections moved to the old (sampled over 55 s of bench:peers), and the agent's full collections went from 60 to 56
 * (one run each).
 */
export function eachLine(stream: Readable, line: (text: string) => void): void {
  // The start of the line the last chunks ended inside, copied out of them.
  let partial: Buffer[] = [];
  stream.on('data', (chunk: Buffer) => {
    let start = 0;
    for (let end = chunk.indexOf(NEWLINE); end !== -1; end = chunk.indexOf(NEWLINE, start)) {
      const text = partial.length === 0 ? chunk.toString('utf8', start, end) : Buffer.concat([...partial, chunk.subarray(start, end)]).toString('utf8');
      partial = [];
      start = end + 1;
      line(text);
    }
    if (start < chunk.length) partial.push(Buffer.from(chunk.subarray(start)));
  });
  stream.on('end', () => {
    if (partial.length > 0) line(Buffer.concat(partial).toString('utf8'));
    partial = [];
  });
}

type Verb = 'add' | 'update' | 'delete' | 'error' | 'connect';

/** client-node's ListWatch: a cache of `path` kept by a list and then a watch from its resourceVersion. */
export class ListWatch<T extends KubernetesObject> implements ObjectCache<T>, Informer<T> {
  private objects = new Map<string, Map<string, T>>();
  private readonly callbacks: Record<Verb, ((arg: never) => void)[]> = { add: [], update: [], delete: [], error: [], connect: [] };
  private resourceVersion = '';
  private request: AbortController | undefined;
  private stopped = false;

  constructor(
    private readonly path: string,
    private readonly watch: Pick<Watch, 'watch'>,
    private readonly lister: () => Promise<KubernetesListObject<T>>,
    autoStart = true,
    private readonly labelSelector?: string,
    private readonly fieldSelector?: string,
  ) {
    if (autoStart) void this.doneHandler(null);
  }

  async start(): Promise<void> {
    this.stopped = false;
    await this.doneHandler(null);
  }

  stop(): Promise<void> {
    this.stopped = true;
    this.abortWatch();
    return Promise.resolve();
  }

  on(verb: 'add' | 'update' | 'delete' | 'change', cb: ObjectCallback<T>): void;
  on(verb: 'error' | 'connect', cb: ErrorCallback): void;
  on(verb: string, cb: ObjectCallback<T> | ErrorCallback): void {
    if (verb === 'change') {
      for (const v of ['add', 'update', 'delete'] as const) this.on(v, cb as ObjectCallback<T>);
      return;
    }
    const list = this.callbacks[verb as Verb];
    if (!list) throw new Error(`Unknown verb: ${verb}`);
    list.push(cb as (arg: never) => void);
  }

  off(verb: 'add' | 'update' | 'delete' | 'change', cb: ObjectCallback<T>): void;
  off(verb: 'error' | 'connect', cb: ErrorCallback): void;
  off(verb: string, cb: ObjectCallback<T> | ErrorCallback): void {
    if (verb === 'change') {
      for (const v of ['add', 'update', 'delete'] as const) this.off(v, cb as ObjectCallback<T>);
      return;
    }
    const list = this.callbacks[verb as Verb];
    if (!list) throw new Error(`Unknown verb: ${verb}`);
    const i = list.indexOf(cb as (arg: never) => void);
    if (i >= 0) list.splice(i, 1);
  }

  get(name: string, namespace?: string): T | undefined {
    return this.objects.get(namespace || '')?.get(name);
  }

  list(namespace?: string): T[] {
    if (!namespace) return [...this.objects.values()].flatMap((m) => [...m.values()]);
    return [...(this.objects.get(namespace)?.values() ?? [])];
  }

  latestResourceVersion(): string {
    return this.resourceVersion;
  }

  private emit(verb: Verb, arg: unknown): void {
    for (const cb of this.callbacks[verb].slice()) (cb as (a: unknown) => void)(arg);
  }

  private abortWatch(): void {
    this.request?.abort();
    this.request = undefined;
  }

  private async doneHandler(err: unknown): Promise<void> {
    this.abortWatch();
    const e = (err ?? {}) as { statusCode?: unknown; code?: unknown };
    if (err && (e.statusCode === 410 || e.code === 410)) this.resourceVersion = '';
    else if (err) {
      this.emit('error', err);
      return;
    }
    if (this.stopped) return;
    this.emit('connect', undefined);
    if (!this.resourceVersion) {
      let list: KubernetesListObject<T>;
      try {
        list = await this.lister();
      } catch (error) {
        this.emit('error', error);
        return;
      }
      this.relisted(list.items ?? []);
      this.resourceVersion = list.metadata?.resourceVersion || '';
    }
    const queryParams: Record<string, string> = { resourceVersion: this.resourceVersion };
    if (this.labelSelector !== undefined) queryParams['labelSelector'] = this.labelSelector;
    if (this.fieldSelector !== undefined) queryParams['fieldSelector'] = this.fieldSelector;
    this.request = await this.watch.watch(
      this.path,
      queryParams,
      (phase, obj) => this.watchHandler(phase, obj as T),
      (error) => void this.doneHandler(error),
    );
  }

  /** A relist: objects gone from the list are deleted (with their handlers), the rest added or updated. */
  private relisted(items: readonly T[]): void {
    const listed = new Map<string, Set<string>>();
    for (const o of items) {
      const ns = o.metadata?.namespace || '';
      let names = listed.get(ns);
      if (!names) listed.set(ns, (names = new Set()));
      names.add(o.metadata?.name || '');
    }
    for (const [ns, objects] of this.objects) {
      const names = listed.get(ns);
      for (const [name, old] of objects) {
        if (names?.has(name)) continue;
        objects.delete(name);
        this.emit('delete', old);
      }
      if (!names) this.objects.delete(ns);
    }
    for (const o of items) this.addOrUpdate(o);
  }

  private addOrUpdate(obj: T): void {
    const ns = obj.metadata?.namespace || '';
    let objects = this.objects.get(ns);
    if (!objects) this.objects.set(ns, (objects = new Map<string, T>()));
    const name = obj.metadata?.name || '';
    const found = objects.get(name);
    if (!found) {
      objects.set(name, obj);
      this.emit('add', obj);
      return;
    }
    const rv = found.metadata?.resourceVersion;
    if (rv !== undefined && rv !== null && rv === obj.metadata?.resourceVersion) return;
    objects.set(name, obj);
    this.emit('update', obj);
  }

  private remove(obj: T): void {
    const ns = obj.metadata?.namespace || '';
    const objects = this.objects.get(ns);
    if (!objects?.delete(obj.metadata?.name || '')) return;
    this.emit('delete', obj);
    if (objects.size === 0) this.objects.delete(ns);
  }

  private watchHandler(phase: string, obj: T): void {
    switch (phase) {
      case 'ERROR':
        if ((obj as { code?: unknown }).code === 410) this.resourceVersion = '';
        return; // the watch ends on its own; doneHandler restarts
      case 'ADDED':
      case 'MODIFIED':
        this.addOrUpdate(obj);
        break;
      case 'DELETED':
        this.remove(obj);
        break;
    }
    this.resourceVersion = obj.metadata?.resourceVersion || '';
  }
}
