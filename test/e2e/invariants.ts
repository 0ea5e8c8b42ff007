// A rollout invariant watcher for the end-to-end suites. It watches (Kubernetes watches through client-node's
// informers, no polling) one ExtendedDeployment, its regional workloads and its pods, turns every event into a sample of
// the whole picture, and checks the rollout model's safety rules on every sample:
//
//   ceiling        per region, pods (terminating included) ≤ desired + maxSurge, and the workload's spec.replicas too
//                  (scaleOutPriority: desired + batch; scaleInPriority: desired). Compat mode counts active pods only:
//                  the native Deployment controller does not count terminating ones either.
//
// Pods are counted as the ReplicaSet controller and the agent count them (core/rollout/pod-activity.ts): a Failed
// (evicted) or Succeeded pod is never live, available, new or old, and holds neither surge room nor node resources.
// Pods a test evicts itself (InvariantWatch.disrupt) are disruptions from outside, not the rollout's doing: see
// Sample.disrupted for how ceiling, floor, newPodDeleted, waitingRegionTouched and groupTarget account for them.
//   floor          per region, available pods ≥ desired − maxUnavailable (scaleOutPriority: desired; with in-place
//                  updates on, swaps may take up to a group's batch out: desired − max(maxUnavailable, batch)), once the region
//                  has been filled. Until then (initial fill, or after its desired count grew) available pods never
//                  drop below the most the region had since (a high-water mark).
//                  And over all regions while none runs old-revision pods (replicas shifting between regions, a region
//                  drained before it is removed: core/rollout/handoff.ts): available pods ≥ the sum of the regions'
//                  floors, with the same fill and high-water rule, so a region's pods leave only as pods elsewhere
//                  become available. During a rollout each region sheds by its own budgets, and only the regions'
//                  floors hold. Reported as a floor without a region, and not in a sample where a region's own floor is.
//   newPodDeleted  no pod of the region's rendered revision gets a deletionTimestamp (or vanishes) while a rollout is
//                  in progress (the ED's status is not Healthy for its current rollout revision), unless it is in excess
//                  of the region's share: its desired count less the old pods its partition keeps (the count shrank, or
//                  the partition rose: a forced exit, core/rollout/forced-exit.ts), or while a region adopts pods (the
//                  first pod Kubernetes gives its ReplicaSet leaves before any move while not Ready, core/adoption).
//   groupTarget    (ReplicaSet mode) per region, new-revision pods ≤ the target of status.currentGroup (new pods above
//                  a shrunk desired count are surplus, not progress: min(new, desired) is compared), plus what its count
//                  was raised by since the rollout started while it has old pods (capacity comes first, at the new
//                  revision); a region being created (no old pods) may run the one pod Kubernetes gives the ReplicaSet
//                  Git creates before its group starts (core's mostNewAtGroup).
//   groupAdvance   when status.currentGroup advances within one rollout, every region had finished the group before:
//                  (ReplicaSet mode) its target available at the new revision (the old pods it replaces may still be
//                  leaving: the next group's first step removes them, and the ceiling and floor bound it);
//                  (compat mode) the previous group's regions entirely at the new revision and available.
//   waitingRegionTouched  (compat mode) a region whose group has not started keeps its Deployment paused, gets no pod of
//                  the new revision and loses no pod.
//   groupBack      within one rollout (status.revision unchanged), status.currentGroup never decreases.
//   groupRestarted a running group keeps its start time (status.lastGroupStartTime) from one state to the next: an agent
//                  that takes over continues the group, it does not start it again. Only a spec change from Git (the
//                  status's observedGeneration moves on) restarts it: that restarts the progress deadline.
//   placement      a pod of a region is bound only to a node of that region (a node carrying all of the DeployRegion's
//                  matchLabels and meeting its matchExpressions): a pod that escaped would take another region's capacity.
//   capacity       per region, the requests of the ExtendedDeployment's pods bound to the region's nodes (terminating
//                  ones included: they hold their resources until gone; terminal ones not: their containers stopped,
//                  and the scheduler no longer counts them), resource by resource and as a pod count,
//                  never exceed the sum of those nodes' allocatable. What is checkable, and what is not: the watcher
//                  sees this ExtendedDeployment's pods only, so this is a lower bound of the region's use (the scheduler
//                  checks every pod, per node). Pods that do not fit stay Pending and unbound: the agent asking for them
//                  is bounded by the ceiling (spec.replicas ≤ desired + maxSurge), and while they are Pending the
//                  floor keeps the agent from removing the pods they would replace.
//
// A region's desired count is core's distribution plus the moves the status records (shortage and fault moves).
// Budgets come from core's budgets.ts and group targets from core's groups.ts (scheduleGroups, targetAtGroup,
// regionOrderOf), computed from the ExtendedDeployment as parsed by core, in the version of the same sample. The
// check itself (InvariantChecker / checkSamples) is pure and unit-tested in test/unit/invariants.test.ts. At the end of a
// test, git-match.ts compares the watcher's last picture with what Git rendered.
//
// What keeps the rules from covering a run fails it too, as violations that are no rule: `unparsed`, an existing
// ExtendedDeployment the rules cannot read (unless the test declares `expectInvalid`), and `watchError`, any failed
// list or watch but one the API server refused to start with 429 (its watch cache was (re)initializing, e.g. after a
// CRD update, and it asked to retry): those are restarted after a second and printed as throttled, with how long the
// kind went unwatched. Events are counted apart from the samples the rules ran on, and stopAndReport prints both.
import { makeInformer, type KubeConfig, type KubernetesListObject, type KubernetesObject } from '@kubernetes/client-node';
import { AppsV1Api, CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import { extendedDeploymentStatus, type ExtendedDeployment, type RolloutStrategy } from '../../core/api/extended-deployment.js';
import { recordedMoves } from '../../core/moves/apply-moves.js';
import { distributeReplicas } from '../../core/distribution.js';
import { KEEPER_LABEL, NAME_LABEL, REGION_LABEL, REVISION_LABEL, REVISIONS_ANNOTATION, ROLLOUT_REVISION_ANNOTATION } from '../../core/labels.js';
import { parseQuantity } from '../../core/moves/quantity.js';
import { podRequests, type PodResourcesSpec } from '../../core/moves/resources.js';
import { parseExtendedDeployment, refOf } from '../../core/parse.js';
import { formatObject } from '../../core/problems.js';
import { nodeInRegion, type RegionSelector } from '../../core/region-selector.js';
import { workloadName } from '../../core/kube/workload-kinds.js';
import { kindBudgets } from '../../core/rollout/budgets.js';
import { isPodActive, isPodTerminal } from '../../core/rollout/pod-activity.js';
import { keptOld, partitionPods } from '../../core/rollout/partition.js';
import { batchPods, mostNewAtGroup, regionOrderOf, scheduleGroups, targetAtGroup, type GroupSchedule } from '../../core/rollout/groups.js';
import { problemsMessage } from '../../core/rollout/status-decision.js';
import { rolloutCompleted } from '../../core/rollout/status.js';

// ---------------------------------------------------------------------------------------------------------------
// Samples: the picture at one instant, reduced to what the checks read.

/** A pod as the checks see it. */
export interface PodSample {
  readonly uid: string;
  readonly name: string;
  readonly region: string;
  readonly revision: string | undefined;
  /** status.phase: a Failed or Succeeded pod never counts (core's isPodActive). */
  readonly phase?: string | undefined;
  readonly terminating: boolean;
  readonly ready: boolean;
  /** When Ready last became True (ms). */
  readonly readySince: number | undefined;
  /** spec.nodeName: the node the scheduler bound it to. */
  readonly node?: string | undefined;
  /** What the scheduler reserves for it (core's podRequests). */
  readonly requests?: Readonly<Record<string, number>>;
  /** uid of its controller (ownerReferences), for the ReplicaSet a Deployment's pod belongs to. */
  readonly owner?: string | undefined;
}

/** A node as the capacity check sees it. */
export interface NodeSample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  /** status.allocatable as numbers (cpu in cores, memory in bytes, pods as a count). */
  readonly allocatable: Readonly<Record<string, number>>;
}

