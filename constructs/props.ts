/**
 * The types of the constructs' props, written out so that an editor shows each field's documentation and default.
 * They are the schema's input types (core/api) spelled by hand, and constructs/props.test.ts fails the type check
 * when the two differ. Spelled by hand for a second reason: the published declarations of the constructs must not
 * import zod's, which a CommonJS project without `esModuleInterop` and `skipLibCheck` (what `cdk8s init
 * typescript-app` makes) cannot compile.
 */

/** An integer, or a percentage of a total written `"N%"` (N from 0 to 100). */
export type IntOrPercent = number | string;

/** One set-based requirement of a {@link LabelSelector}. */
export interface LabelSelectorRequirement {
  /** Label key. */
  readonly key: string;
  /** Set operator. */
  readonly operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist';
  /**
   * Values for `In` and `NotIn`.
   * @default none
   */
  readonly values?: string[];
}

/** A Kubernetes label selector (meta/v1): a pod matches when it meets every requirement. */
export interface LabelSelector {
  /**
   * Labels a pod must carry, all of them.
   * @default none
   */
  readonly matchLabels?: Record<string, string>;
  /**
   * Set-based requirements, all of them.
   * @default none
   */
  readonly matchExpressions?: LabelSelectorRequirement[];
}

/** A Kubernetes toleration (core/v1). */
export interface Toleration {
  /**
   * Taint key the toleration applies to; empty with operator `Exists` matches every key.
   * @default every key (with `Exists`)
   */
  readonly key?: string;
  /**
   * `Exists` or `Equal`.
   * @default "Equal"
   */
  readonly operator?: 'Exists' | 'Equal';
  /**
   * Taint value to match with operator `Equal`.
   * @default ""
   */
  readonly value?: string;
  /**
   * Taint effect to match.
   * @default every effect
   */
  readonly effect?: 'NoSchedule' | 'PreferNoSchedule' | 'NoExecute';
  /**
   * How long a `NoExecute` taint is tolerated before eviction, in seconds.
   * @default forever
   */
  readonly tolerationSeconds?: number;
}

/** Resource requests and limits of one container, quantities as Kubernetes writes them (`500m`, `1Gi`, `2`). */
export interface ResourceRequirements {
  /**
   * Minimum resources, e.g. `{ cpu: '500m' }`.
   * @default none
   */
  readonly requests?: Record<string, string | number>;
  /**
   * Maximum resources, e.g. `{ memory: '1Gi' }`.
   * @default none
   */
  readonly limits?: Record<string, string | number>;
}

/** Typed changes to the pod template for one region, applied before its raw patches. */
export interface RegionOverrides {
  /**
   * Image per container name (regular or init container), e.g. `{ app: 'shop/web:1.2-arm64' }`.
   * @default none
   */
  readonly images?: Record<string, string>;
  /**
   * Literal environment variables per container name; a variable of the same name is replaced, others are appended
   * in key order.
   * @default none
   */
  readonly env?: Record<string, Record<string, string>>;
  /**
   * Requests and limits per container name, merged key by key into the container's own.
   * @default none
   */
  readonly resources?: Record<string, ResourceRequirements>;
  /**
   * Labels added to (or replaced in) the pod template.
   * @default none
   */
  readonly labels?: Record<string, string>;
  /**
   * Annotations added to (or replaced in) the pod template.
   * @default none
   */
  readonly annotations?: Record<string, string>;
  /**
   * Entries merged into the pod's nodeSelector.
   * @default none
   */
  readonly nodeSelector?: Record<string, string>;
  /**
   * Tolerations appended to the pod's (after the region's own).
   * @default none
   */
  readonly tolerations?: Toleration[];
  /**
   * StatefulSet regions: changes to the volume claim templates by claim name, for this region only (its StorageClass,
   * the size each claim requests).
   * @default none
   */
  readonly volumeClaims?: Record<string, VolumeClaimOverride>;
}

/** A region's changes to one volume claim template of StatefulSet regions. */
export interface VolumeClaimOverride {
  /**
   * StorageClass of this region's claims (zonal storage, another provisioner).
   * @default the template's
   */
  readonly storageClassName?: string;
  /**
   * Size each claim requests in this region (`resources.requests.storage`), e.g. `"20Gi"`.
   * @default the template's
   */
  readonly storage?: string | number;
}

