import { DEFAULT_NAMESPACE, type IntOrPercent } from './api/common.js';
import { API_GROUP, API_VERSION, ED_KIND, REGION_KIND, UPSTREAM_INPLACESET_KIND } from './api/identity.js';
import type { DeployRegion } from './api/deploy-region.js';
import { podTemplate, type ClaimOverride, type ExtendedDeployment, type RolloutStrategy, type VolumeClaimTemplate } from './api/extended-deployment.js';
import { distributeReplicas, type BelowNeeds } from './distribution.js';
import {
  IN_PLACE_READINESS_GATE,
  NAME_LABEL,
  REGION_LABEL,
  REVISION_LABEL,
  REVISIONS_ANNOTATION,
  ROLLOUT_REVISION_ANNOTATION,
  SYNC_WAVE_ANNOTATION,
} from './labels.js';
import { applyPatches, applyTypedOverrides, cloneJson, type JsonObject } from './overrides.js';
import type { PodTemplate } from './kube/objects.js';
import { nestingMessage, nestingViolation } from './nesting.js';
import {
  issuesToProblems,
  parseDeployRegion,
  parseExtendedDeployment,
  refOf,
  regionEntries,
  withoutInvalidFields,
  type RepairedExtendedDeployment,
} from './parse.js';
import { placeInRegion } from './placement.js';
import { failed, formatObject, formatPath, formatProblem, ok, ProblemList, type FieldPath, type ObjectRef, type Problem, type Result } from './problems.js';
import { RevisionCache, rolloutRevision, templateRevision } from './revision.js';
import { selectorClashes } from './selector-clashes.js';
import { selectorMatches } from './selector.js';
import { workloadName } from './kube/workload-kinds.js';
import { replicasService, serviceNameProblem } from './traffic/services.js';
import { replicasRoute } from './traffic/route.js';
import { inPlaceEnabled, validateExtendedDeployment } from './validate.js';

/** One region of a rendered ExtendedDeployment. */
export interface RenderedRegion {
  /** Region name. */
  readonly name: string;
  /** Target replicas from the distribution (before any move by the agent). */
  readonly replicas: number;
  /** Revision of the final regional pod template. */
  readonly revision: string;
  /** The regional workload manifest (ReplicaSet, or Deployment in compat mode), in the ExtendedDeployment's namespace, without spec.replicas. */
  readonly workload: JsonObject;
}

/** An ExtendedDeployment turned into manifests. */
export interface RenderedExtendedDeployment {
  /** Which object this is, in the namespace it is rendered into: plan and diff match objects by it. */
  readonly ref: ObjectRef;
  /** The validated object with every default applied. */
  readonly parsed: ExtendedDeployment;
  /** The ExtendedDeployment manifest, as written plus its namespace (`default` when it names none) and the revisions each region should reach. */
  readonly manifest: JsonObject;
  /** Regions in declared order. */
  readonly regions: readonly RenderedRegion[];
  /** Total replicas over all regions. */
  readonly replicas: number;
  /** The rollout revision that approvals name. */
  readonly rolloutRevision: string;
  /** Whether pods may be swapped in place. */
  readonly inPlace: boolean;
  /**
   * What Git carries for spec.strategy.traffic: in mode Replicas the Service `<ed>` over every pod, and the HTTPRoute
   * `<ed>` to it when spec.strategy.traffic.route asks for one (fully defaulted, so no engine sees a diff); nothing in
   * mode Weighted, whose route and Services the agent owns (core/traffic/plan.ts).
   */
  readonly traffic: readonly JsonObject[];
}

/** A rendered DeployRegion. */
export interface RenderedDeployRegion {
  readonly parsed: DeployRegion;
  readonly manifest: JsonObject;
}

/** Sync wave of DeployRegions: before every workload (CRDs are at -2). */
export const REGION_SYNC_WAVE = '-1';

/** Renders a DeployRegion: validates it and adds its Argo CD sync wave. */
export function renderDeployRegion(raw: unknown): Result<RenderedDeployRegion> {
  const parsed = parseDeployRegion(raw);
  if (!parsed.ok) return parsed;
  const manifest = cloneJson(raw) as JsonObject & { metadata: JsonObject };
  manifest.metadata['annotations'] = { ...(manifest.metadata['annotations'] as object | undefined), [SYNC_WAVE_ANNOTATION]: REGION_SYNC_WAVE };
  return ok({ parsed: parsed.value, manifest });
}

