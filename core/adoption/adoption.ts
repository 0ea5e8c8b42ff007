import type { AdoptionSource, AdoptionStatus, ExtendedDeployment, ExtendedDeploymentStatus } from '../api/extended-deployment.js';
import { ADOPTED_FROM_ANNOTATION, REVISION_LABEL } from '../labels.js';
import type { PodObject, PodTemplate, WorkloadObject } from '../kube/objects.js';
import { workloadName } from '../kube/workload-kinds.js';
import { byName } from '../by-name.js';
import { podState } from '../observe/observe.js';
import { isControlledBy, ownerId, type OwnerId } from '../ownership.js';
import { templateRevision } from '../revision.js';
import type { RolloutEvent } from '../rollout/planner.js';
import { isPodActive } from '../rollout/pod-activity.js';
import { selectorMatches } from '../selector.js';
import type { AdoptionAction } from './actions.js';

/**
 * Adoption without downtime (#19): a region takes over the pods of a running Deployment or ReplicaSet by moving their
 * controller reference to its own ReplicaSet, a few pods per step, and scaling the old workload down by as many. No
 * pod is restarted and the Ready count never drops. docs/proposals/adoption.md has the experiment on the lab's
 * controllers this follows; the rules it found:
 *
 * - A ReplicaSet counts only the pods it controls, and fills or trims to its spec within milliseconds. Each
 *   intermediate state of a step has one ReplicaSet with fewer pods than its spec, so pod creation is frozen for
 *   the step's length: the admission policy `extendeddeployment-adoption-freeze` (constructs/adoption-freeze.ts)
 *   refuses pods of a region whose adoption is not Adopted, and pods controlled by a ReplicaSet listed in its entry's
 *   `frozen` (the status, written before any move), and every step starts by proving the freeze holds.
 * - The writes of a step go in one order, each only once the controller concerned has observed the previous one: the
 *   region's ReplicaSet is raised (and has observed it), the pods move, the old ReplicaSet has counted them out, the
 *   old workload is scaled down. Any other order, or an ungated one, made the controllers delete original pods.
 * - A Deployment is scaled through its own spec, never its ReplicaSet's (the Deployment controller sets that back).
 * - Every step is re-derived from what the API server shows (r > pods: move; old spec > old pods: scale it down;
 *   neither: raise), so an agent that dies anywhere continues where the next leader finds the objects.
 */

/** The ValidatingAdmissionPolicy (and binding) that freezes pod creation during adoption steps (constructs/adoption-freeze.ts). */
export const ADOPTION_FREEZE_POLICY = 'extendeddeployment-adoption-freeze';

/** Pods moved per step: each step is three writes of about 0.1 s; a bound keeps what one step has in flight small. */
export const ADOPTION_BATCH = 10;

/** What the adoption reads, fresh from the API server (not from caches: the step is decided on counts of two sets). */
export interface AdoptionObjects {
  /** The Deployments named by `adopt` references (absent when not found). */
  readonly deployments: readonly WorkloadObject[];
  /** The ReplicaSets of the namespace: the regions' own, the ones adopted, and the adopted Deployments'. */
  readonly replicaSets: readonly WorkloadObject[];
  /** The upstream InplaceSets named by `adopt` references (absent when not found, or where that kind is not served). */
  readonly inplaceSets: readonly WorkloadObject[];
  /** The pods of the namespace. */
  readonly pods: readonly PodObject[];
}

/** The sources the adoption reads by name (the other kinds are read whole: the namespace's ReplicaSets). */
export interface AdoptionSources {
  readonly deployments: readonly string[];
  readonly inplaceSets: readonly string[];
}

/** The adoption of every region with `adopt`: the status entries, the writes to make now, and Events. */
export interface AdoptionPlan {
  /** One entry per region with `adopt`, in declared order (status.adoptions). */
  readonly entries: readonly AdoptionStatus[];
  /** Writes to make now, in order per region. */
  readonly actions: readonly AdoptionAction[];
  /** Some region's adoption is not Adopted: the rollout waits (nothing else acts on the regions meanwhile). */
  readonly open: boolean;
  /** What the open adoptions do or wait for, for the Progressing condition. */
  readonly message: string;
  readonly events: readonly RolloutEvent[];
}

/** Whether an ExtendedDeployment adopts anything, and whether its status shows every adoption done (no reads needed). */
export function adoptionState(ed: ExtendedDeployment, status: ExtendedDeploymentStatus | undefined): 'none' | 'done' | 'open' {
  const adopting = ed.spec.regions.filter((r) => r.adopt);
  if (adopting.length === 0) return 'none';
  const entries = status?.adoptions ?? [];
  const done = adopting.every((r) => entries.some((e) => e.region === r.name && e.phase === 'Adopted' && e.source === sourceName(r.adopt!)));
  return done ? 'done' : 'open';
}

