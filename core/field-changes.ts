import { formatPath, type FieldPath } from './problems.js';

/** One changed leaf of a JSON document: absent `from` means added, absent `to` means removed. */
export interface FieldChange {
  /** As Kubernetes prints it: `spec.containers[0].image`, `metadata.labels["app.kubernetes.io/name"]`. */
  readonly path: string;
  readonly from?: unknown;
  readonly to?: unknown;
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * Every path where `to` differs from `from`, in `to`'s key order (keys only in `from` after). Objects are compared key
 * by key and arrays index by index (so `containers[0]` is the first container before and after); a value whose type
 * changes, or an item or key that exists on one side only, is one change with the whole value.
 */
export function fieldChanges(from: unknown, to: unknown, path: FieldPath = []): FieldChange[] {
  if (isObject(from) && isObject(to)) {
    const keys = [...Object.keys(to), ...Object.keys(from).filter((k) => !(k in to))];
    return keys.flatMap((k) => fieldChanges(from[k], to[k], [...path, k]));
  }
  if (Array.isArray(from) && Array.isArray(to)) {
    return Array.from({ length: Math.max(from.length, to.length) }, (_, i) => fieldChanges(from[i], to[i], [...path, i])).flat();
  }
  if (from === undefined && to === undefined) return [];
  if (JSON.stringify(from) === JSON.stringify(to)) return [];
  return [{ path: formatPath(path), ...(from !== undefined && { from }), ...(to !== undefined && { to }) }];
}
