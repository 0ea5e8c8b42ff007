import type { Command } from 'commander';
import { diffOf, type Diff, type ExtendedDeploymentDiff } from '../../core/diff.js';
import { data, outputOption, type OutputFormat } from '../output.js';
import { renderFleetChange } from '../render-files.js';
import type { FleetRender } from '../../core/fleet/render.js';
import { fleetBaseOf, memberBase } from '../../core/fleet/plan.js';
import type { RenderedSet } from '../../core/render.js';
import { UserError } from '../user-error.js';
import { arrow, changeLine, changeText, groupLines, qualified, riskLines, stoppedLine, summary } from './plan-view.js';

/** `edctl diff`: per ExtendedDeployment and region, what a change does to the rendered templates and the rollout it starts. */
export function registerDiff(program: Command): void {
  const bin = program.name();
  program
    .command('diff')
    .description('Show what a change does: per region the changed template fields, replicas, in-place or replace, and the groups of the rollout')
    .requiredOption('-f, --filename <paths...>', 'files or folders of YAML specs (- for standard input): the state after the change')
    .option('--from <ref-or-paths...>', 'the state before the change: a git revision (e.g. origin/main) or files', 'HEAD')
    .addOption(outputOption())
    .option('--exit-code', 'exit 1 when there are differences and 0 when there are none, as git diff --exit-code')
    .addHelpText(
      'after',
      `
Both sides are rendered as edctl render renders them, so a change to a DeployRegion, an override or a default shows
up in the regional templates it reaches. Template paths are relative to the pod template; the revision label is
left out (the revision line says it). "in-place" or "replace" is shown when in-place updates are on. Changes outside
the pod template (strategy, replicas, per-region settings and overrides, region order) show as full paths, compared
with every default applied; the risks of the change (approval gates or a pause removed, the change approving its
own rollout, a deadline shortened, more pods unavailable at once, every pod replaced, a region removed with its pods)
come first.

With --exit-code, the exit code is 1 when anything differs and 0 when nothing does (1 is also an error, which
stderr then says), so a script can tell: ${bin} diff -f specs/ --exit-code >/dev/null || echo changed

Examples:
  ${bin} diff -f specs/                            # against what is committed (HEAD)
  ${bin} diff -f specs/ --from origin/main
  ${bin} diff -f new/ --from old/ -o json | jq '.extendedDeployments[].regions[].templateChanges'`,
    )
    .action((options: { filename: string[]; from: string[] | string; output: OutputFormat; exitCode?: boolean }) => {
      const from = typeof options.from === 'string' ? [options.from] : options.from;
      const { after, before } = renderFleetChange(options.filename, from, 'diff');
      const diffs = clusterDiffs(after, before);
      const text = () =>
        after.layout === 'flat' ? diffText(diffs[0]!.diff) : diffs.map((d) => `Cluster ${d.cluster}:\n${indent(diffText(d.diff))}`).join('\n');
      const json = () => (after.layout === 'flat' ? diffs[0]!.diff : { clusters: diffs });
      process.stdout.write(options.output === 'text' ? text() : data(json(), options.output));
      const differs = diffs.some(({ diff }) => [...diff.extendedDeployments, ...diff.deployRegions].some((x) => x.change !== 'none'));
      if (options.exitCode && differs) throw new UserError([], 1);
    });
}

/** The diff of each member cluster (one, unnamed, without Cluster objects), against what it had before (memberBase). */
function clusterDiffs(after: FleetRender, before: FleetRender | undefined): { cluster: string | undefined; diff: Diff }[] {
  const diff = (a: RenderedSet, b: RenderedSet | undefined) =>
    diffOf(a.extendedDeployments, b?.extendedDeployments ?? [], { after: a.deployRegions, before: b?.deployRegions ?? [] });
  const base = before && fleetBaseOf(before);
  if (after.layout === 'flat') return [{ cluster: undefined, diff: diff(after.rendered, base?.layout === 'flat' ? base.rendered : undefined) }];
  return after.clusters.map((c) => ({ cluster: c.cluster.metadata.name, diff: diff(c.rendered, memberBase(base, c.cluster.metadata.name)) }));
}

const indent = (text: string) =>
  text
    .split('\n')
    .map((line) => (line === '' ? line : `  ${line}`))
    .join('\n');

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

/**
 * The diff for people: the risks first, then each DeployRegion that changes, then per ExtendedDeployment its changes
 * outside the pod template, a line per region with its changed template fields, and the groups.
 */
export function diffText(diff: Diff): string {
  const risks = riskLines(diff.risks);
  const lead = risks.length > 0 ? `${risks.join('\n')}\n\n` : '';
  const regions = diff.deployRegions
    .filter((r) => r.change !== 'none')
    .map((r) => `${[`DeployRegion ${r.name}: ${r.change}`, ...r.specChanges.map((c) => `  ${changeLine(c)}`)].join('\n')}\n`);
  if (diff.extendedDeployments.length === 0) return lead + [...regions, 'No ExtendedDeployments.\n'].join('\n');
  return (
    lead +
    [
      ...regions,
      ...diff.extendedDeployments.map((ed) => {
        const lines = [header(ed)];
        if (ed.change === 'changed' || ed.change === 'new') {
          for (const c of ed.specChanges ?? []) lines.push(`  ${changeLine(c)}`);
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
      }),
    ].join('\n')
  );
}
