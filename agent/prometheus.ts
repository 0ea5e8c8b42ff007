import type { AnalysisAnswer, AnalysisQuery } from '../core/traffic/observation.js';

/** Analysis queries of one reconcile sent at once (queryAll): a few metrics, each with at most a stable twin. */
export const ANALYSIS_QUERY_CONCURRENCY = 4;

/** The longest piece of a body that is not JSON quoted in an error (an HTML error page says enough in its start). */
const BODY_EXCERPT = 200;

/** Why a request got no answer, from fetch's error and its cause (undici puts the system error there). */
function failureReason(error: unknown, timeoutSeconds: number): string {
  const e = (error ?? {}) as { name?: unknown; message?: unknown; cause?: unknown };
  if (e.name === 'TimeoutError') return `no answer within ${timeoutSeconds}s (timeout)`;
  const cause = (e.cause ?? {}) as { code?: unknown; message?: unknown; name?: unknown; cause?: unknown };
  if (cause.code === 'ECONNREFUSED') return `connection refused (${String(cause.message)})`;
  if (cause.name === 'TimeoutError') return `no answer within ${timeoutSeconds}s (timeout)`;
  if (typeof cause.code === 'string') return `${cause.code}: ${typeof cause.message === 'string' ? cause.message : String(e.message)}`;
  if (typeof cause.message === 'string') return `${String(e.message)}: ${cause.message}`;
  return typeof e.message === 'string' ? e.message : String(error);
}

/** Where a query went, for an error: the URL without its query string (the query itself is in the status already). */
function target(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.origin}${parsed.pathname}`;
  } catch {
    return url;
  }
}

/**
 * Sends one analysis query (core/traffic/observation.ts): an HTTP(S) GET of `query.url`, aborted after
 * `query.timeoutSeconds`, its body parsed as JSON whatever the HTTP status (Prometheus answers a bad query with 400 and
 * a JSON error, which core reads). Never throws: no JSON body is an answer with `error` naming why (connection
 * refused, timeout, the HTTP status of a body that is not JSON, such as a proxy's error page). `at` is when the
 * answer came, by `now`.
 */
export async function queryPrometheus(query: AnalysisQuery, now: () => number): Promise<AnalysisAnswer> {
  const signal = AbortSignal.timeout(query.timeoutSeconds * 1000);
  let status: number;
  let text: string;
  try {
    const response = await fetch(query.url, { method: 'GET', headers: { Accept: 'application/json' }, signal, redirect: 'follow' });
    status = response.status;
    // The body is read under the same timeout: a server that sends headers and then stalls is a timeout too.
    text = await response.text();
  } catch (error) {
    return { query, error: `query to ${target(query.url)} failed: ${failureReason(error, query.timeoutSeconds)}`, at: now() };
  }
  try {
    return { query, body: JSON.parse(text) as unknown, at: now() };
  } catch {
    const excerpt = text.trim().replace(/\s+/g, ' ').slice(0, BODY_EXCERPT);
    return { query, error: `query to ${target(query.url)} answered HTTP ${status} with a body that is not JSON${excerpt ? `: ${excerpt}` : ''}`, at: now() };
  }
}

/**
 * Sends every query, at most `concurrency` at once, and gives their answers in the order of `queries`. Never throws
 * (queryPrometheus does not).
 */
export async function queryAll(
  queries: readonly AnalysisQuery[],
  concurrency: number = ANALYSIS_QUERY_CONCURRENCY,
  now: () => number = Date.now,
): Promise<AnalysisAnswer[]> {
  const answers: AnalysisAnswer[] = new Array<AnalysisAnswer>(queries.length);
  let next = 0;
  const lane = async () => {
    while (next < queries.length) {
      const i = next++;
      answers[i] = await queryPrometheus(queries[i]!, now);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(concurrency, queries.length)) }, lane));
  return answers;
}
