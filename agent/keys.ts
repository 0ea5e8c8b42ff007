import { NAME_LABEL } from '../core/labels.js';
import { regionEntries } from '../core/parse.js';
import { workloadNamesMayCollide } from '../core/render.js';
import { objectKey, type DeployRegionObject, type ExtendedDeploymentObject, type MetaObject } from '../core/kube/objects.js';

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
 * The keys of the other ExtendedDeployments of `ed`'s namespace whose workloads can share a name with `ed`'s, whatever
 * the regions (see workloadNamesMayCollide): a change of `ed` can start or end a collision that makes them invalid, so
 * they are looked at again. Known from the names alone, so a change that ends a collision needs no old object.
 */
export function keysSharingWorkloadNames(ed: ExtendedDeploymentObject, eds: readonly ExtendedDeploymentObject[]): EdKey[] {
  const name = ed.metadata?.name;
  const namespace = ed.metadata?.namespace;
  if (!name) return [];
  return eds
    .filter((other) => other.metadata?.namespace === namespace && other.metadata?.name !== name && workloadNamesMayCollide(name, other.metadata?.name ?? ''))
    .flatMap((other) => edKey(other) ?? []);
}
