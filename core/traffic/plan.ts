import type { TrafficStatus, TrafficStrategy } from '../api/traffic.js';
import { REVISION_LABEL } from '../labels.js';
import type { ObjectMeta } from '../kube/objects.js';
import type { Problem } from '../problems.js';
import { canonicalJson } from '../revision.js';
import { routeAccepted } from './applied.js';
import { clashProblem, ownsObject } from './clash.js';
import { decideDrain, type DrainDecision } from './drain.js';
import { MANAGED_BY_LABEL, AGENT_MANAGER, type HTTPRouteObject, type ObservedRoute, type ServiceObject, type TrafficOwner } from './objects.js';
import { ownsRoute, routeWeights, weightedRoute, type RevisionWeight } from './route.js';
import { revisionService, revisionServiceName } from './services.js';
import { canaryShare, revisionWeights, WEIGHT_TOTAL, type RevisionEndpoints } from './weights.js';

/** One revision of the ExtendedDeployment that has pods. */
export interface LiveRevision extends RevisionEndpoints {
  /** Its pods, Ready or not (a revision with none is not live). */
  readonly pods: number;
}

/** A Service as the plan reads it: enough to tell whose it is and whether it is as wanted. */
export interface ObservedTrafficService {
  readonly metadata?: ObjectMeta;
  readonly spec?: {
    readonly selector?: Readonly<Record<string, string>>;
    readonly ports?: readonly {
      readonly name?: unknown;
      readonly port?: unknown;
      readonly targetPort?: unknown;
      readonly protocol?: unknown;
      readonly appProtocol?: unknown;
    }[];
  };
}

/** What one look at an ExtendedDeployment's traffic reads. */
export interface TrafficLook {
  readonly owner: TrafficOwner;
  readonly traffic: TrafficStrategy;
  /** The rollout the weights belong to (status.revision); undefined before the first rollout. */
  readonly rolloutRevision: string | undefined;
  /** The group in progress, from 1; with no rollout under way, the last group (everything rolled out). */
  readonly group: number;
  /** Whether the group's new pods are Ready (available): only then does its weight step go out. */
  readonly groupReady: boolean;
  /** Every revision with pods, in any order. */
  readonly revisions: readonly LiveRevision[];
  /** The route `<ed>` as read; undefined when there is none. */
  readonly route: ObservedRoute | undefined;
  /** The Services of the namespace the agent reads (those named `<ed>-…` are enough). */
  readonly services: readonly ObservedTrafficService[];
  readonly status: TrafficStatus | undefined;
  /** Paused, aborted or waiting: the canary's share stays where it is. */
  readonly hold: boolean;
  /** A failed analysis with onFailure ShiftBack: the canary's weight goes to 0 (its pods stay). */
  readonly shiftBack: boolean;
  readonly now: number;
}

/** One write of a traffic plan. */
export type TrafficWrite =
  | { readonly kind: 'applyService'; readonly service: ServiceObject }
  | { readonly kind: 'applyRoute'; readonly route: HTTPRouteObject }
  | { readonly kind: 'deleteService'; readonly name: string }
  | { readonly kind: 'deleteRoute'; readonly name: string };

/** What the agent does about traffic at one look. */
export interface TrafficPlan {
  /** Objects in the way (a route or Service of that name that is not this ExtendedDeployment's): nothing is written. */
  readonly problems: readonly Problem[];
  /**
   * Writes in order: revision Services before the route that sends to them, the route before the Services it no
   * longer names are deleted (a route naming a missing Service answers 500 for its weight).
   */
  readonly writes: readonly TrafficWrite[];
  /** status.traffic as it must be; undefined in mode Replicas (the field is cleared). */
  readonly status: TrafficStatus | undefined;
  /** The status records new weights or a drain start: it goes out before the writes, so the intent survives a crash. */
  readonly statusFirst: boolean;
  /** The weights wanted, by revision. */
  readonly weights: readonly RevisionWeight[];
  /** Whether the route as read carries these weights and every parent accepted its generation. */
  readonly applied: boolean;
  /**
   * Whether the group barrier may pass as far as traffic goes: the group's weight step is applied. Held, shifted back
   * or in the way of another object's, it may not.
   */
  readonly barrierMayAdvance: boolean;
  /** Which stable revisions' pods may go, which must keep a Ready pod, which may lose none (drain.ts); target revisions are not in it. */
  readonly drain: DrainDecision;
  /** Instants (ms) to look again although no object changes: drains ending. */
  readonly wakeAt: readonly number[];
}

// Markers a GitOps engine puts on what it applies: an object carrying one is Git's now, whatever its ownerReference.
const GITOPS_MARKERS = ['argocd.argoproj.io/tracking-id', 'kustomize.toolkit.fluxcd.io/name', 'helm.toolkit.fluxcd.io/name'];

/** Whether the agent made `object` and nothing else claims it: only such leftovers are deleted when traffic mode changes. */
function agentLeftover(object: { readonly metadata?: ObjectMeta | undefined }, owner: TrafficOwner): boolean {
  const meta = object.metadata;
  const marked = GITOPS_MARKERS.some((m) => meta?.annotations?.[m] !== undefined || meta?.labels?.[m] !== undefined);
  return ownsObject(object, owner) && meta?.labels?.[MANAGED_BY_LABEL] === AGENT_MANAGER && !marked;
}

