import type {
  KubernetesListObject,
  KubernetesObject,
  V1Container,
  V1ContainerStatus,
  V1ControllerRevision,
  V1Deployment,
  V1StatefulSet,
  V1Node,
  V1ObjectMeta,
  V1Pod,
  V1PodCondition,
  V1ReplicaSet,
  V1Service,
} from '@kubernetes/client-node';
import { AppsV1Api, CoreV1Api, CustomObjectsApi, GroupDiscoveryApi, makeApiClient } from './runtime/kube-client.js';
import type { KubeAccess } from './runtime/kube-config.js';
import { API_GROUP, ED_PLURAL, REGION_PLURAL, VERSION } from '../core/api/identity.js';
import { IN_PLACE_READINESS_GATE, NAME_LABEL } from '../core/labels.js';
import type { Clock } from './runtime/clock.js';
import type { ApiRead } from '../core/kube/api-writes.js';
import {
  ResilientInformer,
  type CacheReader,
  type IndexedCacheReader,
  type InformerEvent,
  type InformerFactory,
  type RunningInformer,
} from './runtime/informer.js';
import { NamespacedInformer } from './runtime/namespaced-informer.js';
import { podAvailableAt } from '../core/observe/pod-available.js';
import { replicaSetReads } from '../core/observe/replicaset-reads.js';
import { USAGE_FIELD_SELECTOR, usagePod, type UsagePod } from './cluster-nodes.js';
import { edKey, keysSharingWorkloadNames, keysUsingRegion, ownerKey, regionKey, trafficKeys, workloadNameIndex, type EdKey, type RegionKey } from './keys.js';
import type { Logger } from './runtime/log.js';
import { slimInformer, transformingInformer, withoutManagedFields } from './runtime/slim-informer.js';
import { StringPool } from './runtime/string-pool.js';
import { splitKey, type DeployRegionObject, type ExtendedDeploymentObject } from '../core/kube/objects.js';
import type { ObservedRoute } from '../core/traffic/objects.js';
import { HTTPROUTE_RESOURCE } from './traffic-actuator.js';
import { resourceServed, ServedInformer } from './served-informer.js';

/** An HTTPRoute as the agent caches it (core/traffic/objects.ts ObservedRoute). */
export type CachedRoute = ObservedRoute & KubernetesObject;

/** A cache of traffic objects as the reconciler reads it: the objects, and whether they can be trusted. */
export type TrafficCache<T> = CacheReader<T> & Pick<RunningInformer<T>, 'resource' | 'synced' | 'forbidden'>;

/**
 * The caches of traffic shifting (spec.strategy.traffic, issue #22): every Service of the watched namespaces (the
 * agent's revision Services, and any other of a name in their way), and the HTTPRoutes, watched only while the API
 * server serves gateway.networking.k8s.io/v1 httproutes. Neither is waited for at start: a cluster without the Gateway
 * API, or an agent whose role does not grant them, still rolls out everything else.
 */
export interface TrafficCaches {
  readonly services: TrafficCache<V1Service>;
  readonly routes: TrafficCache<CachedRoute>;
  /** The HTTPRoute API is served and its cache complete (core: TrafficObservation.routesServed). */
  routesServed(): boolean;
}

const LAST_APPLIED_ANNOTATION = 'kubectl.kubernetes.io/last-applied-configuration';

/** Metadata as the traffic caches keep it: without managedFields and kubectl's copy of the whole object. */
function slimMetadata<M extends { managedFields?: unknown; annotations?: Record<string, string> }>(metadata: M | undefined): M | undefined {
  if (metadata === undefined) return undefined;
  const { managedFields: _managed, ...rest } = metadata;
  const annotations = rest.annotations;
  if (annotations === undefined || !(LAST_APPLIED_ANNOTATION in annotations)) return rest as M;
  const { [LAST_APPLIED_ANNOTATION]: _applied, ...kept } = annotations;
  return { ...rest, annotations: kept } as M;
}

/**
 * A Service as the traffic cache keeps it: what core/traffic reads (metadata, spec.selector, spec.ports), not its
 * status, cluster IPs or session settings. Every Service of a namespace is cached, so each is kept small.
 */
