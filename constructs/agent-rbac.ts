import { API_GROUP, ED_PLURAL, REGION_PLURAL, UPSTREAM_INPLACESET_PLURAL } from '../core/api/identity.js';
import { GATEWAY_GROUP } from '../core/traffic/objects.js';

/** Whether a resource lives in a namespace (a Role can grant it) or in the cluster (only a ClusterRole can). */
export type ResourceScope = 'Namespaced' | 'Cluster';

/** One permission of the agent: one resource, the verbs its code uses, and why. */
export interface AgentPermission {
  /** API group; `""` is the core group. */
  readonly apiGroup: string;
  /** Resource, or `resource/subresource`. */
  readonly resource: string;
  /** Exactly the verbs the agent's API calls need. */
  readonly verbs: readonly string[];
  /** Whether a Role can grant it (when the agent watches one namespace) or only a ClusterRole. */
  readonly scope: ResourceScope;
  /** The calls in agent/ that need it. */
  readonly why: string;
}

/**
 * Everything the agent does with the API, derived from its client calls (agent/informers.ts, actuators.ts,
 * status-writer.ts, events.ts, metrics-access.ts), but the writes of traffic shifting ({@link TRAFFIC_PERMISSIONS}). Informers list and watch; nothing is read with `get`. No Secrets, no ConfigMaps, no
 * wildcards. `constructs/agent-rbac.test.ts` checks this table against the calls in agent/.
 */
export const AGENT_PERMISSIONS: readonly AgentPermission[] = [
  { apiGroup: API_GROUP, resource: ED_PLURAL, verbs: ['list', 'watch'], scope: 'Namespaced', why: 'informer' },
  { apiGroup: API_GROUP, resource: `${ED_PLURAL}/status`, verbs: ['update'], scope: 'Namespaced', why: 'status writer (replace with resourceVersion)' },
  { apiGroup: API_GROUP, resource: REGION_PLURAL, verbs: ['list', 'watch'], scope: 'Cluster', why: 'informer' },
  { apiGroup: API_GROUP, resource: `${REGION_PLURAL}/status`, verbs: ['update'], scope: 'Cluster', why: 'region health (replace with resourceVersion)' },
  {
    apiGroup: 'apps',
    resource: 'replicasets',
    verbs: ['list', 'watch', 'patch', 'create', 'delete'],
    scope: 'Namespaced',
    why: 'informer; server-side apply of spec.replicas; keepers, created and deleted (the admission policy allows no other)',
  },
  {
    apiGroup: 'apps',
    resource: 'deployments',
    verbs: ['list', 'watch', 'patch'],
    scope: 'Namespaced',
    why: 'informer; server-side apply of spec.replicas and spec.paused (compat mode)',
  },
  {
    apiGroup: 'apps',
    resource: 'statefulsets',
    verbs: ['list', 'watch', 'patch'],
    scope: 'Namespaced',
    why: 'informer; server-side apply of spec.replicas and the rolling update partition (StatefulSet regions)',
  },
  {
    apiGroup: 'apps',
    resource: 'controllerrevisions',
    verbs: ['list', 'watch', 'create', 'update', 'delete'],
    scope: 'Namespaced',
    why: 'informer; the history of each ExtendedDeployment: record a revision, renumber it on a revert, prune beyond historyLimit',
  },
  {
    apiGroup: '',
    resource: 'pods',
    verbs: ['list', 'watch'],
    scope: 'Cluster',
    why: "informer; capacity counts the requests of every pod on a region's nodes, in any namespace",
  },
  {
    apiGroup: '',
    resource: 'pods',
    verbs: ['patch', 'create'],
    scope: 'Namespaced',
    why: 'deletion-cost annotation, in-place image swap and adoption (a region takes a pod); create only as a dry run, which proves an adoption freeze',
  },
  {
    apiGroup: 'apps',
    resource: 'deployments/scale',
    verbs: ['patch'],
    scope: 'Namespaced',
    why: 'adoption: the adopted Deployment is scaled down by the pods its region took',
  },
  {
    apiGroup: API_GROUP,
    resource: UPSTREAM_INPLACESET_PLURAL,
    verbs: ['list'],
    scope: 'Namespaced',
    why: "adoption: the upstream operator's InplaceSet a region takes pods from (none where that kind is not served)",
  },
  {
    apiGroup: API_GROUP,
    resource: `${UPSTREAM_INPLACESET_PLURAL}/scale`,
    verbs: ['patch'],
    scope: 'Namespaced',
    why: 'adoption: the adopted InplaceSet is scaled down by the pods its region took',
  },
  {
    apiGroup: 'apps',
    resource: 'replicasets/scale',
    verbs: ['patch'],
    scope: 'Namespaced',
    why: 'adoption: the adopted ReplicaSet is scaled down by the pods its region took',
  },
  {
    apiGroup: '',
    resource: 'pods/eviction',
    verbs: ['create'],
    scope: 'Namespaced',
    why: 'replacement of old pods, through the Eviction API so PodDisruptionBudgets hold',
  },
  { apiGroup: '', resource: 'pods/status', verbs: ['patch'], scope: 'Namespaced', why: 'the InPlaceUpdateReady condition' },
  {
    apiGroup: '',
    resource: 'services',
    verbs: ['list', 'watch'],
    scope: 'Namespaced',
    why: 'informer (traffic: the revision Services of mode Weighted, and any Service in their way); writes are TRAFFIC_PERMISSIONS',
  },
  {
    apiGroup: GATEWAY_GROUP,
    resource: 'httproutes',
    verbs: ['list', 'watch'],
    scope: 'Namespaced',
    why: 'informer, while the Gateway API is served (traffic: the route of mode Weighted and its status); writes are TRAFFIC_PERMISSIONS',
  },
  { apiGroup: '', resource: 'nodes', verbs: ['list', 'watch'], scope: 'Cluster', why: 'informer (region health and capacity)' },
  {
    apiGroup: '',
    resource: 'events',
    verbs: ['create'],
    scope: 'Cluster',
    why: "an Event per rollout transition in the ExtendedDeployment's namespace; DeployRegion Events in default",
  },
  {
    apiGroup: 'authentication.k8s.io',
    resource: 'tokenreviews',
    verbs: ['create'],
    scope: 'Cluster',
    why: "metrics access (--metrics-secure): who a scraper's bearer token belongs to",
  },
  {
    apiGroup: 'authorization.k8s.io',
    resource: 'subjectaccessreviews',
    verbs: ['create'],
    scope: 'Cluster',
    why: 'metrics access (--metrics-secure): whether that user may get /metrics',
  },
];

