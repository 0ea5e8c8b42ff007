import type { DeployRegion } from '../api/deploy-region.js';
import type { ExtendedDeployment, ExtendedDeploymentStatus } from '../api/extended-deployment.js';
import { byName } from '../by-name.js';
import { distributeReplicas } from '../distribution.js';
import { fleetReplicas } from '../fleet/look.js';
import {
  GROUP_RECORD_ANNOTATION,
  IN_PLACE_READINESS_GATE,
  KEEPER_LABEL,
  MARKED_AT_ANNOTATION,
  NAME_LABEL,
  HELD_POD_DELETION_COST,
  POD_DELETION_COST_ANNOTATION,
  REGION_LABEL,
  REVISION_LABEL,
  REVISIONS_ANNOTATION,
  ROLLOUT_REVISION_ANNOTATION,
  SWAP_STATE_ANNOTATION,
} from '../labels.js';
import { ED_KIND } from '../api/identity.js';
import { historyEntries, type HistoryEntry, type HistoryOwner } from '../history/entries.js';
import { isControlledBy, ownerId, podControllers, type OwnerId } from '../ownership.js';
import { refOf } from '../parse.js';
import { parsedDeployRegion, parsedExtendedDeployment, parsedMovesEnabled, parsedStatus, perVersion, withoutStatus } from './parsed.js';
import type { Problem } from '../problems.js';
import { renderExtendedDeployment, workloadNameCollisions, workloadNamesMayCollide } from '../render.js';
import { rolloutRevision as hashRolloutRevision } from '../revision.js';
import { partitionPods } from '../rollout/partition.js';
import { removalMarkCost } from '../rollout/removal-marks.js';
import type { RolloutInput } from '../rollout/planner.js';
import type { ContainerState, KeeperState, PodState, RegionPods, RegionState, WorkloadState } from '../rollout/snapshot.js';
import { podUpdateMethod } from '../inplace/eligibility.js';
import { parseSwapState } from '../inplace/swap-state.js';
import { parseGroupRecord } from '../rollout/group-record.js';
import { inPlaceEnabled, regionReferenceProblems } from '../validate.js';
import { regionRoom, type PodPlacement } from '../moves/capacity.js';
import { assignNodes, type NodeView, type NamedRegionSelector } from '../moves/nodes.js';
import { podRequests } from '../moves/resources.js';
import { parseControls } from '../rollout/controls.js';
import { growingRegions, rolloutKey } from '../rollout/growth.js';
import {
  timestampMs,
  type DeployRegionObject,
  type ExtendedDeploymentObject,
  type MetaObject,
  type PodObject,
  type PodSpec,
  type PodTemplate,
  type WorkloadKind,
  type WorkloadObject,
  type Workloads,
} from '../kube/objects.js';
import { workloadKindOf, workloadName, workloadsOfKind } from '../kube/workload-kinds.js';

/** The planner's input for one ExtendedDeployment, or why there is none. */
export type Observation =
  | { readonly ok: true; readonly input: RolloutInput }
  | {
      readonly ok: false;
      /** Everything wrong with the object, with field paths. */
      readonly problems: readonly Problem[];
      readonly generation: number;
      /** The status found on the object (when it parses), to keep while reporting the problems. */
      readonly status: ExtendedDeploymentStatus | undefined;
    };

