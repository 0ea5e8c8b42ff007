import { describe, expect, it } from 'vitest';
import { extendedDeploymentSpec } from './api/extended-deployment.js';
import { customResourceDefinitions } from './crd.js';

type Schema = { [key: string]: unknown };
const crds = customResourceDefinitions();
const version = (kind: string) => {
  const crd = crds.find((c) => (c.crd['spec'] as { names: { kind: string } }).names.kind === kind)?.crd as { spec: { versions: Schema[] } };
  return crd.spec.versions[0] as {
    schema: { openAPIV3Schema: Schema };
    subresources: Schema;
    additionalPrinterColumns: { name: string; jsonPath: string; priority?: number }[];
  };
};

/** Walks a schema, calling `visit` with each node and its path. */
function walk(node: Schema, path: string, visit: (node: Schema, path: string) => void): void {
  visit(node, path);
  for (const [key, child] of Object.entries((node['properties'] ?? {}) as Record<string, Schema>)) walk(child, `${path}.${key}`, visit);
  if (node['items']) walk(node['items'] as Schema, `${path}[]`, visit);
  if (node['additionalProperties'] && typeof node['additionalProperties'] === 'object') walk(node['additionalProperties'] as Schema, `${path}{}`, visit);
}

/** Applies structural-schema defaults the way the API server does: a missing field with a default gets it, then its children are defaulted. */
function applyDefaults(node: Schema, value: unknown): unknown {
  if (node['type'] !== 'object' || value === null || typeof value !== 'object') {
    if (node['type'] === 'array' && Array.isArray(value) && node['items']) return value.map((v) => applyDefaults(node['items'] as Schema, v));
    return value;
  }
  const out: Record<string, unknown> = { ...(value as Record<string, unknown>) };
  for (const [key, child] of Object.entries((node['properties'] ?? {}) as Record<string, Schema>)) {
    if (out[key] === undefined && child['default'] !== undefined) out[key] = structuredClone(child['default']);
    if (out[key] !== undefined) out[key] = applyDefaults(child, out[key]);
  }
  return out;
}

