import { describe, expect, it } from 'vitest';
import { customResourceDefinitions } from '../crd.js';
import { parseExtendedDeployment } from '../parse.js';
import { formatProblem } from '../problems.js';
import { trafficStrategy } from './traffic.js';

const ROUTE = { parentRefs: [{ name: 'public', namespace: 'gateways' }] };
const METRIC = { name: 'errors', query: 'sum(rate(x{rev="{{revision}}"}[{{window}}]))', threshold: { op: '<', value: 0.01 } };
const ANALYSIS = { prometheus: { address: 'http://prometheus.monitoring:9090' }, metrics: [METRIC] };

/** An ExtendedDeployment shop/web with `traffic` as spec.strategy.traffic. */
function ed(traffic: unknown) {
  return {
    apiVersion: 'extendeddeployment.io/v1beta1',
    kind: 'ExtendedDeployment',
    metadata: { name: 'web', namespace: 'shop' },
    spec: {
      selector: { matchLabels: { app: 'web' } },
      template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'web', image: 'web:1' }] } },
      regions: [{ name: 'amd', replicas: 2 }],
      strategy: { traffic },
    },
  };
}

/** The problems of parsing `traffic`, formatted as edctl prints them. */
function problems(traffic: unknown): string[] {
  const result = parseExtendedDeployment(ed(traffic));
  return result.ok ? [] : result.problems.map(formatProblem);
}

describe('trafficStrategy defaults', () => {
  it('is Replicas on port 80 with a 30 s drain when empty', () => {
    expect(trafficStrategy.parse({})).toEqual({ mode: 'Replicas', service: { port: 80, name: 'http' }, drainSeconds: 30 });
  });

  it('defaults the analysis and each metric', () => {
    const parsed = trafficStrategy.parse({ mode: 'Weighted', route: ROUTE, analysis: ANALYSIS });
    expect(parsed.analysis).toEqual({
      prometheus: { address: 'http://prometheus.monitoring:9090', timeoutSeconds: 5 },
      intervalSeconds: 30,
      window: '2m',
      onFailure: 'Hold',
      metrics: [{ ...METRIC, consecutiveSuccesses: 3, noData: 'Wait', failureLimit: 0, errorLimit: 4 }],
    });
  });

  it('parses inside an ExtendedDeployment', () => {
    const result = parseExtendedDeployment(ed({ mode: 'Weighted', route: ROUTE, steps: [1, 5, 25.25, 50], analysis: ANALYSIS }));
    expect(result.ok).toBe(true);
    if (result.ok) expect(result.value.spec.strategy.traffic?.steps).toEqual([1, 5, 25.25, 50]);
  });
});

