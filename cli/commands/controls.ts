import type { Command } from 'commander';
import { approvalValue, resumeAnnotations } from '../../core/rollout/controls.js';
import { abortTarget, approveTarget, fleetApprovalTarget, type ControlTarget } from '../../core/rollout/control-targets.js';
import type { ExtendedDeploymentObject } from '../../core/kube/objects.js';
import { ABORTED_ANNOTATION, APPROVED_ANNOTATION, APPROVED_RELEASE_ANNOTATION, PAUSED_ANNOTATION } from '../../core/labels.js';
import { addKubeFlags, connect, patchAnnotations, readExtendedDeployment, type Kube, type KubeFlags } from '../kube.js';
import { UserError } from '../user-error.js';

/** The command with its ExtendedDeployment argument, kubectl's connection flags and examples. */
function control(program: Command, name: string, examples: readonly string[]): Command {
  const bin = program.name();
  return addKubeFlags(program.command(name).argument('<name>', 'ExtendedDeployment name')).addHelpText(
    'after',
    `\nExamples:\n${examples.map((e) => `  ${bin} ${name} ${e}`).join('\n')}`,
  );
}

/** The group or rollout approve or abort acts on; nothing to act on is a one-line error (exit 1). */
async function targetOf(kube: Kube, name: string, choose: (ed: ExtendedDeploymentObject) => ControlTarget): Promise<ControlTarget & { ok: true }> {
  const target = choose(await readExtendedDeployment(kube, name));
  if (!target.ok) throw new UserError([`ExtendedDeployment ${kube.namespace}/${name}: ${target.reason}`]);
  return target;
}

/** `edctl approve`, `pause`, `resume` and `abort`: annotations on the ExtendedDeployment that the agent reads. */
export function registerControls(program: Command): void {
  control(program, 'approve', ['web -n shop', 'web -n shop --context prod --kubeconfig ~/.kube/prod'])
    .description(
      "Let the next group of the current rollout start (when it waits for confirmation), or a fleet member's wave (when its gate waits for an approval)",
    )
    .action(async (name: string, flags: KubeFlags) => {
      const kube = await connect(flags);
      const fleet = fleetApprovalTarget(await readExtendedDeployment(kube, name));
      if (fleet !== undefined) {
        await patchAnnotations(kube, name, { [APPROVED_RELEASE_ANNOTATION]: fleet.release });
        process.stdout.write(`ExtendedDeployment ${kube.namespace}/${name}: approved release ${fleet.release} for wave ${fleet.wave}\n`);
        return;
      }
      const { revision, rollout, group, phase } = await targetOf(kube, name, approveTarget);
      await patchAnnotations(kube, name, { [APPROVED_ANNOTATION]: approvalValue(rollout, group) });
      const note = phase === 'WaitingForConfirmation' ? '' : ` (it is ${phase ?? 'without a phase'} now; the approval applies when group ${group - 1} is done)`;
      process.stdout.write(`ExtendedDeployment ${kube.namespace}/${name}: approved group ${group} of rollout ${revision}${note}\n`);
    });

  control(program, 'pause', ['web -n shop'])
    .description('Hold the rollout where it is until `resume`')
    .action(async (name: string, flags: KubeFlags) => {
      const kube = await connect(flags);
      await patchAnnotations(kube, name, { [PAUSED_ANNOTATION]: 'true' });
      process.stdout.write(`ExtendedDeployment ${kube.namespace}/${name}: paused\n`);
    });

  control(program, 'resume', ['web -n shop'])
    .description("Continue a paused or aborted rollout; restarts the current group's progress deadline")
    .action(async (name: string, flags: KubeFlags) => {
      const kube = await connect(flags);
      const ed = await readExtendedDeployment(kube, name);
      await patchAnnotations(kube, name, resumeAnnotations(ed.metadata?.annotations, Date.now()));
      process.stdout.write(`ExtendedDeployment ${kube.namespace}/${name}: resumed\n`);
    });

  control(program, 'abort', ['web -n shop', 'web -n shop'])
    .description('Stop the current rollout exactly where it is (until Git changes or `resume`); nothing is rolled back')
    .action(async (name: string, flags: KubeFlags) => {
      const kube = await connect(flags);
      const { revision, rollout } = await targetOf(kube, name, abortTarget);
      await patchAnnotations(kube, name, { [ABORTED_ANNOTATION]: rollout });
      process.stdout.write(`ExtendedDeployment ${kube.namespace}/${name}: rollout ${revision} aborted\n`);
    });
}
