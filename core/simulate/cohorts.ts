/**
 * Settled pods kept as counts. A pod that is settled (settledKind) has nothing pending: the kubelet has nothing left to
 * do, the planner only counts it (and waits for its mark to settle, when it was just marked), and a controller removes
 * one only when it runs out of pods it ranks first. Such pods are identical but for their name, uid and container ids,
 * which derive from their serial, so the simulation keeps each kind as one Cohort (a pod and the serials of its
 * members) instead of one object per pod: a region of a million replicas costs a few objects.
 *
 * Exactness. Observe hands the planner each cohort as one representative pod and a count (RegionState.settled), and
 * every planner path that counts pods counts them (countWhere). The planner also picks old-revision pods by name (to
 * mark, evict or swap): for that, the old pods with the smallest serials stay listed one by one (the window), so that
 * every listed old pod that is Ready sorts before every member of a cohort, and the planner's picks among the listed
 * ones are exactly its picks among all. When a pick takes every listed candidate the window may have been too small:
 * the look plans again with a larger one (look.ts). Controllers that must remove a member take it out by serial
 * (materialize). equivalence.test.ts runs rollouts both ways and compares every look.
 *
 * StatefulSet regions keep no cohorts (settingOf in start.ts): their controller acts on every ordinal, one by one.
 */
import { canonicalJson } from '../revision.js';
import { timestampMs, type PodObject } from '../kube/objects.js';
import { IN_PLACE_READINESS_GATE, MARKED_AT_ANNOTATION, POD_DELETION_COST_ANNOTATION, SWAP_STATE_ANNOTATION } from '../labels.js';
import { parseSwapState } from '../inplace/swap-state.js';
import { MARK_SETTLE_MS } from '../rollout/region-step.js';
import { removalMarkCost } from '../rollout/removal-marks.js';
import { SIMULATION_START } from './timing.js';
import {
  containerIdOf,
  controllerOf,
  isTarget,
  regionOf,
  renamed,
  serialOf,
  uidOf,
  type Cluster,
  type Cohort,
  type SerialRange,
  type Setting,
  type SimPod,
} from './cluster.js';

/** Members of a cohort. */
export const cohortSize = (cohort: Cohort): number => cohort.serials.reduce((n, [from, to]) => n + to - from, 0);

/** The member of `cohort` with `serial`. */
export function member(cohort: Cohort, serial: number): PodObject {
  const pod = cohort.pod;
  const name = renamed(pod.metadata?.name ?? '', serial);
  const statuses = pod.status?.containerStatuses?.map((s) => ({ ...s, containerID: containerIdOf(name, s.name, s.restartCount ?? 0) }));
  const object = { ...pod, metadata: { ...pod.metadata, name, uid: uidOf(name) }, status: { ...pod.status, ...(statuses && { containerStatuses: statuses }) } };
  // A member is of its cohort's kind: known without taking it apart again.
  const kind = kindCache.get(pod);
  if (kind !== undefined) kindCache.set(object, kind);
  return object;
}

/** The `n` smallest (or largest) serials of a cohort. */
export function edgeSerials(cohort: Cohort, n: number, largest: boolean): number[] {
  const out: number[] = [];
  const ranges = largest ? [...cohort.serials].reverse() : cohort.serials;
  for (const [from, to] of ranges) {
    for (let i = 0; i < to - from && out.length < n; i++) out.push(largest ? to - 1 - i : from + i);
    if (out.length >= n) break;
  }
  return out;
}

/** The serials of a cohort up to `max` (inclusive). */
function serialsUpTo(cohort: Cohort, max: number): number[] {
  const out: number[] = [];
  for (const [from, to] of cohort.serials) for (let s = from; s < Math.min(to, max + 1); s++) out.push(s);
  return out;
}

/** Ranges without the given serials (sorted ascending). */
function withoutSerials(ranges: readonly SerialRange[], sorted: readonly number[]): SerialRange[] {
  const out: SerialRange[] = [];
  let k = 0;
  for (const [from, to] of ranges) {
    let start = from;
    while (k < sorted.length && (sorted[k] ?? 0) < to) {
      const s = sorted[k] ?? 0;
      if (s >= start) {
        if (s > start) out.push([start, s]);
        start = s + 1;
      }
      k++;
    }
    if (start < to) out.push([start, to]);
  }
  return out;
}

/** Ranges with one more serial, adjacent ranges merged. */
function withSerial(ranges: readonly SerialRange[], serial: number): SerialRange[] {
  return mergedRanges([...ranges, [serial, serial + 1]]);
}

