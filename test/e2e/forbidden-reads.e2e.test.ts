// RBAC taken away from a running agent: its ClusterRole loses list and watch on pods while it runs, and its pod
// watches end (cut at a proxy in front of the API server, as a network blip or the watch's timeout would end them).
// The informer's relist then gets a 403: the pod cache stops following the cluster. The agent must not act on that
// cache (a new revision from Git starts no rollout), and must say why on the object: Authorized=False naming the
// read, one Forbidden Warning Event, and extendeddeployment_agent_forbidden_total. Granted again, the informer's next
// restart lists and watches, and the rollout goes on to Healthy with the condition gone. The agent runs as the
// rendered install's ServiceAccount with only its RBAC (withRolloutEnv), under the invariant watcher.
import { CoreV1Api, KubeConfig, type KubernetesObject } from '@kubernetes/client-node';
import { expect } from 'vitest';
import { AUTHORIZED_CONDITION } from '../../core/api/conditions.js';
import { impersonating } from './agent-identity.js';
import { startApiProxy } from './api-proxy.js';
import { clients, errorCode, sleep, test, waitFor } from './helpers.js';
import { agentMetrics, apply, counterSum, edEvents, fill, podCounts, readStatus, withRolloutEnv, type EdEvent } from './rollout-kit.js';

interface ClusterRole extends KubernetesObject {
  rules?: { apiGroups?: string[]; resources?: string[]; verbs?: string[] }[];
}

const RBAC = 'rbac.authorization.k8s.io/v1';
/** The rendered install's ClusterRole and ServiceAccount (renderedRbac gives cluster-scoped objects the test's suffix). */
const AGENT = 'extended-deployment-agent';

test('a read RBAC takes away from a running agent holds every rollout and says so on the object; granted again, the rollout goes on', async ({ ns }) => {
  const proxy = await startApiProxy(ns);
  const agentKubeConfig = new KubeConfig();
  agentKubeConfig.loadFromFile(proxy.kubeconfig);
  try {
    await withRolloutEnv(
      ns,
      'forbidden-reads',
      async (env) => {
        const replicas = [2, 2, 1];
        const v1 = await fill(env, { image: 'registry.example/web:1', replicas });
        const roleRef = { apiVersion: RBAC, kind: 'ClusterRole', metadata: { name: `${AGENT}-${env.suffix}` } };
        const granted = await clients().objects.read<ClusterRole>(roleRef);
        const withoutPodReads = (granted.rules ?? []).filter((r) => !(r.resources?.includes('pods') && r.verbs?.includes('list')));
        expect(withoutPodReads.length).toBe((granted.rules ?? []).length - 1);
        await clients().objects.replace<ClusterRole>({ ...granted, rules: withoutPodReads });
        const asAgent = impersonating(clients().kc, `system:serviceaccount:${ns}:${AGENT}`).makeApiClient(CoreV1Api);
        await waitFor('the agent may no longer list pods', async () => {
          try {
            await asAgent.listNamespacedPod({ namespace: ns });
            return false;
          } catch (error) {
            return errorCode(error) === 403;
          }
        });
        const cut = proxy.cutWatches((r) => /\/pods\?/.test(r.path));
        expect(cut).toBeGreaterThan(0);
        // The agent learns it only when its informer tries again (after its backoff); until then its cache looks fine.
        await waitFor(
          'the agent refused a read of pods',
          async () => counterSum(await agentMetrics(env.agent), 'extendeddeployment_agent_forbidden_total') > 0,
        );

        // Git brings a new revision: the agent, blind to pods, starts nothing and says why.
        const v2 = env.render({ image: 'registry.example/web:2', replicas });
        await apply(v2);
        const held = await waitFor(
          'Authorized=False on the ExtendedDeployment',
          async () => {
            const status = await readStatus(ns);
            const condition = status.conditions?.find((c) => c.type === AUTHORIZED_CONDITION);
            return condition?.status === 'False' && status;
          },
          { timeoutMs: 90_000, describe: () => readStatus(ns) },
        );
        const condition = held.conditions?.find((c) => c.type === AUTHORIZED_CONDITION);
        console.log(`[forbidden-reads] ${condition?.reason}: ${condition?.message}`);
        expect(condition).toMatchObject({ reason: 'Forbidden', message: expect.stringContaining('forbids the agent to list and watch pods;') });
        const forbidden = (e: EdEvent) => e.reason === 'Forbidden';
        expect((await edEvents(ns, { until: (events) => events.some(forbidden) })).filter(forbidden)).toHaveLength(1);
        // Nothing moves: the rollout of v2 has not started, and every pod is still at v1, for a while.
        await sleep(8_000);
        expect((await readStatus(ns)).revision).toBe(v1.rolloutRevision);
        expect(await podCounts(ns, v2)).toEqual(v2.regions.map((r, i) => ({ name: r.name, updated: 0, old: replicas[i] })));
        expect((await edEvents(ns)).filter(forbidden)).toHaveLength(1);

        // Granted again: the pod informer's next restart lists and watches; the rollout goes on and clears the condition.
        const current = await clients().objects.read<ClusterRole>(roleRef);
        await clients().objects.replace<ClusterRole>({ ...current, rules: granted.rules ?? [] });
        const healthy = await waitFor(
          'v2 Healthy, Authorized no longer False',
          async () => {
            const status = await readStatus(ns);
            return (
              status.revision === v2.rolloutRevision && status.phase === 'Healthy' && !status.conditions?.some((c) => c.type === AUTHORIZED_CONDITION) && status
            );
          },
          { timeoutMs: 180_000, describe: () => readStatus(ns) },
        );
        expect(healthy.regions?.map((r) => r.updated)).toEqual(replicas);
      },
      { agentKubeConfig },
    );
  } finally {
    await proxy.close();
  }
});
