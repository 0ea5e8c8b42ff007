import type { FieldPath } from './problems.js';

/**
 * The deepest nesting of objects and lists an object may have (the object itself is level 1, so
 * `spec.template.spec.containers[0]` is level 6). A real ExtendedDeployment nests about 20 levels: the deepest pod
 * template fields (an ephemeral volume's claim selector, a node affinity's values) are about 12 levels into the
 * template, and overriders' values sit 5 levels into the spec. The API server accepts about 10,000 levels in a custom
 * resource (`x-kubernetes-preserve-unknown-fields`), but the recursive walks of a render (zod's parse, cloning,
 * hashing the template for its revision, JSON patching) overflow Node's default stack between 1,500 and 2,000 levels,
 * and the agent would then throw on every retry instead of reporting the object. 100 is five times any real object
 * and fifteen times below the first overflow, which leaves room for the stack the caller already uses.
 */
export const MAX_NESTING = 100;

/** Where a value first nests deeper than the limit. */
export interface NestingViolation {
  /** The path, from the checked value, of the first object or list past the limit (`limit` elements long). */
  readonly path: FieldPath;
  readonly limit: number;
}

/** One object or list met by the walk, with the way back to the root (paths are built only for a violation). */
interface Visit {
  readonly value: object;
  readonly level: number;
  readonly key: string | number | undefined;
  readonly parent: Visit | undefined;
}

/**
 * The first place where `value` nests objects and lists deeper than `limit` levels, or undefined. The walk is
 * iterative and never looks past the limit, so it is safe on any input, however deep (a cycle counts as too deep).
 * Call it before anything walks an input recursively; a value it accepts is safe for every walk of the render.
 */
export function nestingViolation(value: unknown, limit: number = MAX_NESTING): NestingViolation | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  const stack: Visit[] = [{ value, level: 1, key: undefined, parent: undefined }];
  for (let visit = stack.pop(); visit !== undefined; visit = stack.pop()) {
    if (visit.level > limit) return { path: pathOf(visit), limit };
    const entries: [string | number, unknown][] = Array.isArray(visit.value) ? visit.value.map((item: unknown, i) => [i, item]) : Object.entries(visit.value);
    // Pushed in reverse, so that the walk goes in document order and reports the first violation as written.
    for (let i = entries.length - 1; i >= 0; i--) {
      const [key, child] = entries[i]!;
      if (child !== null && typeof child === 'object') stack.push({ value: child, level: visit.level + 1, key, parent: visit });
    }
  }
  return undefined;
}

/** The message of a violation, the same wherever it is reported. */
export function nestingMessage(violation: NestingViolation): string {
  return `nesting deeper than ${violation.limit} levels`;
}

function pathOf(visit: Visit): FieldPath {
  const path: (string | number)[] = [];
  for (let at: Visit | undefined = visit; at?.key !== undefined; at = at.parent) path.push(at.key);
  return path.reverse();
}
