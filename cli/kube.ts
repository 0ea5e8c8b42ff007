import type { Command } from 'commander';
import type { CustomObjectsApi, KubeConfig } from '@kubernetes/client-node';
import { API_GROUP, ED_PLURAL, VERSION } from '../core/api/identity.js';
import { apiError, isUnreachable } from '../agent/runtime/kube-errors.js';
import type { ExtendedDeploymentObject } from '../core/kube/objects.js';
import { UserError } from './user-error.js';

/** kubectl-style connection flags. */
export interface KubeFlags {
  readonly kubeconfig?: string;
  readonly context?: string;
  readonly namespace?: string;
}

/** Adds kubectl's connection flags (--kubeconfig, --context, -n/--namespace) to a cluster command. */
export function addKubeFlags(command: Command): Command {
  return command
    .option('--kubeconfig <path>', 'kubeconfig file (default: $KUBECONFIG, ~/.kube/config, in-cluster)')
    .option('--context <name>', 'kubeconfig context (default: the current one)')
    .option('-n, --namespace <namespace>', "namespace (default: the context's)");
}

/** The field manager of edctl's own writes (annotations), distinct from the agent's and from Git's. */
export const EDCTL_FIELD_MANAGER = 'edctl';

/** A connection to the cluster for one command. */
export interface Kube {
  readonly kc: KubeConfig;
  readonly namespace: string;
  readonly server: string;
  readonly custom: CustomObjectsApi;
}

/**
 * Loads the kubeconfig like kubectl (flag, $KUBECONFIG, ~/.kube/config, in-cluster); problems become user errors. The
 * Kubernetes client is imported here, not when edctl starts: loading it takes about half a second, which the commands
 * that need no cluster (render, validate, plan, diff) do not pay.
 */
export async function connect(flags: KubeFlags): Promise<Kube> {
  const [{ CustomObjectsApi, KubeConfig: ClientKubeConfig }, { contextNamespace, KubeConfigError, loadKubeConfig, serverOf }] = await Promise.all([
    import('@kubernetes/client-node'),
    import('../agent/runtime/kubeconfig.js'),
  ]);
  let kc: KubeConfig;
  try {
    kc = loadKubeConfig({ kubeconfig: flags.kubeconfig, context: flags.context }, () => new ClientKubeConfig());
  } catch (error) {
    if (error instanceof KubeConfigError) throw new UserError([error.message]);
    throw error;
  }
  return { kc, namespace: flags.namespace ?? contextNamespace(kc), server: serverOf(kc), custom: kc.makeApiClient(CustomObjectsApi) };
}

/** Turns a failed API call into one line for the user. */
export function userErrorOf(kube: Kube, error: unknown, what: string): UserError {
  if (isUnreachable(error)) {
    const detail = error instanceof Error ? (/reason: (.*)$/.exec(error.message)?.[1] ?? error.message) : String(error);
    return new UserError([`cannot reach the Kubernetes API server at ${kube.server}: ${detail}`]);
  }
  const { code, message } = apiError(error);
  if (code === 401 || code === 403) return new UserError([`${what}: ${message} (server ${kube.server})`]);
  return new UserError([`${what}: ${code !== undefined ? `HTTP ${code}: ` : ''}${message}`]);
}

/** Reads one ExtendedDeployment; a missing one (or a cluster without the CRD) is a one-line user error. */
export async function readExtendedDeployment(kube: Kube, name: string): Promise<ExtendedDeploymentObject> {
  try {
    return (await kube.custom.getNamespacedCustomObject({
      group: API_GROUP,
      version: VERSION,
      namespace: kube.namespace,
      plural: ED_PLURAL,
      name,
    })) as ExtendedDeploymentObject;
  } catch (error) {
    throw notFoundOr(kube, name, error);
  }
}

/** Merge-patches the ExtendedDeployment's annotations (it never removes one: resumeAnnotations in core/rollout/controls.ts says why). */
export async function patchAnnotations(kube: Kube, name: string, annotations: Readonly<Record<string, string>>): Promise<void> {
  const { PatchStrategy, setHeaderOptions } = await import('@kubernetes/client-node');
  try {
    await kube.custom.patchNamespacedCustomObject(
      {
        group: API_GROUP,
        version: VERSION,
        namespace: kube.namespace,
        plural: ED_PLURAL,
        name,
        body: { metadata: { annotations } },
        fieldManager: EDCTL_FIELD_MANAGER,
      },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
  } catch (error) {
    throw notFoundOr(kube, name, error);
  }
}

function notFoundOr(kube: Kube, name: string, error: unknown): UserError {
  const info = apiError(error);
  if (info.code === 404) {
    // A missing object names its kind in the Status details; a resource the server does not serve at all does not.
    const details = (parseBody(error) as { details?: { kind?: string } } | undefined)?.details;
    if (details?.kind === undefined && /could not find the requested resource/i.test(info.message)) {
      return new UserError([`the API server at ${kube.server} does not serve ${ED_PLURAL}.${API_GROUP} (install crds/ first)`]);
    }
    return new UserError([`ExtendedDeployment ${kube.namespace}/${name} not found`]);
  }
  return userErrorOf(kube, error, `ExtendedDeployment ${kube.namespace}/${name}`);
}

function parseBody(error: unknown): unknown {
  const body = (error as { body?: unknown } | null)?.body;
  if (typeof body !== 'string') return body;
  try {
    return JSON.parse(body);
  } catch {
    return undefined;
  }
}
