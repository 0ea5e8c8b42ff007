import type { WorkloadObject } from './kube/objects.js';
import { REVISION_LABEL } from './labels.js';
import { planOf, type ExtendedDeploymentPlan, type RegionPlan } from './plan.js';
import { formatPath, type FieldPath } from './problems.js';
import type { RenderedExtendedDeployment } from './render.js';

/** One changed leaf of a JSON document: absent `from` means added, absent `to` means removed. */
export interface FieldChange {
  /** As Kubernetes prints it: `spec.containers[0].image`, `metadata.labels["app.kubernetes.io/name"]`. */
  readonly path: string;
  readonly from?: unknown;
  readonly to?: unknown;
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * Every path where `to` differs from `from`, in `to`'s key order (keys only in `from` after). Objects are compared key
 * by key and arrays index by index (so `containers[0]` is the first container before and after); a value whose type
 * changes, or an item or key that exists on one side only, is one change with the whole value.
 */
export function fieldChanges(from: unknown, to: unknown, path: FieldPath = []): FieldChange[] {
  if (isObject(from) && isObject(to)) {
    const keys = [...Object.keys(to), ...Object.keys(from).filter((k) => !(k in to))];
    return keys.flatMap((k) => fieldChanges(from[k], to[k], [...path, k]));
  }
  if (Array.isArray(from) && Array.isArray(to)) {
    return Array.from({ length: Math.max(from.length, to.length) }, (_, i) => fieldChanges(from[i], to[i], [...path, i])).flat();
  }
  if (from === undefined && to === undefined) return [];
  if (JSON.stringify(from) === JSON.stringify(to)) return [];
  return [{ path: formatPath(path), ...(from !== undefined && { from }), ...(to !== undefined && { to }) }];
}

/** One region in a diff: its plan (replicas, revision, in-place or replace) and what changed in its pod template. */
export interface RegionDiff extends RegionPlan {
  /**
   * What changed in the rendered regional pod template, paths relative to it (`spec.containers[0].image`). The
   * revision label, which changes with any change, is left out: `fromRevision` and `revision` say it. Empty for a new
   * region and for a region whose template did not change.
   */
  readonly templateChanges: readonly FieldChange[];
}

/** One ExtendedDeployment in a diff. */
export interface ExtendedDeploymentDiff extends Omit<ExtendedDeploymentPlan, 'regions'> {
  /** new: not in the base; removed: only in the base; changed: some region changes; none: nothing changes. */
  readonly change: 'new' | 'removed' | 'changed' | 'none';
  /** Total replicas in the base (absent for a new ExtendedDeployment). */
  readonly fromReplicas?: number;
  /** The rollout revision in the base (absent for a new ExtendedDeployment). */
  readonly fromRolloutRevision?: string;
  readonly regions: readonly RegionDiff[];
  /** Regions of the base that the change removes (their workloads go away with them). */
  readonly removedRegions: readonly string[];
}

/** What `edctl diff --output json` prints. The shape is a contract others read: keep it stable, only add fields. */
export interface Diff {
  readonly extendedDeployments: readonly ExtendedDeploymentDiff[];
}

const sameObject = (a: RenderedExtendedDeployment, b: RenderedExtendedDeployment) => a.ref.namespace === b.ref.namespace && a.ref.name === b.ref.name;

/** The pod template of a rendered regional workload, without the revision label. */
function templateOf(workload: Readonly<Record<string, unknown>>): unknown {
  const template = ((workload['spec'] ?? {}) as NonNullable<WorkloadObject['spec']>).template ?? {};
  const labels = { ...(template.metadata?.labels ?? {}) };
  delete labels[REVISION_LABEL];
  return { ...template, metadata: { ...template.metadata, labels } };
}

/**
 * What changes from `before` (the rendered base of a change) to `after`, per ExtendedDeployment and region: the plan
 * (planOf: replicas, revisions, in-place or replace, the groups of the rollout) plus the field paths that changed in
 * each region's rendered pod template, and what the change removes. ExtendedDeployments of `after` come first, in
 * their order, then those only in `before`.
 */
export function diffOf(after: readonly RenderedExtendedDeployment[], before: readonly RenderedExtendedDeployment[]): Diff {
  const plan = planOf(after, before);
  const changed = after.map((ed, i): ExtendedDeploymentDiff => {
    const edPlan = plan.extendedDeployments[i]!;
    const base = before.find((b) => sameObject(b, ed));
    const regions = edPlan.regions.map((r, j): RegionDiff => {
      const old = base?.regions.find((b) => b.name === r.name);
      const now = ed.regions[j]!;
      return { ...r, templateChanges: old ? fieldChanges(templateOf(old.workload), templateOf(now.workload)) : [] };
    });
    const removedRegions = (base?.regions ?? []).filter((b) => !ed.regions.some((r) => r.name === b.name)).map((b) => b.name);
    const change = !base ? 'new' : removedRegions.length > 0 || regions.some((r) => r.change !== 'none' || r.templateChanges.length > 0) ? 'changed' : 'none';
    return {
      ...edPlan,
      change,
      ...(base && { fromReplicas: base.replicas, fromRolloutRevision: base.rolloutRevision }),
      regions,
      removedRegions,
    };
  });
  const removed = before
    .filter((b) => !after.some((a) => sameObject(a, b)))
    .map((b): ExtendedDeploymentDiff => ({
      namespace: b.ref.namespace ?? '',
      name: b.ref.name ?? '',
      change: 'removed',
      replicas: 0,
      rolloutRevision: b.rolloutRevision,
      fromReplicas: b.replicas,
      fromRolloutRevision: b.rolloutRevision,
      regions: [],
      removedRegions: b.regions.map((r) => r.name),
      groups: [],
      totalGroups: 0,
      runs: [],
      approvals: [],
      approvalRanges: [],
      swapped: 0,
      created: 0,
    }));
  return { extendedDeployments: [...changed, ...removed] };
}