/** A region's workload (ReplicaSet `<ed>-<region>`, or the Deployment in compat mode). */
export interface WorkloadSample {
  readonly region: string;
  readonly replicas: number;
  /** Deployments only. */
  readonly paused?: boolean;
  /** The revision label of its pod template. */
  readonly revision?: string | undefined;
  /** spec.replicas of the region's keeper (core/rollout/keeper.ts), when it has one: pods of the region it makes. */
  readonly keeperReplicas?: number;
}

/** The ExtendedDeployment as parsed by core, with what the render recorded and the agent's status. */
export interface EdSample {
  readonly subsetType: ExtendedDeployment['spec']['subsetType'];
  readonly strategy: RolloutStrategy;
  readonly regionOrder: NonNullable<RolloutStrategy['regionOrder']>;
  /** Regions in declared order: desired count (core's distribution, plus the recorded moves) and rendered revision. */
  readonly regions: readonly { readonly name: string; readonly desired: number; readonly partition: number; readonly targetRevision: string }[];
  readonly rolloutRevision: string;
  /** metadata.generation. */
  readonly generation?: number | undefined;
  readonly status: {
    readonly observedGeneration?: number | undefined;
    readonly lastGroupStartTime?: string | undefined;
    readonly phase?: string | undefined;
    readonly revision?: string | undefined;
    readonly currentGroup?: number | undefined;
    readonly totalGroups?: number | undefined;
    readonly rolloutRegions?: readonly string[] | undefined;
    readonly conditions?: readonly { readonly type: string; readonly reason?: string | undefined }[] | undefined;
  };
}

/** Everything the checks read at one instant. */
export interface Sample {
  /** ms since the epoch. */
  readonly at: number;
  /** Undefined before the ExtendedDeployment exists, or while the rules cannot read it (see `unparsed`). */
  readonly ed: EdSample | undefined;
  /** Why the ExtendedDeployment, which exists, gives the rules nothing to read (see edReading). */
  readonly unparsed?: string | undefined;
  readonly workloads: readonly WorkloadSample[];
  /**
   * Compat mode: spec.replicas of every ReplicaSet of the regional Deployments, by uid. The Deployment controller
   * bounds these by maxSurge, not the pods: an old ReplicaSet just scaled down keeps its surplus pod for a moment while
   * the new one's pod already exists; the ceiling counts a ReplicaSet's pods only up to its spec.replicas.
   */
  readonly replicaSetReplicas?: Readonly<Record<string, number>>;
  readonly pods: readonly PodSample[];
  /** Nodes of the cluster; without them (or without regionSelectors) placement and capacity are not checked. */
  readonly nodes?: readonly NodeSample[];
  /** DeployRegion name → its node selection (spec.matchLabels and spec.matchExpressions). */
  readonly regionSelectors?: Readonly<Record<string, RegionSelector>>;
  /**
   * Uids of pods the test disrupts from outside the rollout (evictions). When one stops being active, the rollout did
   * not remove it: it is no newPodDeleted or waitingRegionTouched; while terminating it is not over the ceiling (the
   * ReplicaSet controller replaces it meanwhile); the availability it takes lowers the floor until the region has it
   * back; and the ReplicaSet controller replacing an old one at the template's revision puts the region that many new
   * pods above its group target.
   */
  readonly disrupted?: ReadonlySet<string>;
}

type Timestamp = string | Date | undefined | null;
const ms = (t: Timestamp): number | undefined => {
  if (t === undefined || t === null) return undefined;
  const v = t instanceof Date ? t.getTime() : Date.parse(t);
  return Number.isNaN(v) ? undefined : v;
};

interface RawMeta {
  name?: string;
  namespace?: string;
  uid?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  deletionTimestamp?: Timestamp;
  ownerReferences?: { uid?: string; controller?: boolean }[];
}

/** Active pods counted per owning ReplicaSet up to its spec.replicas (the rest its controller is removing). */
function cappedByReplicaSet(pods: readonly PodSample[], replicas: Readonly<Record<string, number>> | undefined): number {
  const byOwner = new Map<string, number>();
  let unowned = 0;
  for (const p of pods) {
    if (p.owner === undefined || replicas?.[p.owner] === undefined) unowned++;
    else byOwner.set(p.owner, (byOwner.get(p.owner) ?? 0) + 1);
  }
  return [...byOwner].reduce((sum, [owner, n]) => sum + Math.min(n, replicas?.[owner] ?? n), unowned);
}

/** A pod object (list items have Date timestamps, watch events strings) → PodSample. */
export function podSample(pod: {
  metadata?: RawMeta;
  spec?: { nodeName?: string } & PodResourcesSpec;
  status?: { phase?: string; conditions?: { type: string; status: string; lastTransitionTime?: Timestamp }[] };
}): PodSample {
  const ready = pod.status?.conditions?.find((c) => c.type === 'Ready');
  return {
    uid: pod.metadata?.uid ?? pod.metadata?.name ?? '',
    name: pod.metadata?.name ?? '',
    region: pod.metadata?.labels?.[REGION_LABEL] ?? '',
    revision: pod.metadata?.labels?.[REVISION_LABEL],
    phase: pod.status?.phase,
    terminating: !!pod.metadata?.deletionTimestamp,
    ready: ready?.status === 'True',
    readySince: ready?.status === 'True' ? ms(ready.lastTransitionTime) : undefined,
    node: pod.spec?.nodeName || undefined,
    requests: podRequests(pod.spec),
    owner: pod.metadata?.ownerReferences?.find((o) => o.controller === true)?.uid,
  };
}