/**
 * Builds the planner's input for one ExtendedDeployment from cached objects. Pure: everything it reads is passed in,
 * so the reconciler and the tests give it plain objects.
 *
 * - The spec is parsed and defaulted by core; an invalid one yields its problems instead of an input.
 * - Target revisions come from the rendered annotations; an ExtendedDeployment applied without rendering (no
 *   annotations) is rendered here against the DeployRegions, exactly as `edctl render` would. Either way every region
 *   must name a DeployRegion that exists and is valid (core's regionReferenceProblems): a rendered object's DeployRegion
 *   may be gone since its render, and a region without one would look like a region without nodes (Failed).
 * - Each region's workload is the ReplicaSet (or, in compat mode, Deployment; or StatefulSet) `<ed>-<region>` of its
 *   namespace, and its pods are those labelled with the ExtendedDeployment's and the region's names (the workload's
 *   selector) that the workload controls: their controller ownerReference names the ReplicaSet or StatefulSet, or in
 *   compat mode one of the Deployment's ReplicaSets (core/ownership.ts). Terminal pods (Failed, Succeeded) stay in, with their phase: core
 *   decides that they count nowhere (core/rollout/pod-activity.ts).
 * - A region's keeper (core/rollout/keeper.ts: a ReplicaSet the ExtendedDeployment controls, marked as a keeper) and
 *   its pods are kept apart from the region's; a region with a partition gets the templates its history recorded
 *   (`workloads.controllerRevisions`), from which a keeper is made.
 * - With `cluster` (moves are on), each region gets its nodes and, when pod usage is known, its room for the pods of
 *   its workload's template.
 * - With `neighbours` (the ExtendedDeployments of its namespace, or only those whose names may collide with its own,
 *   as the agent's index gives them), another one whose workload gets the same name makes this one invalid, as `edctl
 *   validate` would: acting on a workload that Git keeps overwriting with the other's would only fight it.
 * - `counted` pods are taken like `pods`, each standing for `count` pods (RegionState.settled). Only `edctl plan`'s
 *   simulation passes any; the agent lists every pod.
 */
export function observe(
  ed: ExtendedDeploymentObject,
  regions: readonly DeployRegionObject[],
  workloads: Workloads,
  pods: readonly PodObject[],
  now: number,
  cluster?: ClusterView,
  neighbours: readonly ExtendedDeploymentObject[] = [],
  counted: readonly CountedPods[] = [],
): Observation {
  const observation = observeOne(ed, regions, workloads, pods, now, cluster, counted);
  const name = ed.metadata?.name ?? '';
  const near = neighbours.filter((o) => workloadNamesMayCollide(name, o.metadata?.name ?? ''));
  // Itself alone (the usual case: it is among its namespace's objects) collides with nothing.
  const collisions = near.length < 2 ? [] : workloadNameCollisions(near).filter((p) => p.object.name === name);
  if (collisions.length === 0) return observation;
  if (!observation.ok) return { ...observation, problems: [...observation.problems, ...collisions] };
  return { ok: false, problems: collisions, generation: observation.input.generation, status: observation.input.status };
}

/** `count` pods like `pod` but for their names and uids, settled (see RegionState.settled). */
export interface CountedPods {
  readonly pod: PodObject;
  readonly count: number;
}

