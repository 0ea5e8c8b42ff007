import { GATEWAY_GROUP, type ObservedRoute, type ParentReference, type RouteCondition } from './objects.js';

/** Whether a route's current spec is in effect, and if not, why (for status.traffic.message). */
export interface RouteAcceptance {
  readonly accepted: boolean;
  readonly reason: string;
}

/** Two parent references name the same parent, with the Gateway API's defaults (group, kind, the route's namespace). */
function sameParent(a: ParentReference, b: ParentReference, routeNamespace: string | undefined): boolean {
  return (
    (a.group ?? GATEWAY_GROUP) === (b.group ?? GATEWAY_GROUP) &&
    (a.kind ?? 'Gateway') === (b.kind ?? 'Gateway') &&
    (a.namespace ?? routeNamespace) === (b.namespace ?? routeNamespace) &&
    a.name === b.name &&
    a.sectionName === b.sectionName &&
    a.port === b.port
  );
}

function describeParent(ref: ParentReference): string {
  const section = ref.sectionName !== undefined ? `/${ref.sectionName}` : ref.port !== undefined ? `:${ref.port}` : '';
  return `${ref.kind ?? 'Gateway'} ${ref.namespace !== undefined ? `${ref.namespace}/` : ''}${ref.name ?? ''}${section}`;
}

/** Why `condition` does not prove the generation in effect, or undefined when it does. */
function conditionProblem(type: string, condition: RouteCondition | undefined, generation: number, required: boolean): string | undefined {
  if (condition === undefined) return required ? `has no ${type} condition yet` : undefined;
  if (condition.observedGeneration !== generation) return `${type} describes generation ${condition.observedGeneration ?? '(none)'}, not ${generation}`;
  if (condition.status !== 'True')
    return `is not ${type}: ${condition.reason ?? condition.status ?? 'no reason'}${condition.message ? ` (${condition.message})` : ''}`;
  return undefined;
}

/**
 * Whether a weight step counts as applied: the route's status shows its current generation (metadata.generation)
 * accepted by every parent of its spec. For each parentRef, every status entry for it (there is one per controller
 * that handles that parent) must have Accepted True with observedGeneration equal to the generation, and ResolvedRefs
 * True at that generation where the controller reports it (a backend Service it cannot resolve means 500s for its
 * weight). A parent no controller reported on yet is not accepted: there is no proof the weights are in effect.
 * Entries for parents the spec no longer names are ignored.
 */
export function routeAccepted(route: ObservedRoute | undefined): RouteAcceptance {
  if (route === undefined) return { accepted: false, reason: 'the route does not exist yet' };
  const generation = route.metadata?.generation;
  if (generation === undefined) return { accepted: false, reason: 'the route has no generation yet' };
  const parents = route.spec?.parentRefs ?? [];
  if (parents.length === 0) return { accepted: false, reason: 'the route names no parent' };
  const statuses = route.status?.parents ?? [];
  const namespace = route.metadata?.namespace;
  for (const parent of parents) {
    const entries = statuses.filter((s) => s.parentRef !== undefined && sameParent(s.parentRef, parent, namespace));
    if (entries.length === 0) return { accepted: false, reason: `${describeParent(parent)} has not reported on the route yet` };
    for (const entry of entries) {
      const conditions = entry.conditions ?? [];
      const problem =
        conditionProblem(
          'Accepted',
          conditions.find((c) => c.type === 'Accepted'),
          generation,
          true,
        ) ??
        conditionProblem(
          'ResolvedRefs',
          conditions.find((c) => c.type === 'ResolvedRefs'),
          generation,
          false,
        );
      if (problem !== undefined)
        return { accepted: false, reason: `${describeParent(parent)}${entry.controllerName ? ` (${entry.controllerName})` : ''} ${problem}` };
    }
  }
  return { accepted: true, reason: `every parent accepted generation ${generation}` };
}