/** Options of renderExtendedDeployment. */
export interface RenderOptions {
  /** DeployRegions of the render that failed their own validation (reported there, not as missing). */
  readonly invalidRegions?: ReadonlySet<string>;
  /** What a spec.replicas below the regions' needs means (distribution.ts); the agent's `scaleDown`, Git's `refuse`. */
  readonly belowNeeds?: BelowNeeds;
}

/**
 * Renders one ExtendedDeployment against the DeployRegions of the same render: validates everything (every problem
 * at once), distributes replicas, builds each region's template (typed overrides, then raw patches, then labels,
 * placement and readiness gate) and its workload. The manifest and every workload name their namespace: the
 * ExtendedDeployment's, else DEFAULT_NAMESPACE.
 */
export function renderExtendedDeployment(
  raw: unknown,
  regions: ReadonlyMap<string, DeployRegion>,
  options: RenderOptions = {},
): Result<RenderedExtendedDeployment> {
  const parsed = parseExtendedDeployment(raw);
  if (!parsed.ok) return failed([...parsed.problems, ...problemsBeyondSchema(raw, regions, options)]);
  const ed = parsed.value;
  const ref = refOf(raw);
  const problems = new ProblemList(ref);
  validateExtendedDeployment(ed, regions, problems, options.invalidRegions);

  const distribution = distributeReplicas(ed.spec.replicas, ed.spec.regions, options.belowNeeds);
  if (!distribution.ok) for (const p of distribution.problems) problems.add(p.path, p.message);

  const inPlace = inPlaceEnabled(ed);
  const namespace = renderedNamespace(ed.metadata);
  // One copy per ExtendedDeployment, not one per region: every region's template shares with it what the region does
  // not change, and nothing changes it (overrides, placement and the labels below copy what they change). It is a
  // copy so that the workloads share nothing with the input or with `parsed`.
  const baseTemplate = cloneJson(ed.spec.template);
  const revisionCache = new RevisionCache();
  const baseLabels = ed.spec.template.metadata?.labels ?? {};
  const baseMatches = selectorMatches(ed.spec.selector, baseLabels);
  if (!baseMatches) problems.add(['spec', 'template', 'metadata', 'labels'], 'do not match spec.selector');

  const built: RenderedRegion[] = [];
  ed.spec.regions.forEach((placement, i) => {
    const region = regions.get(placement.name);
    if (!region) return;
    const typed = applyTypedOverrides(baseTemplate, placement.overrides, ['spec', 'regions', i, 'overrides']);
    const patchIndex = (ed.spec.overriders ?? []).findIndex((o) => o.name === placement.name);
    const patchesAt: FieldPath = ['spec', 'overriders', patchIndex, 'overriders'];
    const patched = applyPatches(typed.template, ed.spec.overriders?.[patchIndex]?.overriders ?? [], patchesAt);
    for (const p of [...typed.problems, ...patched.problems]) problems.add(p.path, p.message);

    // Raw patches can break what the schema checked in the base template (typed overrides cannot): check again.
    const overridesAt: FieldPath = patchIndex >= 0 ? patchesAt : ['spec', 'regions', i, 'overrides'];
    // Each patch value passed the object's nesting check, but a patch can add below what an earlier one added, so the
    // result can nest deeper than its parts: checked again, from the template, before anything walks it.
    const tooDeep = patchIndex >= 0 ? nestingViolation(patched.template) : undefined;
    if (tooDeep) {
      problems.add(overridesAt, `leave the pod template of region ${placement.name} invalid: ${formatPath(tooDeep.path)}: ${nestingMessage(tooDeep)}`);
      return;
    }
    const recheck = patchIndex >= 0 ? podTemplate.safeParse(patched.template, { reportInput: true }) : undefined;
    if (recheck && !recheck.success) {
      for (const p of issuesToProblems(ref, recheck.error.issues)) {
        problems.add(overridesAt, `leave the pod template of region ${placement.name} invalid: ${formatPath(p.path)}: ${p.message}`);
      }
      return;
    }

    // Typed overrides keep the shape the schema checked; a patched template was checked again above.
    const template: PodTemplate = patched.template;
    const labels = template.metadata?.labels ?? {};
    if (baseMatches && !selectorMatches(ed.spec.selector, labels)) {
      const typedLabels = typed.template.metadata?.labels ?? {};
      const culprit: FieldPath = selectorMatches(ed.spec.selector, typedLabels) ? patchesAt : ['spec', 'regions', i, 'overrides', 'labels'];
      problems.add(culprit, `make the pod labels of region ${placement.name} stop matching spec.selector`);
    }
    const baseContainers = ed.spec.template.spec.containers;
    (template.spec?.containers ?? []).forEach((c, k) => {
      if (typeof c.image === 'string' && c.image !== '') return;
      const base = baseContainers.findIndex((b) => b.name === c.name);
      if (base >= 0 && baseContainers[base]?.image) {
        problems.add(overridesAt, `leave container ${JSON.stringify(c.name)} of region ${placement.name} without an image`);
      } else {
        problems.add(
          ['spec', 'template', 'spec', 'containers', base >= 0 ? base : k, 'image'],
          `is not set, and region ${placement.name} sets none in overrides.images`,
        );
      }
    });

    const labelled = { ...template, metadata: { ...template.metadata, labels: { ...labels, [NAME_LABEL]: ed.metadata.name, [REGION_LABEL]: placement.name } } };
    const placed = placeInRegion(labelled, {
      name: placement.name,
      matchLabels: region.spec.matchLabels,
      matchExpressions: region.spec.matchExpressions,
      tolerations: region.spec.tolerations,
    });
    if (placed.conflict) problems.add(['spec', 'regions', i, 'name'], placed.conflict);
    const gated = inPlace ? withReadinessGate(placed.template) : placed.template;
    const revision = templateRevision(gated, revisionCache);
    const final = { ...gated, metadata: { ...gated.metadata, labels: { ...gated.metadata?.labels, [REVISION_LABEL]: revision } } };

    const replicas = distribution.ok ? (distribution.replicas[i] ?? 0) : 0;
    built.push({ name: placement.name, replicas, revision, workload: regionalWorkload(ed, namespace, placement.name, final) });
  });

  const traffic = ed.spec.strategy.traffic;
  const serviceProblem = traffic === undefined ? undefined : serviceNameProblem({ name: ed.metadata.name, namespace });
  if (serviceProblem) problems.add(serviceProblem.path, serviceProblem.message);

  if (!problems.empty || !distribution.ok) return failed(problems.items);

  const revisions = new Map(built.map((r) => [r.name, r.revision]));
  const rollout = rolloutRevision(revisions);
  const manifest = cloneJson(raw) as JsonObject & { metadata: JsonObject };
  manifest.metadata['namespace'] = namespace;
  manifest.metadata['annotations'] = {
    ...(manifest.metadata['annotations'] as object | undefined),
    [REVISIONS_ANNOTATION]: JSON.stringify(Object.fromEntries(revisions)),
    [ROLLOUT_REVISION_ANNOTATION]: rollout,
  };
  delete manifest['status'];
  return ok({
    ref: { ...ref, namespace },
    parsed: ed,
    manifest,
    regions: built,
    replicas: distribution.total,
    rolloutRevision: rollout,
    inPlace,
    traffic: trafficObjects(ed, namespace),
  });
}

