import type { RolloutAction } from './actions.js';
import type { GroupSchedule, RegionSchedule } from './groups.js';
import type { RolloutInput } from './planner.js';
import type { Phase } from './reasons.js';
import type { RegionCounts, RegionState } from './snapshot.js';

/**
 * What the last status records of the rollout under way, read only when it is this rollout: the same rollout
 * revision, with its regions recorded.
 */
export interface RolloutRecord {
  /** The regions the rollout changes, fixed when it started. */
  readonly regions: readonly string[];
  /** status.currentGroup as written (0 while the rollout has not started a group). */
  readonly group: number | undefined;
  /** status.lastGroupStartTime (RFC 3339), as written. */
  readonly groupStart: string | undefined;
  readonly phase: Phase | undefined;
  /** The rollout completed (rolloutCompleted): count changes since are served at once. */
  readonly completed: boolean;
}

/** A region with its place in the rollout's global groups. */
export interface ScheduledRegion extends RegionSchedule {
  readonly region: RegionState;
}

/** How far one region is toward what the rollout asks of it now, and the writes that take it further. */
export interface RegionMove {
  /** Writes for this region, in the order they must happen. */
  readonly actions: readonly RolloutAction[];
  /** The region has what its group asks available: the barrier the next group waits for. */
  readonly available: boolean;
  /** Available, and settled there (nothing the group replaces is left). */
  readonly done: boolean;
  /** Why the region cannot act, when it cannot; shown as the rollout's message. */
  readonly blocked?: string;
}

/**
 * What the rollout state machine (session.ts) asks of one kind of regional workload: how its regions are scheduled
 * into groups, what they show, and how to move one toward a group. The state machine holds everything else (the
 * record, the gates, the status and its Events), so every kind rolls out under the same rules. Pure: an adapter is
 * made for one input and answers from it alone.
 */
export interface WorkloadAdapter {
  /** The region's pods by revision and availability, for the status. */
  counts(region: RegionState): RegionCounts;
  /** Why the rollout waits for Git to sync this region's workload, or undefined once it has the rendered template. */
  syncWait(region: RegionState): string | undefined;
  /** Whether the region takes part in a rollout that starts now: it runs something other than its rendered revision. */
  joins(region: RegionState): boolean;
  /** How many global groups a region that takes part needs. */
  groupsOf(region: RegionState): number;
  /**
   * The group the rollout is in (at least 1; called only when there are groups), from the group the status records
   * and what the workloads show: how far the workloads can be trusted over the record depends on their controller.
   */
  currentGroup(schedule: GroupSchedule<ScheduledRegion>): number;
  /**
   * Moves a region toward what global group `group` asks of it (a region outside the rollout toward its replica count)
   * and tells how far it is. Every region's answer together is the barrier the gates read (gates.ts).
   */
  step(region: ScheduledRegion, group: number): RegionMove;
  /**
   * What a region of the rollout does while the rollout holds (pause, abort, confirmation, deadline): nothing that
   * advances it, but its replica count still follows Git and moves (capacity is served during a hold). Regions outside
   * the rollout keep converging through `step`.
   */
  hold(region: ScheduledRegion, group: number): readonly RolloutAction[];
  /** What a region does once the rollout is complete, and whether it has settled (at its revision and count). */
  converge(region: RegionState, totalGroups: number): RegionMove;
  /** What moves in group `group`, for the status message, when the group's number alone does not say it. */
  groupMembers(schedule: GroupSchedule<ScheduledRegion>, group: number): string | undefined;
}

/** Makes the adapter of one kind of workload for one input; `record` is undefined for a rollout that starts now. */
export type AdapterFactory = (input: RolloutInput, record: RolloutRecord | undefined) => WorkloadAdapter;
