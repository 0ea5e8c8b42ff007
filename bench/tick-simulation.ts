// The simulation edctl plan ran before core/simulate, kept verbatim (imports aside) as bench/plan.ts's baseline:
// fixed ticks of minReadySeconds + 1 s, pods synthesized as the planner's PodState (not observed from objects), no
// Deployment controller. Nothing else uses it.
/* eslint-disable @typescript-eslint/no-unused-expressions -- its comma expressions are kept as they were */
import type { ExtendedDeployment, ExtendedDeploymentStatus } from '../core/api/extended-deployment.js';
import type { SwapState } from '../core/inplace/swap-state.js';
import type { RolloutAction } from '../core/rollout/actions.js';
import { planRollout, type RolloutEvent } from '../core/rollout/planner.js';
import { countPods, type PodState, type RegionState } from '../core/rollout/snapshot.js';

/** A region at the start of a simulation. */
export interface SimulatedRegion {
  readonly name: string;
  readonly desired: number;
  readonly targetRevision: string;
  /** Pods running when the rollout starts, by revision (all Ready). */
  readonly running: Readonly<Record<string, number>>;
  /** When the region's old pods can be swapped in place: the images to set per container. */
  readonly swappable?: Readonly<Record<string, string>> | undefined;
}

/** New-revision pods per region once a group is done, in declared order. */
export interface SimulatedGroup {
  readonly group: number;
  readonly regions: readonly { readonly name: string; readonly updated: number; readonly old: number }[];
}

/** What a simulated rollout did. */
export interface Simulation {
  readonly groups: readonly SimulatedGroup[];
  readonly totalGroups: number;
  /** Per region: the most pods that ever existed (terminating included) and the fewest available at once. */
  readonly extremes: readonly { readonly name: string; readonly maxPods: number; readonly minAvailable: number }[];
  readonly events: readonly RolloutEvent[];
  /** Gates passed by approval (the group each approval let start). */
  readonly approvals: readonly number[];
  /** New-revision pods removed by the ReplicaSet or the agent during the rollout (must stay 0). */
  readonly newPodsRemoved: number;
  /** Pods the ReplicaSets created, and pods swapped in place, over the whole rollout. */
  readonly podsCreated: number;
  readonly podsSwapped: number;
  readonly finalStatus: ExtendedDeploymentStatus;
}

interface SimPod {
  name: string;
  revision: string;
  createdAt: number;
  ready: boolean;
  readySince: number | undefined;
  markedOld: boolean;
  markedAt?: number;
  terminating: boolean;
  swap?: SwapState;
  /** Image per container, and restarts (an image patch restarts the pod's containers on the next tick). */
  images: Record<string, string>;
  restarts: number;
  restarting: boolean;
}

/**
 * Runs the planner against a simulated cluster in which ReplicaSets create pods at their template's revision,
 * remove pods in the ReplicaSet controller's order (not Ready first, then lower pod-deletion-cost, then newest),
 * pods become Ready one tick after creation, and terminating pods vanish a tick later. Every gate is approved.
 * This is what `edctl plan` shows: the rollout the agent will perform when every pod becomes ready in time.
 */
