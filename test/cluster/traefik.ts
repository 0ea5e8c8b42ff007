// Traefik as the lab's gateway: the real Gateway API implementation the traffic suites shift weights on. Built from the
// Go module proxy on demand (build.ts, go/traefik/), run as a lab process inside the lab's network namespace with its
// Kubernetes Gateway provider pointed at the lab through KUBECONFIG (Traefik's code path for a cluster-external
// client), so it routes to the pods' IPs from the real EndpointSlices, where pod-runner.ts answers.
import { join } from 'node:path';
import { ensureGatewayBinaries } from './build.js';
import { kubeconfigPath, processLogPath, startProcess } from './lab.js';
import type { Manifest } from './gitops.js';

export const TRAEFIK = 'traefik';
export const GATEWAY_CLASS = 'traefik';
/** Traefik's controller name: it acts only on GatewayClasses that name it. */
export const GATEWAY_CONTROLLER = 'traefik.io/gateway-controller';
export const GATEWAY_NAMESPACE = 'gateways';
export const GATEWAY_NAME = 'public';
/** The Gateway's one listener (an HTTPRoute's parentRef sectionName). */
export const GATEWAY_LISTENER = 'http';
/**
 * The `web` entry point's port inside the namespace. Traefik binds a Gateway listener to the entry point with the same
 * port, so the Gateway says 8000 too; the host reaches it through a bridge on a free port (traffic.ts).
 */
export const WEB_PORT = 8000;

/**
 * Starts Traefik: entry point `web` on 127.0.0.1:8000 for traffic, entry point `metrics` on 127.0.0.1:<metricsPort>
 * with Prometheus metrics (per-service labels, what the analysis queries read) and /ping. Does not wait: the caller
 * checks /ping through its bridge. `webPort`: another port for `web` (and then for the Gateway's listener, see
 * gatewayManifests), for a Traefik on the host beside a lab without a network namespace, where 8000 may be taken.
 */
export async function startTraefik(metricsPort: number, log: (s: string) => void, webPort = WEB_PORT): Promise<void> {
  const binDir = await ensureGatewayBinaries('traefik', log);
  startProcess(
    TRAEFIK,
    join(binDir, 'traefik'),
    [
      '--global.checkNewVersion=false',
      '--global.sendAnonymousUsage=false',
      `--entryPoints.web.address=127.0.0.1:${webPort}`,
      `--entryPoints.metrics.address=127.0.0.1:${metricsPort}`,
      '--providers.kubernetesgateway=true',
      // Written into the Gateway's status.addresses: what a client of the lab dials (inside the namespace).
      '--providers.kubernetesgateway.statusAddress.ip=127.0.0.1',
      '--metrics.prometheus=true',
      '--metrics.prometheus.entryPoint=metrics',
      '--metrics.prometheus.addServicesLabels=true',
      '--metrics.prometheus.addRoutersLabels=true',
      '--ping=true',
      '--ping.entryPoint=metrics',
      '--log.level=INFO',
    ],
    // An in-cluster environment would win over KUBECONFIG (Traefik checks KUBERNETES_SERVICE_HOST first).
    { KUBECONFIG: kubeconfigPath(), KUBERNETES_SERVICE_HOST: '', KUBERNETES_SERVICE_PORT: '' },
  );
  log(`lab: Traefik starting (log ${processLogPath(TRAEFIK)})`);
}

/**
 * The GatewayClass for Traefik and the lab's Gateway, one HTTP listener on port 8000 (or Traefik's `webPort`: Traefik
 * binds a listener to the entry point of its port) open to routes of every namespace.
 */
export function gatewayManifests(webPort = WEB_PORT): Manifest[] {
  return [
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: GATEWAY_NAMESPACE } },
    {
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'GatewayClass',
      metadata: { name: GATEWAY_CLASS },
      spec: { controllerName: GATEWAY_CONTROLLER },
    },
    {
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'Gateway',
      metadata: { name: GATEWAY_NAME, namespace: GATEWAY_NAMESPACE },
      spec: {
        gatewayClassName: GATEWAY_CLASS,
        listeners: [{ name: GATEWAY_LISTENER, protocol: 'HTTP', port: webPort, allowedRoutes: { namespaces: { from: 'All' } } }],
      },
    },
  ];
}

/** An HTTPRoute's parentRef to the lab's Gateway. */
export function gatewayParentRef(): { name: string; namespace: string; sectionName: string } {
  return { name: GATEWAY_NAME, namespace: GATEWAY_NAMESPACE, sectionName: GATEWAY_LISTENER };
}
