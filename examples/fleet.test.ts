import { mkdtempSync, readFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { ApiObject, App, Chart } from 'cdk8s';
import { run } from '../cli/run.js';
import { captured, captureOutput } from '../cli/test-support.js';
import { Cluster, DeployRegion, ExtendedDeployment, Fleet, writeApp } from '../constructs/index.js';

captureOutput();

/** Every file below `dir`, as paths relative to it, sorted. */
function tree(dir: string): string[] {
  const walk = (d: string): string[] => readdirSync(d, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(join(d, e.name)) : [join(d, e.name)]));
  return walk(dir)
    .map((f) => relative(dir, f))
    .sort();
}

const docs = (file: string) =>
  parseAllDocuments(readFileSync(file, 'utf8')).map((d) => d.toJS() as { kind: string; metadata: { name: string }; spec: Record<string, unknown> });

/** examples/fleet written with the constructs: DeployRegions, Clusters and the Fleet in one chart, the application in another. */
function fleetApp(): App {
  const app = new App();
  const platform = new Chart(app, 'regions');
  const amd64 = new DeployRegion(platform, 'amd64', { matchLabels: { 'kubernetes.io/arch': 'amd64' } });
  const arm64 = new DeployRegion(platform, 'arm64', { matchLabels: { 'kubernetes.io/arch': 'arm64' } });
  new Fleet(platform, 'prod', {
    source: { repoURL: 'https://git.example.com/platform/extended-deployment.git', targetRevision: 'main', path: 'dist' },
    argocd: { namespace: 'argocd', project: 'default' },
    flux: { namespace: 'flux-system', sourceRef: { kind: 'GitRepository', name: 'platform' }, interval: '1m' },
  });
  const canary = new Cluster(platform, 'canary-1', { regions: [amd64] });
  const eu = new Cluster(platform, 'eu-1', { labels: { geo: 'eu' }, argocd: { cluster: 'prod-eu-1' } });
  const us = new Cluster(platform, 'us-1', { labels: { geo: 'us' }, flux: { kubeConfigSecret: 'us-1-admin-kubeconfig' } });
  const shop = new Chart(app, 'web');
  new ApiObject(shop, 'namespace', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'shop' } });
  new ExtendedDeployment(shop, 'web', {
    namespace: 'shop',
    replicas: 24,
    template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'web', image: 'registry.example.com/shop/web:1.4.0' }] } },
    regions: [{ region: amd64 }, { region: arm64, overrides: { images: { web: 'registry.example.com/shop/web:1.4.0-arm64' } } }],
    clusters: [{ cluster: canary, replicas: 2, overrides: { env: { web: { CANARY: 'true' } } } }, { cluster: eu }, { cluster: us }],
    strategy: { fleet: { waves: [['canary-1'], ['eu-1', 'us-1']], minSuccessSeconds: 600 } },
  });
  return app;
}

async function render(): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'ed-fleet-'));
  expect(await run(['render', '-f', 'examples/fleet', '-o', dir])).toBe(0);
  return dir;
}

describe('examples/fleet', () => {
  it('renders into one folder per cluster and the engines’ objects', async () => {
    expect(tree(await render())).toEqual([
      'clusters/canary-1/regions.k8s.yaml',
      'clusters/canary-1/web.k8s.yaml',
      'clusters/eu-1/regions.k8s.yaml',
      'clusters/eu-1/web.k8s.yaml',
      'clusters/us-1/regions.k8s.yaml',
      'clusters/us-1/web.k8s.yaml',
      'fleet/argocd/applicationset.k8s.yaml',
      'fleet/flux/canary-1.k8s.yaml',
      'fleet/flux/eu-1.k8s.yaml',
      'fleet/flux/us-1.k8s.yaml',
    ]);
  });

  it('gives each cluster its regions and share, every member the same release, and writes no Cluster or Fleet', async () => {
    const dir = await render();
    const clusters = ['canary-1', 'eu-1', 'us-1'];
    const objects = clusters.map((c) => [...docs(join(dir, 'clusters', c, 'regions.k8s.yaml')), ...docs(join(dir, 'clusters', c, 'web.k8s.yaml'))]);
    expect(objects.map((o) => o.map((x) => `${x.kind}/${x.metadata.name}`))).toEqual([
      ['DeployRegion/amd64', 'Namespace/shop', 'ExtendedDeployment/web', 'ReplicaSet/web-amd64'],
      ['DeployRegion/amd64', 'DeployRegion/arm64', 'Namespace/shop', 'ExtendedDeployment/web', 'ReplicaSet/web-amd64', 'ReplicaSet/web-arm64'],
      ['DeployRegion/amd64', 'DeployRegion/arm64', 'Namespace/shop', 'ExtendedDeployment/web', 'ReplicaSet/web-amd64', 'ReplicaSet/web-arm64'],
    ]);
    const web = objects.map((o) => o.find((x) => x.kind === 'ExtendedDeployment')!.spec);
    expect(web.map((s) => [s['replicas'], (s['fleet'] as { cluster: string; wave: number }).cluster, (s['fleet'] as { wave: number }).wave])).toEqual([
      [2, 'canary-1', 0],
      [11, 'eu-1', 1],
      [11, 'us-1', 1],
    ]);
    const releases = new Set(web.map((s) => (s['fleet'] as { release: string }).release));
    expect(releases.size).toBe(1);
    expect([...releases][0]).toMatch(/^[0-9a-f]{10}$/);
    expect(web.every((s) => !('clusters' in s))).toBe(true);
  });

  it('renders the same bytes twice', async () => {
    const [a, b] = [await render(), await render()];
    const read = (dir: string) => tree(dir).map((f) => readFileSync(join(dir, f), 'utf8'));
    expect(read(b)).toEqual(read(a));
  });

  it('is what the constructs write for the same fleet in TypeScript', async () => {
    const synthesized = mkdtempSync(join(tmpdir(), 'ed-fleet-app-'));
    writeApp(fleetApp(), synthesized);
    const rendered = await render();
    const read = (dir: string) => new Map(tree(dir).map((f) => [f, readFileSync(join(dir, f), 'utf8')]));
    expect(read(synthesized)).toEqual(read(rendered));
  });

  it('validates', async () => {
    expect(await run(['validate', '-f', 'examples/fleet'])).toBe(0);
    expect(captured.out).toBe('8 objects valid (2 DeployRegions, 1 ExtendedDeployments, 3 Clusters)\n');
  });
});
