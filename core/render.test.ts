import { describe, expect, it } from 'vitest';
import { API_VERSION, DEFAULT_NAMESPACE } from './api/common.js';
import { formatProblem } from './problems.js';
import { renderSet, type RenderedExtendedDeployment } from './render.js';

const regions = [
  { apiVersion: API_VERSION, kind: 'DeployRegion', metadata: { name: 'amd' }, spec: { matchLabels: { 'kubernetes.io/arch': 'amd64' } } },
  { apiVersion: API_VERSION, kind: 'DeployRegion', metadata: { name: 'arm' }, spec: { matchLabels: { 'kubernetes.io/arch': 'arm64' } } },
];

/** A valid ExtendedDeployment over both regions; `metadata` replaces its metadata (so a namespace can be left out). */
function ed(metadata: { name: string; namespace?: string }, subsetType: 'ReplicaSet' | 'Deployment' = 'ReplicaSet') {
  return {
    apiVersion: API_VERSION,
    kind: 'ExtendedDeployment',
    metadata,
    spec: {
      replicas: 4,
      subsetType,
      selector: { matchLabels: { app: 'web' } },
      template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'app', image: 'shop/web:1.0' }] } },
      regions: [{ name: 'amd' }, { name: 'arm' }],
    },
  };
}

function renderOne(object: unknown): RenderedExtendedDeployment {
  const result = renderSet([...regions, object]);
  if (!result.ok) throw new Error(result.problems.map(formatProblem).join('\n'));
  const [rendered] = result.value.extendedDeployments;
  if (!rendered) throw new Error('nothing rendered');
  return rendered;
}

/** The namespace of the ExtendedDeployment manifest, then of each regional workload, as `kind/name namespace`. */
function namespaces(rendered: RenderedExtendedDeployment): string[] {
  return [rendered.manifest, ...rendered.regions.map((r) => r.workload)].map((o) => {
    const metadata = o['metadata'] as { name: string; namespace?: string };
    return `${String(o['kind'])}/${metadata.name} ${metadata.namespace ?? '(none)'}`;
  });
}

describe('renderExtendedDeployment namespaces', () => {
  it("is kubectl's default namespace", () => {
    expect(DEFAULT_NAMESPACE).toBe('default');
  });

  it.each(['ReplicaSet', 'Deployment'] as const)(
    'gives an ExtendedDeployment without a namespace, and each %s, the default namespace (GitOps tools have no fallback)',
    (subsetType) => {
      const object = ed({ name: 'web' }, subsetType);
      expect(namespaces(renderOne(object))).toEqual([
        'ExtendedDeployment/web default',
        `${subsetType}/web-amd default`,
        `${subsetType}/web-arm default`,
      ]);
      // The input is left as written: the namespace is added to the rendered copy only.
      expect(object.metadata).toEqual({ name: 'web' });
    },
  );

  it.each(['ReplicaSet', 'Deployment'] as const)('keeps the namespace an ExtendedDeployment names, on it and each %s', (subsetType) => {
    expect(namespaces(renderOne(ed({ name: 'web', namespace: 'shop' }, subsetType)))).toEqual([
      'ExtendedDeployment/web shop',
      `${subsetType}/web-amd shop`,
      `${subsetType}/web-arm shop`,
    ]);
  });
});

describe('renderSet', () => {
  it('takes an ExtendedDeployment without a namespace for the same object as one of that name in the default namespace', () => {
    const result = renderSet([...regions, ed({ name: 'web' }), ed({ name: 'web', namespace: 'default' })]);
    expect(result.ok ? [] : result.problems.map(formatProblem)).toEqual(['ExtendedDeployment default/web: metadata.name: is defined twice in this render']);
  });

  it('renders ExtendedDeployments of one name in the default namespace and another side by side', () => {
    const result = renderSet([...regions, ed({ name: 'web' }), ed({ name: 'web', namespace: 'shop' })]);
    expect(result.ok && result.value.extendedDeployments.flatMap(namespaces)).toEqual([
      'ExtendedDeployment/web default',
      'ReplicaSet/web-amd default',
      'ReplicaSet/web-arm default',
      'ExtendedDeployment/web shop',
      'ReplicaSet/web-amd shop',
      'ReplicaSet/web-arm shop',
    ]);
  });
});
