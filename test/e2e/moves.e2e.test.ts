// Shortage and fault moves on the lab: a region whose nodes are full, a region whose nodes stop heartbeating, a partial
// failure, every region failed, and an agent killed between recording a move and carrying it out. Regions are the
// rollout kit's three (zone-a and zone-b amd64, zone-c arm64; two nodes of 4 cores and 20 pod slots each). Timings are
// printed as figures, never asserted.
import { Watch, type KubernetesObject, type V1Node } from '@kubernetes/client-node';
import { afterEach, describe, expect } from 'vitest';
import type { ExtendedDeploymentStatus } from '../../core/api/extended-deployment.js';
import { NAME_LABEL, REGION_LABEL } from '../../core/labels.js';
import { failNodes, healNodes } from '../cluster/lab.js';
import { renderedIdentity } from './agent-identity.js';
import { AgentProcess } from './agent-process.js';
import { startApiProxy, type ProxiedRequest, type Verdict } from './api-proxy.js';
import { clients, nodeReady, podReady, serverSideApply, sleep, test, testPod, uniqueName, waitFor } from './helpers.js';
import {
  GROUP,
  VERSION,
  apply,
  approveIfWaiting,
  deployRegions,
  extendedDeployment,
  fill,
  installCrds,
  readStatus,
  render,
  waitForPhase,
  withRolloutEnv,
  type RolloutEnv,
} from './rollout-kit.js';

const ZONE_C_NODES = ['arm64-c-1', 'arm64-c-2'];
const ZONE_A_NODES = ['amd64-a-1', 'amd64-a-2'];
const quiet = () => {};
const hostnames = (nodes: readonly string[]) => `kubernetes.io/hostname in (${nodes.join(',')})`;

/** Pods taking every core of each node, so nothing else fits there. */
async function occupy(ns: string, nodes: readonly string[]): Promise<void> {
  for (const node of nodes) {
    const pod = testPod(`filler-${node}`, { nodeSelector: { 'kubernetes.io/hostname': node } });
    pod.spec!.containers[0]!.resources = { requests: { cpu: '4' } };
    await clients().core.createNamespacedPod({ namespace: ns, body: pod });
  }
  await waitFor(`fillers running on ${nodes.join(', ')}`, async () => {
    const pods = (await clients().core.listNamespacedPod({ namespace: ns, labelSelector: 'app' })).items.filter((p) => p.metadata?.name?.startsWith('filler-'));
    return pods.length === nodes.length && pods.every(podReady);
  });
}

async function free(ns: string, nodes: readonly string[]): Promise<void> {
  for (const node of nodes) await clients().core.deleteNamespacedPod({ name: `filler-${node}`, namespace: ns, gracePeriodSeconds: 0 });
}

/** Live pods of the ExtendedDeployment per region: [all, Ready]. */
async function regionPods(ns: string): Promise<Record<string, [number, number]>> {
  const pods = (await clients().core.listNamespacedPod({ namespace: ns, labelSelector: NAME_LABEL })).items.filter((p) => !p.metadata?.deletionTimestamp);
  const out: Record<string, [number, number]> = {};
  for (const p of pods) {
    const region = p.metadata?.labels?.[REGION_LABEL] ?? '';
    const [all, ready] = out[region] ?? [0, 0];
    out[region] = [all + 1, ready + (podReady(p) ? 1 : 0)];
  }
  return out;
}

const away = (s: ExtendedDeploymentStatus, from: string) => (s.moves ?? []).filter((m) => m.from === from).reduce((sum, m) => sum + m.count, 0);

async function eventReasons(ns: string): Promise<string[]> {
  return (await clients().core.listNamespacedEvent({ namespace: ns })).items
    .filter((e) => e.involvedObject.kind === 'ExtendedDeployment')
    .map((e) => e.reason ?? '');
}

/** Resolves with Date.now() at the first watch event of `path` for which `check` holds (the object as the event shows it). */
async function firstSeen<T extends KubernetesObject>(path: string, check: (object: T) => boolean): Promise<{ at: Promise<number>; stop: () => void }> {
  let abort: AbortController | undefined;
  const at = new Promise<number>((resolve, reject) => {
    new Watch(clients().kc)
      .watch(
        path,
        {},
        (_phase, object: T) => {
          if (check(object)) resolve(Date.now());
        },
        (err: Error | null) => {
          // client-node's Watch ends with the stream's or the request's Error, or null when the stream closed.
          if (err) reject(err);
        },
      )
      .then((a) => (abort = a), reject);
  });
  return { at, stop: () => abort?.abort() };
}

