import fastJsonPatch from 'fast-json-patch';
import type { Operation } from 'fast-json-patch';
import type { RegionOverrides } from './api/extended-deployment.js';
import type { Container, PodSpec, PodTemplate, PodToleration } from './kube/objects.js';
import { RESERVED_LABELS } from './labels.js';
import type { FieldPath } from './problems.js';

/** A JSON object as the renderer manipulates it. */
export type JsonObject = { [key: string]: unknown };

/** A problem found while overriding, with its path inside the ExtendedDeployment. */
export interface OverrideProblem {
  readonly path: FieldPath;
  readonly message: string;
}

/** The overridden template, or the problems that stopped it. */
export type OverrideResult<Template> = { readonly template: Template; readonly problems: readonly OverrideProblem[] };

/**
 * Deep copy of plain JSON. Arrays and plain objects are copied by a direct walk, several times faster than
 * `structuredClone`, which the renderer calls several times per region. Everything else behaves exactly as
 * `structuredClone` does, because it goes through it: a Date or class instance is copied by it; a function or symbol
 * makes it throw (DataCloneError); a structure nested deeper than {@link FAST_CLONE_DEPTH} (a cycle, say) is copied
 * by it as a whole. Own properties holding `undefined` are kept, and a key named `__proto__` stays an own property,
 * as `JSON.parse` leaves it.
 */
export function cloneJson<T>(value: T): T {
  try {
    return cloneValue(value, 0) as T;
  } catch (error) {
    if (error === TOO_DEEP) return structuredClone(value);
    throw error;
  }
}

/** Nesting beyond which cloneJson hands the whole value to structuredClone (pod templates nest about 12 deep). */
const FAST_CLONE_DEPTH = 100;
/** Thrown by cloneValue past FAST_CLONE_DEPTH and caught by cloneJson: one instance, so the fallback costs no allocation. */
const TOO_DEEP = new Error('too deep for the fast clone walk');

function cloneValue(value: unknown, depth: number): unknown {
  if (value === null) return value;
  const type = typeof value;
  if (type !== 'object') return type === 'function' || type === 'symbol' ? structuredClone(value) : value;
  if (depth > FAST_CLONE_DEPTH) throw TOO_DEEP;
  if (Array.isArray(value)) return value.map((item: unknown) => cloneValue(item, depth + 1));
  const proto: unknown = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return structuredClone(value);
  const out: JsonObject = {};
  for (const key of Object.keys(value as object)) {
    const copy = cloneValue((value as JsonObject)[key], depth + 1);
    if (key === '__proto__') Object.defineProperty(out, key, { value: copy, enumerable: true, writable: true, configurable: true });
    else out[key] = copy;
  }
  return out;
}

function allContainers(template: PodTemplate): Container[] {
  return [...(template.spec?.containers ?? []), ...(template.spec?.initContainers ?? [])];
}

/**
 * Applies typed overrides to `template`, which is not changed: the result shares with it every part the overrides do
 * not change (a template without overrides is `template` itself), so that the regions of a render share what no
 * region changes instead of a copy each. Each container-keyed override must name a container of the template;
 * reserved labels may not be set. `at` is the overrides' path inside the ExtendedDeployment.
 */