/** A node object → NodeSample. */
export function nodeSample(node: { metadata?: RawMeta; status?: { allocatable?: Record<string, unknown> } }): NodeSample {
  const allocatable: Record<string, number> = {};
  for (const [k, v] of Object.entries(node.status?.allocatable ?? {})) {
    const n = parseQuantity(v as string | number);
    if (n !== undefined) allocatable[k] = n;
  }
  return { name: node.metadata?.name ?? '', labels: node.metadata?.labels ?? {}, allocatable };
}

/** An ExtendedDeployment object as the rules read it: its sample, or why the rules cannot read it. */
export type EdReading = { readonly ed: EdSample; readonly unparsed?: undefined } | { readonly ed?: undefined; readonly unparsed: string };

/**
 * The ExtendedDeployment object → EdSample: spec parsed and defaulted by core, desired counts by core's distribution
 * plus the moves its status records, target revisions from the render's annotations. Without the sample, `unparsed`
 * says why, naming the object: it does not parse, its replicas cannot be distributed, or it carries no rendered
 * revisions (every suite applies rendered ExtendedDeployments) or none for one of its regions.
 */
export function edReading(object: { kind?: string; metadata?: RawMeta; spec?: unknown; status?: unknown }): EdReading {
  const { status: rawStatus, ...raw } = object as { status?: Record<string, unknown> };
  const unparsed = (why: string): EdReading => ({ unparsed: `${formatObject({ ...refOf(raw), kind: 'ExtendedDeployment' })}: ${why}` });
  const parsed = parseExtendedDeployment(raw);
  if (!parsed.ok) return unparsed(`does not parse: ${problemsMessage(parsed.problems)}`);
  const ed = parsed.value;
  const annotations = ed.metadata.annotations ?? {};
  const rolloutRevision = annotations[ROLLOUT_REVISION_ANNOTATION];
  const recorded = annotations[REVISIONS_ANNOTATION];
  if (recorded === undefined || rolloutRevision === undefined)
    return unparsed(`carries no rendered revisions (annotations ${REVISIONS_ANNOTATION}, ${ROLLOUT_REVISION_ANNOTATION})`);
  let revisions: Record<string, unknown>;
  try {
    revisions = JSON.parse(recorded) as Record<string, unknown>;
  } catch {
    return unparsed(`annotation ${REVISIONS_ANNOTATION} is not JSON`);
  }
  const unrevised = ed.spec.regions.filter((r) => typeof revisions?.[r.name] !== 'string').map((r) => r.name);
  if (unrevised.length > 0) return unparsed(`annotation ${REVISIONS_ANNOTATION} has no revision for region ${unrevised.join(', ')}`);
  // As the agent reads it: a spec.replicas set through the scale subresource below the regions' counts shrinks them.
  const distribution = distributeReplicas(ed.spec.replicas, ed.spec.regions, 'scaleDown');
  if (!distribution.ok) return unparsed(`replicas cannot be distributed: ${problemsMessage(distribution.problems)}`);
  const s = rawStatus ?? {};
  // Moves the status records change what each region should run: the lender runs fewer, the host more.
  const moves = recordedMoves(extendedDeploymentStatus.safeParse(s).data);
  const moved = (name: string) => moves.reduce((sum, m) => sum + (m.to === name ? m.count + m.returning : 0) - (m.from === name ? m.count : 0), 0);
  return {
    ed: {
      subsetType: ed.spec.subsetType,
      strategy: ed.spec.strategy,
      regionOrder: regionOrderOf(ed.spec),
      regions: ed.spec.regions.map((r, i) => ({
        name: r.name,
        desired: (distribution.replicas[i] ?? 0) + moved(r.name),
        partition: partitionPods(r.partition, distribution.replicas[i] ?? 0),
        targetRevision: String(revisions[r.name]),
      })),
      rolloutRevision,
      generation: (object.metadata as { generation?: number } | undefined)?.generation,
      status: {
        observedGeneration: typeof s['observedGeneration'] === 'number' ? s['observedGeneration'] : undefined,
        lastGroupStartTime: typeof s['lastGroupStartTime'] === 'string' ? s['lastGroupStartTime'] : undefined,
        phase: typeof s['phase'] === 'string' ? s['phase'] : undefined,
        revision: typeof s['revision'] === 'string' ? s['revision'] : undefined,
        currentGroup: typeof s['currentGroup'] === 'number' ? s['currentGroup'] : undefined,
        totalGroups: typeof s['totalGroups'] === 'number' ? s['totalGroups'] : undefined,
        rolloutRegions: Array.isArray(s['rolloutRegions']) ? (s['rolloutRegions'] as string[]) : undefined,
        conditions: Array.isArray(s['conditions']) ? (s['conditions'] as { type: string; reason?: string }[]) : undefined,
      },
    },
  };
}

// ---------------------------------------------------------------------------------------------------------------
// The check: pure, incremental.

export type ViolationKind =
  'ceiling' | 'floor' | 'newPodDeleted' | 'groupTarget' | 'groupAdvance' | 'waitingRegionTouched' | 'groupBack' | 'groupRestarted' | 'placement' | 'capacity';

/** Every rule the checker enforces, for reports. */
export const VIOLATION_KINDS: readonly ViolationKind[] = [
  'ceiling',
  'floor',
  'newPodDeleted',
  'groupTarget',
  'groupAdvance',
  'waitingRegionTouched',
  'groupBack',
  'groupRestarted',
  'placement',
  'capacity',
];

/**
 * What keeps the rules from covering a run, reported like a violation so that the test fails: `unparsed`, an
 * ExtendedDeployment the rules cannot read (they are skipped for it); `watchError`, a watch that failed (its restart
 * relists, and the states in between are never sampled).
 */
export type UncheckedKind = 'unparsed' | 'watchError';

export interface Violation {
  readonly kind: ViolationKind | UncheckedKind;
  /** ms since the epoch. */
  readonly at: number;
  readonly region?: string;
  readonly message: string;
}

/** The floor over all regions (see the header): filled and high-water as a region's. */
interface TotalMemory {
  floor: number;
  filled: boolean;
  highWater: number;
}

/** One sample's figures over all regions, for the floor over all regions. */
interface Totals {
  available: number;
  floor: number;
  /** Available pods evictions took that the regions have not had back yet. */
  excused: number;
  /** Available pods evictions took in this sample. */
  lost: number;
  /** Some region runs old-revision pods: a rollout is under way. */
  rolling: boolean;
  /** A region's own floor was reported in this sample. */
  regionFloor: boolean;
}

