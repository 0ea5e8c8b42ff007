/**
 * The agent's writes to the simulated cluster, made as agent/actuators.ts makes them to the API server: a scale,
 * pause or partition sets the workload's spec field (a new generation), a mark or a swap step patches the pod (swap
 * steps only while the pod's resourceVersion is the one the plan saw, else the API server refuses them), a gate sets
 * the pod's condition, a deletion evicts the pod. A write aimed at a pod that is gone, or at another pod of the same
 * name, does nothing.
 */
import type { PodObject } from '../kube/objects.js';
import { IN_PLACE_READINESS_GATE, REVISION_LABEL, SWAP_STATE_ANNOTATION } from '../labels.js';
import { parseSwapState } from '../inplace/swap-state.js';
import type { RolloutAction } from '../rollout/actions.js';
import { markAnnotations } from '../rollout/removal-marks.js';
import { iso, isTarget, replaced, withSpec, written, type Cluster, type Setting, type SimPod, type SimWorkload } from './cluster.js';
import { deletedPod } from './kubelet.js';
import { partitionOf } from './statefulset-controller.js';

/**
 * The cluster after the agent performed `actions` (in order). Pods are looked up by name once for all actions: a
 * rollout that marks every old pod at once writes to each of them.
 */
export function performAll(cluster: Cluster, actions: readonly RolloutAction[], setting: Setting): Cluster {
  const pods = [...cluster.pods];
  const index = new Map(pods.map((p, i) => [p.object.metadata?.name ?? '', i]));
  let next = cluster;
  let tally = cluster.tally;
  // A pod write names the pod and its uid: uid is immutable, so the API server refuses it for another pod of that name.
  const patch = (name: string, uid: string, change: (pod: SimPod) => SimPod | undefined) => {
    const i = index.get(name);
    const pod = i === undefined ? undefined : pods[i];
    if (i === undefined || !pod || pod.object.metadata?.uid !== uid) return;
    const changed = change(pod);
    if (changed) pods[i] = changed;
  };
  const annotate = (annotations: Readonly<Record<string, string | null>>) => (p: SimPod) => ({
    ...p,
    object: written(withAnnotations(p.object, annotations), {}),
  });
  for (const action of actions) {
    switch (action.kind) {
      case 'scale':
        next = setWorkloadSpec(next, action.workload, { replicas: action.replicas });
        break;
      case 'setPaused':
        next = setWorkloadSpec(next, action.workload, { paused: action.paused });
        break;
      case 'setPartition':
        next = setPartition(next, action.workload, action.partition);
        break;
      case 'markOld':
      case 'holdOld':
      case 'unmark':
        patch(action.pod, action.uid, annotate(markAnnotations(action)));
        break;
      case 'openGate':
      case 'closeGate':
        patch(action.pod, action.uid, (p) => ({ ...p, object: written(withGate(p.object, action.kind === 'openGate', cluster.now), {}) }));
        break;
      case 'deletePod':
        // An eviction (no disruption budget in the simulation): the pod terminates.
        patch(action.pod, action.uid, (p) => {
          if (p.object.metadata?.deletionTimestamp !== undefined) return undefined;
          if (isTarget(setting, p.object)) tally = { ...tally, newPodsRemoved: tally.newPodsRemoved + 1 };
          return deletedPod(p, cluster.now);
        });
        break;
      case 'swapBegin':
      case 'swapImages':
      case 'swapDone':
        patch(action.pod, action.uid, (p) => {
          // A swap step carries the resourceVersion the plan saw: the API server refuses it for a pod changed since.
          if (p.object.metadata?.resourceVersion !== action.resourceVersion) return undefined;
          const imagesPatched = parseSwapState(p.object.metadata.annotations?.[SWAP_STATE_ANNOTATION])?.phase === 'swapping';
          if (action.kind === 'swapDone' && imagesPatched) tally = { ...tally, podsSwapped: tally.podsSwapped + 1 };
          const annotated = withAnnotations(p.object, { [SWAP_STATE_ANNOTATION]: JSON.stringify(action.state) });
          return { ...p, object: written(action.kind === 'swapImages' ? withImages(annotated, action.images ?? {}, action.revision) : annotated, {}) };
        });
        break;
    }
  }
  const changed = next !== cluster || pods.some((p, i) => p !== cluster.pods[i]);
  return { ...next, pods, tally, writes: cluster.writes + (changed ? 1 : 0) };
}

/** The lists of regional workloads a scale may name. */
const WORKLOAD_LISTS = ['replicaSets', 'deployments', 'statefulSets'] as const;

/** Applies a spec change to the workload named `name` (a ReplicaSet, Deployment or StatefulSet), if it changes anything. */
function setWorkloadSpec(cluster: Cluster, name: string, spec: { replicas?: number; paused?: boolean }): Cluster {
  const changes = (w: SimWorkload) => Object.entries(spec).some(([k, v]) => (w.spec as Record<string, unknown> | undefined)?.[k] !== v);
  for (const list of WORKLOAD_LISTS) {
    const index = cluster[list].findIndex((w) => w.metadata?.name === name);
    const workload = cluster[list][index];
    if (workload) return changes(workload) ? { ...cluster, [list]: replaced(cluster[list], index, withSpec(workload, spec)) } : cluster;
  }
  return cluster;
}

/** Sets the rolling-update partition of the StatefulSet named `name`, if it changes it (the rest of its update strategy stays Git's). */
function setPartition(cluster: Cluster, name: string, partition: number): Cluster {
  const index = cluster.statefulSets.findIndex((w) => w.metadata?.name === name);
  const sts = cluster.statefulSets[index];
  if (!sts || partitionOf(sts) === partition) return cluster;
  const strategy = sts.spec?.updateStrategy;
  const updateStrategy = { ...strategy, rollingUpdate: { ...strategy?.rollingUpdate, partition } };
  return { ...cluster, statefulSets: replaced(cluster.statefulSets, index, withSpec(sts, { updateStrategy })) };
}

/** Sets annotations as a merge patch does: a null value removes the key. */
function withAnnotations(pod: PodObject, annotations: Readonly<Record<string, string | null>>): PodObject {
  const merged: Record<string, string> = { ...pod.metadata?.annotations };
  for (const [key, value] of Object.entries(annotations)) {
    if (value === null) delete merged[key];
    else merged[key] = value;
  }
  return { ...pod, metadata: { ...pod.metadata, annotations: merged } };
}

/** Sets the InPlaceUpdateReady condition (the actuator's strategic merge replaces the condition of that type). */
function withGate(pod: PodObject, open: boolean, now: number): PodObject {
  const condition = {
    type: IN_PLACE_READINESS_GATE,
    status: open ? 'True' : 'False',
    reason: open ? 'NotUpdating' : 'StartInPlaceUpdate',
    lastTransitionTime: iso(now),
  };
  const others = (pod.status?.conditions ?? []).filter((c) => c.type !== IN_PLACE_READINESS_GATE);
  return { ...pod, status: { ...pod.status, conditions: [...others, condition] } };
}

/** A strategic merge patch of container images (merged by name) and the revision label. */
function withImages(pod: PodObject, images: Readonly<Record<string, string>>, revision: string | undefined): PodObject {
  const containers = (pod.spec?.containers ?? []).map((c) => (images[c.name] === undefined ? c : { ...c, image: images[c.name] }));
  const labels = { ...pod.metadata?.labels, ...(revision !== undefined && { [REVISION_LABEL]: revision }) };
  return { ...pod, metadata: { ...pod.metadata, labels }, spec: { ...pod.spec, containers } };
}
