// A TLS proxy between an agent and the lab's API server, for fault injection at an exact point of the agent's
// conversation with the cluster (e.g. "right after the status write that starts group 2, before the scale") or by a
// schedule (fault-injector.ts). It terminates TLS with the lab's serving certificate (signed by the lab CA the
// kubeconfig trusts, SAN 127.0.0.1), shows every request (method, path, body) to a callback, and does what the callback
// says: forward it upstream with the lab's admin client certificate, drop the connection, answer in the API server's
// place (an error Status), forward it late, forward it and cut the response after a while (a watch dropped
// mid-stream), or answer a watch with `410 Gone` as the API server does when the resourceVersion is too old.
// Responses are streamed, so watches work through it. Test-only: 127.0.0.1 only.
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
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

/**
 * What to do with a request: send it on; drop it (the agent's connection is destroyed, nothing reaches the API);
 * answer with `status` and a Kubernetes Status body (and `headers`, e.g. Retry-After) without asking the API server;
 * forward it after `delayMs`; forward it and destroy the connection `cutAfterMs` after the response started; or
 * (watches) answer 200 with one ERROR event carrying a `410 Gone` Status, then end the stream.
 */
export type Verdict =
  | 'forward'
  | 'drop'
  | { readonly status: number; readonly reason: string; readonly headers?: Readonly<Record<string, string>> }
  | { readonly delayMs: number }
  | { readonly cutAfterMs: number }
  | 'watchGone';

/** What the API server answered to a forwarded request (watches: when the response headers arrived). */
export interface ProxiedResponse {
  readonly request: ProxiedRequest;
  readonly status: number;
}

export interface ApiProxyOptions {
  /** Sees the status of every answer from upstream. */
  readonly onResponse?: (response: ProxiedResponse) => void;
  /** Sees every event line a watch delivers to the agent. */
  readonly onWatchEvent?: (request: ProxiedRequest) => void;
}

/** A Kubernetes Status object, as the API server sends with an error. */
function statusBody(code: number, reason: string, message: string): string {
  return JSON.stringify({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code });
}

export interface ApiProxy {
  readonly port: number;
  /** A kubeconfig file like the lab's, pointing at the proxy. */
  readonly kubeconfig: string;
  /** Destroys the connections of the open watches `match` accepts (as a network failure would); returns how many. */
  cutWatches(match: (request: ProxiedRequest) => boolean): number;
  /** How many watches that `match` accepts are open now. */
  openWatches(match: (request: ProxiedRequest) => boolean): number;
  /**
   * A network partition that drops packets silently: while on, connections stay open but nothing more reaches the
   * agent (responses and watch events in flight stop), and new requests are accepted and never answered nor
   * forwarded. The agent sees no error, only silence, until its own timeouts fire.
   */
  blackHole(on: boolean): void;
  close(): Promise<void>;
}

/** Starts the proxy; `onRequest` sees every complete request and decides what happens to it. */
export async function startApiProxy(
  name: string,
  onRequest: (request: ProxiedRequest) => Verdict = () => 'forward',
  options: ApiProxyOptions = {},
): Promise<ApiProxy> {
  const state = readState();
  if (!state) throw new Error('the lab is not running');
  const pki = (f: string) => readFileSync(join(labDir(), 'pki', f));
  const tls = { ca: pki('ca.crt'), cert: pki('admin.crt'), key: pki('admin.key') };
  const upstream = new URL(state.server);
  const upstreamAgent = new Agent({ keepAlive: true, ...tls });
  const openWatches = new Map<ServerResponse, ProxiedRequest>();
  let holding = false;
  const relaying = new Set<{ upRes: NodeJS.ReadableStream; res: ServerResponse }>();
  const server: Server = createServer({ cert: tls.cert, key: tls.key }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('error', () => res.destroy());
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const proxied: ProxiedRequest = { method: req.method ?? 'GET', path: req.url ?? '/', body, at: Date.now() };
      if (holding) return; // black-holed: never answered, never forwarded
      const verdict = onRequest(proxied);
      if (verdict === 'drop') {
        req.socket.destroy();
        return;
      }
      if (verdict === 'watchGone') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(`${JSON.stringify({ type: 'ERROR', object: JSON.parse(statusBody(410, 'Expired', 'too old resource version (injected)')) })}\n`);
        return;
      }
      if (typeof verdict === 'object' && 'status' in verdict) {
        res.writeHead(verdict.status, { 'content-type': 'application/json', ...verdict.headers });
        res.end(statusBody(verdict.status, verdict.reason, `injected ${verdict.status} ${verdict.reason}`));
        return;
      }
      const forward = () => {
        const headers = { ...req.headers, host: upstream.host };
        const up = request(
          { host: upstream.hostname, port: upstream.port, method: proxied.method, path: proxied.path, headers, agent: upstreamAgent },
          (upRes) => {
            if (holding) return upRes.resume(); // the answer is lost in the black hole
            options.onResponse?.({ request: proxied, status: upRes.statusCode ?? 0 });
            res.writeHead(upRes.statusCode ?? 502, upRes.headers);
            // A watch answers with headers and then nothing until an event: send the headers on at once.
            res.flushHeaders();
            if (proxied.path.includes('watch=true')) {
              openWatches.set(res, proxied);
              res.on('close', () => openWatches.delete(res));
            }
            if (options.onWatchEvent && proxied.path.includes('watch=true')) {
              upRes.on('data', (chunk: Buffer) => {
                for (let i = chunk.indexOf(10); i >= 0; i = chunk.indexOf(10, i + 1)) options.onWatchEvent?.(proxied);
              });
            }
            upRes.pipe(res);
            const relay = { upRes, res };
            relaying.add(relay);
            res.on('close', () => relaying.delete(relay));
            upRes.on('error', () => res.destroy());
            if (typeof verdict === 'object' && 'cutAfterMs' in verdict) {
              const timer = setTimeout(() => res.socket?.destroy(), verdict.cutAfterMs);
              res.on('close', () => clearTimeout(timer));
            }
          },
        );
        up.on('error', () => res.destroy());
        // The agent went away (killed, or a watch it closed): stop the upstream request too, so no watch leaks.
        res.on('close', () => up.destroy());
        up.end(body);
      };
      if (typeof verdict === 'object' && 'delayMs' in verdict) {
        const timer = setTimeout(forward, verdict.delayMs);
        res.on('close', () => clearTimeout(timer));
      } else forward();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const kubeconfig = join(labDir(), `proxy-${name}.kubeconfig`);
  writeFileSync(kubeconfig, readFileSync(kubeconfigPath(), 'utf8').replace(/server: .*/, `server: https://127.0.0.1:${port}`), { mode: 0o600 });
  return {
    port,
    kubeconfig,
    blackHole: (on) => {
      holding = on;
      // Streams in flight go silent: the agent keeps its connections and hears nothing more (data is discarded).
      for (const { upRes, res } of relaying) {
        if (on) {
          upRes.unpipe(res);
          upRes.resume();
        } else res.destroy(); // what was dropped cannot be replayed: the agent sees the connection end and retries
      }
    },
    openWatches: (match) => [...openWatches.values()].filter(match).length,
    cutWatches: (match) => {
      const cut = [...openWatches].filter(([, r]) => match(r));
      for (const [res] of cut) res.socket?.destroy();
      return cut.length;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
        upstreamAgent.destroy();
        rmSync(kubeconfig, { force: true });
      }),
  };
}
