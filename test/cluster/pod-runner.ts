// The pod runner: the lab's stand-in for the containers kwok only pretends to run. A lab process inside the lab's
// network namespace (netns.ts), where every 10.244.x.y is a local address: it watches the Running pods and serves
// HTTP on each running container's podIP:containerPort, so a real gateway (traefik.ts) reaches the pods through the
// real Services and EndpointSlices. Each answer names the pod, namespace, revision and image (pod-behaviour.ts); the
// image tag chooses an error rate (`:err-N`) or latency (`:slow-N`). Its own Prometheus metrics count answers per
// pod and status code, for the analysis suites to compare with the gateway's.
//
//   node --import tsx pod-runner.ts --metrics 127.0.0.1:<port> [--selector <label selector>]   (KUBECONFIG from the environment)
import { createServer, type Server } from 'node:http';
import { fileURLToPath } from 'node:url';
import { CoreV1Api, KubeConfig, makeInformer, type V1Pod } from '@kubernetes/client-node';
import { Counter, Gauge, Registry } from 'prom-client';
import { answerBody, behaviourOf, endpointsOf, failsRequest, type Endpoint } from './pod-behaviour.js';

const log = (s: string) => console.error(`${new Date().toISOString()} pod-runner: ${s}`);

const registry = new Registry();
const requests = new Counter({
  name: 'lab_pod_requests_total',
  help: 'HTTP requests the pod runner answered, per pod and status code.',
  labelNames: ['namespace', 'pod', 'revision', 'code'] as const,
  registers: [registry],
});
const serving = new Gauge({
  name: 'lab_pod_endpoints',
  help: 'Addresses (podIP:port) the pod runner serves on.',
  registers: [registry],
});

interface Served {
  readonly ep: Endpoint;
  readonly server: Server;
  count: number;
}

/** The servers, by `ip:port`; a key is served by at most one container instance at a time. */
const served = new Map<string, Served>();

function serve(ep: Endpoint): Promise<Served> {
  const { errorPercent, delayMs } = behaviourOf(ep.image);
  const entry: Served = {
    ep,
    count: 0,
    server: createServer((req, res) => {
      const n = ++entry.count;
      const failed = failsRequest(n, errorPercent);
      // The body is read and dropped: a client waiting for its upload to be consumed must not stall.
      req.resume();
      const answer = () => {
        const code = failed ? 500 : 200;
        requests.inc({ namespace: ep.namespace, pod: ep.pod, revision: ep.revision ?? '', code: String(code) });
        res.writeHead(code, { 'content-type': 'application/json' }).end(answerBody(ep, failed));
      };
      if (delayMs > 0) setTimeout(answer, delayMs);
      else answer();
    }),
  };
  return new Promise((resolve, reject) => {
    entry.server.once('error', reject);
    entry.server.listen(ep.port, ep.ip, () => {
      entry.server.off('error', reject);
      resolve(entry);
    });
  });
}

/** Stops a server at once, keep-alive connections included: the container is gone, and so is everything it held. */
function stop(entry: Served): Promise<void> {
  return new Promise((resolve) => {
    entry.server.close(() => resolve());
    entry.server.closeAllConnections();
  });
}

const pods = new Map<string, V1Pod>();
let reconciling: Promise<void> = Promise.resolve();
let retry: NodeJS.Timeout | undefined;

/** Makes the servers match the pods: closes what no running container holds any more, opens what is new. */
async function reconcile(): Promise<void> {
  const desired = new Map<string, Endpoint>();
  for (const pod of pods.values()) for (const ep of endpointsOf(pod)) if (!desired.has(ep.key)) desired.set(ep.key, ep);
  for (const [key, entry] of [...served]) {
    if (desired.get(key)?.instance === entry.ep.instance) continue;
    served.delete(key);
    await stop(entry);
    log(`stopped ${key} (${entry.ep.namespace}/${entry.ep.pod} ${entry.ep.image}, ${entry.count} requests)`);
  }
  let failed = false;
  for (const [key, ep] of desired) {
    if (served.has(key)) continue;
    try {
      served.set(key, await serve(ep));
      log(`serving ${key} for ${ep.namespace}/${ep.pod} (${ep.image}, revision ${ep.revision ?? '-'})`);
    } catch (e) {
      // EADDRNOTAVAIL outside the lab's namespace; EADDRINUSE while a predecessor's port is still being released.
      log(`cannot serve ${key} for ${ep.namespace}/${ep.pod}: ${(e as Error).message}; retrying`);
      failed = true;
    }
  }
  serving.set(served.size);
  if (failed && !retry) {
    retry = setTimeout(() => {
      retry = undefined;
      schedule();
    }, 1000);
  }
}

/** Reconciles after every pod event, one pass at a time. */
function schedule(): void {
  reconciling = reconciling.then(reconcile).catch((e: unknown) => log(`reconcile failed: ${(e as Error).message}`));
}

function option(args: readonly string[], name: string): string | undefined {
  const i = args.indexOf(name);
  return i < 0 ? undefined : args[i + 1];
}

async function main(args: readonly string[]): Promise<void> {
  const metrics = option(args, '--metrics') ?? '127.0.0.1:9464';
  const selector = option(args, '--selector');
  const kc = new KubeConfig();
  kc.loadFromDefault();
  const core = kc.makeApiClient(CoreV1Api);
  const informer = makeInformer<V1Pod>(kc, '/api/v1/pods', () => core.listPodForAllNamespaces(selector ? { labelSelector: selector } : {}), selector);
  const key = (p: V1Pod) => p.metadata?.uid ?? '';
  informer.on('add', (p) => {
    pods.set(key(p), p);
    schedule();
  });
  informer.on('update', (p) => {
    pods.set(key(p), p);
    schedule();
  });
  informer.on('delete', (p) => {
    pods.delete(key(p));
    schedule();
  });
  informer.on('error', (e: unknown) => {
    log(`watch failed (${(e as Error)?.message ?? String(e)}); restarting in 1 s`);
    setTimeout(() => void informer.start().catch(() => undefined), 1000);
  });

  const [host = '127.0.0.1', port = '9464'] = metrics.split(':');
  const metricsServer = createServer((req, res) => {
    if (req.url === '/healthz') return void res.end('ok');
    void registry.metrics().then((text) => res.writeHead(200, { 'content-type': registry.contentType }).end(text));
  });
  await new Promise<void>((resolve) => metricsServer.listen(Number(port), host, resolve));
  await informer.start();
  log(`watching pods${selector ? ` (${selector})` : ''}; metrics on http://${metrics}/metrics`);
  const shutdown = () => {
    void Promise.all([...served.values()].map(stop)).finally(() => process.exit(0));
  };
  process.on('SIGTERM', shutdown);
  process.on('SIGINT', shutdown);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  main(process.argv.slice(2)).catch((e: unknown) => {
    log((e as Error).stack ?? String(e));
    process.exit(1);
  });
}
