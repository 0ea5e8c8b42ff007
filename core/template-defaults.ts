/**
 * A pod template without the values the API server would give it anyway, so that spelling a default out (`resources:
 * {}`, `restartPolicy: Always`, `creationTimestamp: null`) does not change the revision and replace every pod. A
 * Deployment behaves the same: its pod-template hash is taken after the API server's defaulting.
 *
 * Only what the API server stores identically is dropped: the defaults of k8s.io/kubernetes pkg/apis/core/v1
 * (defaults.go and the declarative ones) that apply to pod templates, null, empty lists and empty maps (Go's
 * omitempty), and `false` in bools that are not pointers. Nothing is ever added, so a template that spells no default
 * is returned as it is and keeps its revision. Quantity spellings ("1000m" for "1") are kept as written.
 */
import type { PodTemplate } from './kube/objects.js';
import { HANDLER_DEFAULTS, PORT_DEFAULTS, PROBE_DEFAULTS } from './inplace/defaults.js';

type Json = { [key: string]: unknown };

/**
 * Pod spec fields with the value an absent one gets (SetDefaults_PodSpec), or has (plain bools). SetDefaults_Pod
 * (`enableServiceLinks`, requests from limits) is left out: it defaults pods, not templates, so a Deployment's
 * template hash changes with those fields, and treating them alike here would hide a rollout of compat mode.
 */
const POD_SPEC_DEFAULTS: Readonly<Json> = {
  dnsPolicy: 'ClusterFirst',
  restartPolicy: 'Always',
  schedulerName: 'default-scheduler',
  terminationGracePeriodSeconds: 30,
  securityContext: {},
  hostNetwork: false,
  hostPID: false,
  hostIPC: false,
};

/** Container fields with the value an absent one gets (SetDefaults_Container), or has. `imagePullPolicy` depends on the image. */
const CONTAINER_DEFAULTS: Readonly<Json> = {
  terminationMessagePath: '/dev/termination-log',
  terminationMessagePolicy: 'File',
  resources: {},
  stdin: false,
  stdinOnce: false,
  tty: false,
};

/** `fieldRef` of env vars and downward API items (SetDefaults_ObjectFieldSelector). */
const FIELD_REF_DEFAULTS: Readonly<Json> = { apiVersion: 'v1' };

/** Secret, ConfigMap, downward API and projected volumes: file mode 0644. */
const VOLUME_FILE_MODE_DEFAULTS: Readonly<Json> = { defaultMode: 0o644 };

/** Fields holding maps of names to values, where null is a value ("" for a label) rather than an absent field. */
const MAP_FIELDS: ReadonlySet<string> = new Set(['labels', 'annotations', 'nodeSelector', 'matchLabels', 'limits', 'requests', 'overhead', 'volumeAttributes']);

const isObject = (value: unknown): value is Json => value !== null && typeof value === 'object' && !Array.isArray(value);

/**
 * Null members and empty lists dropped everywhere, and empty maps where a field holds a map. `{}` elsewhere stays:
 * `emptyDir: {}` is a volume, and an empty `labelSelector` selects everything where an absent one selects nothing.
 */
function compact(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(compact);
  if (!isObject(value)) return value;
  const out: Json = {};
  for (const [key, member] of Object.entries(value)) {
    if (member === null || member === undefined) continue;
    if (MAP_FIELDS.has(key) && isObject(member)) {
      if (Object.keys(member).length > 0) out[key] = member;
      continue;
    }
    const kept = compact(member);
    if (Array.isArray(kept) && kept.length === 0) continue;
    out[key] = kept;
  }
  return out;
}

/** Every default is a scalar or `{}` (which a compacted empty object equals). */
const isDefault = (value: unknown, fallback: unknown): boolean =>
  isObject(fallback) ? isObject(value) && Object.keys(value).length === 0 : value === fallback;

/** `object` without the members equal to their default in `defaults`. */
function without(object: unknown, defaults: Readonly<Json>): unknown {
  if (!isObject(object)) return object;
  const out: Json = {};
  for (const [key, value] of Object.entries(object)) {
    if (key in defaults && isDefault(value, defaults[key])) continue;
    out[key] = value;
  }
  return out;
}

/** `object` with `key` replaced by `change(value)` when present. */
function at(object: Json, key: string, change: (value: unknown) => unknown): Json {
  return object[key] === undefined ? object : { ...object, [key]: change(object[key]) };
}

/**
 * `at` for an object this module has just made (`without` and `compact` give new objects): the member is replaced in
 * place, in the same position. Every template of a render goes through here, and a copy per changed field was most
 * of the work.
 */
function atOwn(object: Json, key: string, change: (value: unknown) => unknown): Json {
  if (object[key] !== undefined) object[key] = change(object[key]);
  return object;
}

const each =
  (change: (item: unknown) => unknown) =>
  (list: unknown): unknown =>
    Array.isArray(list) ? list.map(change) : list;

const field = (key: string, change: (value: unknown) => unknown) => (object: unknown) => (isObject(object) ? at(object, key, change) : object);

// An image reference as github.com/distribution/reference parses it: [domain[:port]/]path[:tag][@digest].
const DOMAIN = String.raw`(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)*(?::[0-9]+)?/)?`;
const COMPONENT = String.raw`[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*`;
const REFERENCE = new RegExp(String.raw`^${DOMAIN}${COMPONENT}(?:/${COMPONENT})*(?::([\w][\w.-]{0,127}))?(@sha256:[0-9a-f]{64}|@sha512:[0-9a-f]{128})?$`);

