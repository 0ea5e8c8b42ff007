import { describe, expect, it } from 'vitest';
import { analysisMetric } from '../api/traffic.js';
import { escapeLabelValue, metricQueries, placeholdersIn, substituteQuery, unknownPlaceholders, type QueryValues } from './query.js';

const ED = { kind: 'ExtendedDeployment', name: 'web', namespace: 'shop' };
const PATH = ['spec', 'strategy', 'traffic', 'analysis', 'metrics', 0, 'query'];
const VALUES: QueryValues = { namespace: 'shop', name: 'web', revision: '3f9a1c0d2e', stableRevision: '0123456789', region: 'amd', window: '2m' };

describe('placeholdersIn / unknownPlaceholders', () => {
  it.each([
    ['rate(x{ns="{{namespace}}"}[{{window}}])', ['namespace', 'window'], []],
    ['{{ revision }} and {{revision}} again', ['revision'], []],
    ['{{revison}} is a typo', ['revison'], ['revison']],
    ['no placeholder at all', [], []],
    // Not a placeholder (no identifier between the braces): left as written.
    ['{{ .Values.x }}', [], []],
  ])('%s', (query, used, unknown) => {
    expect(placeholdersIn(query)).toEqual(used);
    expect(unknownPlaceholders(query)).toEqual(unknown);
  });
});

describe('escapeLabelValue', () => {
  it.each([
    ['web', 'web'],
    ['a"b', 'a\\"b'],
    ['a\\b', 'a\\\\b'],
    ['line\nbreak', 'line\\nbreak'],
  ])('%j → %j', (value, escaped) => {
    expect(escapeLabelValue(value)).toBe(escaped);
  });
});

describe('substituteQuery', () => {
  it('substitutes every placeholder, with or without blanks inside the braces', () => {
    const query =
      'sum(rate(traefik_service_requests_total{service=~"{{namespace}}-{{ name }}-{{revision}}-.*",code=~"5.."}[{{window}}])) / sum(rate(traefik_service_requests_total{service=~"{{namespace}}-{{name}}-{{revision}}-.*"}[{{window}}]))';
    expect(substituteQuery(query, VALUES, ED, PATH)).toEqual({
      ok: true,
      value:
        'sum(rate(traefik_service_requests_total{service=~"shop-web-3f9a1c0d2e-.*",code=~"5.."}[2m])) / sum(rate(traefik_service_requests_total{service=~"shop-web-3f9a1c0d2e-.*"}[2m]))',
    });
  });

  it('escapes values, so a value cannot end the label string early', () => {
    expect(substituteQuery('x{region="{{region}}"}', { region: 'a"} or vector(1) #' }, ED, PATH)).toEqual({
      ok: true,
      value: 'x{region="a\\"} or vector(1) #"}',
    });
  });

  it('refuses an unknown placeholder at the query field', () => {
    const result = substituteQuery('x{r="{{revison}}"}', VALUES, ED, PATH);
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.problems).toHaveLength(1);
      expect(result.problems[0]?.path).toEqual(PATH);
      expect(result.problems[0]?.message).toMatch(/^unknown placeholder \{\{revison\}\}: use one of \{\{namespace\}\}/);
    }
  });

  it('refuses a known placeholder without a value rather than send a half-substituted query', () => {
    const result = substituteQuery('x{cluster="{{cluster}}"}', VALUES, ED, PATH);
    expect(result).toEqual({ ok: false, problems: [{ object: ED, path: PATH, message: 'placeholder {{cluster}} has no value here' }] });
  });
});

describe('metricQueries', () => {
  const metric = (over: Record<string, unknown>) =>
    analysisMetric.parse({ name: 'errors', query: 'err{rev="{{revision}}"}[{{window}}]', threshold: { op: '<', value: 1 }, ...over });
  const { window: _, ...values } = VALUES;

  it("gives the canary's query with the analysis window", () => {
    expect(metricQueries(metric({}), 0, '5m', values, ED)).toEqual({ ok: true, value: { query: 'err{rev="3f9a1c0d2e"}[5m]' } });
  });

  it('gives the same query for the stable revision with compareToStable', () => {
    const compared = metric({ threshold: undefined, compareToStable: { maxRatio: 2 } });
    expect(metricQueries(compared, 0, '5m', values, ED)).toEqual({
      ok: true,
      value: { query: 'err{rev="3f9a1c0d2e"}[5m]', stableQuery: 'err{rev="0123456789"}[5m]' },
    });
  });

  it('is a problem to compare with no stable revision running', () => {
    const compared = metric({ threshold: undefined, compareToStable: { maxRatio: 2 } });
    const result = metricQueries(compared, 2, '5m', { ...values, stableRevision: undefined }, ED);
    expect(result).toEqual({
      ok: false,
      problems: [
        { object: ED, path: ['spec', 'strategy', 'traffic', 'analysis', 'metrics', 2, 'compareToStable'], message: 'no stable revision runs to compare with' },
      ],
    });
  });
});