/** Ranges sorted, adjacent and overlapping ones merged. */
function mergedRanges(ranges: readonly SerialRange[]): SerialRange[] {
  const all = [...ranges].sort((a, b) => a[0] - b[0]);
  const out: [number, number][] = [];
  for (const [from, to] of all) {
    const last = out[out.length - 1];
    if (last && from <= last[1]) last[1] = Math.max(last[1], to);
    else out.push([from, to]);
  }
  return out;
}

/**
 * The members with the given serials taken out of their cohorts and listed as pods (pods stay sorted by name).
 * `picks` holds, per cohort index, the serials to take.
 */
export function materialize(cluster: Cluster, picks: ReadonlyMap<number, readonly number[]>): Cluster {
  if (picks.size === 0) return cluster;
  const taken: SimPod[] = [];
  const cohorts = cluster.cohorts.flatMap((cohort, i) => {
    const serials = [...new Set(picks.get(i) ?? [])].sort((a, b) => a - b);
    if (serials.length === 0) return [cohort];
    for (const s of serials) taken.push({ object: member(cohort, s) });
    const rest = withoutSerials(cohort.serials, serials);
    return rest.length > 0 ? [{ pod: cohort.pod, serials: rest }] : [];
  });
  const pods = [...cluster.pods, ...taken].sort((a, b) => nameOrder(a.object, b.object));
  return { ...cluster, pods, cohorts };
}

const nameOrder = (a: PodObject, b: PodObject): number => {
  const x = a.metadata?.name ?? '';
  const y = b.metadata?.name ?? '';
  return x < y ? -1 : x > y ? 1 : 0;
};

const conditionOf = (pod: PodObject, type: string) => pod.status?.conditions?.find((c) => c.type === type);

/**
 * The kind of a settled pod (pods of one kind are alike for every reader), or undefined when it is not settled:
 * bound, running and Ready for minReadySeconds with every container ready, nothing pending at its kubelet, not being
 * deleted, no swap under way, its gate open when it has one. What the kind leaves out is what no reader decides on for
 * such a pod: its name, uid and container ids (derived from its serial), when it became Ready (long enough ago), when
 * it was marked once the mark has settled (until then the mark time is part of the kind: the planner waits for it),
 * the time and containers its finished swap recorded, and its creation time, of which only the side of the
 * simulation's start counts (pods created since count as the rollout's replacements).
 */
function settledKind(pod: SimPod, setting: Setting, now: number): string | undefined {
  const o = pod.object;
  if (pod.kubeletAt !== undefined || o.metadata?.deletionTimestamp !== undefined) return undefined;
  const annotations = o.metadata?.annotations ?? {};
  const readySince = timestampMs(conditionOf(o, 'Ready')?.lastTransitionTime);
  const marked = removalMarkCost(annotations[POD_DELETION_COST_ANNOTATION]) !== undefined;
  const markedAt = timestampMs(annotations[MARKED_AT_ANNOTATION]);
  const swap = annotations[SWAP_STATE_ANNOTATION] === undefined ? undefined : parseSwapState(annotations[SWAP_STATE_ANNOTATION]);
  const settled =
    pod.kubeletAt === undefined &&
    o.metadata?.deletionTimestamp === undefined &&
    o.status?.phase === 'Running' &&
    o.spec?.nodeName !== undefined &&
    conditionOf(o, 'Ready')?.status === 'True' &&
    readySince !== undefined &&
    readySince + setting.minReadySeconds * 1000 <= now &&
    (o.status?.containerStatuses ?? []).every((c) => c.ready === true && c.state?.running !== undefined) &&
    (annotations[SWAP_STATE_ANNOTATION] === undefined || swap?.phase === 'done') &&
    (!(o.spec?.readinessGates ?? []).some((g) => g.conditionType === IN_PLACE_READINESS_GATE) || conditionOf(o, IN_PLACE_READINESS_GATE)?.status === 'True') &&
    (!marked || markedAt !== undefined);
  if (!settled) return undefined;
  let kind = kindCache.get(o);
  if (kind === undefined) {
    kind = kindOf(o);
    kindCache.set(o, kind);
  }
  // A mark that has not settled yet is part of the kind: the planner waits for it (MARK_SETTLE_MS).
  return marked && (markedAt ?? 0) + MARK_SETTLE_MS > now ? `${kind} marked at ${markedAt ?? 0}` : kind;
}

/**
 * Kinds of pod objects already seen: a memo, as an object is never changed (a write makes a new one) and its kind
 * depends on nothing else. Finding a kind takes a canonical JSON of the pod, and a look may ask for many.
 */
const kindCache = new WeakMap<PodObject, string>();