export function applyTypedOverrides(template: PodTemplate, overrides: RegionOverrides | undefined, at: FieldPath): OverrideResult<PodTemplate> {
  const problems: OverrideProblem[] = [];
  if (!overrides) return { template, problems };

  // Containers an override changes are copied whole (they are changed in place below), the others shared.
  const changed = new Set([overrides.images, overrides.env, overrides.resources].flatMap((map) => Object.keys(map ?? {})));
  const own = (list: Container[] | undefined) => list?.map((c) => (changed.has(c.name) ? cloneJson(c) : c));
  const spec: PodSpec = { ...template.spec };
  if (spec.containers) spec.containers = own(spec.containers);
  if (spec.initContainers) spec.initContainers = own(spec.initContainers);
  const metadata: NonNullable<PodTemplate['metadata']> = { ...template.metadata };
  const out: PodTemplate = { ...template, metadata, spec };

  const containers = allContainers(out);
  const names = containers.map((c) => c.name);
  const forContainer = <V>(field: string, map: Record<string, V> | undefined, apply: (c: Container, value: V) => void) => {
    for (const [name, value] of Object.entries(map ?? {})) {
      const target = containers.filter((c) => c.name === name);
      if (target.length === 0) {
        problems.push({ path: [...at, field, name], message: `no container named ${JSON.stringify(name)} in the template (containers: ${names.join(', ')})` });
      }
      for (const c of target) apply(c, value);
    }
  };

  forContainer('images', overrides.images, (c, image) => {
    c.image = image;
  });
  forContainer('env', overrides.env, (c, vars) => {
    const env = (c.env ??= []);
    for (const key of Object.keys(vars).sort()) {
      const value = vars[key] ?? '';
      const existing = env.find((e) => e.name === key);
      if (existing) {
        delete existing.valueFrom;
        existing.value = value;
      } else env.push({ name: key, value });
    }
  });
  forContainer('resources', overrides.resources, (c, resources) => {
    const target = (c.resources ??= {});
    for (const kind of ['requests', 'limits'] as const) {
      if (resources[kind]) target[kind] = { ...(target[kind] ?? {}), ...resources[kind] };
    }
  });

  for (const key of Object.keys(overrides.labels ?? {})) {
    if (RESERVED_LABELS.includes(key)) problems.push({ path: [...at, 'labels', key], message: 'is set by the renderer and cannot be overridden' });
  }
  // Object.assign onto a copy, as onto the template's own map before: the same members, in the same order.
  if (overrides.labels) metadata.labels = Object.assign({ ...metadata.labels }, overrides.labels);
  if (overrides.annotations) metadata.annotations = Object.assign({ ...metadata.annotations }, overrides.annotations);
  if (overrides.nodeSelector) spec.nodeSelector = Object.assign({ ...spec.nodeSelector }, overrides.nodeSelector);
  if (overrides.tolerations) spec.tolerations = mergeTolerations(spec.tolerations, overrides.tolerations);
  return { template: out, problems };
}

/** Appends tolerations that are not already present (compared field by field). */
export function mergeTolerations(existing: readonly PodToleration[] | undefined, added: readonly PodToleration[]): PodToleration[] {
  const out = [...(existing ?? [])];
  const same = (a: PodToleration, b: PodToleration) =>
    a.key === b.key && a.operator === b.operator && a.value === b.value && a.effect === b.effect && a.tolerationSeconds === b.tolerationSeconds;
  for (const t of added) if (!out.some((o) => same(o, t))) out.push(t);
  return out;
}

/** One RFC 6902 operation as the upstream `overriders` write it. */
export interface PatchOperation {
  readonly op: 'add' | 'remove' | 'replace';
  readonly path: string;
  readonly value?: unknown;
}

/**
 * Applies RFC 6902 operations in order to a copy of `template` (no operations: `template` itself), which shares
 * nothing with the operations. An operation that cannot apply is a problem at its own path (`at` + index): it is never
 * silently dropped, unlike upstream, which quietly kept the base template.
 */
export function applyPatches(template: JsonObject, operations: readonly PatchOperation[], at: FieldPath): OverrideResult<JsonObject> {
  if (operations.length === 0) return { template, problems: [] };
  let out = cloneJson(template);
  const problems: OverrideProblem[] = [];
  operations.forEach((operation, i) => {
    // The patch library inserts a value as it is: a copy, so that the template owns all of itself (the renderer
    // places it in its region in place) and the ExtendedDeployment's own overriders are never changed through it.
    const op = { op: operation.op, path: operation.path, value: cloneJson(operation.value) } as Operation;
    if (operation.op !== 'remove' && operation.value === undefined) {
      problems.push({ path: [...at, i, 'value'], message: `${operation.op} ${operation.path} needs a value` });
      return;
    }
    try {
      out = fastJsonPatch.applyOperation(out, op, true, true, true, i).newDocument;
    } catch (error) {
      problems.push({ path: [...at, i], message: `${operation.op} ${operation.path} does not apply: ${patchErrorText(error)}` });
    }
  });
  return { template: out, problems };
}

function patchErrorText(error: unknown): string {
  const name = (error as { name?: string }).name;
  switch (name) {
    case 'OPERATION_PATH_UNRESOLVABLE':
      return 'the path does not exist in the template';
    case 'OPERATION_PATH_INVALID':
      return 'the path is not a JSON pointer (it must start with "/")';
    case 'OPERATION_PATH_ILLEGAL_ARRAY_INDEX':
      return 'an array index in the path is not a number';
    case 'OPERATION_VALUE_OUT_OF_BOUNDS':
      return 'the array index is past the end of the array';
    case 'OPERATION_VALUE_REQUIRED':
      return 'the operation needs a value';
    default:
      return (error as Error).message.split('\n')[0] ?? String(error);
  }
}
