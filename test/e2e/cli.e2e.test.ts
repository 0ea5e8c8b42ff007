// edctl against the lab: status (text and JSON), approve, pause, resume and abort on a real ExtendedDeployment with the
// agent in-process; `edctl status --until-done` followed in a pseudo-terminal (util-linux `script`) and in a pipe during
// the same rollout, its frames replayed and asserted on (terminal.ts); the compiled binary as the kubectl plugin
// `kubectl ed`; and bad input (unknown ExtendedDeployment, no cluster, malformed files) as one-line errors with a
// non-zero exit code and no stack trace. The compiled edctl is built from the current sources into a private folder.
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, vi } from 'vitest';
import { run } from '../../cli/run.js';
import { binariesReady, binDirFor, readPins, repoRoot } from '../cluster/build.js';
import { kubeconfigPath } from '../cluster/lab.js';
import { test, waitFor, waitForSettled } from './helpers.js';
import { apply, ED_NAME, fill, installCrds, readStatus, simulateFromCluster, waitForPhase, waitForPods, withRolloutEnv } from './rollout-kit.js';
import { spawnInPty, spawnPiped, terminalFrames } from './terminal.js';

const KUBECONFIG = kubeconfigPath();
let buildDir = '';
let main = '';

/** Compiles cli/main.ts and what it imports (nothing else: other work in progress cannot break it) into a private folder. */
beforeAll(async () => {
  await installCrds();
  // Inside the repository, so the compiled files resolve node_modules; .cache does not exist after a fresh npm ci.
  const cache = join(repoRoot, 'node_modules', '.cache');
  mkdirSync(cache, { recursive: true });
  buildDir = mkdtempSync(join(cache, 'edctl-e2e-'));
  writeFileSync(
    join(buildDir, 'tsconfig.json'),
    JSON.stringify({
      extends: join(repoRoot, 'tsconfig.json'),
      compilerOptions: { outDir: join(buildDir, 'out'), rootDir: repoRoot, declaration: false, sourceMap: false, incremental: false },
      include: [],
      files: [join(repoRoot, 'cli', 'main.ts')],
    }),
  );
  const tsc = spawnSync(process.execPath, [join(repoRoot, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(buildDir, 'tsconfig.json')], {
    encoding: 'utf8',
  });
  if (tsc.status !== 0) throw new Error(`tsc failed: ${tsc.stdout}${tsc.stderr}`);
  main = join(buildDir, 'out', 'cli', 'main.js');
  chmodSync(main, 0o755); // what npm does to a package's bin at install
}, 180_000);

afterAll(() => {
  if (buildDir) rmSync(buildDir, { recursive: true, force: true });
});

/** edctl in-process through run(), its stdout and stderr captured. */
async function edctl(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const o = vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => ((out += String(chunk)), true));
  const e = vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => ((err += String(chunk)), true));
  try {
    const code = await run(args);
    return { code, out, err };
  } finally {
    o.mockRestore();
    e.mockRestore();
  }
}

