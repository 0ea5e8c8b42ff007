// Real GitOps engines next to the lab, as local processes on 127.0.0.1 (built from their Go modules by build.ts):
//
//   Flux     kustomize-controller (feature gate ExternalArtifact) + artifact-server.ts standing in for
//            source-controller's storage: publish() tars crds/ and dist/, serves it and writes an ExternalArtifact's
//            status, as source-controller would for a GitRepository (Flux RFC-0012).
//   Argo CD  application-controller + repo-server + an in-process Redis (one binary, symlinked per component as
//            upstream's image does), syncing from a local git repository over file:// (as Argo CD's own e2e tests).
//
// Every process is recorded in the lab's pids/ like the cluster's own, so `lab:down` stops it; logs go to logs/.
// Used by `npm run lab:gitops -- flux|argocd` and by the GitOps end-to-end suites.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments, stringify } from 'yaml';
import { clusterDir, ensureGitopsBinaries, gitopsModDir, gitopsVersion, goBinary, repoRoot, type GitopsEngine } from './build.js';
import { freePorts, kubeconfigPath, labDir, livePid, processLogPath, readState, startProcess, stopProcess } from './lab.js';
import { startTsxProcess } from './netns.js';

export type { GitopsEngine } from './build.js';

type Log = (s: string) => void;
const defaultLog: Log = (s) => console.error(s);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A Kubernetes object as read from YAML. */
export interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; [key: string]: unknown };
  [key: string]: unknown;
}

/** Where the lab keeps the engines' files: artifacts, the git repository, Argo CD's data directories. */
export function gitopsDir(): string {
  return join(labDir(), 'gitops');
}

// ---------------------------------------------------------------------------------------------------------------
// cluster access through the lab's own kubectl

function kubectlBinary(): string {
  const state = readState();
  if (!state) throw new Error('the lab is not running: start it with `npm run lab:up`');
  return join(state.binDir, 'kubectl');
}

/** Runs the lab's kubectl against the lab; throws with its stderr when it fails. */
export function kubectl(args: readonly string[], input?: string): string {
  const r = spawnSync(kubectlBinary(), ['--kubeconfig', kubeconfigPath(), ...args], { encoding: 'utf8', input, maxBuffer: 64 * 1024 * 1024 });
  if (r.status !== 0) throw new Error(`kubectl ${args.join(' ')}: ${(r.stderr || r.stdout || String(r.error)).trim()}`);
  return r.stdout;
}

/** Server-side apply of objects or files, under `manager`. */
export function applyServerSide(what: { objects?: readonly Manifest[]; files?: readonly string[] }, manager = 'extendeddeployment-lab'): void {
  const files = (what.files ?? []).flatMap((f) => ['-f', f]);
  if (what.objects && what.objects.length > 0) {
    kubectl(['apply', '--server-side', '--force-conflicts', `--field-manager=${manager}`, '-f', '-'], what.objects.map((o) => stringify(o)).join('---\n'));
  }
  if (files.length > 0) kubectl(['apply', '--server-side', '--force-conflicts', `--field-manager=${manager}`, ...files]);
}

/** Every document of a YAML file. */
export function readManifests(file: string): Manifest[] {
  return parseAllDocuments(readFileSync(file, 'utf8'))
    .map((d) => d.toJS() as Manifest | null)
    .filter((o): o is Manifest => o !== null);
}

/** The directory of a module version in the Go module cache (downloaded if needed), read in the engine's wrapper. */
function moduleDir(engine: GitopsEngine, moduleAtVersion: string): string {
  return goModuleDir(gitopsModDir(engine), moduleAtVersion);
}

/** The directory of a module version in the Go module cache (downloaded if needed; the wrapper's go.sum checks it). */
export function goModuleDir(wrapperModDir: string, moduleAtVersion: string): string {
  const r = spawnSync(goBinary(), ['mod', 'download', '-json', moduleAtVersion], {
    cwd: wrapperModDir,
    encoding: 'utf8',
    env: { ...process.env, GOTOOLCHAIN: 'local', GOFLAGS: '-mod=readonly' },
  });
  const info = JSON.parse(r.stdout || '{}') as { Dir?: string; Error?: string };
  if (r.status !== 0 || !info.Dir) throw new Error(`go mod download ${moduleAtVersion}: ${info.Error ?? r.stderr}`);
  return info.Dir;
}

