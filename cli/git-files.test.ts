// `--from <git revision>` of plan and diff, in a real temporary repository, run from one of its subdirectories.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { run } from './run.js';
import { captured, captureOutput, regions, sample } from './test-support.js';

captureOutput();

const compat = readFileSync('examples/compat-mode/extendeddeployment.yaml', 'utf8');
const compatRegions = readFileSync('examples/compat-mode/deployregions.yaml', 'utf8');
const home = process.cwd();
const savedTmp = process.env['TMPDIR'];
let repo: string;
/** Where edctl makes its temporary folders during a test: what is left there afterwards was not cleaned up. */
let scratch: string;

const git = (...args: string[]) => execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', '-c', 'commit.gpgsign=false', ...args], { cwd: repo });
function write(files: Record<string, string>): void {
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(repo, path, '..'), { recursive: true });
    writeFileSync(join(repo, path), text);
  }
}

beforeEach(() => {
  repo = realpathSync(mkdtempSync(join(tmpdir(), 'edctl-repo-')));
  scratch = mkdtempSync(join(tmpdir(), 'edctl-scratch-'));
  git('init', '-q');
  write({ 'deploy/regions.yaml': regions, 'deploy/sample/sample.yaml': sample, 'README.md': 'not a spec' });
  git('add', '.');
  git('commit', '-qm', 'base');
  mkdirSync(join(repo, 'deploy', 'sub'));
  process.chdir(join(repo, 'deploy', 'sub'));
  process.env['TMPDIR'] = scratch;
});

afterEach(() => {
  process.chdir(home);
  if (savedTmp === undefined) delete process.env['TMPDIR'];
  else process.env['TMPDIR'] = savedTmp;
  const left = readdirSync(scratch);
  rmSync(repo, { recursive: true, force: true });
  rmSync(scratch, { recursive: true, force: true });
  expect(left).toEqual([]);
});

describe('--from a git revision, run from a subdirectory of the repository', () => {
  it('reads the same paths at the revision', async () => {
    write({ 'deploy/sample/sample.yaml': sample.replace('          image: alpine\n', '          image: alpine:3.20\n') });
    expect(await run(['diff', '-f', '..'])).toBe(0);
    expect(captured.err).toBe('');
    expect(captured.out).toContain('    spec.containers[0].image: alpine -> alpine:3.20\n');
    captured.out = '';
    expect(await run(['plan', '-f', join(repo, 'deploy'), '--from', 'HEAD', '-o', 'json'])).toBe(0);
    const [ed] = (JSON.parse(captured.out) as { extendedDeployments: { regions: { change: string }[] }[] }).extendedDeployments;
    expect(ed?.regions.map((r) => r.change)).toEqual(['none', 'rollout']);
  });

  it('shows a folder the change adds as new, and a file added to a folder as new', async () => {
    write({ 'deploy/newapp/regions.yaml': compatRegions, 'deploy/newapp/checkout.yaml': compat });
    expect(await run(['diff', '-f', '../newapp', '../sample', '../regions.yaml', '--exit-code'])).toBe(1);
    expect(captured.err).toBe('');
    expect(captured.out).toMatch(/^ExtendedDeployment shop\/checkout: new, 6 replicas/m);
    expect(captured.out).toContain('ExtendedDeployment default/extendeddeployment-sample: no change\n');
    captured.out = '';
    expect(await run(['plan', '-f', '..', '--from', 'HEAD'])).toBe(0);
    expect(captured.out).toMatch(/^zone-a {2}new /m);
  });

  it('shows what the change removes as removed, with its risk', async () => {
    rmSync(join(repo, 'deploy', 'sample'), { recursive: true });
    expect(await run(['diff', '-f', '../sample', '../regions.yaml'])).toBe(0);
    expect(captured.out).toBe(
      [
        'risks:',
        '  default/extendeddeployment-sample: removed with its 2 pods',
        '',
        'ExtendedDeployment default/extendeddeployment-sample: removed (2 replicas in region1, region2)',
        '',
      ].join('\n'),
    );
  });

  it.each([
    ['a path outside the repository', () => [home], () => `error: --from HEAD: ${home} is outside the git repository ${repo}\n`],
    ['a path on neither side', () => ['../nothing'], () => 'error: ../nothing: no such file or directory, here or at HEAD\n'],
    [
      'a revision that is not one',
      () => ['..', '--from', 'no-such-ref'],
      () => 'error: --from no-such-ref: not a file, and not a git revision of this repository\n',
    ],
  ])('%s is a one-line error', async (_, args, message) => {
    expect(await run(['plan', '-f', ...args(), ...(args().includes('--from') ? [] : ['--from', 'HEAD'])])).toBe(1);
    expect(captured.err).toBe(message());
  });

  it('names a file of the revision by its path there when it is invalid, and cleans up', async () => {
    write({ 'deploy/sample/sample.yaml': sample.replace('      replicas: 1\n', '      replicas: -1\n') });
    git('commit', '-qam', 'broken');
    write({ 'deploy/sample/sample.yaml': sample });
    expect(await run(['diff', '-f', '..'])).toBe(1);
    expect(captured.err).toMatch(
      /^error: in --from HEAD: \.\.\/sample\/sample\.yaml: ExtendedDeployment extendeddeployment-sample: spec\.regions\[0\]\.replicas: /,
    );
    expect(captured.err).not.toContain(scratch);
  });
});
