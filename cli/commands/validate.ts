import type { Command } from 'commander';
import { CLUSTER_KIND, ED_KIND, REGION_KIND } from '../../core/api/identity.js';
import { renderFleet } from '../../core/fleet/render.js';
import { formatObject, formatPath } from '../../core/problems.js';
import { formatProblemsWithFiles, loadObjects, problemPlaces, STDIN_NAME } from '../load.js';
import { data, outputOption, type OutputFormat } from '../output.js';
import { UserError } from '../user-error.js';

/** One problem in `edctl validate --output json`. */
export interface ValidationProblem {
  /** The file, when known (`<stdin>` for `-f -`); for an object defined more than once, the first. */
  readonly file?: string;
  /** The object's place in a List of that file, e.g. `items[2]` (absent for an object that is a document of its own). */
  readonly item?: string;
  /** Every place of an object defined more than once, as `file` or `file: items[2]`. */
  readonly locations?: readonly string[];
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
  /** Cluster objects (a fleet), when there are any. */
  readonly clusters?: number;
  readonly problems: readonly ValidationProblem[];
}

/** `edctl validate`: every problem of every file, each with its object and field path. */
export function registerValidate(program: Command): void {
  const bin = program.name();
  program
    .command('validate')
    .description('Check specs without rendering them; exits 1 and lists every problem when any is invalid')
    .requiredOption('-f, --filename <paths...>', 'files or folders of YAML specs (- for standard input)')
    .addOption(outputOption())
    .addHelpText(
      'after',
      `
With --output json (or yaml) the report (valid, counts, problems with file, object, path and message) goes to stdout, also
when the specs are invalid; the exit code is 1 then.

Examples:
  ${bin} validate -f examples/upstream-sample examples/compat-mode
  ${bin} validate -f regions.yaml -f web.yaml
  kustomize build overlays/prod | ${bin} validate -f -
  ${bin} validate -f specs/ -o json | jq -r '.problems[] | "\\(.file): \\(.path): \\(.message)"'`,
    )
    .action((options: { filename: string[]; output: OutputFormat }) => {
      const report = validateFiles(options.filename, options.output !== 'text');
      if (options.output !== 'text') {
        process.stdout.write(data(report, options.output));
        const listed = `listed in the ${options.output.toUpperCase()} on stdout`;
        if (!report.valid) throw new UserError([`${report.problems.length} ${report.problems.length === 1 ? 'problem' : 'problems'} (${listed})`]);
        return;
      }
      const clusters = report.clusters !== undefined ? `, ${report.clusters} Clusters` : '';
      process.stdout.write(
        `${report.objects} objects valid (${report.deployRegions} DeployRegions, ${report.extendedDeployments} ExtendedDeployments${clusters})\n`,
      );
    });
}

/**
 * Loads and renders the files. Invalid input throws a UserError listing every problem (text output), or, with `report`,
 * comes back as problems in the report.
 */
function validateFiles(paths: readonly string[], report: boolean): ValidationReport {
  let objects;
  try {
    objects = loadObjects(paths, 'validate');
  } catch (error) {
    if (!report || !(error instanceof UserError)) throw error;
    return { valid: false, objects: 0, deployRegions: 0, extendedDeployments: 0, problems: error.lines.map((line) => fileAndMessage(line)) };
  }
  const result = renderFleet(objects.map((o) => o.object));
  const count = (kind: string) => objects.filter((o) => o.object['kind'] === kind).length;
  if (result.ok) {
    const fleet = result.value;
    if (fleet.layout === 'flat') {
      const { deployRegions, extendedDeployments } = fleet.rendered;
      return { valid: true, objects: objects.length, deployRegions: deployRegions.length, extendedDeployments: extendedDeployments.length, problems: [] };
    }
    // Each cluster renders its own cut: the objects are counted as written.
    const clusters = fleet.clusters.length;
    return { valid: true, objects: objects.length, deployRegions: count(REGION_KIND), extendedDeployments: count(ED_KIND), clusters, problems: [] };
  }
  if (!report) throw new UserError(formatProblemsWithFiles(result.problems, objects));
  const places = problemPlaces(result.problems, objects);
  return {
    valid: false,
    objects: objects.length,
    deployRegions: count(REGION_KIND),
    extendedDeployments: count(ED_KIND),
    ...(count(CLUSTER_KIND) > 0 && { clusters: count(CLUSTER_KIND) }),
    problems: result.problems.map((p, i) => {
      const path = formatPath(p.path);
      const first = objects[p.inputs?.[0] ?? -1];
      const item = first ? formatPath(first.item) : '';
      const locations = places[i] ?? [];
      return {
        ...(first && { file: first.file }),
        ...(item && { item }),
        ...(locations.length > 1 && { locations }),
        object: formatObject(p.object),
        ...(path && { path }),
        message: p.message,
      };
    }),
  };
}

/** A load error line (`file: line 3: message` or `file: message`) as a problem. */
function fileAndMessage(line: string): ValidationProblem {
  const match = new RegExp(`^(.*?(?:\\.(?:ya?ml|json)|${STDIN_NAME})): (.*)$`).exec(line);
  return match ? { file: match[1] ?? '', message: match[2] ?? '' } : { message: line };
}
