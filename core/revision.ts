import { hash } from 'node:crypto';
import type { PodTemplate } from './kube/objects.js';
import { REVISION_LABEL } from './labels.js';
import { containerWithoutDefaults, withoutDefaults, withoutDefaultsBy } from './template-defaults.js';

/** JSON with object keys sorted at every level; arrays keep their order. The same value always gives the same text. */
export function canonicalJson(value: unknown): string {
  // One string built as it goes: every template of a render is hashed, and joining lists of parts cost twice as much.
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (value instanceof CanonicalText) return value.text;
  if (Array.isArray(value)) {
    let text = '[';
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      text += `${i > 0 ? ',' : ''}${item === undefined ? 'null' : canonicalJson(item)}`;
    }
    return `${text}]`;
  }
  const object = value as Record<string, unknown>;
  const keys = Object.keys(object);
  // Sorting costs more than seeing that the keys are in order, which they often are (labels, env, resources).
  for (let i = 1; i < keys.length; i++) {
    if (keys[i - 1]! > keys[i]!) {
      keys.sort();
      break;
    }
  }
  let text = '{';
  for (const key of keys) {
    const item = object[key];
    if (item !== undefined) text += `${text.length > 1 ? ',' : ''}${quotedKey(key)}${canonicalJson(item)}`;
  }
  return `${text}}`;
}

/**
 * Keys as JSON, with the colon: the same few keys come again in every template, and quoting one is the dearest step
 * of canonicalJson. The cache is emptied when full, so that keys without end (labels of a long-running agent) hold
 * no memory.
 */
const quotedKeys = new Map<string, string>();
const QUOTED_KEYS_MAX = 10_000;

function quotedKey(key: string): string {
  let quoted = quotedKeys.get(key);
  if (quoted === undefined) {
    if (quotedKeys.size >= QUOTED_KEYS_MAX) quotedKeys.clear();
    quoted = `${JSON.stringify(key)}:`;
    quotedKeys.set(key, quoted);
  }
  return quoted;
}

/** First 10 hex characters of SHA-256 over the canonical JSON of `value`. */
export function shortHash(value: unknown): string {
  return hash('sha256', canonicalJson(value)).slice(0, 10);
}

/** Canonical JSON made already, which canonicalJson writes as it is (only RevisionCache makes one). */
class CanonicalText {
  constructor(readonly text: string) {}
}

/**
 * What templateRevision keeps between the templates of one render: the canonical JSON of each container object it
 * has made, so that a container the regions of an ExtendedDeployment share (core/render.ts) is made once, not once per
 * region. Only for templates whose containers nobody changes while the cache is in use.
 */
export class RevisionCache {
  readonly #containers = new Map<object, CanonicalText>();

  /** A container's entry in the template's canonical JSON: its form without defaults, as text. */
  container(container: unknown): unknown {
    if (container === null || typeof container !== 'object') return containerWithoutDefaults(container);
    let text = this.#containers.get(container);
    if (text === undefined) {
      text = new CanonicalText(canonicalJson(containerWithoutDefaults(container)));
      this.#containers.set(container, text);
    }
    return text;
  }
}

/**
 * The revision of a final regional pod template: its hash with the revision label itself left out, and without the
 * fields equal to the API server's defaults (template-defaults.ts), so that spelling one out replaces no pod. A
 * template that spells no default hashes exactly as it always did. With `cache`, containers it has seen are not made
 * again (RevisionCache).
 */
export function templateRevision(template: PodTemplate, cache?: RevisionCache): string {
  const normal = cache ? withoutDefaultsBy(template, (container) => cache.container(container)) : withoutDefaults(template);
  const labels = { ...(normal.metadata?.labels ?? {}) };
  delete labels[REVISION_LABEL];
  return shortHash({ ...normal, metadata: { ...normal.metadata, labels } });
}

/** The revision of a whole rollout: one hash over every region's revision, which approvals name. */
export function rolloutRevision(regionRevisions: ReadonlyMap<string, string>): string {
  return shortHash([...regionRevisions.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}
