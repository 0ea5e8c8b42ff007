/**
 * A bench fleet on the lab: N identical ExtendedDeployments × R regions × P pods on the run's bench nodes (rendered by
 * core, applied as a GitOps tool would), and an observer that follows their pods, ReplicaSets and statuses by watch.
 */
import type { KubernetesObject, V1Pod, V1ReplicaSet } from '@kubernetes/client-node';
import { NAME_LABEL, REGION_LABEL, REVISION_LABEL } from '../core/labels.js';
import { renderSet, type RenderedExtendedDeployment } from '../core/render.js';
import { Api, BENCH_LABEL, GROUP, VERSION, listWatch, log, pool, sleep, type EventType } from './lab-kit.js';

/** The shape of a fleet: every ExtendedDeployment alike. */
/** The flags of a {@link FleetShape} (--eds, --regions, --replicas, --batch), for benchFlags; each bench has its defaults. */
export const FLEET_SHAPE_FLAGS = {
  eds: { type: 'string' },
  regions: { type: 'string' },
  replicas: { type: 'string' },
  batch: { type: 'string' },
} as const;

export interface FleetShape {
  readonly eds: number;
  readonly regions: number;
  /** Pods per region. */
  readonly replicas: number;
  /** Beta batch (and surge). */
  readonly batch: number;
  readonly minReadySeconds: number;
}

export function fleetObjects(runId: string, ns: string, o: FleetShape, image: string): { regions: KubernetesObject[]; eds: RenderedExtendedDeployment[] } {
  const regions = Array.from({ length: o.regions }, (_, i) => ({
    apiVersion: `${GROUP}/${VERSION}`,
    kind: 'DeployRegion',
    metadata: { name: `bench-${runId}-r${i + 1}` },
    spec: { matchLabels: { [BENCH_LABEL]: runId, 'topology.kubernetes.io/zone': `bench-zone-${i + 1}` } },
  }));
  const eds = Array.from({ length: o.eds }, (_, i) => ({
    apiVersion: `${GROUP}/${VERSION}`,
    kind: 'ExtendedDeployment',
    metadata: { name: `app-${String(i).padStart(3, '0')}`, namespace: ns },
    spec: {
      replicas: o.replicas * o.regions,
      selector: { matchLabels: { app: `app-${i}` } },
      template: {
        metadata: { labels: { app: `app-${i}` } },
        spec: {
          terminationGracePeriodSeconds: 0,
          tolerations: [{ key: BENCH_LABEL, operator: 'Exists', effect: 'NoSchedule' }],
          containers: [{ name: 'app', image, resources: { requests: { cpu: '10m', memory: '16Mi' } } }],
        },
      },
      regions: regions.map((r) => ({ name: r.metadata.name, replicas: o.replicas })),
      strategy: { rolloutStrategy: 'Beta', batchSize: o.batch, minReadySeconds: o.minReadySeconds, needWaitingForConfirm: false },
    },
  }));
  const result = renderSet([...regions, ...eds]);
  if (!result.ok) throw new Error(`render failed: ${JSON.stringify(result.problems).slice(0, 1000)}`);
  return { regions, eds: [...result.value.extendedDeployments] };
}

export async function applyFleet(api: Api, eds: readonly RenderedExtendedDeployment[]): Promise<void> {
  await pool(eds, 6, async (ed) => {
    await api.apply(ed.manifest, 'extendeddeployments', true);
    for (const region of ed.regions) await api.apply(region.workload, 'replicasets', true);
  });
}

export interface PodSeen {
  name: string;
  ed: string;
  region: string;
  revision: string;
  readyAt?: number;
  /** Ready's lastTransitionTime (ms) when first seen Ready. */
  readyLtt?: number;
  /** resourceVersion of the update that showed it Ready first. */
  readyRv?: number;
  terminating: boolean;
}

/** When a pod was first seen terminating (deletionTimestamp, or gone): kept after the pod is deleted. */
export interface GoneSeen {
  ed: string;
  region: string;
  revision: string;
  at: number;
}