/**
 * The writes of traffic shifting (spec.strategy.traffic mode Weighted, agent/traffic-actuator.ts): the agent creates,
 * applies and deletes a Service per live revision and the HTTPRoute `<ed>`. Server-side apply (`patch`) creates the
 * object when it does not exist, which the API server also authorizes as `create`. No `update`: the agent never
 * replaces them. Their ownerReference sets blockOwnerDeletion, for which some clusters require `update` on the owner's
 * finalizers. Granted apart from {@link AGENT_PERMISSIONS}, in a role of their own (AgentInstall `traffic`): an
 * install without traffic shifting gives the agent no write on any Service or route. The reads are in
 * AGENT_PERMISSIONS, so an agent without these still runs (an ExtendedDeployment of mode Weighted then reports the
 * forbidden write).
 */
export const TRAFFIC_PERMISSIONS: readonly AgentPermission[] = [
  {
    apiGroup: '',
    resource: 'services',
    verbs: ['create', 'patch', 'delete'],
    scope: 'Namespaced',
    why: "traffic: server-side apply of each live revision's Service `<ed>-<revision>`, deletion once no route names it",
  },
  {
    apiGroup: GATEWAY_GROUP,
    resource: 'httproutes',
    verbs: ['create', 'patch', 'delete'],
    scope: 'Namespaced',
    why: 'traffic: server-side apply of the HTTPRoute `<ed>` with its weights, deletion when mode Weighted ends',
  },
  {
    apiGroup: API_GROUP,
    resource: `${ED_PLURAL}/finalizers`,
    verbs: ['update'],
    scope: 'Namespaced',
    why:
      "traffic: the Services' and route's ownerReference blocks the ExtendedDeployment's foreground deletion (blockOwnerDeletion), which the " +
      'OwnerReferencesPermissionEnforcement admission plugin (OpenShift, among others) allows only to who may update its finalizers; no finalizer is written',
  },
];

/** Whether a permission serves only the metrics access checks, which an install without `--metrics-secure` does not need. */
export function isMetricsAccessPermission(permission: Pick<AgentPermission, 'apiGroup'>): boolean {
  return permission.apiGroup === 'authentication.k8s.io' || permission.apiGroup === 'authorization.k8s.io';
}

/** What leader election does with its Lease, in the agent's own namespace: read, create once, renew. */
export const LEASE_PERMISSION = { apiGroup: 'coordination.k8s.io', resource: 'leases', verbs: ['get', 'create', 'update'] } as const;

/** A Kubernetes PolicyRule as rendered. */
export interface PolicyRule {
  readonly apiGroups: string[];
  readonly resources: string[];
  readonly verbs: string[];
  readonly resourceNames?: string[];
}

/** One rule per permission, in table order. */
export function policyRules(permissions: readonly AgentPermission[]): PolicyRule[] {
  return permissions.map((p) => ({ apiGroups: [p.apiGroup], resources: [p.resource], verbs: [...p.verbs] }));
}

/**
 * The Lease rules: `create` cannot be limited to a name (the object does not exist yet), `get` and `update` can.
 */
export function leaseRules(leaseName: string): PolicyRule[] {
  const { apiGroup, resource, verbs } = LEASE_PERMISSION;
  return [
    { apiGroups: [apiGroup], resources: [resource], verbs: verbs.filter((v) => v === 'create') },
    { apiGroups: [apiGroup], resources: [resource], verbs: verbs.filter((v) => v !== 'create'), resourceNames: [leaseName] },
  ];
}
