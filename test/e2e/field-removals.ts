// Fields that leave objects a GitOps engine manages, as watches see them version by version. Argo CD's server-side
// diff compares an object from its cache with a dry-run apply of Git's manifest against the API server, and keeps of
// the dry-run only the fields Argo CD owns; a field someone else owns that is in the cached version and gone from the
// server's (removed in between) still shows as a difference, although Git never named it, and self-heal syncs the
// object again. Changed and added fields do not. So nothing but Git may remove a field from an object Git manages.
import { Watch } from '@kubernetes/client-node';
import type { MetaObject, ObjectMeta } from '../../core/kube/objects.js';
import { fieldOwners, type ManagedFieldsEntry } from './gitops-kit.js';
import { clients, sleep } from './helpers.js';

/** A field that one version of an object had and the next lacked, while the engine's manager did not own it. */
export interface FieldRemoval {
  readonly at: number;
  /** `Kind namespace/name`. */
  readonly object: string;
  /** The version that lacks it. */
  readonly resourceVersion: string;
  /** `metadata.annotations["…"]`, `metadata.labels["…"]` or a path into spec. */
  readonly field: string;
  /** The managers whose entry in managedFields that version added or changed: who wrote it. */
  readonly writers: readonly string[];
}

/** An object as a watch event carries it (the parts read here). */
export interface Watched extends MetaObject {
  metadata?: ObjectMeta & { managedFields?: ManagedFieldsEntry[] };
  spec?: Record<string, unknown>;
}

/** Each field of labels, annotations and spec → its path in managedFields (a list counts as one field: owned when any of it is). */
function fields(o: Watched): Map<string, readonly string[]> {
  const out = new Map<string, readonly string[]>();
  for (const map of ['labels', 'annotations'] as const) {
    for (const key of Object.keys(o.metadata?.[map] ?? {})) out.set(`metadata.${map}[${JSON.stringify(key)}]`, ['f:metadata', `f:${map}`, `f:${key}`]);
  }
  const walk = (value: unknown, path: readonly string[], shown: string) => {
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
      for (const [k, v] of Object.entries(value)) walk(v, [...path, `f:${k}`], `${shown}.${k}`);
    } else out.set(shown, path);
  };
  walk(o.spec ?? {}, ['f:spec'], 'spec');
  return out;
}

function writers(before: Watched, after: Watched): string[] {
  const key = (m: ManagedFieldsEntry) => `${m.manager}/${m.operation}/${m.subresource ?? ''}`;
  const was = new Map((before.metadata?.managedFields ?? []).map((m) => [key(m), JSON.stringify(m)]));
  return (after.metadata?.managedFields ?? []).filter((m) => was.get(key(m)) !== JSON.stringify(m)).map((m) => m.manager ?? '?');
}

/** Watches whose collected removals are read when the suite ends. */
export interface FieldRemovalWatch {
  readonly removals: readonly FieldRemoval[];
  /** Versions compared so far (each with the one before it), by kind. */
  readonly compared: ReadonlyMap<string, number>;
  stop(): void;
}

/**
 * Watches `paths` (list URLs, cluster-wide) and records every field a version of an object `managed` accepts lacks
 * against its previous version, unless `manager` (the engine's field manager) owned it there. A watch that ends or
 * fails is opened again, from a fresh list: the versions in between are not seen, so a removal that they hide is missed,
 * never invented.
 */
export async function watchFieldRemovals(paths: readonly string[], managed: (o: Watched) => boolean, manager: string): Promise<FieldRemovalWatch> {
  const removals: FieldRemoval[] = [];
  const last = new Map<string, Watched>();
  const compared = new Map<string, number>();
  let running = true;
  const aborts: { abort(): void }[] = [];
  const seen = (type: string, o: Watched) => {
    const uid = o.metadata?.uid ?? '';
    if (type === 'DELETED') return void last.delete(uid);
    if (type !== 'ADDED' && type !== 'MODIFIED') return;
    if (!managed(o)) return;
    const before = last.get(uid);
    last.set(uid, o);
    if (!before || before.metadata?.resourceVersion === o.metadata?.resourceVersion) return;
    compared.set(o.kind ?? '', (compared.get(o.kind ?? '') ?? 0) + 1);
    const now = fields(o);
    for (const [field, path] of fields(before)) {
      if (now.has(field) || fieldOwners(before, path).includes(manager)) continue;
      const object = `${o.kind ?? ''} ${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}`;
      removals.push({ at: Date.now(), object, resourceVersion: o.metadata?.resourceVersion ?? '', field, writers: writers(before, o) });
    }
  };
  const open = async (path: string): Promise<void> => {
    const done = () => {
      if (running) void sleep(1000).then(() => (running ? open(path) : undefined));
    };
    try {
      aborts.push(await new Watch(clients().kc).watch(path, {}, seen, done));
    } catch {
      done();
    }
  };
  await Promise.all(paths.map(open));
  return {
    get removals() {
      return removals;
    },
    compared,
    stop() {
      running = false;
      for (const a of aborts) a.abort();
    },
  };
}
