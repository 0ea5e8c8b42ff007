import type { AnalysisMetric } from '../api/traffic.js';
import { failed, ok, type FieldPath, type ObjectRef, type Result } from '../problems.js';

/**
 * The placeholders an analysis query may use, `{{name}}` with optional blanks inside the braces. They are substituted
 * at each sample, and the resulting query is what status and the Event record, so a reader sees what was asked.
 */
export const QUERY_PLACEHOLDERS = ['namespace', 'name', 'revision', 'stableRevision', 'region', 'cluster', 'window'] as const;

/** One placeholder's name. */
export type QueryPlaceholder = (typeof QUERY_PLACEHOLDERS)[number];

/** The values of the placeholders for one sample; a placeholder the query uses must have one. */
export type QueryValues = { readonly [P in QueryPlaceholder]?: string | undefined };

// Word characters only: anything else between double braces is not a placeholder and stays as written (PromQL has no
// `{{`, but a label matcher may hold a Go template of another tool; refusing it would refuse a valid query).
const PLACEHOLDER = /\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}/g;

const KNOWN: ReadonlySet<string> = new Set(QUERY_PLACEHOLDERS);

/** The placeholders `query` uses, in order of first use, known or not. */
export function placeholdersIn(query: string): string[] {
  const names: string[] = [];
  for (const match of query.matchAll(PLACEHOLDER)) {
    const name = match[1] ?? '';
    if (!names.includes(name)) names.push(name);
  }
  return names;
}

/** The placeholders `query` uses that are not among QUERY_PLACEHOLDERS (a typo such as `{{revison}}`). */
export function unknownPlaceholders(query: string): string[] {
  return placeholdersIn(query).filter((name) => !KNOWN.has(name));
}

/**
 * Escapes a value for a PromQL double-quoted string literal (Go's escaping: backslash, double quote, line breaks).
 * Placeholders are meant to sit inside `"…"` label matchers; names, regions and revisions are DNS labels or hex and
 * pass unchanged, so the escaping matters only for a value that would otherwise end the string early.
 */
export function escapeLabelValue(value: string): string {
  return value.replace(/[\\"\n\r\t]/g, (c) => ({ '\\': '\\\\', '"': '\\"', '\n': '\\n', '\r': '\\r', '\t': '\\t' })[c] ?? c);
}

/**
 * Substitutes every placeholder of `query` with its escaped value. An unknown placeholder, or a known one without a
 * value here (`{{cluster}}` outside a fleet, `{{stableRevision}}` with no older revision running), is a problem at
 * `path` (the metric's query field): the query is never sent half-substituted.
 */
export function substituteQuery(query: string, values: QueryValues, object: ObjectRef, path: FieldPath): Result<string> {
  const problems = placeholdersIn(query).flatMap((name) => {
    if (!KNOWN.has(name))
      return [{ object, path, message: `unknown placeholder {{${name}}}: use one of ${QUERY_PLACEHOLDERS.map((p) => `{{${p}}}`).join(', ')}` }];
    return values[name as QueryPlaceholder] === undefined ? [{ object, path, message: `placeholder {{${name}}} has no value here` }] : [];
  });
  if (problems.length > 0) return failed(problems);
  return ok(query.replace(PLACEHOLDER, (_, name: string) => escapeLabelValue(values[name as QueryPlaceholder] ?? '')));
}

/** The queries of one sample of a metric: the canary's, and with compareToStable the stable revision's. */
export interface MetricQueries {
  readonly query: string;
  readonly stableQuery?: string;
}

/** The field path of metric `index`'s query: problems with it point there. */
export function metricQueryPath(index: number): FieldPath {
  return ['spec', 'strategy', 'traffic', 'analysis', 'metrics', index, 'query'];
}

/**
 * The queries of metric `index` for one sample: `{{window}}` is the analysis' window, `{{revision}}` the canary's;
 * compareToStable runs the same query again with `{{revision}}` set to the stable revision, so that both sides are
 * measured alike. Without a stable revision running there is nothing to compare with: a problem, not a pass.
 */
export function metricQueries(
  metric: AnalysisMetric,
  index: number,
  window: string,
  values: Omit<QueryValues, 'window'>,
  object: ObjectRef,
): Result<MetricQueries> {
  const path = metricQueryPath(index);
  const query = substituteQuery(metric.query, { ...values, window }, object, path);
  if (!query.ok || !metric.compareToStable) return query.ok ? ok({ query: query.value }) : query;
  if (values.stableRevision === undefined)
    return failed([
      { object, path: ['spec', 'strategy', 'traffic', 'analysis', 'metrics', index, 'compareToStable'], message: 'no stable revision runs to compare with' },
    ]);
  const stableQuery = substituteQuery(metric.query, { ...values, revision: values.stableRevision, window }, object, path);
  return stableQuery.ok ? ok({ query: query.value, stableQuery: stableQuery.value }) : stableQuery;
}
