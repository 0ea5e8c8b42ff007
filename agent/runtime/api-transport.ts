import { nodeHttpLibrary, withHttpLibrary, type HttpLibrary, type RequestContext, type ResponseContext } from './kube-client.js';
import type { KubeAccess } from './kube-config.js';
import type { Agent, ClientRequest } from 'node:http';
import type { Socket } from 'node:net';
import { TLSSocket } from 'node:tls';
import type { Clock } from './clock.js';
import { http } from './node-http.js';

/**
 * A write refused before it was sent: this process may no longer act as leader (see LeaderElector.mayWrite). Nothing
 * reached the API server.
 */
export class FencedWriteError extends Error {
  constructor(method: string, url: string) {
    super(`${method} ${new URL(url).pathname} not sent: this agent is not (or no longer surely) the leader`);
    this.name = 'FencedWriteError';
  }
}

/** Whether `error` is a write refused by the leadership fence. */
export function isFencedWrite(error: unknown): boolean {
  return error instanceof FencedWriteError;
}

/** How the API clients of a {@link transportKubeConfig} send requests. */
export interface TransportOptions {
  /** Every request is aborted after this long, so a dead connection can never hang a caller. */
  readonly timeoutMs: number;
  /** Sent as User-Agent, so the API server's audit log tells replicas apart even when they share a ServiceAccount. */
  readonly userAgent: string;
  /** Clock whose monotonic time stamps the responses passed to `onResponse`. */
  readonly clock: Clock;
  /** Called for every response that carries a Date header: the server's time and when the request left and returned. */
  readonly onResponse?: (serverDateMs: number, sentAt: number, receivedAt: number) => void;
  /** Asked before every write (any method but GET); a write it refuses fails with {@link FencedWriteError} unsent. */
  readonly mayWrite?: () => boolean;
}

/**
 * A KubeConfig whose API clients (built with `makeApiClient`, as everywhere in the agent) time every request out,
 * send the agent's User-Agent, report the API server's clock and, when fenced, refuse writes once this process may no
 * longer lead. Authentication is unchanged: `this` (the outermost KubeConfig) stays the auth method, so wrappers such
 * as the request counter keep working. Watches do not go through API clients and keep their own timeouts.
 */
export function transportKubeConfig<K extends KubeAccess>(kc: K, options: TransportOptions): K {
  return withHttpLibrary(kc, fencedHttpLibrary(nodeHttpLibrary, options));
}

/** Node's Agent as the http module calls it: addRequest is how a request gets its socket (not in the typings). */
type RequestAgent = Agent & { addRequest(req: ClientRequest, options: unknown): void };

/**
 * The agent of a write, asking the fence once more when the request's socket is ready to carry it: a write that passed
 * the fence may wait for its connection (a TCP connect, a TLS handshake) and meanwhile this process may be paused
 * past its renew deadline; when it resumes, the connection completes and the request would go out before the deadline's
 * timer runs (I/O callbacks come first). Until the socket is connected (and, for TLS, secure) its writes are corked,
 * and a write the fence refuses by then is destroyed unsent. A socket kept alive is ready at once: asked right away.
 */
function fencedAgent(agent: Agent | undefined, gate: () => Error | undefined): Agent {
  const inner = (agent ?? http.globalAgent) as RequestAgent;
  const fenced = Object.create(inner) as RequestAgent;
  fenced.addRequest = (req, options) => {
    req.once('socket', (socket: Socket) => {
      const check = () => {
        const refused = gate();
        if (refused) req.destroy(refused);
      };
      // _secureEstablished is how a TLSSocket itself tells a finished handshake (there is no public flag for it).
      const handshaking = socket instanceof TLSSocket && (socket as TLSSocket & { _secureEstablished?: boolean })._secureEstablished !== true;
      if (!socket.connecting && !handshaking) return check();
      socket.cork();
      socket.once(socket instanceof TLSSocket ? 'secureConnect' : 'connect', () => {
        check();
        socket.uncork();
      });
    });
    inner.addRequest(req, options);
  };
  return fenced;
}

function fencedHttpLibrary(inner: HttpLibrary, options: TransportOptions): HttpLibrary {
  const { clock, onResponse, mayWrite } = options;
  return {
    async send(request: RequestContext): Promise<ResponseContext> {
      const method = String(request.getHttpMethod());
      if (method !== 'GET' && mayWrite) {
        const gate = () => (mayWrite() ? undefined : new FencedWriteError(method, request.getUrl()));
        const refused = gate();
        if (refused) throw refused;
        // Asked again once the connection is ready: over HTTP/2 by the connection, over HTTP/1.1 by the agent.
        request.setGate(gate);
        request.setAgent(fencedAgent(request.getAgent(), gate));
      }
      request.setHeaderParam('User-Agent', options.userAgent);
      // A timer cleared with the answer, not AbortSignal.timeout: that one's timer lives the whole timeout whatever the
      // answer (so it and the signal's bookkeeping outlive the young generation), then aborts the signal if still held.
      const timeout = new AbortController();
      const timer = setTimeout(() => timeout.abort(new DOMException(`no answer within ${options.timeoutMs} ms`, 'TimeoutError')), options.timeoutMs);
      timer.unref();
      const own = request.getSignal();
      request.setSignal(own ? AbortSignal.any([own, timeout.signal]) : timeout.signal);
      const sentAt = clock.monotonic();
      const response = await inner.send(request).finally(() => clearTimeout(timer));
      const date = response.headers['date'];
      const serverDateMs = date === undefined ? Number.NaN : Date.parse(date);
      if (onResponse && Number.isFinite(serverDateMs)) onResponse(serverDateMs, sentAt, clock.monotonic());
      return response;
    },
  };
}