/** One RFC 6902 operation on a region's pod template, as the upstream operator's `overriders` write it. */
export interface PatchOperation {
  /** `add`, `remove` or `replace`. */
  readonly op: 'add' | 'remove' | 'replace';
  /** JSON pointer into the pod template, e.g. `/spec/containers/0/image`. */
  readonly path: string;
  /**
   * The value for `add` and `replace`: any JSON.
   * @default none (for `remove`)
   */
  readonly value?: unknown;
}

/** Declarative approval a pull request can bump, instead of `edctl approve`. */
export interface ApprovalProps {
  /** The rollout revision being approved, as `edctl plan` prints it; an approval of another rollout is ignored. */
  readonly revision: string;
  /** Groups up to and including this one may start without further confirmation. */
  readonly throughGroup: number;
}

/** Shortage moves: replicas leave a region whose pods stay unschedulable. */
export interface AutoRescheduleProps {
  /**
   * Move replicas away from a region whose pods stay unschedulable.
   * @default false
   */
  readonly enable?: boolean;
  /**
   * How long a pod may stay Unschedulable before it is moved, in seconds.
   * @default 60
   */
  readonly timeoutSeconds?: number;
  /**
   * How long a region that just lost pods to shortage is not chosen as a target, in seconds.
   * @default 300
   */
  readonly coolDownSeconds?: number;
}

/** Fault moves: replicas leave a region whose nodes fail. */
export interface FaultMoveProps {
  /**
   * Move replicas away from a region whose nodes fail.
   * @default false
   */
  readonly enable?: boolean;
  /**
   * Failing nodes (a count, or a share of the region's nodes) at which the region counts as Failed.
   * @default "100%"
   */
  readonly failureThreshold?: IntOrPercent;
  /**
   * How long the threshold must hold before replicas move, in seconds.
   * @default 30
   */
  readonly tolerationSeconds?: number;
  /**
   * Most replicas moved per minute, as a count or a share of `replicas`.
   * @default "100%"
   */
  readonly maxReplicasPerMinute?: IntOrPercent;
}

/** Returning moved replicas to their region. */
export interface MoveBackProps {
  /**
   * Return moved replicas once their region is healthy with room again.
   * @default true
   */
  readonly enable?: boolean;
  /**
   * How long the region must stay healthy with room first, in seconds.
   * @default 300
   */
  readonly stabilizationSeconds?: number;
}

/** Budgets of `updateStrategy.type` RollingUpdate, rounded as the Deployment controller rounds them. */
export interface RollingUpdateProps {
  /**
   * Pods over the desired count during an update (percentages round up).
   * @default "25%"
   */
  readonly maxSurge?: IntOrPercent;
  /**
   * Pods below the desired count during an update (percentages round down).
   * @default "25%"
   */
  readonly maxUnavailable?: IntOrPercent;
}

/** How a pod reaches the new revision. */
export interface UpdateStrategyProps {
  /**
   * `ReCreate`: replace pods group by group (`upgradeMode` decides the order). `RollingUpdate`: replace within
   * `maxSurge`/`maxUnavailable`. `DeleteAllFirst`: remove every old pod, then create the new ones.
   * `InPlaceIfPossible`: swap images inside running pods when only images changed, replace otherwise.
   * @default "ReCreate"
   */
  readonly type?: 'ReCreate' | 'RollingUpdate' | 'DeleteAllFirst' | 'InPlaceIfPossible';
  /**
   * Seconds between taking a pod out of endpoints and swapping its image in place.
   * @default 5
   */
  readonly gracePeriodSeconds?: number;
  /**
   * Budgets for `type` RollingUpdate.
   * @default { maxSurge: "25%", maxUnavailable: "25%" }
   */
  readonly rollingUpdate?: RollingUpdateProps;
}

