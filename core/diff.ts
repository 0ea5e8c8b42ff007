import type { WorkloadObject } from './kube/objects.js';
import { REVISION_LABEL } from './labels.js';
import { planOf, type ExtendedDeploymentPlan, type RegionPlan, type Risk } from './plan.js';
import { fieldChanges, type FieldChange } from './field-changes.js';
import type { RenderedDeployRegion, RenderedExtendedDeployment } from './render.js';
import { sameObject } from './same-object.js';

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
  /** new: not in the base; removed: only in the base; changed: a region or a field outside the template changes; none: nothing changes. */
  readonly change: 'new' | 'removed' | 'changed' | 'none';
  /** Total replicas in the base (absent for a new ExtendedDeployment). */
  readonly fromReplicas?: number;
  /** The rollout revision in the base (absent for a new ExtendedDeployment). */
  readonly fromRolloutRevision?: string;
  readonly regions: readonly RegionDiff[];
  /** Regions of the base that the change removes (their workloads go away with them). */
  readonly removedRegions: readonly string[];
}

/**
 * One DeployRegion in a diff. What its change does to pods shows in the ExtendedDeployments placed in it (their
 * regional templates); this says what changed in the object itself, also when no ExtendedDeployment of the diff uses it.
 */
export interface DeployRegionDiff {
  readonly name: string;
  readonly change: 'new' | 'removed' | 'changed' | 'none';
  /** Changed fields of its labels, annotations and spec (`spec.matchLabels.zone`), for a changed DeployRegion. */
  readonly specChanges: readonly FieldChange[];
}

/** The DeployRegions of both sides of a diff. */
export interface DeployRegionSides {
  readonly after: readonly RenderedDeployRegion[];
  readonly before: readonly RenderedDeployRegion[];
}

/** What `edctl diff --output json` prints. The shape is a contract others read: keep it stable, only add fields. */
export interface Diff {
  readonly extendedDeployments: readonly ExtendedDeploymentDiff[];
  /** What deserves a second look in review, as `edctl plan --from` reports it (risksOf). */
  readonly risks: readonly Risk[];
  /** The DeployRegions of `after`, in order, then those only in `before` (empty when diffOf got none). */
  readonly deployRegions: readonly DeployRegionDiff[];
}

/** What a DeployRegion is, as a diff compares it: its labels, annotations and spec. */
const regionFields = (r: RenderedDeployRegion) => ({
  metadata: { labels: r.parsed.metadata.labels, annotations: r.parsed.metadata.annotations },
  spec: r.parsed.spec,
});

/** Every DeployRegion of either side, matched by name: new, removed, changed (with its fields) or not. */
function deployRegionDiffs({ after, before }: DeployRegionSides): DeployRegionDiff[] {
  const changed = after.map((r): DeployRegionDiff => {
    const name = r.parsed.metadata.name;
    const base = before.find((b) => b.parsed.metadata.name === name);
    if (!base) return { name, change: 'new', specChanges: [] };
    const specChanges = fieldChanges(regionFields(base), regionFields(r));
    return { name, change: specChanges.length > 0 ? 'changed' : 'none', specChanges };
  });
  const removed = before
    .filter((b) => !after.some((r) => r.parsed.metadata.name === b.parsed.metadata.name))
    .map((b): DeployRegionDiff => ({ name: b.parsed.metadata.name, change: 'removed', specChanges: [] }));
  return [...changed, ...removed];
}

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
 * their order, then those only in `before`. Given `regions`, the DeployRegions of both sides are compared too.
 */
export function diffOf(
  after: readonly RenderedExtendedDeployment[],
  before: readonly RenderedExtendedDeployment[],
  regions: DeployRegionSides = { after: [], before: [] },
): Diff {
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
    const changes =
      removedRegions.length > 0 || (edPlan.specChanges ?? []).length > 0 || regions.some((r) => r.change !== 'none' || r.templateChanges.length > 0);
    const change = !base ? 'new' : changes ? 'changed' : 'none';
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
      rolloutKey: b.rolloutRevision,
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
  return { extendedDeployments: [...changed, ...removed], risks: plan.risks ?? [], deployRegions: deployRegionDiffs(regions) };
}
