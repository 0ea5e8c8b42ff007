// Builds the lab's binaries from the Go module proxy and caches them outside the repository:
//   ~/.cache/extended-deployment/lab/<k8s>-<etcd>-<kwok>-<go>/bin/
//     kube-apiserver kube-controller-manager kube-scheduler kubectl etcd pkigen kwok
// The pinned versions are read from the wrapper modules' go.mod files (the single source of truth), so the cache
// key changes exactly when a pin changes. A stamp file with a hash of every build input (go.mod, go.sum, Go sources)
// triggers a rebuild when anything else in the wrapper modules changes.
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

export const clusterDir = dirname(fileURLToPath(import.meta.url));
export const repoRoot = join(clusterDir, '..', '..');
const k8sModDir = join(clusterDir, 'go', 'k8s');
const kwokModDir = join(clusterDir, 'go', 'kwok');

export const BINARIES = [
  'kube-apiserver',
  'kube-controller-manager',
  'kube-scheduler',
  'kubectl',
  'etcd',
  'pkigen',
  'kwok',
] as const;
export type BinaryName = (typeof BINARIES)[number];

export interface Pins {
  k8s: string;
  etcd: string;
  kwok: string;
  go: string;
}

function requiredVersion(goModPath: string, module: string): string {
  const text = readFileSync(goModPath, 'utf8');
  const re = new RegExp(`^\\s*(?:require\\s+)?${module.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}\\s+(v\\S+)`, 'm');
  const m = re.exec(text);
  if (!m?.[1]) throw new Error(`cannot find the pinned version of ${module} in ${goModPath}`);
  return m[1];
}

export function goBinary(): string {
  const onPath = spawnSync('go', ['version'], { encoding: 'utf8' });
  if (onPath.status === 0) return 'go';
  if (existsSync('/usr/local/go/bin/go')) return '/usr/local/go/bin/go';
  throw new Error('Go is required to build the lab (go not found on PATH nor in /usr/local/go/bin)');
}

function goEnv(): NodeJS.ProcessEnv {
  return {
    ...process.env,
    GOTOOLCHAIN: 'local',
    CGO_ENABLED: '0',
    GOFLAGS: '-mod=readonly -buildvcs=false',
  };
}

/** The pinned Kubernetes release (no Go needed). */
export function pinnedK8sVersion(): string {
  return requiredVersion(join(k8sModDir, 'go.mod'), 'k8s.io/kubernetes');
}

export function readPins(): Pins {
  const go = spawnSync(goBinary(), ['env', 'GOVERSION'], { encoding: 'utf8', env: goEnv() });
  if (go.status !== 0) throw new Error(`go env GOVERSION failed: ${go.stderr}`);
  return {
    k8s: requiredVersion(join(k8sModDir, 'go.mod'), 'k8s.io/kubernetes'),
    etcd: requiredVersion(join(k8sModDir, 'go.mod'), 'go.etcd.io/etcd/server/v3'),
    kwok: requiredVersion(join(kwokModDir, 'go.mod'), 'sigs.k8s.io/kwok'),
    go: go.stdout.trim(),
  };
}

export function cacheRoot(): string {
  const base = process.env.XDG_CACHE_HOME || join(homedir(), '.cache');
  return join(base, 'extended-deployment', 'lab');
}

export function binDirFor(pins: Pins): string {
  return join(cacheRoot(), `k8s-${pins.k8s}_etcd-${pins.etcd}_kwok-${pins.kwok}_${pins.go}`, 'bin');
}

function listFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir)) {
    const p = join(dir, entry);
    if (statSync(p).isDirectory()) out.push(...listFiles(p));
    else out.push(p);
  }
  return out.sort();
}

/** Hash of every build input in the wrapper modules and of this script's build recipe. */
export function inputsHash(): string {
  const h = createHash('sha256');
  for (const f of [...listFiles(join(clusterDir, 'go')), fileURLToPath(import.meta.url)]) {
    h.update(relative(clusterDir, f));
    h.update('\0');
    h.update(readFileSync(f));
    h.update('\0');
  }
  return h.digest('hex');
}

export function binariesReady(binDir: string): boolean {
  const stamp = join(binDir, '.inputs.sha256');
  if (!existsSync(stamp)) return false;
  if (readFileSync(stamp, 'utf8').trim() !== inputsHash()) return false;
  return BINARIES.every((b) => existsSync(join(binDir, b)));
}