interface RegionMemory {
  desired: number;
  floor: number;
  /** Available pods reached the floor since the floor was last raised. */
  filled: boolean;
  /** Until filled: the most pods available since the floor was last raised. */
  highWater: number;
  /** The desired count dropped and the pods have not come down to the new ceiling yet. */
  shrinking: boolean;
  /** Available pods disrupted (Sample.disrupted) that the region has not had back since (see the floor). */
  disruptedAvailable?: number;
  /** Old-revision pods disrupted during rollout `disruptedIn`. */
  disruptedOld?: number;
  disruptedIn?: string;
  /** The desired count when rollout `startedIn` was first seen: a raise since is served at once, at the new revision. */
  startDesired?: number;
  startedIn?: string;
}

const isAvailable = (p: PodSample, minReadySeconds: number, at: number) =>
  p.ready && isPodActive(p) && p.readySince !== undefined && p.readySince + minReadySeconds * 1000 <= at;

/**
 * Checks samples one after the other. A condition that holds over several samples is reported once, when it starts
 * (per kind and region), so a violation is a transition into a bad state, not a count of events.
 */
export class InvariantChecker {
  readonly violations: Violation[] = [];
  private readonly regions = new Map<string, RegionMemory>();
  private total: TotalMemory | undefined;
  private readonly active = new Set<string>();
  private previous: Sample | undefined;
  private checkedSamples = 0;

  /**
   * `expectInvalid`: the test makes the ExtendedDeployment unreadable on purpose, so a sample the rules cannot read is
   * only not checked (and not counted as checked), not a violation.
   */
  constructor(private readonly options: { readonly expectInvalid?: boolean } = {}) {}

  /** Samples the rules ran on (those with a readable ExtendedDeployment). */
  get checked(): number {
    return this.checkedSamples;
  }

  observe(sample: Sample): Violation[] {
    const found: Violation[] = [];
    const violating = new Set<string>();
    const report = (kind: Violation['kind'], region: string | undefined, message: string) => {
      const key = `${kind}/${region ?? ''}`;
      if (violating.has(key)) return;
      violating.add(key);
      if (this.active.has(key)) return;
      found.push({ kind, at: sample.at, ...(region !== undefined && { region }), message });
    };
    const ed = sample.ed;
    if (ed) {
      this.checkedSamples++;
      this.check(sample, ed, report);
      this.checkGroupHistory(ed, report);
      checkCapacity(sample, ed, report);
    } else if (sample.unparsed !== undefined && !this.options.expectInvalid) {
      report('unparsed', undefined, `the rules cannot run: ${sample.unparsed}`);
    }
    this.active.clear();
    for (const key of violating) this.active.add(key);
    this.previous = sample;
    this.violations.push(...found);
    return found;
  }

  /** The floor over all regions, outside a rollout (see the header). */
  private checkTotal(t: Totals, report: Report): void {
    if (t.rolling) {
      this.total = undefined;
      return;
    }
    const memory = this.total ?? { floor: t.floor, filled: false, highWater: 0 };
    if (t.floor > memory.floor && memory.filled) Object.assign(memory, { filled: false, highWater: Math.min(memory.floor, t.available) });
    memory.floor = t.floor;
    if (!memory.filled) memory.highWater = Math.max(0, memory.highWater - t.lost);
    const evicted = t.excused > 0 ? ` after ${t.excused} evicted` : '';
    if (t.regionFloor) {
      // The region's own floor says it.
    } else if (memory.filled && t.available < t.floor - t.excused) {
      report('floor', undefined, `${t.available} pods available over all regions < ${t.floor}, the sum of the regions' floors${evicted}`);
    } else if (!memory.filled && t.available < memory.highWater) {
      report('floor', undefined, `${t.available} pods available over all regions < ${memory.highWater} available before, while they fill up to ${t.floor}`);
    }
    if (t.available >= t.floor) memory.filled = true;
    else memory.highWater = Math.max(memory.highWater, t.available);
    this.total = memory;
  }

  /** groupBack and groupRestarted: within one rollout the group only moves forward, and keeps its start time. */
  private checkGroupHistory(ed: EdSample, report: Report): void {
    const s = ed.status;
    const before = this.previous?.ed?.status;
    if (s.revision !== undefined && before?.revision === s.revision && (s.currentGroup ?? 0) < (before.currentGroup ?? 0)) {
      report('groupBack', undefined, `rollout ${s.revision} went back from group ${before.currentGroup} to ${s.currentGroup}`);
    }
    // Compared with the state just before: a group the status left (complete, Healthy) may later be entered again
    // with a new start (a resize), but a group that runs keeps its start across writes and agents, until the spec changes.
    if (!s.revision || !s.currentGroup || !s.lastGroupStartTime || s.phase === 'Healthy') return;
    if (before?.revision !== s.revision || before.currentGroup !== s.currentGroup || !before.lastGroupStartTime || before.phase === 'Healthy') return;
    const specChanged = (s.observedGeneration ?? 0) > (before.observedGeneration ?? 0);
    if (before.lastGroupStartTime !== s.lastGroupStartTime && !specChanged) {
      report(
        'groupRestarted',
        undefined,
        `group ${s.revision}/${s.currentGroup} restarted: its start ${before.lastGroupStartTime} became ${s.lastGroupStartTime}`,
      );
    }
  }

