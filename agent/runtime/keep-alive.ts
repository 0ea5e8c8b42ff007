import type { Duplex } from 'node:stream';
import { Agent, type RequestOptions } from 'node:https';
import { createSecureContext, type SecureContext } from 'node:tls';
import type { KubeAccess } from './kube-config.js';

/** The TLS settings of an https.Agent that decide whether two requests may share its connections. */
const TLS_KEYS = ['ca', 'cert', 'key', 'pfx', 'passphrase', 'rejectUnauthorized', 'servername', 'ciphers', 'crl', 'secureProtocol'] as const;
/**
 * Connections open at once per agent, requests beyond them wait for one (Node's default is unbounded, 256 of them kept
 * idle). Each TLS connection holds tens of KiB outside the JavaScript heap: with 48 workers writing at once, the agent
 * held 269 connections at 200 rollouts at once, its malloc heap 47 MiB. Go's client multiplexes one HTTP/2 connection.
 */
export const MAX_CONNECTIONS = 32;
/**
 * How long a connection may stay idle before it is closed, as Go's default transport, which client-go uses, does (its
 * IdleConnTimeout). A burst of writes opens all MAX_CONNECTIONS, and kept open they held about 3.7 MiB of an idle
 * agent (the TLS buffers and sockets) until the next burst.
 */
export const IDLE_CONNECTION_MS = 90_000;
/** Agents kept at most (one per distinct TLS setting; a rotated client certificate makes a new one). */
const MAX_AGENTS = 4;

/**
 * A keep-alive https.Agent whose connections share one TLS context. Node makes a new context for every connection
 * from the agent's options (tls.connect: CA store, client certificate and key parsed again), which is memory held for
 * the connection's life and a parse per handshake: with 32 connections open, about 1.2 MiB more than one shared context
 * (scratch client against a loopback TLS server, Node.js 22). Made at the first connection, so a bad certificate fails
 * a request as it does without the pool.
 */
class PooledAgent extends Agent {
  private context: SecureContext | undefined;

  override createConnection(options: RequestOptions, callback?: (err: Error | null, stream: Duplex) => void): Duplex | null | undefined {
    this.context ??= createSecureContext(options);
    return super.createConnection(Object.assign({}, options, { secureContext: this.context }), callback);
  }
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
 * A KubeConfig whose API clients reuse TLS connections. client-node 1.x gives every request of a generated API client a
 * new https.Agent, so each request opens a new TCP connection and makes a full TLS handshake (measured on the lab:
 * ~10 ms per GET against ~2.5 ms on a kept-alive connection, and CPU on both ends). This wrapper lets client-node build
 * its agent as usual (same CA, client certificate, server name…), then swaps it for a keep-alive agent with the same
 * TLS settings, kept per distinct setting. Authorization headers are set per request, so tokens keep working; proxy
 * agents and plain-HTTP clusters are left alone. Watches (`applyToHTTPSOptions`) keep their own connections.
 * `idleMs`: how long a connection may stay unused before it is closed.
 */
export function keepAliveKubeConfig<K extends KubeAccess>(kc: K, idleMs = IDLE_CONNECTION_MS): K {
  const agents = new Map<string, Agent>();
  const pooled = Object.create(kc) as K;
  pooled.applySecurityAuthentication = async (context) => {
    await kc.applySecurityAuthentication.call(pooled, context);
    const fresh = context.getAgent();
    if (!fresh || fresh.constructor !== Agent) return;
    const options = (fresh as Agent & { options: Record<string, unknown> }).options;
    const key = tlsKey(options);
    let agent = agents.get(key);
    if (!agent) {
      if (agents.size >= MAX_AGENTS) {
        const [oldest, old] = agents.entries().next().value as [string, Agent];
        agents.delete(oldest);
        old.destroy();
      }
      // `timeout` closes a connection left idle in the pool; on one in use it only emits 'timeout', which no request here
      // listens to (api-transport bounds a request by its signal).
      agent = new PooledAgent({ ...options, keepAlive: true, maxSockets: MAX_CONNECTIONS, maxFreeSockets: MAX_CONNECTIONS, timeout: idleMs });
      agents.set(key, agent);
    }
    context.setAgent(agent);
  };
  return pooled;
}