function run(cmd: string, args: string[], cwd: string, log: (s: string) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    log(`$ (cd ${relative(repoRoot, cwd) || '.'} && ${cmd} ${args.map((a) => (/\s/.test(a) ? JSON.stringify(a) : a)).join(' ')})`);
    const child = spawn(cmd, args, { cwd, env: goEnv(), stdio: ['ignore', 'inherit', 'inherit'] });
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      if (code === 0) resolve();
      else reject(new Error(`${cmd} ${args[0]} exited with ${code ?? signal}`));
    });
  });
}

function versionLdflags(pins: Pins): string {
  const [major, minor] = pins.k8s.replace(/^v/, '').split('.');
  const flags = ['-s', '-w'];
  for (const pkg of ['k8s.io/component-base/version', 'k8s.io/client-go/pkg/version']) {
    flags.push(
      `-X ${pkg}.gitVersion=${pins.k8s}`,
      `-X ${pkg}.gitMajor=${major}`,
      `-X ${pkg}.gitMinor=${minor}`,
      `-X ${pkg}.gitTreeState=clean`,
      `-X ${pkg}.buildDate=1970-01-01T00:00:00Z`,
    );
  }
  return flags.join(' ');
}

function acquireLock(lockDir: string, log: (s: string) => void): () => void {
  mkdirSync(dirname(lockDir), { recursive: true });
  const deadline = Date.now() + 3 * 60 * 60 * 1000;
  let warned = false;
  for (;;) {
    try {
      mkdirSync(lockDir);
      writeFileSync(join(lockDir, 'pid'), String(process.pid));
      return () => rmSync(lockDir, { recursive: true, force: true });
    } catch {
      let holder = NaN;
      try {
        holder = Number(readFileSync(join(lockDir, 'pid'), 'utf8'));
      } catch {
        /* being written */
      }
      if (Number.isFinite(holder) && !pidAlive(holder)) {
        rmSync(lockDir, { recursive: true, force: true });
        continue;
      }
      if (Date.now() > deadline) throw new Error(`timed out waiting for the build lock ${lockDir}`);
      if (!warned) {
        log(`another build (pid ${holder}) holds ${lockDir}; waiting`);
        warned = true;
      }
      spawnSync('sleep', ['2']);
    }
  }
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Returns the directory holding the binaries for the pinned versions, building them first if needed. */
export async function ensureBinaries(log: (s: string) => void = (s) => console.error(s)): Promise<string> {
  const pins = readPins();
  const binDir = binDirFor(pins);
  if (binariesReady(binDir)) return binDir;
  const release = acquireLock(join(dirname(binDir), '.build.lock'), log);
  try {
    if (binariesReady(binDir)) return binDir;
    const started = Date.now();
    log(
      `lab: building k8s ${pins.k8s} (kube-apiserver, kube-controller-manager, kube-scheduler, kubectl), ` +
        `etcd ${pins.etcd}, kwok ${pins.kwok} with ${pins.go} into ${binDir}`,
    );
    log('lab: a cold build (empty Go module and build caches) takes a while on 2 cores; later runs reuse the caches');
    const tmp = `${binDir}.tmp-${process.pid}`;
    rmSync(tmp, { recursive: true, force: true });
    mkdirSync(tmp, { recursive: true });
    const go = goBinary();
    await run(
      go,
      [
        'build',
        '-trimpath',
        '-ldflags',
        versionLdflags(pins),
        '-o',
        `${tmp}/`,
        'k8s.io/kubernetes/cmd/kube-apiserver',
        'k8s.io/kubernetes/cmd/kube-controller-manager',
        'k8s.io/kubernetes/cmd/kube-scheduler',
        'k8s.io/kubernetes/cmd/kubectl',
        'go.etcd.io/etcd/server/v3',
        './pkigen',
      ],
      k8sModDir,
      log,
    );
    // `go build -o dir/` names the etcd main after its module path's last non-version element: "server".
    renameSync(join(tmp, 'server'), join(tmp, 'etcd'));
    await run(go, ['build', '-trimpath', '-ldflags', '-s -w', '-o', `${tmp}/`, 'sigs.k8s.io/kwok/cmd/kwok'], kwokModDir, log);
    for (const b of BINARIES) {
      if (!existsSync(join(tmp, b))) throw new Error(`build finished but ${b} is missing in ${tmp}`);
    }
    writeFileSync(join(tmp, '.inputs.sha256'), `${inputsHash()}\n`);
    rmSync(binDir, { recursive: true, force: true });
    renameSync(tmp, binDir);
    log(`lab: build done in ${((Date.now() - started) / 1000).toFixed(0)} s`);
    return binDir;
  } finally {
    release();
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  ensureBinaries()
    .then((dir) => console.log(dir))
    .catch((e: unknown) => {
      console.error(e instanceof Error ? e.message : e);
      process.exit(1);
    });
}
