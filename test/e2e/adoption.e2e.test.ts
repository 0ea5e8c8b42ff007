// Adoption without downtime (#19) on the lab's real Deployment, ReplicaSet and EndpointSlice controllers: a region with
// `adopt` takes over the pods of a running Deployment (or bare ReplicaSet). The agent runs as the rendered install's
// ServiceAccount under its admission policies, with the install's adoption freeze policy in force. A watch of the
// namespace's pods and of the Service's EndpointSlices from before the ExtendedDeployment is applied records every
// pod created and deleted and the fewest Ready pods and ready endpoints at any event. What must hold: the original
// pods (by uid) end under the region's ReplicaSet with the same containers (no restart), no pod is deleted, the Ready
// count and the endpoints never drop below the count, and the old workload ends at 0 replicas with no pods.
import { DiscoveryV1Api, Watch, type KubernetesObject, type V1EndpointSlice, type V1Pod } from '@kubernetes/client-node';
import { afterAll, beforeAll, expect } from 'vitest';
import type { AdoptionStatus } from '../../core/api/extended-deployment.js';
import { ADOPTED_FROM_ANNOTATION, NAME_LABEL, REGION_LABEL, REVISION_LABEL } from '../../core/labels.js';
import type { RenderedExtendedDeployment } from '../../core/render.js';
import { adoptionFreeze, renderedIdentity } from './agent-identity.js';
import { AgentProcess } from './agent-process.js';
import { startApiProxy, type ApiProxy, type ProxiedRequest, type Verdict } from './api-proxy.js';
import { clients, podReady, serverSideApply, test, uniqueName, waitFor } from './helpers.js';
import {
  apply,
  deployRegions,
  edEvents,
  extendedDeployment,
  installCrds,
  readStatus,
  render,
  withRolloutEnv,
  type EdOptions,
  type RolloutEnv,
} from './rollout-kit.js';

let removeFreeze: (() => Promise<void>) | undefined;
beforeAll(async () => {
  removeFreeze = await adoptionFreeze(uniqueName('f').slice(2));
});
afterAll(async () => {
  await removeFreeze?.();
});

/** What a pod watch saw from its start: pods created and deleted, and the fewest Ready pods and ready endpoints. */
interface Trace {
  readonly created: string[];
  readonly deleted: string[];
  minReady: number;
  minEndpoints: number;
  stop(): void;
}

const isReady = (pod: V1Pod) => podReady(pod) && !pod.metadata?.deletionTimestamp;

/** Watches the namespace's pods (labelled app=web) and the EndpointSlices of Service web, from now on. */
async function trace(ns: string): Promise<Trace> {
  const { core, kc } = clients();
  const pods = await core.listNamespacedPod({ namespace: ns, labelSelector: 'app=web' });
  const live = new Map(pods.items.map((p) => [p.metadata?.uid ?? '', p]));
  // Listed first, and watched from the list: the Service's endpoints are often in more than one slice, and a watch
  // started without a version would add them up one ADDED event at a time (a minimum of 10 of 12 endpoints, once).
  const listed = await listSlices(ns);
  const slices = new Map(listed.items.map((slice) => [slice.metadata?.name ?? '', slice]));
  const result: Trace = {
    created: [],
    deleted: [],
    minReady: [...live.values()].filter(isReady).length,
    minEndpoints: readyEndpoints(slices.values()).size,
    stop: () => {},
  };
  const aborts: AbortController[] = [];
  const watch = new Watch(kc);
  aborts.push(
    await watch.watch(
      `/api/v1/namespaces/${ns}/pods`,
      { labelSelector: 'app=web', resourceVersion: pods.metadata?.resourceVersion },
      (phase: string, pod: V1Pod) => {
        const uid = pod.metadata?.uid ?? '';
        if (phase === 'ADDED' && !live.has(uid)) result.created.push(pod.metadata?.name ?? '');
        if (phase === 'DELETED') {
          result.deleted.push(pod.metadata?.name ?? '');
          live.delete(uid);
        } else live.set(uid, pod);
        result.minReady = Math.min(result.minReady, [...live.values()].filter(isReady).length);
      },
      () => {},
    ),
  );
  aborts.push(
    await watch.watch(
      `/apis/discovery.k8s.io/v1/namespaces/${ns}/endpointslices`,
      { labelSelector: 'kubernetes.io/service-name=web', resourceVersion: listed.metadata?.resourceVersion },
      (phase: string, slice: V1EndpointSlice) => {
        if (phase === 'DELETED') slices.delete(slice.metadata?.name ?? '');
        else slices.set(slice.metadata?.name ?? '', slice);
        result.minEndpoints = Math.min(result.minEndpoints, readyEndpoints(slices.values()).size);
      },
      () => {},
    ),
  );
  result.stop = () => aborts.forEach((a) => a.abort());
  return result;
}

