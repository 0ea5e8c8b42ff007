// Mutations that make a valid generated ExtendedDeployment (spec-arbitraries.ts) invalid at a known field path, for
// fuzz-invalid.test.ts. Each slot breaks a different field, so any set of slots applied together is a set of
// independent problems: a render must report every one of them at once. Schema slots break a field's type, range or
// name; rule slots break a cross-field rule (core/validate.ts, overrides, placement) that only shows once the schema
// passes.
import fc from 'fast-check';
import type { FieldPath } from '../../core/problems.js';
import type { Json, JsonObject } from './spec-arbitraries.js';

/** The mutable shape of a generated ExtendedDeployment, as far as the slots reach into it. */
interface EdShape {
  metadata: JsonObject;
  spec: {
    regions: JsonObject[];
    overriders?: { name: string; overriders: JsonObject[] }[];
    template: { metadata: { labels: Record<string, string> }; spec: { containers: JsonObject[]; [key: string]: Json } };
    [key: string]: Json | undefined;
  };
}

/** One way to break one field. `apply` changes the object in place and returns the path the problem must be reported at. */
export interface MutationSlot {
  readonly name: string;
  readonly kind: 'schema' | 'rule';
  /** Values the slot writes (one is drawn per use). */
  readonly values: fc.Arbitrary<Json>;
  applicable(ed: JsonObject): boolean;
  apply(ed: JsonObject, value: Json): FieldPath;
}

const shape = (ed: JsonObject) => ed as unknown as EdShape;
/** A drawn value as a field name or path: the slots that use it draw strings. */
const text = (v: Json | undefined) => (typeof v === 'string' ? v : JSON.stringify(v));
/** `parent[key]` as an object, created when missing. */
function objectAt(parent: Record<string, Json | undefined>, key: string): Record<string, Json> {
  const existing = parent[key];
  if (existing !== null && typeof existing === 'object' && !Array.isArray(existing)) return existing;
  const created: Record<string, Json> = {};
  parent[key] = created;
  return created;
}
const strategyOf = (ed: JsonObject) => objectAt(shape(ed).spec, 'strategy');
const always = () => true;

