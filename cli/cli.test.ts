import { mkdtempSync, readFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { run } from './run.js';
import { captured, captureOutput, fixture, regions, sample } from './test-support.js';

captureOutput();

describe('edctl plan', () => {
  it('prints the stable JSON shape, regions in declared order', async () => {
    expect(await run(['plan', '-f', 'examples/upstream-sample', '--output', 'json'])).toBe(0);
    const plan = JSON.parse(captured.out) as {
      extendedDeployments: { namespace: string; name: string; regions: { name: string; replicas: number; revision: string }[] }[];
    };
    expect(plan.extendedDeployments).toHaveLength(1);
    const [ed] = plan.extendedDeployments;
    // The sample names no namespace: it is rendered into, and planned for, the default one.
    expect(ed?.namespace).toBe('default');
    expect(ed?.name).toBe('extendeddeployment-sample');
    expect(ed?.regions.map((r) => [r.name, r.replicas])).toEqual([
      ['region1', 1],
      ['region2', 1],
    ]);
    for (const r of ed?.regions ?? []) expect(r.revision).toMatch(/^[0-9a-f]{10}$/);
  });

  it('prints a table for people, with the groups of the rollout', async () => {
    expect(await run(['plan', '-f', 'examples/upstream-sample'])).toBe(0);
    const lines = captured.out.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^ExtendedDeployment default\/extendeddeployment-sample: 2 replicas, rollout revision [0-9a-f]{10}, 1 group$/);
    expect(lines[1]).toBe('REGION   CHANGE   REPLICAS  REVISION');
    expect(lines[2]).toMatch(/^region1 {2}rollout {2}1 {9}previous -> [0-9a-f]{10}$/);
    expect(lines.slice(4)).toEqual(['new pods per region after each group:', '  group 1: region1 new 1 of 1, region2 new 1 of 1']);
  });

  it('adds the groups to the JSON shape', async () => {
    expect(await run(['plan', '-f', 'dist/multi-arch-web.k8s.yaml', 'dist/regions.k8s.yaml', '-o', 'json'])).toBe(0);
    const [ed] = (
      JSON.parse(captured.out) as { extendedDeployments: { name: string; groups: { group: number; regions: { name: string; updated: number }[] }[] }[] }
    ).extendedDeployments;
    expect(ed?.name).toBe('web');
    expect(ed?.groups.map((g) => g.regions.map((r) => `${r.name}=${r.updated}`).join(' '))).toEqual(['amd64=2 arm64=1', 'amd64=4 arm64=2']);
  });

  it('--from files: only what changed rolls, and markdown carries a table and a mermaid gantt', async () => {
    const changed = fixture({ 'regions.yaml': regions, 'sample.yaml': sample.replace('          image: alpine\n', '          image: alpine:3.20\n') });
    expect(await run(['plan', '-f', changed, '--from', 'examples/upstream-sample', '-o', 'markdown'])).toBe(0);
    expect(captured.out).toContain('| region1 | none | 1 | `');
    expect(captured.out).toMatch(/\| region2 \| rollout \(in-place\) \| 1 \| `[0-9a-f]{10} -> [0-9a-f]{10}` \|/);
    expect(captured.out).toContain('```mermaid\ngantt\n');
    expect(captured.out).toContain('  section region2\n  group 1 (1/1) : 0, 1\n```');
    expect(captured.out).not.toContain('section region1');
  });

  it('says per region whether pods are swapped in place or replaced when in-place updates are on', async () => {
    const imageOnly = fixture({ 'regions.yaml': regions, 'sample.yaml': sample.replace('          image: alpine\n', '          image: alpine:3.20\n') });
    expect(await run(['plan', '-f', imageOnly, '--from', 'examples/upstream-sample', '-o', 'json'])).toBe(0);
    const plan = (text: string) =>
      (JSON.parse(text) as { extendedDeployments: { regions: { name: string; update?: string; updateReason?: string }[] }[] }).extendedDeployments[0]?.regions;
    expect(plan(captured.out)?.[1]).toMatchObject({ name: 'region2', update: 'in-place' });
    captured.out = '';
    const more = fixture({
      'regions.yaml': regions,
      'sample.yaml': sample
        .replace('          image: alpine\n', '          image: alpine:3.20\n')
        .replace('            - sleep 100000', '            - sleep 200000'),
    });
    expect(await run(['plan', '-f', more, '--from', 'examples/upstream-sample'])).toBe(0);
    expect(captured.out).toMatch(/region1 {2}rollout \(replace: fields other than images changed\) {2}1 /);
    expect(captured.out).toMatch(/region2 {2}rollout \(replace: fields other than images changed\) {2}1 /);
  });

  it('--from a git revision reads the files as they were there', async () => {
    expect(await run(['plan', '-f', 'examples/upstream-sample', '--from', 'HEAD', '-o', 'json'])).toBe(0);
    const [ed] = (JSON.parse(captured.out) as { extendedDeployments: { regions: { change: string }[]; groups: unknown[] }[] }).extendedDeployments;
    expect(ed?.regions.map((r) => r.change)).toEqual(['none', 'none']);
    expect(ed?.groups).toEqual([]);
  });

  it('--from something that is neither files nor a revision is a one-line error', async () => {
    expect(await run(['plan', '-f', 'examples/upstream-sample', '--from', 'no-such-ref'])).toBe(1);
    expect(captured.err).toBe('error: --from no-such-ref: not a file, and not a git revision of this repository\n');
  });

  it('rejects an unknown output format as wrong usage', async () => {
    expect(await run(['plan', '-f', 'examples/upstream-sample', '--output', 'xml'])).toBe(2);
    expect(captured.err).toContain("argument 'xml' is invalid");
  });
});

