import type { Construct } from 'constructs';
import type { JsonObject } from '../core/overrides.js';
import type { RenderedDeployRegion, RenderedExtendedDeployment } from '../core/render.js';
import { emitManifest } from './manifest.js';

/** Adds a rendered ExtendedDeployment and its regional workloads under `scope`. */
export function emitRenderedExtendedDeployment(scope: Construct, rendered: RenderedExtendedDeployment): void {
  for (const [id, manifest] of renderedExtendedDeploymentManifests(rendered)) emitManifest(scope, id, manifest);
}

/**
 * The manifests of a rendered ExtendedDeployment, in order, each with its construct id under the ExtendedDeployment's
 * scope: `edctl render` writes the same without constructs (cli/render-charts.ts), from this one list.
 */
export function renderedExtendedDeploymentManifests(rendered: RenderedExtendedDeployment): [id: string, manifest: JsonObject][] {
  return [
    ['Resource', rendered.manifest],
    ...rendered.regions.map((region): [string, JsonObject] => [`region-${region.name}`, region.workload]),
    // Mode Replicas' Service and route (core/render.ts `traffic`): ids by kind, one of each at most.
    ...rendered.traffic.map((object): [string, JsonObject] => [`traffic-${String(object['kind']).toLowerCase()}`, object]),
  ];
}

/** Adds a rendered DeployRegion under `scope`. */
export function emitRenderedDeployRegion(scope: Construct, id: string, rendered: RenderedDeployRegion): void {
  emitManifest(scope, id, rendered.manifest, true);
}
