import type { KubernetesObject } from '@kubernetes/client-node';
import type { RunningInformer } from './informer.js';

/**
 * One resource watched in several namespaces, one informer each (a namespaced install: RBAC grants list and watch in
 * those namespaces only, so a cluster-wide watch is refused), read as one cache, as controller-runtime's multi-namespace
 * cache does. A namespace argument reads only its informer; none reads all of them.
 */
export class NamespacedInformer<T extends KubernetesObject> implements RunningInformer<T> {
  private readonly byNamespace: ReadonlyMap<string, RunningInformer<T>>;

  /** `informers` maps each watched namespace to its informer (at least one). */
  constructor(
    readonly resource: string,
    informers: ReadonlyMap<string, RunningInformer<T>>,
  ) {
    this.byNamespace = informers;
  }

  private get members(): RunningInformer<T>[] {
    return [...this.byNamespace.values()];
  }

  list(namespace?: string): readonly T[] {
    if (namespace !== undefined) return this.byNamespace.get(namespace)?.list(namespace) ?? [];
    return this.members.flatMap((i) => i.list());
  }

  get(name: string, namespace?: string): T | undefined {
    if (namespace !== undefined) return this.byNamespace.get(namespace)?.get(name, namespace);
    for (const informer of this.members) {
      const found = informer.get(name);
      if (found) return found;
    }
    return undefined;
  }

  byIndex(value: string): readonly T[] {
    return this.members.flatMap((i) => i.byIndex(value));
  }

  synced(): boolean {
    return this.members.every((i) => i.synced());
  }

  stuck(): string | undefined {
    const reasons = this.members.map((i) => i.stuck()).filter((r): r is string => r !== undefined);
    return reasons.length > 0 ? reasons.join('; ') : undefined;
  }

  forbidden(): 'list' | 'watch' | undefined {
    return this.members.map((i) => i.forbidden()).find((verb) => verb !== undefined);
  }

  start(): void {
    for (const informer of this.members) informer.start();
  }

  async stop(): Promise<void> {
    await Promise.all(this.members.map((i) => i.stop()));
  }
}