function observeOne(
  ed: ExtendedDeploymentObject,
  regions: readonly DeployRegionObject[],
  workloads: Workloads,
  pods: readonly PodObject[],
  now: number,
  cluster: ClusterView | undefined,
  counted: readonly CountedPods[],
): Observation {
  const generation = ed.metadata?.generation ?? 0;
  // A status the agent cannot read is rebuilt from scratch rather than failing the object: status is derived data.
  const status = parsedStatus(ed);
  const raw = withoutStatus(ed);
  const invalid = (problems: readonly Problem[]): Observation => ({ ok: false, problems, generation, status });

  const parsed = parsedExtendedDeployment(ed);
  if (!parsed.ok) {
    // The render adds the cross-field problems (found with the schema's broken fields left out), so the condition lists
    // every problem at once, as `edctl validate` does.
    const rendered = renderAgainst(raw, regions);
    return invalid(rendered.ok ? parsed.problems : rendered.problems);
  }
  const spec = parsed.value.spec;
  // Both are checked before giving up, so the object shows every problem at once (a render reports the distribution's
  // problems itself).
  const targets = targetRevisions(raw, parsed.value, regions);
  // spec.replicas may come from the scale subresource (kubectl scale, an autoscaler): below the regions' counts, they
  // shrink in proportion instead of making the object invalid (distribution.ts).
  // A fleet member runs its recorded share (core/fleet/handover.ts) and its part of lost members' replicas (failover.ts).
  const distribution = distributeReplicas(fleetReplicas(parsed.value, status), spec.regions, 'scaleDown');
  const distributionProblems = distribution.ok ? [] : distribution.problems.map((p) => ({ object: refOf(raw), ...p }));
  if (!targets.ok) return invalid(targets.rendered ? targets.problems : [...distributionProblems, ...targets.problems]);
  if (!distribution.ok) return invalid(distributionProblems);

  const namespace = parsed.value.metadata.namespace ?? ed.metadata?.namespace ?? '';
  const name = parsed.value.metadata.name;
  const kind = workloadKindOf(spec.subsetType);
  const candidates = workloadsOfKind(workloads, kind);
  const inNamespace = within(namespace);
  const replicaSets = workloads.replicaSets.filter(inNamespace);
  const inPlace = inPlaceEnabled(parsed.value);
  const assignment = cluster ? assignNodes(regionSelectors(regions), cluster.nodes) : undefined;
  const owner = { name, uid: ed.metadata?.uid };
  // Read only for partitioned regions, the ones a keeper may be made for.
  const partitioned = spec.regions.some((r) => r.partition !== undefined);
  const history = partitioned && workloads.controllerRevisions ? historyEntries(owner, workloads.controllerRevisions.filter(inNamespace)) : [];
  const regionStates: RegionState[] = spec.regions.map((placement, i) => {
    const workload = candidates.find((w) => w.metadata?.name === workloadName(name, placement.name) && inNamespace(w));
    const target = targets.revisions.get(placement.name) ?? '';
    const template = workload?.spec?.template;
    // Whether an old pod can reach the template by an in-place swap (only when in-place updates are on and the
    // workload already carries the rendered template).
    const swappable = (pod: PodObject) => {
      if (!inPlace || !template || pod.metadata?.labels?.[REVISION_LABEL] === target || template.metadata?.labels?.[REVISION_LABEL] !== target)
        return undefined;
      const method = podUpdateMethod(pod, template);
      return method.method === 'in-place' ? method.images : undefined;
    };
    // Without its workload a region has no pods: whatever carries its labels is nobody's the agent may act on.
    const owners = workload ? podControllers(workload, kind, replicaSets) : [];
    const regionPods = regionPodObjects(pods, namespace, name, placement.name, owners)
      .map((p) => withSwappable(podState(p), swappable(p)))
      .sort(byName);
    const settled = counted
      .filter((c) => regionPodObjects([c.pod], namespace, name, placement.name, owners).length > 0)
      .map((c) => ({ pod: withSwappable(podState(c.pod), swappable(c.pod)), count: c.count }));
    const nodes = assignment?.nodes.get(placement.name) ?? (assignment ? [] : undefined);
    const room = nodes && template && cluster?.usageKnown ? regionRoom(nodes, placementOf(template.spec)) : undefined;
    const keeper = kind === 'ReplicaSet' ? keeperOf(replicaSets, owner, placement.name) : undefined;
    return {
      name: placement.name,
      targetRevision: target,
      desired: distribution.replicas[i] ?? 0,
      ...(regionFailed(regions, placement.name) && { failed: true }),
      ...(placement.partition !== undefined && { partition: partitionPods(placement.partition, distribution.replicas[i] ?? 0) }),
      ...(nodes && { nodes }),
      ...(room !== undefined && { room }),
      workload: workload ? workloadState(workload, kind) : undefined,
      pods: regionPods,
      ...(settled.length > 0 && { settled }),
      ...(keeper && { keeper: keeperState(keeper, regionPodObjects(pods, namespace, name, placement.name, [ownerId('ReplicaSet', keeper)])) }),
      ...(placement.partition !== undefined && { keptTemplates: keptTemplates(history, placement.name) }),
    };
  });

  // Controls name the rollout they were given for: its key, which tells a growth from zero apart from the rollout of
  // the same render that came before it.
  const key = rolloutKey(targets.rolloutRevision, status, growingRegions(parsed.value.spec, regionStates, status));
  return {
    ok: true,
    input: {
      ed: parsed.value,
      ...(ed.metadata?.uid !== undefined && { uid: ed.metadata.uid }),
      generation,
      rolloutRevision: key,
      regions: regionStates,
      status,
      controls: parseControls(ed.metadata?.annotations, key, status?.revision === key ? status.rolloutStartTime : undefined),
      now,
    },
  };
}

