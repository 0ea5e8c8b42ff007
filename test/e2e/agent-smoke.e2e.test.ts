// The agent against the real lab cluster: it scales freshly synced regional ReplicaSets to their counts, and after an
// image change it rolls group by group, stopping at every confirmation gate with exactly the pods per region that
// core's simulateRollout predicts (the rollout `edctl plan` shows), until every pod runs the new revision; a second
// image change right after (ExtendedDeployment synced before its ReplicaSets) starts again at group 1. Approvals go
// through `edctl approve`. The agent runs in-process with leader election on a Lease in the test's namespace, as the
// rendered install's ServiceAccount with only its RBAC and under its admission policies, and releases that Lease when
// stopped. Waits are generous and nothing asserts on speed.
import type { KubernetesObject, V1Lease } from '@kubernetes/client-node';
import { expect } from 'vitest';
import { startAgent, type Agent } from '../../agent/agent.js';
import { silentLogger } from '../../agent/runtime/log.js';
import { run } from '../../cli/run.js';
import type { ExtendedDeploymentStatus } from '../../core/api/extended-deployment.js';
import { NAME_LABEL, REGION_LABEL, REVISION_LABEL } from '../../core/labels.js';
import { renderSet, type RenderedExtendedDeployment } from '../../core/render.js';
import { startFromRender } from '../../core/simulate/from-render.js';
import { simulateRollout } from '../../core/simulate/simulate.js';
import { kubeconfigPath } from '../cluster/lab.js';
import { renderedIdentity, type AgentIdentity } from './agent-identity.js';
import { installCrds } from './crds.js';
import { waitMatchesGit } from './git-match.js';
import { clients, serverSideApply, test, uniqueName, waitFor } from './helpers.js';
import { start as startWatcher, stopAndReport } from './invariants.js';
import { completedEvent, edEvents } from './rollout-kit.js';

const GROUP = 'extendeddeployment.io';
const VERSION = 'v1beta1';

/** Two regions on the lab's nodes, named per test (DeployRegions are cluster-scoped). */
function deployRegions(suffix: string) {
  return [
    {
      apiVersion: `${GROUP}/${VERSION}`,
      kind: 'DeployRegion',
      metadata: { name: `amd-${suffix}` },
      spec: { matchLabels: { 'kubernetes.io/arch': 'amd64', 'topology.kubernetes.io/zone': 'zone-a' } },
    },
    { apiVersion: `${GROUP}/${VERSION}`, kind: 'DeployRegion', metadata: { name: `arm-${suffix}` }, spec: { matchLabels: { 'kubernetes.io/arch': 'arm64' } } },
  ];
}

function extendedDeployment(ns: string, suffix: string, image: string, confirm: boolean) {
  return {
    apiVersion: `${GROUP}/${VERSION}`,
    kind: 'ExtendedDeployment',
    metadata: { name: 'web', namespace: ns },
    spec: {
      replicas: 5,
      selector: { matchLabels: { app: 'web' } },
      template: {
        metadata: { labels: { app: 'web' } },
        spec: { terminationGracePeriodSeconds: 0, containers: [{ name: 'app', image, resources: { requests: { cpu: '50m', memory: '32Mi' } } }] },
      },
      regions: [
        { name: `amd-${suffix}`, replicas: 3 },
        { name: `arm-${suffix}`, replicas: 2 },
      ],
      strategy: { minReadySeconds: 1, batchSize: 1, needWaitingForConfirm: confirm },
    },
  };
}

function render(objects: unknown[]): RenderedExtendedDeployment {
  const result = renderSet(objects);
  if (!result.ok) throw new Error(`render failed: ${JSON.stringify(result.problems)}`);
  const [ed] = result.value.extendedDeployments;
  if (!ed) throw new Error('nothing rendered');
  return ed;
}

/** Applies the rendered ExtendedDeployment and its ReplicaSets as a GitOps tool would. */
async function apply(ed: RenderedExtendedDeployment, parts: 'all' | 'ed' | 'workloads' = 'all'): Promise<void> {
  if (parts !== 'workloads') await serverSideApply(ed.manifest as KubernetesObject);
  if (parts !== 'ed') for (const region of ed.regions) await serverSideApply(region.workload as KubernetesObject);
}

async function readStatus(ns: string): Promise<ExtendedDeploymentStatus> {
  const ed = (await clients().objects.read({ apiVersion: `${GROUP}/${VERSION}`, kind: 'ExtendedDeployment', metadata: { name: 'web', namespace: ns } })) as {
    status?: ExtendedDeploymentStatus;
  };
  return ed.status ?? {};
}

/** Live pods (not terminating) per region and revision. */
async function podCounts(ns: string, rendered: RenderedExtendedDeployment): Promise<{ name: string; updated: number; old: number }[]> {
  const pods = (await clients().core.listNamespacedPod({ namespace: ns, labelSelector: `${NAME_LABEL}=web` })).items.filter(
    (p) => !p.metadata?.deletionTimestamp,
  );
  return rendered.regions.map((r) => {
    const mine = pods.filter((p) => p.metadata?.labels?.[REGION_LABEL] === r.name);
    const updated = mine.filter((p) => p.metadata?.labels?.[REVISION_LABEL] === r.revision).length;
    return { name: r.name, updated, old: mine.length - updated };
  });
}

/**
 * Follows a rollout from `from` to `to` gate by gate: at each confirmation gate the pods per region must be exactly
 * what core's simulateRollout predicts for that group; then `edctl approve` lets the next group start.
 */