/**
 * Waits until every CRD named is Established. `kubectl wait --for=condition=Established` is not used: on a CRD the API
 * server has not given any status condition yet it fails at once (".status.conditions accessor error: <nil>") instead
 * of waiting, which a cold lab hit in CI.
 */
export async function waitCrdsEstablished(names: readonly string[], timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  // Read as JSON: a jsonpath filter over status.conditions fails while the CRD has no status yet.
  const established = (name: string) => {
    const crd = JSON.parse(kubectl(['get', `crd/${name}`, '-o', 'json'])) as { status?: { conditions?: { type: string; status: string }[] } };
    return crd.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True') ?? false;
  };
  let waiting = names.filter((n) => !established(n));
  while (waiting.length > 0) {
    if (Date.now() > deadline) throw new Error(`CRDs not Established within ${timeoutMs / 1000} s: ${waiting.join(', ')}`);
    await sleep(250);
    waiting = waiting.filter((n) => !established(n));
  }
}

export async function waitHttp(what: string, url: string, timeoutMs: number, logFile: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(2000) });
      if (res.ok) return;
      last = `HTTP ${res.status}`;
    } catch (e) {
      last = (e as Error).message;
    }
    await sleep(250);
  }
  const tail = existsSync(logFile) ? readFileSync(logFile, 'utf8').split('\n').slice(-20).join('\n') : '';
  throw new Error(`${what} did not answer ${url} within ${timeoutMs / 1000} s (${last})\n${tail}`);
}

function stateFile(engine: GitopsEngine): string {
  return join(gitopsDir(), `${engine}.json`);
}

function readEngineState<T>(engine: GitopsEngine, processes: readonly string[]): T | undefined {
  if (!existsSync(stateFile(engine)) || processes.some((p) => livePid(p) === undefined)) return undefined;
  return JSON.parse(readFileSync(stateFile(engine), 'utf8')) as T;
}

// ---------------------------------------------------------------------------------------------------------------
// Flux

export const FLUX_NAMESPACE = 'flux-system';
/** The ExternalArtifact that stands in for the example's GitRepository `platform`. */
export const FLUX_SOURCE = 'platform';
const FLUX_PROCESSES = ['artifact-server', 'kustomize-controller'] as const;

interface FluxState {
  readonly artifactPort: number;
  readonly healthPort: number;
  readonly metricsPort: number;
}

/** A published revision of the Flux source. */
export interface FluxRevision {
  readonly revision: string;
  readonly digest: string;
}

/** Flux running next to the lab. */
export class FluxLab {
  constructor(readonly state: FluxState) {}

  /** kustomize-controller's JSON log. */
  get logFile(): string {
    return processLogPath('kustomize-controller');
  }

