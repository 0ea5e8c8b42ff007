import * as z from 'zod';
import { QUERY_PLACEHOLDERS, unknownPlaceholders } from '../analysis/query.js';
import { dnsLabel, INT32_MAX } from './common.js';

/**
 * spec.strategy.traffic: how traffic follows a rollout (issue #22). Two modes:
 *
 * - `Replicas` (default) writes no route: Git renders a Service over every pod of the ExtendedDeployment (and, when
 *   `route` is set, a fully defaulted HTTPRoute to it), and the traffic share is the share of Ready pods, paced by the
 *   groups.
 * - `Weighted` lets the agent own whole objects it creates, never a Git object: a Service per live revision and the
 *   HTTPRoute `<ed>`, built from `route` plus weighted backendRefs (core/traffic/). HTTPRoute rules and backendRefs are
 *   atomic lists, so the route cannot be shared with Git field by field.
 *
 * The Gateway API fields below are the route template as reviewed in Git. They carry no defaults of their own:
 * core/traffic/route.ts applies the Gateway API's (v1.4.0 CRD) when it builds the route, in one place.
 */

const nonNegativeInt = z
  .number()
  .int({ message: 'must be an integer' })
  .min(0, { message: 'must not be negative' })
  .max(INT32_MAX, { message: `must be at most ${INT32_MAX}` });

const portNumber = z.number().int({ message: 'must be an integer' }).min(1, { message: 'must be at least 1' }).max(65535, { message: 'must be at most 65535' });

// An IANA service name, as Kubernetes allows for a named container port: 1-15 characters, a letter among them (checked
// apart: a lookahead would not compile as a CRD pattern, which Go's RE2 reads).
const IANA_SVC_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

// Gateway API's Duration (GEP-2257): up to four number-unit pairs, e.g. "1h30m" or "500ms".
const GATEWAY_DURATION = /^([0-9]{1,5}(h|m|s|ms)){1,4}$/;

// PromQL's duration, e.g. "2m" or "1h30m".
const PROMQL_DURATION = /^([0-9]+(ms|s|m|h|d|w|y))+$/;

/** The modes of spec.strategy.traffic.mode. */
export const trafficModes = ['Replicas', 'Weighted'] as const;

/** The port of the Services the traffic reaches (the Replicas-mode Service and the per-revision Services). */
export const trafficService = z
  .strictObject({
    port: portNumber.default(80).describe('The Service port, which the route backendRefs name.'),
    targetPort: z
      .union([
        portNumber,
        z
          .string()
          .max(15, { message: 'must be at most 15 characters' })
          .regex(IANA_SVC_NAME, { message: 'must be a port name' })
          .refine((name) => /[a-z]/.test(name), { message: 'must be a port name (with a letter)' }),
      ])
      .optional()
      .meta({ 'x-kubernetes-int-or-string': true })
      .describe("The pods' port: a number or a container port's name. Unset: the same number as port, as Kubernetes defaults it."),
    name: dnsLabel.max(15, { message: 'must be at most 15 characters' }).default('http').describe('The name of the Service port.'),
    appProtocol: z.string().min(1, { message: 'must not be empty' }).optional().describe('The application protocol of the port, e.g. kubernetes.io/h2c.'),
  })
  .prefault({})
  .describe('The Service port traffic goes through.');

/** A Gateway (or other parent) the route attaches to: Gateway API ParentReference. */
const parentRef = z.strictObject({
  group: z.string().max(253).optional().describe('API group of the parent; the Gateway API defaults it to gateway.networking.k8s.io.'),
  kind: z.string().min(1).max(63).optional().describe('Kind of the parent; the Gateway API defaults it to Gateway.'),
  namespace: dnsLabel.optional().describe("Namespace of the parent; unset: the route's own."),
  name: z.string().min(1, { message: 'must not be empty' }).max(253).describe('Name of the parent.'),
  sectionName: z.string().min(1).max(253).optional().describe('A listener of the parent, by name.'),
  port: portNumber.optional().describe('A listener of the parent, by port.'),
});

const pathMatchTypes = ['Exact', 'PathPrefix', 'RegularExpression'] as const;
const valueMatchTypes = ['Exact', 'RegularExpression'] as const;
const httpMethods = ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'CONNECT', 'OPTIONS', 'TRACE', 'PATCH'] as const;