/**
 * The pull policy the API server gives a container of `image` without one: Always for the tag `latest` or no tag and
 * no digest, IfNotPresent otherwise. Undefined for a reference it would not parse, so that such a field is kept.
 */
export function defaultPullPolicy(image: unknown): 'Always' | 'IfNotPresent' | undefined {
  const match = typeof image === 'string' ? REFERENCE.exec(image) : null;
  if (!match) return undefined;
  const [, tag, digest] = match;
  return tag === 'latest' || (tag === undefined && digest === undefined) ? 'Always' : 'IfNotPresent';
}

// The changes below are made once, not for every container of every template.
const handler = field('httpGet', (get) => without(get, HANDLER_DEFAULTS));
const probe = (value: unknown) => handler(without(value, PROBE_DEFAULTS));
const ports = each((port) => without(port, PORT_DEFAULTS));
const preStop = field('preStop', handler);
const postStart = field('postStart', handler);
const env = each(
  field(
    'valueFrom',
    field('fieldRef', (ref) => without(ref, FIELD_REF_DEFAULTS)),
  ),
);
const CONTAINER_DEFAULTS_PULLING: Readonly<Record<'Always' | 'IfNotPresent', Readonly<Json>>> = {
  Always: { ...CONTAINER_DEFAULTS, imagePullPolicy: 'Always' },
  IfNotPresent: { ...CONTAINER_DEFAULTS, imagePullPolicy: 'IfNotPresent' },
};

function container(value: unknown): unknown {
  if (!isObject(value)) return value;
  const pullPolicy = defaultPullPolicy(value['image']);
  const out = without(value, pullPolicy === undefined ? CONTAINER_DEFAULTS : CONTAINER_DEFAULTS_PULLING[pullPolicy]) as Json;
  atOwn(out, 'ports', ports);
  for (const key of ['livenessProbe', 'readinessProbe', 'startupProbe']) atOwn(out, key, probe);
  atOwn(out, 'lifecycle', (hooks) => postStart(preStop(hooks)));
  return atOwn(out, 'env', env);
}

const downwardItems = field('items', each(field('fieldRef', (ref) => without(ref, FIELD_REF_DEFAULTS))));

function volume(value: unknown): unknown {
  if (!isObject(value)) return value;
  let out = value;
  for (const key of ['secret', 'configMap']) out = at(out, key, (source) => without(source, VOLUME_FILE_MODE_DEFAULTS));
  out = at(out, 'downwardAPI', (source) => downwardItems(without(source, VOLUME_FILE_MODE_DEFAULTS)));
  out = at(out, 'hostPath', (source) => without(source, { type: '' }));
  const projection = (source: unknown) =>
    field('downwardAPI', downwardItems)(field('serviceAccountToken', (token) => without(token, { expirationSeconds: 3600 }))(source));
  out = at(out, 'projected', (source) => field('sources', each(projection))(without(source, VOLUME_FILE_MODE_DEFAULTS)));
  return at(
    out,
    'ephemeral',
    field(
      'volumeClaimTemplate',
      field('spec', (spec) => without(spec, { volumeMode: 'Filesystem' })),
    ),
  );
}

const containers = each(container);
const volumes = each(volume);

const CONTAINER_LISTS = ['containers', 'initContainers'] as const;

/** A compacted pod spec without its defaults; its container lists too unless `containersDone`. */
function podSpec(value: unknown, containersDone = false): unknown {
  if (!isObject(value)) return value;
  const out = without(value, POD_SPEC_DEFAULTS) as Json;
  if (!containersDone) for (const key of CONTAINER_LISTS) atOwn(out, key, containers);
  return atOwn(out, 'volumes', volumes);
}

/**
 * `template` without the fields equal to what the API server would store for them anyway (see the module comment).
 * A new object; `template` is not changed. Only the revision is taken from it: workloads render what the user wrote.
 */
export function withoutDefaults(template: PodTemplate): PodTemplate {
  const compacted = compact(template) as Json;
  return atOwn(compacted, 'spec', podSpec);
}

/** One entry of `containers` or `initContainers` as withoutDefaults gives it. */
export function containerWithoutDefaults(value: unknown): unknown {
  return container(compact(value));
}

/**
 * withoutDefaults with each entry of the container lists made by `containerForm` (given one, the same as
 * containerWithoutDefaults), so that the revision can make a container the regions share once (revision.ts). The
 * lists come last in the spec: only for canonical JSON, which sorts keys.
 */
export function withoutDefaultsBy(template: PodTemplate, containerForm: (container: unknown) => unknown): PodTemplate {
  const spec: unknown = template.spec;
  if (!isObject(spec)) return withoutDefaults(template);
  const { containers: list, initContainers: initList, ...rest } = spec;
  const compacted = compact({ ...template, spec: rest }) as Json;
  const out = compacted['spec'] as Json;
  for (const [key, value] of [
    ['containers', list],
    ['initContainers', initList],
  ] as const) {
    // As compact takes a list: an empty one dropped, anything else but a list compacted as it is.
    if (Array.isArray(value)) {
      if (value.length > 0) out[key] = value.map((item: unknown) => containerForm(item));
    } else if (value !== null && value !== undefined) out[key] = compact(value);
  }
  compacted['spec'] = podSpec(out, true);
  return compacted;
}