/** Whether an object is in `namespace`. */
const within =
  (namespace: string) =>
  (o: MetaObject): boolean =>
    (o.metadata?.namespace ?? '') === namespace;

/**
 * The pods of region `region` of the ExtendedDeployment `namespace/name`: labelled with both names (the workload's
 * selector) and controlled by one of `owners` (core/ownership.ts).
 */
function regionPodObjects(pods: readonly PodObject[], namespace: string, name: string, region: string, owners: readonly OwnerId[]): PodObject[] {
  return pods.filter(
    (p) =>
      within(namespace)(p) &&
      p.metadata?.labels?.[NAME_LABEL] === name &&
      p.metadata?.labels?.[REGION_LABEL] === region &&
      owners.some((owner) => isControlledBy(p.metadata?.ownerReferences, owner)),
  );
}

/**
 * A region's keeper (core/rollout/keeper.ts) among the namespace's ReplicaSets: marked as a keeper, labelled with the
 * region, and controlled by the ExtendedDeployment itself; a ReplicaSet that only carries the labels is not one. The
 * first by name, should there be several.
 */
function keeperOf(replicaSets: readonly WorkloadObject[], owner: HistoryOwner, region: string): WorkloadObject | undefined {
  const edOwner = { kind: ED_KIND, name: owner.name, uid: owner.uid };
  return replicaSets
    .filter((rs) => {
      const labels = rs.metadata?.labels ?? {};
      return labels[KEEPER_LABEL] === 'true' && labels[REGION_LABEL] === region && isControlledBy(rs.metadata?.ownerReferences, edOwner);
    })
    .sort((a, b) => byName({ name: a.metadata?.name ?? '' }, { name: b.metadata?.name ?? '' }))[0];
}

function keeperState(keeper: WorkloadObject, pods: readonly PodObject[]): KeeperState {
  return {
    name: keeper.metadata?.name ?? '',
    uid: keeper.metadata?.uid ?? '',
    revision: keeper.spec?.template?.metadata?.labels?.[REVISION_LABEL],
    replicas: keeper.spec?.replicas ?? 1,
    pods: pods.map(podState).sort(byName),
  };
}

/** What a region ran in each revision its history recorded, by region revision (the newest record of a revision wins). */
function keptTemplates(history: readonly HistoryEntry[], region: string): Record<string, PodTemplate> {
  const templates: Record<string, PodTemplate> = {};
  for (const entry of history) for (const r of entry.regions) if (r.region === region) templates[r.revision] = r.template;
  return templates;
}

/**
 * The pods of an ExtendedDeployment by region, found without its spec, which may not parse: for what must not wait
 * for a valid spec or a working plan (the fail-safe readiness gate). The regions are those the pods' labels name; a
 * pod counts when the regional workload `<name>-<region>` controls it, as in the snapshot: the ReplicaSet of that
 * name, or a ReplicaSet of the Deployment of that name (compat mode), whichever exists, or the region's keeper.
 * Regions in name order, their pods too.
 */
export function podsByRegion(ed: ExtendedDeploymentObject, workloads: Workloads, pods: readonly PodObject[]): RegionPods[] {
  const namespace = ed.metadata?.namespace ?? '';
  const name = ed.metadata?.name ?? '';
  const inNamespace = within(namespace);
  const replicaSets = workloads.replicaSets.filter(inNamespace);
  const labelled = pods.filter((p) => inNamespace(p) && p.metadata?.labels?.[NAME_LABEL] === name);
  const regions = [...new Set(labelled.flatMap((p) => p.metadata?.labels?.[REGION_LABEL] ?? []))].sort();
  return regions.flatMap((region) => {
    const named = (w: WorkloadObject) => w.metadata?.name === workloadName(name, region) && inNamespace(w);
    const replicaSet = replicaSets.find(named);
    const deployment = workloads.deployments.find(named);
    const statefulSet = workloads.statefulSets?.find(named);
    const keeper = keeperOf(replicaSets, { name, uid: ed.metadata?.uid }, region);
    const owners = [
      ...(replicaSet ? podControllers(replicaSet, 'ReplicaSet', replicaSets) : []),
      ...(deployment ? podControllers(deployment, 'Deployment', replicaSets) : []),
      ...(statefulSet ? [ownerId('StatefulSet', statefulSet)] : []),
      ...(keeper ? [ownerId('ReplicaSet', keeper)] : []),
    ];
    const regionPods = regionPodObjects(labelled, namespace, name, region, owners).map(podState).sort(byName);
    return regionPods.length > 0 ? [{ name: region, pods: regionPods }] : [];
  });
}

