import { describe, expect, it } from 'vitest';
import type { ExtendedDeploymentStatus } from '../api/extended-deployment.js';
import { planRollout, type RolloutInput } from './planner.js';
import type { DeploymentProgress, RegionState } from './snapshot.js';
import { podState, rolloutInput, webEd } from './test-support.js';

const T0 = Date.UTC(2026, 0, 1);
const ed = (strategy: Record<string, unknown> = {}) =>
  webEd(
    [
      { name: 'a', replicas: 3 },
      { name: 'b', replicas: 2 },
    ],
    strategy,
    'Deployment',
  );

/** A region whose Deployment reports `updated` of `desired` pods at the new template. */
function region(name: string, desired: number, updated: number, paused: boolean, extra: Partial<DeploymentProgress> = {}, replicas = desired): RegionState {
  const deployment: DeploymentProgress = {
    paused,
    generation: 2,
    observedGeneration: 2,
    replicas: desired,
    updatedReplicas: updated,
    readyReplicas: desired,
    availableReplicas: desired,
    ...extra,
  };
  return { name, desired, targetRevision: 'new', workload: { name: `web-${name}`, templateRevision: 'new', replicas, deployment }, pods: [] };
}
const input = (
  regions: RegionState[],
  status?: ExtendedDeploymentStatus,
  strategy: Record<string, unknown> = {},
  controls: Partial<RolloutInput['controls']> = {},
): RolloutInput => rolloutInput(ed(strategy), regions, T0, status, controls);
const writes = (
  regions: RegionState[],
  status?: ExtendedDeploymentStatus,
  strategy?: Record<string, unknown>,
  controls?: Partial<RolloutInput['controls']>,
) => {
  const plan = planRollout(input(regions, status, strategy, controls));
  return {
    plan,
    writes: plan.actions.map((a) =>
      a.kind === 'setPaused' ? `${a.workload} paused=${a.paused}` : a.kind === 'scale' ? `${a.workload} replicas=${a.replicas}` : a.kind,
    ),
  };
};
const inGroup = (group: number): ExtendedDeploymentStatus => ({
  revision: 'R1',
  rolloutRegions: ['a', 'b'],
  currentGroup: group,
  totalGroups: 2,
  phase: 'Progressing',
  lastGroupStartTime: new Date(T0).toISOString(),
});

