/**
 * A simulation's start from rendered objects: what Git applies (the render of the change) over what ran before.
 */
import type { PodTemplate } from '../kube/objects.js';
import type { RenderedExtendedDeployment } from '../render.js';
import { Phases } from '../rollout/reasons.js';
import type { SimulationStart } from './start.js';

/** A region before the change: the count the agent had set (undefined for a region Git creates now) and its pods. */
export interface RegionBefore {
  readonly replicas: number | undefined;
  /** Pods by revision label, all Ready and available. */
  readonly running: Readonly<Record<string, number>>;
}

/** The rendered pod template of a regional workload manifest. */
export function renderedTemplate(workload: Readonly<Record<string, unknown>>): PodTemplate | undefined {
  return (workload['spec'] as { template?: PodTemplate } | undefined)?.template;
}

/**
 * The start of the rollout to `rendered`: Git applies its manifests over `before(region)`. With `previous` (the same
 * object rendered from the base of the change), the old pods run its templates, so pods whose template differs only
 * in images can be swapped in place; without, they run an unknown earlier template and are replaced.
 */
export function startFromRender(
  rendered: RenderedExtendedDeployment,
  before: (region: string) => RegionBefore,
  previous?: RenderedExtendedDeployment,
): SimulationStart {
  return {
    extendedDeployment: rendered.manifest,
    ...(previous && {
      status: {
        observedGeneration: 1,
        phase: Phases.Healthy,
        revision: previous.rolloutRevision,
        regions: previous.regions.map((r) => ({ name: r.name, desired: r.replicas })),
      },
    }),
    regions: rendered.regions.map((r) => {
      const old = previous?.regions.find((p) => p.name === r.name);
      return { name: r.name, workload: r.workload, ...before(r.name), previousTemplate: old ? renderedTemplate(old.workload) : undefined };
    }),
  };
}
