import { App, Chart } from 'cdk8s';
import { k8s } from 'cdk8s-plus-28';
import { DeployRegion, ExtendedDeployment } from '../constructs/index.js';
import type { ContainerSpec, Fleet } from './fleet.js';

function container(spec: ContainerSpec): k8s.Container {
  return {
    name: spec.name,
    image: spec.image,
    ports: [{ name: spec.port.name, containerPort: spec.port.number }],
    env: spec.env.map(([name, value]) => ({ name, value })),
    resources: {
      requests: { cpu: k8s.Quantity.fromString(`${spec.cpuMillis.request}m`), memory: k8s.Quantity.fromString(`${spec.memoryMebibytes.request}Mi`) },
      limits: { cpu: k8s.Quantity.fromString(`${spec.cpuMillis.limit}m`), memory: k8s.Quantity.fromString(`${spec.memoryMebibytes.limit}Mi`) },
    },
    ...(spec.readiness && {
      readinessProbe: {
        httpGet: { path: spec.readiness.path, port: k8s.IntOrString.fromNumber(spec.port.number) },
        initialDelaySeconds: spec.readiness.initialDelaySeconds,
        periodSeconds: spec.readiness.periodSeconds,
      },
    }),
  };
}

/**
 * Our side: R DeployRegions in one chart, and one ExtendedDeployment per application, spread over the fleet's charts.
 * Each construct validates and renders through core as it is created.
 */
export function buildOurs(fleet: Fleet): { app: App; eds: ExtendedDeployment[] } {
  const app = new App();
  const regionChart = new Chart(app, 'regions');
  const regions = fleet.regions.map((r) => new DeployRegion(regionChart, r.name, { matchLabels: { [r.labelKey]: r.labelValue } }));
  const charts = fleet.charts.map((c) => new Chart(app, c.id, { namespace: c.namespace }));
  const eds = fleet.apps.map((spec) => {
    const chart = charts[spec.chart];
    if (!chart) throw new Error(`no chart ${spec.chart}`);
    return new ExtendedDeployment(chart, spec.name, {
      replicas: spec.totalReplicas,
      template: { metadata: { labels: { ...spec.labels } }, spec: { containers: spec.containers.map(container) } },
      regions: spec.regions.map((r) => {
        const region = regions[r.region];
        if (!region) throw new Error(`no region ${r.region}`);
        return {
          region,
          ...(r.replicas !== undefined && { replicas: r.replicas }),
          ...(r.images && { overrides: { images: { ...r.images } } }),
        };
      }),
      strategy: { minReadySeconds: spec.minReadySeconds, rolloutStrategy: 'Group', batchSize: '25%' },
    });
  });
  return { app, eds };
}

/** Checks that every region got the count the baseline writes by hand (outside the timed section). */
export function checkOurReplicas(fleet: Fleet, eds: readonly ExtendedDeployment[]): void {
  fleet.apps.forEach((spec, i) => {
    const rendered = eds[i]?.rendered;
    spec.regions.forEach((r, j) => {
      const got = rendered?.regions[j]?.replicas;
      if (got !== r.resolvedReplicas) throw new Error(`${spec.name} region ${j}: rendered ${String(got)} replicas, the baseline writes ${r.resolvedReplicas}`);
    });
  });
}
