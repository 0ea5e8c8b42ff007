import { Construct } from 'constructs';
import { fleet as fleetSchema, type FleetInput } from '../core/api/fleet.js';
import { API_VERSION, FLEET_KIND } from '../core/api/identity.js';
import { issuesToProblems } from '../core/parse.js';
import { emitManifest } from './manifest.js';
import { RenderError } from './render-error.js';

/** Where a fleet's output is committed. */
export interface FleetSourceProps {
  /**
   * The Git repository holding the output; needed with `argocd`.
   * @default none
   */
  readonly repoURL?: string;
  /**
   * The branch, tag or commit Argo CD syncs.
   * @default "HEAD"
   */
  readonly targetRevision?: string;
  /**
   * The folder the app is written to, relative to the repository root: each cluster syncs `<path>/clusters/<cluster>`.
   * @default "dist"
   */
  readonly path?: string;
}

/** The Argo CD side of a fleet. */
export interface FleetArgocdProps {
  /**
   * Namespace of the ApplicationSet (where Argo CD runs).
   * @default "argocd"
   */
  readonly namespace?: string;
  /**
   * The Argo CD project of the Applications.
   * @default "default"
   */
  readonly project?: string;
}

/** The Flux source of a fleet's output. */
export interface FleetFluxSourceProps {
  /**
   * Kind of the Flux source.
   * @default "GitRepository"
   */
  readonly kind?: 'GitRepository' | 'OCIRepository' | 'Bucket';
  /** Name of the Flux source, in the Kustomizations' namespace. */
  readonly name: string;
}

/** The Flux side of a fleet. */
export interface FleetFluxProps {
  /**
   * Namespace of the Kustomizations (where Flux runs, beside the clusters' kubeconfig Secrets).
   * @default "flux-system"
   */
  readonly namespace?: string;
  /** The Flux source that holds the output. */
  readonly sourceRef: FleetFluxSourceProps;
  /**
   * How often Flux reconciles each cluster, as a Go duration.
   * @default "10m"
   */
  readonly interval?: string;
}

/** Props of a {@link Fleet}. */
export interface FleetProps {
  /**
   * The fleet's name (a DNS label): in every member's `spec.fleet.name`, and the prefix of its Applications and
   * Kustomizations.
   * @default the construct id
   */
  readonly name?: string;
  /**
   * Where the output is committed.
   * @default path "dist" at HEAD
   */
  readonly source?: FleetSourceProps;
  /**
   * With it, `writeApp` writes `fleet/argocd/applicationset.k8s.yaml`: one Application per cluster.
   * @default no Argo CD objects
   */
  readonly argocd?: FleetArgocdProps;
  /**
   * With it, `writeApp` writes `fleet/flux/<cluster>.k8s.yaml`: one Kustomization per cluster.
   * @default no Flux objects
   */
  readonly flux?: FleetFluxProps;
}

/**
 * A fleet's delivery settings: at most one per app, beside its {@link Cluster}s. `writeApp` writes the GitOps engines'
 * objects from it; the Fleet object itself is written nowhere.
 */
export class Fleet extends Construct {
  /** The fleet's name. */
  readonly name: string;

  constructor(scope: Construct, id: string, props: FleetProps = {}) {
    super(scope, id);
    this.name = props.name ?? id;
    const manifest: FleetInput = {
      apiVersion: API_VERSION,
      kind: FLEET_KIND,
      metadata: { name: this.name },
      spec: {
        ...(props.source && { source: props.source }),
        ...(props.argocd && { argocd: props.argocd }),
        ...(props.flux && { flux: props.flux }),
      },
    };
    const parsed = fleetSchema.safeParse(manifest, { reportInput: true });
    if (!parsed.success) throw new RenderError(issuesToProblems({ kind: FLEET_KIND, name: this.name }, parsed.error.issues, fleetSchema));
    emitManifest(this, 'Resource', { ...manifest }, true);
  }
}