  /**
   * Publishes `root`'s crds/ and dist/ as the source's new artifact: a tarball served by the artifact server and the
   * ExternalArtifact's status pointing at it (url, sha256 digest, revision), which makes kustomize-controller apply it.
   */
  publish(root: string, label: string): FluxRevision {
    const dir = join(gitopsDir(), 'artifacts');
    mkdirSync(dir, { recursive: true });
    const tmp = join(dir, `.publish-${process.pid}.tar.gz`);
    const tar = spawnSync('tar', ['--sort=name', '--mtime=@0', '--owner=0', '--group=0', '--numeric-owner', '-czf', tmp, '-C', root, 'crds', 'dist']);
    if (tar.status !== 0) throw new Error(`tar: ${tar.stderr.toString()}`);
    const hex = createHash('sha256').update(readFileSync(tmp)).digest('hex');
    const path = `${hex}.tar.gz`;
    renameSync(tmp, join(dir, path));
    const revision = `${label}@sha256:${hex}`;
    applyServerSide({
      objects: [{ apiVersion: 'source.toolkit.fluxcd.io/v1', kind: 'ExternalArtifact', metadata: { name: FLUX_SOURCE, namespace: FLUX_NAMESPACE }, spec: {} }],
    });
    const generation = Number(kubectl(['get', 'externalartifact', FLUX_SOURCE, '-n', FLUX_NAMESPACE, '-o', 'jsonpath={.metadata.generation}']));
    const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    const status = {
      observedGeneration: generation,
      artifact: {
        url: `http://127.0.0.1:${this.state.artifactPort}/${path}`,
        path,
        revision,
        digest: `sha256:${hex}`,
        size: readFileSync(join(dir, path)).length,
        lastUpdateTime: now,
      },
      conditions: [
        {
          type: 'Ready',
          status: 'True',
          reason: 'Succeeded',
          message: `stored artifact for revision '${revision}'`,
          lastTransitionTime: now,
          observedGeneration: generation,
        },
      ],
    };
    kubectl(['patch', 'externalartifact', FLUX_SOURCE, '-n', FLUX_NAMESPACE, '--subresource=status', '--type=merge', '-p', JSON.stringify({ status })]);
    return { revision, digest: hex };
  }

  /** The example's Kustomizations (examples/gitops/flux-kustomization.yaml), their source swapped for the artifact. */
  static exampleKustomizations(): Manifest[] {
    return readManifests(join(repoRoot, 'examples', 'gitops', 'flux-kustomization.yaml'))
      .filter((o) => o.kind === 'Kustomization')
      .map((o) => ({ ...o, spec: { ...(o['spec'] as object), sourceRef: { kind: 'ExternalArtifact', name: FLUX_SOURCE } } }));
  }
}

/**
 * Starts Flux next to the running lab (or finds it running): source and kustomize CRDs from the modules at the pinned
 * releases, the artifact server, and kustomize-controller with the two settings docs/flux.md recommends: DeployRegions
 * get an apply stage of their own (`--custom-apply-stage-kinds`), so they exist before the workloads that use them, and
 * a new revision cancels a running health check (`CancelHealthCheckOnNewRevision`), so a rollout waiting at an
 * approval gate or a failing one never holds back the next commit until the Kustomization's timeout.
 */
export async function startFlux(log: Log = defaultLog): Promise<FluxLab> {
  const running = readEngineState<FluxState>('flux', FLUX_PROCESSES);
  if (running) return new FluxLab(running);
  const binDir = await ensureGitopsBinaries('flux', log);
  for (const p of FLUX_PROCESSES) await stopProcess(p, log);
  const version = gitopsVersion('flux');
  const sourceCrds = join(moduleDir('flux', `github.com/fluxcd/source-controller@${version}`), 'config', 'crd', 'bases');
  const kustomizeCrds = join(moduleDir('flux', `github.com/fluxcd/kustomize-controller@${version}`), 'config', 'crd', 'bases');
  applyServerSide({ files: [sourceCrds, kustomizeCrds] });
  await waitCrdsEstablished(['kustomizations.kustomize.toolkit.fluxcd.io', 'externalartifacts.source.toolkit.fluxcd.io']);
  applyServerSide({ objects: [{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: FLUX_NAMESPACE } }] });

  const artifacts = join(gitopsDir(), 'artifacts');
  mkdirSync(artifacts, { recursive: true });
  const [artifactPort, healthPort, metricsPort] = (await freePorts(3)) as [number, number, number];
  // tsx as the repository resolves it: the process runs in the lab's directory, which may be outside the repository.
  startTsxProcess('artifact-server', join(clusterDir, 'artifact-server.ts'), [artifacts, String(artifactPort)]);
  await waitHttp('artifact-server', `http://127.0.0.1:${artifactPort}/healthz`, 30_000, processLogPath('artifact-server'));
  startProcess(
    'kustomize-controller',
    join(binDir, 'kustomize-controller'),
    [
      `--metrics-addr=127.0.0.1:${metricsPort}`,
      `--health-addr=127.0.0.1:${healthPort}`,
      '--feature-gates=ExternalArtifact=true,CancelHealthCheckOnNewRevision=true',
      '--custom-apply-stage-kinds=extendeddeployment.io/DeployRegion',
      '--requeue-dependency=5s',
      '--log-level=debug',
      '--log-encoding=json',
    ],
    { RUNTIME_NAMESPACE: FLUX_NAMESPACE, KUBECONFIG: kubeconfigPath() },
  );
  await waitHttp('kustomize-controller', `http://127.0.0.1:${healthPort}/readyz`, 60_000, processLogPath('kustomize-controller'));
  const state: FluxState = { artifactPort, healthPort, metricsPort };
  writeFileSync(stateFile('flux'), JSON.stringify(state));
  log(`lab: Flux kustomize-controller ${version} running (log ${processLogPath('kustomize-controller')})`);
  return new FluxLab(state);
}

