// edctl's manners at the edges, as kubectl's: usage errors in one line, --version, -o yaml beside -o json, and the
// cluster commands without any kubeconfig.
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { parse } from 'yaml';
import { run } from './run.js';
import { captured, captureOutput, fixture, regions, sample } from './test-support.js';

captureOutput();

describe('usage errors', () => {
  it.each([
    [['frobnicate'], "error: unknown command 'frobnicate'", 'edctl'],
    [['stauts', 'web'], "error: unknown command 'stauts' (did you mean status?)", 'edctl'],
    [['status'], "error: missing required argument 'name'", 'edctl status'],
    [['status', 'web', 'extra'], "error: too many arguments for 'status'. Expected 1 argument but got 2.", 'edctl status'],
    [['plan', '-f', 'x', '--ouput', 'json'], "error: unknown option '--ouput' (did you mean --output?)", 'edctl plan'],
    [['validate'], "error: required option '-f, --filename <paths...>' not specified", 'edctl validate'],
    [['diff', '-f', 'x', '-o', 'xml'], "error: option '-o, --output <format>' argument 'xml' is invalid. Allowed choices are text, json, yaml.", 'edctl diff'],
    [
      ['status', 'web', '--timeout', '90'],
      "error: option '--timeout <duration>' argument '90' is invalid. expected a duration such as 90s, 5m or 1h30m",
      'edctl status',
    ],
  ])('%j: one line and where the help is, exit 2', async (argv, line, command) => {
    expect(await run(argv)).toBe(2);
    expect(captured.err).toBe(`${line}\nRun '${command} --help' for usage.\n`);
    expect(captured.out).toBe('');
  });

  it('name the program as it was started', async () => {
    expect(await run(['status'], { name: 'kubectl ed' })).toBe(2);
    expect(captured.err).toContain("Run 'kubectl ed status --help' for usage.");
  });
});

describe('--version', () => {
  it("prints the package's version and exits 0", async () => {
    const { version } = JSON.parse(readFileSync('package.json', 'utf8')) as { version: string };
    expect(await run(['--version'])).toBe(0);
    expect(captured.out).toBe(`${version}\n`);
  });
});

describe('-o yaml', () => {
  const invalid = () =>
    fixture({ 'regions.yaml': regions, 'web.yaml': sample.replace('replicas: 1\n    - name: region2', 'replicas: "150%"\n    - name: region2') });
  it.each([
    ['validate', () => ['validate', '-f', 'examples/upstream-sample'], 0],
    ['validate, invalid', () => ['validate', '-f', invalid()], 1],
    ['plan', () => ['plan', '-f', 'examples/upstream-sample'], 0],
    ['diff', () => ['diff', '-f', 'examples/upstream-sample'], 0],
  ])('%s prints the data of -o json as YAML', async (_, argv, code) => {
    const args = argv();
    expect(await run([...args, '-o', 'json'])).toBe(code);
    const json: unknown = JSON.parse(captured.out);
    const jsonErr = captured.err;
    captured.out = '';
    captured.err = '';
    expect(await run([...args, '-o', 'yaml'])).toBe(code);
    expect(captured.out).not.toMatch(/^\s*[{[]/);
    expect(parse(captured.out)).toEqual(json);
    expect(captured.err).toBe(jsonErr.replace('JSON', 'YAML'));
  });
});

describe('cluster commands without any kubeconfig, outside a cluster', () => {
  afterEach(() => vi.unstubAllEnvs());

  it.each([
    ['status', 'web'],
    ['approve', 'web'],
    ['abort', 'web'],
    ['agent', '--metrics-bind-address', '127.0.0.1:0', '--health-probe-bind-address', '127.0.0.1:0'],
  ])('%s fails at once with one line, as client-go does (the agent does not retry it)', async (...argv) => {
    vi.stubEnv('HOME', mkdtempSync(join(tmpdir(), 'edctl-home-')));
    vi.stubEnv('KUBECONFIG', '');
    vi.stubEnv('KUBERNETES_SERVICE_HOST', '');
    expect(await run(argv)).toBe(1);
    expect(captured.err).toBe(
      'error: invalid configuration: no configuration has been provided (no --kubeconfig, $KUBECONFIG or ~/.kube/config, and not running in a cluster)\n',
    );
  });
});

describe('edctl agent --namespace', () => {
  it.each([
    ['shop,Pay', 'not a namespace name: "Pay"'],
    ['shop,,pay', 'not a namespace name: ""'],
    ['shop,shop', 'a namespace is named twice'],
  ])('refuses %s before it connects, as a usage error', async (value, message) => {
    expect(await run(['agent', '--namespace', value])).toBe(2);
    expect(captured.err).toContain(`option '-n, --namespace <namespaces>' argument '${value}' is invalid. ${message}`);
  });
});
