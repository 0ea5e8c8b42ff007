import { describe, expect, it } from 'vitest';
import { routeTemplate, type RouteTemplate } from '../api/traffic.js';
import { NAME_LABEL } from '../labels.js';
import { MAX_BACKEND_REFS, ownsRoute, replicasRoute, routeWeights, weightedBackendRefs, weightedRoute } from './route.js';

const OWNER = { name: 'web', namespace: 'shop', uid: 'u-1' };
const template = (input: unknown): RouteTemplate => routeTemplate.parse(input);
const GATEWAY = { parentRefs: [{ name: 'public', namespace: 'gateways', sectionName: 'https' }] };

type Node = { default?: unknown; properties?: Record<string, Node>; items?: Node };

// The `default:` keywords of the Gateway API v1.4.0 HTTPRoute CRD (config/crd/standard/gateway.networking.k8s.io_httproutes.yaml,
// version v1), transcribed: what the API server fills in when an apply omits the field.
const MIRROR: Node = {
  properties: {
    backendRef: { properties: { group: { default: '' }, kind: { default: 'Service' } } },
    fraction: { properties: { denominator: { default: 100 } } },
  },
};
const FILTER: Node = { properties: { requestMirror: MIRROR, requestRedirect: { properties: { statusCode: { default: 302 } } } } };
const VALUE_MATCH: Node = { properties: { type: { default: 'Exact' } } };
const ROUTE_SPEC: Node = {
  properties: {
    parentRefs: { items: { properties: { group: { default: 'gateway.networking.k8s.io' }, kind: { default: 'Gateway' } } } },
    rules: {
      default: [{ matches: [{ path: { type: 'PathPrefix', value: '/' } }] }],
      items: {
        properties: {
          matches: {
            default: [{ path: { type: 'PathPrefix', value: '/' } }],
            items: {
              properties: {
                path: { default: { type: 'PathPrefix', value: '/' }, properties: { type: { default: 'PathPrefix' }, value: { default: '/' } } },
                headers: { items: VALUE_MATCH },
                queryParams: { items: VALUE_MATCH },
              },
            },
          },
          filters: { items: FILTER },
          backendRefs: { items: { properties: { group: { default: '' }, kind: { default: 'Service' }, weight: { default: 1 }, filters: { items: FILTER } } } },
        },
      },
    },
  },
};

/** Structural defaulting as the API server does it: a missing field with a default gets it, then its children are defaulted. */
function applyDefaults(node: Node, value: unknown): unknown {
  if (Array.isArray(value)) return node.items ? value.map((v) => applyDefaults(node.items as Node, v)) : value;
  if (value === null || typeof value !== 'object' || !node.properties) return value;
  const out: Record<string, unknown> = { ...(value as Record<string, unknown>) };
  for (const [key, child] of Object.entries(node.properties)) {
    if (out[key] === undefined && child.default !== undefined) out[key] = structuredClone(child.default);
    if (out[key] !== undefined) out[key] = applyDefaults(child, out[key]);
  }
  return out;
}

