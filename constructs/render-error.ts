import { writeSync } from 'node:fs';
import { formatProblem, type Problem } from '../core/problems.js';

/** Thrown at synth time when a spec is invalid: carries every problem, one line each. */
export class RenderError extends Error {
  /** Every problem, with its object and field path. */
  declare readonly problems: readonly Problem[];

  constructor(problems: readonly Problem[]) {
    super(`invalid specification:\n${problems.map((p) => `  ${formatProblem(p)}`).join('\n')}`);
    this.name = 'RenderError';
    // Not enumerable: Node.js prints an uncaught error's enumerable fields after its stack, a dump of every problem.
    Object.defineProperty(this, 'problems', { value: problems, enumerable: false });
  }
}

/** What a process that dies of a RenderError prints: one `error:` line per problem, as edctl prints them. */
export function renderErrorReport(error: RenderError): string {
  return error.problems.map((p) => `error: ${formatProblem(p)}\n`).join('');
}

/**
 * A cdk8s app (`cdk8s synth`, `npm run synth`) that builds an invalid construct dies of the RenderError thrown in its
 * constructor, and Node.js would print the line of this library that threw it and a stack trace into it, neither
 * about the user's code. When nothing of the app's own handles uncaught exceptions, the process ends here instead,
 * with the problems alone and exit code 1, as it would have.
 */
process.on('uncaughtExceptionMonitor', (error) => {
  if (!(error instanceof RenderError) || process.listenerCount('uncaughtException') > 0) return;
  writeSync(2, renderErrorReport(error));
  process.exit(1);
});
