import type { AnalysisMetric } from '../api/traffic.js';

/**
 * What one Prometheus instant query gave, before any condition is applied:
 * - `value`: one finite number;
 * - `noData`: nothing to judge: an empty result (Traefik drops a service's series once the service leaves the route,
 *   and a backend with no Ready endpoint has no series at all), or NaN (a rate ratio over no requests, 0/0);
 * - `error`: the query failed, or its answer cannot be one number (several series without `aggregate`, a range
 *   vector, ±Inf: a division by zero of something that is not zero). Errors are never a pass: they count toward
 *   errorLimit and end Inconclusive (argo-rollouts #4479: "Successful" with every measurement in error).
 */
export type SampleValue =
  | { readonly kind: 'value'; readonly value: number }
  | { readonly kind: 'noData'; readonly reason: string }
  | { readonly kind: 'error'; readonly message: string };

/** The URL of an instant query against the Prometheus HTTP API at `address`. */
export function instantQueryUrl(address: string, query: string): string {
  return `${address.replace(/\/+$/, '')}/api/v1/query?query=${encodeURIComponent(query)}`;
}

/** A failure before any answer was read (connection refused, timeout, an answer that is not JSON): an error sample. */
export function queryFailure(message: string): SampleValue {
  return { kind: 'error', message };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** Prometheus writes sample values as strings, with NaN, +Inf and -Inf spelled out. */
function sampleNumber(pair: unknown): number | undefined {
  if (!Array.isArray(pair) || pair.length !== 2 || typeof pair[1] !== 'string') return undefined;
  const text = pair[1];
  if (text === 'NaN') return NaN;
  if (text === '+Inf' || text === 'Inf') return Infinity;
  if (text === '-Inf') return -Infinity;
  const value = Number(text);
  return text.trim() === '' || Number.isNaN(value) ? undefined : value;
}

/** A number as a sample: NaN is no data, ±Inf an error. */
function classify(value: number, what: string): SampleValue {
  if (Number.isNaN(value)) return { kind: 'noData', reason: `${what} is NaN` };
  if (!Number.isFinite(value)) return { kind: 'error', message: `${what} is ${value > 0 ? '+Inf' : '-Inf'}: the query divides by zero` };
  return { kind: 'value', value };
}

function aggregateValues(values: readonly number[], how: NonNullable<AnalysisMetric['aggregate']>): number {
  switch (how) {
    case 'Sum':
      return values.reduce((s, v) => s + v, 0);
    case 'Min':
      return Math.min(...values);
    case 'Max':
      return Math.max(...values);
    case 'Avg':
      return values.reduce((s, v) => s + v, 0) / values.length;
  }
}

/**
 * Reads the JSON body of `/api/v1/query` (any HTTP status: Prometheus answers errors as JSON too) as one sample:
 *
 * - `status: "error"` → error, with Prometheus' errorType and error;
 * - `scalar` → its value;
 * - `vector`: no series → no data; one series → its value; several → with `aggregate` their Sum, Min, Max or Avg
 *   over the series that are not NaN (a series with no requests has no data, it does not void the others), without
 *   it an error (which series would be meant is ambiguous);
 * - `matrix` or `string` → error: an instant query must give one number;
 * - the number: NaN → no data, ±Inf → error.
 */
export function parseQueryResponse(body: unknown, aggregate?: AnalysisMetric['aggregate']): SampleValue {
  if (!isRecord(body)) return { kind: 'error', message: 'the answer is not a Prometheus API response' };
  if (body['status'] === 'error') {
    const type = typeof body['errorType'] === 'string' ? `${body['errorType']}: ` : '';
    return { kind: 'error', message: `Prometheus: ${type}${typeof body['error'] === 'string' ? body['error'] : 'unknown error'}` };
  }
  const data = body['data'];
  if (body['status'] !== 'success' || !isRecord(data)) return { kind: 'error', message: 'the answer is not a Prometheus API response' };
  const resultType = data['resultType'];
  const result = data['result'];

  if (resultType === 'scalar') {
    const value = sampleNumber(result);
    return value === undefined ? { kind: 'error', message: 'the scalar result is malformed' } : classify(value, 'the result');
  }
  if (resultType !== 'vector') {
    return { kind: 'error', message: `the query gives a ${String(resultType)}, not one number: an instant query needs a scalar or a one-series vector` };
  }
  if (!Array.isArray(result)) return { kind: 'error', message: 'the vector result is malformed' };
  if (result.length === 0) return { kind: 'noData', reason: 'the query returned no series' };

  const values: number[] = [];
  for (const series of result) {
    const value = isRecord(series) ? sampleNumber(series['value']) : undefined;
    if (value === undefined) return { kind: 'error', message: 'a series of the result is malformed' };
    values.push(value);
  }
  if (values.length === 1) return classify(values[0] ?? NaN, 'the result');
  if (aggregate === undefined) {
    return { kind: 'error', message: `the query returned ${values.length} series: reduce them in the query (e.g. sum) or set aggregate` };
  }
  const withData = values.filter((v) => !Number.isNaN(v));
  if (withData.length === 0) return { kind: 'noData', reason: `all ${values.length} series are NaN` };
  return classify(aggregateValues(withData, aggregate), `the ${aggregate.toLowerCase()} of ${withData.length} series`);
}
