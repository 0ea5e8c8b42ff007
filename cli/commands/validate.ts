import { Option, type Command } from 'commander';
import { ED_KIND, REGION_KIND } from '../../core/api/identity.js';
import { formatObject, formatPath, formatProblem } from '../../core/problems.js';
import { renderSet } from '../../core/render.js';
import { loadObjects, problemFiles } from '../load.js';
import { json, type OutputFormat } from '../output.js';
import { UserError } from '../user-error.js';

/** One problem in `edctl validate --output json`. */
export interface ValidationProblem {
  /** The file, when known. */
  readonly file?: string;
  /** The object, e.g. `ExtendedDeployment shop/web` (absent for a file that does not parse). */
  readonly object?: string;
  /** The field path, e.g. `spec.regions[0].replicas` (absent when the problem is the whole object or file). */
  readonly path?: string;
  readonly message: string;
}

/** What `edctl validate --output json` prints. The shape is a contract: only add fields. */
export interface ValidationReport {
  readonly valid: boolean;
  readonly objects: number;
  readonly deployRegions: number;
  readonly extendedDeployments: number;
  readonly problems: readonly ValidationProblem[];
}

/** `edctl validate`: every problem of every file, each with its object and field path. */
export function registerValidate(program: Command): void {
  const bin = program.name();
  program
    .command('validate')
    .description('Check specs without rendering them; exits 1 and lists every problem when any is invalid')
    .requiredOption('-f, --filename <paths...>', 'files or folders of YAML specs')
    .addOption(new Option('-o, --output <format>', 'output format').choices(['text', 'json']).default('text'))
    .addHelpText(
      'after',
      `
With --output json the report (valid, counts, problems with file, object, path and message) goes to stdout, also
when the specs are invalid; the exit code is 1 then.

Examples:
  ${bin} validate -f examples/
  ${bin} validate -f regions.yaml -f web.yaml
  ${bin} validate -f specs/ -o json | jq -r '.problems[] | "\\(.file): \\(.path): \\(.message)"'`,
    )
    .action((options: { filename: string[]; output: OutputFormat }) => {
      const report = validateFiles(options.filename, options.output === 'json');
      if (options.output === 'json') {
        process.stdout.write(json(report));
        if (!report.valid)
          throw new UserError([`${report.problems.length} ${report.problems.length === 1 ? 'problem' : 'problems'} (listed in the JSON on stdout)`]);
        return;
      }
      process.stdout.write(`${report.objects} objects valid (${report.deployRegions} DeployRegions, ${report.extendedDeployments} ExtendedDeployments)\n`);
    });
}

/**
 * Loads and renders the files. Invalid input throws a UserError listing every problem (text output), or, with `report`,
 * comes back as problems in the report.
 */
function validateFiles(paths: readonly string[], report: boolean): ValidationReport {
  let objects;
  try {
    objects = loadObjects(paths);
  } catch (error) {
    if (!report || !(error instanceof UserError)) throw error;
    return { valid: false, objects: 0, deployRegions: 0, extendedDeployments: 0, problems: error.lines.map((line) => fileAndMessage(line)) };
  }
  const result = renderSet(objects.map((o) => o.object));
  if (result.ok) {
    const { deployRegions, extendedDeployments } = result.value;
    return { valid: true, objects: objects.length, deployRegions: deployRegions.length, extendedDeployments: extendedDeployments.length, problems: [] };
  }
  const files = problemFiles(result.problems, objects);
  if (!report) throw new UserError(result.problems.map((p, i) => (files[i] ? `${files[i]}: ${formatProblem(p)}` : formatProblem(p))));
  const count = (kind: string) => objects.filter((o) => o.object['kind'] === kind).length;
  return {
    valid: false,
    objects: objects.length,
    deployRegions: count(REGION_KIND),
    extendedDeployments: count(ED_KIND),
    problems: result.problems.map((p, i) => {
      const path = formatPath(p.path);
      return { ...(files[i] && { file: files[i] }), object: formatObject(p.object), ...(path && { path }), message: p.message };
    }),
  };
}

/** A load error line (`file: line 3: message` or `file: message`) as a problem. */
function fileAndMessage(line: string): ValidationProblem {
  const match = /^(.*?\.(?:ya?ml|json)): (.*)$/.exec(line);
  return match ? { file: match[1] ?? '', message: match[2] ?? '' } : { message: line };
}
