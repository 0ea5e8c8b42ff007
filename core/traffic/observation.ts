import type { ObservedRoute } from './objects.js';
import type { ObservedTrafficService } from './plan.js';

/**
 * One Prometheus instant query the agent sends for an analysis sample (core asks for it: analysisQueriesDue), and
 * where: the agent only performs the HTTP GET of `url` with the timeout, and hands back what came.
 */
export interface AnalysisQuery {
  /** The metric of spec.strategy.traffic.analysis.metrics it samples. */
  readonly metric: string;
  /** The canary's query, or with compareToStable the stable revision's. */
  readonly role: 'candidate' | 'stable';
  /** The query with its placeholders filled in (status and Events show it). */
  readonly query: string;
  /** `<prometheus.address>/api/v1/query?query=…` (core/analysis/prometheus.ts instantQueryUrl). */
  readonly url: string;
  readonly timeoutSeconds: number;
}

/** What one query gave: the response body parsed as JSON (whatever its HTTP status), or why there was none. */
export interface AnalysisAnswer {
  readonly query: AnalysisQuery;
  /** The JSON body of the answer; Prometheus answers errors as JSON too (`status: error`). */
  readonly body?: unknown;
  /** No JSON body: connection refused, timeout, an answer that is not JSON. */
  readonly error?: string;
  /** When the answer came (ms): the sample's time. */
  readonly at: number;
}

/**
 * What the agent read for an ExtendedDeployment's traffic (mode Weighted) and its analysis, at one look. Absent where
 * nothing is read (`edctl plan`): then no route is written and no analysis gates the barrier.
 */
export interface TrafficObservation {
  /** The HTTPRoute `<ed>` in the ExtendedDeployment's namespace, as the watch cache has it; undefined when there is none. */
  readonly route: ObservedRoute | undefined;
  /** The Services of the namespace named `<ed>-…` (the revision Services, and whatever else is in the way). */
  readonly services: readonly ObservedTrafficService[];
  /** The HTTPRoute API is served in this cluster (the Gateway API CRDs are installed). */
  readonly routesServed: boolean;
  /** The answers to the queries analysisQueriesDue asked for, in this look; empty when none was due. */
  readonly answers: readonly AnalysisAnswer[];
}
