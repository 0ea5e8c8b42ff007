// Shared by the agent's unit tests that need client-node to talk HTTP: a loopback server with canned answers.
import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll } from 'vitest';

/** What serveApi loads into a KubeConfig (the agent's own or client-node's). */
interface LoadOptions {
  clusters: { name: string; server: string; skipTLSVerify: boolean }[];
  users: { name: string; token: string }[];
  contexts: { name: string; cluster: string; user: string }[];
  currentContext: string;
}

/**
 * Serves `handler` on a loopback port for the enclosing describe block and points `kc` at it: a few canned answers,
 * enough to see what client-node sends (not an API server).
 */
export function serveApi(kc: { loadFromOptions(options: LoadOptions): void }, handler: RequestListener): void {
  let server: Server;
  beforeAll(async () => {
    server = createServer(handler);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    kc.loadFromOptions({
      clusters: [{ name: 'c', server: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, skipTLSVerify: true }],
      users: [{ name: 'u', token: 't' }],
      contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
      currentContext: 'x',
    });
  });
  afterAll(() => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
}
