import { mkdtempSync, readFileSync, readdirSync, writeFileSync, cpSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { ReplicaSet } from 'kubernetes-models/apps/v1/ReplicaSet';
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { appFromFiles } from '../cli/render-files.js';
import { appYaml, writeApp } from '../constructs/synth.js';
import { examplesApp } from './app.js';

function synthTo(dir: string): Map<string, string> {
  writeApp(examplesApp(), dir);
  return new Map(
    readdirSync(dir)
      .sort()
      .map((f) => [f, readFileSync(join(dir, f), 'utf8')]),
  );
}

function docs(text: string): Record<string, unknown>[] {
  return parseAllDocuments(text).map((d) => d.toJS() as Record<string, unknown>);
}

const tmp = () => mkdtempSync(join(tmpdir(), 'ed-examples-'));

describe('examples', () => {
  it('synthesize byte-identically twice', () => {
    const first = synthTo(tmp());
    const second = synthTo(tmp());
    expect([...first.keys()]).toEqual([
      'agent-install.k8s.yaml',
      'gpu-inference.k8s.yaml',
      'multi-arch-web.k8s.yaml',
      'regions.k8s.yaml',
      'session-store.k8s.yaml',
      'upstream-sample.k8s.yaml',
      'zonal-api.k8s.yaml',
    ]);
    expect(second).toEqual(first);
  });

  it('match the committed dist/ exactly', () => {
    const fresh = synthTo(tmp());
    const committed = new Map(
      readdirSync('dist')
        .sort()
        .map((f) => [f, readFileSync(join('dist', f), 'utf8')]),
    );
    expect(committed).toEqual(fresh);
  });

  it('render every workload valid against the Kubernetes OpenAPI schema', () => {
    let checked = 0;
    for (const text of synthTo(tmp()).values()) {
      for (const object of docs(text)) {
        if (object['kind'] === 'ReplicaSet') new ReplicaSet(object).validate();
        else if (object['kind'] === 'Deployment') new Deployment(object).validate();
        else continue;
        checked++;
      }
    }
    expect(checked).toBe(10);
  });

  it('never emit spec.replicas on a regional workload, nor cdk8s-plus defaults the user did not write', () => {
    for (const text of synthTo(tmp()).values()) {
      for (const object of docs(text).filter((o) => o['kind'] === 'ReplicaSet')) {
        const spec = object['spec'] as Record<string, unknown>;
        expect(spec).not.toHaveProperty('replicas');
        const pod = (spec['template'] as { spec: Record<string, unknown> }).spec;
        for (const key of ['automountServiceAccountToken', 'securityContext', 'dnsPolicy', 'terminationGracePeriodSeconds', 'restartPolicy']) {
          expect(pod).not.toHaveProperty(key);
        }
        for (const c of pod['containers'] as Record<string, unknown>[]) {
          expect(c).not.toHaveProperty('securityContext');
          expect(c).not.toHaveProperty('startupProbe');
        }
      }
    }
  });

  it('upstream sample: plain YAML through edctl render gives the same objects as the construct', () => {
    const constructDocs = docs(synthTo(tmp()).get('upstream-sample.k8s.yaml') ?? '');
    const yamlDocs = docs(appYaml(appFromFiles(['examples/upstream-sample/extendeddeployment.yaml', 'examples/upstream-sample/deployregions.yaml']))).filter(
      (o) => o['kind'] !== 'DeployRegion',
    );
    expect(yamlDocs).toEqual(constructDocs);
    // The sample names no namespace; both paths write the default one, which GitOps tools need spelled out.
    const metadata = (o: Record<string, unknown>) => o['metadata'] as { name: string; namespace?: string };
    expect(constructDocs.map((o) => `${String(o['kind'])} ${String(metadata(o).namespace)}/${metadata(o).name}`)).toEqual([
      'ExtendedDeployment default/extendeddeployment-sample',
      'ReplicaSet default/extendeddeployment-sample-region1',
      'ReplicaSet default/extendeddeployment-sample-region2',
    ]);
  });

  it('upstream sample: region1 runs busybox, region2 alpine, both gated for in-place', () => {
    const [, region1, region2] = docs(synthTo(tmp()).get('upstream-sample.k8s.yaml') ?? '') as {
      spec: { template: { spec: { containers: { image: string }[]; readinessGates: unknown[] } } };
    }[];
    expect(region1?.spec.template.spec.containers[0]?.image).toBe('busybox');
    expect(region2?.spec.template.spec.containers[0]?.image).toBe('alpine');
    expect(region1?.spec.template.spec.readinessGates).toEqual([{ conditionType: 'InPlaceUpdateReady' }]);
  });

  it('a one-line image change touches only that ExtendedDeployment, and only its image and revision lines', () => {
    const src = tmp();
    cpSync('examples/upstream-sample', src, { recursive: true });
    const other = join(src, 'other.yaml');
    const otherText = readFileSync(join(src, 'extendeddeployment.yaml'), 'utf8').replace('name: extendeddeployment-sample', 'name: other-app');
    // Its own labels: two ExtendedDeployments selecting each other's pods are invalid.
    writeFileSync(other, otherText.replaceAll('app: test', 'app: other'));
    const before = tmp();
    writeApp(appFromFiles([src]), before);
    const file = join(src, 'extendeddeployment.yaml');
    const source = readFileSync(file, 'utf8');
    const changed = source.replace('          image: alpine\n', '          image: alpine:3.20\n');
    expect(changed.split('\n').filter((line, i) => line !== source.split('\n')[i])).toHaveLength(1);
    writeFileSync(file, changed);
    const after = tmp();
    writeApp(appFromFiles([src]), after);

    const changedFiles = readdirSync(before).filter((f) => readFileSync(join(before, f), 'utf8') !== readFileSync(join(after, f), 'utf8'));
    expect(changedFiles).toEqual(['extendeddeployment.k8s.yaml']);
    const a = readFileSync(join(before, 'extendeddeployment.k8s.yaml'), 'utf8').split('\n');
    const b = readFileSync(join(after, 'extendeddeployment.k8s.yaml'), 'utf8').split('\n');
    expect(b).toHaveLength(a.length);
    const diff = b.filter((line, i) => line !== a[i]).map((line) => line.trim().replace(/[0-9a-f]{10}/g, '<hash>'));
    expect(diff).toEqual([
      `extendeddeployment.io/revisions: '{"region1":"<hash>","region2":"<hash>"}'`,
      'extendeddeployment.io/rollout-revision: <hash>',
      'image: alpine:3.20',
      'extendeddeployment.io/revision: <hash>',
      'image: alpine:3.20',
    ]);
  });
});
