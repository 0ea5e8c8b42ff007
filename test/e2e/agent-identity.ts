// The agent's identity in e2e tests: exactly the RBAC objects of the rendered install (dist/agent-install.k8s.yaml),
// moved into the test's namespace (cluster-scoped names get the test's suffix so parallel runs do not collide), and a
// kubeconfig that impersonates the install's ServiceAccount (client-node 1.4.0 sends a kubeconfig user's `as` as the
// Impersonate-User header on API calls and watches; the API server adds the ServiceAccount's groups). An agent using
// it is authorized by the rendered ClusterRole alone.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CoreV1Api, KubeConfig, type KubernetesObject } from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import { repoRoot } from '../cluster/build.js';
import { clients, serverSideApply, waitFor } from './helpers.js';

const RBAC_KINDS = new Set(['ServiceAccount', 'ClusterRole', 'ClusterRoleBinding', 'Role', 'RoleBinding']);

export interface RbacObject extends KubernetesObject {
  roleRef?: { apiGroup: string; kind: string; name: string };
  subjects?: { kind: string; name: string; namespace?: string }[];
}

const clusterScoped = (o: RbacObject) => o.kind === 'ClusterRole' || o.kind === 'ClusterRoleBinding';

/**
 * The RBAC objects of the rendered install, moved into `ns`; the ClusterRole and ClusterRoleBinding renamed
 * `<name>-<suffix>`. Everything else (rules, verbs, Lease names) is exactly as rendered.
 */
export function renderedRbac(ns: string, suffix: string): { objects: RbacObject[]; serviceAccount: string } {
  const text = readFileSync(join(repoRoot, 'dist', 'agent-install.k8s.yaml'), 'utf8');
  const objects = parseAllDocuments(text)
    .map((d) => d.toJS() as RbacObject)
    .filter((o) => RBAC_KINDS.has(o.kind ?? ''));
  const renamed = new Map(objects.filter(clusterScoped).map((o) => [o.metadata?.name ?? '', `${o.metadata?.name ?? ''}-${suffix}`]));
  const serviceAccount = objects.find((o) => o.kind === 'ServiceAccount')?.metadata?.name ?? '';
  const mapped = objects.map((o): RbacObject => ({
    ...o,
    metadata: clusterScoped(o) ? { ...o.metadata, name: renamed.get(o.metadata?.name ?? '') ?? '' } : { ...o.metadata, namespace: ns },
    ...(o.roleRef && { roleRef: { ...o.roleRef, name: o.roleRef.kind === 'ClusterRole' ? (renamed.get(o.roleRef.name) ?? o.roleRef.name) : o.roleRef.name } }),
    ...(o.subjects && { subjects: o.subjects.map((s) => (s.kind === 'ServiceAccount' ? { ...s, namespace: ns } : s)) }),
  }));
  return { objects: mapped, serviceAccount };
}

/** The lab's kubeconfig, acting as `user` (the `as` field of a kubeconfig user). */
export function impersonating(admin: KubeConfig, user: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: admin.clusters,
    users: admin.users.map((u) => ({ ...u, impersonateUser: user })),
    contexts: admin.contexts,
    currentContext: admin.currentContext,
  });
  return kc;
}

/** The agent's identity for one test: its kubeconfig, its subject, and a cleanup for the cluster-scoped objects. */
export interface AgentIdentity {
  readonly kubeConfig: KubeConfig;
  readonly subject: string;
  readonly rbac: readonly RbacObject[];
  remove(): Promise<void>;
}

/** Applies the rendered RBAC in `ns` and returns a kubeconfig acting as the install's ServiceAccount, once in effect. */
export async function renderedIdentity(ns: string, suffix: string): Promise<AgentIdentity> {
  const { objects, serviceAccount } = renderedRbac(ns, suffix);
  for (const o of objects) await serverSideApply(o);
  const subject = `system:serviceaccount:${ns}:${serviceAccount}`;
  const kubeConfig = impersonating(clients().kc, subject);
  // RBAC reaches a new binding within moments; until then even granted calls may be forbidden.
  await waitFor('the ClusterRoleBinding in effect', async () => {
    await kubeConfig.makeApiClient(CoreV1Api).listNamespacedPod({ namespace: ns });
    return true;
  });
  return {
    kubeConfig,
    subject,
    rbac: objects,
    async remove() {
      for (const o of objects.filter(clusterScoped)) {
        try {
          await clients().objects.delete(o);
        } catch {
          // already gone
        }
      }
    },
  };
}