/** The compiled edctl as a process. */
function binary(args: readonly string[], env: NodeJS.ProcessEnv = process.env) {
  const r = spawnSync(process.execPath, [main, ...args], { encoding: 'utf8', env, timeout: 60_000 });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

/** A user error: exit 1, nothing on stdout, exactly one line on stderr, no stack trace. */
function expectOneLineError(r: { code: number | null; out: string; err: string }, message: RegExp): void {
  expect(r.code, r.err).toBe(1);
  expect(r.out).toBe('');
  expect(r.err).toMatch(/^error: [^\n]+\n$/);
  expect(r.err).toMatch(message);
  expect(r.err).not.toMatch(/^\s+at /m);
}

const withoutNoColor = () => Object.fromEntries(Object.entries(process.env).filter(([k]) => k !== 'NO_COLOR'));
const ESC = '\u001b';
/** The line of a region in a frame: `  a-xyz  ███▒▒▒···  desired 3  new 1  old 2  ready 3  available 3`. */
const regionLine = (frame: string, region: string) => frame.split('\n').find((l) => l.trimStart().startsWith(`${region} `)) ?? '';

describe('edctl on a real ExtendedDeployment', () => {
  test('status, approve, pause, resume, abort; status --until-done drawn on a terminal and printed to a pipe', async ({ ns }) => {
    await withRolloutEnv(ns, 'cli', async (env) => {
      const a = env.regions[0]?.metadata?.name ?? '';
      const b = env.regions[1]?.metadata?.name ?? '';
      const o = (image: string) => ({ image, replicas: [3, 2, undefined], strategy: { needWaitingForConfirm: true } });
      const v1 = await fill(env, o('registry.example/web:1'));
      await waitFor(
        'v1 Healthy',
        async () => {
          const s = await readStatus(ns);
          return s.phase === 'Healthy' && s.revision === v1.rolloutRevision && s.regions?.every((r) => r.available === r.desired);
        },
        { timeoutMs: 60_000, describe: () => readStatus(ns) },
      );

      // status, text and JSON.
      const text = await edctl('status', ED_NAME, '-n', ns, '--kubeconfig', KUBECONFIG);
      expect(text.code).toBe(0);
      expect(text.out).toContain(`ExtendedDeployment ${ns}/${ED_NAME}\nPhase:     Healthy`);
      // DESIRED NEW OLD READY AVAILABLE REVISION
      expect(text.out).toMatch(new RegExp(`\\n${a} +3 +3 +0 +3 +3 +[0-9a-f]{10}\\n`));
      const asJson = await edctl('status', ED_NAME, '-n', ns, '--kubeconfig', KUBECONFIG, '-o', 'json');
      expect(asJson.code).toBe(0);
      expect(JSON.parse(asJson.out)).toMatchObject({
        phase: 'Healthy',
        revision: v1.rolloutRevision,
        regions: [
          { name: a, desired: 3 },
          { name: b, desired: 2 },
        ],
      });

      // The image changes; two watchers follow the rollout until it is done: one on a terminal, one in a pipe.
      const v2 = env.render(o('registry.example/web:2'));
      const sim = await simulateFromCluster(ns, v2);
      expect(sim.totalGroups).toBe(3);
      expect(sim.approvals).toEqual([2, 3]);
      await apply(v2);
      const watchArgs = ['status', ED_NAME, '-n', ns, '--kubeconfig', KUBECONFIG, '--until-done'];
      const tty = spawnInPty([process.execPath, main, ...watchArgs], withoutNoColor());
      const piped = spawnPiped([process.execPath, main, ...watchArgs]);
      const screens = () => terminalFrames(tty.output());
      const lines = () =>
        piped
          .stdout()
          .split('\n')
          .filter((l) => l !== '');
      /** Waits until both watchers showed a state (so every state asserted on below was drawn before it changed). */
      const bothShow = (what: string, frame: (f: string) => boolean, line: (l: string) => boolean) =>
        waitFor(`both watchers show ${what}`, async () => screens().some(frame) && lines().some(line), {
          timeoutMs: 60_000,
          describe: async () => ({ screen: screens().at(-1), lines: lines().slice(-3), stderr: piped.stderr() }),
        });

      // Gate 1: the pods of group 1, then pause and resume at the gate.
      await waitForPhase(ns, v2.rolloutRevision, 1, 'WaitingForConfirmation', 180_000, v2);
      const group1 = sim.groups[0]!.regions;
      await waitForPods(
        ns,
        v2,
        group1.map((r) => ({ name: r.name, updated: r.updated, old: r.old })),
        'group 1',
      );
      const gate1 = (f: string) =>
        f.includes('group 1/3  WaitingForConfirmation') &&
        regionLine(f, a).includes(`desired 3  new ${group1[0]!.updated}  old`) &&
        regionLine(f, b).includes(`desired 2  new ${group1[1]!.updated}  old`) &&
        f.includes(`next: edctl approve ${ED_NAME} -n ${ns}`);
      await bothShow(
        'gate 1',
        gate1,
        (l) =>
          l.includes('group 1/3 WaitingForConfirmation') &&
          l.includes(`${a} desired 3 new ${group1[0]!.updated} old`) &&
          l.includes(`next: edctl approve ${ED_NAME} -n ${ns}`),
      );
      const atGate = await edctl('status', ED_NAME, '-n', ns, '--kubeconfig', KUBECONFIG);
      expect(atGate.out).toContain('Phase:     WaitingForConfirmation, group 1/3');

      const paused = await edctl('pause', ED_NAME, '-n', ns, '--kubeconfig', KUBECONFIG);
      expect([paused.code, paused.out]).toEqual([0, `ExtendedDeployment ${ns}/${ED_NAME}: paused\n`]);
      await waitForPhase(ns, v2.rolloutRevision, 1, 'Paused', 60_000, v2);
      await bothShow(
        'Paused',
        (f) => f.includes('group 1/3  Paused') && f.includes(`next: edctl resume ${ED_NAME} -n ${ns}`),
        (l) => l.includes('group 1/3 Paused'),
      );
      expect(JSON.parse((await edctl('status', ED_NAME, '-n', ns, '--kubeconfig', KUBECONFIG, '-o', 'json')).out)).toMatchObject({
        phase: 'Paused',
        currentGroup: 1,
      });
      const resumed = await edctl('resume', ED_NAME, '-n', ns, '--kubeconfig', KUBECONFIG);
      expect([resumed.code, resumed.out]).toEqual([0, `ExtendedDeployment ${ns}/${ED_NAME}: resumed\n`]);
      await waitForPhase(ns, v2.rolloutRevision, 1, 'WaitingForConfirmation', 60_000, v2);

      // Approve group 2; at gate 2, abort holds the rollout; resume, approve group 3: Healthy.
      const approved = await edctl('approve', ED_NAME, '-n', ns, '--kubeconfig', KUBECONFIG);
      expect([approved.code, approved.out]).toEqual([0, `ExtendedDeployment ${ns}/${ED_NAME}: approved group 2 of rollout ${v2.rolloutRevision}\n`]);
      await waitForPhase(ns, v2.rolloutRevision, 2, 'WaitingForConfirmation', 180_000, v2);
      await bothShow(
        'gate 2',
        (f) => f.includes('group 2/3  WaitingForConfirmation'),
        (l) => l.includes('group 2/3 WaitingForConfirmation'),
      );
      const aborted = await edctl('abort', ED_NAME, '-n', ns, '--kubeconfig', KUBECONFIG);
      expect([aborted.code, aborted.out]).toEqual([0, `ExtendedDeployment ${ns}/${ED_NAME}: rollout ${v2.rolloutRevision} aborted\n`]);
      await waitFor('Aborted', async () => (await readStatus(ns)).conditions?.some((c) => c.type === 'Progressing' && c.reason === 'Aborted'), {
        describe: () => readStatus(ns),
      });
      await bothShow(
        'Aborted',
        (f) => f.includes('group 2/3  Aborted') && f.includes(`next: edctl resume ${ED_NAME} -n ${ns}`),
        (l) => l.includes('group 2/3 Aborted'),
      );
      expect((await edctl('status', ED_NAME, '-n', ns, '--kubeconfig', KUBECONFIG)).out).toContain('Controls:  aborted');
      expect((await edctl('resume', ED_NAME, '-n', ns, '--kubeconfig', KUBECONFIG)).code).toBe(0);
      await waitForPhase(ns, v2.rolloutRevision, 2, 'WaitingForConfirmation', 60_000, v2);
      expect((await edctl('approve', ED_NAME, '-n', ns, '--kubeconfig', KUBECONFIG)).code).toBe(0);
      await waitForPhase(ns, v2.rolloutRevision, 3, 'Healthy', 180_000, v2);

      // Both watchers exit 0 by themselves once the rollout is Healthy.
      const [ttyCode, pipedCode] = await waitForSettled('both watchers exit after Healthy', Promise.all([tty.exited, piped.exited]), {
        describe: async () => ({ screen: screens().at(-1), lines: lines().slice(-3), stderr: piped.stderr(), status: await readStatus(ns) }),
      });
      const frames = screens();
      console.log(`[cli] ${frames.length} terminal frames; last:\n${frames.at(-1)}\n[cli] ${lines().length} piped lines; last: ${lines().at(-1)}`);
      expect(ttyCode, tty.output().slice(-2000)).toBe(0);
      expect(pipedCode, piped.stderr()).toBe(0);

      // The terminal: frames redrawn in place, in order (gate 1, paused, gate 2, aborted, Healthy), bars and colours.
      const order = [
        gate1,
        (f: string) => f.includes('group 1/3  Paused'),
        (f: string) => f.includes('group 2/3  WaitingForConfirmation'),
        (f: string) => f.includes('group 2/3  Aborted'),
        (f: string) => f.includes('group 3/3  Healthy'),
      ];
      const at = order.map((match) => frames.findIndex(match));
      expect(
        at.every((i) => i >= 0),
        JSON.stringify(at),
      ).toBe(true);
      expect([...at].sort((x, y) => x - y)).toEqual(at);
      const last = frames.at(-1) ?? '';
      expect(last.split('\n')[0]).toBe(`ExtendedDeployment ${ns}/${ED_NAME}  rollout ${v2.rolloutRevision}  group 3/3  Healthy`);
      expect(regionLine(last, a)).toMatch(new RegExp(`^  ${a}  █{24}  desired 3  new 3  old 0  ready 3  available 3$`));
      expect(regionLine(last, b)).toMatch(new RegExp(`^  ${b} {2}█{24}  desired 2  new 2  old 0  ready 2  available 2$`));
      const mid = frames[at[0]!] ?? '';
      expect(regionLine(mid, a)).toMatch(/█+▒+ +desired 3 {2}new \d {2}old \d/);
      expect(tty.output()).toContain(`${ESC}[33mWaitingForConfirmation`);
      expect(tty.output()).toContain(`${ESC}[32mHealthy`);
      // Redrawn in place: the whole output is a few screens high, not one frame after another.
      expect(frames.every((f) => f.split('\n').length <= 8)).toBe(true);

      // The pipe: one plain line per change, no escape codes, no line twice in a row.
      const printed = lines();
      expect(piped.stdout()).not.toContain(ESC);
      expect(printed.every((l, i) => i === 0 || l !== printed[i - 1])).toBe(true);
      expect(printed.at(-1)).toBe(
        `${ns}/${ED_NAME}: rollout ${v2.rolloutRevision} group 3/3 Healthy; ${a} desired 3 new 3 old 0 ready 3 available 3; ${b} desired 2 new 2 old 0 ready 2 available 2`,
      );
      expect(printed.some((l) => l.includes('group 2/3 Aborted'))).toBe(true);

      // The same watch with -o json: the status of the finished rollout, and exit 0 at once.
      const json = binary([...watchArgs, '-o', 'json']);
      expect(json.code, json.err).toBe(0);
      expect(JSON.parse(json.out.trim().split('\n').at(-1) ?? '{}')).toMatchObject({ phase: 'Healthy', revision: v2.rolloutRevision, currentGroup: 3 });

      // Without --until-done it runs until Ctrl-C, which ends it with 0 (and gives the cursor back on the terminal).
      const live = spawnInPty([process.execPath, main, 'status', ED_NAME, '-n', ns, '--kubeconfig', KUBECONFIG, '--watch'], withoutNoColor());
      const livePiped = spawnPiped([process.execPath, main, 'status', ED_NAME, '-n', ns, '--kubeconfig', KUBECONFIG, '--watch']);
      await waitFor(
        'the live watchers drew the status',
        async () => terminalFrames(live.output()).some((f) => f.includes('group 3/3  Healthy')) && livePiped.stdout().includes('Healthy'),
        {
          describe: async () => ({ tty: live.output().slice(-500), piped: livePiped.stdout() }),
        },
      );
      live.type('\x03');
      livePiped.child.kill('SIGINT');
      const [liveCode, livePipedCode] = await waitForSettled('the live watchers exit after Ctrl-C', Promise.all([live.exited, livePiped.exited]), {
        describe: async () => ({ tty: live.output().slice(-500), stderr: livePiped.stderr() }),
      });
      expect(liveCode, live.output().slice(-500)).toBe(0);
      expect(livePipedCode, livePiped.stderr()).toBe(0);
      expect(live.output()).toMatch(/\^C/);
      expect(live.output().endsWith(`${ESC}[?25h`)).toBe(true);
      expect(livePiped.stdout().trimEnd().split('\n')).toHaveLength(1);

      // As the kubectl plugin, through the lab's kubectl.
      const labBin = binDirFor(readPins());
      if (binariesReady(labBin)) {
        const pathDir = pluginDir();
        const r = spawnSync(join(labBin, 'kubectl'), ['ed', 'status', ED_NAME, '-n', ns, '--kubeconfig', KUBECONFIG, '-o', 'json'], {
          encoding: 'utf8',
          env: { ...process.env, PATH: `${pathDir}${delimiter}${process.env['PATH'] ?? ''}` },
          timeout: 60_000,
        });
        expect(r.status, r.stderr).toBe(0);
        expect(JSON.parse(r.stdout)).toMatchObject({ phase: 'Healthy', revision: v2.rolloutRevision });
      }
    });
  });
});

/** A folder holding a `kubectl-ed` symlink to the compiled edctl, for PATH. */
function pluginDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'kubectl-ed-'));
  symlinkSync(main, join(dir, 'kubectl-ed'));
  return dir;
}