const nameValueMatch = z.strictObject({
  type: z.enum(valueMatchTypes).optional().describe('Exact (the Gateway API default) or RegularExpression.'),
  name: z.string().min(1, { message: 'must not be empty' }).max(256).describe('Header or query parameter name.'),
  value: z.string().max(4096).describe('The value to match.'),
});

/** One match of a route rule: Gateway API HTTPRouteMatch. */
const routeMatch = z.strictObject({
  path: z
    .strictObject({
      type: z.enum(pathMatchTypes).optional().describe('Exact, PathPrefix (the Gateway API default) or RegularExpression.'),
      value: z.string().max(1024).optional().describe('The path; the Gateway API defaults it to "/".'),
    })
    .optional()
    .describe('The request path.'),
  headers: z.array(nameValueMatch).max(16).optional().describe('Request headers, all of them.'),
  queryParams: z.array(nameValueMatch).max(16).optional().describe('Query parameters, all of them.'),
  method: z.enum(httpMethods).optional().describe('The HTTP method.'),
});

/** A filter of a route rule (Gateway API HTTPRouteFilter), kept as written: the Gateway API validates it. */
const routeFilter = z
  .looseObject({
    type: z.string().min(1, { message: 'must not be empty' }).describe('The filter type; the field of the same name in camelCase holds its settings.'),
  })
  .meta({ 'x-kubernetes-preserve-unknown-fields': true })
  .describe('A Gateway API HTTPRouteFilter (RequestHeaderModifier, ResponseHeaderModifier, RequestMirror, RequestRedirect, URLRewrite, ExtensionRef).');

/** One rule of the route template, without backendRefs: those are the agent's (Weighted) or the render's (Replicas). */
const routeRule = z.strictObject({
  name: z.string().min(1).max(253).optional().describe('Name of the rule.'),
  matches: z.array(routeMatch).max(64).optional().describe('Requests the rule takes; unset: every request (path prefix "/").'),
  filters: z.array(routeFilter).max(16).optional().describe('Filters applied to the requests the rule takes.'),
  timeouts: z
    .strictObject({
      request: z
        .string()
        .regex(GATEWAY_DURATION, { message: 'must be a Gateway API duration like "10s"' })
        .optional()
        .describe('Timeout of the whole request.'),
      backendRequest: z
        .string()
        .regex(GATEWAY_DURATION, { message: 'must be a Gateway API duration like "10s"' })
        .optional()
        .describe('Timeout of one request to a backend.'),
    })
    .optional()
    .describe('Request timeouts.'),
});

/** The HTTPRoute template, as reviewed in Git: where the route attaches and which requests it takes. */
export const routeTemplate = z
  .strictObject({
    parentRefs: z.array(parentRef).min(1, { message: 'needs at least one parent' }).max(32).describe('Gateways (or listeners) the route attaches to.'),
    hostnames: z.array(z.string().min(1).max(253)).max(16).optional().describe('Host names the route answers for; unset: those of its listeners.'),
    rules: z
      .array(routeRule)
      .min(1, { message: 'needs at least one rule' })
      .max(16, { message: 'supports at most 16 rules' })
      .optional()
      .describe('Rules without backendRefs; every rule sends to the same backends. Unset: one rule taking every request.'),
  })
  .describe(
    "HTTPRoute `<ed>` in the ExtendedDeployment's namespace. Replicas: the render writes it to Git, sending to Service `<ed>`. Weighted: the agent creates and owns it, with weighted backendRefs to the per-revision Services.",
  );

/** How a success condition compares: `value op threshold`. */
export const thresholdOps = ['<', '<=', '>', '>='] as const;
export const noDataPolicies = ['Wait', 'Pass', 'Fail'] as const;
export const onFailureActions = ['Hold', 'ShiftBack'] as const;
export const aggregations = ['Sum', 'Min', 'Max', 'Avg'] as const;
export const comparisonDirections = ['LowerIsBetter', 'HigherIsBetter'] as const;

