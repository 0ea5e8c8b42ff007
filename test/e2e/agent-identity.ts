// The agent's identity in e2e tests: exactly the RBAC and admission objects of the rendered install
// (dist/agent-install.k8s.yaml), moved into the test's namespace (cluster-scoped names get the test's suffix so parallel
// runs do not collide, and the admission policies match the test's ServiceAccount), and a kubeconfig that impersonates
// the install's ServiceAccount (client-node 1.4.0 sends a kubeconfig user's `as` as the Impersonate-User header on API
// calls and watches; the API server adds the ServiceAccount's groups). An agent using it is authorized by the rendered
// ClusterRole alone, and its writes pass the rendered ValidatingAdmissionPolicies.
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CoreV1Api, KubeConfig, PatchStrategy, type KubernetesObject } from '@kubernetes/client-node';
import { App, Chart } from 'cdk8s';
import { parseAllDocuments } from 'yaml';
import { AgentInstall } from '../../constructs/agent-install.js';
import { AGENT_IMAGE } from '../../examples/app.js';
import { ADOPTION_FREEZE_POLICY } from '../../core/adoption/adoption.js';
import { repoRoot } from '../cluster/build.js';
import { kubeconfigPath, labDir } from '../cluster/lab.js';
import { clients, errorMessage, FIELD_MANAGER, ObjectApi, serverSideApply, testPod, waitFor } from './helpers.js';

const POLICY = 'ValidatingAdmissionPolicy';
const POLICY_BINDING = 'ValidatingAdmissionPolicyBinding';
const CLUSTER_KINDS = new Set(['ClusterRole', 'ClusterRoleBinding', POLICY, POLICY_BINDING]);
const IDENTITY_KINDS = new Set(['ServiceAccount', 'Role', 'RoleBinding', ...CLUSTER_KINDS]);

/** The adoption freeze of the install: a policy on every pod creation, not the agent's identity (adoptionFreeze installs it). */
const isAdoptionFreeze = (o: KubernetesObject) => o.metadata?.name === ADOPTION_FREEZE_POLICY;

/**
 * Whether an install's object is part of the agent's identity: its ServiceAccount, RBAC, admission policies and
 * bindings (not the adoption freeze, which holds every pod creation and not the agent).
 */
export const isIdentityObject = (o: KubernetesObject): boolean => IDENTITY_KINDS.has(o.kind ?? '') && !isAdoptionFreeze(o);

/** An RBAC object, or an admission policy or binding, read as far as they name roles, policies and the ServiceAccount. */
export interface RbacObject extends KubernetesObject {
  roleRef?: { apiGroup: string; kind: string; name: string };
  subjects?: { kind: string; name: string; namespace?: string }[];
  spec?: {
    policyName?: string;
    matchConditions?: { name: string; expression: string }[];
    matchConstraints?: { resourceRules: { resources: string[] }[] };
  };
}

const clusterScoped = (o: RbacObject) => CLUSTER_KINDS.has(o.kind ?? '');

/**
 * Installs the rendered install's adoption freeze policy and binding (constructs/adoption-freeze.ts) as rendered but
 * named `<name>-<suffix>`, so that the GitOps suites, which sync the install itself, never touch this copy (the agent
 * proves the freeze holds before each step, by the policy's name in the refusal). Returns a function that deletes them.
 */
export async function adoptionFreeze(suffix: string): Promise<() => Promise<void>> {
  const text = readFileSync(join(repoRoot, 'dist', 'agent-install.k8s.yaml'), 'utf8');
  const name = `${ADOPTION_FREEZE_POLICY}-${suffix}`;
  const objects = parseAllDocuments(text)
    .map((d) => d.toJS() as RbacObject)
    .filter(isAdoptionFreeze)
    .map((o) => ({ ...o, metadata: { ...o.metadata, name }, ...(o.spec?.policyName && { spec: { ...o.spec, policyName: name } }) }));
  if (objects.length !== 2) throw new Error(`dist/agent-install.k8s.yaml: expected the ${ADOPTION_FREEZE_POLICY} policy and binding, found ${objects.length}`);
  for (const o of objects) await serverSideApply(o);
  // Its CEL is type-checked against the ExtendedDeployment schema (the params) and the Pod schema: no warnings.
  const checked = await waitFor(`${name} type-checked`, async () => {
    const stored = await clients().objects.read<{
      metadata: { generation?: number };
      status?: { observedGeneration?: number; typeChecking?: { expressionWarnings?: unknown[] } };
    }>({ apiVersion: 'admissionregistration.k8s.io/v1', kind: POLICY, metadata: { name } });
    return stored.status?.typeChecking && stored.status.observedGeneration === stored.metadata.generation ? stored.status.typeChecking : undefined;
  });
  if (checked.expressionWarnings) throw new Error(`${name}: type-check warnings ${JSON.stringify(checked.expressionWarnings)}`);
  return async () => {
    for (const o of objects)
      await clients()
        .objects.delete(o)
        .catch(() => undefined);
  };
}

