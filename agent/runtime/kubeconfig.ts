import { existsSync } from 'node:fs';
import { KubeConfig } from '@kubernetes/client-node';
import { DEFAULT_NAMESPACE } from '../../core/api/common.js';

/** The service-account token every pod gets: its presence means "running in a cluster". */
const IN_CLUSTER_TOKEN = '/var/run/secrets/kubernetes.io/serviceaccount/token';

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
}

/**
 * Loads cluster access like kubectl and controller-runtime: --kubeconfig, then $KUBECONFIG, then (for the agent) the
 * in-cluster service account, then ~/.kube/config, then (for the CLI) in-cluster.
 */
export function loadKubeConfig(options: KubeConfigOptions = {}): KubeConfig {
  const kc = new KubeConfig();
  try {
    if (options.kubeconfig) {
      if (!existsSync(options.kubeconfig)) throw new KubeConfigError(`kubeconfig ${options.kubeconfig}: no such file`);
      kc.loadFromFile(options.kubeconfig);
    } else if (!process.env['KUBECONFIG'] && options.preferInCluster && process.env['KUBERNETES_SERVICE_HOST'] && existsSync(IN_CLUSTER_TOKEN)) {
      kc.loadFromCluster();
    } else {
      kc.loadFromDefault();
    }
  } catch (error) {
    if (error instanceof KubeConfigError) throw error;
    const source = options.kubeconfig || process.env['KUBECONFIG'] || '~/.kube/config';
    throw new KubeConfigError(`cannot load kubeconfig ${source}: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`);
  }
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

/** The API server URL of the current context, for messages. */
export function serverOf(kc: KubeConfig): string {
  return kc.getCurrentCluster()?.server ?? '(no server)';
}

/** The namespace of the current context, or `default` (kubectl's rule for -n). */
export function contextNamespace(kc: KubeConfig): string {
  return kc.getContextObject(kc.getCurrentContext())?.namespace || DEFAULT_NAMESPACE;
}
