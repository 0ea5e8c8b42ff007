/**
 * The StatefulSet controller of the simulated cluster (subsetType StatefulSet), after Kubernetes'
 * pkg/controller/statefulset (stateful_set_control.go updateStatefulSet, stateful_set_utils.go) with the
 * MaxUnavailableStatefulSet gate off, its default: pods named `<statefulset>-<ordinal>` for ordinals 0..replicas-1;
 * OrderedReady creates the lowest missing ordinal only once every lower one is Running, Ready and available, and
 * removes surplus pods from the highest ordinal down, one at a time, each once the one before is gone; Parallel creates
 * and removes them all at once. A pod below the partition is made from the current revision's template, any other
 * from the update revision's (the template). The rolling update deletes the highest-ordinal pod at or above the
 * partition that is not at the update revision, one pod at a time under either policy: it waits while a pod above it
 * (or the pod itself, once made again) is not available; under OrderedReady nothing gets there before every pod is.
 * Failed and Succeeded pods are deleted and made again. currentRevision becomes updateRevision once every pod runs it
 * and is Ready (completeRollingUpdate).
 *
 * Simplifications, none of which changes a pod the agent sees:
 * - A revision is named `<statefulset>-<hash of the template>` (the label controller-revision-hash on its pods), and
 *   cluster.controllerRevisions keeps its template: no collision count, no revision numbers (a template that comes
 *   back reuses its revision, as a rollback does), no history truncation.
 * - No volume claims (nor their retention policy), no start ordinal (spec.ordinals), no OnDelete, no maxUnavailable;
 *   the identity and storage fix-ups of processReplica have nothing to fix here.
 * - A pod counts as created once it exists (the kubelet makes it Running at once, kubelet.ts); container ids derive
 *   from the pod's name, so a pod made again reuses them (only in-place swaps read them, and StatefulSet regions have
 *   none). A pod's uid is its own (uidOf of its name and the StatefulSet's serial).
 * - The controller syncs at the instant a pod becomes available (its requeue after minReadySeconds).
 *
 * Each call is one sync, as the real controller's: under OrderedReady it stops at the first pod it waits for or
 * creates or deletes; the caller repeats syncs until nothing changes.
 */
import { shortHash } from '../revision.js';
import { timestampMs, type PodObject, type PodTemplate } from '../kube/objects.js';
import { isPodTerminal } from '../rollout/pod-activity.js';
import {
  controllerReference,
  isTarget,
  ownedBy,
  replaced,
  templateOf,
  uidOf,
  written,
  type Cluster,
  type Setting,
  type SimPod,
  type SimWorkload,
} from './cluster.js';
import { deletedPod, newPod, settledSince } from './kubelet.js';

/** The label a StatefulSet's pods carry their revision in (apps.ControllerRevisionHashLabelKey). */
export const CONTROLLER_REVISION_LABEL = 'controller-revision-hash';

const nameOf = (o: { metadata?: { name?: string } }): string => o.metadata?.name ?? '';

/** The name of the StatefulSet's pod of `ordinal` (getPodName). */
const statefulPodName = (sts: SimWorkload, ordinal: number): string => `${nameOf(sts)}-${ordinal}`;

/** The ordinal of a pod of the StatefulSet (its name's suffix). */
const ordinalOf = (sts: SimWorkload, pod: PodObject): number => Number(nameOf(pod).slice(nameOf(sts).length + 1));

/** The revision a pod of a StatefulSet was made from (getPodRevision). */
const podRevision = (pod: PodObject): string | undefined => pod.metadata?.labels?.[CONTROLLER_REVISION_LABEL];

const hashes = new WeakMap<object, string>();

/** The name of the revision of `template` of the StatefulSet `sts` (a memo per template object: objects are only ever replaced). */
export function revisionName(sts: SimWorkload, template: PodTemplate): string {
  let hash = hashes.get(template);
  if (hash === undefined) {
    hash = shortHash(template);
    hashes.set(template, hash);
  }
  return `${nameOf(sts)}-${hash}`;
}

/** The partition of the StatefulSet's rolling update (0 unless set, as the API server defaults it). */
export const partitionOf = (sts: SimWorkload): number => sts.spec?.updateStrategy?.rollingUpdate?.partition ?? 0;

const isTerminating = (pod: PodObject): boolean => pod.metadata?.deletionTimestamp !== undefined;
const readySince = (pod: PodObject): number | undefined => {
  const ready = pod.status?.conditions?.find((c) => c.type === 'Ready');
  return ready?.status === 'True' ? timestampMs(ready.lastTransitionTime) : undefined;
};
const runningAndReady = (pod: PodObject): boolean => pod.status?.phase === 'Running' && readySince(pod) !== undefined;
/** podutil.IsPodAvailable: Ready for minReadySeconds (the phase and a deletion aside, as there). */
const available = (pod: PodObject, minReadyMs: number, now: number): boolean => (readySince(pod) ?? Number.POSITIVE_INFINITY) + minReadyMs <= now;
const unavailable = (pod: PodObject, minReadyMs: number, now: number): boolean => !available(pod, minReadyMs, now) || isTerminating(pod);
const terminal = (pod: PodObject): boolean => isPodTerminal({ phase: pod.status?.phase, terminating: isTerminating(pod) });

