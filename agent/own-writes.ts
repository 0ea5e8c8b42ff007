import type { ED_KIND } from '../core/api/identity.js';
import type { WorkloadKind } from '../core/kube/objects.js';
import type { MetaObject } from '../core/kube/objects.js';
import { compareResourceVersions } from './runtime/resource-version.js';

/** The kinds of object the agent writes for an ExtendedDeployment. */
export type WrittenKind = 'Pod' | WorkloadKind | typeof ED_KIND | 'ControllerRevision';

/** One write the agent made. */
export interface OwnWrite {
  readonly kind: WrittenKind;
  readonly name: string;
  /** The resourceVersion the object had when the agent planned the write. */
  readonly replaced: string;
  /** The object as the API server answered the write; undefined when it answered none (a delete, a pod already gone). */
  readonly written?: MetaObject | undefined;
  /** The write created the object: until the cache shows it, its absence there is the cache being behind, not a deletion. */
  readonly created?: boolean;
}

/** What a key's own writes mean for planning it now. */
export type OwnWritesView =
  | { readonly behind: true }
  | {
      readonly behind: false;
      /** `kind/name` → the object as the agent's write left it, where the cache still shows an older version. */
      readonly newer: ReadonlyMap<string, MetaObject>;
    };

/** How long a key's writes are tracked at most: the caches show them within this (or the watch is down). */
export const OWN_WRITES_TTL_MS = 5_000;

interface Tracked {
  readonly at: number;
  /** Every version this object's chain of writes replaced (a write may build on the answer to the one before). */
  readonly replaced: ReadonlySet<string>;
  readonly written: MetaObject | undefined;
  readonly created: boolean;
}

/** The map key of an object among a key's writes. */
export const writtenId = (kind: WrittenKind, name: string) => `${kind}/${name}`;

/**
 * What each key's reconciles wrote that the caches may not show yet (client-go controllers call these expectations).
 * Planning on a cache that is behind the agent's own writes would write the same status, scale or marks again, or
 * create a history revision again. So where the API server answered a write with the object, the key is planned on
 * that answer until the cache shows it (or something newer): no wait for the watch. Where it answered none, the key
 * waits until the cache moves on.
 *
 * "The cache shows an older version" is decided by comparing resourceVersions (Kubernetes 1.35+ guarantees they
 * compare as integers: KEP-5504); where a server's versions do not compare, by the versions the writes replaced.
 * Every planned write changes its object or finds it changed or gone, so the cache moves on; the TTL covers what it
 * cannot see (a watch that is down), after which the key is planned on whatever the cache shows.
 */
export class OwnWrites {
  private readonly byKey = new Map<string, Map<string, Tracked>>();

  /** Records writes made for `key` (each replaces what was tracked for its object). */
  record(key: string, writes: readonly OwnWrite[], now: number): void {
    if (writes.length === 0) return;
    const tracked = this.byKey.get(key) ?? new Map<string, Tracked>();
    for (const write of writes) {
      const id = writtenId(write.kind, write.name);
      const previous = tracked.get(id);
      const chained = previous?.written?.metadata?.resourceVersion === write.replaced ? previous : undefined;
      const replaced = new Set([...(chained?.replaced ?? []), write.replaced]);
      tracked.set(id, { at: now, replaced, written: write.written, created: write.created === true || chained?.created === true });
    }
    this.byKey.set(key, tracked);
  }

  /**
   * The key's writes against the caches: `cached` gives the object the cache shows now (undefined when gone). Writes
   * the cache shows (or newer), gone objects (but those the key's writes created: not yet there) and writes past the
   * TTL are forgotten.
   */
  view(key: string, cached: (kind: WrittenKind, name: string) => MetaObject | undefined, now: number): OwnWritesView {
    const tracked = this.byKey.get(key);
    const newer = new Map<string, MetaObject>();
    if (!tracked) return { behind: false, newer };
    let behind = false;
    for (const [id, entry] of tracked) {
      const [kind, name] = splitId(id);
      const current = cached(kind, name);
      const version = current?.metadata?.resourceVersion ?? '';
      if ((!current && !entry.created) || now - entry.at >= OWN_WRITES_TTL_MS) {
        tracked.delete(id);
        continue;
      }
      if (!current) {
        // Created, and not in the cache yet: planned on as the API server answered (a created object always has an answer).
        if (entry.written) newer.set(id, entry.written);
        continue;
      }
      const answered = entry.written?.metadata?.resourceVersion;
      const order = answered === undefined ? undefined : compareResourceVersions(version, answered);
      const older = order !== undefined ? order < 0 : entry.replaced.has(version);
      if (!older) tracked.delete(id);
      else if (entry.written) newer.set(id, entry.written);
      else behind = true;
    }
    if (tracked.size === 0) this.byKey.delete(key);
    return behind ? { behind } : { behind, newer };
  }

  /** The object as the key's last tracked write of it left it (the API server's answer); undefined when none is tracked. */
  written(key: string, kind: WrittenKind, name: string): MetaObject | undefined {
    return this.byKey.get(key)?.get(writtenId(kind, name))?.written;
  }

  /**
   * Whether `object` is the API server's answer to the key's last tracked write of it (the same resourceVersion): its
   * watch event brings nothing that the reconcile which wrote it did not plan on.
   */
  isAnswer(key: string, kind: WrittenKind, object: MetaObject): boolean {
    const version = object.metadata?.resourceVersion;
    return version !== undefined && this.written(key, kind, object.metadata?.name ?? '')?.metadata?.resourceVersion === version;
  }

  forget(key: string): void {
    this.byKey.delete(key);
  }
}

function splitId(id: string): [WrittenKind, string] {
  const slash = id.indexOf('/');
  return [id.slice(0, slash) as WrittenKind, id.slice(slash + 1)];
}
