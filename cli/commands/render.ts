import type { Command } from 'commander';
import { appYaml, writeApp } from '../../constructs/synth.js';
import { VERSION } from '../../core/api/identity.js';
import { appFromFiles } from '../render-files.js';

/** `edctl render`: plain YAML specs to per-region workloads, exactly as the constructs render them. */
export function registerRender(program: Command): void {
  const bin = program.name();
  program
    .command('render')
    .description(`Render DeployRegions and ExtendedDeployments (upstream ${VERSION} YAML) into per-region workloads`)
    .requiredOption('-f, --filename <paths...>', 'files or folders of YAML specs (folders are read recursively; - for standard input)')
    .option('-o, --output-dir <dir>', 'write one file per input file into this folder (default: print to stdout)')
    .addHelpText(
      'after',
      `
Examples:
  ${bin} render -f examples/upstream-sample -o dist/upstream
  ${bin} render -f shop/ | kubectl apply --server-side -f -`,
    )
    .action((options: { filename: string[]; outputDir?: string }) => {
      const app = appFromFiles(options.filename);
      if (options.outputDir !== undefined) writeApp(app, options.outputDir);
      else process.stdout.write(appYaml(app));
    });
}
