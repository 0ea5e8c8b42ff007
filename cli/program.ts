import { basename } from 'node:path';
import { Command } from 'commander';
import { registerAgent } from './commands/agent.js';
import { registerControls } from './commands/controls.js';
import { registerCrds } from './commands/crds.js';
import { registerDiff } from './commands/diff.js';
import { registerDocs } from './commands/docs.js';
import { registerFleet } from './commands/fleet.js';
import { registerHistory } from './commands/history.js';
import { registerPlan } from './commands/plan.js';
import { registerRender } from './commands/render.js';
import { registerStatus } from './commands/status.js';
import { registerValidate } from './commands/validate.js';
import { packageVersion } from './version.js';

/** The name edctl goes by: `edctl`, or `kubectl ed` when kubectl runs it as the plugin `kubectl-ed`. */
export type ProgramName = 'edctl' | 'kubectl ed';

/** The program name from the path it was started as (`process.argv[1]`): a `kubectl-ed` file or link is the kubectl plugin. */
export function programNameOf(scriptPath: string | undefined): ProgramName {
  return /^kubectl-ed(\.[cm]?js)?$/.test(basename(scriptPath ?? '')) ? 'kubectl ed' : 'edctl';
}

/**
 * Builds the command tree. Errors are thrown, not exited on, so that run() decides the exit code. Help and examples
 * name the program as it was invoked (`edctl` or `kubectl ed`); commands read it back with `program.name()`.
 */
export function buildProgram(name: ProgramName = 'edctl'): Command {
  const program = new Command(name)
    .description('Partitioned, gated rollouts for Kubernetes: render, validate, plan and diff ExtendedDeployments; run and steer the agent')
    .version(packageVersion(), '--version', 'print the version')
    .exitOverride()
    .configureOutput({
      writeErr: (text) => process.stderr.write(text),
      writeOut: (text) => process.stdout.write(text),
      // Commander's "did you mean" goes on a line of its own: keep a usage error to one line.
      outputError: (text, write) => write(text.replace('\n(Did you mean', ' (did you mean')),
    })
    .addHelpText(
      'after',
      `
Exit codes:
  0  success
  1  invalid input (a spec, a file), a failed check, an object that was not found, or no cluster reachable;
     differences, for diff --exit-code
  2  wrong usage (unknown command or option)

Cluster commands (status, history, approve, pause, resume, abort, agent) take kubectl's --kubeconfig, --context and
-n/--namespace. Read commands (validate, plan, diff, status, history) take -o/--output json or yaml.${
        name === 'edctl' ? '\nInstalled on the PATH, edctl also runs as the kubectl plugin `kubectl ed`.' : ''
      }`,
    );
  registerRender(program);
  registerValidate(program);
  registerPlan(program);
  registerDiff(program);
  registerCrds(program);
  registerDocs(program);
  registerStatus(program);
  registerHistory(program);
  registerControls(program);
  registerAgent(program);
  registerFleet(program);
  // A usage error is one line and where to read more, as kubectl's: the full help only when asked for.
  program.showHelpAfterError(`Run '${name} --help' for usage.`);
  for (const command of program.commands) command.showHelpAfterError(`Run '${name} ${command.name()} --help' for usage.`);
  return program;
}
