/**
 * One look of the agent at the simulated cluster: the objects (and cohorts, counted) observed as the agent observes
 * them, then decided on as the agent decides (core/rollout/decision.ts).
 */
import { observe } from '../observe/observe.js';
import { formatProblem } from '../problems.js';
import { decide, type Decision } from '../rollout/decision.js';
import { batchPods } from '../rollout/groups.js';
import type { RolloutInput } from '../rollout/planner.js';
import { isPodActive } from '../rollout/pod-activity.js';
import type { PodState } from '../rollout/snapshot.js';
import { workloadName } from '../kube/workload-kinds.js';
import type { Cluster, Setting } from './cluster.js';
import { cohortSize, consolidate } from './cohorts.js';

/** A rollout the simulation cannot show within its bounds (far too many groups that all differ, or pods held one by one). */
export class SimulationTooLarge extends Error {}

/**
 * One look of the agent at the cluster: observe, then decide. With cohorts, the window of old pods listed one by one
 * grows (and the look plans again) while any of the planner's picks took every listed candidate (cohorts.ts).
 */
export function look(cluster: Cluster, setting: Setting, maxListed: number, name: string): { cluster: Cluster; input: RolloutInput; decision: Decision } {
  const windows = new Map<string, number>();
  for (;;) {
    const current = consolidate(cluster, setting, (region) => windows.get(region) ?? initialWindow(cluster, region, setting));
    if (current.pods.length > maxListed) {
      throw new SimulationTooLarge(
        `the rollout of ${name} is too large to plan: its strategy acts on every old pod at once, more than ${maxListed} pods to simulate one by one`,
      );
    }
    const observed = observe(
      current.ed,
      current.deployRegions,
      { replicaSets: current.replicaSets, deployments: current.deployments, statefulSets: current.statefulSets },
      current.pods.map((p) => p.object),
      current.now,
      undefined,
      [],
      current.cohorts.map((c) => ({ pod: c.pod, count: cohortSize(c) })),
    );
    if (!observed.ok) throw new Error(`cannot simulate ${name}: ${observed.problems.map(formatProblem).join('; ')}`);
    const decision = decide(observed.input, current.ed.status);
    const short = exhausted(observed.input, decision);
    if (short.length === 0) return { cluster: current, input: observed.input, decision };
    for (const region of short) windows.set(region, 2 * (windows.get(region) ?? initialWindow(cluster, region, setting)));
  }
}

/** Old pods a region lists one by one to start with: a few batches' worth (the planner picks about a batch at a time). */
function initialWindow(cluster: Cluster, region: string, setting: Setting): number {
  const workload = [...cluster.replicaSets, ...cluster.deployments].find((w) => w.metadata?.name === workloadName(cluster.ed.metadata?.name ?? '', region));
  return 2 * batchPods(setting.batchSize, workload?.spec?.replicas ?? 1) + 8;
}

/**
 * The regions where a pick of the plan (pods to mark, evict or swap) took every listed candidate while settled pods
 * (counted only) could be candidates too: the planner might have picked more, so it must see more.
 */
function exhausted(input: RolloutInput, decision: Decision): string[] {
  return input.regions.flatMap((region) => {
    const settledOld = (region.settled ?? []).filter((s) => s.pod.revision !== region.targetRevision && s.count > 0).map((s) => s.pod);
    if (settledOld.length === 0) return [];
    const old = region.pods.filter((p) => isPodActive(p) && p.revision !== region.targetRevision);
    const picked = (kind: string) => decision.plan.actions.filter((a) => a.kind === kind && 'region' in a && a.region === region.name).length;
    const swappable = (p: PodState) => p.swappable !== undefined && !(p.swap?.phase === 'draining' && p.swap.revision === region.targetRevision);
    const short =
      (settledOld.some((p) => !p.markedOld) && picked('markOld') >= old.filter((p) => !p.markedOld).length) ||
      (settledOld.some((p) => !p.held) && picked('holdOld') > 0 && picked('holdOld') >= old.filter((p) => !p.held).length) ||
      picked('deletePod') >= old.length ||
      (settledOld.some(swappable) && picked('swapBegin') >= old.filter(swappable).length);
    return short ? [region.name] : [];
  });
}
