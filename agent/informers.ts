import type {
  KubernetesListObject,
  KubernetesObject,
  V1ControllerRevision,
  V1Deployment,
  V1StatefulSet,
  V1Node,
  V1Pod,
  V1ReplicaSet,
} from '@kubernetes/client-node';
import { AppsV1Api, CoreV1Api, CustomObjectsApi, makeApiClient } from './runtime/kube-client.js';
import type { KubeAccess } from './runtime/kube-config.js';
import { API_GROUP, ED_PLURAL, REGION_PLURAL, VERSION } from '../core/api/identity.js';
import { NAME_LABEL } from '../core/labels.js';
import type { Clock } from './runtime/clock.js';
import type { ApiRead } from '../core/kube/api-writes.js';
import { ResilientInformer, type CacheReader, type IndexedCacheReader, type InformerEvent, type RunningInformer } from './runtime/informer.js';
import { NamespacedInformer } from './runtime/namespaced-informer.js';
import { USAGE_FIELD_SELECTOR, usagePod, type UsagePod } from './cluster-nodes.js';
import { edKey, keysSharingWorkloadNames, keysUsingRegion, ownerKey, regionKey, type EdKey, type RegionKey } from './keys.js';
import type { Logger } from './runtime/log.js';
import { slimInformer, transformingInformer } from './runtime/slim-informer.js';
import type { DeployRegionObject, ExtendedDeploymentObject } from '../core/kube/objects.js';

/**
 * The caches the reconcilers read. Regional workloads and pods are indexed by the key of the ExtendedDeployment they
 * belong to ({@link ownerKey}), so a reconcile reads its own objects without scanning the others.
 */
export interface AgentCaches {
  readonly extendedDeployments: CacheReader<ExtendedDeploymentObject & KubernetesObject>;
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
}

/** Every informer of the agent, and their caches. */
export interface AgentInformers {
  readonly caches: AgentCaches;
  /** The informers the agent waits for before it reconciles (readiness, and the cache sync timeout). */
  readonly all: readonly RunningInformer<KubernetesObject>[];
  /**
   * Started and stopped with `all`, but not waited for: the history's (ControllerRevisions), which no rollout needs.
   * An agent whose role lacks them (its RBAC not yet updated) still rolls out, records no history, and counts the
   * forbidden lists (extendeddeployment_agent_forbidden_total).
   */
  readonly besides: readonly RunningInformer<KubernetesObject>[];
}

/**
 * Builds the agent's informers: ExtendedDeployments, DeployRegions (cluster-scoped), the regional ReplicaSets and
 * Deployments, their pods and the ExtendedDeployments' ControllerRevisions (only objects labelled with an
 * ExtendedDeployment's name, so the agent never caches a cluster's unrelated pods), and Nodes. `namespaces` limits the
 * namespaced ones to those namespaces, one informer per namespace (RBAC may grant nothing cluster-wide). Every change is turned into the keys of the ExtendedDeployments it concerns,
 * passed to `enqueue`, and a change of a DeployRegion or a node into the keys of the DeployRegions whose status it can
 * change, passed to `enqueueRegion`.
 */
export function makeInformers(
  kc: KubeAccess,
  options: {
    namespaces: readonly string[] | undefined;
    clock: Clock;
    log: Logger;
    enqueue: (key: EdKey) => void;
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
    if (key) options.enqueue(key);
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
          onEvent: (_event, ed) => {
            const key = edKey(ed);
            if (key) options.enqueue(key);
            keysSharingWorkloadNames(ed, extendedDeployments.list(ed.metadata?.namespace)).forEach(options.enqueue);
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
  ): RunningInformer<T> =>
    watched(
      plural,
      (ns) =>
        new ResilientInformer<T>(
          watchKc(plural),
          { resource: plural, path: scoped(ns, prefix, plural), labelSelector, list: () => list(ns) },
          { ...common, onEvent: toOwner, indexBy: ownerKey },
        ),
    );
  const replicaSets = owned<V1ReplicaSet>('/apis/apps/v1', 'replicasets', (namespace) =>
    namespace ? apps.listNamespacedReplicaSet({ namespace, labelSelector }) : apps.listReplicaSetForAllNamespaces({ labelSelector }),
  );
  const deployments = owned<V1Deployment>('/apis/apps/v1', 'deployments', (namespace) =>
    namespace ? apps.listNamespacedDeployment({ namespace, labelSelector }) : apps.listDeploymentForAllNamespaces({ labelSelector }),
  );
  const statefulSets = owned<V1StatefulSet>('/apis/apps/v1', 'statefulsets', (namespace) =>
    namespace ? apps.listNamespacedStatefulSet({ namespace, labelSelector }) : apps.listStatefulSetForAllNamespaces({ labelSelector }),
  );
  const pods = owned<V1Pod>('/api/v1', 'pods', (namespace) =>
    namespace ? core.listNamespacedPod({ namespace, labelSelector }) : core.listPodForAllNamespaces({ labelSelector }),
  );
  const controllerRevisions = owned<V1ControllerRevision>('/apis/apps/v1', 'controllerrevisions', (namespace) =>
    namespace ? apps.listNamespacedControllerRevision({ namespace, labelSelector }) : apps.listControllerRevisionForAllNamespaces({ labelSelector }),
  );

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
  const besides = [controllerRevisions] as unknown as readonly RunningInformer<KubernetesObject>[];
  return { caches: { extendedDeployments, deployRegions, replicaSets, deployments, statefulSets, pods, controllerRevisions, nodes, usage }, all, besides };
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
