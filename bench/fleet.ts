/**
 * The fleet every side of `bench/render` renders: plain data, generated before any timer starts, so each side spends
 * its measured time only on its own work; for the sides that read files (edctl and the trivial script), the same fleet
 * as YAML spec files, also written before.
 */
import { API_VERSION, ED_KIND, REGION_KIND } from '../core/api/identity.js';

/** A node group: one label key with a value of its own, so regions are pairwise disjoint. */
export interface RegionSpec {
  readonly name: string;
  readonly labelKey: string;
  readonly labelValue: string;
}

/** One container of an application's pod template. */
export interface ContainerSpec {
  readonly name: string;
  readonly image: string;
  readonly port: { readonly name: string; readonly number: number };
  readonly env: readonly (readonly [string, string])[];
  readonly cpuMillis: { readonly request: number; readonly limit: number };
  readonly memoryMebibytes: { readonly request: number; readonly limit: number };
  /** HTTP readiness probe on the container's port. */
  readonly readiness?: { readonly path: string; readonly initialDelaySeconds: number; readonly periodSeconds: number };
}

/** How one application runs in one region. */
export interface AppRegionSpec {
  /** Index into {@link Fleet.regions}. */
  readonly region: number;
  /** As an ExtendedDeployment writes it: a count, a percentage of the total, or unset (a share of the rest). */
  readonly replicas: number | `${number}%` | undefined;
  /** The same count resolved by hand, as a per-region Deployment has to write it. */
  readonly resolvedReplicas: number;
  /** Image replacements by container name for this region only. */
  readonly images?: Readonly<Record<string, string>>;
}

/** One application (an ExtendedDeployment on our side, R Deployments on the baseline's). */
export interface AppSpec {
  readonly name: string;
  readonly chart: number;
  readonly labels: Readonly<Record<string, string>>;
  readonly totalReplicas: number;
  readonly minReadySeconds: number;
  readonly containers: readonly ContainerSpec[];
  readonly regions: readonly AppRegionSpec[];
}

/** A chart and the namespace its applications live in. */
export interface ChartSpec {
  readonly id: string;
  readonly namespace: string;
}

export interface Fleet {
  readonly regions: readonly RegionSpec[];
  readonly charts: readonly ChartSpec[];
  readonly apps: readonly AppSpec[];
}

export interface FleetOptions {
  /** ExtendedDeployments (applications). */
  readonly eds: number;
  /** Regions each application runs in. */
  readonly regions: number;
  /** Applications per chart. Default 50. */
  readonly appsPerChart?: number;
  /** Namespaces the charts cycle through. Default 8. */
  readonly namespaces?: number;
}

export const REGION_LABEL_KEY = 'bench.example.com/region';
/** Share a percentage region takes. Totals are multiples of 10, so 10% is always a whole number of replicas. */
const PERCENT = 10;
/** At most this many percentage regions per application (50% of the total), so counts always fit. */
const MAX_PERCENT_REGIONS = 5;

/**
 * Builds the fleet. Region j of application i, for j < R - 1: an integer count (3 + i mod 3) when j is even, 10% of
 * the total when j is odd (up to five of them); the last region is unset and takes what is left. The total is
 * 10 × (R + 2 + i mod 3), so every share is a whole number and the rest is never negative. Region 1 (when there is
 * one) runs a different image of the `app` container.
 */