export function slimService(service: V1Service): V1Service {
  const spec = service.spec;
  return {
    ...(service.apiVersion !== undefined && { apiVersion: service.apiVersion }),
    ...(service.kind !== undefined && { kind: service.kind }),
    ...(service.metadata !== undefined && { metadata: slimMetadata(service.metadata) }),
    ...(spec !== undefined && {
      spec: { ...(spec.selector !== undefined && { selector: spec.selector }), ...(spec.ports !== undefined && { ports: spec.ports }) },
    }),
  };
}

/**
 * The strings cached objects repeat: of pods their namespace, generateName, label values, owner, container names and
 * images, node, phase and condition words (not names, uids, versions or times, which each pod has of its own), and of
 * workloads and ExtendedDeployments their metadata's and their spec's (pooledWorkload), which their pods and other
 * revisions and regions repeat. A few per ExtendedDeployment, region and node, so 16,384 hold those of thousands of each.
 */
const podStrings = new StringPool(16_384);

/** The pod conditions the agent reads (core/observe readPodState). */
const READ_CONDITIONS: ReadonlySet<string> = new Set(['Ready', 'PodScheduled', IN_PLACE_READINESS_GATE]);

/**
 * A pod as the agent caches it. A pod with the in-place readiness gate is kept whole (but managedFields): whether a
 * swap can reach the template compares its whole spec (core/inplace/eligibility.ts). Any other pod keeps what the
 * agent reads of it (core/observe: podState, initTrouble; ownership and marks): its metadata, and of its spec the node,
 * the readiness gates and its containers' and init containers' names and images, and of its status the phase, the
 * Ready, PodScheduled and in-place gate conditions and the container states (not their images: only a swap reads
 * them). Volumes, tolerations, the containers' resources, env and ports, the IPs and the other conditions go, and the
 * strings sibling pods repeat are shared (podStrings). The agent caches every pod of every ExtendedDeployment, and each
 * change of one leaves the old copy behind until a full collection, so what it keeps sets its heap at scale
 * (bench:peers, 200 rollouts at once, holds 2,000–4,000 pods): a pod of it takes 1.8 KiB so, 3.1 KiB with every
 * condition and status image and its own copies, 4.6 KiB whole. A pod without the gate never gets one by a change the
 * agent sees (gates are fixed at creation), and a swap needs it.
 */
export function slimPod(pod: V1Pod): V1Pod {
  const metadata = withoutManagedFields(pod).metadata;
  const spec = pod.spec;
  if (spec?.readinessGates?.some((g) => g.conditionType === IN_PLACE_READINESS_GATE)) return pod;
  const pooled = podStrings.intern.bind(podStrings);
  if (metadata) pooledMetadata(metadata, pooled);
  const container = ({ name, image }: V1Container): V1Container => ({ name: pooled(name), ...(image !== undefined && { image: pooled(image) }) });
  const condition = ({ type, status, reason, ...rest }: V1PodCondition): V1PodCondition => ({
    ...rest,
    type: pooled(type),
    status: pooled(status),
    ...(reason !== undefined && { reason: pooled(reason) }),
  });
  // Without image and imageID, which the type requires: nothing reads them of a pod without the gate.
  const state = ({ name, containerID, restartCount, ready, state }: V1ContainerStatus): V1ContainerStatus =>
    ({
      name: pooled(name),
      restartCount,
      ready,
      ...(containerID !== undefined && { containerID }),
      ...(state !== undefined && { state }),
    }) as V1ContainerStatus;
  const status = pod.status;
  return {
    ...(pod.apiVersion !== undefined && { apiVersion: pod.apiVersion }),
    ...(pod.kind !== undefined && { kind: pod.kind }),
    ...(metadata !== undefined && { metadata }),
    ...(spec !== undefined && {
      spec: {
        containers: (spec.containers ?? []).map(container),
        ...(spec.initContainers && { initContainers: spec.initContainers.map(container) }),
        ...(spec.nodeName !== undefined && { nodeName: pooled(spec.nodeName) }),
        ...(spec.readinessGates !== undefined && { readinessGates: spec.readinessGates }),
      },
    }),
    ...(status !== undefined && {
      status: {
        ...(status.phase !== undefined && { phase: pooled(status.phase) }),
        ...(status.conditions !== undefined && { conditions: status.conditions.filter((c) => READ_CONDITIONS.has(c.type)).map(condition) }),
        ...(status.containerStatuses && { containerStatuses: status.containerStatuses.map(state) }),
        ...(status.initContainerStatuses && { initContainerStatuses: status.initContainerStatuses.map(state) }),
      },
    }),
  };
}