/** Each pod's uid → its container's id and restart count: a restart or replacement changes one of them. */
async function containers(ns: string, selector: string): Promise<Record<string, string>> {
  const pods = (await clients().core.listNamespacedPod({ namespace: ns, labelSelector: selector })).items.filter((p) => !p.metadata?.deletionTimestamp);
  return Object.fromEntries(
    pods
      .map((p) => [p.metadata?.uid ?? '', `${p.status?.containerStatuses?.[0]?.containerID ?? '-'}#${p.status?.containerStatuses?.[0]?.restartCount ?? 0}`])
      .sort(),
  );
}

/** The pod template of a region's ReplicaSet as a workload of its own would have it: labelled app=web only. */
function plainTemplate(rendered: RenderedExtendedDeployment, labels: Record<string, string>): Record<string, unknown> {
  const template = structuredClone((rendered.regions[0]!.workload['spec'] as { template: Record<string, unknown> }).template);
  (template['metadata'] as { labels: Record<string, string> }).labels = labels;
  return template;
}

const service = (ns: string): KubernetesObject =>
  ({
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'web', namespace: ns },
    spec: { selector: { app: 'web' }, ports: [{ port: 80 }] },
  }) as KubernetesObject;

/** The EndpointSlices of Service web. */
function listSlices(ns: string) {
  return clients().kc.makeApiClient(DiscoveryV1Api).listNamespacedEndpointSlice({ namespace: ns, labelSelector: 'kubernetes.io/service-name=web' });
}

/** The pods (by uid) that the slices list as ready endpoints: a pod in two slices at once counts once. */
function readyEndpoints(slices: Iterable<V1EndpointSlice>): Set<string> {
  const uids = [...slices].flatMap((slice) => (slice.endpoints ?? []).filter((e) => e.conditions?.ready === true).map((e) => e.targetRef?.uid ?? ''));
  return new Set(uids);
}

/**
 * Waits until `count` Ready pods labelled `selector` exist, and the Service's endpoints show them: the EndpointSlice
 * controller follows the pods by its own watch, and a trace started before it caught up would count its lag (a minimum
 * of 4 of 5 endpoints in one CI run, with every pod Ready throughout).
 */
async function waitReady(ns: string, selector: string, count: number): Promise<void> {
  await waitFor(`${count} Ready pods ${selector} and ready endpoints of Service web`, async () => {
    const pods = (await clients().core.listNamespacedPod({ namespace: ns, labelSelector: selector })).items;
    if (pods.filter(isReady).length !== count || pods.length !== count) return false;
    const endpoints = readyEndpoints((await listSlices(ns)).items);
    return pods.every((p) => endpoints.has(p.metadata?.uid ?? ''));
  });
}

/** Waits until the first region's adoption is Adopted; returns its status entry. */
async function waitAdopted(ns: string, timeoutMs = 60_000): Promise<AdoptionStatus> {
  return waitFor(
    'the adoption to be done',
    async () => {
      const entry = (await readStatus(ns)).adoptions?.[0];
      return entry?.phase === 'Adopted' ? entry : undefined;
    },
    { timeoutMs, describe: () => readStatus(ns) },
  );
}

/** The Deployment `web` that runs today: `replicas` pods of the first region's rendered template, labelled app=web only. */
async function runningDeployment(ns: string, ed: RenderedExtendedDeployment, replicas: number): Promise<void> {
  await serverSideApply({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web', namespace: ns },
    spec: { replicas, selector: { matchLabels: { app: 'web' } }, template: plainTemplate(ed, { app: 'web' }) },
  } as KubernetesObject);
  await waitReady(ns, 'app=web', replicas);
}

