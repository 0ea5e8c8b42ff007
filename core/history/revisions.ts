import { renderedRevisionOf } from '../rollout/growth.js';
import { CHANGE_CAUSE_ANNOTATION, CURRENT_SINCE_ANNOTATION, NAME_LABEL, REVISION_LABEL, ROLLOUT_REVISION_ANNOTATION } from '../labels.js';
import type { ExtendedDeploymentObject, ObjectMeta, PodTemplate, Workloads } from '../kube/objects.js';
import { workloadName } from '../kube/workload-kinds.js';
import { workloadKindOf, workloadsOfKind } from '../kube/workload-kinds.js';
import type { RolloutInput } from '../rollout/planner.js';
import { isPodActive } from '../rollout/pod-activity.js';
import type { RegionState } from '../rollout/snapshot.js';
import { withoutDefaults } from '../template-defaults.js';
import { historyEntries, revisionName, revisionOwnerReference, type ControllerRevisionObject, type HistoryEntry, type RevisionData } from './entries.js';

/** A write to an ExtendedDeployment's history. */
export type HistoryAction =
  /** Record a rollout revision seen current for the first time (AlreadyExists means it is recorded). */
  | { readonly kind: 'create'; readonly object: ControllerRevisionObject }
  /**
   * Make a recorded revision the newest again (a Git revert): the stored object renumbered, a replace guarded by its
   * resourceVersion. Its data stays: the API server keeps a ControllerRevision's data immutable.
   */
  | { readonly kind: 'update'; readonly object: ControllerRevisionObject }
  /** Prune a revision beyond `historyLimit`, guarded by its uid. */
  | { readonly kind: 'delete'; readonly name: string; readonly uid: string };

/** What one region runs now: the revision it must reach, and the template its workload carries (none without a workload). */
export interface LiveTemplate {
  readonly region: string;
  readonly targetRevision: string;
  readonly template: PodTemplate | undefined;
}

/** Everything the history decision reads. */
export interface HistoryInput {
  /** The ExtendedDeployment as stored: its name, namespace, uid and annotations (the change cause). */
  readonly ed: ExtendedDeploymentObject;
  /** spec.historyLimit: recorded revisions kept besides the current one. */
  readonly historyLimit: number;
  /** The current rollout revision (a session suffix `+n` is ignored). */
  readonly rolloutRevision: string;
  /** Every region of the spec, in declared order. */
  readonly regions: readonly LiveTemplate[];
  /** The ControllerRevisions labelled with the ExtendedDeployment's name (whoever owns them). */
  readonly existing: readonly ControllerRevisionObject[];
  readonly now: number;
  /** What partitions keep (heldRevisions): a revision holding one of these templates is never pruned. */
  readonly held?: readonly HeldRevision[];
}

/** A region revision a partition keeps: its old pods run it, or its keeper makes them (core/rollout/keeper.ts). */
export interface HeldRevision {
  readonly region: string;
  readonly revision: string;
}

/**
 * The region revisions the regions' partitions keep: those of their old pods and of their keepers. A keeper is made
 * from the history's template of its revision, so that template outlives `historyLimit` while a partition keeps it.
 */
export function heldRevisions(regions: readonly RegionState[]): HeldRevision[] {
  return regions.flatMap((r) => {
    if (!r.partition) return [];
    const revisions = new Set([...r.pods.filter((p) => isPodActive(p) && p.revision !== r.targetRevision).map((p) => p.revision), r.keeper?.revision]);
    return [...revisions].flatMap((revision) => (revision === undefined || revision === r.targetRevision ? [] : [{ region: r.name, revision }]));
  });
}

/**
 * The regions' live templates, from the planner's input and the ExtendedDeployment's workloads: each region's
 * `<ed>-<region>` ReplicaSet (or Deployment in compat mode, or StatefulSet).
 */
export function liveTemplates(input: Pick<RolloutInput, 'ed' | 'regions'>, workloads: Workloads): LiveTemplate[] {
  const candidates = workloadsOfKind(workloads, workloadKindOf(input.ed.spec.subsetType));
  const namespace = input.ed.metadata.namespace;
  return input.regions.map((r) => {
    const name = workloadName(input.ed.metadata.name, r.name);
    const workload = candidates.find((w) => w.metadata?.name === name && (namespace === undefined || w.metadata.namespace === namespace));
    return { region: r.name, targetRevision: r.targetRevision, template: workload?.spec?.template };
  });
}