export function buildFleet(options: FleetOptions): Fleet {
  const appsPerChart = options.appsPerChart ?? 50;
  const namespaces = options.namespaces ?? 8;
  const R = options.regions;
  const regions: RegionSpec[] = Array.from({ length: R }, (_, j) => ({ name: `r${j}`, labelKey: REGION_LABEL_KEY, labelValue: `r${j}` }));
  const charts: ChartSpec[] = Array.from({ length: Math.ceil(options.eds / appsPerChart) }, (_, c) => ({
    id: `fleet-${c}`,
    namespace: `team-${c % namespaces}`,
  }));

  const apps: AppSpec[] = [];
  for (let i = 0; i < options.eds; i++) {
    const chart = Math.floor(i / appsPerChart);
    const name = `app-${i}`;
    const total = 10 * (R + 2 + (i % 3));
    let percentRegions = 0;
    let assigned = 0;
    const appImage = `registry.example.com/team-${chart % namespaces}/${name}:1.${i % 10}.0`;
    const placements: AppRegionSpec[] = regions.map((_, j) => {
      const images = j === 1 ? { app: `${appImage}-r1` } : undefined;
      let replicas: AppRegionSpec['replicas'];
      let resolved: number;
      if (j === R - 1) {
        replicas = undefined;
        resolved = total - assigned;
      } else if (j % 2 === 1 && percentRegions < MAX_PERCENT_REGIONS) {
        percentRegions++;
        replicas = `${PERCENT}%`;
        resolved = (total * PERCENT) / 100;
      } else {
        replicas = 3 + (i % 3);
        resolved = replicas;
      }
      assigned += resolved;
      return { region: j, replicas, resolvedReplicas: resolved, ...(images && { images }) };
    });
    apps.push({
      name,
      chart,
      labels: { app: name, tier: 'web' },
      totalReplicas: total,
      minReadySeconds: 5,
      containers: [
        {
          name: 'app',
          image: appImage,
          port: { name: 'http', number: 8080 },
          env: [
            ['APP_NAME', name],
            ['LOG_LEVEL', i % 4 === 0 ? 'debug' : 'info'],
            ['FEATURE_FLAGS', 'checkout-v2,search-ranking'],
            ['DB_POOL_SIZE', String(10 + (i % 5))],
          ],
          cpuMillis: { request: 250, limit: 1000 },
          memoryMebibytes: { request: 256, limit: 512 },
          readiness: { path: '/healthz', initialDelaySeconds: 5, periodSeconds: 10 },
        },
        {
          name: 'proxy',
          image: 'registry.example.com/mesh/proxy:2.4.1',
          port: { name: 'proxy', number: 15001 },
          env: [
            ['PROXY_MODE', 'sidecar'],
            ['UPSTREAM_PORT', '8080'],
          ],
          cpuMillis: { request: 50, limit: 200 },
          memoryMebibytes: { request: 64, limit: 128 },
        },
      ],
      regions: placements,
    });
  }
  return { regions, charts, apps };
}

/** One input file of the fleet written as plain YAML specs: its base name and its objects, in order. */
export interface SpecFile {
  readonly name: string;
  readonly objects: readonly Record<string, unknown>[];
}

/**
 * The same fleet as plain YAML specs (the upstream v1beta1 format `edctl render` reads), laid out like our
 * constructs' charts: `regions.yaml` with the DeployRegions, then one file per chart with its ExtendedDeployments.
 * Each ExtendedDeployment is the one `bench/ours.ts` builds, so `edctl render` renders the same workloads.
 */
export function fleetSpecFiles(fleet: Fleet): SpecFile[] {
  const regions = fleet.regions.map((r) => ({
    apiVersion: API_VERSION,
    kind: REGION_KIND,
    metadata: { name: r.name },
    spec: { matchLabels: { [r.labelKey]: r.labelValue } },
  }));
  const container = (spec: ContainerSpec) => ({
    name: spec.name,
    image: spec.image,
    ports: [{ name: spec.port.name, containerPort: spec.port.number }],
    env: spec.env.map(([name, value]) => ({ name, value })),
    resources: {
      requests: { cpu: `${spec.cpuMillis.request}m`, memory: `${spec.memoryMebibytes.request}Mi` },
      limits: { cpu: `${spec.cpuMillis.limit}m`, memory: `${spec.memoryMebibytes.limit}Mi` },
    },
    ...(spec.readiness && {
      readinessProbe: {
        httpGet: { path: spec.readiness.path, port: spec.port.number },
        initialDelaySeconds: spec.readiness.initialDelaySeconds,
        periodSeconds: spec.readiness.periodSeconds,
      },
    }),
  });
  const charts = fleet.charts.map((c): SpecFile & { objects: Record<string, unknown>[] } => ({ name: c.id, objects: [] }));
  for (const app of fleet.apps) {
    const chart = fleet.charts[app.chart];
    const file = charts[app.chart];
    if (!chart || !file) throw new Error(`no chart ${app.chart}`);
    file.objects.push({
      apiVersion: API_VERSION,
      kind: ED_KIND,
      metadata: { name: app.name, namespace: chart.namespace },
      spec: {
        replicas: app.totalReplicas,
        selector: { matchLabels: { ...app.labels } },
        template: { metadata: { labels: { ...app.labels } }, spec: { containers: app.containers.map(container) } },
        regions: app.regions.map((r) => ({
          name: fleet.regions[r.region]?.name,
          ...(r.replicas !== undefined && { replicas: r.replicas }),
          ...(r.images && { overrides: { images: { ...r.images } } }),
        })),
        strategy: { minReadySeconds: app.minReadySeconds, rolloutStrategy: 'Group', batchSize: '25%' },
      },
    });
  }
  return [{ name: 'regions', objects: regions }, ...charts];
}
