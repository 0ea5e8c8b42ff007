import { AppsV1Api, CoordinationV1Api, CoreV1Api, CustomObjectsApi, type KubeConfig } from '@kubernetes/client-node';
import { performAction } from './actuators.js';
import { countingKubeConfig } from './api-requests.js';
import { realClock, type Clock } from './clock.js';
import { Controller } from './controller.js';
import { apiEventRecorder } from './events.js';
import { parseBindAddress, startHealthServer, type BindAddress } from './http-server.js';
import { makeInformers } from './informers.js';
import { edKey, regionKey } from './keys.js';
import { LeaderElector, leaderElectionTiming } from './leader-election.js';
import { keepAliveKubeConfig } from './keep-alive.js';
import { jsonLogger, type Logger } from './log.js';
import { AgentMetrics } from './metrics.js';
import { agentSettings, type AgentSettings } from './options.js';
import { Reconciler } from './reconciler.js';
import { replaceRegionStatus, replaceStatus } from './status-writer.js';
import { ClusterNodes } from './cluster-nodes.js';
import { hasMoves } from './snapshot.js';
import { WorkQueue } from './work-queue.js';

/** How long after a node or pod-usage change the ExtendedDeployments with replicas away are looked at again. */
const ROOM_CHANGE_DELAY_MS = 1_000;

/** How long a graceful stop waits for the reconciles in flight before it releases the lease anyway. */
const DRAIN_TIMEOUT_MS = 15_000;
/** How long a graceful stop waits for queued Events to be sent. */
const EVENT_FLUSH_TIMEOUT_MS = 5_000;

/** Everything `startAgent` needs. */
export interface AgentOptions extends Partial<AgentSettings> {
  readonly kubeConfig: KubeConfig;
  readonly log?: Logger;
  readonly clock?: Clock;
  /** Export Node.js process metrics too (the CLI does; in-process tests need not). */
  readonly processMetrics?: boolean;
}

/** A running agent. */
export interface Agent {
  /** Where /healthz, /readyz and /metrics are served. */
  readonly address: BindAddress;
  readonly settings: AgentSettings;
  /** Every informer synced. */
  ready(): boolean;
  isLeader(): boolean;
  /** Stops gracefully (see the order in the code); resolves when everything is stopped. Safe to call twice. */
  stop(): Promise<void>;
}

/**
 * Starts the agent: health server, informers (on every replica, so a standby's caches are warm), leader election,
 * and — only while leading — the work queue and its workers. The structure is sample-controller's: informer event
 * → key in a rate-limited queue → reconcile by key from the caches.
 */
