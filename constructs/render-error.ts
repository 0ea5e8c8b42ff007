import { formatProblem, type Problem } from '../core/problems.js';

/** Thrown at synth time when a spec is invalid: carries every problem, one line each. */
export class RenderError extends Error {
  constructor(readonly problems: readonly Problem[]) {
    super(`invalid specification:\n${problems.map((p) => `  ${formatProblem(p)}`).join('\n')}`);
    this.name = 'RenderError';
  }
}
