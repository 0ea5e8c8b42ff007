import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { AGENT_PERMISSIONS, LEASE_PERMISSION, TRAFFIC_PERMISSIONS } from './agent-rbac.js';

/**
 * What each client-node method the agent calls needs, as `group resource verb`. Custom-object methods take the plural
 * as a parameter: the agent lists ExtendedDeployments namespaced or across namespaces, DeployRegions cluster-wide, and
 * writes only ExtendedDeployment and DeployRegion status, and HTTPRoutes (traffic). A list method runs inside an
 * informer, which also watches. A server-side apply creates the object it finds missing: the API server authorizes it as
 * `create` too; the traffic objects' ownerReference has blockOwnerDeletion, which OwnerReferencesPermissionEnforcement
 * authorizes as `update` of the owner's finalizers.
 */
const NEEDS: Record<string, readonly string[]> = {
  listNamespacedCustomObject: [
    'extendeddeployment.io extendeddeployments list',
    'extendeddeployment.io extendeddeployments watch',
    'extendeddeployment.io inplacesets list',
    'gateway.networking.k8s.io httproutes list',
    'gateway.networking.k8s.io httproutes watch',
  ],
  patchNamespacedCustomObject: [
    'gateway.networking.k8s.io httproutes patch',
    'gateway.networking.k8s.io httproutes create',
    'extendeddeployment.io extendeddeployments/finalizers update',
  ],
  deleteNamespacedCustomObject: ['gateway.networking.k8s.io httproutes delete'],
  patchNamespacedCustomObjectScale: ['extendeddeployment.io inplacesets/scale patch'],
  listCustomObjectForAllNamespaces: [
    'extendeddeployment.io extendeddeployments list',
    'extendeddeployment.io extendeddeployments watch',
    'gateway.networking.k8s.io httproutes list',
    'gateway.networking.k8s.io httproutes watch',
  ],
  replaceNamespacedCustomObjectStatus: ['extendeddeployment.io extendeddeployments/status update'],
  listClusterCustomObject: ['extendeddeployment.io deployregions list', 'extendeddeployment.io deployregions watch'],
  replaceClusterCustomObjectStatus: ['extendeddeployment.io deployregions/status update'],
  listNamespacedReplicaSet: ['apps replicasets list', 'apps replicasets watch'],
  listReplicaSetForAllNamespaces: ['apps replicasets list', 'apps replicasets watch'],
  patchNamespacedReplicaSet: ['apps replicasets patch'],
  createNamespacedReplicaSet: ['apps replicasets create'],
  deleteNamespacedReplicaSet: ['apps replicasets delete'],
  listNamespacedDeployment: ['apps deployments list', 'apps deployments watch'],
  listDeploymentForAllNamespaces: ['apps deployments list', 'apps deployments watch'],
  patchNamespacedDeployment: ['apps deployments patch'],
  listNamespacedStatefulSet: ['apps statefulsets list', 'apps statefulsets watch'],
  listStatefulSetForAllNamespaces: ['apps statefulsets list', 'apps statefulsets watch'],
  patchNamespacedStatefulSet: ['apps statefulsets patch'],
  listNamespacedControllerRevision: ['apps controllerrevisions list', 'apps controllerrevisions watch'],
  listControllerRevisionForAllNamespaces: ['apps controllerrevisions list', 'apps controllerrevisions watch'],
  createNamespacedControllerRevision: ['apps controllerrevisions create'],
  replaceNamespacedControllerRevision: ['apps controllerrevisions update'],
  deleteNamespacedControllerRevision: ['apps controllerrevisions delete'],
  listNamespacedPod: [' pods list', ' pods watch'],
  listPodForAllNamespaces: [' pods list', ' pods watch'],
  patchNamespacedPod: [' pods patch'],
  createNamespacedPod: [' pods create'],
  patchNamespacedDeploymentScale: ['apps deployments/scale patch'],
  patchNamespacedReplicaSetScale: ['apps replicasets/scale patch'],
  createNamespacedPodEviction: [' pods/eviction create'],
  patchNamespacedPodStatus: [' pods/status patch'],
  listNamespacedService: [' services list', ' services watch'],
  listServiceForAllNamespaces: [' services list', ' services watch'],
  patchNamespacedService: [' services patch', ' services create', 'extendeddeployment.io extendeddeployments/finalizers update'],
  deleteNamespacedService: [' services delete'],
  listNode: [' nodes list', ' nodes watch'],
  createNamespacedEvent: [' events create'],
  createTokenReview: ['authentication.k8s.io tokenreviews create'],
  createSubjectAccessReview: ['authorization.k8s.io subjectaccessreviews create'],
  readNamespacedLease: ['coordination.k8s.io leases get'],
  createNamespacedLease: ['coordination.k8s.io leases create'],
  replaceNamespacedLease: ['coordination.k8s.io leases update'],
};

/** Every generated API method (list, read, create, replace, patch, delete) the agent's non-test code calls on a client (`.listNamespacedPod(`, `.replaceNamespacedLease(`, ...). */
function agentApiCalls(): Set<string> {
  const calls = new Set<string>();
  // agent/runtime/ too: leader election and the metrics reviews call the API from there.
  for (const file of readdirSync('agent', { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts'))) {
    const text = readFileSync(join('agent', file), 'utf8');
    // Node's http and tls modules (`http.createServer`, `tls.createSecureContext`) are no API clients, nor is an
    // https.Agent's own `super.createConnection`.
    for (const match of text.matchAll(/(?<!\b(?:https?|tls|super))\.((?:list|read|create|replace|patch|delete)[A-Z]\w*)\(/g)) calls.add(match[1] ?? '');
  }
  return calls;
}

const granted = [...AGENT_PERMISSIONS, LEASE_PERMISSION, ...TRAFFIC_PERMISSIONS].flatMap((p) => p.verbs.map((verb) => `${p.apiGroup} ${p.resource} ${verb}`));

describe('agent RBAC', () => {
  it('knows what every client call in agent/ needs (add a new call to NEEDS and to AGENT_PERMISSIONS)', () => {
    expect([...agentApiCalls()].filter((call) => !(call in NEEDS))).toEqual([]);
  });

  it('grants exactly what those calls need: nothing missing, nothing more', () => {
    const needed = new Set([...agentApiCalls()].flatMap((call) => NEEDS[call] ?? []));
    expect([...new Set(granted)].sort()).toEqual([...needed].sort());
  });

  it('keeps every write of traffic shifting out of the main role, and every read in it (an agent without traffic still runs)', () => {
    const main = new Set(AGENT_PERMISSIONS.flatMap((p) => p.verbs.map((verb) => `${p.apiGroup} ${p.resource} ${verb}`)));
    const traffic = TRAFFIC_PERMISSIONS.flatMap((p) => p.verbs.map((verb) => `${p.apiGroup} ${p.resource} ${verb}`));
    expect(traffic.filter((t) => main.has(t))).toEqual([]);
    expect(traffic.filter((t) => !/ (create|patch|delete)$/.test(t))).toEqual(['extendeddeployment.io extendeddeployments/finalizers update']);
    expect([...main].filter((m) => / (services|httproutes) /.test(m)).sort()).toEqual([
      ' services list',
      ' services watch',
      'gateway.networking.k8s.io httproutes list',
      'gateway.networking.k8s.io httproutes watch',
    ]);
  });
});
