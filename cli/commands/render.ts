import { join } from 'node:path';
import type { Command } from 'commander';
import { writeFleetEngines } from '../../constructs/fleet-layout.js';
import { chartsYaml, writeAppCharts } from '../../constructs/chart-output.js';
import { appYaml, writeApp } from '../../constructs/synth.js';
import { VERSION } from '../../core/api/identity.js';
import { clusterFolder } from '../../core/fleet/layout.js';
import { renderedCharts } from '../render-charts.js';
import { clusterApp, renderFleetFiles } from '../render-files.js';
import { UserError } from '../user-error.js';

/** `edctl render`: plain YAML specs to per-region workloads, exactly as the constructs render them. */
export function registerRender(program: Command): void {
  const bin = program.name();
  program
    .command('render')
    .description(`Render DeployRegions and ExtendedDeployments (upstream ${VERSION} YAML) into per-region workloads`)
    .requiredOption('-f, --filename <paths...>', 'files or folders of YAML specs (folders are read recursively; - for standard input)')
    .option('-o, --output-dir <dir>', 'write one file per input file into this folder (default: print to stdout)')
    .option('--cluster <name>', 'with Cluster objects: print what this member cluster gets (default: write every cluster, with -o)')
    .addHelpText(
      'after',
      `
With Cluster objects (a fleet) the output is laid out per cluster: <dir>/clusters/<cluster>/<file>.k8s.yaml, and with a
Fleet object the Argo CD ApplicationSet (<dir>/fleet/argocd/) and the Flux Kustomizations (<dir>/fleet/flux/).

Examples:
  ${bin} render -f examples/upstream-sample -o dist/upstream
  ${bin} render -f shop/ | kubectl apply --server-side -f -
  ${bin} render -f examples/fleet -o dist
  ${bin} render -f examples/fleet --cluster eu-1`,
    )
    .action((options: { filename: string[]; outputDir?: string; cluster?: string }) => {
      const { objects, rendered } = renderFleetFiles(options.filename, 'render');
      if (rendered.layout === 'flat') {
        if (options.cluster !== undefined) throw new UserError([`--cluster ${options.cluster}: these specs hold no Cluster object`]);
        const charts = renderedCharts({ objects, rendered: rendered.rendered });
        if (options.outputDir !== undefined) writeAppCharts(charts, options.outputDir);
        else process.stdout.write(chartsYaml(charts));
        return;
      }
      if (options.cluster !== undefined) {
        const cluster = rendered.clusters.find((c) => c.cluster.metadata.name === options.cluster);
        const names = rendered.clusters.map((c) => c.cluster.metadata.name).join(', ');
        if (!cluster) throw new UserError([`--cluster ${options.cluster}: no Cluster of that name in these specs (clusters: ${names})`]);
        process.stdout.write(appYaml(clusterApp(objects, cluster)));
        return;
      }
      const dir = options.outputDir;
      if (dir === undefined) {
        throw new UserError([
          'these specs hold Cluster objects: the output is one folder per cluster, so give -o <dir> (or --cluster <name> to print one cluster)',
        ]);
      }
      for (const cluster of rendered.clusters) writeApp(clusterApp(objects, cluster), join(dir, clusterFolder(cluster.cluster.metadata.name)));
      writeFleetEngines(rendered, dir);
    });
}
