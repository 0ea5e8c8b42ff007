import * as z from 'zod';
import { condition, dnsLabel, labelMap, nodeRequirement, objectMeta, toleration } from './common.js';
import { API_VERSION, REGION_KIND } from './identity.js';

/** DeployRegion spec: a named set of nodes. */
export const deployRegionSpec = z
  .strictObject({
    matchLabels: labelMap
      .optional()
      .describe('Node labels that define the region: a node belongs to it when it carries all of them (and meets every matchExpressions requirement).'),
    matchExpressions: z
      .array(nodeRequirement)
      .optional()
      .describe('Requirements on node labels, all of them, as node affinity writes them: `zone In [a, b]`, `gpu DoesNotExist`.'),
    tolerations: z.array(toleration).optional().describe("Tolerations every pod placed in this region needs, e.g. for a tainted GPU pool's taint."),
  })
  // Checked also when another field has a problem, so that every problem is reported at once.
  .refine(
    (spec) => {
      const labels = spec.matchLabels !== null && typeof spec.matchLabels === 'object' ? Object.keys(spec.matchLabels).length : 0;
      return labels + (Array.isArray(spec.matchExpressions) ? spec.matchExpressions.length : 0) > 0;
    },
    {
      path: ['matchLabels'],
      message: 'must name at least one label (or a requirement in matchExpressions)',
      when: (payload) => payload.value !== null && typeof payload.value === 'object',
    },
  )
  .describe('Which nodes form the region.');

/** DeployRegion status, written by the agent. */
export const deployRegionStatus = z
  .object({
    observedGeneration: z.number().int().optional().describe('The spec generation this status describes.'),
    phase: z.enum(['Healthy', 'Degraded', 'Failed']).optional().describe('Health of the region as a whole.'),
    nodes: z.number().int().optional().describe('Nodes matching the region.'),
    readyNodes: z.number().int().optional().describe('Nodes that are Ready, schedulable and not tainted by the node controller.'),
    notReadyNodes: z.number().int().optional().describe('Nodes whose Ready condition is not True.'),
    unschedulableNodes: z.number().int().optional().describe('Cordoned nodes.'),
    taintedNodes: z.number().int().optional().describe('Nodes the node-lifecycle controller tainted unreachable or not-ready.'),
    failingNodes: z.number().int().optional().describe('Nodes not Ready or tainted by the node controller.'),
    message: z.string().optional().describe('Why the region has its phase.'),
    conditions: z.array(condition).optional().describe('Observations about the region, e.g. overlapping nodes.'),
  })
  .describe('What the agent observed about the region.');

/** A DeployRegion object (cluster-scoped). */
export const deployRegion = z.strictObject({
  apiVersion: z.literal(API_VERSION),
  kind: z.literal(REGION_KIND),
  metadata: objectMeta.extend({ name: dnsLabel }),
  spec: deployRegionSpec,
  status: deployRegionStatus.optional(),
});

/** A DeployRegion as written in Git (input form). */
export type DeployRegionInput = z.input<typeof deployRegion>;
/** A validated DeployRegion with defaults applied. */
export type DeployRegion = z.output<typeof deployRegion>;
/** DeployRegion status. */
export type DeployRegionStatus = z.output<typeof deployRegionStatus>;
