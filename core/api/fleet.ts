import * as z from 'zod';
import { dnsLabel, objectMeta } from './common.js';
import { API_VERSION, FLEET_KIND } from './identity.js';

const nonEmpty = z.string().min(1, { message: 'must not be empty' });

/** Fleet spec: where the GitOps engines of a fleet read the rendered output from. */
export const fleetSpec = z
  .strictObject({
    source: z
      .strictObject({
        repoURL: nonEmpty.optional().describe('The Git repository holding the output (Argo CD reads it from there; needed with argocd).'),
        targetRevision: nonEmpty.default('HEAD').describe('The branch, tag or commit Argo CD syncs.'),
        path: z
          .string()
          .regex(/^[^/].*[^/]$|^[^/]$/, { message: 'must be a relative path without a leading or trailing "/"' })
          .default('dist')
          .describe('The folder `edctl render -o` writes to, relative to the repository root: each cluster syncs `<path>/clusters/<cluster>`.'),
      })
      .prefault({})
      .describe('Where the rendered output is committed.'),
    argocd: z
      .strictObject({
        namespace: dnsLabel.default('argocd').describe('Namespace of the ApplicationSet (where Argo CD runs).'),
        project: dnsLabel.default('default').describe('The Argo CD project of the Applications.'),
      })
      .optional()
      .describe('With it, the render writes `fleet/argocd/applicationset.k8s.yaml`: one Application per cluster.'),
    flux: z
      .strictObject({
        namespace: dnsLabel.default('flux-system').describe('Namespace of the Kustomizations (where Flux runs, beside the kubeconfig Secrets).'),
        sourceRef: z
          .strictObject({
            kind: z.enum(['GitRepository', 'OCIRepository', 'Bucket']).default('GitRepository').describe('Kind of the Flux source.'),
            name: dnsLabel.describe('Name of the Flux source, in the same namespace.'),
          })
          .describe('The Flux source that holds the output.'),
        interval: z
          .string()
          .regex(/^([0-9]+(\.[0-9]+)?(ms|s|m|h))+$/, { message: 'must be a Go duration like "1m" or "1h30m"' })
          .default('10m')
          .describe('How often Flux reconciles each cluster.'),
      })
      .optional()
      .describe('With it, the render writes `fleet/flux/<cluster>.k8s.yaml`: one Kustomization per cluster, applied through its kubeconfig Secret.'),
  })
  .superRefine((spec, ctx) => {
    if (spec.argocd && spec.source.repoURL === undefined) {
      ctx.addIssue({ code: 'custom', path: ['source', 'repoURL'], message: 'is required with spec.argocd: the Applications read the output from there' });
    }
  })
  .prefault({})
  .describe('Where the GitOps engines read the output from.');

/**
 * A fleet's delivery settings (render-time only: read by `edctl render`, never applied; at most one per render). Its
 * name is the fleet's, in every member's `spec.fleet.name`.
 */
export const fleet = z.strictObject({
  apiVersion: z.literal(API_VERSION),
  kind: z.literal(FLEET_KIND),
  metadata: objectMeta.extend({ name: dnsLabel }),
  spec: fleetSpec,
});

/** A Fleet as written in Git. */
export type FleetInput = z.input<typeof fleet>;
/** A validated Fleet with defaults applied. */
export type Fleet = z.output<typeof fleet>;