  private check(sample: Sample, ed: EdSample, report: Report): void {
    const { strategy, status } = ed;
    const compat = ed.subsetType === 'Deployment';
    const minReady = strategy.minReadySeconds;
    // A completed rollout (Healthy, or converging to counts changed since: core's rolloutCompleted) has no group under
    // way: counts that changed since (Git, moves) are served at once.
    const completed = status.revision === ed.rolloutRevision && rolloutCompleted(status);
    const inProgress = !completed;
    // While a region adopts pods (core/adoption), its ReplicaSet's own first pod leaves while it serves nothing.
    const adopting = status.conditions?.some((c) => c.type === 'Progressing' && c.reason === 'Adopting') ?? false;
    const current = status.revision === ed.rolloutRevision && status.rolloutRegions !== undefined && (status.currentGroup ?? 0) >= 1 && !completed;
    const schedule = current ? groupSchedule(ed, sample.pods) : undefined;
    const prevPods = new Map((this.previous?.pods ?? []).map((p) => [p.uid, p]));
    const nowPods = new Map(sample.pods.map((p) => [p.uid, p]));
    const totals: Totals = { available: 0, floor: 0, excused: 0, lost: 0, rolling: false, regionFloor: false };

    for (const region of ed.regions) {
      // Terminal pods are in neither: they take no room and the ReplicaSet controller replaces them.
      const pods = sample.pods.filter((p) => p.region === region.name && !isPodTerminal(p));
      const live = pods.filter(isPodActive);
      const isNew = (p: PodSample) => p.revision === region.targetRevision;
      const updated = live.filter(isNew).length;
      const available = live.filter((p) => isAvailable(p, minReady, sample.at)).length;
      const budgets = kindBudgets({ strategy, subsetType: ed.subsetType }, region.desired);
      const ceiling = region.desired + budgets.maxSurge;
      // An in-place swap takes its pod out of endpoints: swaps may use a group's worth of unavailability whatever the
      // upgrade mode (core/rollout/replicaset-adapter.ts, move).
      const inPlace = ed.subsetType === 'InplaceSet' || strategy.updateStrategy.type === 'InPlaceIfPossible';
      const floor = region.desired - (inPlace ? Math.max(budgets.maxUnavailable, batchPods(strategy.batchSize, region.desired)) : budgets.maxUnavailable);
      const workload = sample.workloads.find((w) => w.region === region.name);

      const memory = this.regions.get(region.name) ?? { desired: region.desired, floor, filled: false, highWater: 0, shrinking: false };
      if (region.desired < memory.desired) memory.shrinking = true;
      if (floor > memory.floor && memory.filled) {
        memory.filled = false;
        memory.highWater = Math.min(memory.floor, available);
      }
      memory.desired = region.desired;
      memory.floor = floor;
      this.regions.set(region.name, memory);

      // Ceiling.
      // A pod the test evicted through the API is terminating while the ReplicaSet controller already replaces it.
      const total = compat ? cappedByReplicaSet(live, sample.replicaSetReplicas) : pods.filter((p) => !(p.terminating && sample.disrupted?.has(p.uid))).length;
      const replicas = workload?.replicas ?? 0;
      if (memory.shrinking && total <= ceiling && replicas <= ceiling) memory.shrinking = false;
      if (!memory.shrinking && total > ceiling) {
        report(
          'ceiling',
          region.name,
          `${total} pods${compat ? '' : ' (terminating included)'} > ceiling ${ceiling} (desired ${region.desired} + maxSurge ${budgets.maxSurge})`,
        );
      }
      if (!memory.shrinking && replicas > ceiling) report('ceiling', region.name, `workload spec.replicas ${replicas} > ceiling ${ceiling}`);

      // Pods disrupted from outside that stopped being active in this sample (Failed, or deleted by the Eviction API).
      const disrupted = [...prevPods.values()].filter(
        (p) => p.region === region.name && isPodActive(p) && sample.disrupted?.has(p.uid) && !isPodActive(nowPods.get(p.uid) ?? { terminating: true }),
      );
      if (memory.disruptedIn !== ed.rolloutRevision) Object.assign(memory, { disruptedIn: ed.rolloutRevision, disruptedOld: 0 });
      memory.disruptedOld = (memory.disruptedOld ?? 0) + disrupted.filter((p) => !isNew(p)).length;
      const lost = disrupted.filter((p) => isAvailable(p, minReady, sample.at)).length;
      memory.disruptedAvailable = (memory.disruptedAvailable ?? 0) + lost;
      if (!memory.filled) memory.highWater = Math.max(0, memory.highWater - lost);

      // Floor (lowered by what evictions took, as a PodDisruptionBudget would count them: the rollout keeps its own budget).
      const evicted = memory.disruptedAvailable > 0 ? ` after ${memory.disruptedAvailable} evicted` : '';
      if (memory.filled && available < floor - memory.disruptedAvailable) {
        totals.regionFloor = true;
        report(
          'floor',
          region.name,
          `${available} pods available < floor ${floor} (desired ${region.desired} − maxUnavailable ${budgets.maxUnavailable})${evicted}`,
        );
      } else if (!memory.filled && available < memory.highWater) {
        totals.regionFloor = true;
        report('floor', region.name, `${available} pods available < ${memory.highWater} available before, while the region fills up to its floor ${floor}`);
      }
      Object.assign(totals, {
        available: totals.available + available,
        floor: totals.floor + Math.max(0, floor),
        excused: totals.excused + memory.disruptedAvailable,
        lost: totals.lost + lost,
        rolling: totals.rolling || live.some((p) => !isNew(p)),
      });
      if (available >= floor) memory.filled = true;
      else memory.highWater = Math.max(memory.highWater, available);
      // Evictions are made up once the region has back what they took above its floor (at most its desired count): an
      // eviction that left the region at its floor still took the room a swap or removal under way counted on.
      if (available >= Math.min(region.desired, floor + memory.disruptedAvailable)) memory.disruptedAvailable = 0;

      // New-revision pods removed during a rollout.
      // A pod that turns Failed (evicted) was not removed by the rollout; deleting one that had (PodGC, a person) is
      // cleaning up, not a removal either: only active pods that get deleted count, and not those the test evicted.
      const removed = [...prevPods.values()].filter(
        (p) => p.region === region.name && isPodActive(p) && (nowPods.get(p.uid)?.terminating ?? true) && !sample.disrupted?.has(p.uid),
      );
      for (const pod of removed) {
        if (!isNew(pod) || !inProgress || adopting) continue;
        // Excess over the region's share: its count (shrunk) less the old pods its partition keeps (set lower, or a
        // forced exit keeping what runs Ready).
        if (updated >= region.desired - keptOld(region, live.filter((p) => !isNew(p)).length)) continue;
        report(
          'newPodDeleted',
          region.name,
          `new-revision pod ${pod.name} removed while the rollout is ${status.phase ?? 'starting'} (${updated} new pods left, desired ${region.desired})`,
        );
      }

      if (!schedule || !current) continue;
      const group = status.currentGroup ?? 0;
      const scheduled = schedule.regions.find((r) => r.name === region.name);
      if (!scheduled || scheduled.groups === 0) continue;

      if (!compat) {
        // Group target. New pods above a shrunk desired count are surplus the region sheds, not a group's progress.
        // A region with old pods but fewer pods than desired gets the missing ones at once (capacity first, at the only
        // template it has): those count as its group's too.
        const target = targetAtGroup(strategy, scheduled, group);
        const replaced = memory.disruptedOld ?? 0;
        if (memory.startedIn !== ed.rolloutRevision) Object.assign(memory, { startedIn: ed.rolloutRevision, startDesired: region.desired });
        const raised = live.length - updated > 0 ? Math.max(0, region.desired - (memory.startDesired ?? region.desired)) : 0;
        if (!memory.shrinking && Math.min(updated, region.desired) > mostNewAtGroup(target, live.length - updated) + replaced + raised) {
          report(
            'groupTarget',
            region.name,
            `${updated} new-revision pods > target ${target} of group ${group}/${schedule.totalGroups}${replaced > 0 ? ` + ${replaced} evicted old pods replaced` : ''}${raised > 0 ? ` + ${raised} raised since the rollout started` : ''}`,
          );
        }
      } else if (regionGroup(ed, schedule, region.name) > group && inProgress) {
        // Compat mode: a region waiting for its group is left alone.
        if (workload?.paused === false)
          report(
            'waitingRegionTouched',
            region.name,
            `Deployment unpaused while its group ${regionGroup(ed, schedule, region.name)} waits (current group ${group})`,
          );
        if (updated > 0)
          report(
            'waitingRegionTouched',
            region.name,
            `${updated} new-revision pods while its group ${regionGroup(ed, schedule, region.name)} waits (current group ${group})`,
          );
        for (const pod of removed)
          report(
            'waitingRegionTouched',
            region.name,
            `pod ${pod.name} removed while its group ${regionGroup(ed, schedule, region.name)} waits (current group ${group})`,
          );
      }
    }

    this.checkTotal(totals, report);

    // Group advance: the previous group was done when the next one started.
    const before = this.previous?.ed?.status;
    if (!schedule || !current || !before || before.revision !== status.revision) return;
    const from = before.currentGroup ?? 0;
    const to = status.currentGroup ?? 0;
    if (from < 1 || to <= from) return;
    const done = to - 1;
    for (const region of ed.regions) {
      const scheduled = schedule.regions.find((r) => r.name === region.name);
      if (!scheduled || scheduled.groups === 0 || this.regions.get(region.name)?.shrinking) continue;
      const live = sample.pods.filter((p) => p.region === region.name && isPodActive(p));
      const isNew = (p: PodSample) => p.revision === region.targetRevision;
      const newAvailable = live.filter((p) => isNew(p) && isAvailable(p, minReady, sample.at)).length;
      const old = live.filter((p) => !isNew(p)).length;
      if (compat) {
        if (regionGroup(ed, schedule, region.name) > done) continue;
        if (newAvailable < region.desired || old > 0) {
          report(
            'groupAdvance',
            region.name,
            `group ${to} started while region's group ${done} was not done (${newAvailable}/${region.desired} new available, ${old} old)`,
          );
        }
        continue;
      }
      const wantNew = Math.min(targetAtGroup(strategy, scheduled, done), region.desired);
      if (newAvailable < wantNew) {
        report('groupAdvance', region.name, `group ${to} started before group ${done} was available (${newAvailable} new available of ${wantNew})`);
      }
    }
  }
}

