import { CommanderError } from 'commander';
import { RenderError, renderErrorReport } from '../constructs/render-error.js';
import { buildProgram, type ProgramName } from './program.js';
import { UserError } from './user-error.js';

/** Options of {@link run}. */
export interface RunOptions {
  /** How the program is named in help and examples. Default: `edctl`. */
  readonly name?: ProgramName;
}

/**
 * Runs edctl with `argv` (without node and script) and returns the exit code. User errors print their lines to
 * stderr, never a stack trace; set EDCTL_DEBUG=1 to see one for an unexpected failure.
 */
export async function run(argv: readonly string[], options: RunOptions = {}): Promise<number> {
  const program = await buildProgram(options.name, argv);
  try {
    await program.parseAsync([...argv], { from: 'user' });
    return 0;
  } catch (error) {
    if (error instanceof CommanderError) {
      return error.code === 'commander.helpDisplayed' || error.code === 'commander.help' || error.code === 'commander.version' ? 0 : 2;
    }
    if (error instanceof UserError) {
      if (error.lines.length > 0) process.stderr.write(`${error.lines.map((l) => `error: ${l}`).join('\n')}\n`);
      return error.exitCode;
    }
    if (error instanceof RenderError) {
      process.stderr.write(renderErrorReport(error));
      return 1;
    }
    const message = error instanceof Error ? error.message : String(error);
    process.stderr.write(`error: ${message}\n`);
    if (process.env['EDCTL_DEBUG'] && error instanceof Error) process.stderr.write(`${error.stack ?? ''}\n`);
    return 1;
  }
}
