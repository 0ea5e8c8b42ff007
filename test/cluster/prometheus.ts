// Prometheus for the traffic suites' analysis gates: Debian's package (install-prometheus.sh installs it when
// missing), run as a lab process inside the lab's network namespace with its own config and data directory, scraping
// Traefik and the pod runner every second so a suite sees a weight change's effect within seconds. Not the
// package's systemd service: that one would scrape nothing of the lab, outside its namespace.
import { spawnSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { clusterDir } from './build.js';
import { labDir, processLogPath, startProcess } from './lab.js';

export const PROMETHEUS = 'prometheus';
/** How often every target is scraped; also the evaluation interval. */
export const SCRAPE_INTERVAL = '1s';

/** Scrape jobs: name → `host:port` targets. */
export type ScrapeTargets = Readonly<Record<string, readonly string[]>>;

/** The configuration file (YAML is a superset of JSON, so JSON keeps it free of quoting rules). */
export function prometheusConfig(targets: ScrapeTargets): string {
  return `${JSON.stringify(
    {
      // scrape_timeout defaults to 10 s, which Prometheus refuses above the interval.
      global: { scrape_interval: SCRAPE_INTERVAL, scrape_timeout: SCRAPE_INTERVAL, evaluation_interval: SCRAPE_INTERVAL },
      scrape_configs: Object.entries(targets).map(([job, list]) => ({ job_name: job, static_configs: [{ targets: list }] })),
    },
    null,
    2,
  )}\n`;
}

/** The prometheus binary, installed first by the project's script when it is missing (root and apt are needed then). */
export function ensurePrometheusInstalled(log: (s: string) => void): string {
  const found = spawnSync('sh', ['-c', 'command -v prometheus'], { encoding: 'utf8' });
  if (found.status === 0 && found.stdout.trim()) return found.stdout.trim();
  log('lab: prometheus is missing; installing Debian’s package (test/cluster/install-prometheus.sh)');
  const r = spawnSync(join(clusterDir, 'install-prometheus.sh'), { stdio: ['ignore', 'inherit', 'inherit'] });
  if (r.status !== 0) throw new Error(`test/cluster/install-prometheus.sh failed (exit ${r.status ?? String(r.error)})`);
  return ensurePrometheusInstalled(log);
}

/** Starts Prometheus on 127.0.0.1:<port> (inside the lab's namespace when it has one), fresh data every start. */
export function startPrometheus(port: number, targets: ScrapeTargets, log: (s: string) => void): void {
  const bin = ensurePrometheusInstalled(log);
  const dir = join(labDir(), 'prometheus');
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(join(dir, 'data'), { recursive: true });
  writeFileSync(join(dir, 'prometheus.yml'), prometheusConfig(targets));
  startProcess(PROMETHEUS, bin, [
    `--config.file=${join(dir, 'prometheus.yml')}`,
    `--storage.tsdb.path=${join(dir, 'data')}`,
    '--storage.tsdb.retention.time=1d',
    `--web.listen-address=127.0.0.1:${port}`,
    '--log.level=warn',
  ]);
  log(`lab: Prometheus starting on 127.0.0.1:${port} (log ${processLogPath(PROMETHEUS)})`);
}

/** One series of an instant query's vector result. */
export interface Sample {
  readonly metric: Readonly<Record<string, string>>;
  readonly value: number;
}

/** An instant query (`/api/v1/query`) against the Prometheus at `baseUrl`; throws on anything but a vector. */
export async function instantQuery(baseUrl: string, query: string): Promise<Sample[]> {
  const res = await fetch(`${baseUrl}/api/v1/query?query=${encodeURIComponent(query)}`, { signal: AbortSignal.timeout(5000) });
  const body = (await res.json()) as {
    status: string;
    error?: string;
    data?: { resultType: string; result: { metric: Record<string, string>; value: [number, string] }[] };
  };
  if (body.status !== 'success' || body.data?.resultType !== 'vector') {
    throw new Error(`prometheus query ${query}: ${body.error ?? `${body.status} ${body.data?.resultType}`}`);
  }
  return body.data.result.map((r) => ({ metric: r.metric, value: Number(r.value[1]) }));
}
