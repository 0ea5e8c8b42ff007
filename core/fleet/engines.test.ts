import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { cluster as clusterSchema, type Cluster } from '../api/cluster.js';
import { fleet as fleetSchema } from '../api/fleet.js';
import { argocdApplicationSet } from './argocd.js';
import { EXTENDED_DEPLOYMENT_HEALTH, fluxKustomizations, REPLICASET_HEALTH } from './flux.js';

const V = 'extendeddeployment.io/v1beta1';
const clusters: Cluster[] = [
  clusterSchema.parse({ apiVersion: V, kind: 'Cluster', metadata: { name: 'canary-1' } }),
  clusterSchema.parse({
    apiVersion: V,
    kind: 'Cluster',
    metadata: { name: 'eu-1' },
    spec: { argocd: { cluster: 'prod-eu' }, flux: { kubeConfigSecret: 'eu-admin' } },
  }),
];
const fleet = fleetSchema.parse({
  apiVersion: V,
  kind: 'Fleet',
  metadata: { name: 'prod' },
  spec: {
    source: { repoURL: 'https://git.example.com/p.git', targetRevision: 'main', path: 'out/prod' },
    argocd: {},
    flux: { sourceRef: { name: 'platform' }, interval: '1m' },
  },
});

describe('argocdApplicationSet', () => {
  it('lists every cluster with its Argo CD cluster and folder, and syncs each automatically without RollingSync', () => {
    const set = argocdApplicationSet(fleet, clusters) as { metadata: unknown; spec: Record<string, unknown> };
    expect(set.metadata).toEqual({ name: 'prod', namespace: 'argocd' });
    expect(set.spec['goTemplate']).toBe(true);
    expect(set.spec['generators']).toEqual([
      {
        list: {
          elements: [
            { cluster: 'canary-1', destination: 'canary-1', path: 'out/prod/clusters/canary-1' },
            { cluster: 'eu-1', destination: 'prod-eu', path: 'out/prod/clusters/eu-1' },
          ],
        },
      },
    ]);
    expect(set.spec['template']).toMatchObject({
      spec: {
        project: 'default',
        source: { repoURL: 'https://git.example.com/p.git', targetRevision: 'main', path: '{{ .path }}' },
        destination: { name: '{{ .destination }}' },
        syncPolicy: { automated: { prune: true, selfHeal: true } },
      },
    });
    expect(set.spec).not.toHaveProperty('strategy');
  });

  it('is none without spec.argocd', () => {
    expect(argocdApplicationSet({ ...fleet, spec: { source: fleet.spec.source } }, clusters)).toBeUndefined();
  });
});

describe('fluxKustomizations', () => {
  it('gives each cluster a Kustomization of its folder through its kubeconfig Secret', () => {
    const [canary, eu] = fluxKustomizations(fleet, clusters);
    expect(canary?.cluster).toBe('canary-1');
    expect(canary?.kustomization).toMatchObject({
      apiVersion: 'kustomize.toolkit.fluxcd.io/v1',
      kind: 'Kustomization',
      metadata: { name: 'prod-canary-1', namespace: 'flux-system' },
      spec: { interval: '1m', path: './out/prod/clusters/canary-1', prune: true, sourceRef: { kind: 'GitRepository', name: 'platform' } },
    });
    expect((canary?.kustomization['spec'] as { kubeConfig: unknown }).kubeConfig).toEqual({ secretRef: { name: 'canary-1-kubeconfig' } });
    expect((eu?.kustomization['spec'] as { kubeConfig: unknown }).kubeConfig).toEqual({ secretRef: { name: 'eu-admin' } });
  });

  it('checks health with the expressions of examples/gitops/flux-kustomization.yaml', () => {
    const docs = parseAllDocuments(readFileSync('examples/gitops/flux-kustomization.yaml', 'utf8')).map(
      (d) => d.toJS() as { spec?: { healthCheckExprs?: unknown[] } },
    );
    const example = docs.flatMap((d) => d.spec?.healthCheckExprs ?? []);
    expect(example).toEqual([EXTENDED_DEPLOYMENT_HEALTH, REPLICASET_HEALTH]);
    const spec = fluxKustomizations(fleet, clusters)[0]?.kustomization['spec'] as { healthCheckExprs: unknown };
    expect(spec.healthCheckExprs).toEqual(example);
  });

  it('is none without spec.flux', () => {
    expect(fluxKustomizations({ ...fleet, spec: { source: fleet.spec.source } }, clusters)).toEqual([]);
  });
});