describe('weightedRoute', () => {
  it('is the template with weighted backendRefs to the revision Services, owned by the ExtendedDeployment', () => {
    const route = weightedRoute(
      OWNER,
      template({ ...GATEWAY, hostnames: ['shop.example.com'] }),
      [
        { revision: 'bbbbbbbbbb', weight: 9500 },
        { revision: 'aaaaaaaaaa', weight: 500 },
      ],
      80,
    );
    expect(route).toEqual({
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'HTTPRoute',
      metadata: {
        name: 'web',
        namespace: 'shop',
        labels: { [NAME_LABEL]: 'web', 'app.kubernetes.io/managed-by': 'extendeddeployment-agent' },
        ownerReferences: [
          { apiVersion: 'extendeddeployment.io/v1beta1', kind: 'ExtendedDeployment', name: 'web', uid: 'u-1', controller: true, blockOwnerDeletion: true },
        ],
      },
      spec: {
        parentRefs: [{ group: 'gateway.networking.k8s.io', kind: 'Gateway', name: 'public', namespace: 'gateways', sectionName: 'https' }],
        hostnames: ['shop.example.com'],
        rules: [
          {
            matches: [{ path: { type: 'PathPrefix', value: '/' } }],
            // Revision order, whatever order the weights came in: an unchanged route stays byte-for-byte unchanged.
            backendRefs: [
              { group: '', kind: 'Service', name: 'web-aaaaaaaaaa', port: 80, weight: 500 },
              { group: '', kind: 'Service', name: 'web-bbbbbbbbbb', port: 80, weight: 9500 },
            ],
          },
        ],
      },
    });
  });

  it('gives every rule the same backendRefs and keeps names, filters and timeouts as written', () => {
    const route = weightedRoute(
      OWNER,
      template({
        ...GATEWAY,
        rules: [
          { name: 'api', matches: [{ path: { type: 'PathPrefix', value: '/api' } }], timeouts: { request: '10s' } },
          { name: 'web', filters: [{ type: 'RequestHeaderModifier', requestHeaderModifier: { set: [{ name: 'x-shop', value: '1' }] } }] },
        ],
      }),
      [{ revision: 'aaaaaaaaaa', weight: 10000 }],
      8080,
    );
    expect(route.spec.rules.map((r) => r.name)).toEqual(['api', 'web']);
    expect(route.spec.rules[0]?.timeouts).toEqual({ request: '10s' });
    expect(route.spec.rules[1]?.filters).toEqual([{ type: 'RequestHeaderModifier', requestHeaderModifier: { set: [{ name: 'x-shop', value: '1' }] } }]);
    expect(route.spec.rules[1]?.matches).toEqual([{ path: { type: 'PathPrefix', value: '/' } }]);
    expect(route.spec.rules.map((r) => r.backendRefs)).toEqual([
      [{ group: '', kind: 'Service', name: 'web-aaaaaaaaaa', port: 8080, weight: 10000 }],
      [{ group: '', kind: 'Service', name: 'web-aaaaaaaaaa', port: 8080, weight: 10000 }],
    ]);
  });

  // Each template leaves fields to the API server's defaults; the route built from it must already hold them all, so
  // that what the API server stores equals what was applied (no diff at the next apply, no Argo CD OutOfSync).
  it.each([
    ['no rules at all', GATEWAY],
    ['a parentRef with an explicit kind', { parentRefs: [{ name: 'mesh', group: '', kind: 'Service', port: 80 }] }],
    ['a match with only a method', { ...GATEWAY, rules: [{ matches: [{ method: 'GET' }] }] }],
    ['a path with only a type', { ...GATEWAY, rules: [{ matches: [{ path: { type: 'Exact' } }] }] }],
    ['a path with only a value', { ...GATEWAY, rules: [{ matches: [{ path: { value: '/shop' } }] }] }],
    [
      'header and query matches without type',
      { ...GATEWAY, rules: [{ matches: [{ headers: [{ name: 'x-canary', value: '1' }], queryParams: [{ name: 'v', value: '2' }] }] }] },
    ],
    ['a redirect without status code', { ...GATEWAY, rules: [{ filters: [{ type: 'RequestRedirect', requestRedirect: { scheme: 'https' } }] }] }],
    [
      'a mirror without group, kind or denominator',
      {
        ...GATEWAY,
        rules: [{ filters: [{ type: 'RequestMirror', requestMirror: { backendRef: { name: 'shadow', port: 80 }, fraction: { numerator: 5 } } }] }],
      },
    ],
  ])('is fully defaulted: %s', (_, input) => {
    const route = weightedRoute(OWNER, template(input), [{ revision: 'aaaaaaaaaa', weight: 10000 }], 80);
    expect(applyDefaults(ROUTE_SPEC, route.spec)).toEqual(route.spec);
  });

  it('keeps values the template spells out instead of the defaults', () => {
    const route = weightedRoute(
      OWNER,
      template({
        ...GATEWAY,
        rules: [
          {
            matches: [{ path: { type: 'RegularExpression', value: '/v[0-9]+' }, headers: [{ type: 'RegularExpression', name: 'x-v', value: '.*' }] }],
            filters: [{ type: 'RequestRedirect', requestRedirect: { statusCode: 301 } }],
          },
        ],
      }),
      [{ revision: 'aaaaaaaaaa', weight: 10000 }],
      80,
    );
    expect(route.spec.rules[0]?.matches).toEqual([
      { path: { type: 'RegularExpression', value: '/v[0-9]+' }, headers: [{ type: 'RegularExpression', name: 'x-v', value: '.*' }] },
    ]);
    expect(route.spec.rules[0]?.filters).toEqual([{ type: 'RequestRedirect', requestRedirect: { statusCode: 301 } }]);
  });
});