/** The traffic objects Git carries for an ExtendedDeployment (RenderedExtendedDeployment.traffic). */
function trafficObjects(ed: ExtendedDeployment, namespace: string): JsonObject[] {
  const traffic = ed.spec.strategy.traffic;
  if (traffic?.mode !== 'Replicas') return [];
  const owner = { name: ed.metadata.name, namespace };
  const service = replicasService(owner, traffic.service) as unknown as JsonObject;
  return traffic.route === undefined ? [service] : [service, replicasRoute(owner, traffic.route, traffic.service.port) as unknown as JsonObject];
}

/**
 * Problems the cross-field rules find once the fields that break the schema are taken out, so that one render reports
 * every problem of an object, not only its schema problems. A problem about a taken-out field (or a field around it)
 * is left out: it would only echo the schema problem. So is a replica sum when a count was taken out (see isSkewedSum);
 * a region's own bounds are still checked.
 */
function problemsBeyondSchema(raw: unknown, regions: ReadonlyMap<string, DeployRegion>, options: RenderOptions): Problem[] {
  const repaired = withoutInvalidFields(raw);
  if (!repaired) return [];
  const result = renderExtendedDeployment(repaired.raw, regions, options);
  if (result.ok) return [];
  const object = refOf(raw);
  const related = (a: FieldPath, b: FieldPath) => {
    const n = Math.min(a.length, b.length);
    return a.slice(0, n).every((part, i) => part === b[i]);
  };
  return result.problems.filter((p) => !repaired.removed.some((r) => related(r, p.path)) && !isSkewedSum(p.path, repaired)).map((p) => ({ ...p, object }));
}