// ---------------------------------------------------------------------------------------------------------------
// Argo CD

export const ARGOCD_NAMESPACE = 'argocd';
const ARGOCD_PROCESSES = ['argocd-redis', 'argocd-repo-server', 'argocd-application-controller'] as const;

interface ArgocdState {
  readonly redisPort: number;
  readonly repoPort: number;
  readonly repoMetricsPort: number;
  readonly controllerMetricsPort: number;
  readonly serverSideDiff: boolean;
}

/** Options of the Argo CD controller the lab starts. */
export interface ArgocdOptions {
  /** Compare with server-side diff (`--server-side-diff-enabled`) instead of the default client-side diff. */
  readonly serverSideDiff?: boolean;
  /** How often every Application is compared with Git without an event (`--app-resync`, seconds). Default 30. */
  readonly resyncSeconds?: number;
}

/** Argo CD running next to the lab, syncing from a local git repository. */
export class ArgocdLab {
  constructor(readonly state: ArgocdState) {}

  /** The git repository Argo CD reads (`file://` URL) and its work tree. */
  static get repoDir(): string {
    return join(gitopsDir(), 'repo');
  }

  static get repoUrl(): string {
    return `file://${ArgocdLab.repoDir}`;
  }

  get controllerLog(): string {
    return processLogPath('argocd-application-controller');
  }

  /** Replaces crds/ and dist/ in the repository with `root`'s and commits them on main; returns the commit. */
  commit(root: string, message: string): string {
    const repo = ArgocdLab.repoDir;
    for (const sub of ['crds', 'dist']) {
      rmSync(join(repo, sub), { recursive: true, force: true });
      cpSync(join(root, sub), join(repo, sub), { recursive: true });
    }
    git(repo, ['add', '-A']);
    git(repo, ['commit', '-q', '--allow-empty', '-m', message]);
    return git(repo, ['rev-parse', 'HEAD']).trim();
  }

  /** Asks Argo CD to compare an Application with Git now (what a webhook or the UI's refresh does). */
  refresh(app: string): void {
    kubectl(['annotate', 'application', app, '-n', ARGOCD_NAMESPACE, '--overwrite', 'argocd.argoproj.io/refresh=normal']);
  }

  /** The example Application (examples/gitops/argocd-application.yaml), its repository URL swapped for the lab's. */
  static exampleApplication(): Manifest {
    const [app] = readManifests(join(repoRoot, 'examples', 'gitops', 'argocd-application.yaml'));
    if (!app) throw new Error('examples/gitops/argocd-application.yaml holds no Application');
    const spec = app['spec'] as { sources: { repoURL: string }[] };
    return { ...app, spec: { ...spec, sources: spec.sources.map((s) => ({ ...s, repoURL: ArgocdLab.repoUrl })) } };
  }
}

function git(cwd: string, args: readonly string[]): string {
  const r = spawnSync('git', args, {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, GIT_AUTHOR_NAME: 'lab', GIT_AUTHOR_EMAIL: 'lab@example.com', GIT_COMMITTER_NAME: 'lab', GIT_COMMITTER_EMAIL: 'lab@example.com' },
  });
  if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

