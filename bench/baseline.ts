import { App, Chart, Duration, Size } from 'cdk8s';
import * as kplus from 'cdk8s-plus-28';
import type { ContainerSpec, Fleet } from './fleet.js';

function container(spec: ContainerSpec, image: string): kplus.ContainerProps {
  return {
    name: spec.name,
    image,
    ports: [{ name: spec.port.name, number: spec.port.number }],
    envVariables: Object.fromEntries(spec.env.map(([name, value]) => [name, kplus.EnvValue.fromValue(value)])),
    resources: {
      cpu: { request: kplus.Cpu.millis(spec.cpuMillis.request), limit: kplus.Cpu.millis(spec.cpuMillis.limit) },
      memory: { request: Size.mebibytes(spec.memoryMebibytes.request), limit: Size.mebibytes(spec.memoryMebibytes.limit) },
    },
    ...(spec.readiness && {
      readiness: kplus.Probe.fromHttpGet(spec.readiness.path, {
        port: spec.port.number,
        initialDelaySeconds: Duration.seconds(spec.readiness.initialDelaySeconds),
        periodSeconds: Duration.seconds(spec.readiness.periodSeconds),
      }),
    }),
  };
}

/**
 * The baseline: the same fleet written by hand as cdk8s-plus-28 Deployments, one per application and region
 * (`<app>-<region>`), with the counts resolved by hand, the region's image override applied, and node affinity to the
 * region's label. Same charts and namespaces as our side.
 */
export function buildBaseline(fleet: Fleet): { app: App } {
  const app = new App();
  const charts = fleet.charts.map((c) => new Chart(app, c.id, { namespace: c.namespace }));
  for (const spec of fleet.apps) {
    const chart = charts[spec.chart];
    if (!chart) throw new Error(`no chart ${spec.chart}`);
    for (const placement of spec.regions) {
      const region = fleet.regions[placement.region];
      if (!region) throw new Error(`no region ${placement.region}`);
      const name = `${spec.name}-${region.name}`;
      const deployment = new kplus.Deployment(chart, name, {
        metadata: { name },
        replicas: placement.resolvedReplicas,
        minReady: Duration.seconds(spec.minReadySeconds),
        podMetadata: { labels: { ...spec.labels, region: region.name } },
        containers: spec.containers.map((c) => container(c, placement.images?.[c.name] ?? c.image)),
      });
      deployment.scheduling.attract(kplus.Node.labeled(kplus.NodeLabelQuery.is(region.labelKey, region.labelValue)));
    }
  }
  return { app };
}