/**
 * Whether a problem at `path` is about a sum that taking out broken counts skewed: spec.replicas or spec.regions as a
 * whole once any count is gone, and a percentage region's share once spec.replicas is gone. A region's minReplicas
 * against its maxReplicas, or its integer replicas against them, hold or fail whatever the other counts are.
 */
function isSkewedSum(path: FieldPath, repaired: RepairedExtendedDeployment): boolean {
  if (path[0] !== 'spec' || !repaired.removed.some(isCountPath)) return false;
  if (path.length === 2) return path[1] === 'replicas' || path[1] === 'regions';
  const totalRemoved = repaired.removed.some((r) => r.length === 2 && r[1] === 'replicas' && r[0] === 'spec');
  const region = typeof path[2] === 'number' ? regionEntryOf(repaired.raw, path[2]) : undefined;
  return totalRemoved && path[1] === 'regions' && path[3] === 'replicas' && typeof region?.['replicas'] === 'string';
}

function regionEntryOf(raw: unknown, index: number): Record<string, unknown> | undefined {
  const regions = (raw as { spec?: { regions?: unknown } } | null)?.spec?.regions;
  const entry: unknown = Array.isArray(regions) ? regions[index] : undefined;
  return entry !== null && typeof entry === 'object' ? (entry as Record<string, unknown>) : undefined;
}

/** Whether a path is about replica counts: spec.replicas, spec.regions itself, or a region's replicas, minReplicas or maxReplicas. */
function isCountPath(path: FieldPath): boolean {
  if (path[0] !== 'spec') return false;
  if (path[1] === 'replicas') return true;
  if (path[1] !== 'regions') return false;
  return path.length === 2 || (typeof path[2] === 'number' && ['replicas', 'minReplicas', 'maxReplicas'].includes(String(path[3])));
}

/** `template` with the in-place readiness gate added to a copy of its gates (when it has not got it), `template` unchanged. */
function withReadinessGate(template: PodTemplate): PodTemplate {
  const gates = template.spec?.readinessGates ?? [];
  if (gates.some((g) => g.conditionType === IN_PLACE_READINESS_GATE)) return template;
  return { ...template, spec: { ...template.spec, readinessGates: [...gates, { conditionType: IN_PLACE_READINESS_GATE }] } };
}

/**
 * Whether two ExtendedDeployments' workloads can get the same name: only when the names are equal or one is the other
 * followed by `-` and more (`a` with region `b-c` and `a-b` with region `c` both give `a-b-c`), whatever the regions.
 */
export function workloadNamesMayCollide(a: string, b: string): boolean {
  return a === b || isDashExtensionOf(b, a) || isDashExtensionOf(a, b);
}

/** `name` is `prefix-…`. Without building `prefix-`. */
const isDashExtensionOf = (name: string, prefix: string) => name.length > prefix.length && name.charCodeAt(prefix.length) === 45 && name.startsWith(prefix);

/**
 * The names `name` extends with a dash (`a-b-c`: `a` and `a-b`): with `name` itself and the names extending it, the
 * ones whose workloads may collide with its own (see workloadNamesMayCollide). The agent files each ExtendedDeployment
 * under these, so that one finds those extending it without a scan of its namespace.
 */
export function dashPrefixes(name: string): string[] {
  const prefixes: string[] = [];
  for (let i = name.indexOf('-', 1); i > 0; i = name.indexOf('-', i + 1)) prefixes.push(name.slice(0, i));
  return prefixes;
}

/**
 * Problems of ExtendedDeployments (raw, valid or not: the check needs only names) whose regional workloads get the
 * same name in the same namespace: the GitOps tool would apply both as one object, and each ExtendedDeployment would
 * wait for a workload the other keeps overwriting. Each colliding region entry gets one problem per other object,
 * naming it, so every collision is reported at once and on both sides. Workload kinds are not compared: a ReplicaSet
 * and a Deployment of one name do not clash today, but would as soon as either switches subsetType. Objects of the
 * same name in the same namespace are one object defined twice, which renderSet reports as such.
 */
