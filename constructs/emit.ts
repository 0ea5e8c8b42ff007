import type { Construct } from 'constructs';
import type { RenderedDeployRegion, RenderedExtendedDeployment } from '../core/render.js';
import { emitManifest } from './manifest.js';

/** Adds a rendered ExtendedDeployment and its regional workloads under `scope`. */
export function emitRenderedExtendedDeployment(scope: Construct, rendered: RenderedExtendedDeployment): void {
  emitManifest(scope, 'Resource', rendered.manifest);
  for (const region of rendered.regions) emitManifest(scope, `region-${region.name}`, region.workload);
}

/** Adds a rendered DeployRegion under `scope`. */
export function emitRenderedDeployRegion(scope: Construct, id: string, rendered: RenderedDeployRegion): void {
  emitManifest(scope, id, rendered.manifest, true);
}
