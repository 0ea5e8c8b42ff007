import type { DrainRecord } from '../api/traffic.js';

/**
 * Where a revision stands on its way out of the route:
 * - `Serving`: it has weight (or its weight 0 is not yet in an accepted route). It may lose pods to the rollout, but
 *   the rollout must leave it a Ready one: its share would turn into 503s;
 * - `Draining`: its weight has been 0 in an accepted route for less than drainSeconds. None of its pods leaves:
 *   requests in flight finish and load balancers catch up;
 * - `Drained`: drainSeconds have passed since. Its pods may go.
 */
export type DrainState = 'Serving' | 'Draining' | 'Drained';

/** One live revision's drain. */
export interface RevisionDrain {
  readonly revision: string;
  readonly state: DrainState;
  /** When the drain started (ms), while Draining or Drained. */
  readonly since?: number;
}

/** What drain decides for one look. */
export interface DrainInput {
  /** The live revisions: those with pods. */
  readonly revisions: readonly string[];
  /**
   * Each revision's weight in the route's spec as read (a revision without a backendRef has none: 0); undefined when
   * there is no route, and then nothing starts or ends a drain.
   */
  readonly routeWeights: ReadonlyMap<string, number> | undefined;
  /** Whether the route's current generation is accepted by every parent (applied.ts). */
  readonly accepted: boolean;
  /** status.traffic.draining as recorded. */
  readonly recorded: readonly DrainRecord[] | undefined;
  readonly drainSeconds: number;
  readonly now: number;
}

/** The drain of every live revision, and the records to write before any pod leaves. */
export interface DrainDecision {
  /**
   * status.traffic.draining as it must be written. A drain start is recorded before any pod is removed on its account
   * (record before act): an agent that restarts finds when it started, and never counts a drain it did not see start.
   */
  readonly records: readonly DrainRecord[];
  /** True when `records` differ from the recorded ones: the status goes out first. */
  readonly changed: boolean;
  /** Per live revision, in input order. */
  readonly revisions: readonly RevisionDrain[];
  /** The revisions whose pods may go (Drained). */
  readonly removable: readonly string[];
  /** When a Draining revision becomes Drained: the agent must look again then although no object changes. */
  readonly wakeAt: readonly number[];
}

function parseTime(value: string): number | undefined {
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? undefined : ms;
}

/**
 * Decides which revisions drain. A drain starts at the first look that sees the revision's weight 0 in a route every
 * parent accepted at its current generation; it stays started while the weight stays 0 (also while a later generation
 * waits for acceptance: that one has it at 0 too), and ends when the weight comes back (a revert) or the revision has
 * no pods left. An unreadable recorded time counts as now: the drain starts again rather than ends early.
 */
export function decideDrain(input: DrainInput): DrainDecision {
  const recorded = new Map((input.recorded ?? []).map((r) => [r.revision, r]));
  const records: DrainRecord[] = [];
  const revisions: RevisionDrain[] = [];
  const removable: string[] = [];
  const wakeAt: number[] = [];
  const until = (since: number) => since + input.drainSeconds * 1000;

  for (const revision of input.revisions) {
    const record = recorded.get(revision);
    const weight = input.routeWeights === undefined ? undefined : (input.routeWeights.get(revision) ?? 0);
    let since: number | undefined;
    if (record !== undefined && (weight === undefined || weight === 0)) since = parseTime(record.since) ?? input.now;
    else if (weight === 0 && input.accepted) since = input.now;

    if (since === undefined) {
      revisions.push({ revision, state: 'Serving' });
      continue;
    }
    records.push({ revision, since: record !== undefined && parseTime(record.since) !== undefined ? record.since : new Date(since).toISOString() });
    if (input.now >= until(since)) {
      revisions.push({ revision, state: 'Drained', since });
      removable.push(revision);
    } else {
      revisions.push({ revision, state: 'Draining', since });
      wakeAt.push(until(since));
    }
  }
  // In revision order, so that the same drains always write the same status.
  const byRevision = (a: DrainRecord, b: DrainRecord) => (a.revision < b.revision ? -1 : a.revision > b.revision ? 1 : 0);
  records.sort(byRevision);
  const before = [...(input.recorded ?? [])].sort(byRevision);
  const changed = records.length !== before.length || records.some((r, i) => r.revision !== before[i]?.revision || r.since !== before[i]?.since);
  return { records, changed, revisions, removable, wakeAt };
}
