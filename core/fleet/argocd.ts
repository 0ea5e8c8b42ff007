import type { Cluster } from '../api/cluster.js';
import type { Fleet } from '../api/fleet.js';
import { API_GROUP } from '../api/identity.js';
import type { JsonObject } from '../overrides.js';
import { clusterFolder } from './layout.js';

/** The label naming the member cluster on each Application of a fleet. */
export const CLUSTER_LABEL = `${API_GROUP}/cluster`;

/**
 * The Argo CD ApplicationSet of a fleet (undefined without `spec.argocd`): a list generator with one element per
 * member cluster (its Argo CD cluster name and the folder of its output), each becoming an Application that syncs
 * `<source.path>/clusters/<cluster>` into that cluster automatically. No RollingSync: every cluster may sync at once,
 * because each cluster's agent holds its rollout's first group until the earlier waves completed it.
 */
export function argocdApplicationSet(fleet: Fleet, clusters: readonly Cluster[]): JsonObject | undefined {
  const argocd = fleet.spec.argocd;
  if (!argocd) return undefined;
  const { repoURL, targetRevision, path } = fleet.spec.source;
  return {
    apiVersion: 'argoproj.io/v1alpha1',
    kind: 'ApplicationSet',
    metadata: { name: fleet.metadata.name, namespace: argocd.namespace },
    spec: {
      goTemplate: true,
      goTemplateOptions: ['missingkey=error'],
      generators: [
        {
          list: {
            elements: clusters.map((c) => ({
              cluster: c.metadata.name,
              destination: c.spec.argocd?.cluster ?? c.metadata.name,
              path: `${path}/${clusterFolder(c.metadata.name)}`,
            })),
          },
        },
      ],
      template: {
        metadata: { name: `${fleet.metadata.name}-{{ .cluster }}`, labels: { [CLUSTER_LABEL]: '{{ .cluster }}' } },
        spec: {
          project: argocd.project,
          source: { repoURL: repoURL ?? '', targetRevision, path: '{{ .path }}' },
          destination: { name: '{{ .destination }}' },
          syncPolicy: { automated: { prune: true, selfHeal: true }, syncOptions: ['ServerSideApply=true'] },
        },
      },
    },
  };
}