/** The entries a status keeps while every adoption is done: those of regions that still name their source. */
export function doneAdoptions(ed: ExtendedDeployment, status: ExtendedDeploymentStatus | undefined): AdoptionStatus[] {
  return (status?.adoptions ?? []).filter((e) => ed.spec.regions.some((r) => r.name === e.region && r.adopt && sourceName(r.adopt) === e.source));
}

/** Plans every region's adoption from fresh objects and the entries the status the agent last wrote shows. */
export function planAdoptions(ed: ExtendedDeployment, status: ExtendedDeploymentStatus | undefined, objects: AdoptionObjects): AdoptionPlan {
  const previous = status?.adoptions ?? [];
  const steps = ed.spec.regions.flatMap((region) => (region.adopt ? [stepRegion(ed, region.name, region.adopt, objects, previous)] : []));
  const entries = steps.map((s) => s.entry);
  const events = entries.flatMap((entry) =>
    adoptionEvents(
      previous.find((e) => e.region === entry.region),
      entry,
    ),
  );
  const open = entries.filter((e) => e.phase !== 'Adopted');
  return {
    entries,
    actions: steps.flatMap((s) => s.actions),
    open: open.length > 0,
    message: open.map((e) => `region ${e.region} adopting ${e.source}: ${e.message ?? e.phase}`).join('; '),
    events,
  };
}

/** `Kind/name`, as status entries and messages name a source. */
export function sourceName(source: AdoptionSource): string {
  return `${source.kind}/${source.name}`;
}

interface RegionStep {
  readonly entry: AdoptionStatus;
  readonly actions: readonly AdoptionAction[];
}

/** The workload that runs a source's pods, and the object its count is written on. */
interface Source {
  /** Where the replica count is written: the Deployment, the bare ReplicaSet or the InplaceSet. */
  readonly scaled: WorkloadObject;
  /** The object whose pods move; undefined when the source runs none (a Deployment scaled to 0). */
  readonly replicaSet: WorkloadObject | undefined;
  /** The kind the pods' controller reference names. */
  readonly podOwner: 'ReplicaSet' | 'InplaceSet';
  /**
   * A controller acts on its count: it fills and trims to it and reports what it counted, so each write waits until it
   * has observed the last. An upstream InplaceSet has none once its operator is uninstalled, and waits for nothing.
   */
  readonly controlled: boolean;
}

