// Builds the lab's binaries from the Go module proxy and caches them outside the repository:
//   ~/.cache/extended-deployment/lab/<k8s>-<etcd>-<kwok>-<go>/bin/
//     kube-apiserver kube-controller-manager kube-scheduler kubectl etcd pkigen kwok
//   ~/.cache/extended-deployment/lab/gitops-<engine>-<version>_<go>/bin/   (on demand: kustomize-controller, cel-health; argocd, lua-health)
//   ~/.cache/extended-deployment/lab/peer-argo-rollouts-<version>_<go>/bin/  (on demand, for bench:peers: rollouts-controller, crds/)
//   ~/.cache/extended-deployment/lab/gateway-traefik-<version>_<go>/bin/  (on demand, for the traffic suites: traefik)
// The pinned versions are read from the wrapper modules' go.mod files (the single source of truth), so the cache
// key changes exactly when a pin changes. A stamp file with a hash of every build input (go.mod, go.sum, Go sources)
// triggers a rebuild when anything else in the wrapper modules changes.
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, cpSync, existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

export const clusterDir = dirname(fileURLToPath(import.meta.url));
export const repoRoot = join(clusterDir, '..', '..');
const k8sModDir = join(clusterDir, 'go', 'k8s');
const kwokModDir = join(clusterDir, 'go', 'kwok');

export const BINARIES = ['kube-apiserver', 'kube-controller-manager', 'kube-scheduler', 'kubectl', 'etcd', 'pkigen', 'kwok'] as const;
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

/** Hash of every file in the given wrapper modules and of this script's build recipe. */
export function inputsHash(modDirs: readonly string[] = [k8sModDir, kwokModDir]): string {
  const h = createHash('sha256');
  for (const f of [...modDirs.flatMap(listFiles), fileURLToPath(import.meta.url)]) {
    h.update(relative(clusterDir, f));
    h.update('\0');
    h.update(readFileSync(f));
    h.update('\0');
  }
  return h.digest('hex');
}

function ready(binDir: string, binaries: readonly string[], hash: string): boolean {
  const stamp = join(binDir, '.inputs.sha256');
  if (!existsSync(stamp)) return false;
  if (readFileSync(stamp, 'utf8').trim() !== hash) return false;
  return binaries.every((b) => existsSync(join(binDir, b)));
}

