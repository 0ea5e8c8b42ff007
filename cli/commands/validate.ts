import type { Command } from 'commander';
import { renderFiles } from '../render-files.js';

/** `edctl validate`: every problem of every file, each with its object and field path. */
export function registerValidate(program: Command): void {
  program
    .command('validate')
    .description('Check specs without rendering them; exits 1 and lists every problem when any is invalid')
    .requiredOption('-f, --filename <paths...>', 'files or folders of YAML specs')
    .addHelpText(
      'after',
      `
Examples:
  edctl validate -f examples/
  edctl validate -f regions.yaml -f web.yaml`,
    )
    .action((options: { filename: string[] }) => {
      const { objects, rendered } = renderFiles(options.filename);
      process.stdout.write(
        `${objects.length} objects valid (${rendered.deployRegions.length} DeployRegions, ${rendered.extendedDeployments.length} ExtendedDeployments)\n`,
      );
    });
}
