// Old pods are replaced through the Eviction API, so PodDisruptionBudgets hold (issue 16). On the lab (the disruption
// controller of kube-controller-manager keeps the budget's status): a budget with maxUnavailable 0 over region a's pods,
// then a scaleSimultaneously rollout, where the agent evicts old pods itself. Region a holds at its old pods with an
// EvictionBlocked Warning Event naming the budget and the pod, while region b goes on; the agent keeps running (the
// refusal is no error). Once the budget allows one disruption, the rollout completes Healthy.
import type { KubernetesObject } from '@kubernetes/client-node';
import { expect } from 'vitest';
import { NAME_LABEL, REGION_LABEL } from '../../core/labels.js';
import { clients, serverSideApply, test, waitFor } from './helpers.js';
import {
  agentMetrics,
  apply,
  assertHolds,
  counterValue,
  ED_NAME,
  fill,
  podCounts,
  readStatus,
  waitForPods,
  withRolloutEnv,
  type EdOptions,
} from './rollout-kit.js';

const version = (n: number): EdOptions => ({
  image: `registry.example/web:${n}`,
  replicas: [2, 2, undefined],
  strategy: { upgradeMode: 'scaleSimultaneously', batchSize: 1, minReadySeconds: 1 },
});

interface Budget extends KubernetesObject {
  spec: { maxUnavailable: number; selector: { matchLabels: Record<string, string> } };
  status?: { observedGeneration?: number; disruptionsAllowed?: number };
}

/** The EvictionBlocked Events recorded on the ExtendedDeployment. */
async function blockedEvents(ns: string): Promise<string[]> {
  const events = (await clients().core.listNamespacedEvent({ namespace: ns })).items;
  return events
    .filter((e) => e.involvedObject.kind === 'ExtendedDeployment' && e.involvedObject.name === ED_NAME && e.reason === 'EvictionBlocked')
    .map((e) => `${e.type}: ${e.message}`);
}

test("a PodDisruptionBudget holds a region's replacement with an Event until it allows a disruption; then the rollout completes", async ({ ns }) => {
  await withRolloutEnv(ns, 'disruption-budget', async (env) => {
    const v1 = await fill(env, version(1));
    const [a, b] = v1.regions.map((r) => r.name) as [string, string];
    const budget: Budget = {
      apiVersion: 'policy/v1',
      kind: 'PodDisruptionBudget',
      metadata: { name: 'web-a', namespace: ns },
      spec: { maxUnavailable: 0, selector: { matchLabels: { [NAME_LABEL]: ED_NAME, [REGION_LABEL]: a } } },
    };
    await serverSideApply(budget);
    const observed = async () =>
      clients().objects.read<Budget>({ apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: { name: 'web-a', namespace: ns } });
    await waitFor(
      'the budget observed: no disruption allowed',
      async () => {
        const s = (await observed()).status;
        return s?.observedGeneration === 1 && s.disruptionsAllowed === 0;
      },
      { describe: observed },
    );

    const v2 = env.render(version(2));
    await apply(v2);
    const [event] = await waitFor(
      'an EvictionBlocked Event',
      async () => {
        const events = await blockedEvents(ns);
        return events.length > 0 ? events : undefined;
      },
      { describe: async () => ({ status: await readStatus(ns), pods: await podCounts(ns, v2) }) },
    );
    expect(event).toMatch(
      new RegExp(
        `^Warning: eviction of pod ${ns}/web-${a}-\\S+ blocked by PodDisruptionBudget web-a: The disruption budget web-a needs 2 healthy pods and has 2 currently; the rollout waits and retries$`,
      ),
    );

    // Region b, with no budget, replaces its first pod; region a keeps both old pods, and the rollout waits there.
    await waitForPods(
      ns,
      v2,
      [
        { name: a, updated: 0, old: 2 },
        { name: b, updated: 1, old: 1 },
      ],
      'region a held, region b in group 1',
    );
    // While the budget refuses, nothing moves: the agent retries (with backoff), never fails, and reports once.
    await assertHolds(ns, v2, 5_000, (s) => expect(s).toMatchObject({ phase: 'Progressing', currentGroup: 1, revision: v2.rolloutRevision }));
    expect(env.agent.isLeader()).toBe(true);
    const metrics = await agentMetrics(env.agent);
    expect(counterValue(metrics, 'extendeddeployment_agent_reconcile_duration_seconds_count', 'result', 'blocked')).toBeGreaterThan(1);
    expect(counterValue(metrics, 'extendeddeployment_agent_reconcile_duration_seconds_count', 'result', 'error')).toBe(0);
    expect(await blockedEvents(ns)).toHaveLength(1);

    await serverSideApply({ ...budget, spec: { ...budget.spec, maxUnavailable: 1 } });
    await waitForPods(
      ns,
      v2,
      v2.regions.map((r) => ({ name: r.name, updated: r.replicas, old: 0 })),
      'v2 everywhere once the budget allows it',
      180_000,
    );
    const done = await waitFor(
      'v2 Healthy',
      async () => {
        const s = await readStatus(ns);
        return s.phase === 'Healthy' && s.revision === v2.rolloutRevision ? s : undefined;
      },
      { timeoutMs: 120_000, describe: () => readStatus(ns) },
    );
    expect(done.regions?.map((r) => [r.name, r.updated, r.available])).toEqual([
      [a, 2, 2],
      [b, 2, 2],
    ]);
  });
});