/** How rollouts of an ExtendedDeployment proceed. Every field has a default. */
export interface StrategyProps {
  /**
   * Pods per region each group adds: an integer, or a percentage of the region's replicas (at least 1).
   * @default 1
   */
  readonly batchSize?: IntOrPercent;
  /**
   * Seconds a new pod must be Ready before it counts as available.
   * @default 5
   */
  readonly minReadySeconds?: number;
  /**
   * Stop after each group until the rollout is approved (`edctl approve`, or `approval`).
   * @default false
   */
  readonly needWaitingForConfirm?: boolean;
  /**
   * With confirmation on: ask only at the first gate of each rollout.
   * @default false
   */
  readonly needFirstConfirm?: boolean;
  /**
   * Progress deadline per group in seconds; 0 means 300. When exceeded the rollout is Degraded and stops.
   * @default 0
   */
  readonly syncWaitTimeout?: number;
  /**
   * `Beta`: the first group is one pod per region. `Group`: it is `batchSize`.
   * @default "Beta"
   */
  readonly rolloutStrategy?: 'Beta' | 'Group';
  /**
   * Hold the rollout where it is until set back to false.
   * @default false
   */
  readonly pause?: boolean;
  /**
   * `Parallel`: every region takes each group together. `Sequential`: one region at a time, in declared order.
   * @default "Parallel", or "Sequential" with subsetType Deployment
   */
  readonly regionOrder?: 'Parallel' | 'Sequential';
  /**
   * For `updateStrategy.type` ReCreate. `scaleOutPriority`: new pods first, never fewer available than desired.
   * `scaleInPriority`: old pods first, never more pods than desired (scarce GPUs). `scaleSimultaneously`: both at once.
   * @default "scaleOutPriority"
   */
  readonly upgradeMode?: 'scaleOutPriority' | 'scaleInPriority' | 'scaleSimultaneously';
  /**
   * Declarative approval of the rollout up to a group.
   * @default none: groups wait for `edctl approve` when confirmation is on
   */
  readonly approval?: ApprovalProps;
  /**
   * Shortage moves.
   * @default off
   */
  readonly autoReschedule?: AutoRescheduleProps;
  /**
   * Fault moves.
   * @default off
   */
  readonly faultMove?: FaultMoveProps;
  /**
   * Returning moved replicas.
   * @default on, after 300 s of health
   */
  readonly moveBack?: MoveBackProps;
  /**
   * How a pod reaches the new revision.
   * @default ReCreate
   */
  readonly updateStrategy?: UpdateStrategyProps;
  /**
   * How the clusters of `clusters` follow each other. Only with `clusters`.
   * @default one wave per cluster in declared order, a 300 s soak, no failure tolerated
   */
  readonly fleet?: FleetStrategyProps;
  /**
   * How traffic follows the rollout: by Ready pods (`Replicas`) or by weights in an agent-owned HTTPRoute (`Weighted`),
   * with optional analysis gates.
   * @default none: no Service or route is rendered and no weight is written
   */
  readonly traffic?: TrafficProps;
}

/** How the member clusters of an ExtendedDeployment follow each other (`strategy.fleet`). */
export interface FleetStrategyProps {
  /**
   * Cluster names, wave by wave: a cluster's rollout starts its first group only once every cluster of the earlier
   * waves completed it. Every cluster of `clusters` in exactly one wave.
   * @default one wave per cluster, in `clusters` order
   */
  readonly waves?: string[][];
  /**
   * How long every cluster of the earlier waves must stay Healthy at the release before a wave starts, in seconds.
   * @default 300
   */
  readonly minSuccessSeconds?: number;
  /**
   * Clusters of earlier waves that may be Degraded (or, with `onUnreachable` Proceed, unreachable) without holding a
   * wave back.
   * @default 0
   */
  readonly maxFailures?: number;
  /**
   * What a wave does when a cluster of an earlier wave cannot be read.
   * @default wait for it
   */
  readonly onUnreachable?: OnUnreachableProps;
  /**
   * Waves (by index, from 0) whose start needs an approval.
   * @default none
   */
  readonly approveWaves?: number[];
  /**
   * Whether the members run the replicas of a lost member.
   * @default off
   */
  readonly failover?: FailoverProps;
}

/** What a wave does when a cluster of an earlier wave cannot be read. */
export interface OnUnreachableProps {
  /**
   * `Wait`: an unreachable earlier cluster holds the wave. `Proceed`: one unreachable for `afterSeconds` counts as one of
   * `maxFailures`.
   * @default "Wait"
   */
  readonly action?: 'Wait' | 'Proceed';
  /**
   * How long an earlier cluster must stay unreachable before `Proceed` counts it as failed, in seconds.
   * @default 600
   */
  readonly afterSeconds?: number;
}

/** Whether the members of a fleet run the replicas of a lost member. */
export interface FailoverProps {
  /**
   * `Off`: a lost member's replicas run nowhere else. `Additive`: the other members add them to their own, in
   * proportion to their shares, until it is back.
   * @default "Off"
   */
  readonly mode?: 'Off' | 'Additive';
  /**
   * How long a member must stay unreachable, without its agent, or with every region Failed before it counts as lost,
   * in seconds.
   * @default 120
   */
  readonly toleranceSeconds?: number;
  /**
   * How long a lost member must be Healthy with its replicas available again before the others remove what they
   * added, in seconds.
   * @default 600
   */
  readonly stabilizationSeconds?: number;
}