/**
 * Until the API server's admission sees the ExtendedDeployment as the freeze policy's params: a pod of the adopting
 * region (a dry run) is refused. Its params come from an informer of the API server, which may lag the object by many
 * seconds (20 s in one run); a region's ReplicaSet synced before that makes Kubernetes' default pod, which is allowed.
 */
async function regionFrozen(ns: string, ed: RenderedExtendedDeployment): Promise<void> {
  const labels = { [NAME_LABEL]: 'web', [REGION_LABEL]: ed.regions[0]!.name };
  let answer = '';
  await waitFor(
    'the freeze refusing pods of the adopting region',
    async () => {
      try {
        await clients().core.createNamespacedPod({
          namespace: ns,
          dryRun: 'All',
          body: { metadata: { generateName: 'freeze-probe-', labels }, spec: { containers: [{ name: 'app', image: 'registry.example/web:1' }] } },
        });
        answer = 'allowed';
        return false;
      } catch (error) {
        answer = String((error as { body?: unknown }).body ?? error);
        return answer.includes('creates no pod until the region has adopted');
      }
    },
    { describe: async () => answer },
  );
}

/** The live pods the region's ReplicaSet controls, by uid. */
async function regionPods(ns: string, workload: string): Promise<V1Pod[]> {
  const pods = (await clients().core.listNamespacedPod({ namespace: ns })).items;
  return pods.filter((p) => !p.metadata?.deletionTimestamp && p.metadata?.ownerReferences?.some((r) => r.controller && r.name === workload));
}

test('adoption of a Deployment: the region takes its pods, none restarted, none created, Ready never below the count', async ({ ns }) => {
  await withRolloutEnv(ns, 'adoption', async (env: RolloutEnv) => {
    const options = (replicas: number): EdOptions => ({
      image: 'registry.example/web:1',
      replicas: [replicas],
      adopt: { a: { kind: 'Deployment', name: 'web' } },
    });
    const ed = env.render(options(5));
    const region = ed.regions[0]!;
    const workload = `web-${region.name}`;
    await serverSideApply(service(ns));
    // The Deployment that runs today, at the template the region renders (so its pods are at the region's revision).
    await runningDeployment(ns, ed, 5);
    const before = await containers(ns, 'app=web');
    const seen = await trace(ns);

    // Git adds the ExtendedDeployment and its ReplicaSet, the ReplicaSet once the freeze holds for its pods (else
    // Kubernetes' default pod of a ReplicaSet without a count may start first, which the agent keeps as capacity).
    await apply(ed, 'ed');
    await regionFrozen(ns, ed);
    const started = Date.now();
    await apply(ed, 'workloads');
    const adopted = await waitAdopted(ns);
    const took = Date.now() - started;
    const status = await waitFor('Healthy', async () => {
      const s = await readStatus(ns);
      return s.phase === 'Healthy' ? s : undefined;
    });
    seen.stop();

    expect(adopted).toEqual({ region: region.name, source: 'Deployment/web', phase: 'Adopted', moved: 5, message: '5 pods taken over from Deployment/web' });
    const pods = await regionPods(ns, workload);
    expect(Object.fromEntries(pods.map((p) => [p.metadata?.uid ?? '', true]))).toEqual(Object.fromEntries(Object.keys(before).map((uid) => [uid, true])));
    expect(await containers(ns, 'app=web')).toEqual(before);
    for (const pod of pods) {
      expect(pod.metadata?.labels).toMatchObject({ app: 'web', [NAME_LABEL]: 'web', [REGION_LABEL]: region.name, [REVISION_LABEL]: region.revision });
      expect(pod.metadata?.labels?.['pod-template-hash']).toBeUndefined();
      expect(pod.metadata?.annotations?.[ADOPTED_FROM_ANNOTATION]).toBe('Deployment/web');
    }
    expect({ created: seen.created, deleted: seen.deleted, minReady: seen.minReady, minEndpoints: seen.minEndpoints }).toEqual({
      created: [],
      deleted: [],
      minReady: 5,
      minEndpoints: 5,
    });
    // The pods run the region's revision: nothing to roll out.
    expect(status.regions?.[0]).toMatchObject({ desired: 5, current: 5, updated: 5, available: 5 });
    const deployment = await clients().apps.readNamespacedDeployment({ name: 'web', namespace: ns });
    expect(deployment.spec?.replicas).toBe(0);
    const oldSets = (await clients().apps.listNamespacedReplicaSet({ namespace: ns })).items.filter((rs) =>
      rs.metadata?.ownerReferences?.some((r) => r.kind === 'Deployment' && r.name === 'web'),
    );
    expect(oldSets.map((rs) => [rs.spec?.replicas, rs.status?.replicas])).toEqual([[0, 0]]);
    const reasons = (await edEvents(ns, { until: (events) => events.some((e) => e.reason === 'Adopted') })).map((e) => e.reason);
    expect(reasons).toEqual(expect.arrayContaining(['AdoptionStarted', 'Adopted']));
    console.log(`adoption of 5 pods from Deployment/web: ${took} ms from apply to Adopted`);

    // The freeze is lifted: the region's ReplicaSet makes pods again when Git raises its count, and deleting the old
    // Deployment (Git's last step) leaves them alone.
    await apply(env.render(options(6)));
    await waitReady(ns, `${NAME_LABEL}=web`, 6);
    await clients().apps.deleteNamespacedDeployment({ name: 'web', namespace: ns, propagationPolicy: 'Background' });
    await waitFor('the Deployment and its ReplicaSet gone', async () => (await clients().apps.listNamespacedReplicaSet({ namespace: ns })).items.length === 1);
    expect((await regionPods(ns, workload)).filter(isReady)).toHaveLength(6);
    expect(Object.keys(before).every((uid) => pods.some((p) => p.metadata?.uid === uid))).toBe(true);
  });
});