export interface StatusSeen {
  at: number;
  rv: number;
  revision: string | undefined;
  group: number;
  phase: string | undefined;
  /** status.lastGroupStartTime (ms, the agent's clock when it decided to start the group); NaN when unset. */
  groupStart: number;
}

export interface ScaleSeen {
  at: number;
  rv: number;
  from: number;
  to: number;
}

/** The part of an ExtendedDeployment the observer reads. */
interface ObservedEd extends KubernetesObject {
  status?: { revision?: string; currentGroup?: number; phase?: string; lastGroupStartTime?: string };
}

export class Observer {
  readonly pods = new Map<string, PodSeen>();
  /** Pod uid → when it was first seen terminating. */
  readonly gone = new Map<string, GoneSeen>();
  readonly statuses = new Map<string, StatusSeen[]>();
  readonly lastStatus = new Map<string, StatusSeen>();
  /** ReplicaSet name → spec.replicas changes. */
  readonly scales = new Map<string, ScaleSeen[]>();
  private readonly replicas = new Map<string, number>();
  private readonly watches: { synced: Promise<void>; stop: () => void }[] = [];

  constructor(api: Api, ns: string) {
    const selector = encodeURIComponent(NAME_LABEL);
    this.watches.push(
      listWatch<V1Pod>(api, `/api/v1/namespaces/${ns}/pods?labelSelector=${selector}`, (type, pod, at) => this.onPod(type, pod, at)),
      listWatch<V1ReplicaSet>(api, `/apis/apps/v1/namespaces/${ns}/replicasets?labelSelector=${selector}`, (type, rs, at) => this.onReplicaSet(type, rs, at)),
      listWatch<ObservedEd>(api, `/apis/${GROUP}/${VERSION}/namespaces/${ns}/extendeddeployments`, (type, ed, at) => this.onEd(type, ed, at)),
    );
  }

  synced(): Promise<void> {
    return Promise.all(this.watches.map((w) => w.synced)).then(() => undefined);
  }

  stop(): void {
    for (const w of this.watches) w.stop();
  }

  private onPod(type: EventType, pod: V1Pod, at: number): void {
    const uid = pod.metadata!.uid!;
    const labels = pod.metadata!.labels ?? {};
    const [ed = '', region = '', revision = ''] = [labels[NAME_LABEL], labels[REGION_LABEL], labels[REVISION_LABEL]];
    if ((type === 'DELETED' || pod.metadata!.deletionTimestamp) && !this.gone.has(uid)) {
      this.gone.set(uid, { ed, region, revision, at });
    }
    if (type === 'DELETED') {
      this.pods.delete(uid);
      return;
    }
    let seen = this.pods.get(uid);
    if (!seen) {
      seen = { name: pod.metadata!.name!, ed, region, revision, terminating: false };
      this.pods.set(uid, seen);
    }
    seen.terminating = !!pod.metadata!.deletionTimestamp;
    const ready = (pod.status?.conditions ?? []).find((c) => c.type === 'Ready');
    if (ready?.status === 'True' && seen.readyAt === undefined) {
      seen.readyAt = at;
      seen.readyLtt = ready.lastTransitionTime === undefined ? NaN : new Date(ready.lastTransitionTime).getTime();
      seen.readyRv = Number(pod.metadata!.resourceVersion);
    }
  }

  private onReplicaSet(type: EventType, rs: V1ReplicaSet, at: number): void {
    const name = rs.metadata!.name!;
    if (type === 'DELETED') return;
    const to = rs.spec?.replicas ?? 1;
    const from = this.replicas.get(name);
    this.replicas.set(name, to);
    if (from === undefined || from === to) return;
    const list = this.scales.get(name) ?? [];
    list.push({ at, rv: Number(rs.metadata!.resourceVersion), from, to });
    this.scales.set(name, list);
  }