function stepRegion(ed: ExtendedDeployment, region: string, adopt: AdoptionSource, objects: AdoptionObjects, previous: readonly AdoptionStatus[]): RegionStep {
  const source = sourceName(adopt);
  const wait = (message: string, moved?: number): RegionStep => ({
    entry: { region, source, phase: 'Waiting', ...(moved !== undefined && { moved }), message },
    actions: [],
  });
  const adopted = (message: string, moved: number): RegionStep => ({ entry: { region, source, phase: 'Adopted', moved, message }, actions: [] });

  const oursName = workloadName(ed.metadata.name, region);
  const ours = objects.replicaSets.find((rs) => rs.metadata?.name === oursName);
  const before = previous.find((e) => e.region === region && e.source === source);
  // A freeze is lifted only where it leaves no ReplicaSet short of pods: the frozen one has as many as its count.
  const unsettled = (before?.phase === 'Moving' ? objects.replicaSets.filter((rs) => before.frozen?.includes(rs.metadata?.uid ?? '')) : []).find(
    (rs) => !settled(rs, controlledPods(objects.pods, ownerId('ReplicaSet', rs)).length),
  );
  const holdOrWait = (reason: string, moved?: number): RegionStep =>
    unsettled && before
      ? {
          entry: { ...before, message: `${reason}; the freeze holds until ReplicaSet ${unsettled.metadata?.name} runs as many pods as its count` },
          actions: [],
        }
      : wait(reason, moved);
  if (!ours) return holdOrWait(`waiting for the sync to create ReplicaSet ${oursName}`);
  const oursPods = controlledPods(objects.pods, ownerId('ReplicaSet', ours));
  const found = findSource(adopt, objects);
  if (found === 'gone') return adopted(`${source} not found: nothing left to adopt`, oursPods.length);
  if (typeof found === 'string') return holdOrWait(found, oursPods.length);
  const clash = adopt.kind === 'Deployment' ? adoptableBy(found.scaled, ours) : undefined;
  if (clash) return holdOrWait(clash, oursPods.length);

  const oldRs = found.replicaSet;
  const oldPods = oldRs ? controlledPods(objects.pods, ownerId(found.podOwner, oldRs)) : [];
  const o = found.scaled.spec?.replicas ?? 1;
  const q = oldPods.length;
  const p = oursPods.length;
  if (o === 0 && q === 0 && (!oldRs || !found.controlled || settled(oldRs, 0)) && !unsettled) return adopted(`${p} pods taken over from ${source}`, p);
  if (!oldRs) return holdOrWait(`${source} has no ReplicaSet running its pods yet`, p);

  // Moving: the freeze is in the status first, and proved by every step before it writes anything.
  const frozen = [oldRs.metadata?.uid ?? ''];
  const entry: AdoptionStatus = { region, source, phase: 'Moving', frozen, moved: p, message: `${p} pods moved, ${q} to go` };
  if (before?.phase !== 'Moving' || JSON.stringify(before.frozen) !== JSON.stringify(frozen)) return { entry, actions: [] };
  const verify: AdoptionAction = {
    kind: 'verifyFreeze',
    region,
    owner: { apiVersion: oldRs.apiVersion ?? 'apps/v1', kind: found.podOwner, name: oldRs.metadata?.name ?? '', uid: frozen[0]! },
  };
  const step = (...actions: AdoptionAction[]): RegionStep => ({ entry, actions: [verify, ...actions] });
  const waitIn = (): RegionStep => ({ entry, actions: [] });

  const r = ours.spec?.replicas ?? 1;
  if (r > p) {
    // The region's ReplicaSet must know its raised count before a pod arrives, or it deletes the pod as excess.
    if (!observed(ours)) return waitIn();
    const moving = oldPods
      .map((pod) => ({ name: pod.metadata?.name ?? '', pod }))
      .sort(byName)
      .slice(0, r - p)
      .map(({ pod }) => pod);
    const template = ours.spec?.template ?? {};
    const revision = adoptedRevision(oldRs.spec?.template ?? {}, template);
    return step(...moving.map((pod) => adoptPod(region, pod, ours, template, revision, source)));
  }
  if (o > q) {
    // The old ReplicaSet must have counted the moved pods out before its count drops, or it deletes an original.
    if (found.controlled && (!observed(oldRs) || (oldRs.status?.replicas ?? 0) > q)) return waitIn();
    return step({ kind: 'scaleSource', region, source: adopt, from: o, replicas: q });
  }
  if (p > r || q === 0) return waitIn();
  // Pods the region's ReplicaSet made itself before the freeze (Kubernetes' default of one replica, when Git created
  // it before the ExtendedDeployment existed) leave first while they serve nothing: not Ready, they go first in a
  // scale-down, so no adopted pod is removed and no capacity is lost.
  const unready = oursPods.filter((pod) => !pod.metadata?.annotations?.[ADOPTED_FROM_ANNOTATION] && !podState(pod).ready).length;
  if (unready > 0) return step({ kind: 'scale', region, workload: oursName, from: r, replicas: r - unready });
  return step({ kind: 'scale', region, workload: oursName, from: r, replicas: r + Math.min(ADOPTION_BATCH, q) });
}

/**
 * The source's objects, or why there are none: `gone` (nothing to adopt: it was deleted, or never existed), or a
 * sentence saying what it waits for.
 */
function findSource(adopt: AdoptionSource, objects: AdoptionObjects): Source | string {
  if (adopt.kind === 'InplaceSet') {
    const set = objects.inplaceSets.find((o) => o.metadata?.name === adopt.name);
    return set ? { scaled: set, replicaSet: set, podOwner: 'InplaceSet', controlled: false } : 'gone';
  }
  if (adopt.kind === 'ReplicaSet') {
    const rs = objects.replicaSets.find((o) => o.metadata?.name === adopt.name);
    if (!rs) return 'gone';
    const controller = rs.metadata?.ownerReferences?.find((ref) => ref.controller === true);
    if (controller)
      return `ReplicaSet ${adopt.name} is controlled by ${controller.kind} ${controller.name}, which sets its replicas: adopt the ${controller.kind} instead`;
    return { scaled: rs, replicaSet: rs, podOwner: 'ReplicaSet', controlled: true };
  }
  const deployment = objects.deployments.find((o) => o.metadata?.name === adopt.name);
  if (!deployment) return 'gone';
  if (!observed(deployment)) return `waiting for the Deployment controller to observe Deployment ${adopt.name}`;
  const owned = objects.replicaSets.filter((rs) => isControlledBy(rs.metadata?.ownerReferences, ownerId('Deployment', deployment)));
  // Running: wants pods, has some, or has not yet reported the last one gone.
  const running = owned.filter(
    (rs) => (rs.spec?.replicas ?? 0) > 0 || (rs.status?.replicas ?? 0) > 0 || controlledPods(objects.pods, ownerId('ReplicaSet', rs)).length > 0,
  );
  if (running.length > 1)
    return `Deployment ${adopt.name} is rolling out (ReplicaSets ${running.map((rs) => rs.metadata?.name).join(', ')} run pods): the adoption goes on once it is done`;
  return { scaled: deployment, replicaSet: running[0], podOwner: 'ReplicaSet', controlled: true };
}

