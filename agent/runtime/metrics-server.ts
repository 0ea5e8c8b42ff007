import { readFileSync, unwatchFile, watchFile } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { join } from 'node:path';
import type { Registry } from 'prom-client';
import { listen, reply, requestPath, type BindAddress, type HttpEndpoint } from './http-server.js';
import type { Logger } from './log.js';
import type { MetricsAccess } from './metrics-access.js';
import { http } from './node-http.js';

/** The only path of the metrics server, and the non-resource URL a scraper must be allowed to `get`. */
export const METRICS_PATH = '/metrics';

/** How often the certificate files are looked at for a change (controller-runtime's certwatcher polls every 10 s). */
export const CERT_POLL_MS = 10_000;

/** A certificate and its key, PEM. */
export interface KeyPair {
  readonly cert: Buffer;
  readonly key: Buffer;
}

/** Reads `tls.crt` and `tls.key` from `dir` (a Secret of type kubernetes.io/tls mounted as a volume). */
export function loadKeyPair(dir: string): KeyPair {
  const read = (file: string) => {
    try {
      return readFileSync(join(dir, file));
    } catch (error) {
      throw new Error(`cannot read the metrics certificate: ${(error as Error).message}`, { cause: error });
    }
  };
  return { cert: read('tls.crt'), key: read('tls.key') };
}

/** How /metrics is served. */
export interface MetricsServing {
  /** Checks every request (--metrics-secure); without it, whoever reaches the port reads the metrics. */
  readonly access?: MetricsAccess;
  /** A directory with tls.crt and tls.key (--metrics-cert-dir): HTTPS, reloaded when the files change. */
  readonly certDir?: string;
  /** How often the certificate files are polled; CERT_POLL_MS by default. */
  readonly certPollMs?: number;
}

/**
 * Serves `/metrics` (Prometheus text format) and nothing else, checked by `serving.access` when given and over TLS when
 * `serving.certDir` is. A certificate renewed on disk (cert-manager, a rotated Secret) is picked up without a restart;
 * a pair that fails to load is logged and the previous one stays.
 */
export async function startMetricsServer(bind: BindAddress, registry: Registry, serving: MetricsServing, log: Logger): Promise<HttpEndpoint> {
  const { access, certDir } = serving;
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return reply(res, 405, 'method not allowed\n');
    if (requestPath(req) !== METRICS_PATH) return reply(res, 404, 'not found\n');
    if (access) {
      // HEAD is a read like GET, as the API server maps it.
      const decision = await access.check(req.headers.authorization, METRICS_PATH, 'get');
      if (!decision.allowed) return reply(res, decision.code, `${decision.message}\n`, decision.code === 401 ? { 'WWW-Authenticate': 'Bearer' } : {});
    }
    reply(res, 200, await registry.metrics(), { 'Content-Type': registry.contentType });
  };
  // Nothing a request does may end the process: a failure is this request's 500.
  const handler = (req: IncomingMessage, res: ServerResponse) =>
    void handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) reply(res, 500, `metrics failed: ${error instanceof Error ? error.message : String(error)}\n`);
    });
  if (certDir === undefined) {
    const endpoint = await listen(http.createServer(handler), bind);
    log.info('serving metrics', { address: `${endpoint.address.host}:${endpoint.address.port}`, tls: false, authorization: access !== undefined });
    return endpoint;
  }

  const tlsOptions = () => ({ ...loadKeyPair(certDir), minVersion: 'TLSv1.2' as const });
  let server: ReturnType<typeof createHttpsServer>;
  try {
    server = createHttpsServer(tlsOptions(), handler);
  } catch (error) {
    const message = (error as Error).message;
    throw new Error(
      message.startsWith('cannot read')
        ? message
        : `cannot read the metrics certificate: tls.crt and tls.key in ${certDir} do not make a key pair (${message})`,
      { cause: error },
    );
  }
  const files = [join(certDir, 'tls.crt'), join(certDir, 'tls.key')];
  const reload = () => {
    try {
      server.setSecureContext(tlsOptions());
      log.info('metrics certificate reloaded', { certDir });
    } catch (error) {
      // A Secret update swaps both files at once; a half-written pair fails here and loads at the next change.
      log.warn('metrics certificate not reloaded; serving the previous one', { certDir, error: (error as Error).message });
    }
  };
  // Polled (stat), not fs.watch: a mounted Secret changes by swapping a symlink, which stat follows.
  for (const file of files) watchFile(file, { interval: serving.certPollMs ?? CERT_POLL_MS, persistent: false }, reload);
  let endpoint: HttpEndpoint;
  try {
    endpoint = await listen(server, bind);
  } catch (error) {
    for (const file of files) unwatchFile(file, reload);
    throw error;
  }
  log.info('serving metrics', { address: `${endpoint.address.host}:${endpoint.address.port}`, tls: true, authorization: access !== undefined });
  return {
    address: endpoint.address,
    close: () => {
      for (const file of files) unwatchFile(file, reload);
      return endpoint.close();
    },
  };
}
