import type * as z from 'zod';
import { deployRegion, type DeployRegion } from './api/deploy-region.js';
import { extendedDeployment, type ExtendedDeployment } from './api/extended-deployment.js';
import { nestingMessage, nestingViolation } from './nesting.js';
import { failed, ok, type FieldPath, type ObjectRef, type Problem, type Result } from './problems.js';

/** The reference of a raw object, read as far as it can be (for messages about objects that failed to parse). */
export function refOf(raw: unknown): ObjectRef {
  const object = (raw !== null && typeof raw === 'object' ? raw : {}) as { kind?: unknown; metadata?: { name?: unknown; namespace?: unknown } | null };
  const kind = typeof object.kind === 'string' ? object.kind : 'object';
  const name = typeof object.metadata?.name === 'string' ? object.metadata.name : undefined;
  const namespace = typeof object.metadata?.namespace === 'string' ? object.metadata.namespace : undefined;
  return { kind, ...(name !== undefined && { name }), ...(namespace !== undefined && { namespace }) };
}

/** A region entry of a raw ExtendedDeployment: its name and its index in `spec.regions`. */
export interface RegionEntry {
  readonly name: string;
  readonly index: number;
}

/**
 * The region entries of a raw ExtendedDeployment, read as far as they can be (entries without a string name are left
 * out): for checks across objects, which must also see objects that fail to parse.
 */
export function regionEntries(raw: unknown): RegionEntry[] {
  const regions = (raw as { spec?: { regions?: unknown } | null } | null)?.spec?.regions;
  if (!Array.isArray(regions)) return [];
  return regions.flatMap((region: unknown, index) => {
    const name = (region as { name?: unknown } | null)?.name;
    return typeof name === 'string' ? [{ name, index }] : [];
  });
}

/**
 * Turns zod issues into problems with paths, one per field (an unknown key is reported at its own path). Given the
 * schema, an unknown key that looks like a typo of a known one gets a suggestion.
 */
export function issuesToProblems(object: ObjectRef, issues: readonly z.core.$ZodIssue[], schema?: z.ZodType): Problem[] {
  const problems: Problem[] = [];
  for (const issue of issues) {
    const path = issue.path.map((p) => (typeof p === 'symbol' ? String(p) : p));
    if (issue.code === 'unrecognized_keys') {
      const known = schema ? knownKeys(schema, path) : [];
      for (const key of issue.keys) {
        const guess = closest(key, known);
        problems.push({ object, path: [...path, key], message: guess ? `unknown field (did you mean ${JSON.stringify(guess)}?)` : 'unknown field' });
      }
    } else if (issue.code === 'invalid_type' && !('input' in issue && issue.input !== undefined)) {
      problems.push({ object, path, message: 'is required' });
    } else if (issue.code === 'invalid_type') {
      problems.push({ object, path, message: `must be ${typeName(issue.expected)}, not ${describeValue(issue.input)}` });
    } else if (issue.code === 'invalid_value' && 'values' in issue) {
      problems.push({ object, path, message: `must be one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}` });
    } else if (issue.code === 'invalid_key') {
      problems.push({ object, path, message: lowerFirst(issue.issues[0]?.message ?? 'is not an allowed key') });
    } else if (issue.code === 'invalid_union' && issue.message === 'Invalid input') {
      const expected = issue.errors.flatMap((branch) =>
        branch.filter((i) => i.code === 'invalid_type' && i.path.length === 0).map((i) => typeName((i as { expected: string }).expected)),
      );
      const shown = 'input' in issue ? `, not ${describeValue(issue.input)}` : '';
      problems.push({ object, path, message: expected.length === issue.errors.length ? `must be ${expected.join(' or ')}${shown}` : `is not valid${shown}` });
    } else {
      problems.push({ object, path, message: lowerFirst(issue.message) });
    }
  }
  return problems;
}

function lowerFirst(text: string): string {
  return text.charAt(0).toLowerCase() + text.slice(1);
}

function typeName(expected: string): string {
  const names: Record<string, string> = {
    number: 'a number',
    int: 'an integer',
    string: 'a string',
    boolean: 'true or false',
    object: 'an object',
    record: 'an object',
    array: 'a list',
  };
  return names[expected] ?? expected;
}

/** A value as a message shows it: `the string "3"`, `the number 5`, `a list`, `null`. */
function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  switch (typeof value) {
    case 'string':
      return `the string ${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)}`;
    case 'number':
      return `the number ${value}`;
    case 'boolean':
      return String(value);
    case 'object':
      return 'an object';
    default:
      return typeof value;
  }
}

type ZodDef = { type?: string; shape?: Record<string, z.ZodType>; innerType?: z.ZodType; in?: z.ZodType; element?: z.ZodType; valueType?: z.ZodType };