/**
 * The pod of `ordinal` the StatefulSet makes from the template of `revision`, labelled with it, at `now` (its
 * `serial`-th pod: newStatefulSetPod, setPodRevision).
 */
function statefulPod(sts: SimWorkload, ordinal: number, serial: number, revision: string, template: PodTemplate, now: number): SimPod {
  const name = statefulPodName(sts, ordinal);
  const labelled = { ...template, metadata: { ...template.metadata, labels: { ...template.metadata?.labels, [CONTROLLER_REVISION_LABEL]: revision } } };
  return newPod(sts, { name, uid: uidOf(`${name}.${serial}`), controller: controllerReference(sts, 'StatefulSet') }, now, labelled);
}

/** A pod of the StatefulSet that has been running since `since`, as the pods a rollout starts from. */
export function runningStatefulPod(sts: SimWorkload, ordinal: number, revision: string, template: PodTemplate, since: number): SimPod {
  return settledSince(statefulPod(sts, ordinal, ordinal, revision, template, since), since, template);
}

/** What one sync works with. */
interface Sync {
  readonly sts: SimWorkload;
  readonly current: string;
  readonly update: string;
  readonly monotonic: boolean;
  readonly minReadyMs: number;
}

/** The pods of the StatefulSet in `cluster`, by ordinal: those within its replicas, and the others (condemned), highest first. */
function podsOf(cluster: Cluster, sts: SimWorkload): { replicas: (PodObject | undefined)[]; condemned: PodObject[] } {
  const count = sts.spec?.replicas ?? 1;
  const replicas: (PodObject | undefined)[] = Array.from({ length: count }, () => undefined);
  const condemned: PodObject[] = [];
  for (const { object } of cluster.pods) {
    if (!ownedBy(object, sts)) continue;
    const ordinal = ordinalOf(sts, object);
    if (ordinal < count) replicas[ordinal] = object;
    else condemned.push(object);
  }
  return { replicas, condemned: condemned.sort((a, b) => ordinalOf(sts, b) - ordinalOf(sts, a)) };
}

/** The cluster with the pod of `ordinal` made from `revision` (CreateStatefulPod). */
function create(cluster: Cluster, s: Sync, ordinal: number, revision: string): Cluster {
  const name = nameOf(s.sts);
  const serial = cluster.serials[name] ?? 0;
  const pod = statefulPod(s.sts, ordinal, serial, revision, cluster.controllerRevisions[revision] ?? templateOf(s.sts), cluster.now);
  return {
    ...cluster,
    pods: [...cluster.pods, pod].sort((a, b) => (nameOf(a.object) < nameOf(b.object) ? -1 : 1)),
    serials: { ...cluster.serials, [name]: serial + 1 },
    writes: cluster.writes + 1,
    tally: { ...cluster.tally, podsCreated: cluster.tally.podsCreated + 1 },
  };
}

/** The cluster with `pod` deleted (DeleteStatefulPod); a removal of a pod at the region's target counts when `counted`. */
function remove(cluster: Cluster, pod: PodObject, setting: Setting, counted: boolean): Cluster {
  const index = cluster.pods.findIndex((p) => p.object === pod);
  const listed = cluster.pods[index];
  if (!listed) return cluster;
  const removedNew = counted && isTarget(setting, pod) ? 1 : 0;
  return {
    ...cluster,
    pods: replaced(cluster.pods, index, deletedPod(listed, cluster.now)),
    writes: cluster.writes + 1,
    tally: { ...cluster.tally, newPodsRemoved: cluster.tally.newPodsRemoved + removedNew },
  };
}

/**
 * The pods' part of one sync (updateStatefulSet): every ordinal within the replicas made or waited for
 * (processReplica), the surplus removed (processCondemned), then one step of the rolling update.
 */
