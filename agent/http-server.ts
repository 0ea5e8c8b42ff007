import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';
import type { Logger } from './log.js';

/** A host and port to listen on. */
export interface BindAddress {
  readonly host: string;
  readonly port: number;
}

/**
 * Parses `host:port` as controller-runtime's --metrics-bind-address does: `127.0.0.1:8080`, `0.0.0.0:8080`, `:8080`
 * (every interface), `[::1]:8080`; port 0 picks a free port. Throws a readable error for anything else.
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
}

/** The agent's HTTP endpoints. */
export interface HealthServer {
  /** Where it listens (the real port when 0 was asked for). */
  readonly address: BindAddress;
  close(): Promise<void>;
}

/**
 * Serves `/healthz` (the process answers), `/readyz` (the caches are complete; a standby is ready too, so a rolling
 * update of the agent's Deployment never waits for leadership) and `/metrics` (Prometheus text format).
 */
export async function startHealthServer(bind: BindAddress, health: HealthSource, registry: Registry, log: Logger): Promise<HealthServer> {
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const reply = (code: number, body: string, type = 'text/plain; charset=utf-8') => {
      res.writeHead(code, { 'Content-Type': type });
      res.end(body);
    };
    if (req.method !== 'GET' && req.method !== 'HEAD') return reply(405, 'method not allowed\n');
    if (path === '/healthz' || path === '/livez') return reply(200, 'ok\n');
    if (path === '/readyz') {
      const why = health.notReady();
      return why === undefined ? reply(200, 'ok\n') : reply(503, `not ready: ${why}\n`);
    }
    if (path === '/metrics') {
      registry.metrics().then(
        (text) => reply(200, text, registry.contentType),
        (error: unknown) => reply(500, `metrics failed: ${error instanceof Error ? error.message : String(error)}\n`),
      );
      return;
    }
    reply(404, 'not found\n');
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(bind.port, bind.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const info = server.address() as AddressInfo;
  const address = { host: info.address, port: info.port };
  log.info('serving health and metrics', { address: `${address.host}:${address.port}` });
  return {
    address,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        // Keep-alive connections (a Prometheus scraper) would hold close() open until they time out.
        server.closeAllConnections();
      }),
  };
}
