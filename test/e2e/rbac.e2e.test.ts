// The RBAC proof: the agent runs a whole rollout with exactly the permissions the rendered install grants, and never
// gets a 403. The ServiceAccount, ClusterRole, ClusterRoleBinding and the leader-election Role and RoleBinding are taken
// from dist/agent-install.k8s.yaml (what users apply), moved to the test's namespace (cluster-scoped names get the
// test's suffix so parallel runs do not collide), and the in-process agent talks to the API server as that
// ServiceAccount: its kubeconfig impersonates `system:serviceaccount:<ns>:<name>` (client-node 1.4.0 sends a kubeconfig
// user's `as` as the Impersonate-User header, on API calls and on watches; the API server adds the ServiceAccount's
// groups), so every request is authorized by RBAC for that identity, and every write passes the rendered
// ValidatingAdmissionPolicies (bound to that ServiceAccount; a refusal is a 403 too). The rollout: an image change over two regions with
// in-place updates on (pods carry the InPlaceUpdateReady readiness gate, which the agent opens, closes while swapping,
// and opens again), two groups with one confirmation gate, approved with `edctl approve`. It must complete Healthy,
// every pod swapped in place (same pod UIDs), and the agent's log must hold no 403 / forbidden.
import { AuthenticationV1Api, CoreV1Api, type V1Pod } from '@kubernetes/client-node';
import { expect } from 'vitest';
import { startAgent, type Agent } from '../../agent/agent.js';
import { jsonLogger } from '../../agent/runtime/log.js';
import { IN_PLACE_READINESS_GATE, NAME_LABEL } from '../../core/labels.js';
import { clients, errorCode, serverSideApply, test, uniqueName, waitFor } from './helpers.js';
import { renderedIdentity, type AgentIdentity } from './agent-identity.js';
import { start as startWatcher, stopAndReport } from './invariants.js';
import {
  apply,
  completedEvent,
  deployRegions,
  ED_NAME,
  edEvents,
  extendedDeployment,
  installCrds,
  readStatus,
  render,
  rollThroughGates,
  simulateFromCluster,
  waitFilled,
} from './rollout-kit.js';

const gateOpen = (pod: V1Pod) => pod.status?.conditions?.find((c) => c.type === IN_PLACE_READINESS_GATE)?.status === 'True';

async function pods(ns: string): Promise<V1Pod[]> {
  return (await clients().core.listNamespacedPod({ namespace: ns, labelSelector: `${NAME_LABEL}=${ED_NAME}` })).items.filter(
    (p) => !p.metadata?.deletionTimestamp,
  );
}

