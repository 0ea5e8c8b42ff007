import { canonicalJson } from '../revision.js';
import { REVISION_LABEL } from '../labels.js';
import type { Container, PodTemplate } from '../kube/objects.js';
import {
  ADMISSION_TOLERATION_KEYS,
  DEFAULTED_CONTAINER_FIELDS,
  DEFAULTED_POD_FIELDS,
  HANDLER_DEFAULTS,
  PORT_DEFAULTS,
  PROBE_DEFAULTS,
  TOKEN_MOUNT_PATH,
  TOKEN_VOLUME_PREFIX,
} from './defaults.js';

type Json = { [key: string]: unknown };

/** How a pod reaches a new template: by swapping images in place, or by being replaced (and why). */
export type UpdateMethod =
  { readonly method: 'in-place'; readonly images: Readonly<Record<string, string>> } | { readonly method: 'replace'; readonly reason: string };

function containersOf(template: PodTemplate): Container[] {
  return template.spec?.containers ?? [];
}

/** The image changes from `from` to `to` by container name, when the containers are the same ones in the same order. */
function imageChanges(from: PodTemplate, to: PodTemplate): Record<string, string> | string {
  const a = containersOf(from);
  const b = containersOf(to);
  if (a.length !== b.length || a.some((c, i) => c.name !== b[i]?.name)) return 'the containers differ';
  const images: Record<string, string> = {};
  b.forEach((c, i) => {
    if (c.image !== a[i]?.image) images[c.name ?? ''] = c.image ?? '';
  });
  return Object.keys(images).length === 0 ? 'no image changed' : images;
}

function withoutImagesAndRevision(template: PodTemplate): { metadata: object; spec: Json } {
  const labels = { ...(template.metadata?.labels ?? {}) };
  delete labels[REVISION_LABEL];
  return {
    metadata: { ...template.metadata, labels },
    spec: { ...template.spec, containers: containersOf(template).map(({ image: _image, ...rest }) => rest) },
  };
}

/**
 * Between two rendered templates (what `edctl plan` compares): in place when they differ only in the images of
 * regular containers; init containers, env, command, resources, labels and everything else mean replacement.
 */
export function templateUpdateMethod(from: PodTemplate, to: PodTemplate): UpdateMethod {
  const images = imageChanges(from, to);
  if (images === 'the containers differ') return { method: 'replace', reason: images };
  if (canonicalJson(withoutImagesAndRevision(from)) !== canonicalJson(withoutImagesAndRevision(to))) {
    return { method: 'replace', reason: 'fields other than images changed' };
  }
  return typeof images === 'string' ? { method: 'replace', reason: images } : { method: 'in-place', images };
}

/**
 * Between a running pod and its region's rendered template (what the agent sees): the same rule, after taking away
 * what the API server and admission added to the pod (defaults.ts). Every field of the template must be in the pod
 * with the same value (images aside); a pod field the template lacks must be a known default. A pod is read as the
 * template it was created from: its metadata and spec.
 */
export function podUpdateMethod(pod: PodTemplate, template: PodTemplate): UpdateMethod {
  const images = imageChanges(pod, template);
  if (typeof images === 'string') return { method: 'replace', reason: images };
  for (const [key, value] of Object.entries(template.metadata?.labels ?? {})) {
    if (key !== REVISION_LABEL && pod.metadata?.labels?.[key] !== value) return { method: 'replace', reason: `label ${key} changed` };
  }
  const mismatch = specMismatch(pod.spec ?? {}, withoutImagesAndRevision(template).spec);
  return mismatch === undefined ? { method: 'in-place', images } : { method: 'replace', reason: `${mismatch} changed` };
}

/** The first path where the pod spec is not the template's spec plus defaults, or undefined. */
function specMismatch(pod: Json, template: Json): string | undefined {
  for (const key of new Set([...Object.keys(pod), ...Object.keys(template)])) {
    const p = pod[key];
    const t = template[key];
    if (t === undefined) {
      if (DEFAULTED_POD_FIELDS.has(key)) continue;
      if (key === 'volumes' && tokenOnly(p, isTokenVolume)) continue;
      if (key === 'tolerations' && tokenOnly(p, isAdmissionToleration)) continue;
      return key;
    }
    if (key === 'containers' || key === 'initContainers') {
      const pods = (p ?? []) as Json[];
      const ts = t as Json[];
      if (pods.length !== ts.length) return key;
      for (let i = 0; i < ts.length; i++) {
        const bad = containerMismatch(pods[i] ?? {}, ts[i] ?? {}, key === 'containers');
        if (bad) return `${key}[${i}].${bad}`;
      }
      continue;
    }
    if (key === 'volumes' || key === 'tolerations') {
      const extra = key === 'volumes' ? isTokenVolume : isAdmissionToleration;
      const kept = ((p ?? []) as unknown[]).filter((v) => !extra(v) || (t as unknown[]).some((x) => canonicalJson(x) === canonicalJson(v)));
      if (!sameWithDefaults(kept, t, {})) return key;
      continue;
    }
    if (!sameWithDefaults(p, t, {})) return key;
  }
  return undefined;
}

