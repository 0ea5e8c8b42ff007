// What edctl reads: Lists, empty inputs, standard input, kustomize files, YAML the parser refuses, and where each
// problem's object was read.
import { spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { run } from './run.js';
import { captured, captureOutput, fixture, regions, sample } from './test-support.js';

captureOutput();

// Standard input, as the tests in this file give it (`-f -` reads descriptor 0).
const stdin = vi.hoisted(() => ({ text: '' }));
vi.mock('node:fs', async (importOriginal) => {
  const fs = await importOriginal<typeof import('node:fs')>();
  const readFileSync = ((path: Parameters<typeof fs.readFileSync>[0], options?: Parameters<typeof fs.readFileSync>[1]) =>
    path === 0 ? stdin.text : fs.readFileSync(path, options)) as typeof fs.readFileSync;
  return { ...fs, readFileSync, default: { ...fs, readFileSync } };
});

const indent = (text: string) =>
  text
    .split('\n')
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map((line) => `    ${line}`)
    .join('\n');
/** A List of the given objects (YAML documents), as `kubectl get -o yaml` writes one. */
const list = (kind: string, ...documents: string[]) =>
  `apiVersion: v1\nkind: ${kind}\nitems:\n${documents.map((d) => indent(d).replace(/^ {4}/, '  - ')).join('\n')}\n`;
const regionDocs = regions.split('---\n');
const broken = sample.replace('  historyLimit: 10\n', '  historyLimit: 10\n  replicas: -4\n');

describe('Lists', () => {
  it.each(['List', 'ExtendedDeploymentList'])('checks every item of a %s like an object of its own, naming the item', async (kind) => {
    const dir = fixture({ 'all.yaml': list(kind, ...regionDocs, broken) });
    expect(await run(['validate', '-f', dir])).toBe(1);
    expect(captured.err).toBe(`error: ${join(dir, 'all.yaml')}: items[2]: ExtendedDeployment extendeddeployment-sample: spec.replicas: must not be negative\n`);
  });

  it('counts the items of a valid List, and of a List in a List', async () => {
    const dir = fixture({ 'all.yaml': list('List', list('List', ...regionDocs), sample) });
    expect(await run(['validate', '-f', dir])).toBe(0);
    expect(captured.out).toBe('3 objects valid (2 DeployRegions, 1 ExtendedDeployments)\n');
  });

  it('renders the items, never the List (which has no name to give it)', async () => {
    expect(await run(['render', '-f', fixture({ 'all.yaml': list('List', ...regionDocs, sample) })])).toBe(0);
    const objects = parseAllDocuments(captured.out).map((d) => d.toJS() as { kind: string; metadata: { name: string } });
    expect(objects.map((o) => `${o.kind} ${o.metadata.name}`)).toEqual([
      'DeployRegion region1',
      'DeployRegion region2',
      'ExtendedDeployment extendeddeployment-sample',
      'ReplicaSet extendeddeployment-sample-region1',
      'ReplicaSet extendeddeployment-sample-region2',
    ]);
  });

  it('invents no name for an item without one: it is passed through as written', async () => {
    const pod = 'apiVersion: v1\nkind: Pod\nmetadata:\n  generateName: job-\n';
    const dir = fixture({ 'all.yaml': list('List', 'apiVersion: v1\nkind: ConfigMap\ndata:\n  a: b\n', pod) });
    expect(await run(['render', '-f', dir])).toBe(0);
    expect(parseAllDocuments(captured.out).map((d) => d.toJS() as unknown)).toEqual([
      { apiVersion: 'v1', kind: 'ConfigMap', data: { a: 'b' } },
      { apiVersion: 'v1', kind: 'Pod', metadata: { generateName: 'job-' } },
    ]);
  });

  it('reports an item that is no Kubernetes object, and items that are no list, with file, line and path', async () => {
    const dir = fixture({ 'all.yaml': 'kind: List\nitems:\n  - name: a\n---\nkind: List\nitems: web\n' });
    expect(await run(['validate', '-f', dir])).toBe(1);
    expect(captured.err).toBe(
      `error: ${join(dir, 'all.yaml')}: line 3: items[0]: not a Kubernetes object (no kind)\nerror: ${join(dir, 'all.yaml')}: line 6: items: must be a list of objects\n`,
    );
  });
});

describe('empty inputs', () => {
  const cases: [string, () => string][] = [
    ['an empty file', () => join(fixture({ 'empty.yaml': '' }), 'empty.yaml')],
    ['a file of comments and separators', () => join(fixture({ 'empty.yaml': '# nothing yet\n---\n---\n' }), 'empty.yaml')],
    ['an empty folder', () => fixture({})],
    ['a folder without YAML', () => fixture({ 'README.md': '# specs\n', 'web.yaml.orig': sample })],
    ['an empty List', () => join(fixture({ 'list.yaml': 'apiVersion: v1\nkind: List\nitems: []\n' }), 'list.yaml')],
  ];
  const commands: [string, string[]][] = [
    ['validate', []],
    ['render', []],
    ['plan', []],
    ['diff', ['--from', 'examples/upstream-sample']],
  ];

  it.each(cases.flatMap(([what, path]) => commands.map(([command, extra]) => [what, command, path, extra] as const)))(
    '%s: %s exits 1, as kubectl does',
    async (_what, command, path, extra) => {
      expect(await run([command, '-f', path(), ...extra])).toBe(1);
      expect(captured.err).toBe(`error: no objects passed to ${command}\n`);
      expect(captured.out).toBe('');
    },
  );

  it('is a problem in the JSON report of validate', async () => {
    expect(await run(['validate', '-f', fixture({}), '-o', 'json'])).toBe(1);
    expect(JSON.parse(captured.out)).toMatchObject({ valid: false, objects: 0, problems: [{ message: 'no objects passed to validate' }] });
  });
});

describe('-f - reads standard input', () => {
  const commands: [string, string[]][] = [
    ['validate', []],
    ['render', []],
    ['plan', []],
    ['diff', ['--from', 'examples/upstream-sample']],
  ];

  it.each(commands)('%s reads the objects, and names <stdin> in errors', async (command, extra) => {
    stdin.text = `${regions}\n---\n${sample}`;
    expect(await run([command, '-f', '-', ...extra]), captured.err).toBe(0);
    stdin.text = `${regions}\n---\n${broken}`;
    expect(await run([command, '-f', '-', ...extra])).toBe(1);
    expect(captured.err).toBe('error: <stdin>: ExtendedDeployment extendeddeployment-sample: spec.replicas: must not be negative\n');
  });

  it('goes with files, and an empty standard input is no objects', async () => {
    stdin.text = sample;
    expect(await run(['validate', '-f', 'examples/upstream-sample/deployregions.yaml', '-f', '-'])).toBe(0);
    expect(captured.out).toBe('3 objects valid (2 DeployRegions, 1 ExtendedDeployments)\n');
    stdin.text = '';
    expect(await run(['validate', '-f', '-'])).toBe(1);
    expect(captured.err).toBe('error: no objects passed to validate\n');
  });

  it('names <stdin> in validate -o json', async () => {
    stdin.text = 'kind: [\n';
    expect(await run(['validate', '-f', '-', '-o', 'json'])).toBe(1);
    expect((JSON.parse(captured.out) as { problems: { file?: string }[] }).problems.map((p) => p.file)).toEqual(['<stdin>']);
  });

  it('reads a real pipe (edctl as a process)', () => {
    const r = spawnSync(process.execPath, ['--import', 'tsx', join('cli', 'main.ts'), 'validate', '-f', '-'], {
      input: `${regions}\n---\n${sample}`,
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(r.stderr).toBe('');
    expect(r.stdout).toBe('3 objects valid (2 DeployRegions, 1 ExtendedDeployments)\n');
  }, 60_000);
});

describe('files and folders', () => {
  it.each(['kustomization.yaml', 'kustomization.yml', 'Kustomization'])('skips a %s in a folder with a note', async (name) => {
    const dir = fixture({ 'regions.yaml': regions, 'web.yaml': sample, [name]: 'resources:\n  - regions.yaml\n  - web.yaml\n' });
    expect(await run(['validate', '-f', dir])).toBe(0);
    expect(captured.out).toBe('3 objects valid (2 DeployRegions, 1 ExtendedDeployments)\n');
    expect(captured.err).toBe(
      `note: skipped ${join(dir, name)}: kustomize's file, not a Kubernetes object (to read what kustomize makes: kustomize build ${dir} | ... -f -)\n`,
    );
  });

  it('skips YAML for another tool in a folder with a note; named on its own, or half a Kubernetes object, it is an error', async () => {
    const workflow = 'name: plan\non: [pull_request]\njobs:\n  plan:\n    runs-on: ubuntu-latest\n';
    const dir = fixture({ 'regions.yaml': regions, 'web.yaml': sample, 'ci.yml': workflow });
    expect(await run(['validate', '-f', dir])).toBe(0);
    expect(captured.out).toBe('3 objects valid (2 DeployRegions, 1 ExtendedDeployments)\n');
    expect(captured.err).toBe(`note: skipped ${join(dir, 'ci.yml')}: no apiVersion or kind, not Kubernetes input (name the file with -f to check it)\n`);
    captured.err = '';
    expect(await run(['validate', '-f', join(dir, 'ci.yml')])).toBe(1);
    expect(captured.err).toBe(`error: ${join(dir, 'ci.yml')}: line 1: not a Kubernetes object (no kind)\n`);
    captured.err = '';
    const half = fixture({ 'regions.yaml': regions, 'cm.yaml': 'apiVersion: v1\nmetadata:\n  name: x\n' });
    expect(await run(['validate', '-f', half])).toBe(1);
    expect(captured.err).toBe(`error: ${join(half, 'cm.yaml')}: line 1: not a Kubernetes object (no kind)\n`);
  });

  it('names the file of a YAML bomb', async () => {
    // Each level repeats the one before nine times: 9^9 strings once expanded.
    const levels = Array.from(
      { length: 9 },
      (_, i) =>
        `l${i + 1}: &l${i + 1} [${Array<string>(9)
          .fill(i === 0 ? 'x' : `*l${i}`)
          .join(', ')}]`,
    );
    const dir = fixture({ 'regions.yaml': regions, 'bomb.yaml': `kind: ConfigMap\n${levels.join('\n')}\n` });
    expect(await run(['validate', '-f', dir])).toBe(1);
    expect(captured.err).toBe(`error: ${join(dir, 'bomb.yaml')}: line 1: Excessive alias count indicates a resource exhaustion attack\n`);
  });

  it('reports an object defined in several files once, naming every file', async () => {
    const dir = fixture({ 'a.yaml': regions, 'b.yaml': regions, 'web.yaml': sample });
    mkdirSync(join(dir, 'more'));
    const more = fixture({ 'c.yaml': regionDocs[0] ?? '' });
    expect(await run(['validate', '-f', dir, '-f', more])).toBe(1);
    const [a, b, c] = [join(dir, 'a.yaml'), join(dir, 'b.yaml'), join(more, 'c.yaml')];
    expect(captured.err.trimEnd().split('\n')).toEqual([
      `error: ${a}, ${b}, ${c}: DeployRegion region1: metadata.name: is defined 3 times in this render`,
      `error: ${a}, ${b}: DeployRegion region2: metadata.name: is defined twice in this render`,
    ]);
  });

  it('tells two definitions in one file apart by their lines, and lists every place in the JSON report', async () => {
    const dir = fixture({ 'regions.yaml': `${regions}\n---\n${regionDocs[1] ?? ''}`, 'web.yaml': sample });
    const file = join(dir, 'regions.yaml');
    expect(await run(['validate', '-f', dir])).toBe(1);
    expect(captured.err).toBe(`error: ${file} (line 9), ${file} (line 18): DeployRegion region2: metadata.name: is defined twice in this render\n`);
    captured.out = '';
    expect(await run(['validate', '-f', dir, '-o', 'json'])).toBe(1);
    expect((JSON.parse(captured.out) as { problems: unknown[] }).problems).toEqual([
      {
        file,
        locations: [`${file} (line 9)`, `${file} (line 18)`],
        object: 'DeployRegion region2',
        path: 'metadata.name',
        message: 'is defined twice in this render',
      },
    ]);
  });

  it('gives the List item of a problem in the JSON report', async () => {
    const dir = fixture({ 'all.yaml': list('List', ...regionDocs, broken) });
    expect(await run(['validate', '-f', dir, '-o', 'json'])).toBe(1);
    expect((JSON.parse(captured.out) as { problems: unknown[] }).problems).toEqual([
      {
        file: join(dir, 'all.yaml'),
        item: 'items[2]',
        object: 'ExtendedDeployment extendeddeployment-sample',
        path: 'spec.replicas',
        message: 'must not be negative',
      },
    ]);
  });
});
