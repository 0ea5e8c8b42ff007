import type * as Http2 from 'node:http2';
import type { ClientHttp2Session, ClientHttp2Stream } from 'node:http2';
import { isIP } from 'node:net';
import tls, { type ConnectionOptions } from 'node:tls';

/** node:http2, loaded at the first connection: a process that never opens one (plain HTTP, DISABLE_HTTP2) never loads it. */
let http2Module: typeof Http2 | undefined;
const http2 = (): typeof Http2 => (http2Module ??= process.getBuiltinModule('node:http2'));

/** How an {@link Http2Connection} keeps itself: when it closes, how it finds a dead peer. */
export interface Http2Timing {
  /** A connection with no stream open for this long is closed (Go's IdleConnTimeout, as for the HTTP/1.1 pool). */
  readonly idleMs: number;
  /**
   * A PING is sent this often while the connection is open, and a connection whose PING is not answered within
   * `pingTimeoutMs` is destroyed, failing its requests and watches: a peer gone without a FIN (a node lost, a NAT entry
   * dropped) is found, not waited on forever. client-go sets its HTTP/2 health check to 30 s and 15 s.
   */
  readonly pingMs: number;
  /** How long a PING may go unanswered. */
  readonly pingTimeoutMs: number;
  /** How long the TCP connect and TLS handshake may take together (Go's TLSHandshakeTimeout is 10 s). */
  readonly connectTimeoutMs: number;
}

export const HTTP2_TIMING: Omit<Http2Timing, 'idleMs'> = { pingMs: 30_000, pingTimeoutMs: 15_000, connectTimeoutMs: 10_000 };

/**
 * Per-stream and per-connection receive windows, as Go's HTTP/2 transport sets them (4 MiB and 1 GiB there): with
 * HTTP/2's default 64 KiB a LIST of a large namespace waits a round trip per 64 KiB. Every chunk is read as it comes,
 * so the windows bound how far the server may run ahead, not memory held.
 */
const STREAM_WINDOW = 4 << 20;
const SESSION_WINDOW = 16 << 20;

/** One request on the connection. */
export interface Http2Request {
  readonly method: string;
  /** Header names in any case (HTTP/2 sends them lower-case); no hop-by-hop headers. */
  readonly headers: Readonly<Record<string, string | number>>;
  readonly body?: string | undefined;
  /** Aborting it cancels the request (RST_STREAM), or the wait for the connection. */
  readonly signal?: AbortSignal | undefined;
  /**
   * Asked once the connection is ready, right before the request goes out: an error it returns fails the request unsent.
   * The leadership fence: a write may wait for a connection while this process is paused past its lease.
   */
  readonly gate?: (() => Error | undefined) | undefined;
}

/** The answer's head; the body is read from `stream`. */
export interface Http2Answer {
  readonly status: number;
  /** Lower-case names, without HTTP/2's pseudo-headers. */
  readonly headers: Record<string, string>;
  readonly stream: ClientHttp2Stream;
}

function abortError(signal: AbortSignal): Error {
  return Object.assign(new Error('The operation was aborted', { cause: signal.reason as unknown }), { name: 'AbortError', code: 'ABORT_ERR' });
}

/** `promise`, or a rejection as soon as `signal` aborts (the promise itself goes on: a shared connect). */
function abortable<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return promise;
  if (signal.aborted) return Promise.reject(abortError(signal));
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(abortError(signal));
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/**
 * One HTTP/2 connection to one API server with one TLS setting, carrying every request and watch at once as streams,
 * as client-go does: one TLS connection's buffers instead of one per request in flight and one per watch. The server's
 * TLS handshake decides (ALPN): a server that answers HTTP/1.1 gets `undefined` from {@link request}, and the caller
 * sends over HTTP/1.1 from then on. A connection that closes, fails or is told to go away (GOAWAY) is replaced at the
 * next request; its streams end with its error.
 */
export class Http2Connection {
  private session: ClientHttp2Session | undefined;
  private connecting: Promise<ClientHttp2Session | undefined> | undefined;
  /** The server chose HTTP/1.1 in the TLS handshake. */
  private http1 = false;
  private open = 0;
  private idleTimer: NodeJS.Timeout | undefined;

  /** `tlsOptions`: the TLS settings of every connection made (CA, client certificate, server name...). */
  constructor(
    private readonly origin: URL,
    private readonly tlsOptions: () => ConnectionOptions,
    private readonly timing: Http2Timing,
  ) {}

  /** Whether the server answered HTTP/1.1 instead: requests go there. */
  get speaksHttp1(): boolean {
    return this.http1;
  }

  /**
   * Sends `request` to `path` (with its query) and resolves with the answer's head once it arrives; undefined when the
   * server speaks HTTP/1.1 only. Fails as node:https does: a connect or TLS error with its code, an AbortError.
   */
  request(path: string, request: Http2Request): Promise<Http2Answer | undefined> {
    return this.send(path, request, false);
  }

