/**
 * An error caused by the user's input or environment (bad file, invalid spec, no cluster). The CLI prints its lines
 * and exits with `exitCode`, never a stack trace. Without lines it only sets the exit code: an outcome, not an error
 * (`diff --exit-code` when something differs).
 */
export class UserError extends Error {
  constructor(
    readonly lines: readonly string[],
    readonly exitCode = 1,
  ) {
    super(lines.join('\n'));
    this.name = 'UserError';
  }
}
