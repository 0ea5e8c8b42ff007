/**
 * The project's API identity: group, version, kinds and plurals, spelled once. The CRDs, the RBAC the constructs
 * render, the agent's informers and writers and the CLI's clients all read them from here.
 */

/** The API group of every kind this project defines. */
export const API_GROUP = 'extendeddeployment.io';
/** The one served version. */
export const VERSION = 'v1beta1';
/** `group/version`, as objects carry it in apiVersion. */
export const API_VERSION = `${API_GROUP}/${VERSION}`;

/** Kind of the workload users write. */
export const ED_KIND = 'ExtendedDeployment';
/** Plural of ExtendedDeployment (REST path, CustomObjectsApi, RBAC resource). */
export const ED_PLURAL = 'extendeddeployments';
/** Kind of a node partition. */
export const REGION_KIND = 'DeployRegion';
/** Plural of DeployRegion. */
export const REGION_PLURAL = 'deployregions';
/**
 * Kind of the upstream operator's regional workload (same API group). This project serves no such kind: an
 * ExtendedDeployment with `subsetType: InplaceSet` renders a ReplicaSet with in-place updates on instead.
 */
export const UPSTREAM_INPLACESET_KIND = 'InplaceSet';
/** Plural of the upstream InplaceSet: a region may adopt one's pods once the upstream operator is uninstalled (core/adoption). */
export const UPSTREAM_INPLACESET_PLURAL = 'inplacesets';
/**
 * Kind of a member cluster of a fleet. Render-time only: `edctl render` reads Cluster objects to lay its output out per
 * cluster and never emits them, so no cluster serves the kind (no CRD).
 */
export const CLUSTER_KIND = 'Cluster';
/** Kind of a fleet's delivery settings (where Argo CD or Flux read the output from). Render-time only, like Cluster. */
export const FLEET_KIND = 'Fleet';