/** How traffic follows the rollout (`strategy.traffic`). */
export interface TrafficProps {
  /**
   * `Replicas`: no route writes; the share of traffic is the share of Ready pods. `Weighted`: the agent owns a Service
   * per revision and the HTTPRoute `<ed>`, and sets weights per group.
   * @default "Replicas"
   */
  readonly mode?: 'Replicas' | 'Weighted';
  /**
   * The Service port traffic goes through.
   * @default port 80, named "http", to the same port of the pods
   */
  readonly service?: TrafficServiceProps;
  /**
   * The HTTPRoute `<ed>`: where it attaches and which requests it takes. Required with `Weighted`.
   * @default none
   */
  readonly route?: RouteTemplateProps;
  /**
   * `Weighted`: the canary's percentage of the traffic per group (`steps[0]` for group 1), non-decreasing, 0.01
   * resolution.
   * @default the canary's share of Ready pods
   */
  readonly steps?: number[];
  /**
   * `Weighted`: how long a revision's weight must have been 0 in an accepted route before its last pods may go, in
   * seconds.
   * @default 30
   */
  readonly drainSeconds?: number;
  /**
   * Prometheus analysis at every group barrier.
   * @default none
   */
  readonly analysis?: AnalysisProps;
}

/** The Service port traffic goes through. */
export interface TrafficServiceProps {
  /**
   * The Service port, which the route backendRefs name.
   * @default 80
   */
  readonly port?: number;
  /**
   * The pods' port: a number or a container port's name.
   * @default the same number as `port`
   */
  readonly targetPort?: number | string;
  /**
   * The name of the Service port.
   * @default "http"
   */
  readonly name?: string;
  /**
   * The application protocol of the port, e.g. kubernetes.io/h2c.
   * @default none
   */
  readonly appProtocol?: string;
}

/** A Gateway (or other parent) the route attaches to: a Gateway API ParentReference. */
export interface RouteParentRefProps {
  /**
   * API group of the parent.
   * @default "gateway.networking.k8s.io"
   */
  readonly group?: string;
  /**
   * Kind of the parent.
   * @default "Gateway"
   */
  readonly kind?: string;
  /**
   * Namespace of the parent.
   * @default the route's namespace
   */
  readonly namespace?: string;
  /** Name of the parent. */
  readonly name: string;
  /**
   * A listener of the parent, by name.
   * @default every listener
   */
  readonly sectionName?: string;
  /**
   * A listener of the parent, by port.
   * @default every listener
   */
  readonly port?: number;
}

/** A header or query parameter match. */
export interface RouteValueMatchProps {
  /**
   * `Exact` or `RegularExpression`.
   * @default "Exact"
   */
  readonly type?: 'Exact' | 'RegularExpression';
  /** Header or query parameter name. */
  readonly name: string;
  /** The value to match. */
  readonly value: string;
}

/** The request path a rule matches. */
export interface RoutePathMatchProps {
  /**
   * `Exact`, `PathPrefix` or `RegularExpression`.
   * @default "PathPrefix"
   */
  readonly type?: 'Exact' | 'PathPrefix' | 'RegularExpression';
  /**
   * The path.
   * @default "/"
   */
  readonly value?: string;
}

/** Which requests a rule takes: a Gateway API HTTPRouteMatch. */
export interface RouteMatchProps {
  /**
   * The request path.
   * @default prefix "/"
   */
  readonly path?: RoutePathMatchProps;
  /**
   * Request headers, all of them.
   * @default any
   */
  readonly headers?: RouteValueMatchProps[];
  /**
   * Query parameters, all of them.
   * @default any
   */
  readonly queryParams?: RouteValueMatchProps[];
  /**
   * The HTTP method.
   * @default any
   */
  readonly method?: 'GET' | 'HEAD' | 'POST' | 'PUT' | 'DELETE' | 'CONNECT' | 'OPTIONS' | 'TRACE' | 'PATCH';
}

/** Request timeouts of a rule. */
export interface RouteTimeoutsProps {
  /**
   * Timeout of the whole request, a Gateway API duration like "10s".
   * @default the gateway's
   */
  readonly request?: string;
  /**
   * Timeout of one request to a backend.
   * @default the gateway's
   */
  readonly backendRequest?: string;
}

