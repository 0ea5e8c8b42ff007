import type { RouteTemplate } from '../api/traffic.js';
import { NAME_LABEL } from '../labels.js';
import type { Problem } from '../problems.js';
import { clashProblem } from './clash.js';
import {
  AGENT_MANAGER,
  GATEWAY_GROUP,
  HTTPROUTE_API_VERSION,
  MANAGED_BY_LABEL,
  trafficOwnerReference,
  type BackendRef,
  type HTTPRouteObject,
  type ObservedRoute,
  type ParentReference,
  type RouteRule,
  type TrafficOwner,
} from './objects.js';
import { revisionServiceName } from './services.js';

/** Most backendRefs a rule may hold (Gateway API v1.4.0 CRD maxItems). */
export const MAX_BACKEND_REFS = 16;

/** A revision's weight in the route: its Service `<ed>-<revision>` gets it. */
export interface RevisionWeight {
  readonly revision: string;
  readonly weight: number;
}

// The defaults below are the Gateway API v1.4.0 HTTPRoute CRD's (config/crd/standard, OpenAPI `default:`). Writing
// them out makes what we apply equal to what the API server stores: Argo CD diffs a Git route without them forever
// (argo-cd #22151), and the agent would see its own route as changed at every look.

const DEFAULT_PATH = { type: 'PathPrefix', value: '/' } as const;

function defaultedParentRef(ref: RouteTemplate['parentRefs'][number]): ParentReference {
  return { ...ref, group: ref.group ?? GATEWAY_GROUP, kind: ref.kind ?? 'Gateway' };
}

type TemplateRule = NonNullable<RouteTemplate['rules']>[number];
type TemplateMatch = NonNullable<TemplateRule['matches']>[number];

function defaultedMatch(match: TemplateMatch): Record<string, unknown> {
  const out: Record<string, unknown> = { ...match };
  out['path'] = match.path ? { type: match.path.type ?? DEFAULT_PATH.type, value: match.path.value ?? DEFAULT_PATH.value } : { ...DEFAULT_PATH };
  if (match.headers) out['headers'] = match.headers.map((h) => ({ ...h, type: h.type ?? 'Exact' }));
  if (match.queryParams) out['queryParams'] = match.queryParams.map((q) => ({ ...q, type: q.type ?? 'Exact' }));
  return out;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** A filter with the defaults of its own fields: a redirect's 302, a mirror's core Service backend and its fraction's denominator, CORS's maxAge. */
function defaultedFilter(filter: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...filter };
  const redirect = filter['requestRedirect'];
  if (isRecord(redirect)) out['requestRedirect'] = { ...redirect, statusCode: redirect['statusCode'] ?? 302 };
  const mirror = filter['requestMirror'];
  if (isRecord(mirror)) {
    const mirrored: Record<string, unknown> = { ...mirror };
    const backend = mirror['backendRef'];
    if (isRecord(backend)) mirrored['backendRef'] = { ...backend, group: backend['group'] ?? '', kind: backend['kind'] ?? 'Service' };
    const fraction = mirror['fraction'];
    if (isRecord(fraction)) mirrored['fraction'] = { ...fraction, denominator: fraction['denominator'] ?? 100 };
    out['requestMirror'] = mirrored;
  }
  // CORS became a standard filter after v1.4.0; the CRDs that have it default its maxAge to 5 seconds.
  const cors = filter['cors'];
  if (isRecord(cors)) out['cors'] = { ...cors, maxAge: cors['maxAge'] ?? 5 };
  return out;
}

function defaultedRule(rule: TemplateRule, backendRefs: readonly BackendRef[]): RouteRule {
  return {
    ...(rule.name !== undefined && { name: rule.name }),
    matches: (rule.matches ?? [{}]).map(defaultedMatch),
    ...(rule.filters !== undefined && { filters: rule.filters.map(defaultedFilter) }),
    ...(rule.timeouts !== undefined && { timeouts: rule.timeouts }),
    backendRefs,
  };
}

