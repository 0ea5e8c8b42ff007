import * as z from 'zod';
import { dnsLabel, objectMeta } from './common.js';
import { API_VERSION, CLUSTER_KIND } from './identity.js';

/** Cluster spec: what a member cluster of a fleet has, and how the GitOps engines reach it. */
export const clusterSpec = z
  .strictObject({
    regions: z
      .array(dnsLabel)
      .max(64, { message: 'supports at most 64 regions' })
      .optional()
      .describe('The DeployRegions (by name) that exist in this cluster; only these are rendered into it. Unset: every DeployRegion of the render.'),
    argocd: z
      .strictObject({
        cluster: z
          .string()
          .min(1, { message: 'must not be empty' })
          .optional()
          .describe("The Argo CD cluster (the Application's destination.name). Unset: the Cluster's name."),
      })
      .optional()
      .describe('How Argo CD reaches this cluster.'),
    flux: z
      .strictObject({
        kubeConfigSecret: dnsLabel
          .optional()
          .describe("The Secret (in the Fleet's Flux namespace) holding this cluster's kubeconfig. Unset: `<name>-kubeconfig`."),
      })
      .optional()
      .describe('How Flux reaches this cluster.'),
  })
  .prefault({})
  .describe('What the cluster has and how the GitOps engines reach it.');

/**
 * A member cluster of a fleet (render-time only: read by `edctl render`, never applied). Its name names the folder of
 * its output, `clusters/<name>/`, its Argo CD Application and its Flux Kustomization.
 */
export const cluster = z.strictObject({
  apiVersion: z.literal(API_VERSION),
  kind: z.literal(CLUSTER_KIND),
  metadata: objectMeta.extend({ name: dnsLabel }),
  spec: clusterSpec,
});

/** A Cluster as written in Git. */
export type ClusterInput = z.input<typeof cluster>;
/** A validated Cluster with defaults applied. */
export type Cluster = z.output<typeof cluster>;
