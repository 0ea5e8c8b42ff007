import { AppsV1Api, CoordinationV1Api, CoreV1Api, CustomObjectsApi, makeApiClient } from './runtime/kube-client.js';
import type { KubeAccess } from './runtime/kube-config.js';
import { performAction, performHistoryAction } from './actuators.js';
import { fetchAdoptionObjects } from './adoption.js';
import { countingKubeConfig } from './runtime/api-requests.js';
import { transportKubeConfig } from './runtime/api-transport.js';
import { realClock, type Clock } from './runtime/clock.js';
import { Controller } from './runtime/controller.js';
import { apiEventRecorder } from './events.js';
import { startAgentEndpoints } from './endpoints.js';
import type { BindAddress } from './runtime/http-server.js';
import { forbiddenReads, makeInformers, stuckInformers } from './informers.js';
import { FIELD_MANAGER } from './field-manager.js';
import { edKey, regionKey, type EdKey, type RegionKey } from './keys.js';
import { LeaderElector, leaderElectionTiming, type LostLeadership } from './runtime/leader-election.js';
import { keepAliveKubeConfig } from './runtime/keep-alive.js';
import { jsonLogger, type Logger } from './runtime/log.js';
import { AgentMetrics } from './metrics.js';
import { agentSettings, type AgentSettings } from './options.js';
import { Reconciler } from './reconciler.js';
import { OwnWrites } from './own-writes.js';
import { RegionStatusReconciler } from './region-status-reconciler.js';
import { replaceRegionStatus, replaceStatus } from './status-writer.js';
import { ClusterNodes } from './cluster-nodes.js';
import { ServerClock } from './runtime/server-clock.js';
import { hasMoves } from '../core/observe/observe.js';
import { WorkQueue } from './runtime/work-queue.js';
import { ownedEventBatchMs, wakeAtAvailability } from './event-batching.js';
import { FleetPeers } from './fleet-peers.js';
import { ANALYSIS_QUERY_CONCURRENCY, queryAll } from './prometheus.js';
import { ED_KIND } from '../core/api/identity.js';
import type { ExtendedDeploymentObject } from '../core/kube/objects.js';

/** How long after a node or pod-usage change the ExtendedDeployments with replicas away are looked at again. */
const ROOM_CHANGE_DELAY_MS = 1_000;

/**
 * Workers writing DeployRegion statuses: DeployRegions are few, and a reconcile writes only when a region's health
 * changed.
 */
const REGION_WORKERS = 2;

/** How long a graceful stop waits for the reconciles in flight before it releases the lease anyway. */
const DRAIN_TIMEOUT_MS = 15_000;
/** How long a graceful stop waits for queued Events to be sent. */
const EVENT_FLUSH_TIMEOUT_MS = 5_000;
/**
 * Every API request (not watches) is aborted after this long: a connection that died without a close would otherwise
 * hang its caller for the kernel's retransmission timeout (about 15 minutes). A minute leaves room for a LIST of every
 * pod in a large cluster.
 */
const REQUEST_TIMEOUT_MS = 60_000;

/** Everything `startAgent` needs. */
export interface AgentOptions extends Partial<AgentSettings> {
  readonly kubeConfig: KubeAccess;
  readonly log?: Logger;
  readonly clock?: Clock;
  /** Export Node.js process metrics too (the CLI does; in-process tests need not). */
  readonly processMetrics?: boolean;
}

/** Why a running agent ended by itself (a process exits non-zero on it, and its Deployment starts it again). */
export interface AgentFailure {
  readonly reason: 'LostLeadership' | 'CacheSyncTimeout';
  readonly message: string;
}

/** A running agent. */
export interface Agent {
  /** Where /metrics is served. */
  readonly address: BindAddress;
  /** Where /healthz, /livez and /readyz are served. */
  readonly healthAddress: BindAddress;
  readonly settings: AgentSettings;
  /** Every informer synced. */
  ready(): boolean;
  isLeader(): boolean;
  /** Stops gracefully (see the order in the code); resolves when everything is stopped. Safe to call twice. */
  stop(): Promise<void>;
  /**
   * Resolves when the agent stopped by itself: it lost leadership (every reconcile is cut off at its next write) or
   * its caches did not sync in time. Everything is stopped by then; the lease was not released.
   */
  readonly failed: Promise<AgentFailure>;
}

/**
 * Starts the agent: health server, informers (on every replica, so a standby's caches are warm), leader election,
 * and — only while leading — two controllers, each with its own work queue and workers: ExtendedDeployments, and
 * DeployRegion statuses. The structure is sample-controller's: informer event → key in a rate-limited queue →
 * reconcile by key from the caches.
 */
