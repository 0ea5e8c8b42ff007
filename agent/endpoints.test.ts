import { KubeConfig } from '@kubernetes/client-node';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { FakeClock } from './runtime/clock.js';
import { isLoopback, startAgentEndpoints } from './endpoints.js';
import { jsonLogger } from './runtime/log.js';
import type { AccessReviews } from './runtime/metrics-access.js';

const health = { notReady: () => undefined, notLive: () => undefined };
const reviews: AccessReviews = { authenticate: async () => undefined, authorize: async () => false };

async function start(settings: { metricsBindAddress: string; metricsSecure: boolean }) {
  const lines: { level: string; msg: string }[] = [];
  const log = jsonLogger({ level: 'debug', write: (line) => void lines.push(JSON.parse(line) as { level: string; msg: string }) });
  const endpoints = await startAgentEndpoints(
    { ...settings, healthProbeBindAddress: '127.0.0.1:0', metricsCertDir: undefined },
    { kc: new KubeConfig(), health, registry: new Registry(), clock: new FakeClock(), log, reviews },
  );
  return { endpoints, warnings: lines.filter((l) => l.level === 'warn').map((l) => l.msg) };
}

const status = async (port: number, path: string) => (await fetch(`http://127.0.0.1:${port}${path}`)).status;

describe('agent endpoints', () => {
  it('serve the probes and the metrics on two ports: no probe on the metrics port, no metrics on the probe port', async () => {
    const { endpoints, warnings } = await start({ metricsBindAddress: '127.0.0.1:0', metricsSecure: true });
    try {
      expect(endpoints.health.port).not.toBe(endpoints.metrics.port);
      expect(await status(endpoints.health.port, '/healthz')).toBe(200);
      expect(await status(endpoints.health.port, '/metrics')).toBe(404);
      expect(await status(endpoints.metrics.port, '/healthz')).toBe(404);
      expect(await status(endpoints.metrics.port, '/metrics')).toBe(401); // --metrics-secure: the probes never needed a token
      expect(warnings).toEqual([]);
    } finally {
      await endpoints.close();
    }
  });

  it('warn when metrics are reachable from the network without authorization, or with tokens in clear text', async () => {
    for (const [metricsSecure, expected] of [
      [false, 'metrics are readable by anyone who reaches the port: serve them with --metrics-secure'],
      [true, "scrapers' bearer tokens reach /metrics in clear text: give a certificate with --metrics-cert-dir"],
    ] as const) {
      const { endpoints, warnings } = await start({ metricsBindAddress: '0.0.0.0:0', metricsSecure });
      await endpoints.close();
      expect(warnings).toEqual([expected]);
    }
  });

  it('count only loopback addresses as local', () => {
    for (const host of ['127.0.0.1', '127.1.2.3', '::1', 'localhost']) expect(isLoopback(host), host).toBe(true);
    for (const host of ['0.0.0.0', '::', '10.0.0.1', '']) expect(isLoopback(host), host).toBe(false);
  });
});
