/**
 * The pure parts of bench/peers (no cluster, no I/O; unit-tested in test/unit/peers-figures.test.ts): the mapping of an
 * ExtendedDeployment's group targets onto Argo Rollouts' setWeight steps, the audit log's events parsed and grouped,
 * the reaction of a controller to a step's pods being available, rounds pooled, ratios.
 */
import type { RssSplit } from './agent-child.js';
import { median, percentile } from './figures.js';

/**
 * Argo Rollouts' setWeight steps that move exactly the pods of `targets` (new-revision pods after each group, as
 * core/rollout/groups.ts computes them) for a rollout of `replicas` pods. Without a traffic router Argo Rollouts scales
 * the canary ReplicaSet to the count whose share of `replicas` is nearest to the weight (utils/replicaset/canary.go,
 * approximateWeightedCanaryStableReplicaCounts), so a weight maps exactly only when target × 100 / replicas is whole:
 * anything else throws rather than compare different steps.
 */
export function canaryWeights(targets: readonly number[], replicas: number): number[] {
  return targets.map((target) => {
    if (!Number.isInteger(target) || target < 1 || target > replicas) throw new Error(`step target ${target} is not within 1..${replicas}`);
    const weight = (target * 100) / replicas;
    if (!Number.isInteger(weight)) throw new Error(`no setWeight moves exactly ${target} of ${replicas} pods (${weight.toFixed(2)} %)`);
    return weight;
  });
}

/** The part of one audit event (JSON line of the API server's audit log, level Metadata or more) the bench reads. */
export interface AuditEvent {
  readonly user: string;
  readonly verb: string;
  /** `resource` or `resource/subresource`. */
  readonly resource: string;
  readonly namespace: string | undefined;
  readonly name: string | undefined;
  /** requestReceivedTimestamp (ms). */
  readonly received: number;
  /** stageTimestamp of ResponseComplete (ms). */
  readonly completed: number;
  readonly code: number | undefined;
  /** spec.replicas of the object a ReplicaSet write returned (audited at RequestResponse level); else undefined. */
  readonly replicas?: number | undefined;
}

/** A ResponseComplete (or Panic) event of the audit log; undefined for other stages and other lines. */
export function parseAuditEvent(line: string): AuditEvent | undefined {
  if (!line.startsWith('{')) return undefined;
  const e = JSON.parse(line) as {
    stage?: string;
    verb?: string;
    user?: { username?: string };
    objectRef?: { namespace?: string; name?: string; resource?: string; subresource?: string };
    responseStatus?: { code?: number };
    requestReceivedTimestamp?: string;
    stageTimestamp?: string;
    responseObject?: { kind?: string; spec?: { replicas?: number } };
  };
  if ((e.stage !== 'ResponseComplete' && e.stage !== 'Panic') || !e.verb || !e.requestReceivedTimestamp || !e.stageTimestamp) return undefined;
  const ref = e.objectRef;
  return {
    user: e.user?.username ?? '',
    verb: e.verb,
    resource: ref?.resource ? `${ref.resource}${ref.subresource ? `/${ref.subresource}` : ''}` : '(non-resource)',
    namespace: ref?.namespace,
    name: ref?.name,
    received: Date.parse(e.requestReceivedTimestamp),
    completed: Date.parse(e.stageTimestamp),
    code: e.responseStatus?.code,
    ...(e.responseObject?.kind === 'ReplicaSet' && { replicas: e.responseObject.spec?.replicas ?? 1 }),
  };
}

/**
 * The ReplicaSet writes of `events` that changed a ReplicaSet's spec.replicas (its creation with pods included; one
 * created at 0 starts none, as Argo Rollouts creates its canary before scaling it): the scalings, as the API server
 * returned them, in the order it completed them. Writes that changed something else (annotations, labels) are left out.
 */
