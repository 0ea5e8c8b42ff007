// Builds the lab's binaries from the Go module proxy and caches them outside the repository:
//   ~/.cache/extended-deployment/lab/<k8s>-<etcd>-<kwok>-<go>/bin/
//     kube-apiserver kube-controller-manager kube-scheduler kubectl etcd pkigen kwok
//   ~/.cache/extended-deployment/lab/gitops-<engine>-<version>_<go>/bin/   (on demand: kustomize-controller, cel-health; argocd, lua-health)
//   ~/.cache/extended-deployment/lab/peer-argo-rollouts-<version>_<go>/bin/  (on demand, for bench:peers: rollouts-controller, crds/)
//   ~/.cache/extended-deployment/lab/gateway-traefik-<version>_<go>/bin/  (on demand, for the traffic suites: traefik)
//   ~/.cache/extended-deployment/lab/node-v<release>-<platform>-<arch>/bin/  (the agent image's Node.js, fetched: image-node.ts)
// The pinned versions are read from the wrapper modules' go.mod files (the single source of truth), so the cache
// key changes exactly when a pin changes. A stamp file with a hash of every build input (go.mod, go.sum, Go sources)
// triggers a rebuild when anything else in the wrapper modules changes.
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, cpSync, existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { imageNode } from './image-node.js';

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

/** One `go build` of a cached build: the wrapper module it runs in and its arguments, its `-o` pointing at `out`. */
interface GoBuild {
  readonly modDir: string;
  readonly args: (out: string) => readonly string[];
}

/**
 * Hash of what a build's output depends on: every file of its wrapper modules (go.mod and go.sum pin every version),
 * its `go build` commands and the Go flags. Not of this whole file, so a change elsewhere in it rebuilds nothing (nor
 * does the source of an `after` step: the loaders that run this file, tsx and vitest, each rewrite it differently).
 */
function inputsHash(goBuilds: readonly GoBuild[]): string {
  const h = createHash('sha256');
  for (const f of [...new Set(goBuilds.map((b) => b.modDir))].flatMap(listFiles)) {
    h.update(relative(clusterDir, f));
    h.update('\0');
    h.update(readFileSync(f));
    h.update('\0');
  }
  h.update(JSON.stringify([goEnv().GOFLAGS, goBuilds.map((b) => [relative(clusterDir, b.modDir), b.args('OUT')])]));
  return h.digest('hex');
}

function ready(binDir: string, binaries: readonly string[], hash: string): boolean {
  const stamp = join(binDir, '.inputs.sha256');
  if (!existsSync(stamp)) return false;
  if (readFileSync(stamp, 'utf8').trim() !== hash) return false;
  return binaries.every((b) => existsSync(join(binDir, b)));
}

