import { basename } from 'node:path';
import { Command } from 'commander';
import { packageVersion } from './version.js';

/** The name edctl goes by: `edctl`, or `kubectl ed` when kubectl runs it as the plugin `kubectl-ed`. */
export type ProgramName = 'edctl' | 'kubectl ed';

/** The program name from the path it was started as (`process.argv[1]`): a `kubectl-ed` file or link is the kubectl plugin. */
export function programNameOf(scriptPath: string | undefined): ProgramName {
  return /^kubectl-ed(\.[cm]?js)?$/.test(basename(scriptPath ?? '')) ? 'kubectl ed' : 'edctl';
}

/** A module of commands: the names it registers, and its registration, loaded when asked for. */
interface Commands {
  readonly names: readonly string[];
  readonly load: () => Promise<(program: Command) => void>;
}

/**
 * Every command, in the order help lists them. Each module is imported only when its command runs (or help lists them
 * all): together they load most of the package, which took more of a short command's time than its work did (`edctl
 * render` of a few files loaded the cluster client, the planner and the simulator it never used).
 */
const COMMANDS: readonly Commands[] = [
  { names: ['render'], load: async () => (await import('./commands/render.js')).registerRender },
  { names: ['validate'], load: async () => (await import('./commands/validate.js')).registerValidate },
  { names: ['plan'], load: async () => (await import('./commands/plan.js')).registerPlan },
  { names: ['diff'], load: async () => (await import('./commands/diff.js')).registerDiff },
  { names: ['crds'], load: async () => (await import('./commands/crds.js')).registerCrds },
  { names: ['docs'], load: async () => (await import('./commands/docs.js')).registerDocs },
  { names: ['status'], load: async () => (await import('./commands/status.js')).registerStatus },
  { names: ['history'], load: async () => (await import('./commands/history.js')).registerHistory },
  { names: ['approve', 'pause', 'resume', 'abort'], load: async () => (await import('./commands/controls.js')).registerControls },
  { names: ['agent'], load: async () => (await import('./commands/agent.js')).registerAgent },
  { names: ['fleet'], load: async () => (await import('./commands/fleet.js')).registerFleet },
];

/**
 * Builds the command tree. Errors are thrown, not exited on, so that run() decides the exit code. Help and examples
 * name the program as it was invoked (`edctl` or `kubectl ed`); commands read it back with `program.name()`. Given
 * the arguments, a command they name is the only one built (see COMMANDS); anything else (`--help`, a typo that wants
 * a suggestion) builds them all.
 */
export async function buildProgram(name: ProgramName = 'edctl', argv: readonly string[] = []): Promise<Command> {
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
  const named = COMMANDS.filter((c) => c.names.includes(argv[0] ?? ''));
  for (const register of await Promise.all((named.length > 0 ? named : COMMANDS).map((c) => c.load()))) register(program);
  // A usage error is one line and where to read more, as kubectl's: the full help only when asked for.
  program.showHelpAfterError(`Run '${name} --help' for usage.`);
  for (const command of program.commands) command.showHelpAfterError(`Run '${name} ${command.name()} --help' for usage.`);
  return program;
}