describe('generated CRDs', () => {
  it.each(['DeployRegion', 'ExtendedDeployment'])('%s has a structural schema: every node typed, no JSON Schema keywords Kubernetes rejects', (kind) => {
    const problems: string[] = [];
    walk(version(kind).schema.openAPIV3Schema, '', (node, path) => {
      const special = node['x-kubernetes-int-or-string'] === true || node['x-kubernetes-preserve-unknown-fields'] === true;
      if (!special && typeof node['type'] !== 'string') problems.push(`${path}: no type`);
      for (const key of ['$ref', '$schema', 'const', 'propertyNames', 'oneOf', 'allOf', 'not']) if (key in node) problems.push(`${path}: ${key}`);
      if ('anyOf' in node && node['x-kubernetes-int-or-string'] !== true) problems.push(`${path}: anyOf`);
      if (node['additionalProperties'] === false) problems.push(`${path}: additionalProperties false`);
      if (node['properties'] && node['additionalProperties']) problems.push(`${path}: properties and additionalProperties`);
      if (path !== '.spec.template' && path.startsWith('.spec.template.')) problems.push(`${path}: inside the preserved template`);
    });
    expect(problems).toEqual([]);
  });

  it('defaults the whole strategy exactly as the zod schema does, even when strategy is omitted', () => {
    const spec = {
      selector: { matchLabels: { app: 'a' } },
      template: { metadata: { labels: { app: 'a' } }, spec: { containers: [{ name: 'a', image: 'a' }] } },
      regions: [{ name: 'r', replicas: 1 }],
    };
    const specSchema = (version('ExtendedDeployment').schema.openAPIV3Schema['properties'] as Record<string, Schema>)['spec'] as Schema;
    const byApiServer = applyDefaults(specSchema, spec) as { strategy: unknown; historyLimit: unknown; subsetType: unknown };
    const byZod = extendedDeploymentSpec.parse(spec);
    expect(byApiServer.strategy).toEqual(byZod.strategy);
    expect(byApiServer.historyLimit).toBe(5);
    expect(byApiServer.subsetType).toBe('ReplicaSet');
    expect(byZod.strategy).toMatchObject({
      batchSize: 1,
      minReadySeconds: 5,
      rolloutStrategy: 'Beta',
      syncWaitTimeout: 0,
      updateStrategy: { type: 'ReCreate', gracePeriodSeconds: 5 },
    });
  });

  it('ExtendedDeployment has status and scale subresources, so an HPA can scale it', () => {
    expect(version('ExtendedDeployment').subresources).toEqual({
      status: {},
      scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas', labelSelectorPath: '.status.labelSelector' },
    });
    expect(version('DeployRegion').subresources).toEqual({ status: {} });
  });

  it("prints phase, groups, overview and age for kubectl get ed, and a fleet member's place with -o wide", () => {
    expect(version('ExtendedDeployment').additionalPrinterColumns.map((c) => `${c.name}=${c.jsonPath}${c.priority === 1 ? ' (wide)' : ''}`)).toEqual([
      'Phase=.status.phase',
      'Groups=.status.groups',
      'Overview=.status.overview',
      'Age=.metadata.creationTimestamp',
      'Cluster=.spec.fleet.cluster (wide)',
      'Wave=.spec.fleet.wave (wide)',
      'Release=.status.fleet.release (wide)',
      'Gate=.status.fleet.gate.reason (wide)',
    ]);
  });

  it('shares one category that is no name of either kind, so kubectl get <singular> NAME finds one kind (kubectl expands categories first)', () => {
    const names = crds.map((c) => (c.crd['spec'] as { names: { plural: string; singular: string; shortNames: string[]; categories: string[] } }).names);
    const resourceNames = names.flatMap((n) => [n.plural, n.singular, ...n.shortNames]);
    const categories = [...new Set(names.flatMap((n) => n.categories))];
    expect(categories).toHaveLength(1);
    expect(names.map((n) => n.categories)).toEqual([categories, categories]);
    expect(resourceNames).not.toContain(categories[0]);
    expect(categories[0]).toMatch(/^[a-z]([-a-z0-9]*[a-z0-9])?$/); // the API server requires a DNS-1035 label
  });

  it('carries CEL rules for cross-field checks the API server can make', () => {
    const spec = (version('ExtendedDeployment').schema.openAPIV3Schema['properties'] as Record<string, Schema>)['spec'] as Schema;
    const rules = (spec['x-kubernetes-validations'] as { message: string }[]).map((r) => r.message);
    expect(rules).toEqual([
      'region names must be unique',
      'cluster names must be unique',
      'every overriders entry must name a region of spec.regions',
      'percentage replicas need spec.replicas',
      'in-place updates need subsetType ReplicaSet or InplaceSet',
      'spec.statefulSet needs subsetType StatefulSet',
      'StatefulSet regions are replaced one pod at a time by the StatefulSet controller: updateStrategy.type must be ReCreate',
      "StatefulSet regions take no partition: the agent owns the StatefulSet's own",
    ]);
    const replicas = ((((spec['properties'] as Record<string, Schema>)['regions'] as Schema)['items'] as Schema)['properties'] as Record<string, Schema>)[
      'replicas'
    ] as Schema;
    expect(replicas['x-kubernetes-int-or-string']).toBe(true);
    expect(JSON.stringify(replicas['x-kubernetes-validations'])).toContain("self.matches('^(100|[1-9]?[0-9])%$')");
  });
});

describe('immutable fields', () => {
  it.each(['selector', 'subsetType'])('spec.%s carries a transition rule', (field) => {
    const spec = (version('ExtendedDeployment').schema.openAPIV3Schema['properties'] as Record<string, Schema>)['spec'] as Schema;
    const node = (spec['properties'] as Record<string, Schema>)[field] as Schema;
    expect(node['x-kubernetes-validations']).toEqual([{ rule: 'self == oldSelf', message: `spec.${field} is immutable` }]);
  });
});

describe('CEL cost', () => {
  it('bounds every int-or-string field that runs a CEL rule, or the API server rejects the CRD for its cost', () => {
    const unbounded: string[] = [];
    walk(version('ExtendedDeployment').schema.openAPIV3Schema, '', (node, path) => {
      if (node['x-kubernetes-int-or-string'] && node['x-kubernetes-validations'] && typeof node['maxLength'] !== 'number') unbounded.push(path);
    });
    expect(unbounded).toEqual([]);
  });
});