describe('edctl validate', () => {
  it('accepts valid specs', async () => {
    expect(await run(['validate', '-f', 'examples/upstream-sample'])).toBe(0);
    expect(captured.out).toBe('3 objects valid (2 DeployRegions, 1 ExtendedDeployments)\n');
  });

  it('lists every problem with its file, object and path, exits 1, no stack trace', async () => {
    const dir = fixture({
      'regions.yaml': regions,
      'web.yaml': sample
        .replace('replicas: 1\n    - name: region2', 'replicas: "150%"\n    - name: region2')
        .replace('name: region2\n      replicas: 1', 'name: region3\n      replicas: 1'),
    });
    expect(await run(['validate', '-f', dir])).toBe(1);
    expect(captured.err.trimEnd().split('\n')).toEqual([
      `error: ${join(dir, 'web.yaml')}: ExtendedDeployment extendeddeployment-sample: spec.regions[0].replicas: "150%" exceeds 100%`,
      `error: ${join(dir, 'web.yaml')}: ExtendedDeployment extendeddeployment-sample: spec.regions[1].name: DeployRegion "region3" not found (known: region1, region2)`,
    ]);
    expect(captured.err).not.toMatch(/\n\s+at /);
  });

  it('reports malformed YAML with file and line', async () => {
    const dir = fixture({ 'bad.yaml': 'apiVersion: v1\nkind: [unclosed\n' });
    expect(await run(['validate', '-f', dir])).toBe(1);
    expect(captured.err).toBe(`error: ${join(dir, 'bad.yaml')}: line 3: Flow sequence in block collection must be sufficiently indented and end with a ]\n`);
  });

  it('reports a document that is not a Kubernetes object', async () => {
    const dir = fixture({ 'list.yaml': '- a\n- b\n' });
    expect(await run(['validate', '-f', dir])).toBe(1);
    expect(captured.err).toMatch(/list\.yaml: line 1: not a Kubernetes object \(no kind\)\n$/);
  });

  it('reports a missing file', async () => {
    expect(await run(['validate', '-f', 'no/such/file.yaml'])).toBe(1);
    expect(captured.err).toBe('error: no/such/file.yaml: no such file or directory\n');
  });

  it('reports workload names that collide across files, on both objects, and render refuses them too', async () => {
    // `extendeddeployment` in region sample-region1 and the sample in region1 both render extendeddeployment-sample-region1.
    const other = sample
      .replace('name: extendeddeployment-sample\n', 'name: extendeddeployment\n')
      .replace('- name: region1\n      replicas: 1\n', '- name: sample-region1\n      replicas: 1\n')
      .replace('  overriders:\n    - name: region1\n', '  overriders:\n    - name: sample-region1\n')
      .replaceAll('app: test', 'app: other');
    const region =
      'apiVersion: extendeddeployment.io/v1beta1\nkind: DeployRegion\nmetadata:\n  name: sample-region1\nspec:\n  matchLabels:\n    extendeddeployment.io/region: sample-region1\n';
    const dir = fixture({ 'regions.yaml': regions, 'sample.yaml': sample, 'other.yaml': `${region}---\n${other}` });
    const expected = [
      `error: ${join(dir, 'other.yaml')}: ExtendedDeployment extendeddeployment: spec.regions[0].name: workload extendeddeployment-sample-region1 collides with ExtendedDeployment extendeddeployment-sample's region region1`,
      `error: ${join(dir, 'sample.yaml')}: ExtendedDeployment extendeddeployment-sample: spec.regions[0].name: workload extendeddeployment-sample-region1 collides with ExtendedDeployment extendeddeployment's region sample-region1`,
    ];
    expect(await run(['validate', '-f', dir])).toBe(1);
    expect(captured.err.trimEnd().split('\n')).toEqual(expected);
    captured.err = '';
    expect(await run(['render', '-f', dir])).toBe(1);
    expect(captured.err.trimEnd().split('\n')).toEqual(expected);
  });

  it('reports a template nested past the limit with its path, no stack trace', async () => {
    // 300 levels: past the limit, and within what the YAML parser reads (core's and the agent's tests go to 2,000).
    const deep = `${'{a: '.repeat(300)}{}${'}'.repeat(300)}`;
    const dir = fixture({
      'regions.yaml': regions,
      'web.yaml': sample.replace('          imagePullPolicy: IfNotPresent\n', `          imagePullPolicy: IfNotPresent\n          x: ${deep}\n`),
    });
    expect(await run(['validate', '-f', dir])).toBe(1);
    expect(captured.err).toBe(
      `error: ${join(dir, 'web.yaml')}: ExtendedDeployment extendeddeployment-sample: spec.template.spec.containers[0].x${'.a'.repeat(94)}: nesting deeper than 100 levels\n`,
    );
  });
});

