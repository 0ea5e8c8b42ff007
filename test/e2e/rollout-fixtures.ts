// Shared pieces of the agent end-to-end suites that run the agent as a child process: CRDs, per-test DeployRegions on
// the lab's general nodes, rendering with core's renderSet, applying like a GitOps tool, and watching objects.
import { Watch, type KubernetesObject, type V1Pod } from '@kubernetes/client-node';
import type { ExtendedDeploymentStatus } from '../../core/api/extended-deployment.js';
import { NAME_LABEL, REGION_LABEL, REVISION_LABEL } from '../../core/labels.js';
import { renderSet, type RenderedExtendedDeployment } from '../../core/render.js';
import { clients, rawRequest, serverSideApply, waitFor } from './helpers.js';

export const GROUP = 'extendeddeployment.io';
export const VERSION = 'v1beta1';

export { installCrds } from './crds.js';

/** Three regions on the lab's general-pool nodes (zone-a amd64, zone-b amd64, arm64), named per test. */
export function threeRegions(suffix: string): KubernetesObject[] {
  const region = (name: string, matchLabels: Record<string, string>) => ({
    apiVersion: `${GROUP}/${VERSION}`,
    kind: 'DeployRegion',
    metadata: { name: `${name}-${suffix}` },
    spec: { matchLabels: { 'extendeddeployment.io/pool': 'general', ...matchLabels } },
  });
  return [
    region('za', { 'kubernetes.io/arch': 'amd64', 'topology.kubernetes.io/zone': 'zone-a' }),
    region('zb', { 'kubernetes.io/arch': 'amd64', 'topology.kubernetes.io/zone': 'zone-b' }),
    region('arm', { 'kubernetes.io/arch': 'arm64' }),
  ];
}

/** An ExtendedDeployment `web` over the regions with the given replicas each; Beta, batch 1, minReadySeconds 1, no gates. */
export function extendedDeployment(ns: string, regions: readonly KubernetesObject[], replicas: readonly number[], image: string): KubernetesObject {
  return {
    apiVersion: `${GROUP}/${VERSION}`,
    kind: 'ExtendedDeployment',
    metadata: { name: 'web', namespace: ns },
    spec: {
      replicas: replicas.reduce((a, b) => a + b, 0),
      selector: { matchLabels: { app: 'web' } },
      template: {
        metadata: { labels: { app: 'web' } },
        spec: { terminationGracePeriodSeconds: 0, containers: [{ name: 'app', image, resources: { requests: { cpu: '10m', memory: '16Mi' } } }] },
      },
      regions: regions.map((r, i) => ({ name: r.metadata!.name!, replicas: replicas[i] })),
      strategy: { minReadySeconds: 1, batchSize: 1, rolloutStrategy: 'Beta', needWaitingForConfirm: false },
    },
  } as KubernetesObject;
}

export function render(objects: unknown[]): RenderedExtendedDeployment {
  const result = renderSet(objects);
  if (!result.ok) throw new Error(`render failed: ${JSON.stringify(result.problems)}`);
  const [ed] = result.value.extendedDeployments;
  if (!ed) throw new Error('nothing rendered');
  return ed;
}

/** Applies the rendered ExtendedDeployment and its ReplicaSets as a GitOps tool would. */
export async function apply(ed: RenderedExtendedDeployment): Promise<void> {
  await serverSideApply(ed.manifest as KubernetesObject);
  for (const region of ed.regions) await serverSideApply(region.workload as KubernetesObject);
}

export async function readStatus(ns: string, name = 'web'): Promise<ExtendedDeploymentStatus> {
  const ed = (await clients().objects.read({ apiVersion: `${GROUP}/${VERSION}`, kind: 'ExtendedDeployment', metadata: { name, namespace: ns } })) as {
    status?: ExtendedDeploymentStatus;
  };
  return ed.status ?? {};
}