function syncPods(cluster: Cluster, s: Sync, setting: Setting): Cluster {
  const { sts, monotonic, minReadyMs } = s;
  const now = cluster.now;
  const partition = partitionOf(sts);
  let c = cluster;
  const { replicas, condemned } = podsOf(c, sts);
  for (let ordinal = 0; ordinal < replicas.length; ordinal++) {
    const pod = replicas[ordinal];
    if (pod && terminal(pod)) {
      // Made again once it is gone: the next sync after its removal finds the ordinal missing.
      if (!isTerminating(pod)) c = remove(c, pod, setting, false);
      if (monotonic) return c;
      continue;
    }
    if (!pod) {
      c = create(c, s, ordinal, ordinal < partition ? s.current : s.update);
      if (monotonic) return c;
      continue;
    }
    if (monotonic && (isTerminating(pod) || !runningAndReady(pod) || !available(pod, minReadyMs, now))) return c;
  }
  // Under OrderedReady every replica is Running, Ready and available here; a condemned pod that is not waits unless it
  // is the first unavailable pod (which would otherwise keep the scale-down from ever going on).
  const firstUnavailable = [...replicas, ...[...condemned].reverse()].find((p) => p !== undefined && unavailable(p, minReadyMs, now));
  for (const pod of condemned) {
    if (isTerminating(pod)) {
      if (monotonic) return c;
      continue;
    }
    if (monotonic && pod !== firstUnavailable && (!runningAndReady(pod) || !available(pod, minReadyMs, now))) return c;
    c = remove(c, pod, setting, true);
    if (monotonic) return c;
  }
  const { replicas: after } = podsOf(c, sts);
  for (let ordinal = after.length - 1; ordinal >= partition; ordinal--) {
    const pod = after[ordinal];
    if (pod === undefined) return c;
    if (podRevision(pod) !== s.update && !isTerminating(pod)) return remove(c, pod, setting, false);
    if (unavailable(pod, minReadyMs, now)) return c;
  }
  return c;
}

/**
 * The StatefulSet's status from its pods (updateStatus, completeRollingUpdate): terminating and terminal pods count
 * as replicas, and towards readiness as long as they are Running and Ready, but at no revision.
 */
function withStatus(cluster: Cluster, index: number, s: Sync): Cluster {
  const sts = cluster.statefulSets[index] as SimWorkload;
  const pods = cluster.pods.filter((p) => ownedBy(p.object, sts)).map((p) => p.object);
  const ready = pods.filter(runningAndReady);
  const counted = pods.filter((p) => !isTerminating(p));
  const replicas = sts.spec?.replicas ?? 1;
  const updatedReplicas = counted.filter((p) => podRevision(p) === s.update).length;
  const complete = updatedReplicas === replicas && ready.length === replicas && pods.length === replicas;
  const status = {
    observedGeneration: sts.metadata?.generation ?? 0,
    replicas: pods.length,
    readyReplicas: ready.length,
    availableReplicas: ready.filter((p) => available(p, s.minReadyMs, cluster.now)).length,
    currentReplicas: complete ? updatedReplicas : counted.filter((p) => podRevision(p) === s.current).length,
    updatedReplicas,
    currentRevision: complete ? s.update : s.current,
    updateRevision: s.update,
  };
  const old = sts.status ?? {};
  if (Object.entries(status).every(([k, v]) => old[k as keyof typeof old] === v)) return cluster;
  return { ...cluster, statefulSets: replaced(cluster.statefulSets, index, written(sts, { status })), writes: cluster.writes + 1 };
}

/**
 * One sync of the StatefulSet at `index`: its template's revision recorded (getStatefulSetRevisions: the current
 * revision is the one its status names, else the update revision), its pods made, removed and updated, its status
 * reported. The same cluster when it has nothing to do.
 */
export function reconcileStatefulSet(cluster: Cluster, index: number, setting: Setting): Cluster {
  const sts = cluster.statefulSets[index] as SimWorkload;
  const template = templateOf(sts);
  const update = revisionName(sts, template);
  const recorded =
    cluster.controllerRevisions[update] === undefined ? { ...cluster, controllerRevisions: { ...cluster.controllerRevisions, [update]: template } } : cluster;
  const named = sts.status?.currentRevision;
  const current = named !== undefined && recorded.controllerRevisions[named] !== undefined ? named : update;
  const s: Sync = {
    sts,
    current,
    update,
    monotonic: sts.spec?.podManagementPolicy !== 'Parallel',
    minReadyMs: (sts.spec?.minReadySeconds ?? 0) * 1000,
  };
  return withStatus(syncPods(recorded, s, setting), index, s);
}

/** When a pod of any StatefulSet becomes available (Ready for minReadySeconds): its controller syncs then. */
export function statefulSetAvailabilityInstants(cluster: Cluster): number[] {
  return cluster.statefulSets.flatMap((sts) => {
    const minReadyMs = (sts.spec?.minReadySeconds ?? 0) * 1000;
    if (minReadyMs === 0) return [];
    return cluster.pods.flatMap(({ object }) => {
      const since = ownedBy(object, sts) && !isTerminating(object) ? readySince(object) : undefined;
      return since !== undefined && since + minReadyMs > cluster.now ? [since + minReadyMs] : [];
    });
  });
}