export function binariesReady(binDir: string): boolean {
  return ready(binDir, BINARIES, inputsHash());
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

/** One cached build: which binaries land in which directory, and the recipe that writes them into a temp directory. */
interface CachedBuild {
  readonly binDir: string;
  readonly binaries: readonly string[];
  /** Hash of every input; a different hash rebuilds. */
  readonly hash: string;
  /** Logged once when a build starts. */
  readonly description: string;
  readonly build: (tmp: string, go: string) => Promise<void>;
}

/**
 * Builds into a temp directory next to `binDir` under a lock shared by every build of the cache (two builds on 2 cores
 * only slow each other down), then swaps it in with its stamp, so a killed build never leaves a half-filled cache.
 */
async function ensureCached(b: CachedBuild, log: (s: string) => void): Promise<string> {
  if (ready(b.binDir, b.binaries, b.hash)) return b.binDir;
  const release = acquireLock(join(cacheRoot(), '.build.lock'), log);
  try {
    if (ready(b.binDir, b.binaries, b.hash)) return b.binDir;
    const started = Date.now();
    log(b.description);
    log('lab: a cold build (empty Go module and build caches) takes a while on 2 cores; later runs reuse the caches');
    const tmp = `${b.binDir}.tmp-${process.pid}`;
    rmSync(tmp, { recursive: true, force: true });
    mkdirSync(tmp, { recursive: true });
    await b.build(tmp, goBinary());
    for (const bin of b.binaries) {
      if (!existsSync(join(tmp, bin))) throw new Error(`build finished but ${bin} is missing in ${tmp}`);
    }
    writeFileSync(join(tmp, '.inputs.sha256'), `${b.hash}\n`);
    rmSync(b.binDir, { recursive: true, force: true });
    renameSync(tmp, b.binDir);
    log(`lab: build done in ${((Date.now() - started) / 1000).toFixed(0)} s`);
    return b.binDir;
  } finally {
    release();
  }
}

/** Returns the directory holding the binaries for the pinned versions, building them first if needed. */
export async function ensureBinaries(log: (s: string) => void = (s) => console.error(s)): Promise<string> {
  const pins = readPins();
  return ensureCached(
    {
      binDir: binDirFor(pins),
      binaries: BINARIES,
      hash: inputsHash(),
      description:
        `lab: building k8s ${pins.k8s} (kube-apiserver, kube-controller-manager, kube-scheduler, kubectl), ` +
        `etcd ${pins.etcd}, kwok ${pins.kwok} with ${pins.go} into ${binDirFor(pins)}`,
      async build(tmp, go) {
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
      },
    },
    log,
  );
}

/** A GitOps engine the lab can run next to the cluster (test/cluster/gitops.ts). */
export type GitopsEngine = 'flux' | 'argocd';
/** Another rollout controller the peers benchmark runs against the lab (bench/peers.ts). */
export type PeerController = 'argo-rollouts';
/** The gateway the traffic suites run in front of the lab's pods (test/cluster/traefik.ts). */
export type Gateway = 'traefik';
type OnDemandKey = GitopsEngine | PeerController | Gateway;

/** A build made only when something needs it: its wrapper module, the pinned module whose version names the cache, what to build and what it yields. */
interface OnDemandBuild {
  readonly module: string;
  readonly pinned: string;
  readonly packages: readonly string[];
  readonly binaries: readonly string[];
  /** A directory of the pinned module (its copy in the module cache) copied next to the binaries, e.g. its CRDs. */
  readonly moduleDir?: { readonly from: string; readonly to: string };
  /** A string variable set to the pinned version with -X (what the binary reports instead of "dev"). */
  readonly versionVar?: string;
}

/** Per engine or peer controller: its build. The cache directory is `<prefix>-<key>-<version>_<go>`. */
const ON_DEMAND_BUILDS: Record<OnDemandKey, OnDemandBuild> = {
  flux: {
    module: 'flux',
    pinned: 'github.com/fluxcd/kustomize-controller',
    packages: ['github.com/fluxcd/kustomize-controller', './cmd/cel-health'],
    binaries: ['kustomize-controller', 'cel-health'],
  },
  argocd: { module: 'argocd', pinned: 'github.com/argoproj/argo-cd/v3', packages: ['.', './cmd/lua-health'], binaries: ['argocd', 'lua-health'] },
  'argo-rollouts': {
    module: 'argo-rollouts',
    pinned: 'github.com/argoproj/argo-rollouts',
    packages: ['github.com/argoproj/argo-rollouts/cmd/rollouts-controller'],
    binaries: ['rollouts-controller', 'crds'],
    moduleDir: { from: 'manifests/crds', to: 'crds' },
  },
  traefik: {
    module: 'traefik',
    pinned: 'github.com/traefik/traefik/v3',
    packages: ['github.com/traefik/traefik/v3/cmd/traefik'],
    binaries: ['traefik'],
    versionVar: 'github.com/traefik/traefik/v3/pkg/version.Version',
  },
};

function onDemandModDir(key: OnDemandKey): string {
  return join(clusterDir, 'go', ON_DEMAND_BUILDS[key].module);
}

function onDemandVersion(key: OnDemandKey): string {
  return requiredVersion(join(onDemandModDir(key), 'go.mod'), ON_DEMAND_BUILDS[key].pinned);
}

/** The wrapper module of a GitOps engine (its go.mod pins the release; the GitOps suites read module files from it). */
export function gitopsModDir(engine: GitopsEngine): string {
  return onDemandModDir(engine);
}

/** The pinned release of an engine's main module, e.g. v1.9.6 for Flux kustomize-controller. */
export function gitopsVersion(engine: GitopsEngine): string {
  return onDemandVersion(engine);
}

/** The pinned release of a peer controller, e.g. v1.10.1 for Argo Rollouts. */
export function peerVersion(peer: PeerController): string {
  return onDemandVersion(peer);
}

/**
 * Builds an on-demand build into `<cache>/<prefix>-<key>-<version>_<go>/bin/`, with the same flags, stamp and lock as
 * the lab's own build; copies the pinned module's `moduleDir` (from the module cache the build filled) next to it.
 */
async function ensureOnDemand(prefix: string, key: OnDemandKey, log: (s: string) => void): Promise<string> {
  const b = ON_DEMAND_BUILDS[key];
  const modDir = onDemandModDir(key);
  const version = onDemandVersion(key);
  const binDir = join(cacheRoot(), `${prefix}-${key}-${version}_${readPins().go}`, 'bin');
  return ensureCached(
    {
      binDir,
      binaries: b.binaries,
      hash: inputsHash([modDir]),
      description: `lab: building ${b.pinned} ${version} (${b.binaries.join(', ')}) into ${binDir}`,
      async build(tmp, go) {
        const ldflags = ['-s', '-w', ...(b.versionVar ? [`-X ${b.versionVar}=${version}`] : [])].join(' ');
        await run(go, ['build', '-trimpath', '-ldflags', ldflags, '-o', `${tmp}/`, ...b.packages], modDir, log);
        if (b.moduleDir) {
          const dir = spawnSync(go, ['list', '-m', '-f', '{{.Dir}}', b.pinned], { cwd: modDir, env: goEnv(), encoding: 'utf8' });
          if (dir.status !== 0 || !dir.stdout.trim()) throw new Error(`go list -m ${b.pinned} failed: ${dir.stderr}`);
          const to = join(tmp, b.moduleDir.to);
          cpSync(join(dir.stdout.trim(), b.moduleDir.from), to, { recursive: true });
          // The module cache is read-only; the copy must not be, or the next rebuild cannot remove it.
          for (const p of [to, ...listFiles(to)]) chmodSync(p, statSync(p).isDirectory() ? 0o755 : 0o644);
        }
      },
    },
    log,
  );
}

/** Builds a GitOps engine's binaries on demand (only the GitOps suites and `lab:gitops` need them). */
export async function ensureGitopsBinaries(engine: GitopsEngine, log: (s: string) => void = (s) => console.error(s)): Promise<string> {
  return ensureOnDemand('gitops', engine, log);
}

/**
 * Builds a peer controller on demand (only `bench:peers` needs it) into `<cache>/peer-<name>-<version>_<go>/bin/`:
 * for Argo Rollouts, `rollouts-controller` and `crds/` (the module's manifests/crds at the pinned tag).
 */
export async function ensurePeerBinaries(peer: PeerController, log: (s: string) => void = (s) => console.error(s)): Promise<string> {
  return ensureOnDemand('peer', peer, log);
}

/** The pinned release of a gateway, e.g. v3.6.12 for Traefik. */
export function gatewayVersion(gateway: Gateway): string {
  return onDemandVersion(gateway);
}

/** The wrapper module of a gateway (its go.sum also pins the Gateway API module whose CRDs the lab applies). */
export function gatewayModDir(gateway: Gateway): string {
  return onDemandModDir(gateway);
}

/** Builds a gateway on demand (only the traffic suites need it) into `<cache>/gateway-<name>-<version>_<go>/bin/`. */
export async function ensureGatewayBinaries(gateway: Gateway, log: (s: string) => void = (s) => console.error(s)): Promise<string> {
  return ensureOnDemand('gateway', gateway, log);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  ensureBinaries()
    .then((dir) => console.log(dir))
    .catch((e: unknown) => {
      console.error(e instanceof Error ? e.message : e);
      process.exit(1);
    });
}
