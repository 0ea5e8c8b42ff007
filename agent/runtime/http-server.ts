import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Server as HttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { Logger } from './log.js';
import { http } from './node-http.js';

/** A host and port to listen on. */
export interface BindAddress {
  readonly host: string;
  readonly port: number;
}

/**
 * Parses `host:port` as controller-runtime's --metrics-bind-address and --health-probe-bind-address do:
 * `127.0.0.1:8080`, `0.0.0.0:8080`, `:8080` (every interface), `[::1]:8080`; port 0 picks a free port. Throws a
 * readable error for anything else.
 */
export function parseBindAddress(value: string): BindAddress {
  const match = /^(?:\[([^\]]+)\]|([^:[\]]*)):(\d{1,5})$/.exec(value);
  const port = match ? Number(match[3]) : Number.NaN;
  if (!match || port > 65535) throw new Error(`invalid bind address ${JSON.stringify(value)}: expected host:port, e.g. 127.0.0.1:8080 or :8080`);
  return { host: match[1] ?? (match[2] || '0.0.0.0'), port };
}

/** What the health endpoints report. */
export interface HealthSource {
  /** Why the agent is not ready, or undefined when it is (every informer synced; leader or standby alike). */
  notReady(): string | undefined;
  /** Why the agent is stuck so that only a restart helps (an informer that went silent), or undefined while it is live. */
  notLive(): string | undefined;
}

/** A listening HTTP(S) server of the agent. */
export interface HttpEndpoint {
  /** Where it listens (the real port when 0 was asked for). */
  readonly address: BindAddress;
  close(): Promise<void>;
}

/** Writes a plain-text answer. */
export function reply(res: ServerResponse, code: number, body: string, headers: Readonly<Record<string, string>> = {}): void {
  res.writeHead(code, { 'Content-Type': 'text/plain; charset=utf-8', ...headers });
  res.end(body);
}

/** The path of a request, without its query. */
export function requestPath(req: IncomingMessage): string {
  return (req.url ?? '/').split('?')[0] ?? '/';
}

/** Starts `server` on `bind` and resolves once it listens (rejects with the listen error: EADDRINUSE, EACCES, ...). */
export async function listen(server: Server | HttpsServer, bind: BindAddress): Promise<HttpEndpoint> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(bind.port, bind.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const info = server.address() as AddressInfo;
  return {
    address: { host: info.address, port: info.port },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        // Keep-alive connections (a Prometheus scraper, the kubelet) would hold close() open until they time out.
        server.closeAllConnections();
      }),
  };
}

/**
 * Serves the probes: `/healthz` and `/livez` (the process is not stuck: see {@link HealthSource.notLive}; 500 with the
 * reason otherwise, so the kubelet restarts it) and `/readyz` (the caches are complete; a standby is ready too, so a
 * rolling update of the agent's Deployment never waits for leadership). Nothing else: /metrics has a server of its own.
 */
export async function startHealthServer(bind: BindAddress, health: HealthSource, log: Logger): Promise<HttpEndpoint> {
  const server = http.createServer((req, res) => {
    const path = requestPath(req);
    if (req.method !== 'GET' && req.method !== 'HEAD') return reply(res, 405, 'method not allowed\n');
    if (path === '/healthz' || path === '/livez') {
      const why = health.notLive();
      return why === undefined ? reply(res, 200, 'ok\n') : reply(res, 500, `not live: ${why}\n`);
    }
    if (path === '/readyz') {
      const why = health.notReady();
      return why === undefined ? reply(res, 200, 'ok\n') : reply(res, 503, `not ready: ${why}\n`);
    }
    reply(res, 404, 'not found\n');
  });
  const endpoint = await listen(server, bind);
  log.info('serving health probes', { address: `${endpoint.address.host}:${endpoint.address.port}` });
  return endpoint;
}