export function scaleWrites(events: readonly AuditEvent[]): AuditEvent[] {
  const last = new Map<string, number>();
  const out: AuditEvent[] = [];
  for (const e of [...events].sort((a, b) => a.completed - b.completed)) {
    if (e.replicas === undefined || !e.resource.startsWith('replicasets') || !AUDIT_WRITE_VERBS.has(e.verb)) continue;
    const key = `${e.namespace}/${e.name}`;
    if ((last.get(key) ?? 0) !== e.replicas) out.push(e);
    last.set(key, e.replicas);
  }
  return out;
}

export const AUDIT_WRITE_VERBS: ReadonlySet<string> = new Set(['create', 'update', 'patch', 'delete', 'deletecollection']);

/** Requests of `user` received in [from, to] grouped by `verb resource`, each count divided by `per` (rollouts). */
export function requestsByVerbResource(events: readonly AuditEvent[], user: string, from: number, to: number, per: number): Map<string, number> {
  const out = new Map<string, number>();
  for (const e of events) {
    if (e.user !== user || e.received < from || e.received > to) continue;
    const key = `${e.verb} ${e.resource}`;
    out.set(key, (out.get(key) ?? 0) + 1);
  }
  for (const [k, v] of out) out.set(k, v / per);
  return out;
}

/** Whether an object name belongs to rollout `rollout`: itself, its ReplicaSets (`<name>-…`). */
export const belongsTo = (name: string | undefined, rollout: string) => name === rollout || (name?.startsWith(`${rollout}-`) ?? false);

/**
 * For each step of one rollout: from the instant its pods were available (the `targets[i]`-th new pod available, of
 * `available`, the instants each new pod became available) to the first of `writes` (the controller's write instants
 * for this rollout) after it. Steps whose pods never all became available, or that no write followed, are left out.
 */
export function stepReactions(available: readonly number[], targets: readonly number[], writes: readonly number[]): number[] {
  const a = [...available].sort((x, y) => x - y);
  const w = [...writes].sort((x, y) => x - y);
  const out: number[] = [];
  for (const target of targets) {
    const at = a[target - 1];
    if (at === undefined) continue;
    const next = w.find((t) => t > at);
    if (next !== undefined) out.push(next - at);
  }
  return out;
}

/**
 * Where one rollout's wall time (v2 apply at `applied` → seen done at `done`) went at its two ends: `start`, from the
 * apply to the first of `scalings` (the controller's changes of the rollout's ReplicaSets' counts) after it, the
 * controller taking up the change; `end`, from its last step's pods being available (the `last`-th of `available`) to
 * done, the controller finishing (the old ReplicaSet at 0, the status, the last pods gone). What lies between is the
 * steps: the lab starting pods and making them Ready, minReadySeconds, and the reactions. Either is left out when
 * unknown.
 */
export function wallEnds(
  applied: number,
  done: number | undefined,
  available: readonly number[],
  last: number,
  scalings: readonly number[],
): { start?: number; end?: number } {
  const first = Math.min(...scalings.filter((t) => t >= applied));
  const lastAvailable = [...available].sort((x, y) => x - y)[last - 1];
  return {
    ...(Number.isFinite(first) && { start: first - applied }),
    ...(done !== undefined && lastAvailable !== undefined && { end: done - lastAvailable }),
  };
}

/** How long from `now` (epoch ms) until the clock is `offsetMs` past a whole second (0 when it is now). */
export function untilSecondOffset(now: number, offsetMs: number): number {
  return (((offsetMs - now) % 1000) + 1000) % 1000;
}

/**
 * A count per rollout as the table prints it: one decimal, or two significant digits below 1, so that two small
 * figures (a run's one list and watch over 200 rollouts) do not both print as 0.0 beside a ratio of 2.00; `-` unknown.
 */
export function perRollout(v: number): string {
  if (!Number.isFinite(v)) return '-';
  return v === 0 || Math.abs(v) >= 1 ? v.toFixed(1) : v.toPrecision(2);
}

/** `ours / theirs` with two decimals; `-` when either is unknown or theirs is 0 (and ours is not). */
export function ratio(ours: number, theirs: number): string {
  if (!Number.isFinite(ours) || !Number.isFinite(theirs)) return '-';
  if (theirs === 0) return ours === 0 ? '1.00' : '-';
  return (ours / theirs).toFixed(2);
}

