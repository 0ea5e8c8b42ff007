import { ED_KIND } from '../api/identity.js';
import type { ObjectMeta } from '../kube/objects.js';
import { isControlledBy } from '../ownership.js';
import type { FieldPath, Problem } from '../problems.js';
import type { TrafficOwner } from './objects.js';

/**
 * Whether an existing object is this ExtendedDeployment's to write: its controller ownerReference names it (and its
 * uid, when both have one). Labels do not count: anyone can copy a label, and writing over a route someone else made
 * is the Flagger #1857 failure (a user's filters and rules regenerated away).
 */
export function ownsObject(existing: { readonly metadata?: ObjectMeta | undefined }, owner: TrafficOwner): boolean {
  return isControlledBy(existing.metadata?.ownerReferences, { kind: ED_KIND, name: owner.name, uid: owner.uid });
}

/**
 * The problem of an object the agent would create under a name another owner (Git, a person, another
 * ExtendedDeployment) already uses; undefined when the object is absent or this ExtendedDeployment's. The agent then
 * writes none of its traffic objects: a half-written set (new Services, no route) would be worse than none.
 */
export function clashProblem(
  kind: string,
  existing: { readonly metadata?: ObjectMeta | undefined } | undefined,
  owner: TrafficOwner,
  path: FieldPath,
): Problem | undefined {
  if (existing === undefined || ownsObject(existing, owner)) return undefined;
  const controller = existing.metadata?.ownerReferences?.find((r) => r.controller === true);
  const by = controller ? `${controller.kind ?? 'an object'} ${controller.name ?? ''}`.trim() : 'no controller (Git or a person made it)';
  return {
    object: { kind: ED_KIND, name: owner.name, namespace: owner.namespace },
    path,
    message: `${kind} ${owner.namespace}/${existing.metadata?.name ?? ''} exists and is not this ExtendedDeployment's (controlled by ${by}): rename or delete it, the agent never writes over it`,
  };
}