describe('edctl render', () => {
  it('writes one file per input file and passes other kinds through', async () => {
    const service = 'apiVersion: v1\nkind: Service\nmetadata:\n  name: web\nspec:\n  ports:\n    - port: 80\n';
    const dir = fixture({ 'regions.yaml': regions, 'sample.yaml': sample, 'service.yaml': service });
    const outDir = mkdtempSync(join(tmpdir(), 'edctl-out-'));
    expect(await run(['render', '-f', dir, '-o', outDir])).toBe(0);
    expect(readdirSync(outDir).sort()).toEqual(['regions.k8s.yaml', 'sample.k8s.yaml', 'service.k8s.yaml']);
    expect(readFileSync(join(outDir, 'service.k8s.yaml'), 'utf8')).toBe(service);
    expect(readFileSync(join(outDir, 'sample.k8s.yaml'), 'utf8')).toContain('kind: ReplicaSet');
  });

  it("names the namespace of the ExtendedDeployment and every workload: the spec's, else default", async () => {
    const inShop = sample.replace('name: extendeddeployment-sample\n', 'name: in-shop\n  namespace: shop\n');
    expect(await run(['render', '-f', fixture({ 'regions.yaml': regions, 'sample.yaml': sample, 'shop.yaml': inShop })])).toBe(0);
    const objects = parseAllDocuments(captured.out).map((d) => d.toJS() as { kind: string; metadata: { name: string; namespace?: string } });
    expect(objects.filter((o) => o.kind !== 'DeployRegion').map((o) => `${o.kind} ${o.metadata.namespace ?? '(none)'}/${o.metadata.name}`)).toEqual([
      'ExtendedDeployment default/extendeddeployment-sample',
      'ReplicaSet default/extendeddeployment-sample-region1',
      'ReplicaSet default/extendeddeployment-sample-region2',
      'ExtendedDeployment shop/in-shop',
      'ReplicaSet shop/in-shop-region1',
      'ReplicaSet shop/in-shop-region2',
    ]);
    // DeployRegions are cluster-scoped: no namespace, whatever the others get.
    expect(objects.filter((o) => o.kind === 'DeployRegion').map((o) => o.metadata.namespace)).toEqual([undefined, undefined]);
  });

  it('prints to stdout without --output-dir', async () => {
    expect(await run(['render', '-f', 'examples/upstream-sample'])).toBe(0);
    expect(captured.out.match(/^kind: /gm)).toHaveLength(5);
  });
});

describe('edctl crds', () => {
  it('matches the committed crds/', async () => {
    const outDir = mkdtempSync(join(tmpdir(), 'edctl-crds-'));
    expect(await run(['crds', '-o', outDir])).toBe(0);
    for (const file of readdirSync('crds')) expect(readFileSync(join(outDir, file), 'utf8')).toBe(readFileSync(join('crds', file), 'utf8'));
    expect(readdirSync(outDir).sort()).toEqual(readdirSync('crds').sort());
  });
});

describe('edctl', () => {
  it('exits 2 on an unknown command', async () => {
    expect(await run(['frobnicate'])).toBe(2);
    expect(captured.err).toContain("unknown command 'frobnicate'");
  });

  it('exits 0 for --help and documents exit codes', async () => {
    expect(await run(['--help'])).toBe(0);
    expect(captured.out).toContain('Exit codes:');
  });
});
