import type { Command } from 'commander';
import { approvalValue } from '../../agent/controls.js';
import { extendedDeploymentStatus } from '../../core/api/extended-deployment.js';
import { ABORTED_ANNOTATION, APPROVED_ANNOTATION, PAUSED_ANNOTATION, RESUMED_AT_ANNOTATION } from '../../core/labels.js';
import { connect, patchAnnotations, readExtendedDeployment, type Kube, type KubeFlags } from '../kube.js';
import { UserError } from '../user-error.js';

/** Adds kubectl's connection flags to a command. */
function withKubeFlags(command: Command): Command {
  return command
    .argument('<name>', 'ExtendedDeployment name')
    .option('--kubeconfig <path>', 'kubeconfig file')
    .option('--context <name>', 'kubeconfig context')
    .option('-n, --namespace <namespace>', 'namespace (default: the context\'s)');
}

/** The rollout the agent reports as current: the revision and group that approve and abort refer to. */
async function currentRollout(kube: Kube, name: string): Promise<{ revision: string; group: number; phase: string | undefined }> {
  const ed = await readExtendedDeployment(kube, name);
  const parsed = extendedDeploymentStatus.safeParse(ed.status ?? {});
  const status = parsed.success ? parsed.data : {};
  if (!status.revision) throw new UserError([`ExtendedDeployment ${kube.namespace}/${name} has no rollout yet (no status.revision): is the agent running?`]);
  return { revision: status.revision, group: status.currentGroup ?? 0, phase: status.phase };
}

/** `edctl approve`, `pause`, `resume` and `abort`: annotations on the ExtendedDeployment that the agent reads. */
export function registerControls(program: Command): void {
  withKubeFlags(program.command('approve'))
    .description('Let the next group of the current rollout start (when it waits for confirmation)')
    .action(async (name: string, flags: KubeFlags) => {
      const kube = connect(flags);
      const { revision, group, phase } = await currentRollout(kube, name);
      const next = group + 1;
      await patchAnnotations(kube, name, { [APPROVED_ANNOTATION]: approvalValue(revision, next) });
      const note = phase === 'WaitingForConfirmation' ? '' : ` (it is ${phase ?? 'without a phase'} now; the approval applies when group ${group} is done)`;
      process.stdout.write(`ExtendedDeployment ${kube.namespace}/${name}: approved group ${next} of rollout ${revision}${note}\n`);
    });

  withKubeFlags(program.command('pause'))
    .description('Hold the rollout where it is until `edctl resume`')
    .action(async (name: string, flags: KubeFlags) => {
      const kube = connect(flags);
      await patchAnnotations(kube, name, { [PAUSED_ANNOTATION]: 'true' });
      process.stdout.write(`ExtendedDeployment ${kube.namespace}/${name}: paused\n`);
    });

  withKubeFlags(program.command('resume'))
    .description('Continue a paused or aborted rollout; restarts the current group\'s progress deadline')
    .action(async (name: string, flags: KubeFlags) => {
      const kube = connect(flags);
      await patchAnnotations(kube, name, { [PAUSED_ANNOTATION]: null, [ABORTED_ANNOTATION]: null, [RESUMED_AT_ANNOTATION]: new Date().toISOString() });
      process.stdout.write(`ExtendedDeployment ${kube.namespace}/${name}: resumed\n`);
    });

  withKubeFlags(program.command('abort'))
    .description('Stop the current rollout exactly where it is (until Git changes or `edctl resume`); nothing is rolled back')
    .action(async (name: string, flags: KubeFlags) => {
      const kube = connect(flags);
      const { revision } = await currentRollout(kube, name);
      await patchAnnotations(kube, name, { [ABORTED_ANNOTATION]: revision });
      process.stdout.write(`ExtendedDeployment ${kube.namespace}/${name}: rollout ${revision} aborted\n`);
    });
}
