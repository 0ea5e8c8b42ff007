import { describe, expect, it } from 'vitest';
import { routeAccepted } from './applied.js';
import type { ObservedRoute, ParentReference, RouteCondition } from './objects.js';

const PUBLIC: ParentReference = { group: 'gateway.networking.k8s.io', kind: 'Gateway', namespace: 'gateways', name: 'public', sectionName: 'https' };
const accepted = (generation: number, over: Partial<RouteCondition> = {}): RouteCondition => ({
  type: 'Accepted',
  status: 'True',
  reason: 'Accepted',
  observedGeneration: generation,
  ...over,
});
const resolved = (generation: number, over: Partial<RouteCondition> = {}): RouteCondition => ({
  type: 'ResolvedRefs',
  status: 'True',
  reason: 'ResolvedRefs',
  observedGeneration: generation,
  ...over,
});

/** A route at generation 4 attached to `parents`, with one status entry per `[parentRef, conditions]`. */
function route(
  parents: readonly ParentReference[],
  entries: readonly [ParentReference, readonly RouteCondition[]][],
  generation: number | null = 4,
): ObservedRoute {
  return {
    metadata: { name: 'web', namespace: 'shop', ...(generation !== null && { generation }) },
    spec: { parentRefs: parents },
    status: { parents: entries.map(([parentRef, conditions]) => ({ parentRef, controllerName: 'traefik.io/gateway-controller', conditions })) },
  };
}

describe('routeAccepted', () => {
  it.each<[string, ObservedRoute | undefined, boolean, string]>([
    ['no route', undefined, false, 'does not exist yet'],
    ['no generation', route([PUBLIC], [[PUBLIC, [accepted(4)]]], null), false, 'no generation'],
    ['no status yet', route([PUBLIC], []), false, 'Gateway gateways/public/https has not reported on the route yet'],
    ['accepted and resolved at the current generation', route([PUBLIC], [[PUBLIC, [accepted(4), resolved(4)]]]), true, 'every parent accepted generation 4'],
    ['accepted, the controller reports no ResolvedRefs', route([PUBLIC], [[PUBLIC, [accepted(4)]]]), true, 'accepted generation 4'],
    [
      'accepted for the generation before (the weights just changed)',
      route([PUBLIC], [[PUBLIC, [accepted(3), resolved(3)]]]),
      false,
      'Accepted describes generation 3, not 4',
    ],
    [
      'a condition without observedGeneration proves nothing',
      route([PUBLIC], [[PUBLIC, [{ type: 'Accepted', status: 'True' }]]]),
      false,
      'generation (none), not 4',
    ],
    [
      'not accepted',
      route([PUBLIC], [[PUBLIC, [accepted(4, { status: 'False', reason: 'NotAllowedByListeners' })]]]),
      false,
      'is not Accepted: NotAllowedByListeners',
    ],
    [
      'a backend Service it cannot resolve',
      route([PUBLIC], [[PUBLIC, [accepted(4), resolved(4, { status: 'False', reason: 'BackendNotFound', message: 'service shop/web-3f not found' })]]]),
      false,
      'is not ResolvedRefs: BackendNotFound (service shop/web-3f not found)',
    ],
    ['ResolvedRefs of an older generation', route([PUBLIC], [[PUBLIC, [accepted(4), resolved(3)]]]), false, 'ResolvedRefs describes generation 3'],
    ['no Accepted condition', route([PUBLIC], [[PUBLIC, [resolved(4)]]]), false, 'has no Accepted condition yet'],
  ])('%s', (_, observed, expected, reason) => {
    const result = routeAccepted(observed);
    expect(result.accepted).toBe(expected);
    expect(result.reason).toContain(reason);
  });

  it('needs every parent of the spec: one parent reported is not enough', () => {
    const internal: ParentReference = { name: 'internal', namespace: 'gateways' };
    expect(routeAccepted(route([PUBLIC, internal], [[PUBLIC, [accepted(4)]]]))).toEqual({
      accepted: false,
      reason: 'Gateway gateways/internal has not reported on the route yet',
    });
    expect(
      routeAccepted(
        route(
          [PUBLIC, internal],
          [
            [PUBLIC, [accepted(4)]],
            [internal, [accepted(4)]],
          ],
        ),
      ).accepted,
    ).toBe(true);
  });

  it('needs every controller of a parent: one lagging controller holds the step', () => {
    const observed = route([PUBLIC], [[PUBLIC, [accepted(4)]]]);
    const lagging: ObservedRoute = {
      ...observed,
      status: { parents: [...(observed.status?.parents ?? []), { parentRef: PUBLIC, controllerName: 'other.io/gateway', conditions: [accepted(3)] }] },
    };
    expect(routeAccepted(lagging)).toEqual({
      accepted: false,
      reason: 'Gateway gateways/public/https (other.io/gateway) Accepted describes generation 3, not 4',
    });
  });

  it("matches parents with the Gateway API's defaults: group, kind and the route's namespace", () => {
    const written: ParentReference = { name: 'public', sectionName: 'https' };
    const reported: ParentReference = { group: 'gateway.networking.k8s.io', kind: 'Gateway', namespace: 'shop', name: 'public', sectionName: 'https' };
    expect(routeAccepted(route([written], [[reported, [accepted(4)]]])).accepted).toBe(true);
    // Another listener of the same Gateway is another parent.
    expect(routeAccepted(route([written], [[{ ...reported, sectionName: 'http' }, [accepted(4)]]])).accepted).toBe(false);
  });

  it('ignores status entries of parents the spec no longer names', () => {
    const old: ParentReference = { name: 'old', namespace: 'gateways' };
    expect(
      routeAccepted(
        route(
          [PUBLIC],
          [
            [PUBLIC, [accepted(4)]],
            [old, [accepted(2, { status: 'False' })]],
          ],
        ),
      ).accepted,
    ).toBe(true);
  });

  it('a route that names no parent is never accepted', () => {
    expect(routeAccepted(route([], [])).accepted).toBe(false);
  });
});
