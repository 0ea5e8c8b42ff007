import {
  createConfiguration,
  Observable,
  ServerConfiguration,
  type HttpLibrary,
  type KubeConfig,
  type RequestContext,
  type ResponseContext,
} from '@kubernetes/client-node';
import type { Clock } from './clock.js';

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
export function transportKubeConfig(kc: KubeConfig, options: TransportOptions): KubeConfig {
  const wrapped = Object.create(kc) as KubeConfig;
  const httpApi = fencedHttpLibrary(createConfiguration().httpApi, options);
  wrapped.makeApiClient = function makeApiClient<T>(this: KubeConfig, apiClientType: new (config: ReturnType<typeof createConfiguration>) => T): T {
    const cluster = this.getCurrentCluster();
    if (!cluster) throw new Error('No active cluster!');
    return new apiClientType(createConfiguration({ baseServer: new ServerConfiguration(cluster.server, {}), authMethods: { default: this }, httpApi }));
  };
  return wrapped;
}

function fencedHttpLibrary(inner: HttpLibrary, options: TransportOptions): HttpLibrary {
  const { clock, onResponse, mayWrite } = options;
  return {
    send(request: RequestContext): Observable<ResponseContext> {
      const method = String(request.getHttpMethod());
      if (method !== 'GET' && mayWrite && !mayWrite()) return new Observable(Promise.reject(new FencedWriteError(method, request.getUrl())));
      request.setHeaderParam('User-Agent', options.userAgent);
      const signal = AbortSignal.timeout(options.timeoutMs);
      const own = request.getSignal();
      request.setSignal(own ? AbortSignal.any([own, signal]) : signal);
      const sentAt = clock.monotonic();
      return inner.send(request).pipe((response) => {
        const date = response.headers['date'];
        const serverDateMs = date === undefined ? Number.NaN : Date.parse(date);
        if (onResponse && Number.isFinite(serverDateMs)) onResponse(serverDateMs, sentAt, clock.monotonic());
        return response;
      });
    },
  };
}
