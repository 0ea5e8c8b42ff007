import { renderedRevisionOf } from '../../core/rollout/growth.js';
import type { Command } from 'commander';
import { historyEntries, type ControllerRevisionObject, type HistoryEntry } from '../../core/history/entries.js';
import type { ExtendedDeploymentObject } from '../../core/kube/objects.js';
import { NAME_LABEL, ROLLOUT_REVISION_ANNOTATION } from '../../core/labels.js';
import { addKubeFlags, connect, readExtendedDeployment, userErrorOf, type Kube, type KubeFlags } from '../kube.js';
import { data, outputOption, table, type OutputFormat } from '../output.js';
import { UserError } from '../user-error.js';

/** `edctl history`: the revisions the agent recorded for an ExtendedDeployment, and the templates of one of them. */
export function registerHistory(program: Command): void {
  const bin = program.name();
  addKubeFlags(
    program
      .command('history')
      .description('List the revisions of an ExtendedDeployment the agent recorded (what to revert to in Git); --revision prints the templates of one')
      .argument('<name>', 'ExtendedDeployment name'),
  )
    .addOption(outputOption())
    .option('--revision <revision>', 'print what each region ran in one revision: its number or its rollout revision')
    .addHelpText(
      'after',
      `
The agent records a revision (a ControllerRevision owned by the ExtendedDeployment) each time a rollout revision
becomes current, and keeps the current one and spec.historyLimit older ones. The list is oldest first; the current
revision is marked. --revision prints, per region, the region's revision and the pod template its workload ran, as
YAML by default: the source to revert to in Git. A rollback is a Git change; nothing here changes the cluster.

Examples:
  ${bin} history web -n shop
  ${bin} history web -n shop --revision 3
  ${bin} history web -n shop --revision 1f0c3a9e2b -o yaml`,
    )
    .action(async (name: string, flags: KubeFlags & { output: OutputFormat; revision?: string }) => {
      const kube = await connect(flags);
      const ed = await readExtendedDeployment(kube, name);
      const entries = historyEntries({ name, uid: ed.metadata?.uid }, await listRevisions(kube, name));
      if (flags.revision === undefined) {
        process.stdout.write(flags.output === 'text' ? historyText(entries, ed) : data(historyData(entries, ed), flags.output));
        return;
      }
      const entry = findRevision(entries, flags.revision);
      if (!entry)
        throw new UserError([`ExtendedDeployment ${kube.namespace}/${name} has no recorded revision ${flags.revision} (${bin} history ${name} lists them)`]);
      process.stdout.write(flags.output === 'json' ? data(entry.regions, 'json') : revisionYaml(entry, flags.output === 'text'));
    });
}

async function listRevisions(kube: Kube, name: string): Promise<ControllerRevisionObject[]> {
  // Imported with the cluster connection (see connect), not when edctl starts.
  const { AppsV1Api } = await import('@kubernetes/client-node');
  try {
    const list = await kube.kc.makeApiClient(AppsV1Api).listNamespacedControllerRevision({ namespace: kube.namespace, labelSelector: `${NAME_LABEL}=${name}` });
    return list.items;
  } catch (error) {
    throw userErrorOf(kube, error, `ControllerRevisions of ExtendedDeployment ${kube.namespace}/${name}`);
  }
}

/** The rollout revision the ExtendedDeployment runs: the one its status names (without a session suffix), else the render's. */
export function currentRollout(ed: ExtendedDeploymentObject): string | undefined {
  const revision = (ed.status as { revision?: unknown } | undefined)?.revision;
  return typeof revision === 'string' ? renderedRevisionOf(revision) : ed.metadata?.annotations?.[ROLLOUT_REVISION_ANNOTATION];
}

/** One revision in a list (-o json, -o yaml): everything the table shows, without the templates. */
export interface HistoryItem {
  readonly revision: number;
  readonly rolloutRevision: string;
  readonly current: boolean;
  readonly currentSince?: string;
  readonly changeCause?: string;
  readonly regions: readonly { readonly region: string; readonly revision: string }[];
}

/** The list as -o json and -o yaml print it, oldest first. */
export function historyData(entries: readonly HistoryEntry[], ed: ExtendedDeploymentObject): HistoryItem[] {
  const current = currentRollout(ed);
  return entries.map((e) => ({
    revision: e.revision,
    rolloutRevision: e.rolloutRevision,
    current: e.rolloutRevision === current,
    ...(e.currentSince !== undefined && { currentSince: timeText(e.currentSince) }),
    ...(e.changeCause !== undefined && { changeCause: e.changeCause }),
    regions: e.regions.map((r) => ({ region: r.region, revision: r.revision })),
  }));
}

/** The list as a table, oldest first, the current revision marked; a line saying so when nothing is recorded. */
export function historyText(entries: readonly HistoryEntry[], ed: ExtendedDeploymentObject): string {
  const name = `${ed.metadata?.namespace ?? ''}/${ed.metadata?.name ?? ''}`;
  if (entries.length === 0) return `ExtendedDeployment ${name}: no revision recorded yet (the agent records one once a rollout revision is synced)\n`;
  const rows = historyData(entries, ed).map((i) => [
    `${i.revision}${i.current ? ' (current)' : ''}`,
    i.rolloutRevision,
    i.currentSince ?? '',
    i.regions.map((r) => r.region).join(','),
    i.changeCause ?? '',
  ]);
  return `${table(['REVISION', 'ROLLOUT', 'CREATED', 'REGIONS', 'CHANGE-CAUSE'], rows)}\n`;
}

/** The entry `revision` names: its number, or its rollout revision. */
export function findRevision(entries: readonly HistoryEntry[], revision: string): HistoryEntry | undefined {
  return entries.find((e) => (/^\d+$/.test(revision) && e.revision === Number(revision)) || e.rolloutRevision === renderedRevisionOf(revision));
}

/**
 * What each region ran in one revision, as YAML: a list of `{region, revision, template}`. The ExtendedDeployment's
 * own template is not derivable from the regional ones (overrides and placement are merged into them), so each
 * region's is printed whole. With `header`, a comment line says which revision it is.
 */
export function revisionYaml(entry: HistoryEntry, header: boolean): string {
  const text = data(entry.regions, 'yaml');
  if (!header) return text;
  const since = entry.currentSince !== undefined ? `, current since ${timeText(entry.currentSince)}` : '';
  return `# revision ${entry.revision} (rollout ${entry.rolloutRevision}${since})\n${text}`;
}

/** RFC 3339 to the second, as kubectl prints times. */
function timeText(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}
