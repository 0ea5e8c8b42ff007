import type { Cluster } from '../api/cluster.js';
import type { Fleet } from '../api/fleet.js';
import { API_VERSION, ED_KIND } from '../api/identity.js';
import type { JsonObject } from '../overrides.js';
import { CLUSTER_LABEL } from './argocd.js';
import { clusterFolder } from './layout.js';

const INVALID = "(has(status.conditions) && status.conditions.exists(c, c.type == 'Valid' && c.status == 'False'))";
const OBSERVED = 'has(status.observedGeneration) && status.observedGeneration >= metadata.generation';
const ANALYSIS_FAILED = "(has(status.conditions) && status.conditions.exists(c, c.type == 'Progressing' && c.reason == 'AnalysisFailed'))";

/**
 * Flux's health of an ExtendedDeployment, which has no Ready condition: the same expressions as
 * examples/gitops/flux-kustomization.yaml (a test holds them equal), the mapping of the Argo CD health check.
 */
export const EXTENDED_DEPLOYMENT_HEALTH = {
  apiVersion: API_VERSION,
  kind: ED_KIND,
  inProgress:
    '!has(status.observedGeneration) || status.observedGeneration < metadata.generation || ' +
    `(!${INVALID} && !${ANALYSIS_FAILED} && ` +
    "(!has(status.phase) || status.phase in ['Progressing', 'Paused', 'WaitingForConfirmation']))",
  failed: `${OBSERVED} && (${INVALID} || ${ANALYSIS_FAILED} || (has(status.phase) && status.phase == 'Degraded'))`,
  current: `${OBSERVED} && !${INVALID} && has(status.phase) && status.phase == 'Healthy'`,
} as const;

/**
 * Regional ReplicaSets are Current once observed (their ExtendedDeployment decides the rollout), so that kstatus'
 * fail-fast on a crash-looping pod does not fail the Kustomization the agent is riding it out in; as in
 * examples/gitops/flux-kustomization.yaml.
 */
export const REPLICASET_HEALTH = {
  apiVersion: 'apps/v1',
  kind: 'ReplicaSet',
  current:
    'has(metadata.generation) && has(status.observedGeneration) && status.observedGeneration >= metadata.generation && ' +
    "((has(metadata.labels) && 'extendeddeployment.io/name' in metadata.labels) || " +
    '(has(status.availableReplicas) ? status.availableReplicas : 0) >= (has(spec.replicas) ? spec.replicas : 1))',
} as const;

/**
 * One Flux Kustomization per member cluster (none without `spec.flux`), in the Fleet's Flux namespace: it applies
 * `./<source.path>/clusters/<cluster>` into that cluster through its kubeconfig Secret, prunes, and waits on the
 * ExtendedDeployments' health. They are independent: the agents, not Flux's dependsOn, order the clusters.
 */
export function fluxKustomizations(fleet: Fleet, clusters: readonly Cluster[]): { readonly cluster: string; readonly kustomization: JsonObject }[] {
  const flux = fleet.spec.flux;
  if (!flux) return [];
  return clusters.map((c) => ({
    cluster: c.metadata.name,
    kustomization: {
      apiVersion: 'kustomize.toolkit.fluxcd.io/v1',
      kind: 'Kustomization',
      metadata: { name: `${fleet.metadata.name}-${c.metadata.name}`, namespace: flux.namespace, labels: { [CLUSTER_LABEL]: c.metadata.name } },
      spec: {
        interval: flux.interval,
        retryInterval: '2m',
        // A rollout that waits for earlier waves or an approval stays InProgress: leave room for the gates.
        timeout: '15m',
        path: `./${fleet.spec.source.path}/${clusterFolder(c.metadata.name)}`,
        prune: true,
        wait: true,
        sourceRef: { kind: flux.sourceRef.kind, name: flux.sourceRef.name },
        kubeConfig: { secretRef: { name: c.spec.flux?.kubeConfigSecret ?? `${c.metadata.name}-kubeconfig` } },
        healthCheckExprs: [{ ...EXTENDED_DEPLOYMENT_HEALTH }, { ...REPLICASET_HEALTH }],
      },
    },
  }));
}
