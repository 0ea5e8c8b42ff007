import { hash } from 'node:crypto';
import type { PodTemplate } from './kube/objects.js';
import { REVISION_LABEL } from './labels.js';
import { withoutDefaults } from './template-defaults.js';

/** JSON with object keys sorted at every level; arrays keep their order. The same value always gives the same text. */
export function canonicalJson(value: unknown): string {
  // One string built as it goes: every template of a render is hashed, and joining lists of parts cost twice as much.
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) {
    let text = '[';
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      text += `${i > 0 ? ',' : ''}${item === undefined ? 'null' : canonicalJson(item)}`;
    }
    return `${text}]`;
  }
  const object = value as Record<string, unknown>;
  let text = '{';
  for (const key of Object.keys(object).sort()) {
    const item = object[key];
    if (item !== undefined) text += `${text.length > 1 ? ',' : ''}${JSON.stringify(key)}:${canonicalJson(item)}`;
  }
  return `${text}}`;
}

/** First 10 hex characters of SHA-256 over the canonical JSON of `value`. */
export function shortHash(value: unknown): string {
  return hash('sha256', canonicalJson(value)).slice(0, 10);
}

/**
 * The revision of a final regional pod template: its hash with the revision label itself left out, and without the
 * fields equal to the API server's defaults (template-defaults.ts), so that spelling one out replaces no pod. A
 * template that spells no default hashes exactly as it always did.
 */
export function templateRevision(template: PodTemplate): string {
  const normal = withoutDefaults(template);
  const labels = { ...(normal.metadata?.labels ?? {}) };
  delete labels[REVISION_LABEL];
  return shortHash({ ...normal, metadata: { ...normal.metadata, labels } });
}

/** The revision of a whole rollout: one hash over every region's revision, which approvals name. */
export function rolloutRevision(regionRevisions: ReadonlyMap<string, string>): string {
  return shortHash([...regionRevisions.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}
