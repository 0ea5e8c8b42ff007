import { describe, expect, it } from 'vitest';
import { instantQueryUrl, parseQueryResponse, queryFailure, type SampleValue } from './prometheus.js';

const T = 1764324000.123;
const vector = (...values: string[]) => ({
  status: 'success',
  data: { resultType: 'vector', result: values.map((v, i) => ({ metric: { pod: `web-${i}` }, value: [T, v] })) },
});

describe('parseQueryResponse', () => {
  it.each<[string, unknown, SampleValue]>([
    ['one series', vector('0.0042'), { kind: 'value', value: 0.0042 }],
    ['a scalar', { status: 'success', data: { resultType: 'scalar', result: [T, '3'] } }, { kind: 'value', value: 3 }],
    ['no series: no data (the backend has no series yet, or left the route)', vector(), { kind: 'noData', reason: 'the query returned no series' }],
    ['NaN (0/0: a ratio over no requests): no data', vector('NaN'), { kind: 'noData', reason: 'the result is NaN' }],
    ['+Inf: an error, never a value to compare', vector('+Inf'), { kind: 'error', message: 'the result is +Inf: the query divides by zero' }],
    [
      '-Inf: an error',
      { status: 'success', data: { resultType: 'scalar', result: [T, '-Inf'] } },
      { kind: 'error', message: 'the result is -Inf: the query divides by zero' },
    ],
    [
      'several series without aggregate: ambiguous',
      vector('1', '2'),
      { kind: 'error', message: 'the query returned 2 series: reduce them in the query (e.g. sum) or set aggregate' },
    ],
    [
      'a range vector',
      { status: 'success', data: { resultType: 'matrix', result: [] } },
      { kind: 'error', message: 'the query gives a matrix, not one number: an instant query needs a scalar or a one-series vector' },
    ],
    [
      'a Prometheus error',
      { status: 'error', errorType: 'bad_data', error: 'invalid parameter "query": 1:5: parse error' },
      { kind: 'error', message: 'Prometheus: bad_data: invalid parameter "query": 1:5: parse error' },
    ],
    ['not a Prometheus answer', '<html>502 Bad Gateway</html>', { kind: 'error', message: 'the answer is not a Prometheus API response' }],
    ['a malformed value', vector('fast'), { kind: 'error', message: 'a series of the result is malformed' }],
    ['an empty value string', vector(''), { kind: 'error', message: 'a series of the result is malformed' }],
  ])('%s', (_, body, expected) => {
    expect(parseQueryResponse(body)).toEqual(expected);
  });

  it.each<[string, string[], 'Sum' | 'Min' | 'Max' | 'Avg', SampleValue]>([
    ['Sum', ['1', '2', '3.5'], 'Sum', { kind: 'value', value: 6.5 }],
    ['Min', ['1', '2', '3.5'], 'Min', { kind: 'value', value: 1 }],
    ['Max', ['1', '2', '3.5'], 'Max', { kind: 'value', value: 3.5 }],
    ['Avg', ['1', '2', '3'], 'Avg', { kind: 'value', value: 2 }],
    ['a NaN series does not void the others', ['NaN', '0.5'], 'Max', { kind: 'value', value: 0.5 }],
    ['every series NaN: no data', ['NaN', 'NaN'], 'Sum', { kind: 'noData', reason: 'all 2 series are NaN' }],
    [
      'an infinite series makes the aggregate an error',
      ['+Inf', '1'],
      'Sum',
      { kind: 'error', message: 'the sum of 2 series is +Inf: the query divides by zero' },
    ],
  ])('aggregate %s', (_, values, aggregate, expected) => {
    expect(parseQueryResponse(vector(...values), aggregate)).toEqual(expected);
  });
});

describe('instantQueryUrl', () => {
  it('encodes the query and tolerates a trailing slash in the address', () => {
    expect(instantQueryUrl('http://prometheus.monitoring:9090/', 'sum(rate(x{a="b"}[2m]))')).toBe(
      'http://prometheus.monitoring:9090/api/v1/query?query=sum(rate(x%7Ba%3D%22b%22%7D%5B2m%5D))',
    );
  });
});

describe('queryFailure', () => {
  it('is an error sample', () => {
    expect(queryFailure('connect ECONNREFUSED 10.0.0.9:9090')).toEqual({ kind: 'error', message: 'connect ECONNREFUSED 10.0.0.9:9090' });
  });
});