/** The field names the schema allows for the object at `path` (empty when it cannot tell). */
function knownKeys(schema: z.ZodType, path: FieldPath): string[] {
  let current: z.ZodType | undefined = schema;
  const unwrap = () => {
    for (let def = defOf(current); current && (def.innerType || def.in); def = defOf(current)) current = def.innerType ?? def.in;
  };
  for (const part of path) {
    unwrap();
    const def = defOf(current);
    if (def.type === 'object') current = typeof part === 'string' ? def.shape?.[part] : undefined;
    else if (def.type === 'array') current = def.element;
    else if (def.type === 'record') current = def.valueType;
    else return [];
  }
  unwrap();
  return Object.keys(defOf(current).shape ?? {});
}

function defOf(schema: z.ZodType | undefined): ZodDef {
  return (schema as { _zod?: { def?: ZodDef } } | undefined)?._zod?.def ?? {};
}

/** The known key an unknown one is most likely a typo of: same letters in another case, or at most two edits away. */
function closest(key: string, known: readonly string[]): string | undefined {
  const lower = key.toLowerCase();
  const same = known.find((k) => k.toLowerCase() === lower);
  if (same) return same;
  let best: string | undefined;
  let bestDistance = Math.min(2, Math.floor(key.length / 3));
  for (const candidate of known) {
    const d = editDistance(lower, candidate.toLowerCase());
    if (d <= bestDistance && (best === undefined || d < bestDistance)) [best, bestDistance] = [candidate, d];
  }
  return best;
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      row[j] = Math.min((previous[j] ?? 0) + 1, (row[j - 1] ?? 0) + 1, (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = row;
  }
  return previous[b.length] ?? 0;
}

/**
 * Parses with a schema, after the nesting check: zod's walk, and every walk of the render after it, recurses, so an
 * object nested deeper than MAX_NESTING is reported here, with the path where it crosses the limit, and walked no
 * further.
 */
function parseWith<S extends z.ZodType>(schema: S, raw: unknown): Result<z.output<S>> {
  const tooDeep = nestingViolation(raw);
  if (tooDeep) return failed([{ object: refOf(raw), path: tooDeep.path, message: nestingMessage(tooDeep) }]);
  const result = schema.safeParse(raw, { reportInput: true });
  return result.success ? ok(result.data) : failed(issuesToProblems(refOf(raw), result.error.issues, schema));
}

/** Parses and defaults a DeployRegion. */
export function parseDeployRegion(raw: unknown): Result<DeployRegion> {
  return parseWith(deployRegion, raw);
}

/** Parses and defaults an ExtendedDeployment (schema rules only; see validate.ts for the cross-field rules). */
export function parseExtendedDeployment(raw: unknown): Result<ExtendedDeployment> {
  return parseWith(extendedDeployment, raw);
}

/** An ExtendedDeployment that parses once the fields at `removed` are taken out. */
export interface RepairedExtendedDeployment {
  /** The raw object without the removed fields. */
  readonly raw: unknown;
  /** Every field taken out, each of which already has a schema problem. */
  readonly removed: readonly FieldPath[];
}

/**
 * Takes out every optional field that breaks the schema (unknown fields included), so that the cross-field rules can
 * still run and every problem of an object is reported at once. Undefined when a required field is broken, or when the
 * object nests too deep (its parse reports only that): then nothing sensible can be checked beyond the schema.
 */
export function withoutInvalidFields(raw: unknown): RepairedExtendedDeployment | undefined {
  // The copy and the schema's walks below recurse. And when the schema alone accepts the object (deep unknown fields),
  // nothing is taken out: the render of the "repaired" copy would fail the same nesting check again, without end.
  if (nestingViolation(raw)) return undefined;
  let copy: unknown;
  try {
    copy = structuredClone(raw);
  } catch {
    return undefined;
  }
  const removed: FieldPath[] = [];
  const key = (path: FieldPath) => JSON.stringify(path);
  for (let round = 0; round < 8; round++) {
    const result = extendedDeployment.safeParse(copy);
    if (result.success) return { raw: copy, removed };
    for (const issue of result.error.issues) {
      const base = issue.path.map((p) => (typeof p === 'symbol' ? String(p) : p));
      const paths = issue.code === 'unrecognized_keys' ? issue.keys.map((k) => [...base, k]) : [base];
      for (const path of paths) {
        const last = path[path.length - 1];
        // A required field, a list item (taking it out would shift every later index) or the object itself cannot go.
        if (typeof last !== 'string' || removed.some((r) => key(r) === key(path))) return undefined;
        const parent = path.slice(0, -1).reduce<unknown>((node, part) => (node as Record<string | number, unknown> | undefined)?.[part], copy);
        if (parent === null || typeof parent !== 'object' || Array.isArray(parent)) return undefined;
        delete (parent as Record<string, unknown>)[last];
        removed.push(path);
      }
    }
  }
  return undefined;
}