test('the agent rolls out in place through a confirmation gate with only the rendered RBAC, and is never forbidden', async ({ ns }) => {
  await installCrds();
  const suffix = uniqueName('r').slice(2);
  const regions = deployRegions(suffix).slice(0, 2);
  const logLines: string[] = [];
  let agent: Agent | undefined;
  let identity: AgentIdentity | undefined;
  const watch = await startWatcher({ kubeConfig: clients().kc, namespace: ns, name: ED_NAME });
  try {
    identity = await renderedIdentity(ns, suffix);
    // Under the admission policies too, in force (renderedIdentity waits until each refuses a probe).
    // One per kind the agent writes: pods, ReplicaSets, Deployments, StatefulSets, ControllerRevisions.
    expect(identity.rbac.filter((o) => o.kind === 'ValidatingAdmissionPolicy')).toHaveLength(5);
    for (const r of regions) await serverSideApply(r);

    // Who the agent is: the ServiceAccount, with its groups; and it cannot do what the ClusterRole does not grant.
    const { subject, kubeConfig: kc } = identity;
    const review = await kc
      .makeApiClient(AuthenticationV1Api)
      .createSelfSubjectReview({ body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' } });
    expect(review.status?.userInfo?.username).toBe(subject);
    expect(review.status?.userInfo?.groups).toEqual(expect.arrayContaining(['system:serviceaccounts', `system:serviceaccounts:${ns}`]));
    const secrets = await kc
      .makeApiClient(CoreV1Api)
      .listNamespacedSecret({ namespace: ns })
      .then(
        () => 200,
        (e: unknown) => errorCode(e),
      );
    expect(secrets).toBe(403);

    const edFor = (image: string) =>
      render([
        ...regions,
        extendedDeployment(ns, suffix, {
          image,
          replicas: [2, 2, undefined],
          strategy: { needWaitingForConfirm: true, updateStrategy: { type: 'InPlaceIfPossible', gracePeriodSeconds: 1 } },
        }),
      ]);
    const v1 = edFor('registry.example/web:1');
    expect(v1.inPlace).toBe(true);
    await apply(v1);
    agent = await startAgent({
      kubeConfig: kc,
      log: jsonLogger({ level: 'debug', write: (line) => void logLines.push(line) }),
      namespaces: [ns],
      metricsBindAddress: '127.0.0.1:0',
      healthProbeBindAddress: '127.0.0.1:0',
      leaseNamespace: ns, // the leader-election Role is in the ServiceAccount's namespace, for the rendered Lease name
      identity: 'e2e-rbac',
      workers: 2,
    });

    // The fill: pods are created with the readiness gate, and become Ready only once the agent opens it; the creation
    // passes its confirmation gates like any rollout.
    await waitFilled(ns, v1, 'v1 filled');
    await waitFor(
      'v1 Healthy, every gate open',
      async () => {
        const s = await readStatus(ns);
        const all = await pods(ns);
        return s.phase === 'Healthy' && s.revision === v1.rolloutRevision && all.length === 4 && all.every(gateOpen);
      },
      { timeoutMs: 120_000, describe: async () => ({ status: await readStatus(ns), gates: (await pods(ns)).map((p) => [p.metadata?.name, gateOpen(p)]) }) },
    );
    expect(agent.isLeader()).toBe(true);
    const before = new Set((await pods(ns)).map((p) => p.metadata?.uid));
    for (const p of await pods(ns)) expect(p.spec?.readinessGates).toEqual([{ conditionType: IN_PLACE_READINESS_GATE }]);

    // The image changes: two groups, approval before the second, every pod swapped in place.
    const v2 = edFor('registry.example/web:2');
    const sim = await simulateFromCluster(ns, v2);
    expect(sim.totalGroups).toBe(2);
    expect(sim.approvals).toEqual([2]);
    await apply(v2);
    await rollThroughGates(ns, v2, sim, 1, watch); // approves with `edctl approve` (as the user, not the agent)
    const final = await waitFor(
      'v2 Healthy, every pod at web:2 and its gate open',
      async () => {
        const s = await readStatus(ns);
        const all = await pods(ns);
        const done =
          all.length === 4 &&
          all.every(
            (p) =>
              gateOpen(p) && p.spec?.containers[0]?.image === 'registry.example/web:2' && p.status?.containerStatuses?.[0]?.image === 'registry.example/web:2',
          );
        return s.phase === 'Healthy' && s.revision === v2.rolloutRevision && done ? { status: s, pods: all } : undefined;
      },
      { timeoutMs: 120_000, describe: () => readStatus(ns) },
    );
    expect(new Set(final.pods.map((p) => p.metadata?.uid))).toEqual(before);
    expect(final.status.regions?.map((r) => [r.name, r.swappedInPlace ?? 0, r.replaced ?? 0])).toEqual(v2.regions.map((r) => [r.name, r.replicas, 0]));

    // The agent did the work with every kind of write the rollout needs, and was never refused.
    const entries = logLines.map((l) => JSON.parse(l) as { level: string; msg: string; kind?: string; code?: number; error?: string });
    const kinds = new Set(entries.filter((e) => e.msg === 'action').map((e) => e.kind));
    console.log(
      `[rbac] ${logLines.length} agent log lines; actions: ${[...kinds].join(', ')}; warnings: ${entries.filter((e) => e.level !== 'info' && e.level !== 'debug').length}`,
    );
    expect([...kinds]).toEqual(expect.arrayContaining(['scale', 'openGate', 'closeGate', 'swapBegin', 'swapImages', 'swapDone']));
    expect(logLines.filter((l) => /"code":403|forbidden/i.test(l))).toEqual([]);
    const events = await edEvents(ns, { until: completedEvent(v2.rolloutRevision) });
    expect(events.map((e) => e.reason)).toEqual(expect.arrayContaining(['RolloutStarted', 'WaitingForConfirmation', 'RolloutCompleted']));
  } finally {
    await agent?.stop();
    // The agent's warnings (a refused call shows here as code 403), also when the rollout did not finish.
    for (const line of logLines.filter((l) => /"level":"(warn|error)"/.test(l)).slice(0, 20)) console.log(`[rbac] agent: ${line.trimEnd()}`);
    const violations = await stopAndReport(watch, 'rbac');
    await identity?.remove();
    for (const o of regions) {
      try {
        await clients().objects.delete(o);
      } catch {
        // already gone
      }
    }
    expect(violations).toEqual([]);
  }
});
