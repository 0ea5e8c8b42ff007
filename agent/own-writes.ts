import type { WorkloadKind } from './actuators.js';

/** An object the agent wrote, by kind and name, at the resourceVersion the cache showed it when the agent planned. */
export interface WrittenObject {
  readonly kind: 'Pod' | WorkloadKind;
  readonly name: string;
  readonly resourceVersion: string;
}

/** How long a key waits at most for its caches to show its own writes. */
export const OWN_WRITES_TTL_MS = 5_000;

/**
 * What each key's last reconcile wrote (client-go controllers call these expectations). While a cache still shows one
 * of those objects at the version the write replaced, it is behind the agent's own writes: planning on it would write
 * the same scale, marks or status again. Every planned write changes its object (the planner only writes what differs
 * from the cache) or finds it changed or gone, so the cache moves on; the TTL covers what it cannot see (a watch that
 * is down), after which the key is planned on whatever the cache shows.
 */
export class OwnWrites {
  private readonly byKey = new Map<string, { readonly at: number; readonly objects: readonly WrittenObject[] }>();

  /** Records the objects `key`'s reconcile wrote (replacing what it wrote before). */
  expect(key: string, objects: readonly WrittenObject[], now: number): void {
    if (objects.length === 0) this.byKey.delete(key);
    else this.byKey.set(key, { at: now, objects });
  }

  /**
   * Whether the cache is still behind `key`'s writes: `current` gives the version the cache shows now (undefined when
   * the object is gone). A key whose writes all show, or whose wait passed the TTL, is forgotten.
   */
  behind(key: string, current: (object: WrittenObject) => string | undefined, now: number): boolean {
    const entry = this.byKey.get(key);
    if (!entry) return false;
    if (now - entry.at < OWN_WRITES_TTL_MS && entry.objects.some((o) => current(o) === o.resourceVersion)) return true;
    this.byKey.delete(key);
    return false;
  }

  forget(key: string): void {
    this.byKey.delete(key);
  }
}
