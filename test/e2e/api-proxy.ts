// A TLS proxy between an agent child process and the lab's API server, for fault injection at an exact point of the
// agent's conversation with the cluster (e.g. "right after the status write that starts group 2, before the scale").
// It terminates TLS with the lab's serving certificate (signed by the lab CA the kubeconfig trusts, SAN 127.0.0.1),
// shows every request (method, path, body) to a callback that may drop it, and forwards the rest upstream with the
// lab's admin client certificate. Responses are streamed, so watches work through it. Test-only: 127.0.0.1 only.
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, createServer, request, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { kubeconfigPath, labDir, readState } from '../cluster/lab.js';

/** One request the agent sent. */
export interface ProxiedRequest {
  readonly method: string;
  /** Path and query, as sent. */
  readonly path: string;
  readonly body: Buffer;
  /** Date.now() when the whole request had arrived. */
  readonly at: number;
}

/** What to do with a request: send it on, or drop it (the agent's connection is destroyed, nothing reaches the API). */
export type Verdict = 'forward' | 'drop';

export interface ApiProxy {
  readonly port: number;
  /** A kubeconfig file like the lab's, pointing at the proxy. */
  readonly kubeconfig: string;
  close(): Promise<void>;
}

/** Starts the proxy; `onRequest` sees every complete request before it is forwarded. */
export async function startApiProxy(name: string, onRequest: (request: ProxiedRequest) => Verdict = () => 'forward'): Promise<ApiProxy> {
  const state = readState();
  if (!state) throw new Error('the lab is not running');
  const pki = (f: string) => readFileSync(join(labDir(), 'pki', f));
  const tls = { ca: pki('ca.crt'), cert: pki('admin.crt'), key: pki('admin.key') };
  const upstream = new URL(state.server);
  const upstreamAgent = new Agent({ keepAlive: true, ...tls });
  const server: Server = createServer({ cert: tls.cert, key: tls.key }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('error', () => res.destroy());
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const proxied: ProxiedRequest = { method: req.method ?? 'GET', path: req.url ?? '/', body, at: Date.now() };
      if (onRequest(proxied) === 'drop') {
        req.socket.destroy();
        return;
      }
      const headers = { ...req.headers, host: upstream.host };
      const up = request(
        { host: upstream.hostname, port: upstream.port, method: proxied.method, path: proxied.path, headers, agent: upstreamAgent },
        (upRes) => {
          res.writeHead(upRes.statusCode ?? 502, upRes.headers);
          // A watch answers with headers and then nothing until an event: send the headers on at once.
          res.flushHeaders();
          upRes.pipe(res);
          upRes.on('error', () => res.destroy());
        },
      );
      up.on('error', () => res.destroy());
      // The agent went away (killed, or a watch it closed): stop the upstream request too, so no watch leaks.
      res.on('close', () => up.destroy());
      up.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const kubeconfig = join(labDir(), `proxy-${name}.kubeconfig`);
  writeFileSync(kubeconfig, readFileSync(kubeconfigPath(), 'utf8').replace(/server: .*/, `server: https://127.0.0.1:${port}`), { mode: 0o600 });
  return {
    port,
    kubeconfig,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
        upstreamAgent.destroy();
        rmSync(kubeconfig, { force: true });
      }),
  };
}