type Report = (kind: ViolationKind, region: string | undefined, message: string) => void;

/**
 * Placement and capacity, per region: pods bound only to the region's nodes, and their requests within the nodes'
 * allocatable (see the header for what this can and cannot see).
 */
function checkCapacity(sample: Sample, ed: EdSample, report: Report): void {
  if (!sample.nodes || !sample.regionSelectors) return;
  const nodes = new Map(sample.nodes.map((n) => [n.name, n]));
  for (const region of ed.regions) {
    const selector = sample.regionSelectors[region.name];
    if (!selector) continue;
    const inRegion = (n: NodeSample) => nodeInRegion(n.labels, selector);
    const regionNodes = sample.nodes.filter(inRegion);
    const bound = sample.pods.filter((p) => p.region === region.name && p.node !== undefined);
    for (const pod of bound) {
      const node = nodes.get(pod.node ?? '');
      if (node && !inRegion(node))
        report('placement', region.name, `pod ${pod.name} bound to node ${node.name}, outside region ${region.name} (${JSON.stringify(selector)})`);
    }
    const names = new Set(regionNodes.map((n) => n.name));
    const onRegion = bound.filter((p) => names.has(p.node ?? '') && !isPodTerminal(p));
    const used: Record<string, number> = { pods: onRegion.length };
    for (const pod of onRegion) for (const [k, v] of Object.entries(pod.requests ?? {})) used[k] = (used[k] ?? 0) + v;
    for (const [resource, amount] of Object.entries(used)) {
      const allocatable = regionNodes.reduce((sum, n) => sum + (n.allocatable[resource] ?? 0), 0);
      // Relative slack: quantities are summed as floating point numbers.
      if (amount > allocatable * (1 + 1e-9)) {
        report('capacity', region.name, `${resource}: pods bound to the region's ${regionNodes.length} nodes request ${amount}, allocatable ${allocatable}`);
      }
    }
  }
}

/** The rollout's groups, as core lays them out: a region's partition counts while it runs old pods (core's keptOld). */
function groupSchedule(ed: EdSample, pods: readonly PodSample[]): GroupSchedule {
  const rollout = ed.status.rolloutRegions ?? [];
  const oldPods = (r: EdSample['regions'][number]) => pods.filter((p) => p.region === r.name && isPodActive(p) && p.revision !== r.targetRevision).length;
  return scheduleGroups(
    ed.strategy,
    ed.regionOrder,
    ed.regions.map((r) => ({ name: r.name, replicas: r.desired, changes: rollout.includes(r.name), partition: keptOld(r, oldPods(r)) })),
  );
}

/** Compat mode: the group (1-based) in which a region rolls; groups are whole regions. */
function regionGroup(ed: EdSample, _schedule: GroupSchedule, name: string): number {
  const rollout = ed.regions.filter((r) => (ed.status.rolloutRegions ?? []).includes(r.name));
  if (ed.regionOrder !== 'Sequential') return rollout.some((r) => r.name === name) ? 1 : 0;
  return rollout.findIndex((r) => r.name === name) + 1;
}

/** Checks a whole sequence of samples; every violation found, in order. */
export function checkSamples(samples: readonly Sample[]): Violation[] {
  const checker = new InvariantChecker();
  for (const s of samples) checker.observe(s);
  return checker.violations;
}

// ---------------------------------------------------------------------------------------------------------------
// The watcher: informers on the cluster, one sample per event.

/** A compact record of one distinct state, for reports. */
export interface SampleSummary {
  readonly at: number;
  readonly phase: string | undefined;
  readonly group: string;
  /** Per region: `total/updated/available`. */
  readonly regions: Readonly<Record<string, string>>;
}