export function workloadNameCollisions(objects: readonly unknown[]): Problem[] {
  interface Entry {
    readonly object: ObjectRef;
    /** `namespace/name` of the ExtendedDeployment, as it is rendered. */
    readonly owner: string;
    readonly region: string;
    readonly index: number;
    readonly workload: string;
    /** `namespace/workload`: names are unique per namespace. */
    readonly key: string;
  }
  const entries = objects.flatMap((raw): Entry[] => {
    const object = refOf(raw);
    const name = object.name;
    if (name === undefined) return [];
    const namespace = renderedNamespace(object);
    return regionEntries(raw).map((r) => {
      const workload = workloadName(name, r.name);
      return { object, owner: `${namespace}/${name}`, region: r.name, index: r.index, workload, key: `${namespace}/${workload}` };
    });
  });
  const byKey = new Map<string, Entry[]>();
  for (const entry of entries) {
    const same = byKey.get(entry.key);
    if (same) same.push(entry);
    else byKey.set(entry.key, [entry]);
  }
  return entries.flatMap((entry) =>
    (byKey.get(entry.key) ?? [])
      .filter((other) => other.owner !== entry.owner)
      .map((other) => ({
        object: entry.object,
        path: ['spec', 'regions', entry.index, 'name'],
        message: `workload ${entry.workload} collides with ${formatObject(other.object)}'s region ${other.region}`,
      })),
  );
}

/**
 * The namespace an ExtendedDeployment and its workloads are rendered into: its own, else kubectl's default. Written
 * out on every rendered object because GitOps tools have no such fallback (see DEFAULT_NAMESPACE).
 */
function renderedNamespace(metadata: { readonly namespace?: string | undefined }): string {
  return metadata.namespace ?? DEFAULT_NAMESPACE;
}

/**
 * A region's workload. Its own labels are only the ExtendedDeployment's and the region's (its selector), not the pod
 * template's: a Deployment adopts every orphan ReplicaSet whose labels its selector matches and scales it to 0, so a
 * regional ReplicaSet labelled `app: web` would be taken by a Deployment `app: web` of the same namespace, which is
 * what runs there while an ExtendedDeployment takes its place (adoption, docs/migrating-from-upstream.md).
 */
function regionalWorkload(ed: ExtendedDeployment, namespace: string, region: string, template: PodTemplate): JsonObject {
  const selector = { matchLabels: { [NAME_LABEL]: ed.metadata.name, [REGION_LABEL]: region } };
  const metadata: JsonObject = { name: workloadName(ed.metadata.name, region), namespace, labels: { ...selector.matchLabels } };
  const spec: JsonObject = { minReadySeconds: ed.spec.strategy.minReadySeconds, selector, template };
  if (ed.spec.subsetType === 'Deployment') {
    spec['revisionHistoryLimit'] = ed.spec.historyLimit;
    spec['strategy'] = nativeStrategy(ed.spec.strategy);
    return { apiVersion: 'apps/v1', kind: 'Deployment', metadata, spec };
  }
  if (ed.spec.subsetType === 'StatefulSet') return { apiVersion: 'apps/v1', kind: 'StatefulSet', metadata, spec: statefulSetSpec(ed, region, spec) };
  return { apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata, spec };
}

/**
 * A regional StatefulSet's spec. Neither spec.replicas nor the rolling update's partition is rendered: the agent owns
 * both (its own field manager), and holds every pod behind the partition between rollouts, so a template Git syncs
 * changes no pod until the agent's groups reach it. Its revision history stays small: the ExtendedDeployment's own
 * history is the one rollbacks read.
 */
function statefulSetSpec(ed: ExtendedDeployment, region: string, common: JsonObject): JsonObject {
  const fields = ed.spec.statefulSet;
  const overrides = ed.spec.regions.find((r) => r.name === region)?.overrides?.volumeClaims ?? {};
  const spec: JsonObject = {
    ...(fields?.serviceName !== undefined && { serviceName: fields.serviceName }),
    podManagementPolicy: fields?.podManagementPolicy ?? 'OrderedReady',
    updateStrategy: { type: 'RollingUpdate' },
    revisionHistoryLimit: STATEFULSET_REVISION_HISTORY,
    ...common,
  };
  if (fields?.persistentVolumeClaimRetentionPolicy) spec['persistentVolumeClaimRetentionPolicy'] = { ...fields.persistentVolumeClaimRetentionPolicy };
  if (fields?.volumeClaimTemplates) spec['volumeClaimTemplates'] = fields.volumeClaimTemplates.map((t) => regionalClaim(t, overrides[t.metadata.name]));
  return spec;
}

