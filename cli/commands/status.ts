import { Option, type Command } from 'commander';
import { extendedDeploymentStatus, type ExtendedDeploymentStatus } from '../../core/api/extended-deployment.js';
import { ABORTED_ANNOTATION, APPROVED_ANNOTATION, PAUSED_ANNOTATION } from '../../core/labels.js';
import type { ExtendedDeploymentObject } from '../../agent/objects.js';
import { connect, readExtendedDeployment, type KubeFlags } from '../kube.js';
import { json, table, type OutputFormat } from '../output.js';

/** `edctl status`: where a rollout stands, as the agent last wrote it. */
export function registerStatus(program: Command): void {
  program
    .command('status')
    .description('Show the rollout status of an ExtendedDeployment (phase, groups, regions, conditions)')
    .argument('<name>', 'ExtendedDeployment name')
    .option('--kubeconfig <path>', 'kubeconfig file')
    .option('--context <name>', 'kubeconfig context')
    .option('-n, --namespace <namespace>', 'namespace (default: the context\'s)')
    .addOption(new Option('-o, --output <format>', 'output format').choices(['text', 'json']).default('text'))
    .option('-w, --watch', 'keep printing the status whenever it changes (Ctrl-C to stop)')
    .addHelpText(
      'after',
      `
Examples:
  edctl status web -n shop
  edctl status web -n shop -o json | jq .phase
  edctl status web -n shop --watch`,
    )
    .action(async (name: string, flags: KubeFlags & { output: OutputFormat; watch?: boolean }) => {
      const kube = connect(flags);
      const show = (ed: ExtendedDeploymentObject) => (flags.output === 'json' ? json(ed.status ?? {}) : statusText(ed));
      let last = show(await readExtendedDeployment(kube, name));
      process.stdout.write(last);
      if (!flags.watch) return;
      // Polling keeps --watch simple and robust across API server restarts; a status changes at most every few seconds.
      let stopped = false;
      const stop = () => (stopped = true);
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
      while (!stopped) {
        await new Promise((resolve) => setTimeout(resolve, 2_000));
        if (stopped) break;
        const next = show(await readExtendedDeployment(kube, name));
        if (next !== last) process.stdout.write(flags.output === 'json' ? next : `\n${next}`);
        last = next;
      }
    });
}

/** The status for people: phase and group, controls, a table per region, and the conditions. */
export function statusText(ed: ExtendedDeploymentObject): string {
  const parsed = extendedDeploymentStatus.safeParse(ed.status ?? {});
  const status: ExtendedDeploymentStatus = parsed.success ? parsed.data : {};
  const name = `${ed.metadata?.namespace ? `${ed.metadata.namespace}/` : ''}${ed.metadata?.name ?? ''}`;
  const lines: string[] = [`ExtendedDeployment ${name}`];
  if (!status.phase && !status.conditions?.length) {
    lines.push('No status yet: is the agent running?');
    return `${lines.join('\n')}\n`;
  }
  const group = status.totalGroups ? `, group ${status.currentGroup ?? 0}/${status.totalGroups}` : '';
  lines.push(`Phase:     ${status.phase ?? '(none)'}${group}`);
  const invalid = status.conditions?.find((c) => c.type === 'Valid' && c.status === 'False');
  if (invalid) lines.push(`Invalid:   ${invalid.message ?? ''}`);
  if (status.revision) lines.push(`Revision:  ${status.revision}`);
  const progressing = status.conditions?.find((c) => c.type === 'Progressing');
  if (progressing?.message) lines.push(`Message:   ${progressing.message}`);
  const controls = controlsText(ed.metadata?.annotations ?? {}, status.revision);
  if (controls) lines.push(`Controls:  ${controls}`);
  if (ed.metadata?.generation !== undefined && status.observedGeneration !== undefined && status.observedGeneration < ed.metadata.generation) {
    lines.push(`Note:      the agent has not yet seen generation ${ed.metadata.generation} (status is for ${status.observedGeneration})`);
  }
  const regions = status.regions ?? [];
  if (regions.length > 0) {
    lines.push('', table(['REGION', 'DESIRED', 'CURRENT', 'UPDATED', 'READY', 'AVAILABLE', 'REVISION'], regions.map((r) => [r.name, r.desired ?? 0, r.current ?? 0, r.updated ?? 0, r.ready ?? 0, r.available ?? 0, r.revision ?? ''])));
  }
  const conditions = status.conditions ?? [];
  if (conditions.length > 0) {
    lines.push('', table(['CONDITION', 'STATUS', 'REASON', 'MESSAGE'], conditions.map((c) => [c.type, c.status, c.reason ?? '', c.message ?? ''])));
  }
  return `${lines.join('\n')}\n`;
}

function controlsText(annotations: Readonly<Record<string, string>>, revision: string | undefined): string {
  const parts: string[] = [];
  if (annotations[PAUSED_ANNOTATION] === 'true') parts.push('paused');
  if (annotations[ABORTED_ANNOTATION] !== undefined && annotations[ABORTED_ANNOTATION] === revision) parts.push('aborted');
  const approved = annotations[APPROVED_ANNOTATION];
  if (approved !== undefined && revision !== undefined && approved.startsWith(`${revision}/`)) parts.push(`approved through group ${approved.slice(revision.length + 1)}`);
  return parts.join(', ');
}