export interface InvariantWatch {
  /** Events turned into samples so far. */
  readonly events: () => number;
  /** Of those, the samples the rules ran on (the ExtendedDeployment existed and could be read). */
  readonly checked: () => number;
  /** The picture now, from the watches' caches (not checked: for the end-of-test comparison with Git). */
  readonly latest: () => Sample;
  /** Distinct states seen so far (consecutive identical summaries are kept once). */
  readonly samples: readonly SampleSummary[];
  /** Violations found so far, watch errors included (each watch is restarted after its error). */
  readonly violations: readonly Violation[];
  /** Watches the API server refused to start with 429 and that were restarted: which, when, and how long until they synced again. */
  readonly throttled: readonly string[];
  /** Stops watching; resolves with every violation found. */
  stop(): Promise<Violation[]>;
  /** Declares a pod (uid) disrupted from outside the rollout, before the test evicts it (see Sample.disrupted). */
  disrupt(uid: string): void;
}

export interface InvariantWatchOptions {
  readonly kubeConfig: KubeConfig;
  readonly namespace: string;
  /** The ExtendedDeployment's name. */
  readonly name: string;
  /** The test makes the ExtendedDeployment unreadable on purpose (see InvariantChecker). */
  readonly expectInvalid?: boolean;
  /** Builds the watches (client-node's makeInformer; the watcher's own tests pass fakes). */
  readonly makeInformer?: typeof makeInformer;
}

const GROUP = 'extendeddeployment.io';
const VERSION = 'v1beta1';

/**
 * Starts watching one ExtendedDeployment, its regional ReplicaSets and Deployments, its pods, the nodes and the
 * DeployRegions (Kubernetes watches via client-node's list-watch informers); resolves once every watch is open. Every
 * event, replayed in resourceVersion order about a second after it arrived, samples the whole picture and runs the
 * checks.
 */
export async function start(options: InvariantWatchOptions): Promise<InvariantWatch> {
  const { kubeConfig: kc, namespace, name } = options;
  const core = kc.makeApiClient(CoreV1Api);
  const apps = kc.makeApiClient(AppsV1Api);
  const custom = kc.makeApiClient(CustomObjectsApi);
  const selector = `${NAME_LABEL}=${name}`;
  const checker = new InvariantChecker({ expectInvalid: options.expectInvalid === true });
  const samples: SampleSummary[] = [];
  const watchErrors: Violation[] = [];
  const throttled: string[] = [];
  /** Pods the test evicts (InvariantWatch.disrupt); only grows, read by every sample. */
  const disrupted = new Set<string>();
  const makeWatch = options.makeInformer ?? makeInformer;
  let events = 0;
  let stopped = false;
  let lastKey = '';

  const eds = makeWatch<KubernetesObject>(
    kc,
    `/apis/${GROUP}/${VERSION}/namespaces/${namespace}/extendeddeployments`,
    () =>
      custom.listNamespacedCustomObject({ group: GROUP, version: VERSION, namespace, plural: 'extendeddeployments' }) as Promise<
        KubernetesListObject<KubernetesObject>
      >,
  );
  const replicaSets = makeWatch(
    kc,
    `/apis/apps/v1/namespaces/${namespace}/replicasets`,
    () => apps.listNamespacedReplicaSet({ namespace, labelSelector: selector }),
    selector,
  );
  const deployments = makeWatch(
    kc,
    `/apis/apps/v1/namespaces/${namespace}/deployments`,
    () => apps.listNamespacedDeployment({ namespace, labelSelector: selector }),
    selector,
  );
  const statefulSets = makeWatch(
    kc,
    `/apis/apps/v1/namespaces/${namespace}/statefulsets`,
    () => apps.listNamespacedStatefulSet({ namespace, labelSelector: selector }),
    selector,
  );
  const pods = makeWatch(kc, `/api/v1/namespaces/${namespace}/pods`, () => core.listNamespacedPod({ namespace, labelSelector: selector }), selector);
  const nodes = makeWatch(kc, '/api/v1/nodes', () => core.listNode());
  const regions = makeWatch<KubernetesObject>(
    kc,
    `/apis/${GROUP}/${VERSION}/deployregions`,
    () => custom.listClusterCustomObject({ group: GROUP, version: VERSION, plural: 'deployregions' }) as Promise<KubernetesListObject<KubernetesObject>>,
  );
  const informers = { ed: eds, rs: replicaSets, deploy: deployments, sts: statefulSets, pod: pods, node: nodes, region: regions } as const;
  type Kind = keyof typeof informers;
  let opened = false;

  /** The picture from one view of the objects: the informers' caches (now), or the replayed mirror. */
  const picture = (view: (kind: Kind) => readonly KubernetesObject[], at: number): Sample => {
    const object = view('ed').find((o) => o.metadata?.name === name);
    const reading = object ? edReading(object) : undefined;
    const ed = reading?.ed;
    const compat = ed?.subsetType === 'Deployment';
    const source = view(compat ? 'deploy' : ed?.subsetType === 'StatefulSet' ? 'sts' : 'rs');
    const workloads: WorkloadSample[] = (ed?.regions ?? []).flatMap((r) => {
      const w = source.find((o) => o.metadata?.name === workloadName(name, r.name));
      if (!w) return [];
      const spec = (w as { spec?: { replicas?: number; paused?: boolean; template?: { metadata?: { labels?: Record<string, string> } } } }).spec;
      const keeper = view('rs').find((o) => o.metadata?.labels?.[KEEPER_LABEL] === 'true' && o.metadata.labels[REGION_LABEL] === r.name);
      return [
        {
          region: r.name,
          replicas: spec?.replicas ?? 1,
          revision: spec?.template?.metadata?.labels?.[REVISION_LABEL],
          ...(compat && { paused: spec?.paused === true }),
          ...(keeper && { keeperReplicas: (keeper as { spec?: { replicas?: number } }).spec?.replicas ?? 1 }),
        },
      ];
    });
    const regionSelectors: Record<string, RegionSelector> = {};
    for (const r of view('region')) {
      const spec = (r as { spec?: RegionSelector }).spec;
      if (r.metadata?.name && spec) regionSelectors[r.metadata.name] = spec;
    }
    const replicaSetReplicas = compat
      ? Object.fromEntries(
          view('rs').flatMap((o) => {
            const replicas = (o as { spec?: { replicas?: number } }).spec?.replicas;
            return o.metadata?.uid ? [[o.metadata.uid, replicas ?? 1] as const] : [];
          }),
        )
      : undefined;
    return {
      at,
      ed,
      ...(reading?.unparsed !== undefined && { unparsed: reading.unparsed }),
      workloads,
      ...(replicaSetReplicas && { replicaSetReplicas }),
      pods: view('pod').map((p) => podSample(p as never)),
      nodes: view('node').map((n) => nodeSample(n as never)),
      regionSelectors,
      disrupted,
    };
  };
  const live = (kind: Kind): readonly KubernetesObject[] => (kind === 'node' || kind === 'region' ? informers[kind].list() : informers[kind].list(namespace));

  // Events of different watches arrive in no particular order between them (a pod the ReplicaSet controller created
  // after the agent's status write can arrive before that write). They are held for SETTLE_MS and replayed in
  // resourceVersion order (one etcd orders every write of the lab), so each sample is a state the cluster really had.
  const SETTLE_MS = 1000;
  interface Pending {
    readonly kind: Kind;
    readonly deleted: boolean;
    readonly object: KubernetesObject;
    readonly rv: number;
    readonly receivedAt: number;
    readonly seq: number;
  }
  let pending: Pending[] = [];
  let seq = 0;
  const mirror = Object.fromEntries(Object.keys(informers).map((k) => [k, new Map<string, KubernetesObject>()])) as Record<Kind, Map<string, KubernetesObject>>;
  const mirrorView = (kind: Kind): readonly KubernetesObject[] => [...mirror[kind].values()];
  let lastAt = 0;

  const sample = (at: number) => {
    events++;
    lastAt = Math.max(lastAt, at);
    const s = picture(mirrorView, lastAt);
    checker.observe(s);
    const summary = summarize(s);
    const key = JSON.stringify({ ...summary, at: 0 });
    if (key !== lastKey) {
      samples.push(summary);
      lastKey = key;
    }
  };
  const replay = (all: boolean) => {
    const due = Date.now() - SETTLE_MS;
    const ready = all ? pending : pending.filter((e) => e.receivedAt <= due);
    if (ready.length === 0) return;
    pending = all ? [] : pending.filter((e) => e.receivedAt > due);
    ready.sort((x, y) => x.rv - y.rv || x.seq - y.seq);
    for (const e of ready) {
      const key = `${e.object.metadata?.namespace ?? ''}/${e.object.metadata?.name ?? ''}`;
      const held = mirror[e.kind].get(key);
      // A state older than the one replayed (it arrived more than SETTLE_MS late) must not take the object back.
      if (!e.deleted && held && Number(held.metadata?.resourceVersion) > e.rv) continue;
      if (e.deleted) mirror[e.kind].delete(key);
      else mirror[e.kind].set(key, e.object);
      sample(e.receivedAt);
    }
  };
  const timer = setInterval(() => replay(false), 200);

  for (const [kind, informer] of Object.entries(informers) as [Kind, (typeof informers)[Kind]][]) {
    const push = (deleted: boolean) => (object: KubernetesObject) => {
      if (!opened || stopped) return;
      pending.push({ kind, deleted, object, rv: Number(object.metadata?.resourceVersion ?? 0), receivedAt: Date.now(), seq: seq++ });
    };
    informer.on('add', push(false));
    informer.on('update', push(false));
    informer.on('delete', push(true));
    informer.on('error', (e: unknown) => {
      if (stopped) return;
      // client-node reports an error only when a list or watch failed (a watch's normal end and a 410 are handled
      // without one), and the restart relists: the states in between are never sampled, so the rules did not see
      // them. The run is not fully checked, and the test fails at stopAndReport.
      const message = `${kind} watch: ${e instanceof Error ? e.message : String(e)}`;
      const at = Date.now();
      // client-node words it `HTTP-Code: 429 …` or `Too Many Requests` depending on where the watch failed.
      const refusedToStart = /HTTP-Code: 429\b|Too Many Requests/.test(message);
      if (!refusedToStart) watchErrors.push({ kind: 'watchError', at, message });
      // client-node stops an informer on any error but 410; start it again shortly (it relists and watches on).
      setTimeout(
        () => {
          if (stopped) return;
          void informer.start().then(
            () => void (refusedToStart && throttled.push(`${new Date(at).toISOString()} ${message}: watched again after ${Date.now() - at} ms`)),
            () => undefined,
          );
        },
        refusedToStart ? 1000 : 500,
      );
    });
  }
  await Promise.all(Object.values(informers).map((i) => i.start()));
  // What the initial lists hold, as the replay's starting point.
  for (const kind of Object.keys(informers) as Kind[])
    for (const o of live(kind)) mirror[kind].set(`${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}`, o);
  opened = true;
  sample(Date.now());

  return {
    events: () => events,
    checked: () => checker.checked,
    latest: () => picture(live, Date.now()),
    samples,
    get violations() {
      return [...checker.violations, ...watchErrors];
    },
    throttled,
    async stop() {
      // What is still held is replayed first (it happened before the stop).
      await new Promise((r) => setTimeout(r, SETTLE_MS));
      stopped = true;
      clearInterval(timer);
      replay(true);
      await Promise.all(Object.values(informers).map((i) => i.stop()));
      return [...checker.violations, ...watchErrors];
    },
    disrupt: (uid) => void disrupted.add(uid),
  };
}

