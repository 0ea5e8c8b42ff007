// One by one: prom-client's index loads parts the agent never uses. Referenced here, so that every compilation that
// reaches this file (the build's, the bench's, an e2e suite's from cli/main.ts alone) has their types.
// eslint-disable-next-line @typescript-eslint/triple-slash-reference -- declarations of other modules: nothing to import
/// <reference path="./prom-client-modules.d.ts" />
import Counter from 'prom-client/lib/counter.js';
import collectDefaultMetrics from 'prom-client/lib/defaultMetrics.js';
import Gauge from 'prom-client/lib/gauge.js';
import Histogram from 'prom-client/lib/histogram.js';
import Registry from 'prom-client/lib/registry.js';
import type { Phase } from '../core/rollout/status.js';
import { sampleVerdicts, type SampleVerdict } from '../core/api/traffic.js';

/** Every rollout phase, so that the phases gauge shows zeros instead of missing series. */
const PHASES: readonly Phase[] = ['Progressing', 'Paused', 'WaitingForConfirmation', 'Healthy', 'Degraded'];

/** The agent's controllers, each with its own queue and workers: the `controller` label of their metrics. */
export const CONTROLLERS = ['extendeddeployment', 'deployregion'] as const;
/** One of {@link CONTROLLERS}. */
export type ControllerName = (typeof CONTROLLERS)[number];

/** What a status write changed: the `change` label of the status-write counter. */
export type StatusWriteChange = 'transition' | 'progress';

/**
 * How often the process metrics' event-loop delay histogram (`nodejs_eventloop_lag_p99_seconds` and the rest) takes a
 * sample, ms. Its timer wakes the process at that rate: at prom-client's default of 10 ms it took about 3.5 of the
 * 9.5 ms of CPU a second an idle agent used (a minute idle on the lab, two runs each way). Each sample is the time
 * between two ticks, so the figures read this interval plus the delay, as they read 10 ms plus it before.
 */
export const EVENT_LOOP_SAMPLE_MS = 50;

/** The agent's Prometheus metrics, on a registry of its own (several agents can run in one process, e.g. tests). */
export class AgentMetrics {
  readonly registry = new Registry();
  readonly reconcileDuration = new Histogram({
    name: 'extendeddeployment_agent_reconcile_duration_seconds',
    help: 'Time to reconcile one key, by controller (extendeddeployment, deployregion) and result (synced, error, invalid, blocked, gone, stale, fenced: cut off by a lost leadership).',
    labelNames: ['controller', 'result'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });
  readonly queueWait = new Histogram({
    name: 'extendeddeployment_agent_queue_wait_seconds',
    help: "Time a key waited in its controller's work queue, from the event (or requeue) that made it due until a worker took it.",
    labelNames: ['controller'] as const,
    // Up to minutes: with every ExtendedDeployment due at once, keys wait for the whole queue ahead of them.
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600],
    registers: [this.registry],
  });
  readonly actions = new Counter({
    name: 'extendeddeployment_agent_actions_total',
    help: 'Writes performed for rollouts, by kind (scale, markOld, unmark, deletePod).',
    labelNames: ['kind'] as const,
    registers: [this.registry],
  });
  readonly statusWrites = new Counter({
    name: 'extendeddeployment_agent_status_writes_total',
    help:
      'ExtendedDeployment status writes (a reconcile writes only when the status changed), by change: transition (a phase, group, ' +
      'condition or record, with the counts), progress (counts, overview or messages alone, paced).',
    labelNames: ['change'] as const,
    registers: [this.registry],
  });
  readonly movedReplicas = new Counter({
    name: 'extendeddeployment_agent_moved_replicas_total',
    help: 'Replicas moved away from their region (kind move) or given back to it (kind return), by reason (Shortage, Fault).',
    labelNames: ['kind', 'reason'] as const,
    registers: [this.registry],
  });
  readonly regionStatusWrites = new Counter({
    name: 'extendeddeployment_agent_region_status_writes_total',
    help: 'DeployRegion status writes (health and node counts).',
    registers: [this.registry],
  });
  readonly informerRestarts = new Counter({
    name: 'extendeddeployment_agent_informer_restarts_total',
    help: 'Informers restarted after an error, by resource.',
    labelNames: ['resource'] as const,
    registers: [this.registry],
  });
  readonly forbidden = new Counter({
    name: 'extendeddeployment_agent_forbidden_total',
    help: 'Requests the API server answered 403 Forbidden (RBAC), by verb (list, watch, create, patch, update) and resource[/subresource].',
    labelNames: ['verb', 'resource'] as const,
    registers: [this.registry],
  });
  readonly apiRequests = new Counter({
    name: 'extendeddeployment_agent_api_requests_total',
    help: 'Requests sent to the API server (counted by the client), by verb (GET, LIST, WATCH, POST, PUT, PATCH, DELETE) and resource[/subresource].',
    labelNames: ['verb', 'resource'] as const,
    registers: [this.registry],
  });
  readonly analysisSamples = new Counter({
    name: 'extendeddeployment_analysis_samples_total',
    help: 'Analysis samples recorded at group barriers (spec.strategy.traffic.analysis), by result: Success, Failure, NoData (an empty result or NaN), Error (Prometheus unreachable, a bad query, ±Inf).',
    labelNames: ['result'] as const,
    registers: [this.registry],
  });
  readonly leader = new Gauge({
    name: 'extendeddeployment_agent_leader',
    help: '1 while this agent is the leader (runs the rollouts), 0 while it is a standby.',
    registers: [this.registry],
  });
  private readonly phases = new Map<string, Phase>();

  /** `queueDepth` tells how many keys wait in a controller's queue (0 while it has none: a standby). */
  constructor(options: { queueDepth: (controller: ControllerName) => number; defaultMetrics?: boolean }) {
    new Gauge({
      name: 'extendeddeployment_agent_queue_depth',
      help: "Keys waiting in each controller's work queue.",
      labelNames: ['controller'] as const,
      registers: [this.registry],
      collect() {
        for (const controller of CONTROLLERS) this.set({ controller }, options.queueDepth(controller));
      },
    });
    const phases = this.phases;
    new Gauge({
      name: 'extendeddeployment_agent_rollouts',
      help: 'ExtendedDeployments by rollout phase, as last reconciled by this agent.',
      labelNames: ['phase'] as const,
      registers: [this.registry],
      collect() {
        for (const phase of PHASES) this.set({ phase }, [...phases.values()].filter((p) => p === phase).length);
      },
    });
    this.leader.set(0);
    // Every result from the start, so that a rate of failures is 0 rather than absent before the first one.
    for (const result of sampleVerdicts) this.analysisSamples.inc({ result }, 0);
    if (options.defaultMetrics) collectDefaultMetrics({ register: this.registry, eventLoopMonitoringPrecision: EVENT_LOOP_SAMPLE_MS });
  }

  /** Counts the analysis samples one reconcile recorded, by verdict. */
  countSamples(samples: readonly { readonly metric: string; readonly verdict: SampleVerdict }[]): void {
    for (const sample of samples) this.analysisSamples.inc({ result: sample.verdict });
  }

  /** Records the phase of one ExtendedDeployment (undefined when it is gone). */
  setPhase(key: string, phase: Phase | undefined): void {
    if (phase === undefined) this.phases.delete(key);
    else this.phases.set(key, phase);
  }
}
