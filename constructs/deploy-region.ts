import { Construct } from 'constructs';
import { API_VERSION, REGION_KIND } from '../core/api/identity.js';
import type { DeployRegionInput } from '../core/api/deploy-region.js';
import { renderDeployRegion } from '../core/render.js';
import { emitManifest } from './manifest.js';
import { parsedRegions } from './parsed-regions.js';
import type { LabelSelectorRequirement, Toleration } from './props.js';
import { RenderError } from './render-error.js';

/** Props of a {@link DeployRegion}. */
export interface DeployRegionProps {
  /**
   * Region name (cluster-wide, a DNS label).
   * @default the construct id
   */
  readonly name?: string;
  /**
   * Node labels that define the region: a node belongs to it when it carries all of them (and meets every
   * `matchExpressions` requirement). At least one label or one requirement.
   * @default none
   */
  readonly matchLabels?: Record<string, string>;
  /**
   * Requirements on node labels, all of them, as node affinity writes them: `zone In [a, b]` for several zones,
   * `gpu DoesNotExist` for every node outside the GPU pool.
   * @default none
   */
  readonly matchExpressions?: LabelSelectorRequirement[];
  /**
   * Tolerations every pod placed in this region needs, e.g. for a tainted GPU pool.
   * @default none
   */
  readonly tolerations?: Toleration[];
  /**
   * Labels of the DeployRegion object itself.
   * @default none
   */
  readonly labels?: Record<string, string>;
}

/**
 * A named set of nodes: an architecture, a zone, a GPU pool. ExtendedDeployments take references to these
 * constructs, so a region that does not exist cannot be named.
 */
export class DeployRegion extends Construct {
  /** The region's name. */
  readonly name: string;

  constructor(scope: Construct, id: string, props: DeployRegionProps) {
    super(scope, id);
    this.name = props.name ?? id;
    const manifest: DeployRegionInput = {
      apiVersion: API_VERSION,
      kind: REGION_KIND,
      metadata: { name: this.name, ...(props.labels && { labels: props.labels }) },
      spec: {
        ...(props.matchLabels && { matchLabels: props.matchLabels }),
        ...(props.matchExpressions && { matchExpressions: props.matchExpressions }),
        ...(props.tolerations && { tolerations: props.tolerations }),
      },
    };
    const rendered = renderDeployRegion(manifest);
    if (!rendered.ok) throw new RenderError(rendered.problems);
    parsedRegions.set(this, rendered.value.parsed);
    emitManifest(this, 'Resource', rendered.value.manifest, true);
  }
}
