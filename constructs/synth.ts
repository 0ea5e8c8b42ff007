import type { App, Chart } from 'cdk8s';
import { toYaml } from './chart-files.js';
import { appCharts, chartsYaml, writeAppCharts } from './chart-output.js';

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
  return chartsYaml(appCharts(app));
}

/**
 * Writes one `<chart id>.k8s.yaml` per chart into `outdir`, like cdk8s' FILE_PER_CHART, with a serializer several
 * times faster than the one `App.synth()` uses (rendering thousands of workloads is dominated by YAML output). An app
 * with Cluster constructs is laid out per cluster instead (`clusters/<cluster>/`, see fleet-layout.ts).
 */
export function writeApp(app: App, outdir: string): string[] {
  return writeAppCharts(appCharts(app), outdir);
}