/** The per-region picture of a sample, for reports. */
export function summarize(s: Sample): SampleSummary {
  const regions: Record<string, string> = {};
  for (const r of s.ed?.regions ?? []) {
    const pods = s.pods.filter((p) => p.region === r.name && !isPodTerminal(p));
    const live = pods.filter(isPodActive);
    const updated = live.filter((p) => p.revision === r.targetRevision).length;
    const available = live.filter((p) => isAvailable(p, s.ed?.strategy.minReadySeconds ?? 0, s.at)).length;
    regions[r.name] = `${pods.length}/${updated}/${available}`;
  }
  const st = s.ed?.status;
  return { at: s.at, phase: st?.phase, group: `${st?.currentGroup ?? 0}/${st?.totalGroups ?? 0}`, regions };
}

/**
 * Stops the watcher and prints what it saw (`[invariants] <label>: …`): events, and how many of them the rules ran
 * on, distinct states, every violation (watch errors and unreadable objects included), and
 * with `states` (a failed test, or any violation) the last distinct states. Returns the violations for the test to
 * assert on.
 */
export async function stopAndReport(watch: InvariantWatch, label: string, states = false): Promise<Violation[]> {
  const violations = await watch.stop();
  console.log(
    `[invariants] ${label}: ${watch.events()} events, ${watch.checked()} of them checked against ${VIOLATION_KINDS.length} rules, ${watch.samples.length} distinct states, ${violations.length} violations`,
  );
  for (const v of violations) console.log(`[invariants]   ${new Date(v.at).toISOString()} ${v.kind} ${v.region ?? ''}: ${v.message}`);
  for (const t of watch.throttled) console.log(`[invariants]   throttled, not checked meanwhile: ${t}`);
  if (states || violations.length > 0) {
    for (const s of watch.samples.slice(-60))
      console.log(`[invariants]   state ${new Date(s.at).toISOString()} ${s.phase ?? '-'} ${s.group} ${JSON.stringify(s.regions)}`);
  }
  return violations;
}