/** The StatefulSet's own ControllerRevisions kept: the current and the previous template (rollbacks read the ExtendedDeployment's history). */
const STATEFULSET_REVISION_HISTORY = 2;

/**
 * A claim template with a region's overrides (its StorageClass and its size), written as the API server stores it:
 * `volumeClaimTemplates` is an atomic list, so a GitOps tool compares each entry whole, and the fields the API server
 * adds (the claim's apiVersion and kind, `spec.volumeMode`, `status.phase`) would otherwise keep the StatefulSet
 * OutOfSync in Argo CD (measured on the lab: it synced the StatefulSets again and again).
 */
function regionalClaim(template: VolumeClaimTemplate, override: ClaimOverride | undefined): JsonObject {
  const claim = cloneJson(template) as JsonObject & { spec: JsonObject };
  if (override?.storageClassName !== undefined) claim.spec['storageClassName'] = override.storageClassName;
  if (override?.storage !== undefined) {
    const resources = (claim.spec['resources'] ?? {}) as JsonObject;
    claim.spec['resources'] = { ...resources, requests: { ...(resources['requests'] as JsonObject | undefined), storage: override.storage } };
  }
  claim.spec['volumeMode'] ??= 'Filesystem';
  return { apiVersion: 'v1', kind: 'PersistentVolumeClaim', ...claim, status: { phase: 'Pending', ...(claim['status'] as JsonObject | undefined) } };
}

/**
 * In compat mode the Deployment controller rolls inside a region; its budgets follow the ExtendedDeployment's
 * strategy: RollingUpdate as written, DeleteAllFirst as Recreate, ReCreate by upgrade mode with batchSize as the step.
 */
function nativeStrategy(strategy: RolloutStrategy): JsonObject {
  const update = strategy.updateStrategy;
  if (update.type === 'DeleteAllFirst') return { type: 'Recreate' };
  if (update.type === 'RollingUpdate') {
    const budgets = update.rollingUpdate ?? { maxSurge: '25%', maxUnavailable: '25%' };
    return { type: 'RollingUpdate', rollingUpdate: { maxSurge: budgets.maxSurge, maxUnavailable: budgets.maxUnavailable } };
  }
  const step: IntOrPercent = strategy.batchSize;
  const budgets: Record<RolloutStrategy['upgradeMode'], [IntOrPercent, IntOrPercent]> = {
    scaleOutPriority: [step, 0],
    scaleInPriority: [0, step],
    scaleSimultaneously: [step, step],
  };
  const [maxSurge, maxUnavailable] = budgets[strategy.upgradeMode];
  return { type: 'RollingUpdate', rollingUpdate: { maxSurge, maxUnavailable } };
}

/** Everything one render produces, in input order. */
export interface RenderedSet {
  readonly deployRegions: readonly RenderedDeployRegion[];
  readonly extendedDeployments: readonly RenderedExtendedDeployment[];
}

/**
 * Renders a set of objects that belong together (DeployRegions and the ExtendedDeployments that use them).
 * Objects of other kinds are not this function's business: callers pass them through, but for the upstream operator's
 * InplaceSet, which is a problem. Every problem carries the position of its object in `objects` (`inputs`); an object
 * defined more than once is one problem listing every position, and the same problem of identical copies is one.
 */