/** The cluster's nodes, for ExtendedDeployments with moves on. */
export interface ClusterView {
  readonly nodes: readonly NodeView[];
  /** Whether the nodes' `requested` counts every pod (else room is unknown and nothing moves). */
  readonly usageKnown: boolean;
}

/** Whether an ExtendedDeployment's status (unvalidated) records replicas away from their region. */
export function hasMoves(ed: ExtendedDeploymentObject): boolean {
  const moves = (ed.status as { moves?: unknown } | undefined)?.moves;
  return Array.isArray(moves) && moves.length > 0;
}

/** Whether an ExtendedDeployment (unvalidated) turns moves on or has some: only then does the agent look at nodes for it. */
export function wantsMoves(ed: ExtendedDeploymentObject): boolean {
  return parsedMovesEnabled(ed) || hasMoves(ed);
}

/** The valid DeployRegions' node selections (an invalid one selects nothing: its problems are the render's to report). */
export function regionSelectors(regions: readonly DeployRegionObject[]): NamedRegionSelector[] {
  return regions.flatMap((object) => {
    const parsed = parsedDeployRegion(object);
    return parsed.ok
      ? [{ name: parsed.value.metadata.name, matchLabels: parsed.value.spec.matchLabels, matchExpressions: parsed.value.spec.matchExpressions }]
      : [];
  });
}

function placementOf(spec: PodSpec | undefined): PodPlacement {
  return { requests: podRequests(spec), tolerations: spec?.tolerations ?? [], nodeSelector: spec?.nodeSelector ?? {} };
}

type Targets =
  | { ok: true; revisions: ReadonlyMap<string, string>; rolloutRevision: string }
  | { ok: false; problems: readonly Problem[]; /** The problems come from a full render (which checks everything). */ rendered?: boolean };

/**
 * The revision each region should reach and the rollout revision, from the render's annotations; rendered here from
 * the cached DeployRegions when the object carries none.
 */
function targetRevisions(raw: ExtendedDeploymentObject, ed: ExtendedDeployment, regionObjects: readonly DeployRegionObject[]): Targets {
  const annotations = ed.metadata.annotations ?? {};
  const recorded = annotations[REVISIONS_ANNOTATION];
  const at = ['metadata', 'annotations', REVISIONS_ANNOTATION];
  const object = refOf(raw);
  if (recorded === undefined) return renderTargets(raw, regionObjects);

  let map: unknown;
  try {
    map = JSON.parse(recorded);
  } catch {
    return { ok: false, problems: [{ object, path: at, message: 'is not JSON (expected a map of region name to revision)' }] };
  }
  if (map === null || typeof map !== 'object' || Array.isArray(map) || Object.values(map).some((v) => typeof v !== 'string')) {
    return { ok: false, problems: [{ object, path: at, message: 'must be a JSON map of region name to revision' }] };
  }
  const revisions = new Map(Object.entries(map as Record<string, string>));
  const missing = ed.spec.regions.filter((r) => !revisions.has(r.name)).map((r) => r.name);
  const unrevised: Problem[] =
    missing.length > 0 ? [{ object, path: at, message: `has no revision for region ${missing.join(', ')} (render the object again)` }] : [];
  // The render that wrote the annotation saw the DeployRegions of its time; the cluster's may be gone since.
  const known = deployRegionsByName(regionObjects);
  const unplaced = regionReferenceProblems(ed, new Set(known.regions.keys()), known.invalid, object);
  if (unrevised.length > 0 || unplaced.length > 0) return { ok: false, problems: [...unrevised, ...unplaced] };
  const ordered = new Map(ed.spec.regions.map((r) => [r.name, revisions.get(r.name) ?? '']));
  return { ok: true, revisions: ordered, rolloutRevision: annotations[ROLLOUT_REVISION_ANNOTATION] ?? hashRolloutRevision(ordered) };
}

