// edctl's consistency rules (examples in every help, kubectl flags on every cluster command, JSON on every read
// command, the kubectl plugin's name), `edctl diff` and `edctl validate -o json`.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildProgram, programNameOf } from './program.js';
import { run } from './run.js';
import { captured, captureOutput, fixture, regions, sample } from './test-support.js';

captureOutput();
const CLUSTER_COMMANDS = ['status', 'approve', 'pause', 'resume', 'abort', 'agent'];
const READ_COMMANDS = ['validate', 'plan', 'diff', 'status'];

const commands = (await buildProgram()).commands;

describe('every command', () => {
  it.each(commands.map((c) => c.name()))('%s --help has examples, and exits 0', async (name) => {
    expect(await run([name, '--help'])).toBe(0);
    expect(captured.out).toMatch(/\nExamples:\n {2}edctl /);
  });

  it('cluster commands take --kubeconfig, --context and -n/--namespace; read commands -o/--output json and yaml', () => {
    for (const name of CLUSTER_COMMANDS) {
      const flags = commands.find((c) => c.name() === name)?.options.map((o) => o.flags);
      expect(flags, name).toEqual(
        expect.arrayContaining([expect.stringMatching(/^--kubeconfig /), expect.stringMatching(/^--context /), expect.stringMatching(/^-n, --namespace /)]),
      );
    }
    for (const name of READ_COMMANDS) {
      const output = commands.find((c) => c.name() === name)?.options.find((o) => o.long === '--output');
      expect(output?.short, name).toBe('-o');
      expect(output?.argChoices, name).toEqual(expect.arrayContaining(['json', 'yaml']));
    }
  });

  it('is built alone when the arguments name it, with the other commands of its module only', async () => {
    for (const name of commands.map((c) => c.name())) {
      const alone = (await buildProgram('edctl', [name, '--help'])).commands.map((c) => c.name());
      expect(alone, name).toContain(name);
      expect(alone.length, name).toBeLessThan(commands.length);
    }
  });

  it('the root help lists the exit codes', async () => {
    expect(await run(['--help'])).toBe(0);
    expect(captured.out).toContain('Exit codes:\n  0  success\n  1  invalid input');
    expect(captured.out).toContain('2  wrong usage');
  });
});

describe('kubectl plugin', () => {
  it('is named kubectl ed when started as kubectl-ed', async () => {
    expect(programNameOf('/usr/local/bin/kubectl-ed')).toBe('kubectl ed');
    expect(programNameOf('/tmp/bin/kubectl-ed.js')).toBe('kubectl ed');
    expect(programNameOf('/work/lib/cli/main.js')).toBe('edctl');
    expect(programNameOf('/usr/local/bin/edctl')).toBe('edctl');
    expect(programNameOf(undefined)).toBe('edctl');
    expect(await run(['status', '--help'], { name: 'kubectl ed' })).toBe(0);
    expect(captured.out).toContain('Usage: kubectl ed status [options] <name>');
    expect(captured.out).toContain('  kubectl ed status web -n shop --watch');
    expect(captured.out).not.toMatch(/\bedctl /);
  });
});

