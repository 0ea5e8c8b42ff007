import type { ApiRead } from '../core/kube/api-writes.js';
import type { RolloutInput } from '../core/rollout/planner.js';
import { analysisQueriesDue } from '../core/traffic/look.js';
import type { AnalysisAnswer, AnalysisQuery, TrafficObservation } from '../core/traffic/observation.js';
import type { TrafficCaches } from './informers.js';
import { namedForTraffic } from './keys.js';

/** What the reconciler does about an ExtendedDeployment's traffic at one look. */
export type TrafficRead =
  /** Plan on this input (with `traffic` when the ExtendedDeployment has a traffic strategy). */
  | { readonly kind: 'observed'; readonly input: RolloutInput }
  /** Mode Weighted, and the agent may not read what it would plan on: report it, plan nothing. */
  | { readonly kind: 'forbidden'; readonly reads: readonly ApiRead[] }
  /** Mode Weighted, and a cache is not complete yet (just started, or discovery not answered): look again shortly. */
  | { readonly kind: 'unsynced'; readonly resources: readonly string[] };

/**
 * The planner's input with what the agent reads for spec.strategy.traffic (core/traffic/observation.ts): the route
 * `<ed>` and the Services named for it, as the caches have them, whether the HTTPRoute API is served, and the answers
 * to the analysis queries due now (core asks: analysisQueriesDue; `query` sends them).
 *
 * Mode Weighted plans on the route and the Services: a forbidden read or an incomplete cache holds it (a missing route
 * in an incomplete cache is not a missing route). Mode Replicas only deletes what mode Weighted left; with caches it
 * cannot read it sees nothing and deletes nothing, and its analysis still runs: an observation is always passed, since
 * without one no analysis would gate the barrier.
 */
export async function observeTraffic(
  input: RolloutInput,
  caches: TrafficCaches,
  query: (queries: readonly AnalysisQuery[]) => Promise<readonly AnalysisAnswer[]>,
): Promise<TrafficRead> {
  const strategy = input.ed.spec.strategy.traffic;
  if (strategy === undefined) return { kind: 'observed', input };
  const reads = [caches.services, caches.routes];
  const forbidden = reads.flatMap((cache): ApiRead[] => {
    const verb = cache.forbidden();
    return verb === undefined ? [] : [{ verb, resource: cache.resource }];
  });
  const unsynced = reads.filter((cache) => !cache.synced()).map((cache) => cache.resource);
  const weighted = strategy.mode === 'Weighted';
  if (weighted && forbidden.length > 0) return { kind: 'forbidden', reads: forbidden };
  if (weighted && unsynced.length > 0) return { kind: 'unsynced', resources: unsynced };
  const readable = forbidden.length === 0 && unsynced.length === 0;

  const name = input.ed.metadata.name;
  const namespace = input.ed.metadata.namespace ?? '';
  const queries = analysisQueriesDue(input);
  const answers = queries.length > 0 ? await query(queries) : [];
  const traffic: TrafficObservation = {
    route: readable ? caches.routes.get(name, namespace) : undefined,
    services: readable ? caches.services.list(namespace).filter((s) => namedForTraffic(name, s.metadata?.name)) : [],
    routesServed: caches.routesServed(),
    answers,
  };
  return { kind: 'observed', input: { ...input, traffic } };
}
