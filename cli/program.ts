import { Command } from 'commander';
import { registerAgent } from './commands/agent.js';
import { registerControls } from './commands/controls.js';
import { registerCrds } from './commands/crds.js';
import { registerDocs } from './commands/docs.js';
import { registerPlan } from './commands/plan.js';
import { registerRender } from './commands/render.js';
import { registerStatus } from './commands/status.js';
import { registerValidate } from './commands/validate.js';

/** Builds the `edctl` command tree. Errors are thrown, not exited on, so that run() decides the exit code. */
export function buildProgram(): Command {
  const program = new Command('edctl')
    .description('Partitioned, gated rollouts for Kubernetes: render, validate and plan ExtendedDeployments; run and steer the agent')
    .showHelpAfterError()
    .exitOverride()
    .configureOutput({ writeErr: (text) => process.stderr.write(text), writeOut: (text) => process.stdout.write(text) })
    .addHelpText(
      'after',
      `
Exit codes:
  0  success
  1  invalid input (a spec, a file) or a failed check
  2  wrong usage (unknown command or option)`,
    );
  registerRender(program);
  registerValidate(program);
  registerPlan(program);
  registerCrds(program);
  registerDocs(program);
  registerStatus(program);
  registerControls(program);
  registerAgent(program);
  return program;
}