function sameWeights(a: readonly RevisionWeight[] | undefined, b: readonly RevisionWeight[]): boolean {
  const sorted = (w: readonly RevisionWeight[]) => canonicalJson([...w].sort((x, y) => (x.revision < y.revision ? -1 : x.revision > y.revision ? 1 : 0)));
  return a !== undefined && sorted(a) === sorted(b);
}

/** Whether the route's weights by Service name are exactly `weights` (no other Service with weight). */
function weightsIn(observed: ReadonlyMap<string, number>, ed: string, weights: readonly RevisionWeight[]): boolean {
  const wanted = new Map(weights.map((w) => [revisionServiceName(ed, w.revision), w.weight]));
  return (
    [...wanted].every(([name, weight]) => (observed.get(name) ?? 0) === weight) && [...observed].every(([name, weight]) => weight === 0 || wanted.has(name))
  );
}

/** Whether a Service as read is the wanted one in every field the agent writes. */
function serviceUpToDate(observed: ObservedTrafficService, wanted: ServiceObject): boolean {
  const labels = observed.metadata?.labels ?? {};
  const ports = (observed.spec?.ports ?? []).map((p) => ({
    name: p.name,
    port: p.port,
    targetPort: p.targetPort,
    protocol: p.protocol,
    appProtocol: p.appProtocol,
  }));
  return (
    Object.entries(wanted.metadata.labels).every(([k, v]) => labels[k] === v) &&
    canonicalJson(observed.spec?.selector ?? {}) === canonicalJson(wanted.spec.selector) &&
    canonicalJson(ports) === canonicalJson(wanted.spec.ports)
  );
}

/** Whether the route as read is the wanted one: the same spec (both fully defaulted) and the agent's labels. */
function routeUpToDate(observed: ObservedRoute | undefined, wanted: HTTPRouteObject): boolean {
  if (observed === undefined) return false;
  const labels = observed.metadata?.labels ?? {};
  return Object.entries(wanted.metadata.labels).every(([k, v]) => labels[k] === v) && canonicalJson(observed.spec ?? {}) === canonicalJson(wanted.spec);
}

/** The canary share to keep while held: what the status recorded for this rollout's target revisions. */
function recordedShare(look: TrafficLook): number | undefined {
  const status = look.status;
  if (!status?.weights || status.revision !== look.rolloutRevision) return undefined;
  const targets = new Set(look.revisions.filter((r) => r.target).map((r) => r.revision));
  return status.weights.filter((w) => targets.has(w.revision)).reduce((s, w) => s + w.weight, 0);
}

/** The plan of mode Replicas: no route writes; leftovers of mode Weighted are deleted, route first. */
function replicasPlan(look: TrafficLook): TrafficPlan {
  const writes: TrafficWrite[] = [];
  const name = look.owner.name;
  if (look.route !== undefined && look.route.metadata?.name === name && agentLeftover(look.route, look.owner)) writes.push({ kind: 'deleteRoute', name });
  for (const service of look.services) {
    const serviceName = service.metadata?.name;
    if (serviceName !== undefined && agentLeftover(service, look.owner)) writes.push({ kind: 'deleteService', name: serviceName });
  }
  const live = look.revisions.filter((r) => !r.target).map((r) => r.revision);
  return {
    problems: [],
    writes,
    status: undefined,
    statusFirst: false,
    weights: [],
    applied: true,
    barrierMayAdvance: true,
    // Without weights there is nothing to drain: pods leave as the rollout plans.
    drain: {
      records: [],
      changed: look.status?.draining !== undefined,
      revisions: live.map((revision) => ({ revision, state: 'Drained' })),
      removable: live,
      wakeAt: [],
    },
    wakeAt: [],
  };
}

/**
 * The traffic step of one look, pure data in and out. Mode Weighted:
 *
 * 1. a route `<ed>` or a revision Service that exists and is not this ExtendedDeployment's is a problem, and nothing is
 *    written;
 * 2. the canary's share: 0 when shifted back; held, the share the status recorded for this rollout; else the step of
 *    the group in progress once its pods are Ready, of the group before until then (canaryShare);
 * 3. the weights over the revisions (revisionWeights: none to a revision without Ready endpoints);
 * 4. the Services of the revisions in the route, then the route, each only when what is read differs;
 * 5. applied when the route read carries these weights and every parent accepted its generation (applied.ts); the
 *    barrier may pass only then;
 * 6. drains (drain.ts), and the Services of revisions with no pods left that the route read no longer names.
 *
 * Mode Replicas writes no route: it deletes what mode Weighted left (objects the agent made, that no GitOps engine
 * claims) and never holds the barrier.
 */
