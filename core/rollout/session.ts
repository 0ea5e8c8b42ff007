import { ProgressingReason } from '../api/conditions.js';
import type { ExtendedDeploymentStatus } from '../api/extended-deployment.js';
import type { AdoptionPlan } from '../adoption/adoption.js';
import type { RolloutAction } from './actions.js';
import { decideGate, type Barrier, type Gate } from './gates.js';
import type { BarrierPosition } from '../traffic/look.js';
import { groupRecordedAhead } from './group-record.js';
import { layoutGroups, regionOrderOf, type GroupSchedule } from './groups.js';
import { keptInRegion, keptOldOf } from './partition.js';
import type { RolloutInput, RolloutPlan } from './planner.js';
import { gateActions } from './readiness-gate.js';
import { Phases, RolloutEventReason, type Phase } from './reasons.js';
import type { RegionCounts, RegionState } from './snapshot.js';
import { buildStatus, rolloutCompleted } from './status.js';
import type { AdapterFactory, RolloutRecord, ScheduledRegion, WorkloadAdapter } from './workload-adapter.js';

/** Where the rollout stands after this look, as the status records it. */
interface Outcome {
  readonly phase: Phase;
  readonly group: number;
  readonly groupStart: string | undefined;
  readonly reason: ProgressingReason;
  readonly message: string;
}

/** What every outcome of one look shares. */
interface Session {
  readonly input: RolloutInput;
  /** The regions whole (withKeeperPods), for the status and the readiness gates. */
  readonly whole: readonly RegionState[];
  readonly counts: ReadonlyMap<string, RegionCounts>;
  readonly rolloutRegions: readonly string[];
  readonly totalGroups: number;
}

/**
 * The status's record of the rollout under way, when it records this rollout revision and its regions; with the group
 * a regional ReplicaSet records past it (group-record.ts), whose scale-down started that group before the status said
 * so.
 */
function recordOf(input: RolloutInput): RolloutRecord | undefined {
  const prev = input.status;
  if (prev?.revision !== input.rolloutRevision || prev.rolloutRegions === undefined) return undefined;
  const completed = rolloutCompleted(prev);
  const ahead = completed ? undefined : groupRecordedAhead(input);
  if (ahead !== undefined) return { regions: prev.rolloutRegions, group: ahead.group, groupStart: ahead.groupStart, phase: Phases.Progressing, completed };
  return { regions: prev.rolloutRegions, group: prev.currentGroup, groupStart: prev.lastGroupStartTime, phase: prev.phase, completed };
}

/**
 * One look at a rollout, whatever its workload kind: `adapterFor` answers what differs between kinds
 * (workload-adapter.ts), this decides the rest. In order: a rollout the status does not record yet takes the regions
 * that run another revision and those that start from zero (`growing`), fixed from then on; while a region's workload lacks the rendered template the rollout
 * waits for the sync; otherwise it is in a group (the adapter reads it from the record and the workloads), and the
 * gate (gates.ts) decides from every region's progress toward that group (as its adapter judges it) whether the
 * rollout completes, holds, starts the next group or goes on with this one. Regions outside the rollout only converge
 * to their replica count, also while it holds.
 */