/** The cached DeployRegions that parse, by name, and the names of those that do not (they exist, but are invalid). */
function deployRegionsByName(regionObjects: readonly DeployRegionObject[]): { regions: Map<string, DeployRegion>; invalid: Set<string> } {
  const regions = new Map<string, DeployRegion>();
  const invalid = new Set<string>();
  for (const object of regionObjects) {
    const parsed = parsedDeployRegion(object);
    if (parsed.ok) regions.set(parsed.value.metadata.name, parsed.value);
    else if (object.metadata?.name) invalid.add(object.metadata.name);
  }
  return { regions, invalid };
}

/** Renders the object against the cached DeployRegions, exactly as `edctl render` would. */
function renderAgainst(raw: ExtendedDeploymentObject, regionObjects: readonly DeployRegionObject[]): ReturnType<typeof renderExtendedDeployment> {
  const { regions, invalid } = deployRegionsByName(regionObjects);
  return renderExtendedDeployment(raw, regions, { invalidRegions: invalid, belowNeeds: 'scaleDown' });
}

function renderTargets(raw: ExtendedDeploymentObject, regionObjects: readonly DeployRegionObject[]): Targets {
  const rendered = renderAgainst(raw, regionObjects);
  if (!rendered.ok) return { ok: false, problems: rendered.problems, rendered: true };
  return { ok: true, revisions: new Map(rendered.value.regions.map((r) => [r.name, r.revision])), rolloutRevision: rendered.value.rolloutRevision };
}

function workloadState(workload: WorkloadObject, kind: WorkloadKind): WorkloadState {
  const status = workload.status ?? {};
  return {
    name: workload.metadata?.name ?? '',
    templateRevision: workload.spec?.template?.metadata?.labels?.[REVISION_LABEL],
    // Kubernetes defaults an omitted spec.replicas to 1; the cache shows the defaulted value, this is belt and braces.
    replicas: workload.spec?.replicas ?? 1,
    ...(kind === 'ReplicaSet' && {
      reported: {
        generation: workload.metadata?.generation ?? 0,
        observedGeneration: status.observedGeneration ?? 0,
        terminatingReplicas: status.terminatingReplicas,
      },
      groupRecord: parseGroupRecord(workload.metadata?.annotations?.[GROUP_RECORD_ANNOTATION]),
    }),
    ...(kind === 'StatefulSet' && {
      statefulSet: {
        partition: workload.spec?.updateStrategy?.rollingUpdate?.partition ?? 0,
        generation: workload.metadata?.generation ?? 0,
        observedGeneration: status.observedGeneration ?? 0,
        currentRevision: status.currentRevision,
        updateRevision: status.updateRevision,
      },
    }),
    ...(kind === 'Deployment' && {
      deployment: {
        paused: workload.spec?.paused === true,
        generation: workload.metadata?.generation ?? 0,
        observedGeneration: status.observedGeneration ?? 0,
        replicas: status.replicas ?? 0,
        updatedReplicas: status.updatedReplicas ?? 0,
        readyReplicas: status.readyReplicas ?? 0,
        availableReplicas: status.availableReplicas ?? 0,
      },
    }),
  };
}

/** The pod with the images an in-place swap would set, when one can reach the template. */
const withSwappable = (state: PodState, swappable: Readonly<Record<string, string>> | undefined): PodState =>
  swappable === undefined ? state : { ...state, swappable };

/**
 * A pod as the planner sees it (frozen), remembered per object and resourceVersion (perVersion): a watch cache replaces
 * a pod when it changes, and the agent looks at an ExtendedDeployment many times between its pods' changes
 * (bench:peers, 200 rollouts at once: reading them again was 2.5 % of the agent's CPU).
 */
export const podState: (pod: PodObject) => PodState = perVersion(readPodState);