/** One controller's raw figures from one round of one scale (n rollouts at once). */
export interface RoundSamples {
  /** Per rollout, v2 apply → done (ms). */
  readonly walls: readonly number[];
  /** Per rollout, v2 apply → the controller's first scaling, and its last step's pods available → done (wallEnds). */
  readonly starts: readonly number[];
  readonly ends: readonly number[];
  /** Per step, its pods available → the controller's next write to the rollout (ms). */
  readonly reactions: readonly number[];
  /** Per step, its pods available → the controller's next change of a ReplicaSet's count (ms). */
  readonly scalings: readonly number[];
  /** API requests per rollout by `verb resource` (requestsByVerbResource). */
  readonly byVerb: ReadonlyMap<string, number>;
  /** The controller's CPU seconds over the round's rollout window. */
  readonly cpuSeconds: number;
  /** The controller's peak RSS for the round (MiB). */
  readonly peakMiB: number;
  /** What its highest sampled RSS was made of (MiB), when sampled. */
  readonly peakSplit?: Pick<RssSplit, 'anonMiB' | 'fileMiB'> | undefined;
}

/** One controller's figures at one scale, its rounds pooled. */
export interface PooledFigures {
  readonly wallP50: number;
  readonly wallP99: number;
  readonly startP50: number;
  readonly endP50: number;
  readonly reactionP50: number;
  readonly reactionP99: number;
  /** Steps whose reaction was measured, over every round. */
  readonly reactions: number;
  readonly scaleP50: number;
  readonly scaleP99: number;
  /** Requests per rollout by `verb resource`, the mean over rounds. */
  readonly byVerb: Map<string, number>;
  /** CPU seconds of a round (n rollouts), the median over rounds. */
  readonly cpu: number;
  /** Peak RSS of a round, the median over rounds. */
  readonly peak: number;
  /** Each round's CPU seconds and peak RSS, in the order run. */
  readonly cpuRounds: readonly number[];
  readonly peakRounds: readonly number[];
  /** The anonymous and file-backed parts of the highest sampled RSS, each the median over the rounds sampled. */
  readonly peakAnon: number;
  readonly peakFile: number;
}

/**
 * The rounds of one scale as one sample: the rollouts and steps of every round pooled before taking percentiles (one
 * rollout at once gives one wall time per round: its p50 over one round is a single draw), requests per rollout
 * averaged, and the per-round totals (CPU, peak RSS) as their median.
 */
export function poolRounds(rounds: readonly RoundSamples[]): PooledFigures {
  const pooled = (get: (r: RoundSamples) => readonly number[]) => rounds.flatMap(get).sort((a, b) => a - b);
  const walls = pooled((r) => r.walls);
  const reactions = pooled((r) => r.reactions);
  const scalings = pooled((r) => r.scalings);
  const byVerb = new Map<string, number>();
  for (const r of rounds) for (const [k, v] of r.byVerb) byVerb.set(k, (byVerb.get(k) ?? 0) + v / rounds.length);
  const cpuRounds = rounds.map((r) => r.cpuSeconds);
  const peakRounds = rounds.map((r) => r.peakMiB);
  const splits = rounds.flatMap((r) => (r.peakSplit ? [r.peakSplit] : []));
  return {
    wallP50: percentile(walls, 50),
    wallP99: percentile(walls, 99),
    startP50: percentile(
      pooled((r) => r.starts),
      50,
    ),
    endP50: percentile(
      pooled((r) => r.ends),
      50,
    ),
    reactionP50: percentile(reactions, 50),
    reactionP99: percentile(reactions, 99),
    reactions: reactions.length,
    scaleP50: percentile(scalings, 50),
    scaleP99: percentile(scalings, 99),
    byVerb,
    cpu: median(cpuRounds),
    peak: median(peakRounds),
    cpuRounds,
    peakRounds,
    peakAnon: median(splits.map((x) => x.anonMiB)),
    peakFile: median(splits.map((x) => x.fileMiB)),
  };
}