export function planSession(
  input: RolloutInput,
  adapterFor: AdapterFactory,
  growing: ReadonlySet<string> = new Set(),
  fleetWait?: { readonly message: string },
  barrierAt?: (at: BarrierPosition) => Barrier | undefined,
): RolloutPlan {
  const record = recordOf(input);
  const adapter = adapterFor(input, record);
  const rolloutRegions = record?.regions ?? input.regions.filter((r) => adapter.joins(r) || growing.has(r.name)).map((r) => r.name);
  const schedule: GroupSchedule<ScheduledRegion> = layoutGroups(
    regionOrderOf(input.ed.spec),
    input.regions.map((region) => {
      const rolling = rolloutRegions.includes(region.name);
      // Laid out on the whole region: the old pods its keeper makes are kept ones too (keeper.ts), so the groups stay the
      // same as the keeper makes them.
      return {
        name: region.name,
        replicas: region.desired + (region.keeperServes ?? 0),
        partition: rolling ? keptInRegion(region) : 0,
        groups: rolling ? adapter.groupsOf(region) : 0,
        region,
      };
    }),
  );
  // A completed rollout keeps the groups it completed: counts changed since (Git, moves) are no groups of its own.
  const totalGroups = record?.completed ? (input.status?.totalGroups ?? schedule.totalGroups) : schedule.totalGroups;
  // The status, the readiness gates and the requeue see each region whole: its keeper's pods and the share they serve.
  const whole = input.regions.map(withKeeperPods);
  const session: Session = { input, whole, counts: new Map(whole.map((r) => [r.name, adapter.counts(r)])), rolloutRegions, totalGroups };

  if (input.adoption?.open) return adopting(session, input.adoption);

  const waiting = input.regions.map((r) => adapter.syncWait(r)).find((message) => message !== undefined);
  if (waiting !== undefined) {
    // The status already records the new rollout (revision, regions); a rollout that has not started has no group
    // yet. Carrying the previous rollout's group over would make the new one start in that group once synced.
    return finish(
      session,
      { phase: Phases.Progressing, group: record?.group ?? 0, groupStart: record?.groupStart, reason: ProgressingReason.WaitingForSync, message: waiting },
      [],
    );
  }

  // Not started: no status records this rollout, or it records it without a group (it waited for the sync).
  if (fleetWait !== undefined && (record?.group ?? 0) === 0 && input.regions.some((r) => adapter.joins(r))) {
    return waitingForFleet(session, schedule, adapter, fleetWait.message);
  }

  const group = schedule.totalGroups === 0 ? 0 : adapter.currentGroup(schedule);
  // The group the status records keeps its start (and so its progress deadline); a group first seen now starts now, and
  // so does the group on a spec the agent has not seen yet: any change from Git (a fix, more replicas, a longer
  // deadline) restarts the deadline, which releases a Degraded rollout.
  const groupStart = record?.groupStart !== undefined && group === record.group && !specChanged(input) ? Date.parse(record.groupStart) : input.now;
  const steps = schedule.regions.map((scheduled) => ({ scheduled, move: adapter.step(scheduled, group) }));
  // A completed rollout stays complete: a count raised since (a traffic peak, replicas moved here) would otherwise
  // reopen its groups, and wait for their approvals.
  const groupAvailable = steps.every((s) => s.move.available);
  const groupDone = steps.every((s) => s.move.done);
  const held = input.controls.paused || input.controls.aborted || input.ed.spec.strategy.pause;
  // Traffic and analysis look at every group, also a completed rollout's last (its final weights, its drains).
  const barrier = barrierAt?.({ group, totalGroups: schedule.totalGroups, groupAvailable: groupAvailable || groupDone, held });
  const gate: Gate = record?.completed
    ? { kind: 'complete' }
    : decideGate({
        strategy: input.ed.spec.strategy,
        rolloutRevision: input.rolloutRevision,
        controls: input.controls,
        now: input.now,
        group,
        totalGroups: schedule.totalGroups,
        groupAvailable,
        groupDone,
        groupStart,
        barrier,
      });

  if (gate.kind === 'complete') {
    const settled = input.regions.map((r) => adapter.converge(r, session.totalGroups));
    const kept = input.regions.reduce((sum, r) => sum + keptOldOf(r) + (r.keeperServes ?? 0), 0);
    return finish(
      session,
      settled.every((s) => s.done)
        ? {
            phase: Phases.Healthy,
            group: session.totalGroups,
            groupStart: undefined,
            reason: ProgressingReason.RolloutComplete,
            message:
              kept > 0
                ? `every region runs its rendered revision but the ${kept} pods partitions keep on previous revisions`
                : 'every region runs its rendered revision',
          }
        : {
            phase: Phases.Progressing,
            group: session.totalGroups,
            groupStart: undefined,
            reason: ProgressingReason.Scaling,
            message: 'regions are converging to their replica counts',
          },
      settled.flatMap((s) => s.actions),
    );
  }
  if (gate.kind === 'hold') {
    const actions = steps.flatMap(({ scheduled, move }) => (rolloutRegions.includes(scheduled.name) ? adapter.hold(scheduled, group) : move.actions));
    return finish(session, { phase: gate.phase, group, groupStart: iso(groupStart), reason: gate.reason, message: gate.message }, actions);
  }
  const advance = gate.kind === 'advance';
  const current = advance ? group + 1 : group;
  const moves = advance ? schedule.regions.map((scheduled) => adapter.step(scheduled, current)) : steps.map((s) => s.move);
  const blocked = moves.find((m) => m.blocked)?.blocked;
  const members = adapter.groupMembers(schedule, current);
  return finish(
    session,
    {
      phase: Phases.Progressing,
      group: current,
      groupStart: iso(advance ? input.now : groupStart),
      reason: ProgressingReason.GroupProgressing,
      message: blocked ?? `group ${current} of ${schedule.totalGroups} in progress${members === undefined ? '' : `: ${members}`}`,
    },
    moves.flatMap((m) => m.actions),
  );
}

