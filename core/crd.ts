import * as z from 'zod';
import { API_GROUP, ED_KIND, ED_PLURAL, REGION_KIND, REGION_PLURAL, VERSION } from './api/identity.js';
import { deployRegionSpec, deployRegionStatus } from './api/deploy-region.js';
import { extendedDeploymentSpec, extendedDeploymentStatus } from './api/extended-deployment.js';
import { SYNC_WAVE_ANNOTATION } from './labels.js';

type Schema = { [key: string]: unknown };

/** Sync wave of the CRDs: before DeployRegions (-1) and workloads (0). */
export const CRD_SYNC_WAVE = '-2';

/**
 * The category of both kinds: `kubectl get extended-deployment` lists ExtendedDeployments and DeployRegions. kubectl
 * expands a category before it looks up resource names, so the category must differ from every plural, singular and
 * short name (a category `extendeddeployment` turned `kubectl get extendeddeployment web` into a get of both kinds).
 * Named after the project, as Crossplane (`crossplane`) and Cluster API (`cluster-api`) name theirs.
 */
export const CRD_CATEGORY = 'extended-deployment';

/**
 * Turns a zod schema into a Kubernetes structural schema: JSON Schema keywords Kubernetes does not accept are
 * dropped, int-or-string unions become `x-kubernetes-int-or-string`, and a subtree marked
 * `x-kubernetes-preserve-unknown-fields` keeps only its type and description.
 */
export function structuralSchema(schema: z.ZodType): Schema {
  const json = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Schema;
  delete json['$schema'];
  return toStructural(json);
}

function toStructural(node: Schema): Schema {
  const out: Schema = {};
  if (node['x-kubernetes-int-or-string']) {
    copy(node, out, ['description', 'default', 'maxLength', 'x-kubernetes-validations']);
    out['x-kubernetes-int-or-string'] = true;
    out['anyOf'] = [{ type: 'integer' }, { type: 'string' }];
    return out;
  }
  if (node['x-kubernetes-preserve-unknown-fields']) {
    copy(node, out, ['description', 'type']);
    out['x-kubernetes-preserve-unknown-fields'] = true;
    return out;
  }
  copy(node, out, [
    'description',
    'type',
    'default',
    'enum',
    'minimum',
    'exclusiveMinimum',
    'minLength',
    'maxLength',
    'pattern',
    'minItems',
    'maxItems',
    'minProperties',
  ]);
  if (typeof node['maximum'] === 'number' && node['maximum'] < Number.MAX_SAFE_INTEGER) out['maximum'] = node['maximum'];
  if (node['type'] === 'object') {
    const properties = node['properties'] as Record<string, Schema> | undefined;
    const additional = node['additionalProperties'];
    if (properties) {
      out['properties'] = Object.fromEntries(Object.entries(properties).map(([key, value]) => [key, toStructural(value)]));
      const required = (node['required'] as string[] | undefined)?.filter((key) => !('default' in (properties[key] ?? {})));
      if (required && required.length > 0) out['required'] = required;
    } else if (additional && typeof additional === 'object') {
      out['additionalProperties'] = toStructural(additional as Schema);
    }
  }
  if (node['type'] === 'array' && node['items']) out['items'] = toStructural(node['items'] as Schema);
  copy(node, out, ['x-kubernetes-validations']);
  return out;
}

function copy(from: Schema, to: Schema, keys: readonly string[]): void {
  for (const key of keys) if (from[key] !== undefined) to[key] = from[key];
}

interface CrdOptions {
  kind: string;
  plural: string;
  singular: string;
  shortNames: string[];
  scope: 'Namespaced' | 'Cluster';
  spec: z.ZodType;
  status: z.ZodType;
  description: string;
  printerColumns: { name: string; type: string; jsonPath: string; description: string; priority?: number }[];
  scale?: boolean;
}