/**
 * Starts Argo CD next to the running lab (or finds it running with the same options): its CRDs and base config from
 * the module at the pinned release, the project's health checks in argocd-cm (applied as docs/argocd.md says), the
 * default AppProject (argocd-server would create it), the git repository, then Redis, repo-server and controller.
 */
export async function startArgocd(options: ArgocdOptions = {}, log: Log = defaultLog): Promise<ArgocdLab> {
  const serverSideDiff = options.serverSideDiff ?? false;
  const running = readEngineState<ArgocdState>('argocd', ARGOCD_PROCESSES);
  if (running && running.serverSideDiff === serverSideDiff) return new ArgocdLab(running);
  const binDir = await ensureGitopsBinaries('argocd', log);
  for (const p of ARGOCD_PROCESSES) await stopProcess(p, log);
  const module = moduleDir('argocd', `github.com/argoproj/argo-cd/v3@${gitopsVersion('argocd')}`);
  const crds = ['application', 'appproject', 'applicationset'].map((c) => join(module, 'manifests', 'crds', `${c}-crd.yaml`));
  applyServerSide({ files: crds });
  await waitCrdsEstablished(['applications.argoproj.io', 'appprojects.argoproj.io']);
  applyServerSide({ objects: [{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ARGOCD_NAMESPACE } }] });
  const config = [
    'argocd-cm',
    'argocd-secret',
    'argocd-rbac-cm',
    'argocd-cmd-params-cm',
    'argocd-gpg-keys-cm',
    'argocd-ssh-known-hosts-cm',
    'argocd-tls-certs-cm',
  ];
  for (const c of config)
    kubectl([
      'apply',
      '--server-side',
      '--field-manager=argocd-install',
      '-n',
      ARGOCD_NAMESPACE,
      '-f',
      join(module, 'manifests', 'base', 'config', `${c}.yaml`),
    ]);
  kubectl([
    'apply',
    '--server-side',
    '--field-manager=extended-deployment',
    '-f',
    join(repoRoot, 'gitops', 'argocd', 'argocd-cm-resource-customizations.yaml'),
  ]);
  applyServerSide({
    objects: [
      {
        apiVersion: 'argoproj.io/v1alpha1',
        kind: 'AppProject',
        metadata: { name: 'default', namespace: ARGOCD_NAMESPACE },
        spec: { sourceRepos: ['*'], destinations: [{ server: '*', namespace: '*' }], clusterResourceWhitelist: [{ group: '*', kind: '*' }] },
      },
    ],
  });

  const repo = ArgocdLab.repoDir;
  if (!existsSync(join(repo, '.git'))) {
    mkdirSync(repo, { recursive: true });
    git(repo, ['init', '-q', '-b', 'main']);
    git(repo, ['commit', '-q', '--allow-empty', '-m', 'empty']);
  }

  // Argo CD's data directories: the repo-server refuses to start without its GPG, TLS and SSH paths.
  const data = join(gitopsDir(), 'argocd');
  const dirs = Object.fromEntries(['gnupg', 'gpg', 'tls', 'ssh', 'plugins', 'bin'].map((d) => [d, join(data, d)]));
  for (const d of Object.values(dirs)) mkdirSync(d, { recursive: true });
  // One binary dispatching on its name, like upstream's image: a symlink per component.
  const bin = (name: string) => {
    const link = join(dirs['bin']!, name);
    rmSync(link, { force: true });
    symlinkSync(join(binDir, 'argocd'), link);
    return link;
  };
  const [redisPort, repoPort, repoMetricsPort, controllerMetricsPort] = (await freePorts(4)) as [number, number, number, number];
  startProcess('argocd-redis', bin('argocd-redis'), [`127.0.0.1:${redisPort}`]);
  startProcess(
    'argocd-repo-server',
    bin('argocd-repo-server'),
    [
      '--address=127.0.0.1',
      `--port=${repoPort}`,
      '--metrics-address=127.0.0.1',
      `--metrics-port=${repoMetricsPort}`,
      `--redis=127.0.0.1:${redisPort}`,
      '--disable-tls',
      '--loglevel=info',
    ],
    {
      ARGOCD_GPG_ENABLED: 'false',
      ARGOCD_GNUPGHOME: dirs['gnupg'],
      ARGOCD_GPG_DATA_PATH: dirs['gpg'],
      ARGOCD_TLS_DATA_PATH: dirs['tls'],
      ARGOCD_SSH_DATA_PATH: dirs['ssh'],
      ARGOCD_PLUGINSOCKFILEPATH: dirs['plugins'],
    },
  );
  await waitHttp('argocd-repo-server', `http://127.0.0.1:${repoMetricsPort}/metrics`, 60_000, processLogPath('argocd-repo-server'));
  startProcess(
    'argocd-application-controller',
    bin('argocd-application-controller'),
    [
      `--kubeconfig=${kubeconfigPath()}`,
      `--namespace=${ARGOCD_NAMESPACE}`,
      `--redis=127.0.0.1:${redisPort}`,
      `--repo-server=127.0.0.1:${repoPort}`,
      '--repo-server-plaintext',
      `--metrics-port=${controllerMetricsPort}`,
      `--app-resync=${options.resyncSeconds ?? 30}`,
      '--persist-resource-health',
      '--loglevel=info',
      ...(serverSideDiff ? ['--server-side-diff-enabled'] : []),
    ],
    // The controller believes it runs in the cluster it manages (https://kubernetes.default.svc), as upstream's
    // local development setup does; the name picks its shard.
    { ARGOCD_FAKE_IN_CLUSTER: 'true', KUBECONFIG: kubeconfigPath(), HOSTNAME: 'argocd-application-controller-0' },
  );
  await waitHttp('argocd-application-controller', `http://127.0.0.1:${controllerMetricsPort}/metrics`, 60_000, processLogPath('argocd-application-controller'));
  const state: ArgocdState = { redisPort, repoPort, repoMetricsPort, controllerMetricsPort, serverSideDiff };
  writeFileSync(stateFile('argocd'), JSON.stringify(state));
  log(
    `lab: Argo CD ${gitopsVersion('argocd')} running${serverSideDiff ? ' with server-side diff' : ''} (log ${processLogPath('argocd-application-controller')})`,
  );
  return new ArgocdLab(state);
}