describe('compat mode: native Deployments, the agent owns replicas and paused', () => {
  it('rolls one region at a time by default: only the first region is unpaused', () => {
    const { plan, writes: w } = writes([region('a', 3, 0, true), region('b', 2, 0, true)]);
    expect(w).toEqual(['web-a paused=false']);
    expect(plan.status).toMatchObject({ phase: 'Progressing', currentGroup: 1, totalGroups: 2, rolloutRegions: ['a', 'b'] });
  });

  it('pauses the finished region and unpauses the next one', () => {
    const { plan, writes: w } = writes([region('a', 3, 3, false), region('b', 2, 0, true)], inGroup(1));
    expect(w).toEqual(['web-a paused=true', 'web-b paused=false']);
    expect(plan.status.currentGroup).toBe(2);
  });

  it('does not count a region as done before its Deployment observed the new generation', () => {
    const { writes: w } = writes([region('a', 3, 3, false, { observedGeneration: 1 }), region('b', 2, 0, true)], inGroup(1));
    expect(w).toEqual([]);
  });

  it('waits for approval between regions with every Deployment paused', () => {
    const { plan, writes: w } = writes([region('a', 3, 3, false), region('b', 2, 0, true)], inGroup(1), { needWaitingForConfirm: true });
    expect(w).toEqual(['web-a paused=true']);
    expect(plan.status.phase).toBe('WaitingForConfirmation');
  });

  it("keeps a group it held for approval done while pausing bumps the Deployment's generation (never unpauses it)", () => {
    const held: ExtendedDeploymentStatus = { ...inGroup(1), phase: 'WaitingForConfirmation' };
    // The agent's pause is in the cache; the Deployment controller has not observed that generation yet.
    const { plan, writes: w } = writes([region('a', 3, 3, true, { generation: 3, observedGeneration: 2 }), region('b', 2, 0, true)], held, {
      needWaitingForConfirm: true,
    });
    expect(w).toEqual([]);
    expect(plan.status.phase).toBe('WaitingForConfirmation');
  });

  it("keeps a completed rollout complete while the last region's pause is not yet observed", () => {
    const healthy: ExtendedDeploymentStatus = { ...inGroup(2), phase: 'Healthy' };
    const { plan, writes: w } = writes([region('a', 3, 3, true), region('b', 2, 2, true, { generation: 3, observedGeneration: 2 })], healthy);
    expect(w).toEqual([]);
    expect(plan.status.phase).toBe('Healthy');
  });

  it('rolls every region together with regionOrder Parallel', () => {
    expect(writes([region('a', 3, 0, true), region('b', 2, 0, true)], undefined, { regionOrder: 'Parallel' }).writes).toEqual([
      'web-a paused=false',
      'web-b paused=false',
    ]);
  });

  it('holds by pausing every Deployment on edctl pause', () => {
    const { plan, writes: w } = writes([region('a', 3, 1, false), region('b', 2, 0, true)], inGroup(1), {}, { paused: true });
    expect(w).toEqual(['web-a paused=true']);
    expect(plan.status.phase).toBe('Paused');
  });

  it('stops as Degraded after the deadline, pausing the region in progress', () => {
    const late = { ...inGroup(1), lastGroupStartTime: new Date(T0 - 301_000).toISOString() };
    const { plan, writes: w } = writes([region('a', 3, 1, false), region('b', 2, 0, true)], late);
    expect(w).toEqual(['web-a paused=true']);
    expect(plan.status.phase).toBe('Degraded');
  });

  it('names the pod that holds a Degraded region and offers no forced exit: Deployment regions take no partition', () => {
    const late = { ...inGroup(1), lastGroupStartTime: new Date(T0 - 301_000).toISOString() };
    const stuck = { ...region('a', 3, 1, false), pods: [podState('web-a-x1', { revision: 'new', createdAt: T0 - 300_000 })] };
    const { plan } = writes([stuck, region('b', 2, 0, true)], late);
    const message = plan.status.conditions?.find((c) => c.type === 'Progressing')?.message ?? '';
    expect(message).toMatch(/not Ready: web-a-x1/);
    expect(message).not.toMatch(/forced exit/);
  });

  it('makes no writes in steady state, and pauses a Deployment Git just created (so the next template waits)', () => {
    expect(writes([region('a', 3, 3, true), region('b', 2, 2, true)]).writes).toEqual([]);
    const fresh = writes([region('a', 3, 3, false), region('b', 2, 2, true)]);
    expect(fresh.writes).toEqual(['web-a paused=true']);
    expect(fresh.plan.status.phase).toBe('Healthy');
  });

  it('scales to the distributed count even while paused', () => {
    expect(writes([region('a', 3, 3, true, {}, 1), region('b', 2, 2, true)]).writes).toEqual(['web-a replicas=3']);
  });

  // Git changes the template of paused Deployments; their status still describes the old template until the
  // Deployment controller observes the new generation (updatedReplicas then still counts the old pods).
  const oldPods = (name: string, n: number): RegionState['pods'] =>
    Array.from({ length: n }, (_, i) => ({
      name: `${name}-${i}`,
      uid: `${name}-${i}`,
      revision: 'old',
      assigned: true,
      running: true,
      ready: true,
      readySince: T0 - 60_000,
      terminating: false,
      markedOld: false,
    }));
  const healthyBefore: ExtendedDeploymentStatus = { revision: 'R0', rolloutRegions: [], currentGroup: 0, totalGroups: 0, phase: 'Healthy' };

  it('starts a rollout seen before the Deployment controller observed the new template, with its regions from the pods', () => {
    const staleStatus = { generation: 3, observedGeneration: 2 };
    const a = { ...region('a', 3, 3, true, staleStatus), pods: oldPods('a', 3) };
    const b = { ...region('b', 2, 2, true, staleStatus), pods: oldPods('b', 2) };
    const { plan, writes: w } = writes([a, b], healthyBefore);
    expect(plan.status).toMatchObject({ revision: 'R1', rolloutRegions: ['a', 'b'], totalGroups: 2, currentGroup: 1, phase: 'Progressing' });
    expect(w).toEqual(['web-a paused=false']);
  });

  it("a rollout seen before its Deployments synced records its own regions, not the previous rollout's, and then starts", () => {
    const unsynced = (r: RegionState): RegionState => ({ ...r, workload: r.workload && { ...r.workload, templateRevision: 'old' } });
    const a = { ...region('a', 3, 3, true), pods: oldPods('a', 3) };
    const b = { ...region('b', 2, 2, true), pods: oldPods('b', 2) };
    const waiting = writes([unsynced(a), unsynced(b)], healthyBefore);
    expect(waiting.writes).toEqual([]);
    expect(waiting.plan.status).toMatchObject({ revision: 'R1', rolloutRegions: ['a', 'b'], totalGroups: 2, currentGroup: 0 });
    expect(waiting.plan.status.conditions?.[0]?.reason).toBe('WaitingForSync');
    // Synced (the controller has observed the template: nothing updated yet): group 1 starts with region a.
    const next = writes(
      [
        { ...region('a', 3, 0, true), pods: oldPods('a', 3) },
        { ...region('b', 2, 0, true), pods: oldPods('b', 2) },
      ],
      waiting.plan.status,
    );
    expect(next.writes).toEqual(['web-a paused=false']);
    expect(next.plan.status).toMatchObject({ currentGroup: 1, totalGroups: 2, phase: 'Progressing' });
  });

  it('waits for the sync while a Deployment is not at the rendered revision', () => {
    const stale: RegionState = {
      ...region('a', 3, 0, true),
      workload: { name: 'web-a', templateRevision: 'old', replicas: 3, deployment: region('a', 3, 0, true).workload?.deployment },
    };
    const { plan, writes: w } = writes([stale, region('b', 2, 0, true)]);
    expect(w).toEqual([]);
    expect(plan.status.conditions?.[0]?.reason).toBe('WaitingForSync');
  });
});