/** Slots in the order they are applied (the region appended by `missingRegion` comes last, so no other index moves). */
export const MUTATION_SLOTS: readonly MutationSlot[] = [
  {
    name: 'spec.replicas of the wrong type or range',
    kind: 'schema',
    values: fc.constantFrom('three', -1, 1.5, true, null, [3]),
    applicable: always,
    apply: (ed, v) => ((shape(ed).spec['replicas'] = v), ['spec', 'replicas']),
  },
  {
    name: 'historyLimit out of range',
    kind: 'schema',
    values: fc.constantFrom(-2, 'x', 2.5),
    applicable: always,
    apply: (ed, v) => ((shape(ed).spec['historyLimit'] = v), ['spec', 'historyLimit']),
  },
  {
    name: 'minReadySeconds of the wrong type',
    kind: 'schema',
    values: fc.constantFrom('soon', -5, 0.5, {}),
    applicable: always,
    apply: (ed, v) => ((strategyOf(ed)['minReadySeconds'] = v), ['spec', 'strategy', 'minReadySeconds']),
  },
  {
    name: 'batchSize that is no integer or percentage',
    kind: 'schema',
    values: fc.constantFrom('abc%', '%', '50 %', '150%', '-5%', '5', 1.5, -1, false),
    applicable: always,
    apply: (ed, v) => ((strategyOf(ed)['batchSize'] = v), ['spec', 'strategy', 'batchSize']),
  },
  {
    name: 'unknown upgradeMode',
    kind: 'schema',
    values: fc.constantFrom('fastest', 3, ''),
    applicable: always,
    apply: (ed, v) => ((strategyOf(ed)['upgradeMode'] = v), ['spec', 'strategy', 'upgradeMode']),
  },
  {
    name: 'unknown field in strategy',
    kind: 'schema',
    values: fc.constantFrom('batchsize', 'minReadySecond', 'bogus', 'regionorder'),
    applicable: always,
    apply: (ed, v) => ((strategyOf(ed)[text(v)] = 1), ['spec', 'strategy', text(v)]),
  },
  {
    name: 'maxSurge over 100%',
    kind: 'schema',
    values: fc.constantFrom('101%', '1000%', 'x'),
    applicable: always,
    apply: (ed, v) => {
      objectAt(objectAt(strategyOf(ed), 'updateStrategy'), 'rollingUpdate')['maxSurge'] = v;
      return ['spec', 'strategy', 'updateStrategy', 'rollingUpdate', 'maxSurge'];
    },
  },
  {
    name: 'unknown subsetType',
    kind: 'schema',
    values: fc.constantFrom('DaemonSet', 'replicaset', 7),
    applicable: always,
    apply: (ed, v) => ((shape(ed).spec['subsetType'] = v), ['spec', 'subsetType']),
  },
  {
    name: 'bad region replicas',
    kind: 'schema',
    values: fc.constantFrom('150%', 'x%', -3, '12', 2.5, '12.5%'),
    applicable: always,
    apply: (ed, v) => ((shape(ed).spec.regions[0]!['replicas'] = v), ['spec', 'regions', 0, 'replicas']),
  },
  {
    name: 'unknown field in a region entry',
    kind: 'schema',
    values: fc.constantFrom('replica', 'min', 'override'),
    applicable: always,
    apply: (ed, v) => ((shape(ed).spec.regions[0]![text(v)] = 2), ['spec', 'regions', 0, text(v)]),
  },
  {
    name: 'overrides.images that is no map',
    kind: 'schema',
    values: fc.constantFrom('nginx', 42, ['a']),
    applicable: always,
    apply: (ed, v) => {
      const last = shape(ed).spec.regions.length - 1;
      objectAt(shape(ed).spec.regions[last]!, 'overrides')['images'] = v;
      return ['spec', 'regions', last, 'overrides', 'images'];
    },
  },
  {
    name: 'toleration with an unknown operator',
    kind: 'schema',
    values: fc.constantFrom('Sometimes', 'exists', 1),
    applicable: always,
    apply: (ed, v) => {
      shape(ed).spec.template.spec['tolerations'] = [{ key: 'k', operator: v }];
      return ['spec', 'template', 'spec', 'tolerations', 0, 'operator'];
    },
  },
  {
    name: 'invalid label on the ExtendedDeployment',
    kind: 'schema',
    values: fc.constantFrom<Json>({ 'bad key!': 'x' }, { ok: 'bad value!' }, { ok: 'x'.repeat(64) }, 'labels'),
    applicable: always,
    apply: (ed, v) => ((shape(ed).metadata['labels'] = v), ['metadata', 'labels']),
  },
  {
    name: 'region listed twice',
    kind: 'rule',
    values: fc.constant(null),
    applicable: (ed) => shape(ed).spec.regions.length >= 2,
    apply: (ed) => {
      const regions = shape(ed).spec.regions;
      regions[regions.length - 1]!['name'] = regions[0]!['name']!;
      return ['spec', 'regions', regions.length - 1, 'name'];
    },
  },
  {
    name: 'restartPolicy other than Always',
    kind: 'rule',
    values: fc.constantFrom('Never', 'OnFailure'),
    applicable: always,
    apply: (ed, v) => ((shape(ed).spec.template.spec['restartPolicy'] = v), ['spec', 'template', 'spec', 'restartPolicy']),
  },
  {
    name: 'container name used twice',
    kind: 'rule',
    values: fc.constant(null),
    applicable: always,
    apply: (ed) => {
      const containers = shape(ed).spec.template.spec.containers;
      containers.push({ name: containers[0]!['name']!, image: 'registry.example/twin:1' });
      return ['spec', 'template', 'spec', 'containers', containers.length - 1, 'name'];
    },
  },
  {
    name: 'selector that does not match the template',
    kind: 'rule',
    values: fc.constant(null),
    applicable: always,
    apply: (ed) => ((shape(ed).spec['selector'] = { matchLabels: { app: 'no-match-for-this-selector' } }), ['spec', 'template', 'metadata', 'labels']),
  },
  {
    name: 'RFC 6902 patch whose path does not exist',
    kind: 'rule',
    values: fc.constantFrom('/spec/no/such/field', '/spec/containers/9/image', '/metadata/labels/missing/deeper'),
    applicable: always,
    apply: (ed, v) => {
      const spec = shape(ed).spec;
      const region = text(spec.regions[0]!['name']);
      const entries = (spec.overriders ??= []);
      let index = entries.findIndex((e) => e.name === region);
      if (index < 0) index = entries.push({ name: region, overriders: [] }) - 1;
      const ops = entries[index]!.overriders;
      ops.push({ op: 'replace', path: text(v), value: 1 });
      return ['spec', 'overriders', index, 'overriders', ops.length - 1];
    },
  },
  {
    name: 'fault-move threshold of 0',
    kind: 'rule',
    values: fc.constantFrom(0, '0%'),
    applicable: always,
    apply: (ed, v) => ((objectAt(strategyOf(ed), 'faultMove')['failureThreshold'] = v), ['spec', 'strategy', 'faultMove', 'failureThreshold']),
  },
  {
    name: 'region without a DeployRegion',
    kind: 'rule',
    values: fc.constant(null),
    applicable: always,
    apply: (ed) => {
      const regions = shape(ed).spec.regions;
      // Longer than any generated region name, so it never exists.
      regions.push({ name: 'no-such-deploy-region' });
      return ['spec', 'regions', regions.length - 1, 'name'];
    },
  },
];

/** A set of slots (by index into MUTATION_SLOTS, at least one) with a value for each. */
export const slotChoices: fc.Arbitrary<{ slot: number; value: Json }[]> = fc
  .subarray(
    MUTATION_SLOTS.map((_, i) => i),
    { minLength: 1 },
  )
  .chain((slots) => fc.tuple(...slots.map((i) => MUTATION_SLOTS[i]!.values.map((value) => ({ slot: i, value })))));

/** Every path in a JSON value that holds something: objects' keys and arrays' indexes, at any depth. */
export function pathsIn(value: Json, at: FieldPath = []): FieldPath[] {
  if (value === null || typeof value !== 'object') return [];
  const entries: [string | number, Json][] = Array.isArray(value) ? value.map((v, i) => [i, v]) : Object.entries(value);
  return entries.flatMap(([k, v]) => [[...at, k], ...pathsIn(v, [...at, k])]);
}

/** Sets (or with `undefined`, removes) the value at `path`; the parent must exist. */
export function setAt(root: Json, path: FieldPath, value: Json | undefined): void {
  const parent = path.slice(0, -1).reduce<Json>((node, part) => (node as Record<string | number, Json>)[part]!, root) as Record<string | number, Json>;
  const key = path[path.length - 1]!;
  if (value !== undefined) parent[key] = value;
  else if (Array.isArray(parent)) parent.splice(Number(key), 1);
  else delete parent[key];
}