/** Replaces the strings of a pod's metadata that its siblings repeat with the pool's copies (see podStrings). */
function pooledMetadata(metadata: V1ObjectMeta, pooled: <T>(value: T) => T): void {
  if (metadata.namespace !== undefined) metadata.namespace = pooled(metadata.namespace);
  if (metadata.generateName !== undefined) metadata.generateName = pooled(metadata.generateName);
  const labels = metadata.labels;
  if (labels) for (const key of Object.keys(labels)) labels[key] = pooled(labels[key]!);
  for (const owner of metadata.ownerReferences ?? []) {
    owner.apiVersion = pooled(owner.apiVersion);
    owner.kind = pooled(owner.kind);
    owner.name = pooled(owner.name);
    owner.uid = pooled(owner.uid);
  }
}

/**
 * A regional workload (ReplicaSet, Deployment, StatefulSet) or an ExtendedDeployment as the agent caches it: whole but
 * for managedFields, with the strings of its metadata and its spec shared through the pods' pool (podStrings). Each
 * revision's and region's workload repeats its template's labels, images, names and settings, and its pods repeat
 * them again: before, the idle agent of bench:memory (200 ExtendedDeployments × 3 regions) held 1.8 MB of second copies
 * of them. Its status is its own (counts, times, messages) and is left as it came.
 */
export function pooledWorkload<T extends KubernetesObject & { spec?: unknown }>(object: T): T {
  const slim = withoutManagedFields(object);
  const pooled = podStrings.intern.bind(podStrings);
  if (slim.metadata) pooledMetadata(slim.metadata, pooled);
  if (slim.spec !== undefined) slim.spec = pooledTree(slim.spec, pooled);
  return slim;
}

/** `value` with each string in it the pool's copy; its objects and arrays are changed in place. */
function pooledTree(value: unknown, pooled: <T>(value: T) => T): unknown {
  if (typeof value === 'string') return pooled(value);
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) value[i] = pooledTree(value[i], pooled);
  } else if (value !== null && typeof value === 'object') {
    const record = value as Record<string, unknown>;
    for (const key of Object.keys(record)) record[key] = pooledTree(record[key], pooled);
  }
  return value;
}

/** An HTTPRoute as the traffic cache keeps it: all of it (spec and status are read) but managedFields and kubectl's copy. */
export function slimRoute(route: CachedRoute): CachedRoute {
  return route.metadata === undefined ? route : { ...route, metadata: slimMetadata(route.metadata) };
}

/**
 * The caches the reconcilers read. Regional workloads and pods are indexed by the key of the ExtendedDeployment they
 * belong to ({@link ownerKey}), so a reconcile reads its own objects without scanning the others.
 */
export interface AgentCaches {
  /** Indexed by {@link workloadNameIndex}. */
  readonly extendedDeployments: IndexedCacheReader<ExtendedDeploymentObject & KubernetesObject>;
  readonly deployRegions: CacheReader<DeployRegionObject & KubernetesObject>;
  readonly replicaSets: IndexedCacheReader<V1ReplicaSet>;
  readonly deployments: IndexedCacheReader<V1Deployment>;
  readonly statefulSets: IndexedCacheReader<V1StatefulSet>;
  readonly pods: IndexedCacheReader<V1Pod>;
  /**
   * The ControllerRevisions labelled with an ExtendedDeployment's name: its history (core/history/). Read only once
   * synced: a partial history would number a revision wrongly.
   */
  readonly controllerRevisions: IndexedCacheReader<V1ControllerRevision> & { synced(): boolean };
  readonly nodes: CacheReader<V1Node>;
  /** Every pod bound to a node, reduced to its requests; started only when capacity is needed (see ClusterNodes). */
  readonly usage: ResilientInformer<UsagePod>;
  /** Services and HTTPRoutes, read for ExtendedDeployments with spec.strategy.traffic only. */
  readonly traffic: TrafficCaches;
}

