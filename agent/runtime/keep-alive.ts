import { Agent, type AgentOptions, type RequestOptions } from 'node:https';
import type { Duplex } from 'node:stream';
import tls, { type ConnectionOptions, type SecureContext } from 'node:tls';
import { HTTP2_TIMING, Http2Connection, type Http2Timing } from './http2-connection.js';
import type { KubeAccess } from './kube-config.js';

/** The TLS settings of an https.Agent that decide whether two requests may share its connections. */
const TLS_KEYS = ['ca', 'cert', 'key', 'pfx', 'passphrase', 'rejectUnauthorized', 'servername', 'ciphers', 'crl', 'secureProtocol'] as const;
/**
 * Connections open at once per agent to a server without HTTP/2, requests beyond them wait for one (Node's default is
 * unbounded, 256 of them kept idle). Each TLS connection holds tens of KiB outside the JavaScript heap: with 48 workers
 * writing at once, the agent held 269 connections at 200 rollouts at once, its malloc heap 47 MiB.
 */
export const MAX_CONNECTIONS = 32;
/**
 * How long a connection may stay idle before it is closed, as Go's default transport, which client-go uses, does (its
 * IdleConnTimeout). A burst of writes opens all MAX_CONNECTIONS, and kept open they held about 3.7 MiB of an idle
 * agent (the TLS buffers and sockets) until the next burst.
 */
export const IDLE_CONNECTION_MS = 90_000;
/** TLS settings whose agents are kept at most (a rotated client certificate is a new setting). */
const MAX_AGENTS = 4;

/**
 * One TLS context for all connections of one TLS setting, made at the first of them (so a bad certificate fails a
 * request as it does without it). Node makes a new context for every connection from an agent's options (tls.connect:
 * CA store, client certificate and key parsed again), which is memory held for the connection's life and a parse per
 * handshake: with 32 connections open, about 1.2 MiB more than one shared context (scratch client against a loopback
 * TLS server, Node.js 22). Called through the module object, as tls.connect calls it, so that a test counts both.
 */
class SharedContext {
  private context: SecureContext | undefined;

  of(options: RequestOptions): SecureContext {
    return (this.context ??= tls.createSecureContext(options));
  }
}

/** Where an agent made here keeps the HTTP/2 connections of its TLS setting (inherited by wrappers made by prototype). */
const HTTP2 = Symbol('http2');

/**
 * The HTTP/2 connection to the server of `url` with the TLS setting of `agent`, an agent a {@link keepAliveKubeConfig}
 * gave a request or a watch; undefined for any other agent (a proxy's, a plain HTTP server's) and with DISABLE_HTTP2.
 */
export function http2ConnectionOf(agent: unknown, url: URL): Http2Connection | undefined {
  if (url.protocol !== 'https:' || typeof agent !== 'object' || agent === null) return undefined;
  return (agent as { [HTTP2]?: ConnectionTo })[HTTP2]?.(url);
}

/** The HTTP/2 connection of one TLS setting to a server; undefined once the server answered HTTP/1.1. */
type ConnectionTo = (url: URL) => Http2Connection | undefined;

/** An https.Agent whose connections take their TLS context from `shared`, and its HTTP/2 connections (if any). */
class SharedContextAgent extends Agent {
  readonly [HTTP2]: ConnectionTo | undefined;

  constructor(
    options: AgentOptions,
    private readonly shared: SharedContext,
    http2: ConnectionTo | undefined,
  ) {
    super(options);
    this[HTTP2] = http2;
  }

  override createConnection(options: RequestOptions, callback?: (err: Error | null, stream: Duplex) => void): Duplex | null | undefined {
    return super.createConnection(Object.assign({}, options, { secureContext: this.shared.of(options) }), callback);
  }
}

/**
 * The agents of one TLS setting: the API requests' pool and the watches', one TLS context, and the HTTP/2 connections
 * of each. Watches have a connection of their own: kube-apiserver writes all streams of a connection from one loop,
 * and at 200 rollouts at once the pod watch's events would share it with the answers to the agent's writes. Measured
 * (bench:peers, reaction p99 at 200 rollouts): 180, 280, 307 ms with one connection, 131–315 ms (median 182) over
 * five runs with two; the runs' spread is wider than the difference, which is not settled.
 */
interface Agents {
  readonly requests: Agent;
  readonly watches: Agent;
  readonly http2: readonly Map<string, Http2Connection>[];
}

/** The TLS options of a connection made from an agent's `options`, with the shared context (no undefined keys: tls.connect would read them). */
function connectionOptions(options: AgentOptions, shared: SharedContext): ConnectionOptions {
  const { rejectUnauthorized, servername } = options;
  return {
    secureContext: shared.of(options),
    ...(rejectUnauthorized !== undefined && { rejectUnauthorized }),
    ...(servername !== undefined && { servername }),
  };
}