/** Pods per region: live ones at the rendered revision, live ones at another, and terminating ones. */
export async function podCounts(
  ns: string,
  rendered: RenderedExtendedDeployment,
): Promise<{ name: string; updated: number; old: number; terminating: number }[]> {
  const pods = (await clients().core.listNamespacedPod({ namespace: ns, labelSelector: `${NAME_LABEL}=${rendered.parsed.metadata.name}` })).items;
  return rendered.regions.map((r) => {
    const mine = pods.filter((p) => p.metadata?.labels?.[REGION_LABEL] === r.name);
    const live = mine.filter((p) => !p.metadata?.deletionTimestamp);
    const updated = live.filter((p) => p.metadata?.labels?.[REVISION_LABEL] === r.revision).length;
    return { name: r.name, updated, old: live.length - updated, terminating: mine.length - live.length };
  });
}

/** Waits until the rollout to `rendered` is Healthy with exactly the desired pods per region, all at their revision. */
export async function waitRolledOut(ns: string, rendered: RenderedExtendedDeployment, timeoutMs = 240_000): Promise<ExtendedDeploymentStatus> {
  return waitFor(
    `rollout ${rendered.rolloutRevision} Healthy with every pod at its region's revision`,
    async () => {
      const status = await readStatus(ns);
      if (status.phase !== 'Healthy' || status.revision !== rendered.rolloutRevision) return undefined;
      const counts = await podCounts(ns, rendered);
      const exact = counts.every((c, i) => c.updated === rendered.regions[i]!.replicas && c.old === 0 && c.terminating === 0);
      return exact ? status : undefined;
    },
    { timeoutMs, intervalMs: 500, describe: async () => ({ status: await readStatus(ns), pods: await podCounts(ns, rendered) }) },
  );
}

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED';

/**
 * List, then watch from the list's resourceVersion, again and again until stopped (a watch that ends or fails is
 * re-listed; a re-list reports every object as ADDED again, and objects gone meanwhile as DELETED).
 * `onEvent` sees every object state in order; `receivedAt` is the local time the event arrived.
 */
export function listWatch<T extends KubernetesObject>(
  path: string,
  onEvent: (type: WatchEventType, object: T, receivedAt: number) => void,
): { synced: Promise<void>; stop: () => void } {
  let stopped = false;
  let controller: AbortController | undefined;
  let markSynced: () => void = () => undefined;
  const synced = new Promise<void>((resolve) => (markSynced = resolve));
  const known = new Map<string, T>();
  const loop = async (): Promise<void> => {
    while (!stopped) {
      try {
        const list = (await rawRequest('GET', path)) as { metadata: { resourceVersion: string }; items: T[] };
        const now = Date.now();
        // A re-list replaces what was known: objects gone meanwhile are reported DELETED.
        const listed = new Set(list.items.map((item) => item.metadata?.uid ?? ''));
        for (const [uid, object] of known) if (!listed.has(uid)) onEvent('DELETED', object, now);
        known.clear();
        for (const item of list.items) {
          known.set(item.metadata?.uid ?? '', item);
          onEvent('ADDED', item, now);
        }
        markSynced();
        await new Promise<void>((resolve) => {
          void new Watch(clients().kc)
            .watch(
              path,
              { resourceVersion: list.metadata.resourceVersion, allowWatchBookmarks: true },
              (type: string, object: T) => {
                if (type !== 'ADDED' && type !== 'MODIFIED' && type !== 'DELETED') return;
                if (type === 'DELETED') known.delete(object.metadata?.uid ?? '');
                else known.set(object.metadata?.uid ?? '', object);
                onEvent(type, object, Date.now());
              },
              () => resolve(),
            )
            .then(
              (c) => {
                controller = c;
                if (stopped) c.abort();
              },
              () => resolve(),
            );
        });
      } catch {
        await new Promise((r) => setTimeout(r, 500));
      }
    }
  };
  void loop();
  return {
    synced,
    stop: () => {
      stopped = true;
      controller?.abort();
    },
  };
}

/** A pod's region and revision labels. */
export function podLabels(pod: V1Pod): { region: string; revision: string } {
  return { region: pod.metadata?.labels?.[REGION_LABEL] ?? '', revision: pod.metadata?.labels?.[REVISION_LABEL] ?? '' };
}

/** Best-effort cleanup of cluster-scoped objects. */
export async function deleteAll(objects: readonly KubernetesObject[]): Promise<void> {
  for (const o of objects) {
    try {
      await clients().objects.delete(o);
    } catch {
      // already gone
    }
  }
}
