import { NAME_LABEL } from '../core/labels.js';
import { regionEntries } from '../core/parse.js';
import { workloadNamesMayCollide } from '../core/render.js';
import { objectKey, type DeployRegionObject, type ExtendedDeploymentObject, type MetaObject } from './objects.js';

/** The queue key of an ExtendedDeployment. */
export function edKey(ed: ExtendedDeploymentObject): string | undefined {
  const name = ed.metadata?.name;
  return name ? objectKey(ed.metadata?.namespace, name) : undefined;
}

/**
 * The ExtendedDeployment a regional workload or pod belongs to, from its name label (the renderer sets it on both),
 * in the object's own namespace.
 */
export function ownerKey(object: MetaObject): string | undefined {
  const owner = object.metadata?.labels?.[NAME_LABEL];
  return owner && object.metadata?.namespace ? objectKey(object.metadata.namespace, owner) : undefined;
}

/**
 * Queue keys of DeployRegions (whose status the agent writes) share the queue with ExtendedDeployment keys
 * (`namespace/name`); the prefix has capitals, which no namespace name can, so the two never collide.
 */
const REGION_KEY_PREFIX = 'DeployRegion/';

/** The queue key of the DeployRegion `name`. */
export function regionKey(name: string): string {
  return `${REGION_KEY_PREFIX}${name}`;
}

/** The DeployRegion name of a region key, or undefined for an ExtendedDeployment key. */
export function regionOfKey(key: string): string | undefined {
  return key.startsWith(REGION_KEY_PREFIX) ? key.slice(REGION_KEY_PREFIX.length) : undefined;
}

/** The keys of every ExtendedDeployment that runs in `region` (any change to a region can change their render). */
export function keysUsingRegion(region: DeployRegionObject, eds: readonly ExtendedDeploymentObject[]): string[] {
  const name = region.metadata?.name;
  if (!name) return [];
  return eds.filter((ed) => regionEntries(ed).some((r) => r.name === name)).flatMap((ed) => edKey(ed) ?? []);
}

/**
 * The keys of the other ExtendedDeployments of `ed`'s namespace whose workloads can share a name with `ed`'s, whatever
 * the regions (see workloadNamesMayCollide): a change of `ed` can start or end a collision that makes them invalid, so
 * they are looked at again. Known from the names alone, so a change that ends a collision needs no old object.
 */
export function keysSharingWorkloadNames(ed: ExtendedDeploymentObject, eds: readonly ExtendedDeploymentObject[]): string[] {
  const name = ed.metadata?.name;
  const namespace = ed.metadata?.namespace;
  if (!name) return [];
  return eds
    .filter((other) => other.metadata?.namespace === namespace && other.metadata?.name !== name && workloadNamesMayCollide(name, other.metadata?.name ?? ''))
    .flatMap((other) => edKey(other) ?? []);
}