  /** {@link request}; `refusedBefore`: this is the second try of a stream the server refused. */
  private async send(path: string, request: Http2Request, refusedBefore: boolean): Promise<Http2Answer | undefined> {
    const session = await abortable(this.ready(), request.signal);
    if (!session) return undefined;
    const refused = request.gate?.();
    if (refused) throw refused;
    const headers = { ...request.headers, ':method': request.method, ':path': path };
    const stream = session.request(headers, { endStream: request.body === undefined, ...(request.signal && { signal: request.signal }) });
    this.opened(stream);
    if (request.body !== undefined) stream.end(request.body);
    return new Promise<Http2Answer | undefined>((resolve, reject) => {
      const failed = (error: Error) => {
        stream.off('close', closed);
        // A stream the server refused (REFUSED_STREAM, or beyond its GOAWAY) was not processed: sent once more, as Go does.
        if (stream.rstCode === http2().constants.NGHTTP2_REFUSED_STREAM && !refusedBefore) resolve(this.send(path, request, true));
        else reject(error);
      };
      const closed = () => failed(Object.assign(new Error(`the stream was closed before an answer (code ${stream.rstCode ?? 0})`), { code: 'ECONNRESET' }));
      stream.once('error', failed);
      stream.once('close', closed);
      stream.once('response', (head) => {
        stream.off('error', failed);
        stream.off('close', closed);
        const headers: Record<string, string> = {};
        for (const [name, value] of Object.entries(head)) {
          if (!name.startsWith(':') && value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : String(value);
        }
        resolve({ status: Number(head[':status']), headers, stream });
      });
    });
  }

  /** Closes the connection: streams open go on to their end. */
  close(): void {
    this.session?.close();
  }

  private opened(stream: ClientHttp2Stream): void {
    this.open++;
    clearTimeout(this.idleTimer);
    stream.once('close', () => {
      if (--this.open > 0) return;
      const session = this.session;
      this.idleTimer = setTimeout(() => session?.close(), this.timing.idleMs).unref();
    });
  }

  /** The open session, a new one, or undefined when the server speaks HTTP/1.1. */
  private ready(): Promise<ClientHttp2Session | undefined> {
    if (this.http1) return Promise.resolve(undefined);
    const session = this.session;
    if (session && !session.closed && !session.destroyed) return Promise.resolve(session);
    this.connecting ??= this.connect().finally(() => (this.connecting = undefined));
    return this.connecting;
  }

  private async connect(): Promise<ClientHttp2Session | undefined> {
    const host = this.origin.hostname.replace(/^\[|\]$/g, '');
    const options = this.tlsOptions();
    const socket = tls.connect({
      ...options,
      host,
      port: Number(this.origin.port || 443),
      ...(options.servername === undefined && isIP(host) === 0 && { servername: host }),
      ALPNProtocols: ['h2', 'http/1.1'],
    });
    await new Promise<void>((resolve, reject) => {
      const settle = (error?: Error) => {
        clearTimeout(timer);
        socket.off('secureConnect', settle).off('error', settle).off('close', early);
        if (error) reject(error);
        else resolve();
      };
      const early = () => settle(Object.assign(new Error(`the connection to ${this.origin.host} closed during the TLS handshake`), { code: 'ECONNRESET' }));
      const timer = setTimeout(
        () =>
          socket.destroy(Object.assign(new Error(`no TLS connection to ${this.origin.host} within ${this.timing.connectTimeoutMs} ms`), { code: 'ETIMEDOUT' })),
        this.timing.connectTimeoutMs,
      );
      socket.once('secureConnect', settle).once('error', settle).once('close', early);
    });
    if (socket.alpnProtocol !== 'h2') {
      this.http1 = true;
      socket.destroy();
      return undefined;
    }
    // A watch is long-lived: the kernel probes a quiet connection too, as for HTTP/1.1 watches.
    socket.setKeepAlive(true, 30_000);
    const session = http2().connect(this.origin, { createConnection: () => socket, settings: { initialWindowSize: STREAM_WINDOW, enablePush: false } });
    session.setLocalWindowSize(SESSION_WINDOW);
    // A failed session's streams get its error; the next request opens a new session.
    session.on('error', () => undefined);
    session.on('goaway', () => this.forget(session));
    session.on('close', () => {
      this.forget(session);
      clearInterval(pings);
    });
    const pings = setInterval(() => this.ping(session), this.timing.pingMs).unref();
    this.session = session;
    return session;
  }

  private ping(session: ClientHttp2Session): void {
    if (session.destroyed) return;
    const timer = setTimeout(
      () => session.destroy(Object.assign(new Error(`the API server did not answer a PING within ${this.timing.pingTimeoutMs} ms`), { code: 'ETIMEDOUT' })),
      this.timing.pingTimeoutMs,
    ).unref();
    // An error here is a PING cancelled with its session: nothing left to watch.
    if (!session.ping(() => clearTimeout(timer))) clearTimeout(timer);
  }

  private forget(session: ClientHttp2Session): void {
    if (this.session === session) this.session = undefined;
  }
}
