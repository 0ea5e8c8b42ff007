import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';
import type { Cluster, Context, User } from '@kubernetes/client-node';
import { KubeConfig } from './kube-config.js';
import { DEFAULT_NAMESPACE } from '../../core/api/common.js';

/** Where a pod's service-account files are mounted; their presence (with KUBERNETES_SERVICE_HOST) means "in a cluster". */
const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

/**
 * What loading needs of a KubeConfig class: the agent's own ({@link KubeConfig}, the default, which keeps
 * client-node's index out of the agent process) and client-node's (the CLI's, for client-node's API clients) both have it.
 */
export interface LoadableKubeConfig {
  getContexts(): Context[];
  getClusters(): Cluster[];
  getUsers(): User[];
  getCurrentContext(): string;
  setCurrentContext(context: string): void;
  getContextObject(name: string): Context | null;
  getCurrentCluster(): Cluster | null;
  loadFromFile(file: string): void;
  loadFromCluster(pathPrefix?: string): void;
  loadFromOptions(options: { clusters: Cluster[]; users: User[]; contexts: Context[]; currentContext: string }): void;
}

/** A kubeconfig that cannot be loaded or lacks the asked-for context. */
export class KubeConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'KubeConfigError';
  }
}

/** Where to find the cluster. */
export interface KubeConfigOptions {
  /** An explicit kubeconfig file (--kubeconfig). */
  readonly kubeconfig?: string | undefined;
  /** A context of that kubeconfig (--context). */
  readonly context?: string | undefined;
  /**
   * Prefer the pod's service account over ~/.kube/config (controller-runtime's order for controllers); a CLI prefers
   * the user's kubeconfig, like kubectl.
   */
  readonly preferInCluster?: boolean;
  /** The folder the pod's service-account paths are under: `/` in a pod; tests pass a folder of their own. */
  readonly root?: string;
}

/**
 * Loads cluster access like kubectl and controller-runtime: --kubeconfig, then the files of $KUBECONFIG merged, then
 * (for the agent) the in-cluster service account, then ~/.kube/config, then (for the CLI) in-cluster. With none of
 * them it fails with client-go's "no configuration has been provided" (client-node would quietly fall back to
 * http://localhost:8080 and fail on the first request, which the agent would retry forever).
 */
export function loadKubeConfig(options?: KubeConfigOptions): KubeConfig;
export function loadKubeConfig<K extends LoadableKubeConfig>(options: KubeConfigOptions, create: () => K): K;
export function loadKubeConfig(options: KubeConfigOptions = {}, create: () => LoadableKubeConfig = () => new KubeConfig()): LoadableKubeConfig {
  const kc = load(options, create);
  if (options.context) {
    if (!kc.getContextObject(options.context)) {
      const known =
        kc
          .getContexts()
          .map((c) => c.name)
          .join(', ') || 'none';
      throw new KubeConfigError(`context "${options.context}" not found in kubeconfig (known: ${known})`);
    }
    kc.setCurrentContext(options.context);
  }
  if (!kc.getCurrentCluster()) throw new KubeConfigError('the kubeconfig has no current cluster (set one with --context)');
  return kc;
}

function load(options: KubeConfigOptions, create: () => LoadableKubeConfig): LoadableKubeConfig {
  const root = options.root ?? '/';
  if (options.kubeconfig) {
    if (!existsSync(options.kubeconfig)) throw new KubeConfigError(`kubeconfig ${options.kubeconfig}: no such file`);
    return merged([options.kubeconfig], create);
  }
  const listed = (process.env['KUBECONFIG'] ?? '').split(delimiter).filter((file) => file !== '');
  if (options.preferInCluster && listed.length === 0 && inCluster(root)) return fromCluster(root, create);
  // Like client-go: $KUBECONFIG replaces ~/.kube/config, and the files it names that do not exist are skipped.
  const files = (listed.length > 0 ? listed : [join(homedir(), '.kube', 'config')]).filter((file) => existsSync(file));
  const kc = merged(files, create);
  if (kc.getContexts().length > 0 || kc.getClusters().length > 0) return kc;
  if (inCluster(root)) return fromCluster(root, create);
  const tried = listed.length > 0 ? `$KUBECONFIG (${listed.join(delimiter)}) names no file that exists` : 'no --kubeconfig, $KUBECONFIG or ~/.kube/config';
  throw new KubeConfigError(`invalid configuration: no configuration has been provided (${tried}, and not running in a cluster)`);
}

/**
 * The kubeconfig files merged as kubectl merges them: the first file to set the current context or to define a
 * cluster, user or context of a name wins (client-node's own merge takes the last current context and refuses
 * duplicate names). Relative paths in a file are relative to that file.
 */
function merged(files: readonly string[], create: () => LoadableKubeConfig): LoadableKubeConfig {
  const clusters = new Map<string, Cluster>();
  const users = new Map<string, User>();
  const contexts = new Map<string, Context>();
  let currentContext = '';
  for (const file of files) {
    const part = create();
    try {
      // An empty file is an empty kubeconfig to kubectl (`touch ~/.kube/config`), and a parse error to client-node.
      if (readFileSync(file, 'utf8').trim() === '') continue;
      part.loadFromFile(file);
    } catch (error) {
      throw new KubeConfigError(`cannot load kubeconfig ${file}: ${error instanceof Error ? (error.message.split('\n')[0] ?? '') : String(error)}`);
    }
    currentContext ||= part.getCurrentContext() ?? '';
    for (const c of part.getClusters()) if (!clusters.has(c.name)) clusters.set(c.name, c);
    for (const u of part.getUsers()) if (!users.has(u.name)) users.set(u.name, u);
    for (const c of part.getContexts()) if (!contexts.has(c.name)) contexts.set(c.name, c);
  }
  const kc = create();
  kc.loadFromOptions({ clusters: [...clusters.values()].map(plainHttp), users: [...users.values()], contexts: [...contexts.values()], currentContext });
  return kc;
}

/** kubectl's in-cluster test: the service's address in the environment and the service-account token mounted. */
function inCluster(root: string): boolean {
  return Boolean(process.env['KUBERNETES_SERVICE_HOST'] && process.env['KUBERNETES_SERVICE_PORT'] && existsSync(join(root, SERVICE_ACCOUNT_DIR, 'token')));
}

function fromCluster(root: string, create: () => LoadableKubeConfig): LoadableKubeConfig {
  const kc = create();
  // client-node puts the prefix in front of its absolute paths as a string.
  kc.loadFromCluster(root === '/' ? '' : root);
  kc.loadFromOptions({ clusters: kc.getClusters().map(plainHttp), users: kc.getUsers(), contexts: kc.getContexts(), currentContext: kc.getCurrentContext() });
  return kc;
}

/**
 * kubectl talks to an `http://` server (kubectl proxy, an insecure port) as told; client-node refuses one unless
 * skipTLSVerify is set, which means nothing without TLS.
 */
function plainHttp(cluster: Cluster): Cluster {
  return cluster.server.startsWith('http:') ? { ...cluster, skipTLSVerify: true } : cluster;
}

/** The API server URL of the current context, for messages. */
export function serverOf(kc: Pick<LoadableKubeConfig, 'getCurrentCluster'>): string {
  return kc.getCurrentCluster()?.server ?? '(no server)';
}

/** The namespace of the current context, or `default` (kubectl's rule for -n). */
export function contextNamespace(kc: Pick<LoadableKubeConfig, 'getContextObject' | 'getCurrentContext'>): string {
  return kc.getContextObject(kc.getCurrentContext())?.namespace || DEFAULT_NAMESPACE;
}