async function rollThroughGates(ns: string, from: RenderedExtendedDeployment, to: RenderedExtendedDeployment): Promise<void> {
  const sim = simulateRollout(
    startFromRender(
      to,
      (name) => {
        const old = from.regions.find((o) => o.name === name);
        return { replicas: old?.replicas, running: { [old?.revision ?? 'old']: old?.replicas ?? 0 } };
      },
      from,
    ),
  );
  expect(sim.totalGroups).toBe(3);
  expect(sim.approvals).toEqual([2, 3]);
  for (const group of sim.groups) {
    const last = group.group === sim.totalGroups;
    const phase = last ? 'Healthy' : 'WaitingForConfirmation';
    const status = await waitFor(
      `group ${group.group}: ${phase}`,
      async () => {
        const s = await readStatus(ns);
        return s.revision === to.rolloutRevision && s.currentGroup === group.group && s.phase === phase ? s : undefined;
      },
      { timeoutMs: 180_000, describe: async () => ({ status: await readStatus(ns), pods: await podCounts(ns, to) }) },
    );
    expect(status.totalGroups).toBe(sim.totalGroups);
    // The gate holds the pods where the group left them: once terminating pods are gone, they match the simulation.
    await waitFor(`group ${group.group}: pods per region as simulated`, async () => JSON.stringify(await podCounts(ns, to)) === JSON.stringify(group.regions), {
      timeoutMs: 60_000,
      describe: async () => ({ expected: group.regions, actual: await podCounts(ns, to) }),
    });
    if (!last) expect(await run(['approve', 'web', '-n', ns, '--kubeconfig', kubeconfigPath()])).toBe(0);
  }
}

test('the agent rolls image changes group by group, as simulateRollout predicts', async ({ ns }) => {
  await installCrds();
  const suffix = uniqueName('r').slice(2);
  const regions = deployRegions(suffix);
  for (const region of regions) await serverSideApply(region as KubernetesObject);
  const watch = await startWatcher({ kubeConfig: clients().kc, namespace: ns, name: 'web' });
  let agent: Agent | undefined;
  let identity: AgentIdentity | undefined;
  let failed = false;
  try {
    const v1 = render([...regions, extendedDeployment(ns, suffix, 'registry.example/web:1', false)]);
    await apply(v1);
    identity = await renderedIdentity(ns, suffix);
    agent = await startAgent({
      kubeConfig: identity.kubeConfig,
      log: silentLogger,
      namespaces: [ns],
      metricsBindAddress: '127.0.0.1:0',
      healthProbeBindAddress: '127.0.0.1:0',
      leaseNamespace: ns,
      identity: 'e2e-agent',
      workers: 2,
    });

    // The rendered ReplicaSets start with Kubernetes' one replica; the agent scales them to the distribution.
    await waitFor(
      'v1 Healthy with 3 + 2 pods',
      async () => {
        const status = await readStatus(ns);
        const counts = await podCounts(ns, v1);
        return status.phase === 'Healthy' && JSON.stringify(counts.map((c) => [c.updated, c.old])) === '[[3,0],[2,0]]';
      },
      { timeoutMs: 120_000, describe: async () => ({ status: await readStatus(ns), pods: await podCounts(ns, v1) }) },
    );
    const ready = await fetch(`http://127.0.0.1:${agent.healthAddress.port}/readyz`);
    expect(ready.status).toBe(200);

    // Git changes the image; the rollout waits for approval after every group.
    const v2 = render([...regions, extendedDeployment(ns, suffix, 'registry.example/web:2', true)]);
    await apply(v2);
    await rollThroughGates(ns, v1, v2);

    // A second rollout right after the first, with the ExtendedDeployment synced before its ReplicaSets: it must start
    // again at group 1 (and stop at every gate), not continue from the finished rollout's last group.
    const v3 = render([...regions, extendedDeployment(ns, suffix, 'registry.example/web:3', true)]);
    await apply(v3, 'ed');
    await waitFor(
      'v3 waiting for the sync',
      async () => {
        const status = await readStatus(ns);
        return status.revision === v3.rolloutRevision && status.conditions?.some((c) => c.reason === 'WaitingForSync');
      },
      { describe: () => readStatus(ns) },
    );
    await apply(v3, 'workloads');
    await rollThroughGates(ns, v2, v3);
    expect(await waitMatchesGit(watch, v3), 'the cluster matches Git').toEqual([]);

    const final = await readStatus(ns);
    expect(final.regions?.map((r) => [r.name, r.updated, r.available])).toEqual([
      [`amd-${suffix}`, 3, 3],
      [`arm-${suffix}`, 2, 2],
    ]);
    const events = await edEvents(ns, { until: completedEvent(v3.rolloutRevision) });
    expect(events.map((e) => e.reason)).toEqual(expect.arrayContaining(['RolloutStarted', 'GroupStarted', 'WaitingForConfirmation', 'RolloutCompleted']));
    const metrics = await (await fetch(`http://127.0.0.1:${agent.address.port}/metrics`)).text();
    expect(metrics).toMatch(/extendeddeployment_agent_actions_total\{kind="scale"\} [1-9]/);
    expect(metrics).toContain('extendeddeployment_agent_leader 1');
  } catch (e) {
    failed = true;
    throw e;
  } finally {
    await agent?.stop();
    await identity?.remove();
    const violations = await stopAndReport(watch, 'agent-smoke', failed);
    if (!failed) expect(violations).toEqual([]);
    for (const region of regions) {
      try {
        await clients().objects.delete(region);
      } catch {
        // already gone
      }
    }
  }
  // A graceful stop hands the Lease over at once.
  const lease: V1Lease = await clients().coord.readNamespacedLease({ name: 'extended-deployment-agent', namespace: ns });
  expect(lease.spec?.holderIdentity ?? '').toBe('');
});
