import { join } from 'node:path';
import { App, Chart } from 'cdk8s';
import { Construct } from 'constructs';
import { argocdApplicationSet } from '../core/fleet/argocd.js';
import { fluxKustomizations } from '../core/fleet/flux.js';
import { ARGOCD_FOLDER, clusterFolder, FLUX_FOLDER } from '../core/fleet/layout.js';
import { isFleetExtendedDeployment, renderedExtendedDeploymentOf, renderFleet, type ClusterRender, type FleetRender } from '../core/fleet/render.js';
import { writeCharts, type ChartObjects } from './chart-files.js';
import { emitRenderedExtendedDeployment } from './emit.js';
import { emitManifest } from './manifest.js';
import { RenderError } from './render-error.js';

// Not exported by the package's index: these signatures reach core's (zod) types, which the constructs' published
// declarations must not (see props.ts). writeApp and edctl render call them.

/**
 * The fleet layout of an app with Cluster constructs, as `edctl render -o` writes it for YAML: per member cluster
 * `clusters/<cluster>/<chart>.k8s.yaml` with what that cluster gets of each chart (core/fleet renderFleet: its
 * DeployRegions, the other objects, an AgentInstall's Deployment with that member's fleet flags and peer Secrets, and
 * each ExtendedDeployment with clusters cut to its share), then the engines'
 * objects (writeFleetEngines). Cluster and Fleet objects are written nowhere. Invalid specs throw a RenderError with
 * every problem.
 */
export function writeFleet(charts: readonly ChartObjects[], outdir: string): string[] {
  const all = charts.flatMap((c) => c.objects);
  const result = renderFleet(all);
  if (!result.ok) throw new RenderError(result.problems);
  if (result.value.layout === 'flat') return writeCharts(charts, outdir);
  const files: string[] = [];
  for (const cluster of result.value.clusters) {
    const app = new App();
    // What this cluster gets, as it gets it: an agent install's Deployment carries this member's flags.
    const gets = new Map(cluster.inputs.map((at, p) => [at, cluster.objects[p]]));
    let input = 0;
    for (const chart of charts) {
      const scope = new Chart(app, chart.id);
      chart.objects.forEach((object, k) => {
        const at = input++;
        if (!gets.has(at)) return;
        const rendered = isFleetExtendedDeployment(object) ? renderedExtendedDeploymentOf(cluster, at) : undefined;
        if (rendered) emitRenderedExtendedDeployment(new Construct(scope, `o${k}`), rendered);
        else emitManifest(scope, `o${k}`, gets.get(at) as Record<string, unknown>);
      });
    }
    files.push(
      ...writeCharts(
        app.charts.map((c) => ({ id: c.node.id, objects: c.toJson() as unknown[] })),
        join(outdir, clusterFolder(cluster.cluster.metadata.name)),
      ),
    );
  }
  return [...files, ...writeFleetEngines(result.value, outdir)];
}

/**
 * Writes the GitOps engines' objects of a fleet render into `outdir`: with a Fleet that configures them, Argo CD's
 * ApplicationSet (`fleet/argocd/applicationset.k8s.yaml`) and one Flux Kustomization per cluster
 * (`fleet/flux/<cluster>.k8s.yaml`). Nothing without a Fleet.
 */
export function writeFleetEngines(render: Extract<FleetRender, { layout: 'clusters' }>, outdir: string): string[] {
  const { fleet } = render;
  if (!fleet) return [];
  const clusters = render.clusters.map((c: ClusterRender) => c.cluster);
  const files: string[] = [];
  const applicationSet = argocdApplicationSet(fleet, clusters);
  if (applicationSet) files.push(...writeObjects([['applicationset', applicationSet]], join(outdir, ARGOCD_FOLDER)));
  const kustomizations = fluxKustomizations(fleet, clusters);
  if (kustomizations.length > 0)
    files.push(
      ...writeObjects(
        kustomizations.map((k) => [k.cluster, k.kustomization]),
        join(outdir, FLUX_FOLDER),
      ),
    );
  return files;
}

/** One file per object, `<name>.k8s.yaml`, through the same emitter and serializer as every chart. */
function writeObjects(objects: readonly (readonly [string, Record<string, unknown>])[], outdir: string): string[] {
  const app = new App();
  for (const [name, object] of objects) emitManifest(new Chart(app, name), 'Resource', object);
  return writeCharts(
    app.charts.map((c) => ({ id: c.node.id, objects: c.toJson() as unknown[] })),
    outdir,
  );
}