export function planTraffic(look: TrafficLook): TrafficPlan {
  if (look.traffic.mode === 'Replicas') return replicasPlan(look);
  const { owner, traffic } = look;
  const template = traffic.route;
  const live = look.revisions.filter((r) => r.pods > 0 || r.ready > 0);
  const serviceByName = new Map(look.services.flatMap((s) => (s.metadata?.name !== undefined ? [[s.metadata.name, s] as const] : [])));

  const problems: Problem[] = [];
  const routeClash = ownsRoute(look.route, owner);
  if (routeClash) problems.push(routeClash);
  for (const revision of live) {
    const clash = clashProblem('Service', serviceByName.get(revisionServiceName(owner.name, revision.revision)), owner, [
      'spec',
      'strategy',
      'traffic',
      'service',
    ]);
    if (clash) problems.push(clash);
  }
  if (template === undefined) {
    // The schema requires a route with mode Weighted; an object that skipped it still gets no half-made traffic.
    problems.push({
      object: { kind: 'ExtendedDeployment', name: owner.name, namespace: owner.namespace },
      path: ['spec', 'strategy', 'traffic', 'route'],
      message: 'is required with mode Weighted',
    });
  }

  const readyTarget = live.filter((r) => r.target).reduce((s, r) => s + r.ready, 0);
  const readyAll = live.reduce((s, r) => s + r.ready, 0);
  const position = Math.max(0, look.groupReady ? look.group : look.group - 1);
  const held = look.hold ? recordedShare(look) : undefined;
  const share = look.shiftBack ? 0 : (held ?? canaryShare(traffic.steps, { group: position, readyTarget, readyAll }, WEIGHT_TOTAL));
  const weights = revisionWeights(live, share, WEIGHT_TOTAL);

  // What the route read sends where, by revision (its backendRefs name the revision Services).
  const observedByService = problems.length === 0 ? routeWeights(look.route) : undefined;
  const observed =
    observedByService === undefined
      ? undefined
      : new Map(live.map((r) => [r.revision, observedByService.get(revisionServiceName(owner.name, r.revision)) ?? 0]));
  const acceptance = problems.length === 0 ? routeAccepted(look.route) : { accepted: false, reason: 'traffic objects are in the way' };
  // Only the stable side drains: the rollout never removes target pods, and a canary at weight 0 (before its first
  // step, or shifted back) is waiting for traffic, not leaving.
  const drain = decideDrain({
    revisions: live.filter((r) => !r.target).map((r) => r.revision),
    routeWeights: observed,
    accepted: acceptance.accepted,
    recorded: look.status?.draining,
    drainSeconds: traffic.drainSeconds,
    now: look.now,
  });

  const sameRollout = look.status?.revision === look.rolloutRevision;
  const weightsChanged = !sameRollout || !sameWeights(look.status?.weights, weights);
  const base = {
    ...(look.rolloutRevision !== undefined && { revision: look.rolloutRevision }),
    group: position,
    weights,
    ...(look.shiftBack && { shiftedBack: true }),
    ...(drain.records.length > 0 && { draining: [...drain.records] }),
  };

  if (problems.length > 0 || template === undefined) {
    return {
      problems,
      writes: [],
      status: { ...base, message: problems.map((p) => p.message).join('; ') },
      statusFirst: false,
      weights,
      applied: false,
      barrierMayAdvance: false,
      drain,
      wakeAt: drain.wakeAt,
    };
  }

  const writes: TrafficWrite[] = [];
  for (const revision of live) {
    const wanted = revisionService(owner, revision.revision, traffic.service);
    const existing = serviceByName.get(wanted.metadata.name);
    if (existing === undefined || !serviceUpToDate(existing, wanted)) writes.push({ kind: 'applyService', service: wanted });
  }
  const route = weightedRoute(owner, template, weights, traffic.service.port);
  const routeCurrent = routeUpToDate(look.route, route);
  if (!routeCurrent) writes.push({ kind: 'applyRoute', route });

  // Services of revisions without pods go once the route read no longer names them (a route naming a missing Service
  // answers 500 for its weight), and only those this ExtendedDeployment made.
  const liveNames = new Set(live.map((r) => revisionServiceName(owner.name, r.revision)));
  for (const service of look.services) {
    const name = service.metadata?.name;
    if (name === undefined || liveNames.has(name) || service.metadata?.labels?.[REVISION_LABEL] === undefined) continue;
    if (!agentLeftover(service, owner) || observedByService?.has(name)) continue;
    writes.push({ kind: 'deleteService', name });
  }

  // Applied is about the weights, not the whole spec: a route whose template is being changed still carries the step
  // if its weights are these and its generation is accepted; the next generation is checked when it comes.
  const applied = acceptance.accepted && observedByService !== undefined && weightsIn(observedByService, owner.name, weights);
  const generation = look.route?.metadata?.generation;
  const status: TrafficStatus = {
    ...base,
    ...(applied && generation !== undefined && { appliedGeneration: generation }),
    ...(!applied && { message: routeCurrent ? `waiting for the route: ${acceptance.reason}` : 'writing the route' }),
  };
  return {
    problems: [],
    writes,
    status,
    statusFirst: weightsChanged || drain.changed,
    weights,
    applied,
    barrierMayAdvance: applied && look.groupReady && !look.hold && !look.shiftBack,
    drain,
    wakeAt: drain.wakeAt,
  };
}
