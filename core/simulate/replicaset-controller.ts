/**
 * The ReplicaSet controller of the simulated cluster: keeps spec.replicas pods, creating them from the template and
 * removing the surplus in the real controller's order, and reports its pods in status.
 */
import { timestampMs, type PodObject } from '../kube/objects.js';
import { POD_DELETION_COST_ANNOTATION } from '../labels.js';
import { isPodActive, isPodTerminating } from '../rollout/pod-activity.js';
import { isTarget, ownedBy, replaced, serialOf, written, type Cluster, type Setting, type SimPod, type SimWorkload } from './cluster.js';
import { cohortSize, edgeSerials, materialize } from './cohorts.js';
import { createdPod, deletedPod } from './kubelet.js';

const life = (pod: PodObject) => ({ phase: pod.status?.phase, terminating: pod.metadata?.deletionTimestamp !== undefined });
const readySince = (pod: PodObject) => {
  const ready = pod.status?.conditions?.find((c) => c.type === 'Ready');
  return ready?.status === 'True' ? timestampMs(ready.lastTransitionTime) : undefined;
};

/**
 * The controller's removal rank of a pod, lowest removed first (controller.ActivePods as far as the simulation has
 * pods): not bound before bound, not running before running, not Ready before Ready, lower pod-deletion-cost first;
 * among equals the newest first. Pods are named by a counter, so the name orders them by creation.
 */
function rank(pod: PodObject): number[] {
  const cost = Number(pod.metadata?.annotations?.[POD_DELETION_COST_ANNOTATION] ?? '0');
  return [pod.spec?.nodeName ? 1 : 0, pod.status?.phase === 'Running' ? 1 : 0, readySince(pod) === undefined ? 0 : 1, Number.isFinite(cost) ? cost : 0];
}

const byRank = (a: { rank: number[]; serial: number }, b: { rank: number[]; serial: number }): number => {
  for (let i = 0; i < a.rank.length; i++) if (a.rank[i] !== b.rank[i]) return (a.rank[i] ?? 0) - (b.rank[i] ?? 0);
  return b.serial - a.serial;
};

/** One round of the controller for the ReplicaSet at `index`: the same cluster when it has nothing to do. */
export function reconcileReplicaSet(cluster: Cluster, index: number, setting: Setting): Cluster {
  const rs = cluster.replicaSets[index] as SimWorkload;
  const owned = cluster.pods.filter((p) => ownedBy(p.object, rs));
  const cohorts = cluster.cohorts.map((c, i) => ({ c, i })).filter(({ c }) => ownedBy(c.pod, rs));
  const active = owned.filter((p) => isPodActive(life(p.object)));
  const settled = cohorts.reduce((n, { c }) => n + cohortSize(c), 0);
  const diff = active.length + settled - (rs.spec?.replicas ?? 1);
  let next = cluster;
  if (diff < 0) {
    const name = rs.metadata?.name ?? '';
    const serial = cluster.serials[name] ?? 0;
    const created = Array.from({ length: -diff }, (_, k) => createdPod(rs, serial + k, cluster.now));
    next = {
      ...cluster,
      pods: [...cluster.pods, ...created].sort((a, b) => ((a.object.metadata?.name ?? '') < (b.object.metadata?.name ?? '') ? -1 : 1)),
      serials: { ...cluster.serials, [name]: serial + created.length },
      writes: cluster.writes + 1,
      tally: { ...cluster.tally, podsCreated: cluster.tally.podsCreated + created.length },
    };
  } else if (diff > 0) next = removeSurplus(cluster, rs, diff, active, cohorts, setting);
  return withStatus(next, index);
}

/** Removes `count` pods of the ReplicaSet, the lowest-ranked first; members of cohorts are taken out first. */
function removeSurplus(
  cluster: Cluster,
  rs: SimWorkload,
  count: number,
  active: readonly SimPod[],
  cohorts: readonly { c: Cluster['cohorts'][number]; i: number }[],
  setting: Setting,
): Cluster {
  const candidates = [
    ...active.map((p) => ({ rank: rank(p.object), serial: serialOf(p.object.metadata?.name ?? ''), cohort: -1 })),
    ...cohorts.flatMap(({ c, i }) => edgeSerials(c, count, true).map((serial) => ({ rank: rank(c.pod), serial, cohort: i }))),
  ]
    .sort(byRank)
    .slice(0, count);
  const picks = new Map<number, number[]>();
  for (const v of candidates.filter((x) => x.cohort >= 0)) picks.set(v.cohort, [...(picks.get(v.cohort) ?? []), v.serial]);
  const listed = materialize(cluster, picks);
  const victims = new Set(candidates.map((v) => v.serial));
  let removedNew = 0;
  const pods = listed.pods.map((p) => {
    if (!ownedBy(p.object, rs) || !victims.has(serialOf(p.object.metadata?.name ?? '')) || !isPodActive(life(p.object))) return p;
    if (isTarget(setting, p.object)) removedNew++;
    return deletedPod(p, cluster.now);
  });
  return { ...listed, pods, writes: listed.writes + 1, tally: { ...listed.tally, newPodsRemoved: listed.tally.newPodsRemoved + removedNew } };
}

/** The ReplicaSet's status as its controller reports it: pods by readiness and availability, and those terminating. */
function withStatus(cluster: Cluster, index: number): Cluster {
  const rs = cluster.replicaSets[index] as SimWorkload;
  const minReadyMs = (rs.spec?.minReadySeconds ?? 0) * 1000;
  const owned = cluster.pods.filter((p) => ownedBy(p.object, rs)).map((p) => p.object);
  const active = owned.filter((p) => isPodActive(life(p)));
  const settled = cluster.cohorts.filter((c) => ownedBy(c.pod, rs)).reduce((n, c) => n + cohortSize(c), 0);
  const status = {
    observedGeneration: rs.metadata?.generation ?? 0,
    replicas: active.length + settled,
    readyReplicas: active.filter((p) => readySince(p) !== undefined).length + settled,
    availableReplicas: active.filter((p) => (readySince(p) ?? Number.POSITIVE_INFINITY) + minReadyMs <= cluster.now).length + settled,
    terminatingReplicas: owned.filter((p) => isPodTerminating(life(p))).length,
  };
  const old = rs.status ?? {};
  if (Object.entries(status).every(([k, v]) => old[k as keyof typeof old] === v)) return cluster;
  return { ...cluster, replicaSets: replaced(cluster.replicaSets, index, written(rs, { status })), writes: cluster.writes + 1 };
}

/** When a pod of any ReplicaSet becomes available (Ready for minReadySeconds): its controller reports it then. */
export function availabilityInstants(cluster: Cluster): number[] {
  return cluster.replicaSets.flatMap((rs) => {
    const minReadyMs = (rs.spec?.minReadySeconds ?? 0) * 1000;
    if (minReadyMs === 0) return [];
    return cluster.pods
      .filter((p) => ownedBy(p.object, rs) && isPodActive(life(p.object)))
      .flatMap((p) => {
        const since = readySince(p.object);
        return since !== undefined && since + minReadyMs > cluster.now ? [since + minReadyMs] : [];
      });
  });
}
