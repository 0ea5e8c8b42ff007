import type { Command } from 'commander';
import { planOf, type Plan } from '../../core/plan.js';
import { data, outputOption, type OutputFormat } from '../output.js';
import { fleetBaseOf, fleetPlanOf, plannedCluster, type FleetPlan } from '../../core/fleet/plan.js';
import { renderFleetChange } from '../render-files.js';
import { UserError } from '../user-error.js';
import { fleetPlanMarkdown, fleetPlanText } from './plan-fleet.js';
import { planMarkdown, planText } from './plan-view.js';

type PlanFormat = OutputFormat | 'markdown';

/** `edctl plan`: where each region is headed and the groups that get it there. */
export function registerPlan(program: Command): void {
  const bin = program.name();
  program
    .command('plan')
    .description("Show, per ExtendedDeployment, each region's target replicas and revision and the groups of the rollout")
    .requiredOption('-f, --filename <paths...>', 'files or folders of YAML specs (- for standard input)')
    .option('--from <ref-or-paths...>', 'the state before the change: a git revision (e.g. origin/main) or files; default: every region rolls')
    .addOption(outputOption('markdown'))
    .addHelpText(
      'after',
      `
With --from, each ExtendedDeployment also lists what changes outside its pod template (strategy, replicas, regions,
overrides), and the risks of the change come first (markdown: the summary a pull-request comment leads with).
A git revision is read for the same paths as -f; a path not there yet is new, one no longer here is removed.

Examples:
  ${bin} plan -f examples/upstream-sample
  ${bin} plan -f specs/ --from origin/main --output markdown > plan.md
  ${bin} plan -f specs/ --output json | jq '.extendedDeployments[].groups'`,
    )
    .action((options: { filename: string[]; from?: string[]; output: PlanFormat }) => {
      const { after, before } = renderFleetChange(options.filename, options.from, 'plan');
      if (after.layout === 'clusters') {
        const plan = fleetPlanOf(after.clusters.map(plannedCluster), before && fleetBaseOf(before), after.fleet?.metadata.name);
        const print = { text: fleetPlanText, json: (p: FleetPlan) => data(p, 'json'), yaml: (p: FleetPlan) => data(p, 'yaml'), markdown: fleetPlanMarkdown };
        process.stdout.write(print[options.output](plan));
        return;
      }
      if (before?.layout === 'clusters')
        throw new UserError([`--from ${(options.from ?? []).join(' ')}: lays out per cluster (Cluster objects), but -f does not: plan each cluster's files`]);
      const plan = planOf(after.rendered.extendedDeployments, before?.rendered.extendedDeployments);
      const print = { text: planText, json: (p: Plan) => data(p, 'json'), yaml: (p: Plan) => data(p, 'yaml'), markdown: planMarkdown }[options.output];
      process.stdout.write(print(plan));
    });
}
