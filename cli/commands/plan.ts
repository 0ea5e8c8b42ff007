import { Option, type Command } from 'commander';
import { planOf, type Plan } from '../../core/plan.js';
import { json, table, type OutputFormat } from '../output.js';
import { renderFiles } from '../render-files.js';

/** `edctl plan`: where each region of each ExtendedDeployment is headed. */
export function registerPlan(program: Command): void {
  program
    .command('plan')
    .description('Show, per ExtendedDeployment, each region\'s target replicas and revision')
    .requiredOption('-f, --filename <paths...>', 'files or folders of YAML specs')
    .addOption(new Option('-o, --output <format>', 'output format').choices(['text', 'json']).default('text'))
    .addHelpText(
      'after',
      `
Examples:
  edctl plan -f examples/upstream-sample
  edctl plan -f specs/ --output json | jq '.extendedDeployments[].regions'`,
    )
    .action((options: { filename: string[]; output: OutputFormat }) => {
      const plan = planOf(renderFiles(options.filename).rendered.extendedDeployments);
      process.stdout.write(options.output === 'json' ? json(plan) : planText(plan));
    });
}

/** The plan for people: one block per ExtendedDeployment. */
export function planText(plan: Plan): string {
  if (plan.extendedDeployments.length === 0) return 'No ExtendedDeployments.\n';
  return plan.extendedDeployments
    .map((ed) => {
      const name = ed.namespace ? `${ed.namespace}/${ed.name}` : ed.name;
      const rows = ed.regions.map((r) => [r.name, r.replicas, r.revision]);
      return `ExtendedDeployment ${name}: ${ed.replicas} replicas, rollout revision ${ed.rolloutRevision}\n${table(['REGION', 'REPLICAS', 'REVISION'], rows)}\n`;
    })
    .join('\n');
}