/** A rule of the route template, without backendRefs: those are the agent's (`Weighted`) or the render's (`Replicas`). */
export interface RouteRuleProps {
  /**
   * Name of the rule.
   * @default none
   */
  readonly name?: string;
  /**
   * Requests the rule takes.
   * @default every request
   */
  readonly matches?: RouteMatchProps[];
  /**
   * Gateway API HTTPRouteFilters, as written.
   * @default none
   */
  readonly filters?: { readonly type: string; readonly [key: string]: unknown }[];
  /**
   * Request timeouts.
   * @default the gateway's
   */
  readonly timeouts?: RouteTimeoutsProps;
}

/** The HTTPRoute template. */
export interface RouteTemplateProps {
  /** Gateways (or listeners) the route attaches to. */
  readonly parentRefs: RouteParentRefProps[];
  /**
   * Host names the route answers for.
   * @default those of its listeners
   */
  readonly hostnames?: string[];
  /**
   * Rules without backendRefs; every rule sends to the same backends.
   * @default one rule taking every request
   */
  readonly rules?: RouteRuleProps[];
}

/** Where the analysis queries go. */
export interface PrometheusProps {
  /** Base URL of the Prometheus HTTP API, e.g. http://prometheus.monitoring:9090. */
  readonly address: string;
  /**
   * Timeout of one query, in seconds.
   * @default 5
   */
  readonly timeoutSeconds?: number;
}

/** Prometheus analysis at every group barrier (`strategy.traffic.analysis`). */
export interface AnalysisProps {
  /** Where the queries go (/api/v1/query). */
  readonly prometheus: PrometheusProps;
  /**
   * Seconds between two samples of a metric.
   * @default 30
   */
  readonly intervalSeconds?: number;
  /**
   * The value of `{{window}}`: the range the queries look back over.
   * @default "2m"
   */
  readonly window?: string;
  /** The metrics; every one must pass. */
  readonly metrics: AnalysisMetricProps[];
  /**
   * `Hold`: the rollout stays Paused with the weights where they are. `ShiftBack` (`Weighted`): the canary's weight
   * goes back to 0.
   * @default "Hold"
   */
  readonly onFailure?: 'Hold' | 'ShiftBack';
}

/** A success condition against a fixed value. */
export interface ThresholdProps {
  /** The comparison: the sample passes when `value op threshold`. */
  readonly op: '<' | '<=' | '>' | '>=';
  /** The threshold. */
  readonly value: number;
}

/** A success condition against the stable revision, measured with the same query. */
export interface CompareToStableProps {
  /**
   * `LowerIsBetter` (error rates, latencies) or `HigherIsBetter` (success rates).
   * @default "LowerIsBetter"
   */
  readonly direction?: 'LowerIsBetter' | 'HigherIsBetter';
  /**
   * How much worse than the stable revision the canary may be.
   * @default no bound
   */
  readonly maxDifference?: number;
  /**
   * How many times worse than the stable revision the canary may be.
   * @default no bound
   */
  readonly maxRatio?: number;
}

/** One Prometheus metric of an analysis gate. */
export interface AnalysisMetricProps {
  /** Name of the metric in status, Events and the samples metric. */
  readonly name: string;
  /**
   * PromQL instant query with placeholders `{{namespace}}`, `{{name}}`, `{{revision}}`, `{{stableRevision}}`,
   * `{{region}}`, `{{cluster}}`, `{{window}}`.
   */
  readonly query: string;
  /**
   * How to reduce a result of several series to one value.
   * @default none: several series are an error
   */
  readonly aggregate?: 'Sum' | 'Min' | 'Max' | 'Avg';
  /**
   * Success when the value compares so with the threshold.
   * @default none
   */
  readonly threshold?: ThresholdProps;
  /**
   * Success when the canary is not worse than the stable revision by more than this.
   * @default none
   */
  readonly compareToStable?: CompareToStableProps;
  /**
   * Successful samples in a row the metric needs to pass.
   * @default 3
   */
  readonly consecutiveSuccesses?: number;
  /**
   * An empty result or NaN. `Wait`: keep sampling. `Pass`: counts as a success. `Fail`: counts as a failure.
   * @default "Wait"
   */
  readonly noData?: 'Wait' | 'Pass' | 'Fail';
  /**
   * Failed samples tolerated: one more fails the analysis.
   * @default 0
   */
  readonly failureLimit?: number;
  /**
   * Errors in a row tolerated: one more makes the analysis Inconclusive.
   * @default 4
   */
  readonly errorLimit?: number;
  /**
   * With `noData` Wait: no-data samples in a row tolerated; one more makes the analysis Inconclusive.
   * @default none: wait until the progress deadline
   */
  readonly inconclusiveLimit?: number;
}