/** One Prometheus metric of an analysis gate. */
export const analysisMetric = z.strictObject({
  name: dnsLabel.describe('Name of the metric in status, Events and the samples metric.'),
  query: z
    .string()
    .min(1, { message: 'must not be empty' })
    .max(4096, { message: 'must be at most 4096 characters' })
    .describe(
      `PromQL instant query. Placeholders: ${QUERY_PLACEHOLDERS.map((p) => `{{${p}}}`).join(', ')}. Traefik drops a service's series once the service leaves the route, so windowed queries want e.g. max_over_time.`,
    ),
  aggregate: z
    .enum(aggregations)
    .optional()
    .describe('How to reduce a result of several series to one value. Unset: more than one series is an error (ambiguous).'),
  threshold: z
    .strictObject({
      op: z.enum(thresholdOps).describe('The comparison: the sample passes when `value op threshold`.'),
      value: z.number().describe('The threshold.'),
    })
    .optional()
    .describe('Success when the value compares so with the threshold.'),
  compareToStable: z
    .strictObject({
      direction: z.enum(comparisonDirections).default('LowerIsBetter').describe('LowerIsBetter (error rates, latencies) or HigherIsBetter (success rates).'),
      maxDifference: z.number().min(0, { message: 'must not be negative' }).optional().describe('How much worse than the stable revision the canary may be.'),
      maxRatio: z
        .number()
        .min(1, { message: 'must be at least 1' })
        .optional()
        .describe('How many times worse than the stable revision the canary may be; a stable value of 0 makes any worse canary value fail it.'),
    })
    .optional()
    .describe('Success when the canary is not worse than the stable revision by more than this: the same query runs with {{revision}} set to the stable one.'),
  consecutiveSuccesses: z
    .number()
    .int({ message: 'must be an integer' })
    .min(1, { message: 'must be at least 1' })
    .max(100, { message: 'must be at most 100' })
    .default(3)
    .describe('Successful samples in a row the metric needs to pass. Only Success samples (and no-data samples with noData Pass) count.'),
  noData: z
    .enum(noDataPolicies)
    .default('Wait')
    .describe('An empty result or NaN. Wait: keep sampling (WaitingForData; counts for nothing). Pass: counts as a success. Fail: counts as a failure.'),
  failureLimit: nonNegativeInt.default(0).describe('Failed samples tolerated: one more fails the analysis.'),
  errorLimit: nonNegativeInt
    .default(4)
    .describe('Errors in a row tolerated (unreachable Prometheus, a bad query, ±Inf): one more makes the analysis Inconclusive.'),
  inconclusiveLimit: nonNegativeInt
    .optional()
    .describe(
      "With noData Wait: no-data samples in a row tolerated; one more makes the analysis Inconclusive. Unset: wait until the group's progress deadline.",
    ),
});