function containerMismatch(pod: Json, template: Json, regular: boolean): string | undefined {
  for (const key of new Set([...Object.keys(pod), ...Object.keys(template)])) {
    if (regular && key === 'image') continue;
    const p = pod[key];
    const t = template[key];
    if (t === undefined) {
      if (key === 'resources' && isEmptyResources(p)) continue;
      if (key !== 'resources' && DEFAULTED_CONTAINER_FIELDS.has(key)) continue;
      if (key === 'volumeMounts' && tokenOnly(p, (m) => (m as Json)['mountPath'] === TOKEN_MOUNT_PATH)) continue;
      return key;
    }
    if (key === 'volumeMounts') {
      const kept = ((p ?? []) as Json[]).filter((m) => m['mountPath'] !== TOKEN_MOUNT_PATH || (t as Json[]).some((x) => x['mountPath'] === TOKEN_MOUNT_PATH));
      if (!sameWithDefaults(kept, t, {})) return key;
    } else if (key === 'resources') {
      if (!sameResources(p, t)) return key;
    } else if (key === 'ports') {
      if (!sameWithDefaults(p, t, PORT_DEFAULTS)) return key;
    } else if (key.endsWith('Probe')) {
      if (!sameProbe(p, t)) return key;
    } else if (!sameWithDefaults(p, t, {})) return key;
  }
  return undefined;
}

function tokenOnly(value: unknown, injected: (item: unknown) => boolean): boolean {
  return Array.isArray(value) && value.every(injected);
}

/** The service-account token volume the ServiceAccount admission plugin adds (named with TOKEN_VOLUME_PREFIX). */
function isTokenVolume(value: unknown): boolean {
  const name = (value as Json)['name'];
  return typeof name === 'string' && name.startsWith(TOKEN_VOLUME_PREFIX);
}

function isAdmissionToleration(value: unknown): boolean {
  const t = value as Json;
  return ADMISSION_TOLERATION_KEYS.has(String(t['key'])) && t['effect'] === 'NoExecute';
}

function isEmptyResources(value: unknown): boolean {
  return value === undefined || canonicalJson(value) === '{}';
}

/** Deep equality where the pod may carry the listed defaulted keys (with their default values) the template lacks. */
function sameWithDefaults(pod: unknown, template: unknown, defaults: Readonly<Record<string, unknown>>): boolean {
  if (Array.isArray(template)) {
    return Array.isArray(pod) && pod.length === template.length && template.every((t, i) => sameWithDefaults(pod[i], t, defaults));
  }
  if (template !== null && typeof template === 'object') {
    if (pod === null || typeof pod !== 'object' || Array.isArray(pod)) return false;
    const p = pod as Json;
    const t = template as Json;
    for (const key of new Set([...Object.keys(p), ...Object.keys(t)])) {
      if (t[key] === undefined) {
        if (key in defaults && canonicalJson(p[key]) === canonicalJson(defaults[key])) continue;
        return false;
      }
      if (!sameWithDefaults(p[key], t[key], defaults)) return false;
    }
    return true;
  }
  return canonicalJson(pod) === canonicalJson(template);
}

function sameProbe(pod: unknown, template: unknown): boolean {
  if (pod === null || typeof pod !== 'object' || template === null || typeof template !== 'object') return false;
  const p = pod as Json;
  const t = template as Json;
  for (const key of new Set([...Object.keys(p), ...Object.keys(t)])) {
    if (t[key] === undefined) {
      if (key in PROBE_DEFAULTS && p[key] === PROBE_DEFAULTS[key]) continue;
      return false;
    }
    const handler = ['httpGet', 'tcpSocket', 'grpc', 'exec'].includes(key);
    if (!sameWithDefaults(p[key], t[key], handler ? HANDLER_DEFAULTS : {})) return false;
  }
  return true;
}

/** Resources equal after the API server's defaulting (requests from limits) and quantity canonicalisation. */
function sameResources(pod: unknown, template: unknown): boolean {
  const p = (pod ?? {}) as { requests?: Record<string, unknown>; limits?: Record<string, unknown> };
  const t = (template ?? {}) as { requests?: Record<string, unknown>; limits?: Record<string, unknown> };
  const requests = { ...(t.limits ?? {}), ...(t.requests ?? {}) };
  return sameQuantities(p.limits ?? {}, t.limits ?? {}) && sameQuantities(p.requests ?? {}, requests);
}

function sameQuantities(a: Record<string, unknown>, b: Record<string, unknown>): boolean {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  for (const key of keys) {
    const x = quantityValue(a[key]);
    const y = quantityValue(b[key]);
    if (x === undefined || y === undefined || Math.abs(x - y) > Math.abs(y) * 1e-12) return false;
  }
  return true;
}

const SUFFIXES: Record<string, number> = {
  n: 1e-9,
  u: 1e-6,
  m: 1e-3,
  '': 1,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  E: 1e18,
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
  Pi: 2 ** 50,
  Ei: 2 ** 60,
};

/** A Kubernetes quantity ("500m", "1Gi", "1e3", 2) as a number; undefined when it is not one. */
export function quantityValue(value: unknown): number | undefined {
  if (typeof value === 'number') return value;
  if (typeof value !== 'string') return undefined;
  const match = /^([+-]?[0-9.]+)(?:[eE]([+-]?[0-9]+)|(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE])?)$/.exec(value);
  if (!match) return undefined;
  const base = Number(match[1]);
  if (Number.isNaN(base)) return undefined;
  return match[2] !== undefined ? base * 10 ** Number(match[2]) : base * (SUFFIXES[match[3] ?? ''] ?? 1);
}