export function binariesReady(binDir: string): boolean {
  return ready(binDir, BINARIES, inputsHash(labGoBuilds(readPins())));
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

async function acquireLock(lockDir: string, log: (s: string) => void): Promise<() => void> {
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
      // Awaited, not slept: a test worker waiting here for a background build keeps answering its runner.
      await new Promise((resolve) => setTimeout(resolve, 2_000));
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
  /** Logged once when a build starts. */
  readonly description: string;
  /** The `go build` commands, run one after the other with `-o` pointing at a temp directory. */
  readonly goBuilds: readonly GoBuild[];
  /** What to do in the temp directory after the builds, e.g. rename or copy a file. */
  readonly after?: (tmp: string, go: string) => void;
}

/**
 * Builds into a temp directory next to `binDir` under a lock shared by every build of the cache (two builds on 2 cores
 * only slow each other down), then swaps it in with its stamp, so a killed build never leaves a half-filled cache.
 */
async function ensureCached(b: CachedBuild, log: (s: string) => void): Promise<string> {
  const hash = inputsHash(b.goBuilds);
  if (ready(b.binDir, b.binaries, hash)) return b.binDir;
  const release = await acquireLock(join(cacheRoot(), '.build.lock'), log);
  try {
    if (ready(b.binDir, b.binaries, hash)) return b.binDir;
    const started = Date.now();
    log(b.description);
    log('lab: a cold build (empty Go module and build caches) takes a while on 2 cores; later runs reuse the caches');
    const tmp = `${b.binDir}.tmp-${process.pid}`;
    rmSync(tmp, { recursive: true, force: true });
    mkdirSync(tmp, { recursive: true });
    const go = goBinary();
    for (const goBuild of b.goBuilds) await run(go, [...goBuild.args(tmp)], goBuild.modDir, log);
    b.after?.(tmp, go);
    for (const bin of b.binaries) {
      if (!existsSync(join(tmp, bin))) throw new Error(`build finished but ${bin} is missing in ${tmp}`);
    }
    writeFileSync(join(tmp, '.inputs.sha256'), `${hash}\n`);
    rmSync(b.binDir, { recursive: true, force: true });
    renameSync(tmp, b.binDir);
    log(`lab: build done in ${((Date.now() - started) / 1000).toFixed(0)} s`);
    return b.binDir;
  } finally {
    release();
  }
}

/** The lab's builds: the Kubernetes components, etcd and pkigen from one module, kwok from its own. */
function labGoBuilds(pins: Pins): GoBuild[] {
  return [
    {
      modDir: k8sModDir,
      args: (out) => [
        'build',
        '-trimpath',
        '-ldflags',
        versionLdflags(pins),
        '-o',
        `${out}/`,
        'k8s.io/kubernetes/cmd/kube-apiserver',
        'k8s.io/kubernetes/cmd/kube-controller-manager',
        'k8s.io/kubernetes/cmd/kube-scheduler',
        'k8s.io/kubernetes/cmd/kubectl',
        'go.etcd.io/etcd/server/v3',
        './pkigen',
      ],
    },
    { modDir: kwokModDir, args: (out) => ['build', '-trimpath', '-ldflags', '-s -w', '-o', `${out}/`, 'sigs.k8s.io/kwok/cmd/kwok'] },
  ];
}

/** Returns the directory holding the binaries for the pinned versions, building them first if needed. */
export async function ensureBinaries(log: (s: string) => void = (s) => console.error(s)): Promise<string> {
  const pins = readPins();
  return ensureCached(
    {
      binDir: binDirFor(pins),
      binaries: BINARIES,
      description:
        `lab: building k8s ${pins.k8s} (kube-apiserver, kube-controller-manager, kube-scheduler, kubectl), ` +
        `etcd ${pins.etcd}, kwok ${pins.kwok} with ${pins.go} into ${binDirFor(pins)}`,
      goBuilds: labGoBuilds(pins),
      // `go build -o dir/` names the etcd main after its module path's last non-version element: "server".
      after: (tmp) => renameSync(join(tmp, 'server'), join(tmp, 'etcd')),
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
  /** What the build is for, the first part of its cache directory's name. */
  readonly cachePrefix: 'gitops' | 'peer' | 'gateway';
  readonly module: string;
  readonly pinned: string;
  readonly packages: readonly string[];
  readonly binaries: readonly string[];
  /** A directory of the pinned module (its copy in the module cache) copied next to the binaries, e.g. its CRDs. */
  readonly moduleDir?: { readonly from: string; readonly to: string };
  /** A string variable set to the pinned version with -X (what the binary reports instead of "dev"). */
  readonly versionVar?: string;
}

/** Per engine, peer controller or gateway: its build. The cache directory is `<cachePrefix>-<key>-<version>_<go>`. */
const ON_DEMAND_BUILDS: Record<OnDemandKey, OnDemandBuild> = {
  flux: {
    cachePrefix: 'gitops',
    module: 'flux',
    pinned: 'github.com/fluxcd/kustomize-controller',
    packages: ['github.com/fluxcd/kustomize-controller', './cmd/cel-health'],
    binaries: ['kustomize-controller', 'cel-health'],
  },
  argocd: {
    cachePrefix: 'gitops',
    module: 'argocd',
    pinned: 'github.com/argoproj/argo-cd/v3',
    packages: ['.', './cmd/lua-health'],
    binaries: ['argocd', 'lua-health'],
  },
  'argo-rollouts': {
    cachePrefix: 'peer',
    module: 'argo-rollouts',
    pinned: 'github.com/argoproj/argo-rollouts',
    packages: ['github.com/argoproj/argo-rollouts/cmd/rollouts-controller'],
    binaries: ['rollouts-controller', 'crds'],
    moduleDir: { from: 'manifests/crds', to: 'crds' },
  },
  traefik: {
    cachePrefix: 'gateway',
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

/** Copies a directory of the pinned module (from the module cache the build filled) into `tmp`, writable. */
function copyModuleDir(modDir: string, pinned: string, moduleDir: { readonly from: string; readonly to: string }, tmp: string, go: string): void {
  const dir = spawnSync(go, ['list', '-m', '-f', '{{.Dir}}', pinned], { cwd: modDir, env: goEnv(), encoding: 'utf8' });
  if (dir.status !== 0 || !dir.stdout.trim()) throw new Error(`go list -m ${pinned} failed: ${dir.stderr}`);
  const to = join(tmp, moduleDir.to);
  cpSync(join(dir.stdout.trim(), moduleDir.from), to, { recursive: true });
  // The module cache is read-only; the copy must not be, or the next rebuild cannot remove it.
  for (const p of [to, ...listFiles(to)]) chmodSync(p, statSync(p).isDirectory() ? 0o755 : 0o644);
}

/**
 * Builds an on-demand build into `<cache>/<prefix>-<key>-<version>_<go>/bin/`, with the same flags, stamp and lock as
 * the lab's own build; copies the pinned module's `moduleDir` (from the module cache the build filled) next to it.
 */
async function ensureOnDemand(key: OnDemandKey, log: (s: string) => void): Promise<string> {
  const b = ON_DEMAND_BUILDS[key];
  const modDir = onDemandModDir(key);
  const version = onDemandVersion(key);
  const binDir = join(cacheRoot(), `${b.cachePrefix}-${key}-${version}_${readPins().go}`, 'bin');
  return ensureCached(
    {
      binDir,
      binaries: b.binaries,
      description: `lab: building ${b.pinned} ${version} (${b.binaries.join(', ')}) into ${binDir}`,
      goBuilds: [
        {
          modDir,
          args: (out) => [
            'build',
            '-trimpath',
            '-ldflags',
            ['-s', '-w', ...(b.versionVar ? [`-X ${b.versionVar}=${version}`] : [])].join(' '),
            '-o',
            `${out}/`,
            ...b.packages,
          ],
        },
      ],
      ...(b.moduleDir ? { after: (tmp: string, go: string) => copyModuleDir(modDir, b.pinned, b.moduleDir!, tmp, go) } : {}),
    },
    log,
  );
}

/** Builds a GitOps engine's binaries on demand (only the GitOps suites and `lab:gitops` need them). */
export async function ensureGitopsBinaries(engine: GitopsEngine, log: (s: string) => void = (s) => console.error(s)): Promise<string> {
  return ensureOnDemand(engine, log);
}

/**
 * Builds a peer controller on demand (only `bench:peers` needs it) into `<cache>/peer-<name>-<version>_<go>/bin/`:
 * for Argo Rollouts, `rollouts-controller` and `crds/` (the module's manifests/crds at the pinned tag).
 */
export async function ensurePeerBinaries(peer: PeerController, log: (s: string) => void = (s) => console.error(s)): Promise<string> {
  return ensureOnDemand(peer, log);
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
  return ensureOnDemand(gateway, log);
}

/** The agent image's Node.js, fetched rather than built (image-node.ts). */
const IMAGE_NODE = 'image-node';

/** What `lab:build` builds: the lab itself, one of the builds made on demand, or the agent image's Node.js. */
export type BuildName = 'lab' | OnDemandKey | typeof IMAGE_NODE;

export const BUILD_NAMES: readonly BuildName[] = ['lab', ...(Object.keys(ON_DEMAND_BUILDS) as OnDemandKey[]), IMAGE_NODE];

export function isBuildName(name: string): name is BuildName {
  return (BUILD_NAMES as readonly string[]).includes(name);
}

/** Builds one of `BUILD_NAMES` (or finds it cached) and returns its binary directory. */
export async function ensureBuild(name: BuildName, log: (s: string) => void = (s) => console.error(s)): Promise<string> {
  if (name === IMAGE_NODE) return dirname(imageNode(log));
  return name === 'lab' ? ensureBinaries(log) : ensureOnDemand(name, log);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  ensureBinaries()
    .then((dir) => console.log(dir))
    .catch((e: unknown) => {
      console.error(e instanceof Error ? e.message : e);
      process.exit(1);
    });
}
