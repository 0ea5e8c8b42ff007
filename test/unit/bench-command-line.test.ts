// A bench's command line (bench/command-line.ts): its flags, its help from the header comment, and how a command line
// it cannot run ends (one line and the synopsis, exit 2, before the bench touches the lab), for every bench.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { benchFlags, benchHelp, integerFlag, positiveInt, UsageError } from '../../bench/command-line.js';

const BENCHES = ['agent', 'fleet-gate', 'inplace', 'memory', 'moves', 'peers', 'plan', 'render', 'soak'] as const;

describe('integer flags', () => {
  it('positiveInt: the fallback when absent, a UsageError for anything but a positive integer', () => {
    expect(positiveInt('runs', undefined, 3)).toBe(3);
    expect(positiveInt('runs', '5', 3)).toBe(5);
    for (const bad of ['0', '-1', '1.5', 'three', '', ' ']) {
      expect(() => positiveInt('runs', bad, 3)).toThrow(new UsageError(`--runs must be a positive integer, not ${JSON.stringify(bad)}`));
    }
  });

  it('integerFlag: its minimum is allowed, anything under it is not', () => {
    expect(integerFlag('grace', '0', 5, 0)).toBe(0);
    expect(integerFlag('grace', undefined, 5, 0)).toBe(5);
    expect(() => integerFlag('grace', '-1', 5, 0)).toThrow('--grace must be an integer of at least 0, not "-1"');
    expect(() => integerFlag('timeout-seconds', '9', 300, 10)).toThrow('--timeout-seconds must be an integer of at least 10, not "9"');
  });
});

describe('benchFlags', () => {
  const options = { eds: { type: 'string' }, json: { type: 'boolean', default: false } } as const;

  it('reads the flags it is given', () => {
    expect(benchFlags(['--eds', '20', '--json'], options)).toEqual({ eds: '20', json: true });
    expect(benchFlags([], options)).toEqual({ json: false });
  });

  it.each([
    [['--nope'], /Unknown option '--nope'/],
    [['--eds'], /Option '--eds <value>' argument missing/],
    [['--json=yes'], /Option '--json' does not take an argument/],
    [['20'], /Unexpected argument '20'/],
  ])('%j is a UsageError', (argv, message) => {
    expect(() => benchFlags(argv, options)).toThrow(UsageError);
    expect(() => benchFlags(argv, options)).toThrow(message);
  });
});

describe('benchHelp', () => {
  it('is the first two paragraphs of the header comment, without its stars', () => {
    const source = [
      '/**',
      ' * bench/x: what it does,',
      ' * on two lines.',
      ' *',
      ' *   npm run bench:x -- [--eds 200]',
      ' *',
      ' * More.',
      ' */',
      'code();',
    ].join('\n');
    expect(benchHelp(source)).toEqual({ summary: 'bench/x: what it does,\non two lines.', synopsis: '  npm run bench:x -- [--eds 200]' });
  });

  it('refuses a header without a synopsis paragraph', () => {
    expect(() => benchHelp('/**\n * bench/x: what it does.\n *\n * More.\n */\n')).toThrow(/synopsis/);
    expect(() => benchHelp('code();\n')).toThrow(/synopsis/);
  });

  it.each(BENCHES)('bench/%s has one', (bench) => {
    const { synopsis } = benchHelp(readFileSync(join('bench', `${bench}.ts`), 'utf8'));
    expect(synopsis).toMatch(new RegExp(`(npm run bench:\\w+|bench/${bench}\\.ts)`));
  });
});

/** Runs a bench's TypeScript source through tsx: its exit code and output. */
function runBenchSource(bench: string, args: readonly string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', join('bench', `${bench}.ts`), ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

// One process per bench and case (tsx compiles each bench: a second or two); none reaches the lab, as each ends
// before its main runs (--help) or on its first line (the flags).
describe('every bench, as a process', () => {
  it.concurrent.each(BENCHES)('bench/%s --help prints its summary and synopsis, exit 0', { timeout: 60_000 }, async (bench) => {
    const r = await runBenchSource(bench, ['--help']);
    const { summary, synopsis } = benchHelp(readFileSync(join('bench', `${bench}.ts`), 'utf8'));
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`${summary}\n\n${synopsis}\n`);
    expect(r.stderr).toBe('');
  });

  it.concurrent.each(BENCHES)('bench/%s --no-such-flag: one line and the synopsis, exit 2, no stack', { timeout: 60_000 }, async (bench) => {
    const r = await runBenchSource(bench, ['--no-such-flag']);
    const { synopsis } = benchHelp(readFileSync(join('bench', `${bench}.ts`), 'utf8'));
    expect(r.code).toBe(2);
    // The rest of the line is node:util's, which Node.js releases word differently.
    expect(r.stderr.startsWith(`bench/${bench}: Unknown option '--no-such-flag'`)).toBe(true);
    expect(r.stderr.endsWith(`\n\n${synopsis}\n`)).toBe(true);
    expect(r.stderr.split('\n\n')[0]).not.toContain('\n');
    expect(r.stdout).toBe('');
  });

  it('a flag with a value the bench refuses: its message and the synopsis, exit 2, no stack', { timeout: 60_000 }, async () => {
    const r = await runBenchSource('peers', ['--scales', '200,0']);
    const { synopsis } = benchHelp(readFileSync(join('bench', 'peers.ts'), 'utf8'));
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(`bench/peers: --scales must be a positive integer, not "0"\n\n${synopsis}\n`);
  });
});
