import type { JsonObject } from '../core/overrides.js';

/*
 * What cdk8s' `toJson()` gives for a manifest that emitManifest (manifest.ts) adds to a chart without a namespace or
 * labels, computed without the construct tree. For thousands of objects `chart.toJson()` costs as much as rendering
 * them: it walks the whole app again for every chart, and resolves every value through its resolvers. For plain JSON
 * (what a YAML reader gives) the outcome is simple, and this is it, step by step as cdk8s 2 takes it (api-object.ts,
 * metadata.ts, _util.ts sanitizeValue): metadata with empty lists and maps dropped, keys sorted at every level, null
 * members dropped, `apiVersion`, `kind` and `metadata` first. manifest-json.test.ts holds the two side by side.
 */

/** Thrown through the walk at the first value that is not plain JSON; manifestJson then answers undefined. */
const NOT_PLAIN = new Error('not plain JSON');

const isPlainObject = (value: object): boolean => {
  const proto: unknown = Object.getPrototypeOf(value);
  // cdk8s resolves an object by its `constructor`, and `__proto__` as a key sets a prototype in its copies.
  return proto === Object.prototype && !Object.hasOwn(value, 'constructor') && !Object.hasOwn(value, '__proto__');
};

/**
 * cdk8s' `sanitizeValue` (sorted keys) of a plain JSON value, with `filterEmpty` as its metadata calls it: null and
 * undefined members dropped, and with `filterEmpty` empty lists and objects too (an item of a list becomes undefined,
 * and stays in its place). It walks every object `edctl render` writes, so it copies only what changes: a list or
 * object that comes out equal (keys in order, nothing dropped) is the value itself, which only YAML output reads. With
 * `lists`, a list walked before is not walked again (see manifestJson).
 */
function sanitized(value: unknown, filterEmpty: boolean, lists?: SanitizedLists): unknown {
  if (value === null || value === undefined) return undefined;
  if (typeof value !== 'object') {
    if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') return value;
    throw NOT_PLAIN;
  }
  if (Array.isArray(value)) {
    if (Object.getPrototypeOf(value) !== Array.prototype) throw NOT_PLAIN;
    if (filterEmpty && value.length === 0) return undefined;
    const known = lists?.get(value);
    if (known) return known;
    let items: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      const clean = sanitized(item, filterEmpty, lists);
      if (items === undefined && clean !== item) items = value.slice(0, i);
      items?.push(clean);
    }
    lists?.set(value, items ?? value);
    return items ?? value;
  }
  if (Object.getPrototypeOf(value) !== Object.prototype) throw NOT_PLAIN;
  const object = value as JsonObject;
  const keys = Object.keys(object);
  let sorted = true;
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!;
    if (key === 'constructor' || key === '__proto__') throw NOT_PLAIN;
    if (i > 0 && keys[i - 1]! > key) sorted = false;
  }
  if (!sorted) keys.sort();
  let out: JsonObject | undefined = sorted ? undefined : {};
  let empty = true;
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!;
    const member = object[key];
    const clean = sanitized(member, filterEmpty, lists);
    // A member that holds undefined is dropped too, where the value itself would keep it.
    if (out === undefined && (clean !== member || member === undefined)) {
      // The first change: the members before it are kept as they are.
      out = {};
      for (let k = 0; k < i; k++) out[keys[k]!] = object[keys[k]!];
    }
    if (clean === undefined) continue;
    if (out) out[key] = clean;
    empty = false;
  }
  if (filterEmpty && empty) return undefined;
  return out ?? object;
}

/**
 * Whether cdk8s takes the manifest as this module does: a plain object with an `apiVersion` it parses (ApiObject's
 * constructor throws on any other), and metadata, if any, a plain object whose fields cdk8s copies with a spread
 * (labels, annotations, finalizers, owner references) absent or of the one type such a spread copies as it is.
 */
function supported(manifest: JsonObject): boolean {
  const { apiVersion, metadata } = manifest;
  if (!isPlainObject(manifest) || typeof apiVersion !== 'string' || apiVersion.split('/').length > 2) return false;
  if (metadata === undefined) return true;
  if (metadata === null || typeof metadata !== 'object' || !isPlainObject(metadata)) return false;
  const meta = metadata as JsonObject;
  const absent = (field: string) => meta[field] === null || meta[field] === undefined;
  // A name that is there takes the place of the one cdk8s generates; one that its metadata cleanup drops (null, `[]`)
  // leaves nothing for emitManifest to remove, and cdk8s fails.
  if (Object.hasOwn(meta, 'name') && !['string', 'number', 'boolean'].includes(typeof meta['name'])) return false;
  const map = (field: string) => absent(field) || (typeof meta[field] === 'object' && !Array.isArray(meta[field]));
  const list = (field: string) => absent(field) || Array.isArray(meta[field]);
  return map('labels') && map('annotations') && list('finalizers') && list('ownerReferences');
}

/**
 * Lists sanitized already (outside metadata), by identity, and what they became. The regional workloads of one
 * ExtendedDeployment share the lists of its template that their region does not change (containers, their env and
 * ports, volumes), so each is walked once for all of them. Only for manifests nobody changes meanwhile.
 */
export type SanitizedLists = Map<readonly unknown[], unknown[]>;

/**
 * `emitManifest(chart, id, manifest).toJson()` for a chart without a namespace or labels, or undefined when the
 * manifest is not one cdk8s takes as this module does (see supported) or holds anything but plain JSON (a class
 * instance, a function, a key named `constructor`): what cdk8s makes of those, or which error it throws, only cdk8s
 * itself can tell. With CDK8S_DISABLE_SORT set, cdk8s keeps keys in their order: undefined too. `lists`: shared with
 * the other manifests of one object (SanitizedLists).
 */
export function manifestJson(manifest: JsonObject, lists?: SanitizedLists): JsonObject | undefined {
  if (process.env['CDK8S_DISABLE_SORT'] || !supported(manifest)) return undefined;
  try {
    const out: JsonObject = { apiVersion: manifest['apiVersion'] };
    const kind = sanitized(manifest['kind'], false);
    if (kind !== undefined) out['kind'] = kind;
    if (manifest['metadata'] !== undefined) out['metadata'] = metadataJson(manifest['metadata'] as JsonObject);
    for (const key of Object.keys(manifest).sort()) {
      if (key === 'apiVersion' || key === 'kind' || key === 'metadata') continue;
      const value = sanitized(manifest[key], false, lists);
      if (value !== undefined) out[key] = value;
    }
    return out;
  } catch (error) {
    if (error === NOT_PLAIN) return undefined;
    throw error;
  }
}

/**
 * ApiObjectMetadataDefinition's toJson() of plain metadata, without a name unless it is a string (cdk8s names an
 * object without one after its construct path, and emitManifest removes that name again). cdk8s copies the labels,
 * annotations, finalizers and owner references first (`{...labels}`, `[]` for none): for what supported() lets
 * through, the sanitized copy is the same.
 */
function metadataJson(meta: JsonObject): JsonObject {
  if (typeof meta['name'] === 'string') return sanitized(meta, true) as JsonObject;
  // A name member all the same, so that the metadata is never empty and dropped: it stays, as `{}` once the name is gone.
  const json = sanitized({ ...meta, name: '' }, true) as JsonObject;
  delete json['name'];
  return json;
}