const edPath = (ns: string) => `/apis/${GROUP}/${VERSION}/namespaces/${ns}/extendeddeployments`;

describe('moves', () => {
  // Every test heals what it failed; this is the safety net for a test that failed half-way.
  afterEach(async () => {
    await healNodes('', quiet);
  });

  test('shortage: pods stuck Unschedulable move to regions with room; freed capacity brings them back', { timeout: 300_000 }, async ({ ns }) => {
    await withRolloutEnv(ns, 'moves-shortage', async (env: RolloutEnv) => {
      const [a, b, c] = env.regions.map((r) => r.metadata!.name!) as [string, string, string];
      await occupy(ns, ZONE_C_NODES);
      const ed = env.render({
        image: 'registry.example/web:1',
        replicas: [2, 2, 2],
        strategy: { autoReschedule: { enable: true, timeoutSeconds: 3, coolDownSeconds: 5 }, moveBack: { enable: true, stabilizationSeconds: 5 } },
      });
      await apply(ed);
      const moved = await waitFor(`2 replicas moved away from ${c}`, async () => ((s) => (away(s, c) === 2 ? s : undefined))(await readStatus(ns)), {
        timeoutMs: 90_000,
        describe: () => readStatus(ns),
      });
      expect(moved.moves?.map((m) => m.reason)).toEqual(moved.moves?.map(() => 'Shortage'));
      expect(moved.conditions?.find((c) => c.type === 'Moves')).toMatchObject({ status: 'True', reason: 'Shortage' });
      // The service's ready count is back to the desired total, on a and b.
      const spread = await waitFor(
        '6 pods Ready over a and b, none left in c',
        async () => {
          const pods = await regionPods(ns);
          return (pods[a]?.[1] ?? 0) + (pods[b]?.[1] ?? 0) === 6 && (pods[c]?.[0] ?? 0) === 0 ? pods : undefined;
        },
        { timeoutMs: 60_000, describe: () => regionPods(ns) },
      );
      console.log(`figure: after the shortage move pods per region [all, ready]: ${JSON.stringify(spread)}`);
      expect((await readStatus(ns)).overview?.startsWith('[Shortage]')).toBe(true);
      expect(await eventReasons(ns)).toContain('ReplicasMoved');

      const freed = Date.now();
      await free(ns, ZONE_C_NODES);
      await waitFor(
        `${c} has its 2 replicas back and no move is left`,
        async () => {
          const [s, pods] = [await readStatus(ns), await regionPods(ns)];
          return s.moves === undefined && s.phase === 'Healthy' && [a, b, c].every((r) => pods[r]?.[1] === 2 && pods[r]?.[0] === 2);
        },
        { timeoutMs: 120_000, describe: async () => ({ status: await readStatus(ns), pods: await regionPods(ns) }) },
      );
      console.log(`figure: replicas back in ${c} ${((Date.now() - freed) / 1000).toFixed(1)} s after its capacity was freed (stabilization 5 s, batch 1)`);
      expect(await eventReasons(ns)).toContain('ReplicasReturned');
      expect((await readStatus(ns)).conditions?.find((x) => x.type === 'Moves')).toMatchObject({ status: 'False', reason: 'NoMoves' });
    });
  });

  test(
    'fault: a region whose nodes all stop heartbeating hands its replicas over after the toleration; healed, it gets them back',
    { timeout: 300_000 },
    async ({ ns }) => {
      await withRolloutEnv(
        ns,
        'moves-fault',
        async (env: RolloutEnv) => {
          const [a, b, c] = env.regions.map((r) => r.metadata!.name!) as [string, string, string];
          const ed = env.render({
            image: 'registry.example/web:1',
            replicas: [2, 2, 2],
            strategy: { faultMove: { enable: true, tolerationSeconds: 5 }, moveBack: { enable: true, stabilizationSeconds: 5 } },
          });
          await apply(ed);
          await waitFor('Healthy', async () => (await readStatus(ns)).phase === 'Healthy', { timeoutMs: 90_000 });

          // When the last node of c is seen NotReady, and when the agent's move is seen in the status: same watch latency.
          const lastDown = new Map<string, number>();
          const nodesDown = await firstSeen<V1Node>('/api/v1/nodes', (n) => {
            if (ZONE_C_NODES.includes(n.metadata?.name ?? '') && nodeReady(n) !== 'True' && !lastDown.has(n.metadata!.name!))
              lastDown.set(n.metadata!.name!, Date.now());
            return lastDown.size === ZONE_C_NODES.length;
          });
          const moveSeen = await firstSeen<KubernetesObject & { status?: ExtendedDeploymentStatus }>(edPath(ns), (o) => away(o.status ?? {}, c) > 0);
          await failNodes(hostnames(ZONE_C_NODES), quiet);
          const [downAt, movedAt] = await Promise.all([nodesDown.at, moveSeen.at]);
          nodesDown.stop();
          moveSeen.stop();
          console.log(
            `figure: first move write seen ${((movedAt - downAt) / 1000).toFixed(2)} s after the last node of ${c} was marked NotReady (toleration 5 s)`,
          );

          await waitFor(
            `every replica of ${c} moved, 6 Ready over a and b`,
            async () => {
              const [s, pods] = [await readStatus(ns), await regionPods(ns)];
              return away(s, c) === 2 && (pods[a]?.[1] ?? 0) + (pods[b]?.[1] ?? 0) === 6;
            },
            { timeoutMs: 60_000, describe: async () => ({ status: await readStatus(ns), pods: await regionPods(ns) }) },
          );
          const region = (await clients().objects.read({ apiVersion: `${GROUP}/${VERSION}`, kind: 'DeployRegion', metadata: { name: c } })) as {
            status?: Record<string, unknown>;
          };
          // The DeployRegion's own phase follows the default policy (all nodes for 30 s); the counts are the same.
          expect(region.status).toMatchObject({ nodes: 2, failingNodes: 2, readyNodes: 0 });
          expect(region.status?.['phase']).not.toBe('Healthy');
          expect((await readStatus(ns)).overview?.startsWith('[Fault]')).toBe(true);

          const healed = Date.now();
          await healNodes(hostnames(ZONE_C_NODES), quiet);
          await waitFor(
            `${c} has its replicas back`,
            async () => {
              const [s, pods] = [await readStatus(ns), await regionPods(ns)];
              return s.moves === undefined && s.phase === 'Healthy' && [a, b, c].every((r) => pods[r]?.[1] === 2);
            },
            { timeoutMs: 120_000, describe: async () => ({ status: await readStatus(ns), pods: await regionPods(ns) }) },
          );
          console.log(`figure: replicas back in ${c} ${((Date.now() - healed) / 1000).toFixed(1)} s after lab:heal-nodes (stabilization 5 s)`);
          expect(await eventReasons(ns)).toEqual(expect.arrayContaining(['ReplicasMoved', 'ReplicasReturned']));
        },
        // Failed nodes take their pods out of service by themselves: the floor is broken by the test, not by the agent.
        { ignore: ['floor'] },
      );
    },
  );

  test('a fault while a rollout waits at its gate: capacity comes back at once, the gate still holds', { timeout: 300_000 }, async ({ ns }) => {
    await withRolloutEnv(
      ns,
      'moves-during-hold',
      async (env: RolloutEnv) => {
        const [a, b, c] = env.regions.map((r) => r.metadata!.name!) as [string, string, string];
        const strategy = {
          needWaitingForConfirm: true,
          faultMove: { enable: true, tolerationSeconds: 3 },
          moveBack: { enable: true, stabilizationSeconds: 3 },
        };
        await fill(env, { image: 'registry.example/web:1', replicas: [2, 2, 2], strategy });
        const v2 = env.render({ image: 'registry.example/web:2', replicas: [2, 2, 2], strategy });
        await apply(v2);
        await waitForPhase(ns, v2.rolloutRevision, 1, 'WaitingForConfirmation', 120_000, v2);

        // c's nodes stop while group 1 waits for approval: c's pods (its new one among them) stop being Ready.
        await failNodes(hostnames(ZONE_C_NODES), quiet);
        const served = await waitFor(
          `${c}'s replicas moved and served by ${a} and ${b} while the gate holds`,
          async () => {
            const [s, pods] = [await readStatus(ns), await regionPods(ns)];
            return away(s, c) === 2 && pods[a]?.[1] === 3 && pods[b]?.[1] === 3 ? { status: s, pods } : undefined;
          },
          { timeoutMs: 90_000, describe: async () => ({ status: await readStatus(ns), pods: await regionPods(ns) }) },
        );
        expect([served.status.phase, served.status.currentGroup]).toEqual(['WaitingForConfirmation', 1]);
        // c is scaled down although its pods are not Ready (its nodes are gone, their pods with them).
        const workloads = await clients().apps.listNamespacedReplicaSet({ namespace: ns });
        expect(workloads.items.find((w) => w.metadata?.labels?.[REGION_LABEL] === c)?.spec?.replicas).toBe(0);

        // Healed and approved: the replicas return and the rollout completes.
        await healNodes(hostnames(ZONE_C_NODES), quiet);
        await waitFor(
          'Healthy at v2, every replica at home',
          async () => {
            await approveIfWaiting(ns);
            const [s, pods] = [await readStatus(ns), await regionPods(ns)];
            return s.phase === 'Healthy' && s.revision === v2.rolloutRevision && s.moves === undefined && [a, b, c].every((r) => pods[r]?.[1] === 2);
          },
          { timeoutMs: 150_000, describe: async () => ({ status: await readStatus(ns), pods: await regionPods(ns) }) },
        );
      },
      // Failed nodes take their pods out of service by themselves: the floor is broken by the test, not by the agent.
      { ignore: ['floor'] },
    );
  });

  test('a partial failure below the threshold moves nothing; every region failed moves nothing', { timeout: 300_000 }, async ({ ns }) => {
    await withRolloutEnv(
      ns,
      'moves-no-move',
      async (env: RolloutEnv) => {
        const [a, , c] = env.regions.map((r) => r.metadata!.name!) as [string, string, string];
        // Nodes failed together are found failed up to ~3.5 s apart (Lease renewals every 2 s, node monitor every 1 s,
        // then the region's status): a toleration shorter than that lets the region found failed first move its
        // replicas to the other before that one fails too, which is right, and not what this test is about.
        const tolerationSeconds = 8;
        const ed = env.render({
          image: 'registry.example/web:1',
          replicas: [2, undefined, 2],
          strategy: { faultMove: { enable: true, tolerationSeconds }, moveBack: { enable: true, stabilizationSeconds: 3 } },
        });
        await apply(ed);
        await waitFor('Healthy', async () => (await readStatus(ns)).phase === 'Healthy', { timeoutMs: 90_000 });

        await failNodes(hostnames([ZONE_C_NODES[1]!]), quiet);
        await waitFor(
          `${c} Degraded with one failing node`,
          async () => {
            const r = (await clients().objects.read({ apiVersion: `${GROUP}/${VERSION}`, kind: 'DeployRegion', metadata: { name: c } })) as {
              status?: { phase?: string; failingNodes?: number };
            };
            return r.status?.phase === 'Degraded' && r.status.failingNodes === 1;
          },
          { timeoutMs: 60_000 },
        );
        // Well past the toleration: still nothing moves.
        for (let i = 0; i < (tolerationSeconds + 4) * 2; i++) {
          expect((await readStatus(ns)).moves).toBeUndefined();
          await sleep(500);
        }

        await failNodes(hostnames([...ZONE_C_NODES, ...ZONE_A_NODES]), quiet);
        const blocked = await waitFor(
          'Moves=Unknown AllRegionsFailed',
          async () => ((s) => (s.conditions?.find((x) => x.type === 'Moves')?.reason === 'AllRegionsFailed' ? s : undefined))(await readStatus(ns)),
          {
            timeoutMs: 90_000,
            describe: () => readStatus(ns),
          },
        );
        expect(blocked.moves).toBeUndefined();
        for (let i = 0; i < 10; i++) {
          expect((await readStatus(ns)).moves).toBeUndefined();
          await sleep(500);
        }
        expect(await eventReasons(ns)).toContain('AllRegionsFailed');
        // Healed: whichever region's nodes report Ready first may take the other's replicas for a moment (the other is
        // still Failed then); they come back after the stabilization period.
        await healNodes(hostnames([...ZONE_C_NODES, ...ZONE_A_NODES]), quiet);
        await waitFor(
          'Healthy again, every replica at home',
          async () => {
            const [s, pods] = [await readStatus(ns), await regionPods(ns)];
            return (
              s.phase === 'Healthy' &&
              s.moves === undefined &&
              s.conditions?.find((x) => x.type === 'Moves')?.reason === 'NoMoves' &&
              pods[a]?.[1] === 2 &&
              pods[c]?.[1] === 2
            );
          },
          { timeoutMs: 120_000, describe: async () => ({ status: await readStatus(ns), pods: await regionPods(ns) }) },
        );
      },
      { ignore: ['floor'] },
    );
  });

  test('an agent killed between recording a move and scaling: the next leader carries it out, nothing is moved twice', { timeout: 300_000 }, async ({ ns }) => {
    await occupy(ns, ZONE_C_NODES);
    let armed = false;
    let killed: AgentProcess | undefined;
    let current: AgentProcess | undefined;
    const writes: string[] = [];
    const onRequest = (r: ProxiedRequest): Verdict => {
      const write = r.method !== 'GET';
      if (write && r.path.includes('/extendeddeployments/') && r.path.includes('/status') && r.body.toString().includes('"moves"') && !armed && !killed) {
        armed = true;
        writes.push('status with moves');
        return 'forward';
      }
      if (armed && !killed && write && r.path.includes('/replicasets/')) {
        killed = current;
        killed?.child.kill('SIGKILL');
        writes.push(`dropped ${r.method} ${r.path.replace(`/namespaces/${ns}`, '')}`);
        return 'drop';
      }
      return 'forward';
    };
    const proxy = await startApiProxy(`${ns}-moves`, onRequest);
    // The agents run as the rendered install's ServiceAccount, under its RBAC and admission policies (through the
    // proxy, which forwards the Impersonate-User header).
    const account = await renderedIdentity(ns, uniqueName('m').slice(2));
    const kubeconfig = account.kubeconfigFile(proxy.kubeconfig);
    try {
      await withRolloutEnvWithoutAgent(ns, async (env) => {
        const c = env.regions[2]!.metadata!.name!;
        const ed = env.render({ image: 'registry.example/web:1', replicas: [2, 2, 2], strategy: { autoReschedule: { enable: true, timeoutSeconds: 3 } } });
        current = new AgentProcess({ kubeconfig, identity: 'm1', namespace: ns, leaseNamespace: ns, leaseDurationSeconds: 4 });
        await apply(ed);
        await waitFor('the first agent killed right after its move was recorded', async () => killed !== undefined, {
          timeoutMs: 90_000,
          describe: async () => ({ writes, status: await readStatus(ns) }),
        });
        await killed?.exited;
        const recorded = (await readStatus(ns)).moves;
        current = new AgentProcess({ kubeconfig, identity: 'm2', namespace: ns, leaseNamespace: ns, leaseDurationSeconds: 4 });
        await waitFor(
          'the next leader scaled both regions for the recorded move',
          async () => {
            const rs = (await clients().apps.listNamespacedReplicaSet({ namespace: ns, labelSelector: NAME_LABEL })).items;
            const total = rs.reduce((s, r) => s + (r.spec?.replicas ?? 0), 0);
            const inC = rs.find((r) => r.metadata?.name?.endsWith(c))?.spec?.replicas;
            return total === 6 && inC === 0;
          },
          { timeoutMs: 90_000, describe: async () => ({ writes, status: await readStatus(ns) }) },
        );
        // What the first agent recorded is kept, and no replica moved twice: the moves add up to the 2 stuck pods. The
        // killed agent never got to the Event of the move it was carrying out (Events follow the writes; an earlier
        // move that needed no workload write, while c was still being created by groups, has its Event); the successor
        // reports only what it moved itself (a double move would show as more, then be trimmed with MovesReevaluated).
        await sleep(5_000);
        const after = await readStatus(ns);
        expect(after.moves?.slice(0, recorded?.length ?? 0).map((m) => [m.from, m.to, m.count])).toEqual(recorded?.map((m) => [m.from, m.to, m.count]));
        expect(away(after, c)).toBe(2);
        const events = (await clients().core.listNamespacedEvent({ namespace: ns })).items.filter((e) => e.involvedObject.kind === 'ExtendedDeployment');
        const movedByEvents = events
          .filter((e) => e.reason === 'ReplicasMoved' && e.reportingInstance === 'm2')
          .reduce((sum, e) => sum + Number(/^(\d+) replica/.exec(e.message ?? '')?.[1] ?? 0), 0);
        expect(movedByEvents).toBe(2 - (recorded ?? []).reduce((sum, m) => sum + m.count, 0));
        expect(events.map((e) => e.reason)).not.toContain('MovesReevaluated');
        console.log(`moves kill: ${writes.join('; ')}`);
        current.child.kill('SIGTERM');
        await current.exited;
      });
    } finally {
      current?.child.kill('SIGKILL');
      await proxy.close();
      await account.remove();
    }
  });
});

/** The rollout kit's regions and rendering, for a test that runs its own agent processes (to kill them). */
async function withRolloutEnvWithoutAgent(ns: string, body: (env: Pick<RolloutEnv, 'regions' | 'render'>) => Promise<void>): Promise<void> {
  await installCrds();
  const suffix = uniqueName('m').slice(2);
  const regions = deployRegions(suffix);
  for (const region of regions) await serverSideApply(region);
  try {
    await body({ regions, render: (o) => render([...regions, extendedDeployment(ns, suffix, o)]) });
  } finally {
    for (const region of regions)
      await clients()
        .objects.delete(region)
        .catch(() => undefined);
  }
}
