import { Option, type Command } from 'commander';
import { diffOf, type Diff, type ExtendedDeploymentDiff, type FieldChange } from '../../core/diff.js';
import { json, type OutputFormat } from '../output.js';
import { renderFiles, renderFrom } from '../render-files.js';
import { arrow, changeText, groupLines, qualified, stoppedLine, summary } from './plan.js';

/** `edctl diff`: per ExtendedDeployment and region, what a change does to the rendered templates and the rollout it starts. */
export function registerDiff(program: Command): void {
  const bin = program.name();
  program
    .command('diff')
    .description('Show what a change does: per region the changed template fields, replicas, in-place or replace, and the groups of the rollout')
    .requiredOption('-f, --filename <paths...>', 'files or folders of YAML specs: the state after the change')
    .option('--from <ref-or-paths...>', 'the state before the change: a git revision (e.g. origin/main) or files', 'HEAD')
    .addOption(new Option('-o, --output <format>', 'output format').choices(['text', 'json']).default('text'))
    .addHelpText(
      'after',
      `
Both sides are rendered as edctl render renders them, so a change to a DeployRegion, an override or a default shows
up in the regional templates it reaches. Template paths are relative to the pod template; the revision label is
left out (the revision line says it). "in-place" or "replace" is shown when in-place updates are on.

Examples:
  ${bin} diff -f specs/                            # against what is committed (HEAD)
  ${bin} diff -f specs/ --from origin/main
  ${bin} diff -f new/ --from old/ -o json | jq '.extendedDeployments[].regions[].templateChanges'`,
    )
    .action((options: { filename: string[]; from: string[] | string; output: OutputFormat }) => {
      const from = typeof options.from === 'string' ? [options.from] : options.from;
      const after = renderFiles(options.filename).rendered.extendedDeployments;
      const before = renderFrom(from, options.filename);
      const diff = diffOf(after, before);
      process.stdout.write(options.output === 'json' ? json(diff) : diffText(diff));
    });
}

const MAX_VALUE = 120;

/** A value in one line: plain strings as they are, everything else as compact JSON, long values shortened. */
function valueText(value: unknown): string {
  const text = typeof value === 'string' && /^[^\s"]+$/.test(value) ? value : JSON.stringify(value);
  return text.length > MAX_VALUE ? `${text.slice(0, MAX_VALUE - 1)}…` : text;
}

/** `path: a -> b`, `path: + added`, `path: - removed`. */
export function changeLine(c: FieldChange): string {
  if (c.from === undefined) return `${c.path}: + ${valueText(c.to)}`;
  if (c.to === undefined) return `${c.path}: - ${valueText(c.from)}`;
  return `${c.path}: ${valueText(c.from)} -> ${valueText(c.to)}`;
}

function header(ed: ExtendedDeploymentDiff): string {
  const name = `ExtendedDeployment ${qualified(ed)}`;
  switch (ed.change) {
    case 'removed':
      return `${name}: removed (${ed.fromReplicas ?? 0} replicas in ${ed.removedRegions.join(', ')})`;
    case 'none':
      return `${name}: no change`;
    case 'new':
      return `${name}: new, ${ed.replicas} replicas, rollout revision ${ed.rolloutRevision}`;
    default:
      return `${name}: rollout revision ${arrow(ed.fromRolloutRevision, ed.rolloutRevision)}, replicas ${arrow(ed.fromReplicas, ed.replicas)}, ${summary(ed)}`;
  }
}

/** The diff for people: per ExtendedDeployment, a line per region with its changed template fields, then the groups. */
export function diffText(diff: Diff): string {
  if (diff.extendedDeployments.length === 0) return 'No ExtendedDeployments.\n';
  return diff.extendedDeployments
    .map((ed) => {
      const lines = [header(ed)];
      if (ed.change === 'changed' || ed.change === 'new') {
        for (const r of ed.regions) {
          const parts = [changeText(r), `replicas ${arrow(r.fromReplicas, r.replicas)}`];
          if (r.change === 'rollout' || r.change === 'new') parts.push(`revision ${arrow(r.fromRevision, r.revision)}`);
          lines.push(`  region ${r.name}: ${parts.join(', ')}`);
          for (const c of r.templateChanges) lines.push(`    ${changeLine(c)}`);
        }
        for (const name of ed.removedRegions) lines.push(`  region ${name}: removed`);
        if (ed.totalGroups > 0) lines.push('  rollout, new pods per region after each group:', ...groupLines(ed.runs).map((l) => `  ${l}`));
        if (ed.stopped) lines.push(`  ${stoppedLine(ed.stopped)}`);
      }
      return `${lines.join('\n')}\n`;
    })
    .join('\n');
}