/** Which install an identity is taken from. */
export interface IdentityOptions {
  /** Without it, the admission policies and their bindings are left out. Default true. */
  readonly admission?: boolean;
  /** The install with AgentInstall's `traffic` on (the `<name>-traffic` role of mode Weighted), rendered here. Default false. */
  readonly traffic?: boolean;
}

/**
 * The install's objects: dist/agent-install.k8s.yaml as committed, or with `traffic` the same AgentInstall (the
 * example's props) rendered with `traffic: true`, which no committed example enables (least privilege by default).
 */
function installObjects(traffic: boolean): RbacObject[] {
  if (!traffic) return parseAllDocuments(readFileSync(join(repoRoot, 'dist', 'agent-install.k8s.yaml'), 'utf8')).map((d) => d.toJS() as RbacObject);
  const app = new App();
  const chart = new Chart(app, 'agent-install');
  new AgentInstall(chart, 'agent', { image: AGENT_IMAGE, traffic: true });
  return chart.toJson() as RbacObject[];
}

/**
 * The RBAC and admission objects of the rendered install, moved into `ns`: cluster-scoped ones renamed
 * `<name>-<suffix>` (and the role and policy references with them), the policies' match condition naming the
 * ServiceAccount in `ns`. Everything else (rules, verbs, Lease names, CEL) is exactly as rendered. Without
 * `admission`, the policies and bindings are left out.
 */
export function renderedRbac(
  ns: string,
  suffix: string,
  { admission = true, traffic = false }: IdentityOptions = {},
): { objects: RbacObject[]; serviceAccount: string } {
  const objects = installObjects(traffic).filter((o) => isIdentityObject(o) && (admission || (o.kind !== POLICY && o.kind !== POLICY_BINDING)));
  const renamed = new Map(objects.filter(clusterScoped).map((o) => [o.metadata?.name ?? '', `${o.metadata?.name ?? ''}-${suffix}`]));
  const account = objects.find((o) => o.kind === 'ServiceAccount')?.metadata;
  const serviceAccount = account?.name ?? '';
  const [renderedSubject, subject] = [account?.namespace, ns].map((n) => `'system:serviceaccount:${n}:${serviceAccount}'`) as [string, string];
  const mapped = objects.map((o): RbacObject => ({
    ...o,
    metadata: clusterScoped(o) ? { ...o.metadata, name: renamed.get(o.metadata?.name ?? '') ?? '' } : { ...o.metadata, namespace: ns },
    ...(o.roleRef && { roleRef: { ...o.roleRef, name: o.roleRef.kind === 'ClusterRole' ? (renamed.get(o.roleRef.name) ?? o.roleRef.name) : o.roleRef.name } }),
    ...(o.subjects && { subjects: o.subjects.map((s) => (s.kind === 'ServiceAccount' ? { ...s, namespace: ns } : s)) }),
    ...(o.spec && {
      spec: {
        ...o.spec,
        ...(o.spec.policyName && { policyName: renamed.get(o.spec.policyName) ?? o.spec.policyName }),
        ...(o.spec.matchConditions && {
          matchConditions: o.spec.matchConditions.map((c) => ({ ...c, expression: c.expression.replaceAll(renderedSubject, subject) })),
        }),
      },
    }),
  }));
  // A policy that still named the installed ServiceAccount would hold no test to anything.
  for (const o of mapped.filter((p) => p.kind === POLICY)) {
    if (!o.spec?.matchConditions?.some((c) => c.expression.includes(subject)))
      throw new Error(`${POLICY} ${o.metadata?.name}: no match condition names ${subject}`);
  }
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
  /** The applied RBAC objects, admission policies and bindings. */
  readonly rbac: readonly RbacObject[];
  /**
   * A kubeconfig file for a spawned agent (`edctl agent --kubeconfig`): `source` (default: the lab's; or an API
   * proxy's) with its user acting `as` the ServiceAccount. Removed by remove().
   */
  kubeconfigFile(source?: string): string;
  remove(): Promise<void>;
}