/** Every informer of the agent, and their caches. */
export interface AgentInformers {
  readonly caches: AgentCaches;
  /** The informers the agent waits for before it reconciles (readiness, and the cache sync timeout). */
  readonly all: readonly RunningInformer<KubernetesObject>[];
  /**
   * Started and stopped with `all`, but not waited for: the history's (ControllerRevisions), which no rollout needs,
   * and traffic's (Services, HTTPRoutes: see TrafficCaches), which only ExtendedDeployments with a traffic strategy
   * read. An agent whose role lacks them (its RBAC not yet updated) still rolls out, records no history, and counts the
   * forbidden lists (extendeddeployment_agent_forbidden_total); an ExtendedDeployment whose traffic needs a forbidden
   * read reports it (reconciler.ts).
   */
  readonly besides: readonly RunningInformer<KubernetesObject>[];
}

/**
 * Builds the agent's informers: ExtendedDeployments, DeployRegions (cluster-scoped), the regional ReplicaSets and
 * Deployments, their pods and the ExtendedDeployments' ControllerRevisions (only objects labelled with an
 * ExtendedDeployment's name, so the agent never caches a cluster's unrelated pods), Nodes, and for traffic Services
 * and HTTPRoutes (slim: see TrafficCaches). `namespaces` limits the namespaced ones to those namespaces, one informer
 * per namespace (RBAC may grant nothing cluster-wide). Every change is turned into the keys of the ExtendedDeployments
 * it concerns, passed to `enqueue` (`enqueueOwned` for the objects an ExtendedDeployment owns: its pods, workloads and
 * revisions, whose events come in bursts; `enqueueAt` besides for a Ready pod's availability), and a change of a
 * DeployRegion or a node into the keys of the DeployRegions whose status it can change, passed to `enqueueRegion`.
 */
