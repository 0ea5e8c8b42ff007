import type { App, Chart } from 'cdk8s';
import { CLUSTER_KIND } from '../core/api/identity.js';
import { isOwnKind } from '../core/fleet/objects.js';
import { toYaml, writeCharts } from './chart-files.js';
import { writeFleet } from './fleet-layout.js';

export { toYaml } from './chart-files.js';

/** A chart's objects as one multi-document YAML text. */
export function chartYaml(chart: Chart): string {
  return chart
    .toJson()
    .map((object) => toYaml(object))
    .join('---\n');
}

/** Every chart of the app as one multi-document YAML text, charts in creation order. */
export function appYaml(app: App): string {
  return app.charts
    .map(chartYaml)
    .filter((text) => text !== '')
    .join('---\n');
}

/**
 * Writes one `<chart id>.k8s.yaml` per chart into `outdir`, like cdk8s' FILE_PER_CHART, with a serializer several
 * times faster than the one `App.synth()` uses (rendering thousands of workloads is dominated by YAML output). An app
 * with Cluster constructs is laid out per cluster instead (`clusters/<cluster>/`, see fleet-layout.ts).
 */
export function writeApp(app: App, outdir: string): string[] {
  const charts = app.charts.map((chart) => ({ id: chart.node.id, objects: chart.toJson() as unknown[] }));
  if (charts.some((c) => c.objects.some((o) => isOwnKind(o, CLUSTER_KIND)))) return writeFleet(charts, outdir);
  return writeCharts(charts, outdir);
}
