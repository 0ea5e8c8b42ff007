import type { RenderedExtendedDeployment } from './render.js';

/** One region of a plan: where it is headed. */
export interface RegionPlan {
  readonly name: string;
  readonly replicas: number;
  readonly revision: string;
}

/** The plan of one ExtendedDeployment. */
export interface ExtendedDeploymentPlan {
  readonly namespace: string;
  readonly name: string;
  readonly replicas: number;
  readonly rolloutRevision: string;
  readonly regions: readonly RegionPlan[];
}

/**
 * What `edctl plan --output json` prints. The shape is a contract others read: keep it stable, only add fields.
 * Regions are in declared order.
 */
export interface Plan {
  readonly extendedDeployments: readonly ExtendedDeploymentPlan[];
}

/** The target of every rendered ExtendedDeployment: per region, its replicas and revision. */
export function planOf(rendered: readonly RenderedExtendedDeployment[]): Plan {
  return {
    extendedDeployments: rendered.map((ed) => ({
      namespace: ed.ref.namespace ?? '',
      name: ed.ref.name ?? '',
      replicas: ed.replicas,
      rolloutRevision: ed.rolloutRevision,
      regions: ed.regions.map((r) => ({ name: r.name, replicas: r.replicas, revision: r.revision })),
    })),
  };
}