/**
 * Decides the writes that keep an ExtendedDeployment's history, level-based: the same input after the writes gives
 * none. A rollout revision is recorded once every region's workload carries its rendered template (Git synced; the
 * templates are read from the workloads, never from the render), which is when its rollout starts moving pods: when
 * the next one starts, this one's templates are stored, although Git has overwritten the workloads since.
 *
 * - Not recorded yet: a ControllerRevision `<ed>-<rolloutRevision>`, numbered one above the highest recorded.
 * - Recorded but not the newest (Git went back to it): renumbered above the highest, as Kubernetes does for a
 *   Deployment's ReplicaSets, so that revisions stay ordered by when they last became current.
 * - Then the current one and the `historyLimit` newest others are kept; older ones are deleted, but for those that hold
 *   a template a partition keeps (`held`). Nothing is pruned while the workloads do not carry the current templates
 *   yet: the revision they still run stays.
 */
export function planHistory(input: HistoryInput): HistoryAction[] {
  const { ed, regions } = input;
  const name = ed.metadata?.name ?? '';
  const ready = regions.length > 0 && regions.every((r) => r.template?.metadata?.labels?.[REVISION_LABEL] === r.targetRevision);
  if (!name || !ready) return [];
  const owner = { name, uid: ed.metadata?.uid };
  const rolloutRevision = renderedRevisionOf(input.rolloutRevision);
  const entries = historyEntries(owner, input.existing);
  const current = entries.find((e) => e.rolloutRevision === rolloutRevision);
  const others = entries.filter((e) => e !== current);
  const highest = Math.max(0, ...others.map((e) => e.revision));
  const revision = highest + 1;
  const newAnnotations = annotations(ed, rolloutRevision, input.now);

  const actions: HistoryAction[] = [];
  if (!current) {
    const metadata: ObjectMeta = {
      name: revisionName(name, rolloutRevision),
      ...(ed.metadata?.namespace !== undefined && { namespace: ed.metadata.namespace }),
      labels: { [NAME_LABEL]: name },
      annotations: newAnnotations,
      ownerReferences: [revisionOwnerReference(owner)],
    };
    actions.push({ kind: 'create', object: { apiVersion: 'apps/v1', kind: 'ControllerRevision', metadata, data: revisionData(regions), revision } });
  } else if (current.revision <= highest) {
    const stored = input.existing.find((o) => o.metadata?.uid === current.uid && o.metadata?.name === current.name) ?? {};
    // The change cause is the one of the change that made it current again, or none.
    const { [CHANGE_CAUSE_ANNOTATION]: _previousCause, ...kept } = stored.metadata?.annotations ?? {};
    const metadata = { ...stored.metadata, annotations: { ...kept, ...newAnnotations } };
    actions.push({ kind: 'update', object: { ...stored, apiVersion: 'apps/v1', kind: 'ControllerRevision', metadata, revision } });
  }
  const newestFirst = [...others].sort((a, b) => b.revision - a.revision);
  const held = (entry: HistoryEntry) => entry.regions.some((r) => input.held?.some((h) => h.region === r.region && h.revision === r.revision));
  for (const entry of newestFirst.slice(Math.max(0, input.historyLimit))) if (!held(entry)) actions.push(prune(entry));
  return actions;
}

function prune(entry: HistoryEntry): HistoryAction {
  return { kind: 'delete', name: entry.name, uid: entry.uid };
}

function annotations(ed: ExtendedDeploymentObject, rolloutRevision: string, now: number): Record<string, string> {
  const cause = ed.metadata?.annotations?.[CHANGE_CAUSE_ANNOTATION];
  return {
    [ROLLOUT_REVISION_ANNOTATION]: rolloutRevision,
    [CURRENT_SINCE_ANNOTATION]: new Date(now).toISOString(),
    ...(cause !== undefined && { [CHANGE_CAUSE_ANNOTATION]: cause }),
  };
}

/**
 * Each region's template as its workload carries it, without the fields the API server defaulted (template-defaults.ts):
 * what the revision hashes, and what a user would write back into Git.
 */
function revisionData(regions: readonly LiveTemplate[]): RevisionData {
  return { regions: regions.map((r) => ({ region: r.region, revision: r.targetRevision, template: withoutDefaults(r.template ?? {}) })) };
}
