import { renderedRevisionOf } from '../rollout/growth.js';
import { API_GROUP, ED_KIND, VERSION } from '../api/identity.js';
import { CHANGE_CAUSE_ANNOTATION, CURRENT_SINCE_ANNOTATION, ROLLOUT_REVISION_ANNOTATION } from '../labels.js';
import { isControlledBy, type OwnerReference } from '../ownership.js';
import { timestampMs, type ControllerRevisionObject, type PodTemplate } from '../kube/objects.js';
export type { ControllerRevisionObject } from '../kube/objects.js';

/** What one region ran in a recorded revision: its region revision and the pod template its workload carried. */
export interface RegionTemplate {
  readonly region: string;
  readonly revision: string;
  readonly template: PodTemplate;
}

/** The `data` of a ControllerRevision the agent records. */
export interface RevisionData {
  readonly regions: readonly RegionTemplate[];
}

/** One revision of an ExtendedDeployment, read from a ControllerRevision it owns. */
export interface HistoryEntry {
  /** The ControllerRevision's name, uid and resourceVersion (for writes guarded by them). */
  readonly name: string;
  readonly uid: string;
  readonly resourceVersion: string;
  /** The order of the revisions: a larger number became current later. */
  readonly revision: number;
  /** The rollout revision (status.revision, the rollout-revision annotation) the templates hash to. */
  readonly rolloutRevision: string;
  /** When it last became current (ms); the object's creation when the annotation is missing. */
  readonly currentSince: number | undefined;
  /** The ExtendedDeployment's `kubernetes.io/change-cause` when it became current. */
  readonly changeCause: string | undefined;
  /** What each region ran; empty when the data is unreadable. */
  readonly regions: readonly RegionTemplate[];
}

/** The ExtendedDeployment that owns revisions, as far as ownership reads it. */
export interface HistoryOwner {
  readonly name: string;
  /** Empty when never stored by an API server (a test): then the kind and name decide, as in core/ownership.ts. */
  readonly uid: string | undefined;
}

/** The name of the ControllerRevision of `rolloutRevision`: stable, so recording it again finds the same object. */
export function revisionName(ed: string, rolloutRevision: string): string {
  return `${ed}-${renderedRevisionOf(rolloutRevision)}`;
}

/** The controller ownerReference of every revision the agent records for `owner`. */
export function revisionOwnerReference(owner: HistoryOwner): OwnerReference & { blockOwnerDeletion: false } {
  // blockOwnerDeletion false: deleting the ExtendedDeployment never waits for its history.
  return { apiVersion: `${API_GROUP}/${VERSION}`, kind: ED_KIND, name: owner.name, uid: owner.uid ?? '', controller: true, blockOwnerDeletion: false };
}

/**
 * The revisions of `owner` among `objects`, oldest first: only those whose controller ownerReference is the
 * ExtendedDeployment (another controller's ControllerRevision may carry its name label). Read leniently, so a revision
 * someone edited is still counted and pruned: a missing number is 0, a missing rollout revision is taken from the
 * name, unreadable data gives no regions.
 */
export function historyEntries(owner: HistoryOwner, objects: readonly ControllerRevisionObject[]): HistoryEntry[] {
  const ownerId = { kind: ED_KIND, name: owner.name, uid: owner.uid };
  return objects
    .filter((o) => o.metadata?.name && isControlledBy(o.metadata.ownerReferences, ownerId))
    .map((o): HistoryEntry => {
      const name = o.metadata?.name ?? '';
      const annotations = o.metadata?.annotations ?? {};
      const prefix = `${owner.name}-`;
      return {
        name,
        uid: o.metadata?.uid ?? '',
        resourceVersion: o.metadata?.resourceVersion ?? '',
        revision: Number.isSafeInteger(o.revision) && (o.revision ?? 0) >= 0 ? (o.revision ?? 0) : 0,
        rolloutRevision: annotations[ROLLOUT_REVISION_ANNOTATION] ?? (name.startsWith(prefix) ? name.slice(prefix.length) : name),
        currentSince: timestampMs(annotations[CURRENT_SINCE_ANNOTATION]) ?? timestampMs(o.metadata?.creationTimestamp),
        changeCause: annotations[CHANGE_CAUSE_ANNOTATION],
        regions: regionTemplates(o.data),
      };
    })
    .sort((a, b) => a.revision - b.revision || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

function regionTemplates(data: unknown): RegionTemplate[] {
  const regions = (data as { regions?: unknown } | null | undefined)?.regions;
  if (!Array.isArray(regions)) return [];
  return regions.filter((r: unknown): r is RegionTemplate => {
    const entry = r as Partial<Record<keyof RegionTemplate, unknown>> | null;
    return typeof entry?.region === 'string' && typeof entry.revision === 'string' && typeof entry.template === 'object' && entry.template !== null;
  });
}