test('adoption of a bare ReplicaSet of another image, its workload synced first: originals kept until the rollout replaces them', async ({ ns }) => {
  await withRolloutEnv(ns, 'adoption-rs', async (env: RolloutEnv) => {
    const ed = env.render({ image: 'registry.example/web:2', replicas: [3], adopt: { a: { kind: 'ReplicaSet', name: 'web-v1' } } });
    const region = ed.regions[0]!;
    const workload = `web-${region.name}`;
    await serverSideApply(service(ns));
    const template = plainTemplate(ed, { app: 'web', release: 'v1' });
    const spec = (template['spec'] as { containers: { image: string }[] }).containers[0]!;
    spec.image = 'registry.example/web:1';
    await serverSideApply({
      apiVersion: 'apps/v1',
      kind: 'ReplicaSet',
      metadata: { name: 'web-v1', namespace: ns },
      spec: { replicas: 3, selector: { matchLabels: { app: 'web', release: 'v1' } }, template },
    } as KubernetesObject);
    await waitReady(ns, 'app=web', 3);
    const before = await containers(ns, 'app=web');
    const seen = await trace(ns);

    // Argo CD's order: the regional ReplicaSet (sync wave -1) before the ExtendedDeployment. Its first replica, which
    // Kubernetes gives a ReplicaSet without spec.replicas, is refused by the freeze (no ExtendedDeployment yet means no
    // params: allowed) or removed before any move while not Ready.
    await apply(ed, 'workloads');
    await apply(ed, 'ed');
    const adopted = await waitAdopted(ns);
    // The three originals, and the pod Kubernetes' default gave the region's ReplicaSet before the ExtendedDeployment
    // existed if it was Ready by the time the agent looked (capacity is kept); if not, it was removed before any move.
    expect([3, 4]).toContain(adopted.moved);
    const atAdoption = await regionPods(ns, workload);
    expect(atAdoption.filter((p) => (p.metadata?.uid ?? '') in before)).toHaveLength(3);
    // No original deleted (the region's own unready first pod may have been), Ready never below the count.
    const originalNames = (await regionPods(ns, workload)).filter((p) => (p.metadata?.uid ?? '') in before).map((p) => p.metadata?.name ?? '');
    expect(seen.deleted.filter((name) => originalNames.includes(name))).toEqual([]);
    expect(seen.minReady).toBe(3);

    // The adopted pods run another image than the region renders: the rollout replaces them group by group.
    await waitFor(
      'Healthy with every pod at registry.example/web:2',
      async () => {
        const s = await readStatus(ns);
        const pods = await regionPods(ns, workload);
        return s.phase === 'Healthy' && pods.length === 3 && pods.every((p) => p.spec?.containers[0]?.image === 'registry.example/web:2');
      },
      { timeoutMs: 120_000 },
    );
    seen.stop();
    expect(seen.minReady).toBeGreaterThanOrEqual(2);
    const old = await clients().apps.readNamespacedReplicaSet({ name: 'web-v1', namespace: ns });
    expect([old.spec?.replicas, old.status?.replicas]).toEqual([0, 0]);
    // At most the one pod Kubernetes' default gave the region's ReplicaSet before the ExtendedDeployment existed, then
    // the rollout's 3 replacements.
    expect(seen.created.length).toBeLessThanOrEqual(4);
  });
});

