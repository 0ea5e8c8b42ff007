import { Option, type Command } from 'commander';
import { planOf, type ExtendedDeploymentPlan, type GroupPlan, type Plan, type RegionPlan } from '../../core/plan.js';
import { json, table } from '../output.js';
import { renderFiles, renderFrom } from '../render-files.js';

type PlanFormat = 'text' | 'json' | 'markdown';

/** `edctl plan`: where each region is headed and the groups that get it there. */
export function registerPlan(program: Command): void {
  const bin = program.name();
  program
    .command('plan')
    .description("Show, per ExtendedDeployment, each region's target replicas and revision and the groups of the rollout")
    .requiredOption('-f, --filename <paths...>', 'files or folders of YAML specs')
    .option('--from <ref-or-paths...>', 'the state before the change: a git revision (e.g. origin/main) or files; default: every region rolls')
    .addOption(new Option('-o, --output <format>', 'output format').choices(['text', 'json', 'markdown']).default('text'))
    .addHelpText(
      'after',
      `
Examples:
  ${bin} plan -f examples/upstream-sample
  ${bin} plan -f specs/ --from origin/main --output markdown > plan.md
  ${bin} plan -f specs/ --output json | jq '.extendedDeployments[].groups'`,
    )
    .action((options: { filename: string[]; from?: string[]; output: PlanFormat }) => {
      const after = renderFiles(options.filename).rendered.extendedDeployments;
      const before = options.from === undefined ? undefined : renderFrom(options.from, options.filename);
      const plan = planOf(after, before);
      const print = { text: planText, json, markdown: planMarkdown }[options.output];
      process.stdout.write(print(plan));
    });
}

/** `rollout`, or `rollout (in-place)` / `rollout (replace: why)` when in-place updates are on. */
export const changeText = (r: RegionPlan) => (r.update === undefined ? r.change : r.update === 'in-place' ? `${r.change} (in-place)` : `${r.change} (replace: ${r.updateReason ?? ''})`);
export const qualified = (ed: { readonly namespace: string; readonly name: string }) => (ed.namespace ? `${ed.namespace}/${ed.name}` : ed.name);
export const arrow = (from: string | number | undefined, to: string | number) => (from === undefined || from === to ? String(to) : `${from} -> ${to}`);

/** `2 groups, approval before group 2`, or `no rollout`. */
export function summary(ed: Pick<ExtendedDeploymentPlan, 'groups' | 'approvals'>): string {
  if (ed.groups.length === 0) return 'no rollout';
  const gates = ed.approvals.length > 0 ? `, approval before group ${ed.approvals.join(', ')}` : '';
  return `${ed.groups.length} ${ed.groups.length === 1 ? 'group' : 'groups'}${gates}`;
}

/** One line per group: `  group 1: amd64 2/4, arm64 1/2` (new pods over pods per region once it is done). */
export function groupLines(groups: readonly GroupPlan[]): string[] {
  return groups.map((g) => `  group ${g.group}: ${g.regions.map((r) => `${r.name} ${r.updated}/${r.updated + r.old}`).join(', ')}`);
}

/** The plan for people: one block per ExtendedDeployment. */
export function planText(plan: Plan): string {
  if (plan.extendedDeployments.length === 0) return 'No ExtendedDeployments.\n';
  return plan.extendedDeployments
    .map((ed) => {
      const rows = ed.regions.map((r) => [r.name, changeText(r), arrow(r.fromReplicas, r.replicas), arrow(r.fromRevision, r.revision)]);
      const groups = groupLines(ed.groups);
      return [
        `ExtendedDeployment ${qualified(ed)}: ${ed.replicas} replicas, rollout revision ${ed.rolloutRevision}, ${summary(ed)}`,
        table(['REGION', 'CHANGE', 'REPLICAS', 'REVISION'], rows),
        ...(groups.length > 0 ? ['new pods per region after each group:', ...groups] : []),
        '',
      ].join('\n');
    })
    .join('\n');
}

/** The plan as a pull-request comment: a table and a mermaid gantt chart of the groups per ExtendedDeployment. */
export function planMarkdown(plan: Plan): string {
  if (plan.extendedDeployments.length === 0) return 'No ExtendedDeployments.\n';
  return plan.extendedDeployments
    .map((ed) => {
      const lines = [
        `### ExtendedDeployment \`${qualified(ed)}\``,
        '',
        `Rollout \`${ed.rolloutRevision}\`: ${ed.replicas} replicas, ${summary(ed)}.`,
        '',
        '| Region | Change | Replicas | Revision |',
        '|---|---|---|---|',
        ...ed.regions.map((r) => `| ${r.name} | ${changeText(r)} | ${arrow(r.fromReplicas, r.replicas)} | \`${arrow(r.fromRevision, r.revision)}\` |`),
      ];
      if (ed.groups.length > 0) {
        lines.push('', '```mermaid', 'gantt', `  title ${qualified(ed)}: new pods per region after each group`, '  dateFormat X', '  axisFormat %s');
        for (const region of ed.regions.filter((r) => r.change === 'rollout' || r.change === 'new')) {
          const moves = ed.groups.filter((g, i) => g.regions.find((r) => r.name === region.name)?.updated !== ed.groups[i - 1]?.regions.find((r) => r.name === region.name)?.updated);
          if (moves.length === 0) continue;
          lines.push(`  section ${region.name}`);
          for (const g of moves) {
            const r = g.regions.find((x) => x.name === region.name);
            lines.push(`  group ${g.group} (${r?.updated ?? 0}/${(r?.updated ?? 0) + (r?.old ?? 0)}) : ${g.group - 1}, ${g.group}`);
          }
        }
        lines.push('```');
      }
      if (ed.approvals.length > 0) {
        lines.push('', `To approve from Git, set \`strategy.approval: {revision: ${ed.rolloutRevision}, throughGroup: N}\`; or run \`edctl approve ${ed.name}\`.`);
      }
      return `${lines.join('\n')}\n`;
    })
    .join('\n');
}
