import { describe, expect, it } from 'vitest';
import { API_VERSION } from '../api/identity.js';
import { formatProblem } from '../problems.js';
import { renderSet } from '../render.js';

// What Git carries for spec.strategy.traffic (core/render.ts): mode Replicas renders the Service over every pod and,
// when asked, the route to it; mode Weighted renders none (the agent owns them).

const region = { apiVersion: API_VERSION, kind: 'DeployRegion', metadata: { name: 'amd' }, spec: { matchLabels: { 'kubernetes.io/arch': 'amd64' } } };
const GATEWAY = { parentRefs: [{ name: 'public', namespace: 'gateways' }] };

function ed(name: string, traffic: Record<string, unknown> | undefined) {
  return {
    apiVersion: API_VERSION,
    kind: 'ExtendedDeployment',
    metadata: { name, namespace: 'shop' },
    spec: {
      replicas: 2,
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'app', image: 'shop/web:1.0' }] } },
      regions: [{ name: 'amd' }],
      ...(traffic && { strategy: { traffic } }),
    },
  };
}

function traffic(name: string, spec: Record<string, unknown> | undefined) {
  const result = renderSet([region, ed(name, spec)]);
  if (!result.ok) return { problems: result.problems.map(formatProblem) };
  return { objects: result.value.extendedDeployments[0]?.traffic ?? [] };
}

describe('traffic objects in the render', () => {
  it('mode Replicas: the Service over every pod of the ExtendedDeployment, its port fully spelled', () => {
    const { objects } = traffic('web', { mode: 'Replicas', service: { port: 8080 } });
    expect(objects).toEqual([
      {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 'web', namespace: 'shop', labels: { 'extendeddeployment.io/name': 'web' } },
        spec: {
          type: 'ClusterIP',
          selector: { 'extendeddeployment.io/name': 'web' },
          ports: [{ name: 'http', port: 8080, targetPort: 8080, protocol: 'TCP' }],
        },
      },
    ]);
  });

  it('mode Replicas with a route: the HTTPRoute to that Service, with the defaults the API server would add', () => {
    const { objects } = traffic('web', { mode: 'Replicas', route: GATEWAY });
    const route = objects?.[1] as { kind: string; spec: { parentRefs: unknown[]; rules: { matches: unknown[]; backendRefs: unknown[] }[] } };
    expect(route.kind).toBe('HTTPRoute');
    expect(route.spec.parentRefs).toEqual([{ group: 'gateway.networking.k8s.io', kind: 'Gateway', name: 'public', namespace: 'gateways' }]);
    expect(route.spec.rules[0]?.matches).toEqual([{ path: { type: 'PathPrefix', value: '/' } }]);
    expect(route.spec.rules[0]?.backendRefs).toEqual([{ group: '', kind: 'Service', name: 'web', port: 80, weight: 1 }]);
  });

  it('mode Weighted, and no traffic at all: nothing (the agent owns the route and the revision Services)', () => {
    expect(traffic('web', { mode: 'Weighted', route: GATEWAY }).objects).toEqual([]);
    expect(traffic('web', undefined).objects).toEqual([]);
  });

  it('a name no Service can carry is a problem at metadata.name, with traffic only', () => {
    expect(traffic('1web', { mode: 'Replicas' }).problems).toEqual([
      'ExtendedDeployment shop/1web: metadata.name: must start with a letter with spec.strategy.traffic: the Services `<name>` and `<name>-<revision>` are named after it',
    ]);
    expect(traffic('1web', undefined).objects).toEqual([]);
  });
});