describe('the kubectl plugin', () => {
  test('kubectl-ed on the PATH says `kubectl ed` in its help, directly and through kubectl', () => {
    const pkg = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { bin: Record<string, string> };
    expect(pkg.bin['kubectl-ed']).toBe(pkg.bin['edctl']);
    const dir = pluginDir();
    const env = { ...process.env, PATH: `${dir}${delimiter}${process.env['PATH'] ?? ''}` };
    const direct = spawnSync('kubectl-ed', ['--help'], { encoding: 'utf8', env });
    expect(direct.status, direct.stderr).toBe(0);
    expect(direct.stdout).toMatch(/^Usage: kubectl ed \[options\] \[command\]/);
    expect(direct.stdout).not.toContain('edctl');
    const sub = spawnSync('kubectl-ed', ['approve', '--help'], { encoding: 'utf8', env });
    expect(sub.stdout).toContain('Usage: kubectl ed approve [options] <name>');
    expect(sub.stdout).toContain('  kubectl ed approve web -n shop');
    const labBin = binDirFor(readPins());
    if (binariesReady(labBin)) {
      const viaKubectl = spawnSync(join(labBin, 'kubectl'), ['ed', '--help'], { encoding: 'utf8', env });
      expect(viaKubectl.status, viaKubectl.stderr).toBe(0);
      expect(viaKubectl.stdout).toMatch(/^Usage: kubectl ed \[options\] \[command\]/);
      const plugins = spawnSync(join(labBin, 'kubectl'), ['plugin', 'list'], { encoding: 'utf8', env });
      expect(plugins.stdout).toContain(join(dir, 'kubectl-ed'));
    }
    // Started as edctl, it is edctl.
    expect(binary(['--help']).out).toMatch(/^Usage: edctl \[options\] \[command\]/);
  });
});

