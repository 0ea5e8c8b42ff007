import type { KubeAccess } from './runtime/kube-config.js';
import type { Registry } from 'prom-client';
import type { Clock } from './runtime/clock.js';
import { parseBindAddress, startHealthServer, type BindAddress, type HealthSource, type HttpEndpoint } from './runtime/http-server.js';
import type { Logger } from './runtime/log.js';
import { MetricsAccess, apiAccessReviews, type AccessReviews } from './runtime/metrics-access.js';
import { startMetricsServer } from './runtime/metrics-server.js';
import type { AgentSettings } from './options.js';

/** The agent's two servers: health probes and metrics. */
export interface AgentEndpoints {
  readonly health: BindAddress;
  readonly metrics: BindAddress;
  close(): Promise<void>;
}

/** Whether only this machine (or this pod) can reach `host`. */
export function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\./.test(host);
}

/**
 * Starts the health probe server and the metrics server as the settings say (see AgentSettings). With
 * `metricsSecure`, scrapers are checked with reviews asked of the API server through `kc` (tests pass `reviews`).
 * Warns when what the settings open is readable on the network: metrics without authorization, or bearer tokens
 * sent without TLS.
 */
export async function startAgentEndpoints(
  settings: Pick<AgentSettings, 'healthProbeBindAddress' | 'metricsBindAddress' | 'metricsSecure' | 'metricsCertDir'>,
  deps: {
    readonly kc: KubeAccess;
    readonly health: HealthSource;
    readonly registry: Registry;
    readonly clock: Clock;
    readonly log: Logger;
    readonly reviews?: AccessReviews;
  },
): Promise<AgentEndpoints> {
  const { log } = deps;
  const metricsBind = parseBindAddress(settings.metricsBindAddress);
  const healthBind = parseBindAddress(settings.healthProbeBindAddress);
  const access = settings.metricsSecure ? new MetricsAccess(deps.reviews ?? apiAccessReviews(deps.kc), deps.clock, log) : undefined;
  const health = await startHealthServer(healthBind, deps.health, log);
  let metrics: HttpEndpoint;
  try {
    metrics = await startMetricsServer(
      metricsBind,
      deps.registry,
      { ...(access && { access }), ...(settings.metricsCertDir !== undefined && { certDir: settings.metricsCertDir }) },
      log,
    );
  } catch (error) {
    await health.close();
    throw error;
  }
  if (!isLoopback(metricsBind.host)) {
    if (!access) log.warn('metrics are readable by anyone who reaches the port: serve them with --metrics-secure', { address: settings.metricsBindAddress });
    else if (settings.metricsCertDir === undefined)
      log.warn("scrapers' bearer tokens reach /metrics in clear text: give a certificate with --metrics-cert-dir", { address: settings.metricsBindAddress });
  }
  return {
    health: health.address,
    metrics: metrics.address,
    close: async () => {
      await Promise.all([health.close(), metrics.close()]);
    },
  };
}