/** A valid object per resource the rendered policies guard, without the ExtendedDeployment labels. */
function probeObject(resource: string | undefined, ns: string): KubernetesObject | undefined {
  const metadata = { name: 'admission-probe', namespace: ns };
  const labels = { app: 'admission-probe' };
  const spec = { ...testPod('admission-probe').spec, terminationGracePeriodSeconds: 0 };
  const workload = { replicas: 0, selector: { matchLabels: labels }, template: { metadata: { labels }, spec } };
  if (resource === 'pods') return { apiVersion: 'v1', kind: 'Pod', metadata, spec } as KubernetesObject;
  if (resource === 'replicasets') return { apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata, spec: workload } as KubernetesObject;
  if (resource === 'deployments') return { apiVersion: 'apps/v1', kind: 'Deployment', metadata, spec: workload } as KubernetesObject;
  if (resource === 'statefulsets') return { apiVersion: 'apps/v1', kind: 'StatefulSet', metadata, spec: workload } as KubernetesObject;
  if (resource === 'controllerrevisions') return { apiVersion: 'apps/v1', kind: 'ControllerRevision', metadata, data: {}, revision: 1 } as KubernetesObject;
  return undefined;
}

/**
 * Waits until the API server enforces `policy` for `kubeConfig`'s user. A policy and its binding reach the API
 * server's admission within moments of being stored; until then the user's writes are not checked. The probe: the
 * lab admin creates an object without the ExtendedDeployment labels (a pod, or a workload with 0 replicas), the user
 * server-side applies it with dry-run, which RBAC allows (`patch`) and the policy refuses (not an ExtendedDeployment's),
 * and the admin deletes it again at once. (A new object would not do: RBAC refuses the agent any create.) RBAC grants no
 * `patch` on ControllerRevisions: the user deletes that probe with dry-run instead, which the policy refuses (an
 * ExtendedDeployment owns no such revision).
 */
async function policyInForce(kubeConfig: KubeConfig, ns: string, policy: RbacObject): Promise<void> {
  const resource = policy.spec?.matchConstraints?.resourceRules[0]?.resources[0];
  const probe = probeObject(resource, ns);
  if (!probe) throw new Error(`${POLICY} ${policy.metadata?.name}: no probe for ${resource}`);
  const api = kubeConfig.makeApiClient(ObjectApi);
  const denial = `ValidatingAdmissionPolicy '${policy.metadata?.name}'`;
  await clients().objects.create(probe);
  let answer = '';
  const check = async () => {
    try {
      if (resource === 'controllerrevisions') await api.delete(probe, undefined, 'All');
      else await api.patch(probe, undefined, 'All', FIELD_MANAGER, true, PatchStrategy.ServerSideApply);
      answer = 'allowed';
      return false;
    } catch (error) {
      answer = errorMessage(error);
      return answer.includes(denial);
    }
  };
  try {
    await waitFor(`${POLICY} ${policy.metadata?.name} in force`, check, { describe: async () => answer });
  } finally {
    await clients().objects.delete(probe, undefined, undefined, 0);
  }
}

/**
 * Applies the rendered RBAC and admission policies in `ns` (policies left out with `admission: false`) and returns a
 * kubeconfig acting as the install's ServiceAccount, once both are in effect.
 */
export async function renderedIdentity(ns: string, suffix: string, options: IdentityOptions = {}): Promise<AgentIdentity> {
  const { objects, serviceAccount } = renderedRbac(ns, suffix, options);
  return installIdentity(objects, `system:serviceaccount:${ns}:${serviceAccount}`, ns);
}

/**
 * Applies an install's RBAC objects and admission policies (cluster-scoped ones named for this test) and returns a
 * kubeconfig acting as `subject`, once both are in effect: its listing pods in `ns` is allowed, and each policy refuses
 * its probe there.
 */
export async function installIdentity(objects: readonly RbacObject[], subject: string, ns: string): Promise<AgentIdentity> {
  const kubeConfig = impersonating(clients().kc, subject);
  const files: string[] = [];
  // Cluster-scoped objects outlive the test's namespace: removed also when the identity never came into effect.
  const remove = async () => {
    for (const file of files) rmSync(file, { force: true });
    for (const o of objects.filter(clusterScoped)) {
      try {
        await clients().objects.delete(o);
      } catch {
        // already gone, or never applied
      }
    }
  };
  try {
    for (const o of objects) await serverSideApply(o);
    // RBAC reaches a new binding within moments; until then even granted calls may be forbidden.
    await waitFor('the ClusterRoleBinding in effect', async () => {
      await kubeConfig.makeApiClient(CoreV1Api).listNamespacedPod({ namespace: ns });
      return true;
    });
    for (const policy of objects.filter((o) => o.kind === POLICY)) await policyInForce(kubeConfig, ns, policy);
  } catch (error) {
    await remove();
    throw error;
  }
  return {
    kubeConfig,
    subject,
    rbac: objects,
    kubeconfigFile(source = kubeconfigPath()) {
      const kc = new KubeConfig();
      kc.loadFromFile(source);
      const file = join(labDir(), `agent-${subject.split(':').slice(2).join('-')}-${files.length}.kubeconfig`);
      writeFileSync(file, impersonating(kc, subject).exportConfig(), { mode: 0o600 });
      files.push(file);
      return file;
    },
    remove,
  };
}