/** The route spec of `template`, every rule sending to `backendRefs`, fully defaulted. */
function routeSpec(template: RouteTemplate, backendRefs: readonly BackendRef[]): HTTPRouteObject['spec'] {
  return {
    parentRefs: template.parentRefs.map(defaultedParentRef),
    ...(template.hostnames !== undefined && { hostnames: template.hostnames }),
    // No rules: the API server's default is one rule taking every request.
    rules: (template.rules ?? [{}]).map((rule) => defaultedRule(rule, backendRefs)),
  };
}

/**
 * The backendRefs of the weighted route: one per revision, to its Service, in revision order (the list is atomic, so
 * a stable order keeps an unchanged route unchanged). A revision at weight 0 keeps its entry while it has pods, so
 * the route shows what drains. Past 16 entries (many interrupted rollouts) the entries at weight 0 go first.
 */
export function weightedBackendRefs(ed: string, weights: readonly RevisionWeight[], port: number): BackendRef[] {
  let kept = [...weights].sort((a, b) => (a.revision < b.revision ? -1 : a.revision > b.revision ? 1 : 0));
  if (kept.length > MAX_BACKEND_REFS) {
    const zeros = kept.filter((w) => w.weight === 0).length;
    const drop = new Set(kept.filter((w) => w.weight === 0).slice(0, Math.min(zeros, kept.length - MAX_BACKEND_REFS)));
    kept = kept.filter((w) => !drop.has(w)).slice(0, MAX_BACKEND_REFS);
  }
  return kept.map((w) => ({ group: '', kind: 'Service', name: revisionServiceName(ed, w.revision), port, weight: w.weight }));
}

/**
 * The HTTPRoute `<ed>` of mode Weighted, which the agent creates and owns whole: the Git-reviewed template (parents,
 * hostnames, matches, filters, timeouts) with weighted backendRefs to the revision Services in every rule. Owned
 * whole because HTTPRoute rules and backendRefs are atomic lists: field managers cannot share them, and Argo CD's
 * forced server-side apply would reset the weights at every sync of a shared route.
 */
export function weightedRoute(owner: TrafficOwner, template: RouteTemplate, weights: readonly RevisionWeight[], port: number): HTTPRouteObject {
  return {
    apiVersion: HTTPROUTE_API_VERSION,
    kind: 'HTTPRoute',
    metadata: {
      name: owner.name,
      namespace: owner.namespace,
      labels: { [NAME_LABEL]: owner.name, [MANAGED_BY_LABEL]: AGENT_MANAGER },
      ownerReferences: [trafficOwnerReference(owner)],
    },
    spec: routeSpec(template, weightedBackendRefs(owner.name, weights, port)),
  };
}

/**
 * The HTTPRoute `<ed>` of mode Replicas, rendered into Git: the template sending everything to Service `<ed>` at
 * weight 1, fully defaulted so that no GitOps engine sees a defaulting diff. No ownerReference: Git owns it.
 */
export function replicasRoute(ed: { readonly name: string; readonly namespace: string }, template: RouteTemplate, port: number): HTTPRouteObject {
  return {
    apiVersion: HTTPROUTE_API_VERSION,
    kind: 'HTTPRoute',
    metadata: { name: ed.name, namespace: ed.namespace, labels: { [NAME_LABEL]: ed.name } },
    spec: routeSpec(template, [{ group: '', kind: 'Service', name: ed.name, port, weight: 1 }]),
  };
}

/**
 * The problem of a route `<ed>` that exists and is not this ExtendedDeployment's (Git's, a person's, another
 * controller's); undefined when the agent may write it. The Flagger #1857 lesson: never regenerate a route someone
 * else wrote.
 */
export function ownsRoute(existing: ObservedRoute | undefined, owner: TrafficOwner): Problem | undefined {
  return clashProblem('HTTPRoute', existing, owner, ['spec', 'strategy', 'traffic', 'route']);
}

/** The weights of `route` by Service name, read from its first rule; undefined for a route without rules. */
export function routeWeights(route: ObservedRoute | undefined): Map<string, number> | undefined {
  const rules = route?.spec?.rules;
  if (!rules || rules.length === 0) return undefined;
  const weights = new Map<string, number>();
  // Every rule the agent writes carries the same backendRefs: the first rule's are the route's.
  for (const ref of rules[0]?.backendRefs ?? []) if (ref.name !== undefined) weights.set(ref.name, ref.weight ?? 1);
  return weights;
}