function readPodState(pod: PodObject): PodState {
  const ready = pod.status?.conditions?.find((c) => c.type === 'Ready');
  const isReady = ready?.status === 'True';
  const gate = pod.status?.conditions?.find((c) => c.type === IN_PLACE_READINESS_GATE);
  const scheduled = pod.status?.conditions?.find((c) => c.type === 'PodScheduled');
  // Only the reason counts: the scheduler's message varies with the cause and the release, and may be translated.
  const unschedulable = !pod.spec?.nodeName && scheduled?.status === 'False' && scheduled.reason === 'Unschedulable';
  const cost = pod.metadata?.annotations?.[POD_DELETION_COST_ANNOTATION];
  const markCost = removalMarkCost(cost);
  const markedOld = markCost !== undefined;
  const held = cost === HELD_POD_DELETION_COST;
  return {
    name: pod.metadata?.name ?? '',
    uid: pod.metadata?.uid ?? '',
    revision: pod.metadata?.labels?.[REVISION_LABEL],
    assigned: !!pod.spec?.nodeName,
    running: pod.status?.phase === 'Running',
    phase: pod.status?.phase,
    ready: isReady,
    readySince: timestampMs(ready?.lastTransitionTime),
    terminating: !!pod.metadata?.deletionTimestamp,
    unschedulableSince: unschedulable ? (timestampMs(scheduled.lastTransitionTime) ?? 0) : undefined,
    createdAt: timestampMs(pod.metadata?.creationTimestamp),
    markedOld,
    ...(markedOld && { markCost }),
    ...(held && { held }),
    markedAt: markedOld || held ? timestampMs(pod.metadata?.annotations?.[MARKED_AT_ANNOTATION]) : undefined,
    gated: pod.spec?.readinessGates?.some((g) => g.conditionType === IN_PLACE_READINESS_GATE) === true,
    gateOpen: gate?.status === 'True',
    gateClosedAt: gate?.status === 'False' ? timestampMs(gate.lastTransitionTime) : undefined,
    resourceVersion: pod.metadata?.resourceVersion ?? '',
    swap: parseSwapState(pod.metadata?.annotations?.[SWAP_STATE_ANNOTATION]),
    initTrouble: initTrouble(pod),
    containers: (pod.spec?.containers ?? []).map((c): ContainerState => {
      const status = pod.status?.containerStatuses?.find((s) => s.name === c.name);
      const waiting = status?.state?.waiting?.reason;
      const terminated = status?.state?.terminated;
      return {
        name: c.name,
        image: c.image ?? '',
        containerID: status?.containerID,
        restartCount: status?.restartCount ?? 0,
        running: status?.state?.running !== undefined,
        ready: status?.ready === true,
        ...(waiting !== undefined && { waiting: { reason: waiting, message: status?.state?.waiting?.message } }),
        ...(terminated !== undefined && { terminated: terminated.reason ?? 'terminated' }),
      };
    }),
  };
}

/**
 * What holds a pod in its init containers, as kubectl's STATUS column says it (printers.go): the first init container
 * that has not completed: `Init:<reason>` when it waits with a reason other than PodInitializing or terminated with an
 * error, else `Init:<completed>/<all>`. Undefined when every init container completed, or the pod has none.
 */
export function initTrouble(pod: PodObject): string | undefined {
  const specs = pod.spec?.initContainers ?? [];
  const statuses = pod.status?.initContainerStatuses ?? [];
  for (const [i, spec] of specs.entries()) {
    const state = statuses.find((s) => s.name === spec.name)?.state;
    if (state?.terminated?.exitCode === 0) continue;
    if (state?.terminated) return `Init:${state.terminated.reason ?? `ExitCode:${state.terminated.exitCode ?? '?'}`}`;
    const waiting = state?.waiting;
    if (waiting?.reason && waiting.reason !== 'PodInitializing') return `Init:${waiting.reason}${waiting.message ? ` (${waiting.message})` : ''}`;
    return `Init:${i}/${specs.length}`;
  }
  return undefined;
}

/** Whether the DeployRegion's status (written by the agent's region health) says Failed. */
function regionFailed(regions: readonly DeployRegionObject[], name: string): boolean {
  const status = regions.find((r) => r.metadata?.name === name)?.status as { phase?: unknown } | undefined;
  return status?.phase === 'Failed';
}