describe('edctl diff', () => {
  const changed = () => fixture({ 'regions.yaml': regions, 'sample.yaml': sample.replace('          image: alpine\n', '          image: alpine:3.20\n') });

  it('shows per region the template paths that change, in place or replace, and the groups', async () => {
    expect(await run(['diff', '-f', changed(), '--from', 'examples/upstream-sample'])).toBe(0);
    const lines = captured.out.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^ExtendedDeployment default\/extendeddeployment-sample: rollout revision [0-9a-f]{10} -> [0-9a-f]{10}, replicas 2, 1 group$/);
    expect(lines[1]).toBe('  region region1: none, replicas 1');
    expect(lines[2]).toMatch(/^ {2}region region2: rollout \(in-place\), replicas 1, revision [0-9a-f]{10} -> [0-9a-f]{10}$/);
    expect(lines[3]).toBe('    spec.containers[0].image: alpine -> alpine:3.20');
    expect(lines.slice(4)).toEqual(['  rollout, new pods per region after each group:', '    group 1: region1 new 1 of 1, region2 new 1 of 1']);
  });

  it('prints the JSON shape, with replicas before and after', async () => {
    const dir = fixture({
      'regions.yaml': regions,
      'sample.yaml': sample.replace('          image: alpine\n', '          image: alpine:3.20\n').replace('- sleep 100000', '- sleep 200000'),
    });
    expect(await run(['diff', '-f', dir, '--from', 'examples/upstream-sample', '-o', 'json'])).toBe(0);
    const [ed] = (
      JSON.parse(captured.out) as {
        extendedDeployments: {
          change: string;
          fromReplicas: number;
          replicas: number;
          regions: {
            name: string;
            update: string;
            updateReason: string;
            fromReplicas: number;
            replicas: number;
            templateChanges: { path: string; from: unknown; to: unknown }[];
          }[];
          groups: unknown[];
        }[];
      }
    ).extendedDeployments;
    expect(ed?.change).toBe('changed');
    expect([ed?.fromReplicas, ed?.replicas]).toEqual([2, 2]);
    expect(ed?.regions[1]).toMatchObject({
      name: 'region2',
      update: 'replace',
      updateReason: 'fields other than images changed',
      fromReplicas: 1,
      replicas: 1,
    });
    expect(ed?.regions[1]?.templateChanges.map((c) => c.path)).toEqual(['spec.containers[0].image', 'spec.containers[0].command[2]']);
    expect(ed?.regions[0]?.templateChanges).toEqual([{ path: 'spec.containers[0].command[2]', from: 'sleep 100000', to: 'sleep 200000' }]);
    expect(ed?.groups).toHaveLength(1);
  });

  it('against a git revision (default HEAD): no change for committed files', async () => {
    expect(await run(['diff', '-f', 'examples/upstream-sample'])).toBe(0);
    expect(captured.out).toBe('ExtendedDeployment default/extendeddeployment-sample: no change\n');
  });

  it('bad --from and malformed files are one-line errors with exit 1', async () => {
    expect(await run(['diff', '-f', 'examples/upstream-sample', '--from', 'no-such-ref'])).toBe(1);
    expect(captured.err).toBe('error: --from no-such-ref: not a file, and not a git revision of this repository\n');
    captured.err = '';
    const bad = fixture({ 'bad.yaml': 'kind: [\n' });
    expect(await run(['diff', '-f', bad, '--from', 'examples/upstream-sample'])).toBe(1);
    expect(captured.err.trimEnd().split('\n')).toHaveLength(1);
    expect(captured.err).not.toMatch(/\n\s+at /);
  });
});

describe('edctl validate -o json', () => {
  it('reports counts when valid', async () => {
    expect(await run(['validate', '-f', 'examples/upstream-sample', '-o', 'json'])).toBe(0);
    expect(JSON.parse(captured.out)).toEqual({ valid: true, objects: 3, deployRegions: 2, extendedDeployments: 1, problems: [] });
  });

  it('reports every problem with file, object and path on stdout, and exits 1 with one line on stderr', async () => {
    const dir = fixture({ 'regions.yaml': regions, 'web.yaml': sample.replace('replicas: 1\n    - name: region2', 'replicas: "150%"\n    - name: region2') });
    expect(await run(['validate', '-f', dir, '-o', 'json'])).toBe(1);
    expect(JSON.parse(captured.out)).toEqual({
      valid: false,
      objects: 3,
      deployRegions: 2,
      extendedDeployments: 1,
      problems: [
        {
          file: join(dir, 'web.yaml'),
          object: 'ExtendedDeployment extendeddeployment-sample',
          path: 'spec.regions[0].replicas',
          message: '"150%" exceeds 100%',
        },
      ],
    });
    expect(captured.err).toBe('error: 1 problem (listed in the JSON on stdout)\n');
  });

  it('reports malformed YAML as a problem of its file', async () => {
    const dir = fixture({ 'bad.yaml': 'apiVersion: v1\nkind: [unclosed\n' });
    expect(await run(['validate', '-f', dir, '-o', 'json'])).toBe(1);
    const report = JSON.parse(captured.out) as { valid: boolean; problems: { file: string; message: string }[] };
    expect(report.valid).toBe(false);
    expect(report.problems).toEqual([{ file: join(dir, 'bad.yaml'), message: expect.stringMatching(/^line 3: /) }]);
  });
});