/** Stops the engine's processes (the objects it synced stay). */
export async function stopGitops(engine: GitopsEngine, log: Log = defaultLog): Promise<void> {
  for (const p of [...(engine === 'flux' ? FLUX_PROCESSES : ARGOCD_PROCESSES)].reverse()) await stopProcess(p, log);
  rmSync(stateFile(engine), { force: true });
}

/**
 * Runs an engine's own health tool (built with it, test/cluster/go/<engine>/cmd/) over files: one JSON line a file.
 */
async function engineHealth<T>(engine: GitopsEngine, tool: string, config: string, files: readonly string[]): Promise<T[]> {
  const binDir = await ensureGitopsBinaries(engine);
  const r = spawnSync(join(binDir, tool), [config, ...files], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${tool}: ${r.error?.message ?? r.stderr}`);
  return r.stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as T);
}

/**
 * Flux's own health of each file (cel-health: fluxcd/pkg/runtime/cel's status reader over the `healthCheckExprs` of the
 * Kustomization file, as kustomize-controller reads them): a kstatus status, with the error when it is Unknown.
 */
export function fluxHealth(kustomizationFile: string, files: readonly string[]): Promise<{ file: string; status?: string; error?: string }[]> {
  return engineHealth('flux', 'cel-health', kustomizationFile, files);
}

/** Argo CD's own health of each file (lua-health: Argo CD's settings manager and gitops-engine's health with the Lua overrides). */
export function argocdHealth(argocdCm: string, files: readonly string[]): Promise<{ file: string; status?: string; message: string; error?: string }[]> {
  return engineHealth('argocd', 'lua-health', argocdCm, files);
}