describe('weightedBackendRefs', () => {
  it(`keeps at most ${MAX_BACKEND_REFS} entries, dropping those at weight 0 first`, () => {
    const weights = Array.from({ length: 18 }, (_, i) => ({ revision: `r${String(i).padStart(2, '0')}`, weight: i < 3 ? 0 : 1 }));
    const refs = weightedBackendRefs('web', weights, 80);
    expect(refs).toHaveLength(MAX_BACKEND_REFS);
    expect(refs.map((r) => r.name)).toEqual(['web-r02', ...Array.from({ length: 15 }, (_, i) => `web-r${String(i + 3).padStart(2, '0')}`)]);
  });
});

describe('replicasRoute', () => {
  it('sends every request to Service <ed> at weight 1, fully defaulted, without owner (Git renders it)', () => {
    const route = replicasRoute({ name: 'web', namespace: 'shop' }, template(GATEWAY), 80);
    expect(route.metadata).toEqual({ name: 'web', namespace: 'shop', labels: { [NAME_LABEL]: 'web' } });
    expect(route.spec.rules).toEqual([
      { matches: [{ path: { type: 'PathPrefix', value: '/' } }], backendRefs: [{ group: '', kind: 'Service', name: 'web', port: 80, weight: 1 }] },
    ]);
    expect(applyDefaults(ROUTE_SPEC, route.spec)).toEqual(route.spec);
  });
});

describe('ownsRoute', () => {
  const ref = (over: Record<string, unknown>) => ({
    apiVersion: 'extendeddeployment.io/v1beta1',
    kind: 'ExtendedDeployment',
    name: 'web',
    uid: 'u-1',
    controller: true,
    ...over,
  });
  it.each([
    ['no route yet', undefined, false],
    ['its own route', { metadata: { name: 'web', ownerReferences: [ref({})] } }, false],
    ['a route from Git (no controller)', { metadata: { name: 'web', labels: { [NAME_LABEL]: 'web' } } }, true],
    ['a route of a deleted namesake (another uid)', { metadata: { name: 'web', ownerReferences: [ref({ uid: 'u-0' })] } }, true],
    [
      'a route another controller owns',
      { metadata: { name: 'web', ownerReferences: [{ apiVersion: 'flagger.app/v1beta1', kind: 'Canary', name: 'web', uid: 'c', controller: true }] } },
      true,
    ],
    ['a route that names the ExtendedDeployment as a mere owner', { metadata: { name: 'web', ownerReferences: [ref({ controller: false })] } }, true],
  ])('%s: clash %s', (_, existing, clash) => {
    const problem = ownsRoute(existing, OWNER);
    expect(problem !== undefined).toBe(clash);
    if (problem) {
      expect(problem.path).toEqual(['spec', 'strategy', 'traffic', 'route']);
      expect(problem.object).toEqual({ kind: 'ExtendedDeployment', name: 'web', namespace: 'shop' });
      expect(problem.message).toContain('HTTPRoute shop/web exists and is not this ExtendedDeployment');
    }
  });
});

describe('routeWeights', () => {
  it('reads the weights by Service name, the API default 1 where none is written', () => {
    expect(routeWeights({ spec: { rules: [{ backendRefs: [{ name: 'web-a', weight: 0 }, { name: 'web-b' }] }] } })).toEqual(
      new Map([
        ['web-a', 0],
        ['web-b', 1],
      ]),
    );
    expect(routeWeights(undefined)).toBeUndefined();
    expect(routeWeights({ spec: { rules: [] } })).toBeUndefined();
  });
});
