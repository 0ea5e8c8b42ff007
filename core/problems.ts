/** A path into an object, as Kubernetes prints it: `spec.regions[2].replicas`. */
export type FieldPath = readonly (string | number)[];

/** Identifies the object a problem belongs to. */
export interface ObjectRef {
  readonly kind: string;
  readonly name?: string;
  readonly namespace?: string;
}

/** One thing wrong with the user's input. Core reports these as values; it never throws them. */
export interface Problem {
  readonly object: ObjectRef;
  readonly path: FieldPath;
  readonly message: string;
  /**
   * Where the object is among the objects given to renderSet (from 0), so that a caller can name the file each came
   * from: several places for an object defined more than once. Absent on problems found outside renderSet.
   */
  readonly inputs?: readonly number[];
}

/** Either a value or every problem found on the way to it. */
export type Result<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly problems: readonly Problem[] };

/** Wraps a value as a successful result. */
export function ok<T>(value: T): Result<T> {
  return { ok: true, value };
}

/** Wraps problems as a failed result. */
export function failed<T>(problems: readonly Problem[]): Result<T> {
  return { ok: false, problems };
}

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Formats a field path: `spec.regions[2].replicas`; keys that are not identifiers are quoted, `labels["app.kubernetes.io/name"]`. */
export function formatPath(path: FieldPath): string {
  let out = '';
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`;
    else if (IDENTIFIER.test(part)) out += out === '' ? part : `.${part}`;
    else out += `[${JSON.stringify(part)}]`;
  }
  return out;
}

/** Formats an object reference: `ExtendedDeployment shop/web`, `DeployRegion amd`. */
export function formatObject(ref: ObjectRef): string {
  const name = ref.name ?? '(unnamed)';
  return ref.namespace ? `${ref.kind} ${ref.namespace}/${name}` : `${ref.kind} ${name}`;
}

/** Formats a problem as one line: `ExtendedDeployment shop/web: spec.regions[2].replicas: "150%" exceeds 100%`. */
export function formatProblem(problem: Problem): string {
  const path = formatPath(problem.path);
  return path === '' ? `${formatObject(problem.object)}: ${problem.message}` : `${formatObject(problem.object)}: ${path}: ${problem.message}`;
}

/** Collects problems for one object while a check runs. */
export class ProblemList {
  readonly items: Problem[] = [];
  constructor(readonly object: ObjectRef) {}

  /** Records a problem at `path`. */
  add(path: FieldPath, message: string): void {
    this.items.push({ object: this.object, path, message });
  }

  /** True when nothing was recorded. */
  get empty(): boolean {
    return this.items.length === 0;
  }
}