export function renderSet(objects: readonly unknown[]): Result<RenderedSet> {
  const problems: Problem[] = [];
  const report = (inputs: readonly number[], found: readonly Problem[]) => problems.push(...found.map((p) => ({ ...p, inputs })));
  const deployRegions: RenderedDeployRegion[] = [];
  const regionsByName = new Map<string, DeployRegion>();
  const eds: { raw: unknown; input: number }[] = [];
  const invalidRegions = new Set<string>();
  const positions = new Map<string, number[]>();
  objects.forEach((raw, i) => {
    const key = setKey(raw);
    if (key === undefined) return;
    const same = positions.get(key);
    if (same) same.push(i);
    else positions.set(key, [i]);
  });
  const positionsOf = (ref: ObjectRef) => positions.get(refKey(ref)) ?? [];

  objects.forEach((raw, i) => {
    const ref = refOf(raw);
    const apiVersion = (raw as { apiVersion?: unknown } | null)?.apiVersion;
    if (ref.kind === UPSTREAM_INPLACESET_KIND && typeof apiVersion === 'string' && apiVersion.startsWith(`${API_GROUP}/`)) {
      report([i], [{ object: ref, path: ['kind'], message: UPSTREAM_INPLACESET_MESSAGE }]);
      return;
    }
    if (ref.kind !== REGION_KIND && ref.kind !== ED_KIND) return;
    if (apiVersion !== API_VERSION) {
      report([i], [{ object: ref, path: ['apiVersion'], message: `must be ${API_VERSION}, not ${JSON.stringify(apiVersion)}` }]);
      if (ref.kind === REGION_KIND && ref.name !== undefined) invalidRegions.add(ref.name);
      return;
    }
    const same = positionsOf(ref);
    if (same.length > 1 && same[0] === i) {
      const times = same.length === 2 ? 'twice' : `${same.length} times`;
      const object = ref.kind === ED_KIND ? { ...ref, namespace: renderedNamespace(ref) } : ref;
      report(same, [{ object, path: ['metadata', 'name'], message: `is defined ${times} in this render` }]);
    }
    if (ref.kind === REGION_KIND) {
      const region = guarded(ref, () => renderDeployRegion(raw));
      if (region.ok) {
        deployRegions.push(region.value);
        regionsByName.set(region.value.parsed.metadata.name, region.value.parsed);
      } else {
        report([i], region.problems);
        if (ref.name !== undefined) invalidRegions.add(ref.name);
      }
    } else eds.push({ raw, input: i });
  });

  const extendedDeployments: RenderedExtendedDeployment[] = [];
  for (const { raw, input } of eds) {
    const rendered = guarded(refOf(raw), () => renderExtendedDeployment(raw, regionsByName, { invalidRegions }));
    if (rendered.ok) extendedDeployments.push(rendered.value);
    else report([input], rendered.problems);
  }
  const edsRaw = eds.map((e) => e.raw);
  for (const p of [...workloadNameCollisions(edsRaw), ...selectorClashes(edsRaw)]) report(positionsOf(p.object), [p]);
  return problems.length > 0 ? failed(mergeSame(problems)) : ok({ deployRegions, extendedDeployments });
}

const UPSTREAM_INPLACESET_MESSAGE =
  `is the upstream operator's regional workload, which edctl and the agent do not use: write an ${ED_KIND} with ` +
  'spec.subsetType: InplaceSet instead, which renders a ReplicaSet per region with in-place updates on (see docs/migrating-from-upstream.md)';

/** The identity of a DeployRegion or ExtendedDeployment of the right apiVersion in a render (undefined for any other object). */
function setKey(raw: unknown): string | undefined {
  const ref = refOf(raw);
  const ours = ref.kind === REGION_KIND || ref.kind === ED_KIND;
  return ours && (raw as { apiVersion?: unknown }).apiVersion === API_VERSION ? refKey(ref) : undefined;
}

/** An ExtendedDeployment without a namespace is rendered into the default one: it is the same object as one there. */
function refKey(ref: ObjectRef): string {
  const namespace = ref.kind === ED_KIND ? renderedNamespace(ref) : (ref.namespace ?? '');
  return `${ref.kind}/${namespace}/${ref.name ?? ''}`;
}

/** Problems that read the same (identical copies of one object defined twice) as one, with the inputs of all. */
export function mergeSame(problems: readonly Problem[]): Problem[] {
  const byLine = new Map<string, Problem>();
  for (const p of problems) {
    const line = formatProblem(p);
    const first = byLine.get(line);
    const inputs = [...new Set([...(first?.inputs ?? []), ...(p.inputs ?? [])])].sort((a, b) => a - b);
    byLine.set(line, { ...(first ?? p), inputs });
  }
  return [...byLine.values()];
}

/**
 * Runs one object's render so that a failure nobody foresaw becomes a problem of that object: renderSet reports
 * problems, it never throws.
 */
function guarded<T>(object: ObjectRef, render: () => Result<T>): Result<T> {
  try {
    return render();
  } catch (error) {
    return failed([{ object, path: [], message: `could not be rendered: ${error instanceof Error ? error.message : String(error)}` }]);
  }
}