/**
 * The upstream operator's InplaceSet CRD, as far as the API server needs it for this test (its schema is preserved
 * unknown fields here): group, names, and the status and scale subresources it declares
 * (../shared/reference/upstream-extended-deployment.md §1.3). No controller of it runs: the operator is uninstalled
 * before a migration (docs/migrating-from-upstream.md).
 */
const UPSTREAM_INPLACESET_CRD = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'inplacesets.extendeddeployment.io' },
  spec: {
    group: 'extendeddeployment.io',
    scope: 'Namespaced',
    names: { kind: 'InplaceSet', listKind: 'InplaceSetList', plural: 'inplacesets', singular: 'inplaceset', shortNames: ['ips', 'is'] },
    versions: [
      {
        name: 'v1beta1',
        served: true,
        storage: true,
        schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
        subresources: {
          status: {},
          scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas', labelSelectorPath: '.status.labelSelector' },
        },
      },
    ],
  },
} as KubernetesObject;

test("adoption of the upstream operator's InplaceSet: its pods move, it ends at 0 replicas", async ({ ns }) => {
  await serverSideApply(UPSTREAM_INPLACESET_CRD);
  try {
    await waitFor('InplaceSet served', async () => (await clients().objects.resourceFor('extendeddeployment.io/v1beta1', 'InplaceSet')) !== undefined);
    await withRolloutEnv(ns, 'adoption-ips', async (env: RolloutEnv) => {
      const ed = env.render({ image: 'registry.example/web:1', replicas: [3], adopt: { a: { kind: 'InplaceSet', name: 'web-a-old' } } });
      const region = ed.regions[0]!;
      await serverSideApply(service(ns));
      const template = plainTemplate(ed, { app: 'web' }) as { metadata: Record<string, unknown>; spec: Record<string, unknown> };
      const set = await serverSideApply({
        apiVersion: 'extendeddeployment.io/v1beta1',
        kind: 'InplaceSet',
        metadata: { name: 'web-a-old', namespace: ns },
        spec: { replicas: 3, selector: { matchLabels: { app: 'web' } }, template },
      } as KubernetesObject);
      // Its pods, as the operator made them: controlled by the InplaceSet.
      for (const i of [0, 1, 2]) {
        await clients().core.createNamespacedPod({
          namespace: ns,
          body: {
            metadata: {
              name: `web-a-old-${i}`,
              labels: { app: 'web' },
              ownerReferences: [
                { apiVersion: 'extendeddeployment.io/v1beta1', kind: 'InplaceSet', name: 'web-a-old', uid: set.metadata?.uid ?? '', controller: true },
              ],
            },
            spec: template.spec as unknown as V1Pod['spec'],
          },
        });
      }
      await waitReady(ns, 'app=web', 3);
      const before = await containers(ns, 'app=web');
      const seen = await trace(ns);

      await apply(ed);
      const adopted = await waitAdopted(ns);
      await waitFor('Healthy', async () => (await readStatus(ns)).phase === 'Healthy');
      seen.stop();
      expect(adopted).toMatchObject({ source: 'InplaceSet/web-a-old', moved: 3 });
      const pods = await regionPods(ns, `web-${region.name}`);
      expect(pods.map((p) => p.metadata?.uid).sort()).toEqual(Object.keys(before).sort());
      expect(await containers(ns, 'app=web')).toEqual(before);
      expect({ created: seen.created, deleted: seen.deleted, minReady: seen.minReady }).toEqual({ created: [], deleted: [], minReady: 3 });
      const after = await clients().objects.read<KubernetesObject & { spec: { replicas: number } }>({
        apiVersion: 'extendeddeployment.io/v1beta1',
        kind: 'InplaceSet',
        metadata: { name: 'web-a-old', namespace: ns },
      });
      expect(after.spec.replicas).toBe(0);
    });
  } finally {
    await clients()
      .objects.delete(UPSTREAM_INPLACESET_CRD)
      .catch(() => undefined);
  }
});

