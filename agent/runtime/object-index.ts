import { objectKey, type MetaObject } from '../../core/kube/objects.js';

/** The value an object is filed under, or its values (client-go's IndexFunc returns a list), or none. */
export type IndexValues = string | readonly string[] | undefined;

/** {@link IndexValues} as a list. */
export function indexValueList(values: IndexValues): readonly string[] {
  return values === undefined ? [] : typeof values === 'string' ? [values] : values;
}

/**
 * A secondary index over an informer's cache (client-go's Indexer with one index function): objects grouped by the
 * values computed from each, kept up to date from the informer's add, update and delete events. The reconciler reads
 * one ExtendedDeployment's pods and workloads from it instead of filtering every cached object on every reconcile.
 * Objects are shared with the cache: never modify them.
 */
export class ObjectIndex<T extends MetaObject> {
  private readonly groups = new Map<string, Map<string, T>>();
  /** Object key → the values it is filed under, so an update that changes them (or a delete) finds it. */
  private readonly filedUnder = new Map<string, readonly string[]>();

  constructor(private readonly valuesOf: (object: T) => IndexValues) {}

  /**
   * Files an added or updated object under its current values (and no longer under previous ones). Returns the object
   * it replaces, as filed (none when new, or when it had no index value).
   */
  upsert(object: T): T | undefined {
    const key = objectKey(object.metadata?.namespace, object.metadata?.name ?? '');
    const values = indexValueList(this.valuesOf(object));
    const filed = this.filedUnder.get(key) ?? [];
    const previous = filed.length > 0 ? this.groups.get(filed[0]!)?.get(key) : undefined;
    for (const value of filed) if (!values.includes(value)) this.remove(key, value);
    for (const value of values) {
      let group = this.groups.get(value);
      if (!group) {
        group = new Map<string, T>();
        this.groups.set(value, group);
      }
      group.set(key, object);
    }
    if (values.length > 0) this.filedUnder.set(key, values);
    else this.filedUnder.delete(key);
    return previous;
  }

  /** Forgets a deleted object. */
  delete(object: T): void {
    const key = objectKey(object.metadata?.namespace, object.metadata?.name ?? '');
    for (const value of this.filedUnder.get(key) ?? []) this.remove(key, value);
    this.filedUnder.delete(key);
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
  }
}