describe('bad input: one line, exit 1, no stack trace', () => {
  test('an ExtendedDeployment that does not exist, for every cluster command', async ({ ns }) => {
    for (const command of ['status', 'approve', 'pause', 'resume', 'abort']) {
      expectOneLineError(await edctl(command, 'nope', '-n', ns, '--kubeconfig', KUBECONFIG), new RegExp(`^error: ExtendedDeployment ${ns}/nope not found\\n$`));
    }
    expectOneLineError(
      binary(['status', 'nope', '-n', ns, '--kubeconfig', KUBECONFIG, '--watch']),
      new RegExp(`^error: ExtendedDeployment ${ns}/nope not found\\n$`),
    );
  });

  test('no cluster reachable', () => {
    const dir = mkdtempSync(join(tmpdir(), 'edctl-bad-'));
    const unreachable = join(dir, 'unreachable.kubeconfig');
    writeFileSync(
      unreachable,
      [
        'apiVersion: v1',
        'kind: Config',
        'clusters: [{name: nowhere, cluster: {server: "https://127.0.0.1:1", insecure-skip-tls-verify: true}}]',
        'users: [{name: someone, user: {token: abc}}]',
        'contexts: [{name: nowhere, context: {cluster: nowhere, user: someone, namespace: shop}}]',
        'current-context: nowhere',
        '',
      ].join('\n'),
    );
    for (const args of [
      ['status', 'web'],
      ['status', 'web', '--watch'],
      ['approve', 'web'],
      ['pause', 'web'],
      ['resume', 'web'],
      ['abort', 'web'],
    ]) {
      expectOneLineError(
        binary([...args, '--kubeconfig', unreachable]),
        /^error: cannot reach the Kubernetes API server at https:\/\/127\.0\.0\.1:1: .*ECONNREFUSED/,
      );
    }
    const garbage = join(dir, 'garbage.kubeconfig');
    writeFileSync(garbage, 'clusters: [unclosed\n');
    expectOneLineError(binary(['status', 'web', '--kubeconfig', garbage]), /^error: .*garbage\.kubeconfig/);
    expectOneLineError(binary(['status', 'web', '--kubeconfig', KUBECONFIG, '--context', 'no-such-context']), /no-such-context/);
    expectOneLineError(binary(['status', 'web', '--kubeconfig', join(dir, 'missing.kubeconfig')]), /missing\.kubeconfig/);
  });

  test('malformed files', () => {
    const dir = mkdtempSync(join(tmpdir(), 'edctl-bad-'));
    mkdirSync(join(dir, 'specs'));
    writeFileSync(join(dir, 'specs', 'bad.yaml'), 'apiVersion: v1\nkind: [unclosed\n');
    const bad = join(dir, 'specs');
    for (const args of [
      ['validate', '-f', bad],
      ['render', '-f', bad],
      ['plan', '-f', bad],
      ['diff', '-f', bad, '--from', 'examples/upstream-sample'],
      ['diff', '-f', 'examples/upstream-sample', '--from', bad],
    ]) {
      expectOneLineError(binary(args), /bad\.yaml: line 3: /);
    }
    expect(binary(['status']).code).toBe(2); // wrong usage: a missing argument
  });
});
