import { mkdtempSync, readFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { App, Chart } from 'cdk8s';
import { parseAllDocuments } from 'yaml';
import { describe, expect, it } from 'vitest';
import { AgentInstall, type AgentInstallProps } from './agent-install.js';
import { Cluster } from './cluster.js';
import { DeployRegion } from './deploy-region.js';
import { ExtendedDeployment } from './extended-deployment.js';
import { Fleet } from './fleet.js';
import { RenderError } from './render-error.js';
import { writeApp } from './synth.js';

/** A fleet of three clusters, one of them with amd64 nodes only. */
function fleetApp(): { app: App; web: ExtendedDeployment } {
  const app = new App();
  const chart = new Chart(app, 'c');
  const amd64 = new DeployRegion(chart, 'amd64', { matchLabels: { 'kubernetes.io/arch': 'amd64' } });
  const arm64 = new DeployRegion(chart, 'arm64', { matchLabels: { 'kubernetes.io/arch': 'arm64' } });
  new Fleet(chart, 'prod', { source: { repoURL: 'https://git.example.com/p.git' }, argocd: {}, flux: { sourceRef: { name: 'platform' } } });
  const canary = new Cluster(chart, 'canary-1', { regions: [amd64] });
  const eu = new Cluster(chart, 'eu-1');
  const us = new Cluster(chart, 'us-1');
  const web = new ExtendedDeployment(chart, 'web', {
    replicas: 24,
    template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'web', image: 'shop/web:1' }] } },
    regions: [{ region: amd64 }, { region: arm64 }],
    clusters: [{ cluster: canary, replicas: 2 }, { cluster: eu }, { cluster: us }],
  });
  return { app, web };
}

function files(dir: string): Map<string, string> {
  const walk = (d: string): string[] => readdirSync(d, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(join(d, e.name)) : [join(d, e.name)]));
  return new Map(
    walk(dir)
      .map((f) => [relative(dir, f), readFileSync(f, 'utf8')] as const)
      .sort(([a], [b]) => a.localeCompare(b)),
  );
}

const tmp = () => mkdtempSync(join(tmpdir(), 'ed-fleet-app-'));

describe('a fleet app', () => {
  it('writes each cluster its objects and the engines their objects, and no Cluster or Fleet', () => {
    const dir = tmp();
    writeApp(fleetApp().app, dir);
    const written = files(dir);
    expect([...written.keys()]).toEqual([
      'clusters/canary-1/c.k8s.yaml',
      'clusters/eu-1/c.k8s.yaml',
      'clusters/us-1/c.k8s.yaml',
      'fleet/argocd/applicationset.k8s.yaml',
      'fleet/flux/canary-1.k8s.yaml',
      'fleet/flux/eu-1.k8s.yaml',
      'fleet/flux/us-1.k8s.yaml',
    ]);
    const canary = written.get('clusters/canary-1/c.k8s.yaml') ?? '';
    expect(canary).not.toMatch(/kind: (Cluster|Fleet)\n/);
    expect(canary).not.toContain('arm64');
    expect(canary).toContain('release: ');
  });

  it("tells each member's render by cluster", () => {
    const { web } = fleetApp();
    expect(web.members.map((m) => [m.cluster, m.rendering.replicas, m.rendering.regions.map((r) => r.name)])).toEqual([
      ['canary-1', 2, ['amd64']],
      ['eu-1', 11, ['amd64', 'arm64']],
      ['us-1', 11, ['amd64', 'arm64']],
    ]);
    expect(web.rendered.replicas).toBe(24);
  });

  it('fails at the construct with every problem of the split', () => {
    const app = new App();
    const chart = new Chart(app, 'c');
    const amd64 = new DeployRegion(chart, 'amd64', { matchLabels: { 'kubernetes.io/arch': 'amd64' } });
    const arm64 = new DeployRegion(chart, 'arm64', { matchLabels: { 'kubernetes.io/arch': 'arm64' } });
    const canary = new Cluster(chart, 'canary-1', { regions: [amd64] });
    const build = () =>
      new ExtendedDeployment(chart, 'web', {
        replicas: 2,
        template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'web', image: 'x' }] } },
        regions: [{ region: arm64 }],
        clusters: [{ cluster: canary, replicas: 3 }],
      });
    let error: unknown;
    try {
      build();
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(RenderError);
    expect((error as RenderError).message).toContain('spec.clusters[0].name: cluster "canary-1" has none of the regions of spec.regions');
    expect((error as RenderError).message).toContain('spec.regions[0].name: DeployRegion "arm64" is in no cluster of spec.clusters');
    expect((error as RenderError).message).toContain('spec.clusters: integer replicas add up to 3, more than spec.replicas (2)');
  });

  describe('with an AgentInstall', () => {
    const withAgent = (props: Partial<AgentInstallProps> = {}) => {
      const { app } = fleetApp();
      new AgentInstall(new Chart(app, 'agent-install'), 'agent', { image: 'edctl:1', ...props });
      const dir = tmp();
      writeApp(app, dir);
      return files(dir);
    };
    type Pod = { volumes: { projected: { sources: { secret: { name: string } }[] } }[]; containers: { args: string[] }[] };

    it("gives each member's copy its cluster and the other members as peers", () => {
      const written = withAgent();
      expect(
        ['canary-1', 'eu-1', 'us-1'].map((c) => {
          const objects = parseAllDocuments(written.get(`clusters/${c}/agent-install.k8s.yaml`) ?? '').map((d) => d.toJS());
          const pod = (objects.find((o: { kind: string }) => o.kind === 'Deployment') as { spec: { template: { spec: Pod } } }).spec.template.spec;
          return [pod.containers[0]?.args.slice(-2), pod.volumes[0]?.projected.sources.map((s) => s.secret.name)];
        }),
      ).toEqual([
        [
          ['--cluster-name=canary-1', '--peer-kubeconfigs=/etc/extended-deployment/peers'],
          ['extendeddeployment-peer-eu-1', 'extendeddeployment-peer-us-1'],
        ],
        [
          ['--cluster-name=eu-1', '--peer-kubeconfigs=/etc/extended-deployment/peers'],
          ['extendeddeployment-peer-canary-1', 'extendeddeployment-peer-us-1'],
        ],
        [
          ['--cluster-name=us-1', '--peer-kubeconfigs=/etc/extended-deployment/peers'],
          ['extendeddeployment-peer-canary-1', 'extendeddeployment-peer-eu-1'],
        ],
      ]);
    });

    it('refuses one given the membership of a single member', () => {
      expect(() => withAgent({ fleet: { cluster: 'eu-1', peers: ['canary-1', 'us-1'] } })).toThrow(
        /containers\[0\]\.args: names cluster "eu-1" \(--cluster-name\), but is rendered into cluster canary-1/,
      );
    });
  });

  it('keeps the flat layout without Cluster constructs', () => {
    const app = new App();
    const chart = new Chart(app, 'c');
    const amd64 = new DeployRegion(chart, 'amd64', { matchLabels: { 'kubernetes.io/arch': 'amd64' } });
    new ExtendedDeployment(chart, 'web', {
      replicas: 2,
      template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'web', image: 'x' }] } },
      regions: [{ region: amd64 }],
    });
    const dir = tmp();
    writeApp(app, dir);
    expect([...files(dir).keys()]).toEqual(['c.k8s.yaml']);
  });
});