describe('trafficStrategy problems, with their field paths', () => {
  const P = 'ExtendedDeployment shop/web: spec.strategy.traffic';
  it.each<[string, unknown, string[]]>([
    ['Weighted without a route', { mode: 'Weighted' }, [`${P}.route: is required with mode Weighted`]],
    ['steps in mode Replicas', { steps: [10] }, [`${P}.steps: needs mode Weighted: in mode Replicas the traffic share is the Ready pods'`]],
    ['decreasing steps', { mode: 'Weighted', route: ROUTE, steps: [10, 5] }, [`${P}.steps[1]: must not be below the step before (10)`]],
    ['a step finer than 0.01', { mode: 'Weighted', route: ROUTE, steps: [0.005] }, [`${P}.steps[0]: has a resolution of 0.01`]],
    ['a step over 100', { mode: 'Weighted', route: ROUTE, steps: [101] }, [`${P}.steps[0]: must be at most 100`]],
    [
      'backendRefs in the route template: they are the agent’s',
      { mode: 'Weighted', route: { ...ROUTE, rules: [{ backendRefs: [{ name: 'web' }] }] } },
      [`${P}.route.rules[0].backendRefs: unknown field`],
    ],
    ['a route without parent', { mode: 'Weighted', route: { parentRefs: [] } }, [`${P}.route.parentRefs: needs at least one parent`]],
    [
      'ShiftBack in mode Replicas',
      { analysis: { ...ANALYSIS, onFailure: 'ShiftBack' } },
      [`${P}.analysis.onFailure: needs mode Weighted for ShiftBack: mode Replicas has no weight to shift`],
    ],
    [
      'a metric without success condition',
      { analysis: { ...ANALYSIS, metrics: [{ name: 'errors', query: 'x' }] } },
      [`${P}.analysis.metrics[0]: needs a success condition: threshold or compareToStable`],
    ],
    [
      'consecutiveSuccesses below 1',
      { analysis: { ...ANALYSIS, metrics: [{ ...METRIC, consecutiveSuccesses: 0 }] } },
      [`${P}.analysis.metrics[0].consecutiveSuccesses: must be at least 1`],
    ],
    [
      'an unknown placeholder',
      { analysis: { ...ANALYSIS, metrics: [METRIC, { ...METRIC, name: 'latency', query: 'x{rev="{{revison}}"}' }] } },
      [
        `${P}.analysis.metrics[1].query: unknown placeholder {{revison}}: use one of {{namespace}}, {{name}}, {{revision}}, {{stableRevision}}, {{region}}, {{cluster}}, {{window}}`,
      ],
    ],
    [
      'compareToStable without a bound',
      { analysis: { ...ANALYSIS, metrics: [{ name: 'errors', query: 'x', compareToStable: {} }] } },
      [`${P}.analysis.metrics[0].compareToStable: needs maxDifference or maxRatio`],
    ],
    ['a metric defined twice', { analysis: { ...ANALYSIS, metrics: [METRIC, METRIC] } }, [`${P}.analysis.metrics[1].name: metric errors is defined twice`]],
    [
      'inconclusiveLimit without noData Wait',
      { analysis: { ...ANALYSIS, metrics: [{ ...METRIC, noData: 'Pass', inconclusiveLimit: 3 }] } },
      [`${P}.analysis.metrics[0].inconclusiveLimit: counts no-data samples and applies only with noData Wait`],
    ],
    [
      'a threshold operator that is not one',
      { analysis: { ...ANALYSIS, metrics: [{ ...METRIC, threshold: { op: '=', value: 1 } }] } },
      [`${P}.analysis.metrics[0].threshold.op: must be one of "<", "<=", ">", ">="`],
    ],
    [
      'a Prometheus address without scheme',
      { analysis: { ...ANALYSIS, prometheus: { address: 'prometheus:9090' } } },
      [`${P}.analysis.prometheus.address: must be an http:// or https:// URL`],
    ],
    [
      'a target port name without a letter (a number written as a string)',
      { service: { targetPort: '8080' } },
      [`${P}.service.targetPort: must be a port name (with a letter)`],
    ],
    ['a target port past 65535', { service: { targetPort: 70000 } }, [`${P}.service.targetPort: must be at most 65535`]],
    ['a window that is no PromQL duration', { analysis: { ...ANALYSIS, window: '2 minutes' } }, [`${P}.analysis.window: must be a PromQL duration like "2m"`]],
  ])('%s', (_, traffic, expected) => {
    expect(problems(traffic)).toEqual(expected);
  });
});

type Schema = { [key: string]: unknown };

/** Structural-schema defaulting as the API server does it (as in core/crd.test.ts). */
function applyDefaults(node: Schema, value: unknown): unknown {
  if (node['type'] === 'array' && Array.isArray(value) && node['items']) return value.map((v) => applyDefaults(node['items'] as Schema, v));
  if (node['type'] !== 'object' || value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = { ...(value as Record<string, unknown>) };
  for (const [key, child] of Object.entries((node['properties'] ?? {}) as Record<string, Schema>)) {
    if (out[key] === undefined && child['default'] !== undefined) out[key] = structuredClone(child['default']);
    if (out[key] !== undefined) out[key] = applyDefaults(child, out[key]);
  }
  return out;
}

describe('the CRD', () => {
  const crd = customResourceDefinitions().find((c) => c.fileName.includes('extendeddeployments'))?.crd as {
    spec: { versions: { schema: { openAPIV3Schema: Schema } }[] };
  };
  const root = crd.spec.versions[0]?.schema.openAPIV3Schema as Schema;
  const at = (node: Schema, ...keys: string[]) => keys.reduce((n, k) => (n['properties'] as Record<string, Schema>)[k] as Schema, node);

  it('defaults spec.strategy.traffic exactly as the zod schema does', () => {
    const traffic = at(root, 'spec', 'strategy', 'traffic');
    const written = {
      mode: 'Weighted',
      route: ROUTE,
      analysis: { prometheus: { address: 'http://p:9090' }, metrics: [{ name: 'e', query: 'x', compareToStable: { maxRatio: 2 } }] },
    };
    expect(applyDefaults(traffic, written)).toEqual(trafficStrategy.parse(written));
  });

  it('keeps route filters as written (preserved unknown fields) and the status fields the agent writes', () => {
    const filter = ((at(root, 'spec', 'strategy', 'traffic', 'route', 'rules')['items'] as Schema)['properties'] as Record<string, Schema>)[
      'filters'
    ] as Schema;
    expect((filter['items'] as Schema)['x-kubernetes-preserve-unknown-fields']).toBe(true);
    expect(Object.keys(at(root, 'status', 'traffic')['properties'] as Schema)).toEqual([
      'revision',
      'group',
      'weights',
      'appliedGeneration',
      'shiftedBack',
      'draining',
      'message',
    ]);
    expect(Object.keys(at(root, 'status', 'analysis')['properties'] as Schema)).toEqual([
      'revision',
      'group',
      'outcome',
      'startedAt',
      'nextSampleAt',
      'metrics',
    ]);
  });
});