/**
 * Why the Deployment would take the region's ReplicaSet: a Deployment adopts the orphan ReplicaSets its selector
 * matches and scales them to its own count (run I of the experiment lost every pod that way).
 */
function adoptableBy(deployment: WorkloadObject, ours: WorkloadObject): string | undefined {
  const selector = (deployment.spec as { selector?: { matchLabels?: Record<string, string> } } | undefined)?.selector;
  const controlled = ours.metadata?.ownerReferences?.some((ref) => ref.controller === true) ?? false;
  if (!selector || controlled || !selectorMatches(selector, ours.metadata?.labels ?? {})) return undefined;
  return `Deployment ${deployment.metadata?.name} selects the labels of ReplicaSet ${ours.metadata?.name} and would take it over: give the ReplicaSet labels its selector does not match`;
}

/**
 * The revision label of a moved pod: the region's revision when the source's template is the region's but for the
 * labels the move sets (then the pod counts as updated), else the hash of what it runs, which no render gives, so the
 * rollout replaces it like any old pod.
 */
export function adoptedRevision(sourceTemplate: PodTemplate, regionTemplate: PodTemplate): string {
  const target = templateRevision(regionTemplate);
  const labels = { ...withoutHash(sourceTemplate.metadata?.labels), ...regionTemplate.metadata?.labels };
  const moved = templateRevision({ ...sourceTemplate, metadata: { ...sourceTemplate.metadata, labels } });
  return moved === target ? (regionTemplate.metadata?.labels?.[REVISION_LABEL] ?? target) : moved;
}

/** The Deployment controller's label on its ReplicaSets' pods: it names the old ReplicaSet's template, not ours. */
const POD_TEMPLATE_HASH = 'pod-template-hash';

function withoutHash(labels: Readonly<Record<string, string>> | undefined): Record<string, string> {
  const rest = { ...labels };
  delete rest[POD_TEMPLATE_HASH];
  return rest;
}

function adoptPod(region: string, pod: PodObject, ours: WorkloadObject, template: PodTemplate, revision: string, source: string): AdoptionAction {
  return {
    kind: 'adoptPod',
    region,
    pod: pod.metadata?.name ?? '',
    uid: pod.metadata?.uid ?? '',
    resourceVersion: pod.metadata?.resourceVersion ?? '',
    owner: { name: ours.metadata?.name ?? '', uid: ours.metadata?.uid ?? '' },
    labels: { ...withoutHash(pod.metadata?.labels), ...template.metadata?.labels, [REVISION_LABEL]: revision },
    annotations: { ...pod.metadata?.annotations, [ADOPTED_FROM_ANNOTATION]: source },
  };
}

function controlledPods(pods: readonly PodObject[], owner: OwnerId): PodObject[] {
  return pods.filter(
    (pod) =>
      isControlledBy(pod.metadata?.ownerReferences, owner) &&
      isPodActive({ phase: pod.status?.phase, terminating: pod.metadata?.deletionTimestamp !== undefined && pod.metadata.deletionTimestamp !== null }),
  );
}

/** A ReplicaSet at rest with `pods` pods: it has acted on its spec, wants exactly those and reports them. */
function settled(rs: WorkloadObject, pods: number): boolean {
  return observed(rs) && (rs.spec?.replicas ?? 1) === pods && (rs.status?.replicas ?? 0) === pods;
}

/** The controller has acted on the object's current spec. */
function observed(workload: WorkloadObject): boolean {
  return (workload.status?.observedGeneration ?? 0) >= (workload.metadata?.generation ?? 0);
}

/** Events of an entry's transitions: a move starting, and the adoption done. */
function adoptionEvents(before: AdoptionStatus | undefined, after: AdoptionStatus): RolloutEvent[] {
  if (before?.phase === after.phase && before.source === after.source) return [];
  if (after.phase === 'Moving') return [{ type: 'Normal', reason: 'AdoptionStarted', message: `region ${after.region} adopting the pods of ${after.source}` }];
  if (after.phase === 'Adopted') return [{ type: 'Normal', reason: 'Adopted', message: `region ${after.region}: ${after.message ?? 'adopted'}` }];
  return [{ type: 'Normal', reason: 'AdoptionWaiting', message: `region ${after.region} adopting ${after.source}: ${after.message ?? 'waiting'}` }];
}
