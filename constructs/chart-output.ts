import type { App } from 'cdk8s';
import { CLUSTER_KIND } from '../core/api/identity.js';
import { isOwnKind } from '../core/fleet/objects.js';
import { toYaml, writeCharts, type ChartObjects } from './chart-files.js';
import { writeFleet } from './fleet-layout.js';

// synth.ts's output of an app, from its charts' objects: `edctl render` makes those without an app (manifest-json.ts).
// Not exported by the package's index, as fleet-layout.ts.

/** Each chart's id and objects (`chart.toJson()`), charts in creation order. */
export function appCharts(app: App): ChartObjects[] {
  return app.charts.map((chart) => ({ id: chart.node.id, objects: chart.toJson() as unknown[] }));
}

/** Every chart's objects as one multi-document YAML text (synth.ts appYaml). */
export function chartsYaml(charts: readonly ChartObjects[]): string {
  return charts
    .map((chart) => chart.objects.map((object) => toYaml(object)).join('---\n'))
    .filter((text) => text !== '')
    .join('---\n');
}

/** One file per chart, or the fleet layout when a chart holds a Cluster (synth.ts writeApp). */
export function writeAppCharts(charts: readonly ChartObjects[], outdir: string): string[] {
  if (charts.some((c) => c.objects.some((o) => isOwnKind(o, CLUSTER_KIND)))) return writeFleet(charts, outdir);
  return writeCharts(charts, outdir);
}
