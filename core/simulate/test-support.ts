/**
 * Simulations for tests that think in revisions rather than renders: an ExtendedDeployment (validated) whose regions
 * run pods of named revisions and roll to a named target revision.
 */
import { API_VERSION, REGION_KIND } from '../api/identity.js';
import { deployRegion, type DeployRegion } from '../api/deploy-region.js';
import type { ExtendedDeployment } from '../api/extended-deployment.js';
import type { ExtendedDeploymentObject } from '../kube/objects.js';
import { REGION_LABEL, REVISION_LABEL, REVISIONS_ANNOTATION, ROLLOUT_REVISION_ANNOTATION } from '../labels.js';
import { renderExtendedDeployment } from '../render.js';
import type { SimWorkload } from './cluster.js';
import { simulateRollout, type Simulation, type SimulationOptions } from './simulate.js';
import type { SimulationStart } from './start.js';

/** A region at the start of a simulation. */
export interface SimulatedRegion {
  readonly name: string;
  readonly desired: number;
  readonly targetRevision: string;
  /** Pods running when the rollout starts, by revision (all Ready). */
  readonly running: Readonly<Record<string, number>>;
  /** When the region's old pods can be swapped in place: the images (per container) of the target they differ in. */
  readonly swappable?: Readonly<Record<string, string>> | undefined;
  /** The workload's spec.replicas: the running pods unless set; `undefined` for a workload Git has just created. */
  readonly replicas?: number | undefined;
}

/**
 * The start of a rollout of `ed` (as rendered, with every region's target revision named `targetRevision` and the
 * rollout revision `rolloutRevision`) from the pods `regions` run. Old pods run the target template with the
 * `swappable` containers at another image (so they can be swapped in place), or only their revision label different.
 */
export function startOf(ed: ExtendedDeployment, rolloutRevision: string, regions: readonly SimulatedRegion[]): SimulationStart {
  const deployRegions = new Map<string, DeployRegion>(
    regions.map((r) => [
      r.name,
      deployRegion.parse({ apiVersion: API_VERSION, kind: REGION_KIND, metadata: { name: r.name }, spec: { matchLabels: { [REGION_LABEL]: r.name } } }),
    ]),
  );
  const rendered = renderExtendedDeployment(ed, deployRegions);
  if (!rendered.ok) throw new Error(`test ExtendedDeployment does not render: ${JSON.stringify(rendered.problems)}`);
  const revisions = Object.fromEntries(regions.map((r) => [r.name, r.targetRevision]));
  const manifest = rendered.value.manifest as ExtendedDeploymentObject;
  const annotations = { ...manifest.metadata?.annotations, [REVISIONS_ANNOTATION]: JSON.stringify(revisions), [ROLLOUT_REVISION_ANNOTATION]: rolloutRevision };
  return {
    extendedDeployment: { ...manifest, metadata: { ...manifest.metadata, annotations } },
    regions: regions.map((r) => {
      const workload = rendered.value.regions.find((w) => w.name === r.name)?.workload as SimWorkload;
      const template = workload.spec?.template ?? {};
      const target = { ...template, metadata: { ...template.metadata, labels: { ...template.metadata?.labels, [REVISION_LABEL]: r.targetRevision } } };
      const swappable = r.swappable ?? {};
      const previous = {
        ...target,
        spec: {
          ...target.spec,
          containers: (target.spec?.containers ?? []).map((c) => (swappable[c.name] === undefined ? c : { ...c, image: `${c.image ?? ''}-previous` })),
        },
      };
      const replicas = 'replicas' in r ? r.replicas : Object.values(r.running).reduce((a, b) => a + b, 0);
      return {
        name: r.name,
        workload: { ...workload, spec: { ...workload.spec, template: target } },
        replicas,
        running: r.running,
        previousTemplate: previous,
      };
    }),
  };
}

/** simulateRollout from startOf; `start` overrides what startOf leaves to the defaults. */
export function simulateFrom(
  ed: ExtendedDeployment,
  rolloutRevision: string,
  regions: readonly SimulatedRegion[],
  options?: SimulationOptions,
  start: Pick<SimulationStart, 'standingMarks'> = {},
): Simulation {
  return simulateRollout({ ...startOf(ed, rolloutRevision, regions), ...start }, options);
}
