// The compiled agent (`node lib/cli/main.js agent …`) as a child process of an end-to-end test, on the Node.js release of
// the agent's image (test/cluster/image-node.ts): its JSON log lines are parsed and kept, and the test can wait for a
// line, read its metrics port, and kill it (SIGKILL: no graceful stop, the Lease stays held until it expires). Run
// `npm run build` first.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { AGENT_ENV, AGENT_NODE_FLAGS } from '../../constructs/agent-install.js';
import { repoRoot } from '../cluster/build.js';
import { imageNode } from '../cluster/image-node.js';

/** One log line of the agent (`{"time","level","msg",...}`), with the test's receive time. */
export interface AgentLogLine {
  readonly time: string;
  readonly level: string;
  readonly msg: string;
  readonly receivedAt: number;
  readonly [field: string]: unknown;
}

export interface AgentProcessOptions {
  readonly kubeconfig: string;
  readonly identity: string;
  /** Watch only this namespace (keeps the agent off other tests' objects); every namespace when absent. */
  readonly namespace?: string;
  readonly leaseNamespace: string;
  readonly leaseName?: string;
  readonly leaseDurationSeconds?: number;
  readonly workers?: number;
  /** Print the agent's log lines to stderr, prefixed with its identity. */
  readonly echo?: boolean;
  /** Run the process with its wall clock this far off the host's (skewed-clock.mjs), as on a node with a wrong clock. */
  readonly clockSkewMs?: number;
  /** The fleet member it runs in (--cluster-name). */
  readonly clusterName?: string;
  /** The folder of the other members' kubeconfigs (--peer-kubeconfigs). */
  readonly peerKubeconfigs?: string;
  /** Write the built-in modules the process loaded to this file when it exits (loaded-modules.mjs). */
  readonly builtinModulesFile?: string;
}

export class AgentProcess {
  readonly child: ChildProcess;
  readonly lines: AgentLogLine[] = [];
  readonly startedAt = Date.now();
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private readonly waiters: { match: (l: AgentLogLine) => boolean; resolve: (l: AgentLogLine) => void }[] = [];
  private stderr = '';
  private ended = false;

  constructor(readonly options: AgentProcessOptions) {
    const main = join(repoRoot, 'lib', 'cli', 'main.js');
    if (!existsSync(main)) throw new Error(`${main} is missing: run \`npm run build\` first`);
    // Started with the Node.js release, flags and environment the agent install runs it with.
    const args = [
      ...AGENT_NODE_FLAGS,
      ...(options.clockSkewMs ? ['--import', join(repoRoot, 'test', 'e2e', 'skewed-clock.mjs')] : []),
      ...(options.builtinModulesFile ? ['--import', join(repoRoot, 'test', 'e2e', 'loaded-modules.mjs')] : []),
      main,
      'agent',
      '--kubeconfig',
      options.kubeconfig,
      ...(options.namespace ? ['--namespace', options.namespace] : []),
      '--lease-namespace',
      options.leaseNamespace,
      '--metrics-bind-address',
      '127.0.0.1:0',
      '--health-probe-bind-address',
      '127.0.0.1:0',
      '--identity',
      options.identity,
      ...(options.leaseName ? ['--lease-name', options.leaseName] : []),
      ...(options.leaseDurationSeconds ? ['--lease-duration', String(options.leaseDurationSeconds)] : []),
      ...(options.workers ? ['--workers', String(options.workers)] : []),
      ...(options.clusterName ? ['--cluster-name', options.clusterName] : []),
      ...(options.peerKubeconfigs ? ['--peer-kubeconfigs', options.peerKubeconfigs] : []),
    ];
    const env = {
      ...process.env,
      ...AGENT_ENV,
      ...(options.clockSkewMs && { EXTENDED_DEPLOYMENT_TEST_CLOCK_SKEW_MS: String(options.clockSkewMs) }),
      ...(options.builtinModulesFile && { EXTENDED_DEPLOYMENT_TEST_MODULES_FILE: options.builtinModulesFile }),
    };
    this.child = spawn(imageNode(), args, { cwd: repoRoot, env, stdio: ['ignore', 'pipe', 'pipe'] });
    this.exited = new Promise((resolve) => this.child.once('exit', (code, signal) => resolve({ code, signal })));
    createInterface({ input: this.child.stdout! }).on('line', (text) => {
      let line: AgentLogLine;
      try {
        line = { ...(JSON.parse(text) as object), receivedAt: Date.now() } as AgentLogLine;
      } catch {
        line = { time: new Date().toISOString(), level: 'raw', msg: text, receivedAt: Date.now() };
      }
      this.lines.push(line);
      if (options.echo) process.stderr.write(`[${options.identity}] ${text}\n`);
      for (const w of [...this.waiters]) {
        if (w.match(line)) {
          this.waiters.splice(this.waiters.indexOf(w), 1);
          w.resolve(line);
        }
      }
    });
    this.child.stderr!.on('data', (d: Buffer) => (this.stderr += d.toString()));
  }

