import { Construct } from 'constructs';
import type { ClusterInput } from '../core/api/cluster.js';
import { cluster as clusterSchema } from '../core/api/cluster.js';
import { API_VERSION, CLUSTER_KIND } from '../core/api/identity.js';
import { issuesToProblems } from '../core/parse.js';
import type { DeployRegion } from './deploy-region.js';
import { emitManifest } from './manifest.js';
import { parsedClusters } from './parsed-clusters.js';
import { RenderError } from './render-error.js';

/** How Argo CD reaches a {@link Cluster}. */
export interface ClusterArgocdProps {
  /**
   * The Argo CD cluster: the Application's `destination.name`.
   * @default the Cluster's name
   */
  readonly cluster?: string;
}

/** How Flux reaches a {@link Cluster}. */
export interface ClusterFluxProps {
  /**
   * The Secret, in the Fleet's Flux namespace, that holds this cluster's kubeconfig.
   * @default "<name>-kubeconfig"
   */
  readonly kubeConfigSecret?: string;
}

/** Props of a {@link Cluster}. */
export interface ClusterProps {
  /**
   * Cluster name (a DNS label): names its output folder `clusters/<name>/`, its Argo CD Application and its Flux
   * Kustomization.
   * @default the construct id
   */
  readonly name?: string;
  /**
   * Labels of the Cluster object.
   * @default none
   */
  readonly labels?: Record<string, string>;
  /**
   * The DeployRegions that exist in this cluster: only these are written into it.
   * @default every DeployRegion of the app
   */
  readonly regions?: DeployRegion[];
  /**
   * How Argo CD reaches this cluster.
   * @default the Argo CD cluster of the same name
   */
  readonly argocd?: ClusterArgocdProps;
  /**
   * How Flux reaches this cluster.
   * @default the kubeconfig Secret `<name>-kubeconfig`
   */
  readonly flux?: ClusterFluxProps;
}

/**
 * One member cluster of a fleet. ExtendedDeployments name it in `clusters` by reference; `writeApp` then writes what
 * each cluster gets under `clusters/<name>/` (and the engines' objects of a {@link Fleet} under `fleet/`). The Cluster
 * object itself is written nowhere: no cluster has a CRD for it.
 */
export class Cluster extends Construct {
  /** The cluster's name. */
  readonly name: string;

  constructor(scope: Construct, id: string, props: ClusterProps = {}) {
    super(scope, id);
    this.name = props.name ?? id;
    const manifest: ClusterInput = {
      apiVersion: API_VERSION,
      kind: CLUSTER_KIND,
      metadata: { name: this.name, ...(props.labels && { labels: props.labels }) },
      spec: {
        ...(props.regions && { regions: props.regions.map((r) => r.name) }),
        ...(props.argocd && { argocd: props.argocd }),
        ...(props.flux && { flux: props.flux }),
      },
    };
    const parsed = clusterSchema.safeParse(manifest, { reportInput: true });
    if (!parsed.success) throw new RenderError(issuesToProblems({ kind: CLUSTER_KIND, name: this.name }, parsed.error.issues, clusterSchema));
    parsedClusters.set(this, parsed.data);
    emitManifest(this, 'Resource', { ...manifest }, true);
  }
}