export function makeInformers(
  kc: KubeAccess,
  options: {
    namespaces: readonly string[] | undefined;
    clock: Clock;
    log: Logger;
    enqueue: (key: EdKey) => void;
    /**
     * Whether an ExtendedDeployment as the watch shows it is the agent's own status write, answered (OwnWrites'
     * isAnswer; see Reconciler.reconcile): it wakes no key. Every change wakes its keys when absent.
     */
    isOwnStatusAnswer?: (ed: ExtendedDeploymentObject) => boolean;
    /**
     * Whether a pod's update (`previous`, the pod as cached before it) is the echo of a standing mark of a rollout
     * under way (StandingMarks.isEcho): it wakes no key. Every change wakes its key when absent.
     */
    isStandingMarkEcho?: (pod: V1Pod, previous: V1Pod | undefined) => boolean;
    /** The owner of a pod, regional workload or ControllerRevision that changed. */
    enqueueOwned: (key: EdKey) => void;
    /**
     * A pod of `key` shown Ready counts as available at `at` (the server's clock, ms): a moment no event announces,
     * known from the pod's event on rather than from the look after it (podAvailableAt).
     */
    enqueueAt?: (key: EdKey, at: number) => void;
    enqueueRegion: (key: RegionKey) => void;
    /** A node changed (also its status: health is read from it). */
    onNodeEvent?: () => void;
    /** A pod bound to a node appeared, changed or went: what nodes have left changed. */
    onUsageEvent?: () => void;
    onRestart?: (resource: string) => void;
    /** A list or watch of `resource` was forbidden (403). */
    onForbidden?: (verb: 'list' | 'watch', resource: string) => void;
    /** The KubeConfig an informer of `resource` watches with (default `kc`): lets the agent count watch requests per resource. */
    watchKubeConfig?: (resource: string) => KubeAccess;
  },
): AgentInformers {
  const watchKc = (resource: string) => options.watchKubeConfig?.(resource) ?? kc;
  const core = makeApiClient(kc, CoreV1Api);
  const apps = makeApiClient(kc, AppsV1Api);
  const custom = makeApiClient(kc, CustomObjectsApi);
  const scoped = (ns: string | undefined, prefix: string, plural: string) =>
    ns ? `${prefix}/namespaces/${encodeURIComponent(ns)}/${plural}` : `${prefix}/${plural}`;
  /** A namespaced resource: one informer cluster-wide, or one per watched namespace read as one cache. */
  const watched = <T extends KubernetesObject>(resource: string, make: (ns: string | undefined) => ResilientInformer<T>): RunningInformer<T> => {
    const namespaces = options.namespaces;
    if (namespaces === undefined) return make(undefined);
    return namespaces.length === 1 ? make(namespaces[0]) : new NamespacedInformer(resource, new Map(namespaces.map((ns) => [ns, make(ns)])));
  };
  const labelSelector = NAME_LABEL; // "has the label": any value
  // Cached objects are kept without metadata.managedFields (never read, a third of a pod): see slim-informer.ts.
  const common = {
    clock: options.clock,
    log: options.log,
    make: slimInformer,
    ...(options.onRestart && { onRestart: options.onRestart }),
    ...(options.onForbidden && { onForbidden: options.onForbidden }),
  };
  const toOwner = (_event: InformerEvent, object: KubernetesObject) => {
    const key = ownerKey(object);
    if (key) options.enqueueOwned(key);
  };

  const extendedDeployments: RunningInformer<ExtendedDeploymentObject & KubernetesObject> = watched(
    ED_PLURAL,
    (ns) =>
      new ResilientInformer<ExtendedDeploymentObject & KubernetesObject>(
        watchKc(ED_PLURAL),
        {
          resource: ED_PLURAL,
          path: scoped(ns, `/apis/${API_GROUP}/${VERSION}`, ED_PLURAL),
          list: () =>
            (ns
              ? custom.listNamespacedCustomObject({ group: API_GROUP, version: VERSION, namespace: ns, plural: ED_PLURAL })
              : custom.listCustomObjectForAllNamespaces({ group: API_GROUP, version: VERSION, plural: ED_PLURAL })) as Promise<
              KubernetesListObject<ExtendedDeploymentObject & KubernetesObject>
            >,
        },
        {
          ...common,
          make: transformingInformer<ExtendedDeploymentObject & KubernetesObject>(pooledWorkload),
          indexBy: workloadNameIndex,
          onEvent: (_event, ed) => {
            if (options.isOwnStatusAnswer?.(ed)) return;
            const key = edKey(ed);
            if (key) options.enqueue(key);
            keysSharingWorkloadNames(ed, extendedDeployments).forEach(options.enqueue);
          },
        },
      ),
  );

  const deployRegions = new ResilientInformer<DeployRegionObject & KubernetesObject>(
    watchKc(REGION_PLURAL),
    {
      resource: REGION_PLURAL,
      path: `/apis/${API_GROUP}/${VERSION}/${REGION_PLURAL}`,
      list: () =>
        custom.listClusterCustomObject({ group: API_GROUP, version: VERSION, plural: REGION_PLURAL }) as Promise<
          KubernetesListObject<DeployRegionObject & KubernetesObject>
        >,
    },
    {
      ...common,
      onEvent: (_event, region) => {
        if (region.metadata?.name) options.enqueueRegion(regionKey(region.metadata.name));
        keysUsingRegion(region, extendedDeployments.list()).forEach(options.enqueue);
      },
    },
  );

  /** The objects labelled with an ExtendedDeployment's name, each keyed to its owner (informers of the regional workloads). */
  const owned = <T extends KubernetesObject>(
    prefix: string,
    plural: string,
    list: (ns: string | undefined) => Promise<KubernetesListObject<T>>,
    make: InformerFactory<T> = common.make,
    onEvent: (event: InformerEvent, object: T, previous?: T) => void = toOwner,
  ): RunningInformer<T> =>
    watched(
      plural,
      (ns) =>
        new ResilientInformer<T>(
          watchKc(plural),
          { resource: plural, path: scoped(ns, prefix, plural), labelSelector, list: () => list(ns) },
          { ...common, make, onEvent, indexBy: ownerKey },
        ),
    );
  // A ReplicaSet's owner looks again only when something it reads of it changed (replicaSetReads): the ReplicaSet
  // controller also reports every pod turning ready and available, which the pods' own events bring.
  const replicaSetsRead = new Map<string, string>();
  const replicaSets = owned<V1ReplicaSet>(
    '/apis/apps/v1',
    'replicasets',
    (namespace) => (namespace ? apps.listNamespacedReplicaSet({ namespace, labelSelector }) : apps.listReplicaSetForAllNamespaces({ labelSelector })),
    transformingInformer<V1ReplicaSet>(pooledWorkload),
    (event, rs) => {
      const id = `${rs.metadata?.namespace ?? ''}/${rs.metadata?.name ?? ''}/${rs.metadata?.uid ?? ''}`;
      if (event === 'delete') replicaSetsRead.delete(id);
      else {
        const reads = replicaSetReads(rs);
        if (replicaSetsRead.get(id) === reads) return;
        replicaSetsRead.set(id, reads);
      }
      toOwner(event, rs);
    },
  );
  const deployments = owned<V1Deployment>(
    '/apis/apps/v1',
    'deployments',
    (namespace) => (namespace ? apps.listNamespacedDeployment({ namespace, labelSelector }) : apps.listDeploymentForAllNamespaces({ labelSelector })),
    transformingInformer<V1Deployment>(pooledWorkload),
  );
  const statefulSets = owned<V1StatefulSet>(
    '/apis/apps/v1',
    'statefulsets',
    (namespace) => (namespace ? apps.listNamespacedStatefulSet({ namespace, labelSelector }) : apps.listStatefulSetForAllNamespaces({ labelSelector })),
    transformingInformer<V1StatefulSet>(pooledWorkload),
  );
  const pods = owned<V1Pod>(
    '/api/v1',
    'pods',
    (namespace) => (namespace ? core.listNamespacedPod({ namespace, labelSelector }) : core.listPodForAllNamespaces({ labelSelector })),
    transformingInformer<V1Pod>(slimPod),
    (event, pod, previous) => {
      const key = ownerKey(pod);
      if (!key || (event === 'update' && options.isStandingMarkEcho?.(pod, previous))) return;
      options.enqueueOwned(key);
      if (event === 'delete' || !options.enqueueAt) return;
      const { namespace, name } = splitKey(key);
      const ed = extendedDeployments.get(name, namespace);
      const at = ed && podAvailableAt(ed, pod);
      if (at !== undefined) options.enqueueAt(key, at);
    },
  );
  const controllerRevisions = owned<V1ControllerRevision>('/apis/apps/v1', 'controllerrevisions', (namespace) =>
    namespace ? apps.listNamespacedControllerRevision({ namespace, labelSelector }) : apps.listControllerRevisionForAllNamespaces({ labelSelector }),
  );

  // Traffic (spec.strategy.traffic): a change of an ExtendedDeployment's Service or route wakes it (a route's status,
  // its parents accepting a generation, is what lets a group barrier pass), and so does one of nobody's in its way.
  const toTrafficOwner = (kind: 'Service' | 'HTTPRoute') => (_event: InformerEvent, object: KubernetesObject) =>
    trafficKeys(object, kind, extendedDeployments.list(object.metadata?.namespace)).forEach(options.enqueue);
  const services = watched<V1Service>(
    'services',
    (ns) =>
      new ResilientInformer<V1Service>(
        watchKc('services'),
        {
          resource: 'services',
          path: scoped(ns, '/api/v1', 'services'),
          list: () => (ns ? core.listNamespacedService({ namespace: ns }) : core.listServiceForAllNamespaces()),
        },
        { ...common, make: transformingInformer<V1Service>(slimService), onEvent: toTrafficOwner('Service') },
      ),
  );
  const { group: routeGroup, version: routeVersion, plural: routePlural } = HTTPROUTE_RESOURCE;
  const discovery = makeApiClient(kc, GroupDiscoveryApi);
  const routes = new ServedInformer<CachedRoute>({
    resource: routePlural,
    served: () => resourceServed(discovery, routeGroup, routeVersion, routePlural),
    clock: options.clock,
    log: options.log,
    make: () =>
      watched<CachedRoute>(
        routePlural,
        (ns) =>
          new ResilientInformer<CachedRoute>(
            watchKc(routePlural),
            {
              resource: routePlural,
              path: scoped(ns, `/apis/${routeGroup}/${routeVersion}`, routePlural),
              list: () =>
                (ns
                  ? custom.listNamespacedCustomObject({ group: routeGroup, version: routeVersion, namespace: ns, plural: routePlural })
                  : custom.listCustomObjectForAllNamespaces({ group: routeGroup, version: routeVersion, plural: routePlural })) as Promise<
                  KubernetesListObject<CachedRoute>
                >,
            },
            { ...common, make: transformingInformer<CachedRoute>(slimRoute), onEvent: toTrafficOwner('HTTPRoute') },
          ),
      ),
  });

  // Nodes feed region health and capacity (moves): every DeployRegion's status is looked at again, which in turn wakes
  // the ExtendedDeployments that use the region.
  const nodes = new ResilientInformer<V1Node>(
    watchKc('nodes'),
    { resource: 'nodes', path: '/api/v1/nodes', list: () => core.listNode() },
    {
      ...common,
      onEvent: () => {
        options.onNodeEvent?.();
        for (const region of deployRegions.list()) if (region.metadata?.name) options.enqueueRegion(regionKey(region.metadata.name));
      },
    },
  );

  // Cluster-wide whatever the namespace option: capacity counts every pod on a region's nodes.
  const usage = new ResilientInformer<UsagePod>(
    watchKc('pods-usage'),
    {
      resource: 'pods-usage',
      path: '/api/v1/pods',
      list: () => core.listPodForAllNamespaces({ fieldSelector: USAGE_FIELD_SELECTOR }) as unknown as Promise<KubernetesListObject<UsagePod>>,
    },
    {
      ...common,
      make: transformingInformer<UsagePod>((pod) => usagePod(pod as unknown as V1Pod), USAGE_FIELD_SELECTOR),
      onEvent: () => options.onUsageEvent?.(),
    },
  );

  const all = [
    extendedDeployments,
    deployRegions,
    replicaSets,
    deployments,
    statefulSets,
    pods,
    nodes,
  ] as unknown as readonly RunningInformer<KubernetesObject>[];
  const besides = [controllerRevisions, services, routes] as unknown as readonly RunningInformer<KubernetesObject>[];
  const traffic: TrafficCaches = { services, routes, routesServed: () => routes.served() };
  return {
    caches: { extendedDeployments, deployRegions, replicaSets, deployments, statefulSets, pods, controllerRevisions, nodes, usage, traffic },
    all,
    besides,
  };
}

/**
 * The reads the API server forbids now (ResilientInformer.forbidden) among those the agent waits for: without them its
 * caches no longer follow the cluster. The history's are not among them (see AgentInformers.besides).
 */
export function forbiddenReads(informers: AgentInformers): ApiRead[] {
  return informers.all.flatMap((informer) => {
    const verb = informer.forbidden();
    return verb === undefined ? [] : [{ verb, resource: informer.resource }];
  });
}

/** Why the agent is not live: every running informer that is stuck (ResilientInformer.stuck), or undefined when none is. */
export function stuckInformers(informers: AgentInformers): string | undefined {
  const reasons = [...informers.all, ...informers.besides, informers.caches.usage].map((i) => i.stuck()).filter((r): r is string => r !== undefined);
  return reasons.length > 0 ? reasons.join('; ') : undefined;
}
