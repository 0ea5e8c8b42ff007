import type { KubernetesObject } from '@kubernetes/client-node';
import { objectKey } from '../../core/kube/objects.js';

/**
 * A secondary index over an informer's cache (client-go's Indexer with one index function): objects grouped by a
 * value computed from each, kept up to date from the informer's add, update and delete events. The reconciler reads
 * one ExtendedDeployment's pods and workloads from it instead of filtering every cached object on every reconcile.
 * Objects are shared with the cache: never modify them.
 */
export class ObjectIndex<T extends KubernetesObject> {
  private readonly groups = new Map<string, Map<string, T>>();
  /** Object key → the value it is filed under, so an update that changes the value (or a delete) finds it. */
  private readonly filedUnder = new Map<string, string>();

  constructor(private readonly valueOf: (object: T) => string | undefined) {}

  /** Files an added or updated object under its current value (and no longer under a previous one). */
  upsert(object: T): void {
    const key = objectKey(object.metadata?.namespace, object.metadata?.name ?? '');
    const value = this.valueOf(object);
    const previous = this.filedUnder.get(key);
    if (previous !== undefined && previous !== value) this.remove(key, previous);
    if (value === undefined) return;
    let group = this.groups.get(value);
    if (!group) {
      group = new Map<string, T>();
      this.groups.set(value, group);
    }
    group.set(key, object);
    this.filedUnder.set(key, value);
  }

  /** Forgets a deleted object. */
  delete(object: T): void {
    const key = objectKey(object.metadata?.namespace, object.metadata?.name ?? '');
    const value = this.filedUnder.get(key);
    if (value !== undefined) this.remove(key, value);
  }

  /** The objects filed under `value`. */
  get(value: string): readonly T[] {
    const group = this.groups.get(value);
    return group ? [...group.values()] : [];
  }

  private remove(key: string, value: string): void {
    const group = this.groups.get(value);
    group?.delete(key);
    if (group?.size === 0) this.groups.delete(value);
    this.filedUnder.delete(key);
  }
}
