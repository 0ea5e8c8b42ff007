import type { OwnerReference } from '../ownership.js';

/** metadata.ownerReferences of a pod the ReplicaSet `name` created (as its controller sets them; uid when given). */
export function controlledBy(name: string, uid?: string, kind = 'ReplicaSet'): OwnerReference[] {
  return [{ apiVersion: 'apps/v1', kind, name, ...(uid !== undefined && { uid }), controller: true }];
}
