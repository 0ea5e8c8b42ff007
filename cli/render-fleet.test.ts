import { mkdtempSync, readFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { run } from './run.js';
import { captured, captureOutput, fixture } from './test-support.js';

captureOutput();

const V = 'extendeddeployment.io/v1beta1';
const regions = `apiVersion: ${V}
kind: DeployRegion
metadata: {name: amd64}
spec: {matchLabels: {kubernetes.io/arch: amd64}}
`;
const clusters = `apiVersion: ${V}
kind: Cluster
metadata: {name: eu-1}
---
apiVersion: ${V}
kind: Cluster
metadata: {name: us-1}
`;
const web = (clustersField: string) => `apiVersion: ${V}
kind: ExtendedDeployment
metadata: {name: web, namespace: shop}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: shop/web:1}]}
  regions: [{name: amd64}]
${clustersField}`;

describe('edctl render with Cluster objects', () => {
  it('prints one cluster with --cluster', async () => {
    const dir = fixture({ 'regions.yaml': regions, 'clusters.yaml': clusters, 'web.yaml': web('  clusters: [{name: eu-1}, {name: us-1}]\n') });
    expect(await run(['render', '-f', dir, '--cluster', 'us-1'])).toBe(0);
    expect(captured.out).toContain('cluster: us-1');
    expect(captured.out).toMatch(/\n {2}replicas: 1\n/);
    expect(captured.out).not.toContain('kind: Cluster');
  });

  it('asks for -o (or --cluster) rather than print every cluster into one stream', async () => {
    const dir = fixture({ 'regions.yaml': regions, 'clusters.yaml': clusters, 'web.yaml': web('  clusters: [{name: eu-1}, {name: us-1}]\n') });
    expect(await run(['render', '-f', dir])).toBe(1);
    expect(captured.err).toBe(
      'error: these specs hold Cluster objects: the output is one folder per cluster, so give -o <dir> (or --cluster <name> to print one cluster)\n',
    );
    expect(await run(['render', '-f', dir, '--cluster', 'ap-1'])).toBe(1);
    expect(captured.err).toContain('error: --cluster ap-1: no Cluster of that name in these specs (clusters: eu-1, us-1)\n');
  });

  it('writes no fleet/ folder without a Fleet', async () => {
    const dir = fixture({ 'regions.yaml': regions, 'clusters.yaml': clusters, 'web.yaml': web('  clusters: [{name: eu-1}, {name: us-1}]\n') });
    const out = mkdtempSync(join(tmpdir(), 'edctl-out-'));
    expect(await run(['render', '-f', dir, '-o', out])).toBe(0);
    expect(readdirSync(out)).toEqual(['clusters']);
    expect(readdirSync(join(out, 'clusters'))).toEqual(['eu-1', 'us-1']);
    expect(readFileSync(join(out, 'clusters', 'eu-1', 'web.k8s.yaml'), 'utf8')).toContain('release:');
  });

  it('reports every fleet problem with its file', async () => {
    const dir = fixture({ 'regions.yaml': regions, 'clusters.yaml': clusters, 'web.yaml': web('  clusters: [{name: eu-1}, {name: eu-9}]\n') });
    expect(await run(['render', '-f', dir, '-o', mkdtempSync(join(tmpdir(), 'edctl-out-'))])).toBe(1);
    expect(captured.err).toBe(
      `error: ${join(dir, 'web.yaml')}: ExtendedDeployment shop/web: spec.clusters[1].name: "eu-9" names no Cluster of this render (clusters: eu-1, us-1)\n`,
    );
  });

  it('validate reports them too, and counts the Clusters in its report', async () => {
    const bad = fixture({ 'regions.yaml': regions, 'web.yaml': web('  clusters: [{name: eu-1}]\n') });
    expect(await run(['validate', '-f', bad])).toBe(1);
    expect(captured.err).toContain('spec.clusters: names clusters, but this render holds no Cluster object');
    const good = fixture({ 'regions.yaml': regions, 'clusters.yaml': clusters, 'web.yaml': web('  clusters: [{name: eu-1}, {name: us-1}]\n') });
    captured.out = '';
    expect(await run(['validate', '-f', good, '-o', 'json'])).toBe(0);
    expect(JSON.parse(captured.out)).toEqual({ valid: true, objects: 4, deployRegions: 1, extendedDeployments: 1, clusters: 2, problems: [] });
  });

  it('keeps --cluster to specs with Cluster objects', async () => {
    const dir = fixture({ 'regions.yaml': regions, 'web.yaml': web('') });
    expect(await run(['render', '-f', dir, '--cluster', 'eu-1'])).toBe(1);
    expect(captured.err).toBe('error: --cluster eu-1: these specs hold no Cluster object\n');
  });
});