  private onEd(type: EventType, ed: ObservedEd, at: number): void {
    if (type === 'DELETED') return;
    const s = ed.status ?? {};
    const name = ed.metadata!.name!;
    const seen: StatusSeen = {
      at,
      rv: Number(ed.metadata!.resourceVersion),
      revision: s.revision,
      group: s.currentGroup ?? 0,
      phase: s.phase,
      groupStart: Date.parse(s.lastGroupStartTime ?? ''),
    };
    const list = this.statuses.get(name) ?? [];
    list.push(seen);
    this.statuses.set(name, list);
    this.lastStatus.set(name, seen);
  }

  /** What the ExtendedDeployments that are not done show: status and pods by region, revision and state. */
  notDone(eds: readonly RenderedExtendedDeployment[]): string[] {
    const out: string[] = [];
    for (const ed of eds) {
      const name = ed.parsed.metadata.name;
      const targets = new Map(ed.regions.map((r) => [r.name, r.revision]));
      const pods = [...this.pods.values()].filter((p) => p.ed === name);
      const st = this.lastStatus.get(name);
      const fresh = pods.filter((p) => !p.terminating && p.revision === targets.get(p.region) && p.readyAt !== undefined).length;
      if (st?.phase === 'Healthy' && st.revision === ed.rolloutRevision && fresh === ed.replicas && pods.length === ed.replicas) continue;
      const desc = pods.map(
        (p) =>
          `${p.region.slice(-2)}:${p.revision === targets.get(p.region) ? 'new' : 'old'}${p.terminating ? ':terminating' : ''}${p.readyAt ? '' : ':notReady'}`,
      );
      out.push(`${name} ${st?.phase}/${st?.group} [${desc.filter((d) => !d.endsWith(':new')).join(',')}]`);
    }
    return out;
  }

  /** EDs Healthy at `revision` whose pods are exactly the desired count, all at their region's target and Ready. */
  progress(eds: readonly RenderedExtendedDeployment[]): { healthy: number; done: number; pods: number; readyNew: number; terminating: number } {
    const perEd = new Map<string, PodSeen[]>();
    let terminating = 0;
    for (const p of this.pods.values()) {
      if (p.terminating) terminating++;
      const list = perEd.get(p.ed) ?? [];
      list.push(p);
      perEd.set(p.ed, list);
    }
    let healthy = 0;
    let done = 0;
    let readyNew = 0;
    for (const ed of eds) {
      const name = ed.parsed.metadata.name;
      const targets = new Map(ed.regions.map((r) => [r.name, r.revision]));
      const pods = perEd.get(name) ?? [];
      const fresh = pods.filter((p) => !p.terminating && p.revision === targets.get(p.region) && p.readyAt !== undefined).length;
      readyNew += fresh;
      const st = this.lastStatus.get(name);
      const isHealthy = st?.phase === 'Healthy' && st.revision === ed.rolloutRevision;
      if (isHealthy) healthy++;
      if (isHealthy && fresh === ed.replicas && pods.length === ed.replicas) done++;
    }
    return { healthy, done, pods: this.pods.size, readyNew, terminating };
  }
}

/** Waits until every ExtendedDeployment of `eds` is done; logs progress. Returns false on timeout. */
export async function waitFleet(observer: Observer, eds: readonly RenderedExtendedDeployment[], what: string, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  let lastLog = 0;
  for (;;) {
    const p = observer.progress(eds);
    if (p.done === eds.length && p.terminating === 0) {
      log(`${what}: all ${eds.length} done (${p.pods} pods)`);
      return true;
    }
    if (Date.now() - lastLog > 15_000) {
      log(`${what}: ${p.done}/${eds.length} done, ${p.healthy} Healthy; ${p.readyNew} pods Ready at the target, ${p.pods} pods, ${p.terminating} terminating`);
      lastLog = Date.now();
    }
    if (Date.now() > deadline) {
      log(`${what}: timed out; not done: ${observer.notDone(eds).slice(0, 5).join(' | ')}`);
      return false;
    }
    await sleep(500);
  }
}