/** spec.strategy.traffic.analysis: Prometheus gates at every group barrier. */
export const analysisSpec = z
  .strictObject({
    prometheus: z
      .strictObject({
        address: z
          .string()
          .regex(/^https?:\/\/[^\s/?#]+[^\s]*$/, { message: 'must be an http:// or https:// URL' })
          .describe('Base URL of the Prometheus HTTP API, e.g. http://prometheus.monitoring:9090.'),
        timeoutSeconds: z.number().int().min(1, { message: 'must be at least 1' }).max(300).default(5).describe('Timeout of one query.'),
      })
      .describe('Where the queries go (/api/v1/query).'),
    intervalSeconds: z.number().int().min(1, { message: 'must be at least 1' }).max(86_400).default(30).describe('Seconds between two samples of a metric.'),
    window: z
      .string()
      .regex(PROMQL_DURATION, { message: 'must be a PromQL duration like "2m"' })
      .default('2m')
      .describe('The value of {{window}}: the range the queries look back over.'),
    metrics: z
      .array(analysisMetric)
      .min(1, { message: 'needs at least one metric' })
      .max(16, { message: 'supports at most 16 metrics' })
      .describe('The metrics; every one must pass.'),
    onFailure: z
      .enum(onFailureActions)
      .default('Hold')
      .describe(
        "Hold: the rollout stays Paused (reason AnalysisFailed) with the weights where they are. ShiftBack (mode Weighted): the canary's weight goes back to 0, its pods kept.",
      ),
  })
  .superRefine((analysis, ctx) => {
    const names = new Set<string>();
    analysis.metrics.forEach((metric, i) => {
      if (names.has(metric.name)) ctx.addIssue({ code: 'custom', path: ['metrics', i, 'name'], message: `metric ${metric.name} is defined twice` });
      names.add(metric.name);
      const unknown = unknownPlaceholders(metric.query);
      if (unknown.length > 0) {
        ctx.addIssue({
          code: 'custom',
          path: ['metrics', i, 'query'],
          message: `unknown placeholder ${unknown.map((u) => `{{${u}}}`).join(', ')}: use one of ${QUERY_PLACEHOLDERS.map((p) => `{{${p}}}`).join(', ')}`,
        });
      }
      if (!metric.threshold && !metric.compareToStable) {
        ctx.addIssue({ code: 'custom', path: ['metrics', i], message: 'needs a success condition: threshold or compareToStable' });
      }
      const compare = metric.compareToStable;
      if (compare && compare.maxDifference === undefined && compare.maxRatio === undefined) {
        ctx.addIssue({ code: 'custom', path: ['metrics', i, 'compareToStable'], message: 'needs maxDifference or maxRatio' });
      }
      if (metric.inconclusiveLimit !== undefined && metric.noData !== 'Wait') {
        ctx.addIssue({ code: 'custom', path: ['metrics', i, 'inconclusiveLimit'], message: 'counts no-data samples and applies only with noData Wait' });
      }
    });
  })
  .describe('Prometheus analysis at every group barrier: the next group starts only when every metric has passed.');

/** spec.strategy.traffic. */
export const trafficStrategy = z
  .strictObject({
    mode: z
      .enum(trafficModes)
      .default('Replicas')
      .describe(
        'Replicas: no route writes; the share of traffic is the share of Ready pods. Weighted: the agent owns a Service per revision and the HTTPRoute `<ed>`, and sets weights per group.',
      ),
    service: trafficService,
    route: routeTemplate.optional(),
    steps: z
      .array(z.number().min(0, { message: 'must not be negative' }).max(100, { message: 'must be at most 100' }))
      .max(64, { message: 'supports at most 64 steps' })
      .optional()
      .describe(
        "Weighted: the canary's percentage of the traffic per group (steps[0] for group 1), applied once the group's pods are Ready; 0.01 resolution. Unset, and for groups past the last step: the canary's share of Ready pods, never below the last step.",
      ),
    drainSeconds: nonNegativeInt
      .default(30)
      .describe(
        "Weighted: how long a revision's weight must have been 0 in an accepted route before its last pods may go (in-flight requests, load balancers catching up).",
      ),
    analysis: analysisSpec.optional(),
  })
  .superRefine((traffic, ctx) => {
    if (traffic.mode === 'Weighted' && !traffic.route) ctx.addIssue({ code: 'custom', path: ['route'], message: 'is required with mode Weighted' });
    if (traffic.mode === 'Replicas' && traffic.steps) {
      ctx.addIssue({ code: 'custom', path: ['steps'], message: "needs mode Weighted: in mode Replicas the traffic share is the Ready pods'" });
    }
    traffic.steps?.forEach((step, i) => {
      if (Math.abs(Math.round(step * 100) - step * 100) > 1e-6) ctx.addIssue({ code: 'custom', path: ['steps', i], message: 'has a resolution of 0.01' });
      const previous = traffic.steps?.[i - 1];
      if (previous !== undefined && step < previous)
        ctx.addIssue({ code: 'custom', path: ['steps', i], message: `must not be below the step before (${previous})` });
    });
    if (traffic.analysis?.onFailure === 'ShiftBack' && traffic.mode !== 'Weighted') {
      ctx.addIssue({ code: 'custom', path: ['analysis', 'onFailure'], message: 'needs mode Weighted for ShiftBack: mode Replicas has no weight to shift' });
    }
  })
  .describe('How traffic follows the rollout: by Ready pods (Replicas) or by weights in an agent-owned HTTPRoute (Weighted), with optional analysis gates.');

// Status shapes are open (z.object), as the rest of the status: fields a newer agent writes are dropped on reading.

/** A revision's weight in the route. */
const revisionWeight = z.object({
  revision: z.string().describe('The revision (pod label extendeddeployment.io/revision).'),
  weight: z.number().int().describe('Its backendRef weight, on a scale of 10000 (0.01 %).'),
});

/** A revision whose weight is 0 in an accepted route. */
const drainRecord = z.object({
  revision: z.string().describe('The revision.'),
  since: z.string().describe('When (RFC 3339) its weight was first seen 0 in an accepted route: its pods may go drainSeconds later.'),
});

/** status.traffic, written by the agent in mode Weighted before it changes the route. */
export const trafficStatus = z.object({
  revision: z.string().optional().describe('The rollout revision (status.revision) the weights belong to.'),
  group: z.number().int().optional().describe('The group whose step the weights are; 0 before the first.'),
  weights: z.array(revisionWeight).optional().describe('The weights the agent wants in the route, by revision.'),
  appliedGeneration: z
    .number()
    .int()
    .optional()
    .describe('The route generation every parent Gateway accepted with these weights; absent until then (the group barrier waits for it).'),
  shiftedBack: z.boolean().optional().describe('True while a failed analysis (onFailure ShiftBack) holds the canary at weight 0.'),
  draining: z.array(drainRecord).optional().describe('Revisions at weight 0, with when their drain started.'),
  message: z.string().optional().describe('Why the step is not applied yet, or what clashes.'),
});

/** The verdicts of one sample. */
export const sampleVerdicts = ['Success', 'Failure', 'NoData', 'Error'] as const;
/** Where a metric, or the whole analysis, stands. */
export const analysisOutcomes = ['Running', 'WaitingForData', 'Successful', 'Failed', 'Inconclusive'] as const;

/** One sample of a metric. */
const analysisSample = z.object({
  time: z.string().describe('When it was taken (RFC 3339).'),
  query: z.string().describe('The query as sent, placeholders substituted.'),
  value: z.number().optional().describe('The value; absent with no data or an error.'),
  stableValue: z.number().optional().describe("compareToStable: the stable revision's value."),
  verdict: z.enum(sampleVerdicts).describe('Success, Failure, NoData or Error.'),
  message: z.string().optional().describe('Why: the error, or the comparison made.'),
});

/** One metric of the analysis in progress. */
const metricStatus = z.object({
  name: z.string().describe('The metric.'),
  outcome: z.enum(analysisOutcomes).describe('Where the metric stands.'),
  consecutiveSuccesses: z.number().int().describe('Successes in a row so far.'),
  failures: z.number().int().describe('Failed samples (noData Fail included).'),
  errors: z.number().int().describe('Samples in error.'),
  consecutiveErrors: z.number().int().describe('Errors in a row.'),
  consecutiveNoData: z.number().int().describe('No-data samples in a row (noData Wait).'),
  samples: z.array(analysisSample).optional().describe('The last samples, oldest first (at most 10).'),
});

/** status.analysis: the analysis of the current group barrier. */
export const analysisStatus = z.object({
  revision: z.string().optional().describe('The rollout revision analysed.'),
  group: z.number().int().optional().describe('The group whose barrier the analysis gates.'),
  outcome: z
    .enum(analysisOutcomes)
    .optional()
    .describe('Failed or Inconclusive if a metric is; Successful once every metric is; WaitingForData while one waits for data.'),
  startedAt: z.string().optional().describe('When (RFC 3339) the analysis of this group started.'),
  nextSampleAt: z.string().optional().describe('When (RFC 3339) the next sample is due.'),
  metrics: z.array(metricStatus).optional().describe('Per metric, in spec order.'),
});

/** spec.strategy.traffic with defaults applied. */
export type TrafficStrategy = z.output<typeof trafficStrategy>;
/** spec.strategy.traffic as written in Git. */
export type TrafficStrategyInput = z.input<typeof trafficStrategy>;
/** The Service port settings with defaults applied. */
export type TrafficService = z.output<typeof trafficService>;
/** The HTTPRoute template. */
export type RouteTemplate = z.output<typeof routeTemplate>;
/** The analysis settings with defaults applied. */
export type AnalysisSpec = z.output<typeof analysisSpec>;
/** One analysis metric with defaults applied. */
export type AnalysisMetric = z.output<typeof analysisMetric>;
/** status.traffic. */
export type TrafficStatus = z.output<typeof trafficStatus>;
/** One revision's weight in status.traffic. */
export type RevisionWeightStatus = z.output<typeof revisionWeight>;
/** One drain record of status.traffic. */
export type DrainRecord = z.output<typeof drainRecord>;
/** status.analysis. */
export type AnalysisStatus = z.output<typeof analysisStatus>;
/** One metric of status.analysis. */
export type MetricStatus = z.output<typeof metricStatus>;
/** One sample of status.analysis. */
export type AnalysisSample = z.output<typeof analysisSample>;
/** A sample's verdict. */
export type SampleVerdict = (typeof sampleVerdicts)[number];
/** An analysis outcome. */
export type AnalysisOutcome = (typeof analysisOutcomes)[number];