/** The spec changed since the status was written (metadata.generation moved past status.observedGeneration). */
function specChanged(input: RolloutInput): boolean {
  const observed = input.status?.observedGeneration;
  return observed !== undefined && input.generation > observed;
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

/**
 * While a region adopts pods (core/adoption), the adoption's steps are the only writes: the region's ReplicaSet must
 * not follow its count meanwhile, and the rollout is not recorded yet, so that it starts afterwards from the pods
 * adopted (those that run another revision join it), with its own Events.
 */
function adopting(session: Session, adoption: AdoptionPlan): RolloutPlan {
  const plan = finish(
    session,
    { phase: Phases.Progressing, group: 0, groupStart: undefined, reason: ProgressingReason.Adopting, message: adoption.message },
    adoption.actions,
  );
  return { ...plan, status: unrecorded(plan.status, session.input.status), events: adoption.events };
}

/** A status that does not record the rollout about to start: the previous rollout's record stays as it was. */
function unrecorded(status: ExtendedDeploymentStatus, previous: ExtendedDeploymentStatus | undefined): ExtendedDeploymentStatus {
  const { revision: _revision, rolloutRegions: _regions, rolloutStartTime: _start, lastGroupStartTime: _group, ...rest } = status;
  return {
    ...rest,
    ...(previous?.revision !== undefined && { revision: previous.revision }),
    ...(previous?.rolloutRegions !== undefined && { rolloutRegions: previous.rolloutRegions }),
    ...(previous?.rolloutStartTime !== undefined && { rolloutStartTime: previous.rolloutStartTime }),
  };
}

/**
 * A fleet member's rollout toward a new template waits for the earlier waves (core/fleet/gate.ts). Like an adoption,
 * the rollout is not recorded yet, so it starts afterwards with its own Events and a progress deadline that the wait did
 * not use up; meanwhile the regions it would change hold (no new pods for it, their counts still served) and the others
 * follow their counts.
 */
function waitingForFleet(session: Session, schedule: GroupSchedule<ScheduledRegion>, adapter: WorkloadAdapter, message: string): RolloutPlan {
  const actions = schedule.regions.flatMap((scheduled) =>
    session.rolloutRegions.includes(scheduled.name) ? adapter.hold(scheduled, 0) : adapter.step(scheduled, 0).actions,
  );
  const plan = finish(session, { phase: Phases.Progressing, group: 0, groupStart: undefined, reason: ProgressingReason.WaitingForFleet, message }, actions);
  // The rollout starts when the gate opens: its RolloutStarted Event is reported then, with the status that records it.
  return { ...plan, status: unrecorded(plan.status, session.input.status), events: plan.events.filter((e) => e.reason !== RolloutEventReason.RolloutStarted) };
}

/**
 * The plan of one outcome: the status with its Events, and the actions after those of the readiness gates (which
 * follow the pods alone, see readiness-gate.ts).
 */
function finish(session: Session, outcome: Outcome, actions: readonly RolloutAction[]): RolloutPlan {
  const { input } = session;
  const { status, events } = buildStatus({
    ed: input.ed,
    generation: input.generation,
    rolloutRevision: input.rolloutRevision,
    regions: session.whole,
    counts: session.counts,
    previous: input.status,
    rolloutRegions: session.rolloutRegions,
    totalGroups: session.totalGroups,
    now: input.now,
    adoptions: input.adoption?.entries,
    ...outcome,
  });
  return { actions: [...gateActions(session.whole), ...actions], status, events };
}

/** A region as the rollout planned it, with its keeper's pods and the share they serve added back (keeper.ts). */
export function withKeeperPods(region: RegionState): RegionState {
  if (!region.keeper) return region;
  return { ...region, desired: region.desired + (region.keeperServes ?? 0), pods: [...region.pods, ...region.keeper.pods] };
}
