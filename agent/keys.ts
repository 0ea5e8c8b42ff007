import { API_GROUP, ED_KIND } from '../core/api/identity.js';
import { NAME_LABEL } from '../core/labels.js';
import { regionEntries } from '../core/parse.js';
import { dashPrefixes } from '../core/render.js';
import { revisionServiceName } from '../core/traffic/services.js';
import { objectKey, type DeployRegionObject, type ExtendedDeploymentObject, type MetaObject } from '../core/kube/objects.js';
import type { IndexedCacheReader } from './runtime/informer.js';

declare const keyKind: unique symbol;

/**
 * The work-queue key of an ExtendedDeployment: `namespace/name`. Branded so that the compiler keeps it off the
 * DeployRegion status queue (and a {@link RegionKey} off the ExtendedDeployment queue); at run time a plain string,
 * which is what the queue dedupes by.
 */
export type EdKey = string & { readonly [keyKind]: 'ExtendedDeployment' };

/** The work-queue key of a DeployRegion, whose status the agent writes: its name (DeployRegions are cluster-scoped). */
export type RegionKey = string & { readonly [keyKind]: 'DeployRegion' };

/** The key of the ExtendedDeployment `namespace/name`. */
export function edKeyOf(namespace: string, name: string): EdKey {
  return objectKey(namespace, name) as EdKey;
}

/** The queue key of an ExtendedDeployment. */
export function edKey(ed: ExtendedDeploymentObject): EdKey | undefined {
  const name = ed.metadata?.name;
  return name ? edKeyOf(ed.metadata?.namespace ?? '', name) : undefined;
}

/**
 * The ExtendedDeployment a regional workload or pod belongs to, from its name label (the renderer sets it on both),
 * in the object's own namespace.
 */
export function ownerKey(object: MetaObject): EdKey | undefined {
  const owner = object.metadata?.labels?.[NAME_LABEL];
  return owner && object.metadata?.namespace ? edKeyOf(object.metadata.namespace, owner) : undefined;
}

/**
 * The ExtendedDeployment a traffic object (a Service, an HTTPRoute) concerns: the one its ownerReference names (the
 * agent's revision Services and route; a change of a route's status is what lets a group barrier pass), else the one
 * its name label names (a Service or route rendered into Git), in the object's own namespace.
 */
export function trafficOwnerKey(object: MetaObject): EdKey | undefined {
  const namespace = object.metadata?.namespace;
  if (!namespace) return undefined;
  const owner = object.metadata?.ownerReferences?.find((r) => r.kind === ED_KIND && r.apiVersion?.startsWith(`${API_GROUP}/`) && r.name);
  return owner?.name ? edKeyOf(namespace, owner.name) : ownerKey(object);
}

/**
 * Whether the Service `name` concerns the traffic of ExtendedDeployment `ed`: named `<ed>-…`, or the revision Service
 * name of `ed` for its last segment (revisionServiceName cuts a long ExtendedDeployment name to fit 63 characters).
 */
export function namedForTraffic(ed: string, name: string | undefined): boolean {
  if (name === undefined || ed === '') return false;
  if (name.startsWith(`${ed}-`)) return true;
  const dash = name.lastIndexOf('-');
  return dash > 0 && revisionServiceName(ed, name.slice(dash + 1)) === name;
}

/**
 * The ExtendedDeployments a change of a Service or HTTPRoute concerns: its owner ({@link trafficOwnerKey}); for one of
 * nobody's, those of its namespace whose traffic objects take its name (the route `<ed>`, a Service `<ed>-…`): the
 * object in their way appeared or went, and a barrier it held may pass.
 */
export function trafficKeys(object: MetaObject, kind: 'Service' | 'HTTPRoute', eds: readonly ExtendedDeploymentObject[]): EdKey[] {
  const owner = trafficOwnerKey(object);
  if (owner) return [owner];
  const name = object.metadata?.name;
  const namespace = object.metadata?.namespace;
  if (!name || !namespace) return [];
  const takes = (ed: string) => (kind === 'HTTPRoute' ? ed === name : namedForTraffic(ed, name));
  return eds.filter((ed) => ed.metadata?.namespace === namespace && takes(ed.metadata?.name ?? '')).flatMap((ed) => edKey(ed) ?? []);
}

/** The queue key of the DeployRegion `name`. */
export function regionKey(name: string): RegionKey {
  return name as RegionKey;
}

/** The keys of every ExtendedDeployment that runs in `region` (any change to a region can change their render). */
export function keysUsingRegion(region: DeployRegionObject, eds: readonly ExtendedDeploymentObject[]): EdKey[] {
  const name = region.metadata?.name;
  if (!name) return [];
  return eds.filter((ed) => regionEntries(ed).some((r) => r.name === name)).flatMap((ed) => edKey(ed) ?? []);
}

/**
 * The values the agent's ExtendedDeployment cache files `ed` under: `namespace/prefix` for each name its name extends
 * with a dash (core/render.ts dashPrefixes). Under `shop/a` are then every `shop/a-…`.
 */
export function workloadNameIndex(ed: MetaObject): string[] {
  const namespace = ed.metadata?.namespace ?? '';
  return dashPrefixes(ed.metadata?.name ?? '').map((prefix) => objectKey(namespace, prefix));
}

/**
 * The cached ExtendedDeployments of `namespace` whose workloads can get the same names as those of the one named
 * `name` (workloadNamesMayCollide), that one included when cached: the names it extends with a dash, looked up, and
 * those extending it, from the cache's {@link workloadNameIndex}. A reconcile reads them on every look, so not by a
 * scan of the namespace, which made the looks of a namespace of N objects cost N² in all.
 */
export function workloadNameNeighbours<T extends MetaObject>(cache: IndexedCacheReader<T>, namespace: string, name: string): T[] {
  const named = [name, ...dashPrefixes(name)].flatMap((n) => cache.get(n, namespace) ?? []);
  return [...named, ...cache.byIndex(objectKey(namespace, name))];
}

/**
 * The keys of the other ExtendedDeployments of `ed`'s namespace whose workloads can share a name with `ed`'s, whatever
 * the regions (see workloadNamesMayCollide): a change of `ed` can start or end a collision that makes them invalid, so
 * they are looked at again. Known from the names alone, so a change that ends a collision needs no old object.
 */
export function keysSharingWorkloadNames(ed: ExtendedDeploymentObject, eds: IndexedCacheReader<ExtendedDeploymentObject>): EdKey[] {
  const name = ed.metadata?.name;
  if (!name) return [];
  return workloadNameNeighbours(eds, ed.metadata?.namespace ?? '', name)
    .filter((other) => other.metadata?.name !== name)
    .flatMap((other) => edKey(other) ?? []);
}