export async function startAgent(options: AgentOptions): Promise<Agent> {
  const settings = agentSettings(options);
  const clock = options.clock ?? realClock;
  const log = options.log ?? jsonLogger();
  let queue: WorkQueue | undefined;
  let workers: Promise<void> | undefined;
  let working = false;
  const metrics = new AgentMetrics({ queueDepth: () => queue?.len() ?? 0, defaultMetrics: options.processMetrics ?? false });
  // Every request the agent sends is counted (extendeddeployment_agent_api_requests_total), watches per informer;
  // requests reuse kept-alive TLS connections instead of client-node's new connection per request.
  const countRequest = (verb: string, resource: string) => metrics.apiRequests.inc({ verb, resource });
  const kc = countingKubeConfig(keepAliveKubeConfig(options.kubeConfig), countRequest);
  const core = kc.makeApiClient(CoreV1Api);
  const apps = kc.makeApiClient(AppsV1Api);
  const custom = kc.makeApiClient(CustomObjectsApi);

  // Handlers run on every replica; only the leader has a queue, and a standby simply drops the keys.
  let cluster: ClusterNodes | undefined;
  // Room freed by other pods or nodes announces nothing to an ExtendedDeployment: those with replicas away are looked
  // at again shortly after (a second, coalescing bursts), so a return is not held back until their next poll.
  const nodesChanged = () => {
    cluster?.changed();
    const q = queue;
    if (!q) return;
    for (const ed of informers.caches.extendedDeployments.list()) {
      const key = edKey(ed);
      if (key && hasMoves(ed)) q.addAfter(key, ROOM_CHANGE_DELAY_MS);
    }
  };
  const informers = makeInformers(kc, {
    onNodeEvent: nodesChanged,
    onUsageEvent: nodesChanged,
    namespace: settings.namespace,
    clock,
    log,
    enqueue: (key) => queue?.add(key),
    onRestart: (resource) => metrics.informerRestarts.inc({ resource }),
    watchKubeConfig: (resource) => countingKubeConfig(options.kubeConfig, countRequest, resource),
  });
  cluster = new ClusterNodes(informers.caches.nodes, informers.caches.usage);
  const recorder = apiEventRecorder(core, settings.identity, log, { clock });
  const reconciler = new Reconciler({
    caches: informers.caches,
    clock,
    log,
    metrics,
    cluster,
    ports: {
      performAction: (namespace, kind, action) => performAction({ core, apps }, namespace, kind, action),
      writeStatus: (ed, status) => replaceStatus(custom, ed, status),
      recordEvent: (object, event) => recorder.record(object, event),
      writeRegionStatus: (region, status) => replaceRegionStatus(custom, region, status),
    },
  });
  const controller = new Controller(reconciler, log, metrics);
  const unsynced = () => informers.all.filter((i) => !i.synced()).map((i) => i.resource);

  const server = await startHealthServer(
    parseBindAddress(settings.metricsBindAddress),
    { notReady: () => (unsynced().length > 0 ? `informers not synced: ${unsynced().join(', ')}` : undefined) },
    metrics.registry,
    log,
  );
  for (const informer of informers.all) informer.start();

  const startLeading = () => {
    metrics.leader.set(1);
    const q = new WorkQueue({ clock, onWait: (ms) => metrics.queueWait.observe(ms / 1000) });
    queue = q;
    const previous = workers;
    workers = (async () => {
      // Leadership regained: the last term's reconciles in flight finish first, so no key is ever processed twice at once.
      await previous;
      // sample-controller's WaitForCacheSync: never plan on a partial cache (a missing pod looks like a pod to create).
      while (unsynced().length > 0 && !q.shuttingDown()) await new Promise<void>((resolve) => clock.setTimer(100, resolve));
      if (q.shuttingDown()) return;
      for (const ed of informers.caches.extendedDeployments.list()) {
        const key = edKey(ed);
        if (key) q.add(key);
      }
      for (const region of informers.caches.deployRegions.list()) if (region.metadata?.name) q.add(regionKey(region.metadata.name));
      log.info('workers started', { workers: settings.workers });
      working = true;
      await controller.run(q, settings.workers);
    })();
  };
  const stopLeading = () => {
    metrics.leader.set(0);
    // Another agent leads now: drop what is queued, let the reconciles in flight finish.
    queue?.shutDown(true);
    queue = undefined;
    working = false;
  };

  const elector = settings.leaderElect
    ? new LeaderElector(
        kc.makeApiClient(CoordinationV1Api),
        { namespace: settings.leaseNamespace, name: settings.leaseName, identity: settings.identity, ...leaderElectionTiming(settings.leaseDurationSeconds) },
        { clock, log, onStartedLeading: startLeading, onStoppedLeading: stopLeading },
      )
    : undefined;
  log.info('agent started', {
    identity: settings.identity,
    namespace: settings.namespace ?? '(all)',
    leaderElection: settings.leaderElect ? `${settings.leaseNamespace}/${settings.leaseName} (${settings.leaseDurationSeconds}s)` : 'off',
    workers: settings.workers,
  });
  if (elector) elector.start();
  else startLeading();

  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      log.info('shutting down');
      // 1. No more renewals or takeovers; the lease stays ours while the last reconciles finish, so a standby cannot
      //    act on the same objects at the same time.
      await elector?.stop();
      // 2. Drain: hand out what is queued, wait for the workers (bounded, so a hung call cannot block shutdown).
      const q = queue;
      queue = undefined;
      if (q && !working) q.shutDown(true); // no worker ever started: nothing is in flight
      else if (q) {
        const drained = q.shutDownWithDrain().then(() => workers);
        const timedOut = await Promise.race([drained.then(() => false), new Promise<boolean>((resolve) => clock.setTimer(DRAIN_TIMEOUT_MS, () => resolve(true)))]);
        if (timedOut) {
          log.warn('reconciles still running after the drain timeout; stopping anyway', { timeoutMs: DRAIN_TIMEOUT_MS });
          q.shutDown(true);
        }
      }
      metrics.leader.set(0);
      await recorder.flush(EVENT_FLUSH_TIMEOUT_MS);
      // 3. Release the lease: a standby takes over at its next try instead of after the lease expires.
      await elector?.release();
      // 4. Stop watching, then close the endpoints.
      await Promise.all([...informers.all, informers.caches.usage].map((i) => i.stop()));
      await server.close();
      log.info('stopped');
    })());

  return {
    address: server.address,
    settings,
    ready: () => unsynced().length === 0,
    isLeader: () => (elector ? elector.isLeader() : true),
    stop,
  };
}