export async function startAgent(options: AgentOptions): Promise<Agent> {
  const settings = agentSettings(options);
  // Times the agent writes down are read back by the next leader: they are the API server's, not this host's.
  const serverClock = new ServerClock(options.clock ?? realClock);
  const clock: Clock = serverClock;
  const log = options.log ?? jsonLogger();
  // This leadership term's queues, one per controller: created, shut down and drained together.
  let term: { readonly eds: WorkQueue<EdKey>; readonly regions: WorkQueue<RegionKey> } | undefined;
  let workers: Promise<void> | undefined;
  let working = false;
  const metrics = new AgentMetrics({
    queueDepth: (controller) => (controller === 'extendeddeployment' ? term?.eds : term?.regions)?.len() ?? 0,
    defaultMetrics: options.processMetrics ?? false,
  });
  // Every request the agent sends is counted (extendeddeployment_agent_api_requests_total), watches per informer;
  // requests are streams of one HTTP/2 connection and watches of another (kept-alive HTTP/1.1 connections where the
  // server has no HTTP/2) instead of client-node's new connection per request.
  const countRequest = (verb: string, resource: string) => metrics.apiRequests.inc({ verb, resource });
  // Every request times out and reports the server's clock; writes other than the Lease's pass the leadership fence.
  let elector: LeaderElector | undefined;
  let fenceClosed = false;
  const pooled = keepAliveKubeConfig(options.kubeConfig);
  const transport = { clock, userAgent: `extended-deployment-agent (${settings.identity})`, onResponse: serverClock.observe };
  const kc = countingKubeConfig(
    transportKubeConfig(pooled, { ...transport, timeoutMs: REQUEST_TIMEOUT_MS, mayWrite: () => !fenceClosed && (elector ? elector.mayWrite() : true) }),
    countRequest,
  );
  const core = makeApiClient(kc, CoreV1Api);
  const apps = makeApiClient(kc, AppsV1Api);
  const custom = makeApiClient(kc, CustomObjectsApi);

  // Handlers run on every replica; only the leader has queues, and a standby simply drops the keys.
  let cluster: ClusterNodes | undefined;
  // Room freed by other pods or nodes announces nothing to an ExtendedDeployment: those with replicas away are looked
  // at again shortly after (a second, coalescing bursts), so a return is not held back until their next poll.
  const nodesChanged = () => {
    cluster?.changed();
    const q = term?.eds;
    if (!q) return;
    for (const ed of informers.caches.extendedDeployments.list()) {
      const key = edKey(ed);
      if (key && hasMoves(ed)) q.addAfter(key, ROOM_CHANGE_DELAY_MS);
    }
  };
  // Shared by the reconciler, which records its writes, and the informers, which drop the echo of a status write.
  const ownWrites = new OwnWrites();
  const informers = makeInformers(kc, {
    isOwnStatusAnswer: (ed) => {
      const key = edKey(ed);
      return key !== undefined && ownWrites.isAnswer(key, ED_KIND, ed);
    },
    isStandingMarkEcho: (pod, previous) => reconciler.isStandingMarkEcho(pod, previous),
    onNodeEvent: nodesChanged,
    onUsageEvent: nodesChanged,
    namespaces: settings.namespaces,
    clock,
    log,
    enqueue: (key) => term?.eds.add(key),
    enqueueOwned: (key) => term?.eds.addBatched(key, ownedEventBatchMs(reconciler.awaitingSince(key), clock.now())),
    enqueueAt: (key, at) => {
      if (term) wakeAtAvailability(term.eds, key, at);
    },
    enqueueRegion: (key) => term?.regions.add(key),
    onRestart: (resource) => metrics.informerRestarts.inc({ resource }),
    onForbidden: (verb, resource) => metrics.forbidden.inc({ verb, resource }),
    watchKubeConfig: (resource) => countingKubeConfig(pooled, countRequest, resource),
  });
  cluster = new ClusterNodes(informers.caches.nodes, informers.caches.usage);
  // The other members of this agent's fleets, read only; a change of a peer wakes the fleet members it can concern.
  const inFleet = (ed: ExtendedDeploymentObject) => (ed.spec as { fleet?: unknown } | undefined)?.fleet !== undefined;
  const peers =
    settings.clusterName !== undefined && settings.peerKubeconfigDir !== undefined
      ? new FleetPeers({
          dir: settings.peerKubeconfigDir,
          self: settings.clusterName,
          leaseNamespace: settings.leaseNamespace,
          leaseName: settings.leaseName,
          clock,
          log,
          userAgent: transport.userAgent,
          onChange: (_cluster, changed) => {
            const q = term?.eds;
            if (!q) return;
            const candidates = changed
              ? [informers.caches.extendedDeployments.get(changed.name, changed.namespace)].filter((ed) => ed !== undefined)
              : informers.caches.extendedDeployments.list();
            for (const ed of candidates) {
              const key = edKey(ed);
              if (key && inFleet(ed)) q.add(key);
            }
          },
        })
      : undefined;
  const recorder = apiEventRecorder(core, settings.identity, log, { clock });
  const reconciler = new Reconciler({
    ownWrites,
    wake: (key) => term?.eds.add(key),
    caches: informers.caches,
    clock,
    log,
    metrics,
    cluster,
    forbiddenReads: () => forbiddenReads(informers),
    fleet: { clusterName: settings.clusterName, peers, peerDir: settings.peerKubeconfigDir },
    ports: {
      performAction: (namespace, kind, action) => performAction({ core, apps, custom, now: () => clock.now() }, namespace, kind, action),
      performHistoryAction: (namespace, action) => performHistoryAction(apps, namespace, action),
      writeStatus: (ed, status) => replaceStatus(custom, ed, status),
      fetchAdoptionObjects: (namespace, sources) => fetchAdoptionObjects({ core, apps, custom }, namespace, sources),
      recordEvent: (ed, event) => recorder.record(ed, event),
      // Prometheus is no API server: plain fetch, outside the leadership fence (a query writes nothing).
      queryAnalysis: (queries) => queryAll(queries, ANALYSIS_QUERY_CONCURRENCY, () => clock.now()),
    },
  });
  const regionReconciler = new RegionStatusReconciler({
    caches: informers.caches,
    clock,
    log,
    metrics,
    cluster,
    ports: {
      writeRegionStatus: (region, status) => replaceRegionStatus(custom, region, status),
      recordEvent: (region, event) => recorder.record(region, event),
    },
  });
  const { reconcileDuration } = metrics;
  const edController = new Controller(reconciler, log, { name: 'extendeddeployment', keyField: 'ed', reconcileDuration });
  const regionController = new Controller(regionReconciler, log, { name: 'deployregion', keyField: 'region', reconcileDuration });
  const unsynced = () => informers.all.filter((i) => !i.synced()).map((i) => i.resource);

  const server = await startAgentEndpoints(settings, {
    // Scrapers are reviewed on standbys too: TokenReviews are no rollout writes, so they bypass the leadership fence.
    kc: countingKubeConfig(transportKubeConfig(pooled, { ...transport, timeoutMs: REQUEST_TIMEOUT_MS }), countRequest),
    health: {
      notReady: () => (unsynced().length > 0 ? `informers not synced: ${unsynced().join(', ')}` : undefined),
      notLive: () => stuckInformers(informers),
    },
    registry: metrics.registry,
    clock,
    log,
  });
  for (const informer of [...informers.all, ...informers.besides]) informer.start();
  peers?.start();

  const startLeading = () => {
    metrics.leader.set(1);
    const eds = new WorkQueue<EdKey>({ clock, onWait: (ms) => metrics.queueWait.observe({ controller: 'extendeddeployment' }, ms / 1000) });
    const regions = new WorkQueue<RegionKey>({ clock, onWait: (ms) => metrics.queueWait.observe({ controller: 'deployregion' }, ms / 1000) });
    term = { eds, regions };
    const previous = workers;
    workers = (async () => {
      // Leadership regained: the last term's reconciles in flight finish first, so no key is ever processed twice at once.
      await previous;
      // sample-controller's WaitForCacheSync: never plan on a partial cache (a missing pod looks like a pod to create).
      while (unsynced().length > 0 && !eds.shuttingDown()) await new Promise<void>((resolve) => clock.setTimer(100, resolve));
      if (eds.shuttingDown()) return;
      for (const ed of informers.caches.extendedDeployments.list()) {
        const key = edKey(ed);
        if (key) eds.add(key);
      }
      for (const region of informers.caches.deployRegions.list()) if (region.metadata?.name) regions.add(regionKey(region.metadata.name));
      log.info('workers started', { workers: settings.workers, regionWorkers: REGION_WORKERS });
      working = true;
      await Promise.all([edController.run(eds, settings.workers), regionController.run(regions, REGION_WORKERS)]);
    })();
  };
  const stopLeading = () => {
    metrics.leader.set(0);
    // Another agent leads now: drop what is queued, let the reconciles in flight finish.
    term?.eds.shutDown(true);
    term?.regions.shutDown(true);
    term = undefined;
    working = false;
    void reconciler.stopStandingMarks();
  };

  let fail: (failure: AgentFailure) => void = () => undefined;
  const failed = new Promise<AgentFailure>((resolve) => (fail = resolve));
  const timing = leaderElectionTiming(settings.leaseDurationSeconds);
  elector = settings.leaderElect
    ? new LeaderElector(
        // The Lease's own client: unfenced (it is how the fence opens), and timed out within one try.
        makeApiClient(countingKubeConfig(transportKubeConfig(pooled, { ...transport, timeoutMs: timing.attemptTimeoutMs }), countRequest), CoordinationV1Api),
        { namespace: settings.leaseNamespace, name: settings.leaseName, identity: settings.identity, fieldManager: FIELD_MANAGER, ...timing },
        {
          clock,
          log,
          onStartedLeading: startLeading,
          onStoppedLeading: (lost: LostLeadership) => {
            stopLeading();
            void shutDown({ release: false }).then(() => fail({ reason: 'LostLeadership', message: `lost leadership: ${lost.reason}` }));
          },
        },
      )
    : undefined;
  log.info('agent started', {
    identity: settings.identity,
    namespaces: settings.namespaces?.join(',') ?? '(all)',
    leaderElection: settings.leaderElect ? `${settings.leaseNamespace}/${settings.leaseName} (${settings.leaseDurationSeconds}s)` : 'off',
    workers: settings.workers,
  });
  if (elector) elector.start();
  else startLeading();
  // controller-runtime's CacheSyncTimeout: caches that never sync (a 403 on a list, a CRD missing) end the process
  // with a clear log, a visible crash loop, instead of a replica that looks alive and does nothing.
  const cacheSyncTimer = clock.setTimer(settings.cacheSyncTimeoutSeconds * 1000, () => {
    const missing = unsynced();
    if (missing.length === 0) return;
    const message = `caches did not sync within ${settings.cacheSyncTimeoutSeconds}s: ${missing.join(', ')} (see the informers' warnings for the API errors)`;
    log.error(message);
    void shutDown({ release: false }).then(() => fail({ reason: 'CacheSyncTimeout', message }));
  });

  let stopping: Promise<void> | undefined;
  const shutDown = ({ release }: { release: boolean }) =>
    (stopping ??= (async () => {
      log.info('shutting down');
      cacheSyncTimer();
      // 1. No more renewals or takeovers; the lease stays ours while the last reconciles finish, so a standby cannot
      //    act on the same objects at the same time.
      await elector?.stop();
      // 2. Drain both queues: hand out what is queued, wait for the workers (bounded, so a hung call cannot block
      //    shutdown).
      const queues = term ? [term.eds, term.regions] : [];
      term = undefined;
      let drained = true;
      if (!working)
        for (const q of queues) q.shutDown(true); // no worker ever started: nothing is in flight
      else if (queues.length > 0) {
        // The standing marks the drained reconciles leave queued are dropped: the next leader's looks plan them again.
        const done = Promise.all(queues.map((q) => q.shutDownWithDrain()))
          .then(() => workers)
          .then(() => reconciler.stopStandingMarks());
        drained = await Promise.race([done.then(() => true), new Promise<boolean>((resolve) => clock.setTimer(DRAIN_TIMEOUT_MS, () => resolve(false)))]);
        if (!drained) {
          log.warn('reconciles still running after the drain timeout; stopping anyway and keeping the lease until it expires', { timeoutMs: DRAIN_TIMEOUT_MS });
          for (const q of queues) q.shutDown(true);
        }
      }
      metrics.leader.set(0);
      await recorder.flush(EVENT_FLUSH_TIMEOUT_MS);
      // Nothing more is written; a reconcile still hanging on a request is refused at its next write.
      fenceClosed = true;
      // 3. Release the lease, only when nothing of ours can still be in flight: a standby takes over at its next try
      //    instead of after the lease expires.
      if (release && drained) await elector?.release();
      // 4. Stop watching, then close the endpoints.
      await Promise.all([...informers.all, ...informers.besides, informers.caches.usage, ...(peers ? [peers] : [])].map((i) => i.stop()));
      await server.close();
      log.info('stopped');
    })());

  return {
    address: server.metrics,
    healthAddress: server.health,
    settings,
    ready: () => unsynced().length === 0,
    isLeader: () => (elector ? elector.isLeader() : !fenceClosed),
    stop: () => shutDown({ release: true }),
    failed,
  };
}
