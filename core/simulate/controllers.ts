/**
 * Time in the simulated cluster: what the kubelet and the workload controllers do at one instant, and when the next
 * thing happens on its own. Controllers react at the instant of the change they react to (their real latency is
 * milliseconds, far below anything the planner waits for).
 */
import { type Cluster, type Setting } from './cluster.js';
import { reconcileDeployment } from './deployment-controller.js';
import { kubeletEvent, kubeletSync } from './kubelet.js';
import { availabilityInstants, reconcileReplicaSet } from './replicaset-controller.js';
import { reconcileStatefulSet, statefulSetAvailabilityInstants } from './statefulset-controller.js';

/** Controller rounds one instant may take before the models count as not settling (a bug, never a plan). */
const MAX_ROUNDS = 100;

/** Every controller and kubelet reaction to the objects as they are now, repeated until nothing changes. */
export function settle(cluster: Cluster, setting: Setting): Cluster {
  let current = cluster;
  for (let round = 0; round < MAX_ROUNDS; round++) {
    let next = current;
    const pods = next.pods.map((p) => kubeletSync(p, next.now));
    if (pods.some((p, i) => p !== next.pods[i])) next = { ...next, pods, writes: next.writes + 1 };
    for (let i = 0; i < next.replicaSets.length; i++) next = reconcileReplicaSet(next, i, setting);
    for (let i = 0; i < next.deployments.length; i++) next = reconcileDeployment(next, i);
    for (let i = 0; i < next.statefulSets.length; i++) next = reconcileStatefulSet(next, i, setting);
    if (next === current) return current;
    current = next;
  }
  throw new Error(`the simulated controllers did not settle within ${MAX_ROUNDS} rounds at ${new Date(cluster.now).toISOString()}`);
}

/** The next instant after now at which the kubelet or a controller acts on its own, if any. */
export function nextEvent(cluster: Cluster): number | undefined {
  const times = [
    ...cluster.pods.flatMap((p) => (p.kubeletAt !== undefined && p.kubeletAt > cluster.now ? [p.kubeletAt] : [])),
    ...availabilityInstants(cluster),
    ...statefulSetAvailabilityInstants(cluster),
  ];
  return times.length === 0 ? undefined : times.reduce((a, b) => Math.min(a, b));
}

/** The cluster at `time` (not before now): the kubelet's events due by then happen, then everyone reacts. */
export function advance(cluster: Cluster, time: number, setting: Setting): Cluster {
  if (time === cluster.now) return cluster;
  const pods = cluster.pods.flatMap((p) => {
    if (p.kubeletAt === undefined || p.kubeletAt > time) return [p];
    const next = kubeletEvent(p, time);
    return next ? [next] : [];
  });
  const changed = pods.length !== cluster.pods.length || pods.some((p, i) => p !== cluster.pods[i]);
  return settle({ ...cluster, now: time, pods, writes: cluster.writes + (changed ? 1 : 0) }, setting);
}