export function simulateRollout(ed: ExtendedDeployment, rolloutRevision: string, start: readonly SimulatedRegion[], maxTicks = 10_000): Simulation {
  const minReady = ed.spec.strategy.minReadySeconds;
  const tick = (minReady + 1) * 1000;
  let now = Date.UTC(2026, 0, 1);
  let serial = 0;
  const pods = new Map<string, SimPod[]>(
    start.map((r) => [
      r.name,
      Object.entries(r.running).flatMap(([revision, n]) =>
        Array.from({ length: n }, (): SimPod => ({
          name: `${r.name}-${serial++}`,
          revision,
          createdAt: 0,
          ready: true,
          readySince: now - tick,
          markedOld: false,
          terminating: false,
          images: imagesAt(r, revision),
          restarts: 0,
          restarting: false,
        })),
      ),
    ]),
  );
  const replicas = new Map(start.map((r) => [r.name, Object.values(r.running).reduce((a, b) => a + b, 0)]));
  const extremes = new Map(start.map((r) => [r.name, { name: r.name, maxPods: 0, minAvailable: Number.POSITIVE_INFINITY }]));
  const groups: SimulatedGroup[] = [];
  const events: RolloutEvent[] = [];
  const approvals: number[] = [];
  let status: ExtendedDeploymentStatus | undefined;
  let approvedThrough = 0;
  let newPodsRemoved = 0;
  let podsCreated = 0;
  let podsSwapped = 0;

  const view = (): RegionState[] =>
    start.map((r) => ({
      name: r.name,
      desired: r.desired,
      targetRevision: r.targetRevision,
      workload: { name: `${ed.metadata.name}-${r.name}`, templateRevision: r.targetRevision, replicas: replicas.get(r.name) ?? 0 },
      pods: (pods.get(r.name) ?? []).map((p): PodState => ({
        name: p.name,
        uid: p.name,
        revision: p.revision,
        assigned: true,
        running: true,
        ready: p.ready,
        readySince: p.readySince,
        terminating: p.terminating,
        createdAt: p.createdAt,
        markedOld: p.markedOld,
        markedAt: p.markedAt,
        resourceVersion: '1',
        swap: p.swap,
        swappable: r.swappable !== undefined && p.revision !== r.targetRevision ? r.swappable : undefined,
        containers: Object.entries(p.images).map(([name, image]) => ({
          name,
          image,
          containerID: `${p.name}-${p.restarts}`,
          restartCount: p.restarts,
          running: !p.restarting,
          ready: !p.restarting,
        })),
      })),
    }));

  for (let i = 0; i < maxTicks; i++) {
    const regions = view();
    for (const r of regions) {
      const c = countPods(r, minReady, now);
      const e = extremes.get(r.name);
      if (e) {
        e.maxPods = Math.max(e.maxPods, c.current + c.terminating);
        e.minAvailable = Math.min(e.minAvailable, c.available);
      }
    }
    const plan = planRollout({
      ed,
      generation: 1,
      rolloutRevision,
      regions,
      status,
      controls: { paused: false, aborted: false, approvedThrough, resumedAt: undefined },
      now,
    });
    events.push(...plan.events);
    if ((plan.status.currentGroup ?? 0) > (status?.currentGroup ?? 0) && (status?.currentGroup ?? 0) > 0)
      groups.push(snapshotGroup(status?.currentGroup ?? 0, regions, minReady, now));
    status = plan.status;
    if (plan.status.phase === 'Healthy' && plan.actions.length === 0) {
      if ((status.totalGroups ?? 0) > 0) groups.push(snapshotGroup(status.totalGroups ?? 0, regions, minReady, now));
      return {
        groups,
        totalGroups: status.totalGroups ?? 0,
        extremes: [...extremes.values()],
        events,
        approvals,
        newPodsRemoved,
        podsCreated,
        podsSwapped,
        finalStatus: status,
      };
    }
    if (plan.status.phase === 'WaitingForConfirmation') {
      approvedThrough = (plan.status.currentGroup ?? 0) + 1;
      approvals.push(approvedThrough);
    }
    for (const action of plan.actions) newPodsRemoved += apply(action);
    now += tick;
    for (const r of start) {
      const alive = (pods.get(r.name) ?? []).filter((p) => !p.terminating);
      for (const p of alive) {
        if (p.restarting) ((p.restarting = false), (p.restarts += 1));
        else if (!p.ready && (p.swap === undefined || p.swap.phase === 'done')) ((p.ready = true), (p.readySince = now));
      }
      const want = replicas.get(r.name) ?? 0;
      while (alive.length < want) {
        alive.push({
          name: `${r.name}-${serial++}`,
          revision: r.targetRevision,
          createdAt: now,
          ready: false,
          readySince: undefined,
          markedOld: false,
          terminating: false,
          images: imagesAt(r, r.targetRevision),
          restarts: 0,
          restarting: false,
        });
        podsCreated++;
      }
      for (const p of [...alive].sort(deletionOrder).slice(0, Math.max(0, alive.length - want))) {
        if (p.revision === r.targetRevision) newPodsRemoved++;
        p.terminating = true;
      }
      pods.set(r.name, alive);
    }
  }
  throw new Error(`simulation did not finish within ${maxTicks} ticks`);

  function apply(action: RolloutAction): number {
    // Traffic writes (a revision Service, the HTTPRoute) change no pod: this simulation has no traffic to shift.
    if (action.kind === 'traffic') return 0;
    const list = pods.get(action.region) ?? [];
    const target = start.find((r) => r.name === action.region)?.targetRevision;
    switch (action.kind) {
      case 'scale':
        replicas.set(action.region, action.replicas);
        return 0;
      case 'markOld':
        for (const p of list) if (p.name === action.pod) Object.assign(p, { markedOld: true, markedAt: Date.parse(action.at) });
        return 0;
      case 'holdOld':
        for (const p of list) if (p.name === action.pod) Object.assign(p, { markedOld: false, held: true, markedAt: Date.parse(action.at) });
        return 0;
      case 'unmark':
        for (const p of list) if (p.name === action.pod) Object.assign(p, { markedOld: false, held: false, markedAt: undefined });
        return 0;
      case 'deletePod': {
        const pod = list.find((p) => p.name === action.pod);
        if (!pod) return 0;
        pod.terminating = true;
        return pod.revision === target ? 1 : 0;
      }
      // Keepers (createKeeper, dropKeeper) need the ExtendedDeployment's history, which this simulation has none of.
      case 'createKeeper':
      case 'dropKeeper':
      case 'setPaused':
      case 'setPartition':
      case 'openGate':
      case 'closeGate':
        return 0;
      // Adoptions need the adopted workload's objects, which this simulation has none of.
      case 'verifyFreeze':
      case 'adoptPod':
      case 'scaleSource':
        return 0;
      case 'swapBegin':
      case 'swapImages':
      case 'swapDone': {
        const pod = list.find((p) => p.name === action.pod);
        if (!pod) return 0;
        pod.swap = action.state;
        if (action.kind === 'swapBegin') pod.ready = false;
        if (action.kind === 'swapImages') {
          pod.revision = action.revision ?? pod.revision;
          pod.images = { ...pod.images, ...action.images };
          pod.restarting = true;
        }
        if (action.kind === 'swapDone') podsSwapped++;
        return 0;
      }
    }
  }
}

/** A pod's images at a revision: the region's swap images for its target, a placeholder for any other. */
function imagesAt(region: SimulatedRegion, revision: string): Record<string, string> {
  const names = Object.keys(region.swappable ?? { main: '' });
  return Object.fromEntries(names.map((name) => [name, revision === region.targetRevision ? (region.swappable?.[name] ?? revision) : `${name}@${revision}`]));
}

/** The ReplicaSet controller's ranking, as far as the simulation models pods: not Ready, lower cost, newer first. */
function deletionOrder(a: SimPod, b: SimPod): number {
  return Number(a.ready) - Number(b.ready) || Number(b.markedOld) - Number(a.markedOld) || b.createdAt - a.createdAt;
}

function snapshotGroup(group: number, regions: readonly RegionState[], minReady: number, now: number): SimulatedGroup {
  return {
    group,
    regions: regions.map((r) => ({ name: r.name, updated: countPods(r, minReady, now).updatedAvailable, old: countPods(r, minReady, now).old })),
  };
}