function crd(options: CrdOptions): Schema {
  const subresources: Schema = { status: {} };
  if (options.scale) {
    subresources['scale'] = { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas', labelSelectorPath: '.status.labelSelector' };
  }
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${options.plural}.${API_GROUP}`, annotations: { [SYNC_WAVE_ANNOTATION]: CRD_SYNC_WAVE } },
    spec: {
      group: API_GROUP,
      names: {
        kind: options.kind,
        listKind: `${options.kind}List`,
        plural: options.plural,
        singular: options.singular,
        shortNames: options.shortNames,
        categories: [CRD_CATEGORY],
      },
      scope: options.scope,
      versions: [
        {
          name: VERSION,
          served: true,
          storage: true,
          subresources,
          additionalPrinterColumns: [
            ...options.printerColumns.filter((c) => c.priority === undefined),
            { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp', description: 'Time since creation.' },
            // Like kubectl's own -o wide columns: after Age.
            ...options.printerColumns.filter((c) => c.priority !== undefined),
          ],
          schema: {
            openAPIV3Schema: {
              type: 'object',
              description: options.description,
              required: ['spec'],
              properties: {
                apiVersion: { type: 'string', description: 'APIVersion of this object.' },
                kind: { type: 'string', description: 'Kind of this object.' },
                metadata: { type: 'object' },
                spec: structuralSchema(options.spec),
                status: structuralSchema(options.status),
              },
            },
          },
        },
      ],
    },
  };
}

/** The CustomResourceDefinitions of this project, generated from the zod schemas (never edited by hand). */
export function customResourceDefinitions(): { fileName: string; crd: Schema }[] {
  return [
    {
      fileName: `${API_GROUP}_${REGION_PLURAL}.yaml`,
      crd: crd({
        kind: REGION_KIND,
        plural: REGION_PLURAL,
        singular: REGION_KIND.toLowerCase(),
        shortNames: ['dr'],
        scope: 'Cluster',
        spec: deployRegionSpec,
        status: deployRegionStatus,
        description: 'A named set of nodes (an architecture, a zone, a GPU pool) that ExtendedDeployments place replicas in.',
        printerColumns: [
          { name: 'Phase', type: 'string', jsonPath: '.status.phase', description: 'Healthy, Degraded or Failed.' },
          { name: 'Nodes', type: 'integer', jsonPath: '.status.nodes', description: 'Nodes in the region.' },
          { name: 'Ready', type: 'integer', jsonPath: '.status.readyNodes', description: 'Nodes that can take pods.' },
        ],
      }),
    },
    {
      fileName: `${API_GROUP}_${ED_PLURAL}.yaml`,
      crd: crd({
        kind: ED_KIND,
        plural: ED_PLURAL,
        singular: ED_KIND.toLowerCase(),
        shortNames: ['ed', 'extendeddeploy'],
        scope: 'Namespaced',
        spec: extendedDeploymentSpec,
        status: extendedDeploymentStatus,
        description: 'One application spread over several DeployRegions, rolled out group by group.',
        scale: true,
        printerColumns: [
          { name: 'Phase', type: 'string', jsonPath: '.status.phase', description: 'Where the rollout stands.' },
          { name: 'Groups', type: 'string', jsonPath: '.status.groups', description: 'Current group over total groups.' },
          { name: 'Overview', type: 'string', jsonPath: '.status.overview', description: 'Pods over desired per region.' },
          // A fleet member's place, shown with -o wide: empty outside a fleet.
          { name: 'Cluster', type: 'string', jsonPath: '.spec.fleet.cluster', description: 'Fleet member cluster.', priority: 1 },
          { name: 'Wave', type: 'integer', jsonPath: '.spec.fleet.wave', description: "The member's wave.", priority: 1 },
          { name: 'Release', type: 'string', jsonPath: '.status.fleet.release', description: 'The fleet release this member completed.', priority: 1 },
          { name: 'Gate', type: 'string', jsonPath: '.status.fleet.gate.reason', description: 'Why the wave gate waits.', priority: 1 },
        ],
      }),
    },
  ];
}