/** The kind of a settled pod object (see settledKind). */
function kindOf(o: PodObject): string {
  const annotations = o.metadata?.annotations ?? {};
  const swap = annotations[SWAP_STATE_ANNOTATION] === undefined ? undefined : parseSwapState(annotations[SWAP_STATE_ANNOTATION]);
  const kept = { ...annotations };
  delete kept[MARKED_AT_ANNOTATION];
  if (swap) kept[SWAP_STATE_ANNOTATION] = JSON.stringify({ revision: swap.revision, phase: swap.phase });
  return canonicalJson({
    metadata: {
      namespace: o.metadata?.namespace,
      labels: o.metadata?.labels,
      annotations: kept,
      ownerReferences: o.metadata?.ownerReferences,
      resourceVersion: o.metadata?.resourceVersion,
      createdBeforeStart: (timestampMs(o.metadata?.creationTimestamp) ?? 0) < SIMULATION_START,
    },
    spec: o.spec,
    status: {
      phase: o.status?.phase,
      conditions: o.status?.conditions?.map((c) => ({ type: c.type, status: c.status })),
      containerStatuses: o.status?.containerStatuses?.map(({ containerID: _id, ...rest }) => rest),
    },
  });
}

/**
 * The cluster with every settled listed pod in its cohort, and, per region, the window of old-revision pods listed
 * again, per ReplicaSet: the `window(region)` smallest serials among its old cohorts' members, and every member below a
 * listed old pod that is Ready (so that the planner, picking by name, finds every listed candidate before any member). Without
 * cohorts (setting.cohorts false) the cluster as it is.
 */
export function consolidate(cluster: Cluster, setting: Setting, window: (region: string) => number): Cluster {
  if (!setting.cohorts) return cluster;
  // Cohorts whose marks settled since are now of one kind: they merge.
  const cohorts: Cohort[] = [];
  const kinds = new Map<string, number>();
  for (const cohort of cluster.cohorts) {
    const kind = settledKind({ object: cohort.pod }, setting, cluster.now) ?? '';
    const index = kinds.get(kind);
    const into = index === undefined ? undefined : cohorts[index];
    if (index === undefined || !into) {
      kinds.set(kind, cohorts.length);
      cohorts.push(cohort);
    } else cohorts[index] = { pod: into.pod, serials: mergedRanges([...into.serials, ...cohort.serials]) };
  }
  const listed: SimPod[] = [];
  for (const pod of cluster.pods) {
    const kind = settledKind(pod, setting, cluster.now);
    if (kind === undefined) {
      listed.push(pod);
      continue;
    }
    const index = kinds.get(kind);
    const serial = serialOf(pod.object.metadata?.name ?? '');
    if (index === undefined) {
      kinds.set(kind, cohorts.length);
      cohorts.push({ pod: pod.object, serials: [[serial, serial + 1]] });
    } else {
      const cohort = cohorts[index] as Cohort;
      cohorts[index] = { pod: pod.object, serials: withSerial(cohort.serials, serial) };
    }
  }
  const joined: Cluster = { ...cluster, pods: listed, cohorts };
  return materialize(joined, windowPicks(joined, setting, window));
}

/** Per old cohort, the serials the window lists (see consolidate), ReplicaSet by ReplicaSet (serials are per ReplicaSet). */
function windowPicks(cluster: Cluster, setting: Setting, window: (region: string) => number): Map<number, number[]> {
  const picks = new Map<number, number[]>();
  const ownerOf = (pod: PodObject) => controllerOf(pod)?.uid ?? '';
  const owners = new Set(cluster.cohorts.filter((c) => !isTarget(setting, c.pod)).map((c) => ownerOf(c.pod)));
  for (const owner of owners) {
    const old = cluster.cohorts.map((c, i) => ({ c, i })).filter(({ c }) => ownerOf(c.pod) === owner && !isTarget(setting, c.pod));
    const size = window(regionOf(old[0]?.c.pod ?? {}));
    const smallest = old
      .flatMap(({ c }) => edgeSerials(c, size, false))
      .sort((a, b) => a - b)
      .slice(0, size);
    const readyListed = cluster.pods
      .filter(
        (p) =>
          ownerOf(p.object) === owner &&
          !isTarget(setting, p.object) &&
          p.object.metadata?.deletionTimestamp === undefined &&
          conditionOf(p.object, 'Ready')?.status === 'True',
      )
      .map((p) => serialOf(p.object.metadata?.name ?? ''));
    const upTo = [...smallest, ...readyListed].reduce((a, b) => Math.max(a, b), -1);
    for (const { c, i } of old) picks.set(i, serialsUpTo(c, upTo));
  }
  return picks;
}
