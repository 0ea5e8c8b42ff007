// A namespaced install (AgentInstall `watchNamespaces`): the agent's namespaced permissions are Roles in the two
// namespaces it watches, nothing namespaced is granted cluster-wide, and the admission policies refuse its writes
// anywhere else. The install is rendered by the construct (as `cdk8s synth` would), its ServiceAccount, RBAC and
// policies applied, and the agent (in-process) acts as that ServiceAccount with `--namespace=<a>,<b>`: one informer per
// namespace and resource. It must roll out in both namespaces, leave an ExtendedDeployment in a third namespace alone
// (no status, no pod touched), and its token must be refused there, under the invariant watcher of both namespaces.
import { AppsV1Api, CoreV1Api } from '@kubernetes/client-node';
import { Chart, Testing } from 'cdk8s';
import { expect } from 'vitest';
import { startAgent, type Agent } from '../../agent/agent.js';
import { silentLogger } from '../../agent/runtime/log.js';
import { AgentInstall } from '../../constructs/agent-install.js';
import { installIdentity, isIdentityObject, type AgentIdentity, type RbacObject } from './agent-identity.js';
import { clients, createNamespace, deleteNamespace, errorCode, serverSideApply, sleep, test, uniqueName, waitFor } from './helpers.js';
import { start as startWatcher, stopAndReport, type InvariantWatch } from './invariants.js';
import { apply, deployRegions, extendedDeployment, installCrds, podCounts, readStatus, render, waitFilled, type EdOptions } from './rollout-kit.js';

test('a namespaced install rolls out in the two namespaces it watches, and neither sees nor touches a third', async ({ ns }) => {
  await installCrds();
  const suffix = uniqueName('r').slice(2);
  const regions = deployRegions(suffix);
  for (const region of regions) await serverSideApply(region);
  const [second, third] = [await createNamespace(), await createNamespace()];
  const watched = [ns, second];
  const name = `agent-${suffix}`;
  const chart = new Chart(Testing.app(), 'install');
  new AgentInstall(chart, 'agent', { image: 'edctl:e2e', name, namespace: ns, createNamespace: false, watchNamespaces: watched });
  const objects = Testing.synth(chart).filter(isIdentityObject) as RbacObject[];
  // Namespaced permissions only in the watched namespaces: nothing namespaced cluster-wide but pods to read (capacity).
  expect(objects.filter((o) => o.kind === 'Role' && o.metadata?.name === name).map((o) => o.metadata?.namespace)).toEqual(watched);

  const watches: InvariantWatch[] = [];
  let identity: AgentIdentity | undefined;
  let agent: Agent | undefined;
  let failed = false;
  try {
    identity = await installIdentity(objects, `system:serviceaccount:${ns}:${name}`, ns);
    for (const namespace of watched) watches.push(await startWatcher({ kubeConfig: clients().kc, namespace, name: 'web' }));
    agent = await startAgent({
      kubeConfig: identity.kubeConfig,
      log: silentLogger,
      namespaces: watched,
      metricsBindAddress: '127.0.0.1:0',
      healthProbeBindAddress: '127.0.0.1:0',
      leaseNamespace: ns,
      leaseName: name,
      identity: 'e2e-namespaced',
      workers: 2,
    });

    const options = (image: string): EdOptions => ({ image, replicas: [2, 1, 1] });
    const v1 = [ns, second, third].map((namespace) => render([...regions, extendedDeployment(namespace, suffix, options('registry.example/web:1'))]));
    for (const rendered of v1) await apply(rendered);
    for (const [i, namespace] of watched.entries()) await waitFilled(namespace, v1[i]!, `v1 filled in ${namespace}`);

    // An image change in both watched namespaces rolls out in each.
    const v2 = watched.map((namespace) => render([...regions, extendedDeployment(namespace, suffix, options('registry.example/web:2'))]));
    for (const rendered of v2) await apply(rendered);
    for (const [i, namespace] of watched.entries()) {
      const healthy = await waitFor(
        `v2 Healthy in ${namespace}`,
        async () => {
          const status = await readStatus(namespace);
          return status.revision === v2[i]!.rolloutRevision && status.phase === 'Healthy' && status;
        },
        { timeoutMs: 180_000, describe: () => readStatus(namespace) },
      );
      expect(healthy.regions?.map((r) => r.updated)).toEqual([2, 1, 1]);
    }

    // The third namespace: its ExtendedDeployment has no status, and its ReplicaSets keep Kubernetes' one replica.
    expect(await readStatus(third)).toEqual({});
    expect(await podCounts(third, v1[2]!)).toEqual(v1[2]!.regions.map((r) => ({ name: r.name, updated: 1, old: 0 })));
    // The agent's token may neither read its workloads nor write there (pods it may read everywhere: capacity counts
    // every pod on a region's nodes).
    const asAgent = identity.kubeConfig.makeApiClient(CoreV1Api);
    const code = (p: Promise<unknown>) =>
      p.then(
        () => 200,
        (e: unknown) => errorCode(e),
      );
    expect(await code(identity.kubeConfig.makeApiClient(AppsV1Api).listNamespacedReplicaSet({ namespace: third }))).toBe(403);
    const pod = (await clients().core.listNamespacedPod({ namespace: third })).items[0];
    const patch = asAgent.patchNamespacedPod({
      name: pod?.metadata?.name ?? '',
      namespace: third,
      body: [{ op: 'add', path: '/metadata/annotations', value: { 'extendeddeployment.io/probe': 'x' } }],
    });
    expect(await code(patch)).toBe(403);
    await sleep(2_000);
    expect(await readStatus(third)).toEqual({});
    console.log(
      `[namespaced-install] rolled out in ${watched.join(' and ')}; ${third} untouched, the agent's list of ReplicaSets and patch of a pod there refused (403)`,
    );
  } catch (error) {
    failed = true;
    throw error;
  } finally {
    await agent?.stop();
    await identity?.remove();
    const violations = (await Promise.all(watches.map((w, i) => stopAndReport(w, `namespaced-install ${watched[i]}`, failed)))).flat();
    for (const region of regions)
      await clients()
        .objects.delete(region)
        .catch(() => undefined);
    await Promise.all([second, third].map((n) => deleteNamespace(n)));
    if (!failed) expect(violations).toEqual([]);
  }
});