  get pid(): number {
    return this.child.pid ?? -1;
  }

  get identity(): string {
    return this.options.identity;
  }

  alive(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** The test ended the process (killHard or stop); false while it runs or when it exited by itself. */
  get endedByTest(): boolean {
    return this.ended;
  }

  /** The first log line (already received or future) with this message, or that `match` accepts. */
  waitForLog(msg: string, timeoutMs = 60_000, match: (l: AgentLogLine) => boolean = () => true): Promise<AgentLogLine> {
    const accept = (l: AgentLogLine) => l.msg === msg && match(l);
    const seen = this.lines.find(accept);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        const i = this.waiters.findIndex((w) => w.resolve === done);
        if (i >= 0) this.waiters.splice(i, 1);
        reject(new Error(`agent ${this.identity}: no "${msg}" log line within ${timeoutMs / 1000} s${this.describe()}`));
      }, timeoutMs);
      const done = (l: AgentLogLine) => {
        clearTimeout(timer);
        resolve(l);
      };
      this.waiters.push({ match: accept, resolve: done });
      void this.exited.then(({ code, signal }) => {
        if (this.waiters.some((w) => w.resolve === done)) {
          clearTimeout(timer);
          reject(new Error(`agent ${this.identity} exited (code ${code}, signal ${signal}) before "${msg}"${this.describe()}`));
        }
      });
    });
  }

  /** The port of /metrics (from the "serving metrics" line). */
  async metricsPort(): Promise<number> {
    const line = await this.waitForLog('serving metrics');
    return Number(String(line['address']).split(':').pop());
  }

  async metrics(): Promise<string> {
    const res = await fetch(`http://127.0.0.1:${await this.metricsPort()}/metrics`);
    return res.text();
  }

  /** SIGSTOP / SIGCONT: the process freezes (a long GC pause, a frozen VM, a throttled cgroup) and later resumes. */
  freeze(frozen: boolean): void {
    if (this.alive()) this.child.kill(frozen ? 'SIGSTOP' : 'SIGCONT');
  }

  /** kill -9: the process gets no chance to release the Lease or finish anything. */
  killHard(): void {
    this.ended = true;
    if (this.alive()) this.child.kill('SIGKILL');
  }

  /** Graceful stop (SIGTERM): reconciles finish, the Lease is released. */
  async stop(): Promise<void> {
    this.ended = true;
    if (!this.alive()) return;
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.killHard(), 20_000);
    await this.exited;
    clearTimeout(timer);
  }

  private describe(): string {
    const tail = this.lines
      .slice(-15)
      .map((l) => JSON.stringify(l))
      .join('\n');
    return `\nlast log lines:\n${tail}${this.stderr ? `\nstderr:\n${this.stderr.slice(-2000)}` : ''}`;
  }
}

/** Deterministic pseudo-random numbers in [0, 1) from a 32-bit seed (mulberry32). */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
