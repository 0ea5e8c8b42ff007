// Secure metrics against a real API server: the agent runs in-process as the rendered install's ServiceAccount (its
// ClusterRole from dist/agent-install.k8s.yaml grants the TokenReviews and SubjectAccessReviews it makes), with
// --metrics-secure. Two ServiceAccounts get tokens from the TokenRequest API: `prometheus`, bound to the rendered
// metrics-reader ClusterRole, and `stranger`, bound to nothing. A scrape without a token is 401, with a token the API
// server does not know 401, as the stranger 403, as Prometheus 200; the probes answer on their own port without one.
import { AuthorizationV1Api, type KubernetesObject } from '@kubernetes/client-node';
import { expect } from 'vitest';
import { startAgent, type Agent } from '../../agent/agent.js';
import { silentLogger } from '../../agent/runtime/log.js';
import { renderedIdentity, type AgentIdentity } from './agent-identity.js';
import { clients, serverSideApply, test, uniqueName, waitFor } from './helpers.js';
import { installCrds } from './rollout-kit.js';

/** GET http://127.0.0.1:<port><path>, with a bearer token when given. */
async function get(port: number, path: string, token?: string): Promise<{ status: number; body: string }> {
  const res = await fetch(`http://127.0.0.1:${port}${path}`, token === undefined ? {} : { headers: { Authorization: `Bearer ${token}` } });
  return { status: res.status, body: await res.text() };
}

test('secure metrics: 401 without a valid token, 403 for a ServiceAccount not bound to metrics-reader, 200 for one that is', async ({ ns }) => {
  await installCrds();
  const suffix = uniqueName('m').slice(2);
  const core = clients().core;
  let identity: AgentIdentity | undefined;
  let agent: Agent | undefined;
  const binding: KubernetesObject & Record<string, unknown> = {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name: `metrics-reader-${suffix}` },
  };
  try {
    // RBAC only: the admission policies hold the agent's pod and workload writes, and this test makes none.
    identity = await renderedIdentity(ns, suffix, { admission: false });
    const reader = identity.rbac.find((o) => o.kind === 'ClusterRole' && o.metadata?.name === `extended-deployment-agent-metrics-reader-${suffix}`);
    expect(reader, 'the install renders a metrics-reader ClusterRole').toBeDefined();

    for (const name of ['prometheus', 'stranger']) await core.createNamespacedServiceAccount({ namespace: ns, body: { metadata: { name } } });
    Object.assign(binding, {
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: reader?.metadata?.name },
      subjects: [{ kind: 'ServiceAccount', name: 'prometheus', namespace: ns }],
    });
    await serverSideApply(binding);
    // A new binding reaches the authorizer within moments: wait for it, so the agent's first review sees it.
    const authz = clients().kc.makeApiClient(AuthorizationV1Api);
    await waitFor('the metrics-reader binding in effect', async () => {
      const review = await authz.createSubjectAccessReview({
        body: {
          spec: {
            user: `system:serviceaccount:${ns}:prometheus`,
            groups: ['system:serviceaccounts'],
            nonResourceAttributes: { path: '/metrics', verb: 'get' },
          },
        },
      });
      return review.status?.allowed === true;
    });
    const token = async (name: string) =>
      (await core.createNamespacedServiceAccountToken({ name, namespace: ns, body: { spec: { audiences: [], expirationSeconds: 600 } } })).status?.token ?? '';
    const [prometheus, stranger] = [await token('prometheus'), await token('stranger')];

    agent = await startAgent({
      kubeConfig: identity.kubeConfig,
      log: silentLogger,
      namespaces: [ns],
      metricsBindAddress: '127.0.0.1:0',
      healthProbeBindAddress: '127.0.0.1:0',
      metricsSecure: true,
      leaseNamespace: ns,
      identity: 'e2e-metrics',
      workers: 1,
    });
    const metrics = agent.address.port;

    const none = await get(metrics, '/metrics');
    expect(none.status).toBe(401);
    expect(none.body).not.toContain('extendeddeployment_agent_');
    expect((await get(metrics, '/metrics', 'not-a-token')).status).toBe(401);
    const denied = await get(metrics, '/metrics', stranger);
    expect(denied).toEqual({ status: 403, body: `Authorization denied for user system:serviceaccount:${ns}:stranger (get /metrics)\n` });
    const allowed = await get(metrics, '/metrics', prometheus);
    expect(allowed.status).toBe(200);
    expect(allowed.body).toContain('extendeddeployment_agent_leader');
    // The reviews the agent asked are counted like every request it sends.
    expect(allowed.body).toMatch(/extendeddeployment_agent_api_requests_total\{verb="POST",resource="tokenreviews"\} [1-9]/);
    expect(allowed.body).toMatch(/extendeddeployment_agent_api_requests_total\{verb="POST",resource="subjectaccessreviews"\} [1-9]/);

    // The kubelet's probes need no token, on a port of their own that serves no metrics.
    const health = agent.healthAddress.port;
    expect(health).not.toBe(metrics);
    expect((await get(health, '/healthz')).status).toBe(200);
    expect((await get(health, '/metrics', prometheus)).status).toBe(404);
    await waitFor('the agent ready', async () => (await get(health, '/readyz')).status === 200);
  } finally {
    await agent?.stop();
    try {
      await clients().objects.delete(binding);
    } catch {
      // never created
    }
    await identity?.remove();
  }
});