test(
  'adoption with the agent killed (kill -9) in the middle of a step and right before it scales the Deployment down: nothing lost',
  { timeout: 300_000 },
  async ({ ns }) => {
    await installCrds();
    const suffix = uniqueName('k').slice(2);
    const regions = deployRegions(suffix);
    for (const region of regions) await serverSideApply(region);
    const account = await renderedIdentity(ns, suffix);
    const agents: AgentProcess[] = [];
    let proxy: ApiProxy | undefined;
    try {
      const ed = render([
        ...regions,
        extendedDeployment(ns, suffix, { image: 'registry.example/web:1', replicas: [12], adopt: { a: { kind: 'Deployment', name: 'web' } } }),
      ]);
      await serverSideApply(service(ns));
      await runningDeployment(ns, ed, 12);
      const before = await containers(ns, 'app=web');
      const seen = await trace(ns);

      // Two kills, each dropping the write it interrupts: the third pod move of the first step (the region raised to 10,
      // two pods moved, eight not), then the first scale-down of the Deployment (ten pods moved, its count still 12).
      const pods = `/api/v1/namespaces/${ns}/pods/`;
      let moves = 0;
      const traps: ((r: ProxiedRequest) => boolean)[] = [
        (r) => r.method === 'PATCH' && r.path.startsWith(pods) && ++moves === 3,
        (r) => r.method === 'PATCH' && r.path.split('?')[0] === `/apis/apps/v1/namespaces/${ns}/deployments/web/scale`,
      ];
      const kills: string[] = [];
      const start = () => {
        agents.push(
          new AgentProcess({
            kubeconfig: account.kubeconfigFile(proxy?.kubeconfig),
            identity: `adopt-${agents.length + 1}`,
            namespace: ns,
            leaseNamespace: ns,
            leaseDurationSeconds: 4,
          }),
        );
      };
      const onRequest = (r: ProxiedRequest): Verdict => {
        const agent = agents.at(-1);
        if (!agent?.alive() || !traps[0]?.(r)) return 'forward';
        traps.shift();
        kills.push(`${r.method} ${r.path.split('?')[0]?.replace(`/namespaces/${ns}`, '')}`);
        agent.killHard();
        void agent.exited.then(start);
        return 'drop';
      };
      proxy = await startApiProxy(ns, onRequest);

      // The region's ReplicaSet only once the freeze holds for it: the 12 pods moved are then the region's only pods.
      await apply(ed, 'ed');
      await regionFrozen(ns, ed);
      await apply(ed, 'workloads');
      start();
      const adopted = await waitAdopted(ns, 180_000);
      seen.stop();
      console.log(`adoption of 12 pods with ${kills.length} kills (${kills.join('; ')}), ${agents.length} agents`);
      expect(kills).toHaveLength(2);
      expect(adopted.moved).toBe(12);
      const region = ed.regions[0]!;
      const adoptedPods = await regionPods(ns, `web-${region.name}`);
      expect(adoptedPods.map((p) => p.metadata?.uid).sort()).toEqual(Object.keys(before).sort());
      expect(await containers(ns, 'app=web')).toEqual(before);
      expect({ created: seen.created, deleted: seen.deleted, minReady: seen.minReady, minEndpoints: seen.minEndpoints }).toEqual({
        created: [],
        deleted: [],
        minReady: 12,
        minEndpoints: 12,
      });
      expect((await clients().apps.readNamespacedDeployment({ name: 'web', namespace: ns })).spec?.replicas).toBe(0);
    } finally {
      for (const agent of agents) agent.killHard();
      await proxy?.close();
      await account.remove();
      for (const region of regions)
        await clients()
          .objects.delete(region)
          .catch(() => undefined);
    }
  },
);