function tlsKey(options: Record<string, unknown>): string {
  return JSON.stringify(
    TLS_KEYS.map((k) => {
      const v = options[k];
      return Buffer.isBuffer(v) ? v.toString('base64') : Array.isArray(v) ? v.map((x: unknown) => (Buffer.isBuffer(x) ? x.toString('base64') : x)) : v;
    }),
  );
}

/**
 * A KubeConfig whose API clients and watches share TLS connections. client-node 1.x gives every request of a generated
 * API client a new https.Agent, so each request opens a new TCP connection and makes a full TLS handshake (measured on
 * the lab: ~10 ms per GET against ~2.5 ms on a kept-alive connection, and CPU on both ends). This wrapper lets
 * client-node build its agent as usual (same CA, client certificate, server name…), then swaps it for one of its own
 * with the same TLS settings, kept per distinct setting. Through that agent ({@link http2ConnectionOf}) every request
 * to a server that speaks HTTP/2 is a stream of one connection, as with client-go, and every watch a stream of a
 * second one (see {@link Agents}); a server that answers
 * HTTP/1.1 in the TLS handshake gets a pool of kept-alive connections for requests, and a connection per watch (held
 * for minutes and ended by closing it). Authorization headers are set per request, so tokens keep working; proxy agents
 * and plain-HTTP clusters are left alone. `idleMs`: how long a connection may stay unused before it is closed; `http2`:
 * the HTTP/2 health check, or false for HTTP/1.1 only (the default when DISABLE_HTTP2 is set, client-go's switch).
 */
export function keepAliveKubeConfig<K extends KubeAccess>(
  kc: K,
  idleMs = IDLE_CONNECTION_MS,
  http2: Omit<Http2Timing, 'idleMs'> | false = process.env['DISABLE_HTTP2'] ? false : HTTP2_TIMING,
): K {
  const agents = new Map<string, Agents>();
  /** The agents of the TLS setting of `fresh`, an agent client-node's way made; undefined for a proxy or plain HTTP. */
  const agentsLike = (fresh: unknown): Agents | undefined => {
    if (!(fresh instanceof Agent) || fresh.constructor !== Agent) return undefined;
    const options = fresh.options;
    const key = tlsKey(options as Record<string, unknown>);
    let found = agents.get(key);
    if (!found) {
      if (agents.size >= MAX_AGENTS) {
        const [oldest, old] = agents.entries().next().value as [string, Agents];
        agents.delete(oldest);
        // Its watches' connections and HTTP/2 streams close as their watches end.
        old.requests.destroy();
        for (const connection of old.http2.flatMap((connections) => [...connections.values()])) connection.close();
      }
      const shared = new SharedContext();
      const forRequests = new Map<string, Http2Connection>();
      const forWatches = new Map<string, Http2Connection>();
      // A server that answered HTTP/1.1 in the handshake of either connection is asked once.
      const speaksHttp1 = (origin: string) => forRequests.get(origin)?.speaksHttp1 === true || forWatches.get(origin)?.speaksHttp1 === true;
      const connectionsTo = (connections: Map<string, Http2Connection>): ConnectionTo | undefined =>
        http2 === false
          ? undefined
          : (url) => {
              if (speaksHttp1(url.origin)) return undefined;
              let connection = connections.get(url.origin);
              if (!connection) {
                connection = new Http2Connection(new URL(url.origin), () => connectionOptions(options, shared), { ...http2, idleMs });
                connections.set(url.origin, connection);
              }
              return connection;
            };
      found = {
        // `timeout` closes a connection left idle in the pool; on one in use it only emits 'timeout', which no request
        // here listens to (api-transport bounds a request by its signal).
        requests: new SharedContextAgent(
          { ...options, keepAlive: true, maxSockets: MAX_CONNECTIONS, maxFreeSockets: MAX_CONNECTIONS, timeout: idleMs },
          shared,
          connectionsTo(forRequests),
        ),
        watches: new SharedContextAgent({ ...options }, shared, connectionsTo(forWatches)),
        http2: [forRequests, forWatches],
      };
      agents.set(key, found);
    }
    return found;
  };
  const pooled = Object.create(kc) as K;
  pooled.applySecurityAuthentication = async (context) => {
    await kc.applySecurityAuthentication.call(pooled, context);
    const found = agentsLike(context.getAgent());
    if (found) context.setAgent(found.requests);
  };
  pooled.applyToHTTPSOptions = async (opts) => {
    await kc.applyToHTTPSOptions.call(pooled, opts);
    const found = agentsLike(opts.agent);
    if (found) opts.agent = found.watches;
  };
  return pooled;
}
