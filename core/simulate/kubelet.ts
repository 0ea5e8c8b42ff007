/**
 * The pods' side of the simulated cluster: a pod created from a template is bound and running at once, its
 * containers become ready POD_START_MS later, and its Ready condition follows its containers and readiness gates, as
 * the kubelet writes it. An image patched in place restarts that container (RESTART_MS); a deleted pod is gone
 * TERMINATION_MS after its deletion.
 */
import type { ContainerStatus, PodCondition, PodObject, PodTemplate } from '../kube/objects.js';
import type { OwnerReference } from '../ownership.js';
import { containerIdOf, iso, podName, regionOf, uidOf, written, controllerReference, type SimPod, type SimWorkload, templateOf } from './cluster.js';
import { POD_START_MS, RESTART_MS, TERMINATION_MS } from './timing.js';

/** A container status as the kubelet reports it, with the image the container runs. */
type KubeletStatus = ContainerStatus & { image?: string };

const condition = (pod: PodObject, type: string): PodCondition | undefined => pod.status?.conditions?.find((c) => c.type === type);

/** Who a new pod is: its name, uid and controller. */
export interface PodIdentity {
  readonly name: string;
  readonly uid: string;
  readonly controller: OwnerReference;
}

/**
 * The pod the ReplicaSet `owner` creates from `template` (its own by default) at `now`: named after its serial,
 * bound to a node, running, its containers starting.
 */
export function createdPod(owner: SimWorkload, serial: number, now: number, template: PodTemplate = templateOf(owner)): SimPod {
  const name = podName(owner.metadata?.name ?? '', serial);
  return newPod(owner, { name, uid: uidOf(name), controller: controllerReference(owner, 'ReplicaSet') }, now, template);
}

/** The pod a workload controller creates from `template` at `now` (in the owner's namespace): bound to a node, running, its containers starting. */
export function newPod(owner: SimWorkload, identity: PodIdentity, now: number, template: PodTemplate): SimPod {
  const { name, uid } = identity;
  const labels = { ...template.metadata?.labels };
  const object: PodObject = {
    metadata: {
      name,
      namespace: owner.metadata?.namespace ?? '',
      uid,
      resourceVersion: '1',
      labels,
      ...(template.metadata?.annotations && { annotations: { ...template.metadata.annotations } }),
      creationTimestamp: iso(now),
      ownerReferences: [identity.controller],
    },
    spec: { ...template.spec, nodeName: `node-${regionOf({ metadata: { labels } })}` },
    status: {
      phase: 'Running',
      conditions: [
        { type: 'PodScheduled', status: 'True', lastTransitionTime: iso(now) },
        { type: 'Initialized', status: 'True', lastTransitionTime: iso(now) },
        { type: 'ContainersReady', status: 'False', lastTransitionTime: iso(now) },
        { type: 'Ready', status: 'False', lastTransitionTime: iso(now) },
      ],
      containerStatuses: (template.spec?.containers ?? []).map((c): KubeletStatus => ({
        name: c.name,
        image: c.image ?? '',
        containerID: containerIdOf(name, c.name, 0),
        restartCount: 0,
        ready: false,
        state: { running: {} },
      })),
    },
  };
  return { object, kubeletAt: now + POD_START_MS };
}

/** A pod the agent or a controller deleted at `now`: it terminates, and is gone TERMINATION_MS later. */
export function deletedPod(pod: SimPod, now: number): SimPod {
  if (pod.object.metadata?.deletionTimestamp !== undefined) return pod;
  return { object: written(pod.object, { metadata: { ...pod.object.metadata, deletionTimestamp: iso(now) } }), kubeletAt: now + TERMINATION_MS };
}

/** Sets a condition's status; its lastTransitionTime moves only when the status changes. */
function withCondition(conditions: readonly PodCondition[], type: string, status: string, now: number): PodCondition[] {
  const old = conditions.find((c) => c.type === type);
  if (old?.status === status) return [...conditions];
  const next = { type, status, lastTransitionTime: iso(now) };
  return old ? conditions.map((c) => (c.type === type ? next : c)) : [...conditions, next];
}

/**
 * What the kubelet writes at `now` about a pod whose spec or gates may have changed: a container whose image was
 * patched is killed (it restarts at the new image RESTART_MS later), and ContainersReady and Ready follow the
 * containers and the readiness gates. The same pod when nothing changes.
 */
export function kubeletSync(pod: SimPod, now: number): SimPod {
  const object = pod.object;
  if (object.metadata?.deletionTimestamp !== undefined) return pod;
  const specImages = new Map((object.spec?.containers ?? []).map((c) => [c.name, c.image ?? '']));
  const statuses = (object.status?.containerStatuses ?? []) as KubeletStatus[];
  const patched = statuses.filter((s) => s.state?.running !== undefined && specImages.get(s.name) !== s.image);
  const containers = statuses.map((s): KubeletStatus =>
    patched.includes(s) ? { ...s, ready: false, state: { waiting: { reason: 'ContainerCreating' } } } : s,
  );
  const containersReady = containers.every((s) => s.ready === true);
  const gatesOpen = (object.spec?.readinessGates ?? []).every((g) => condition(object, g.conditionType)?.status === 'True');
  const before = object.status?.conditions ?? [];
  const conditions = withCondition(
    withCondition(before, 'ContainersReady', containersReady ? 'True' : 'False', now),
    'Ready',
    containersReady && gatesOpen ? 'True' : 'False',
    now,
  );
  const unchanged = patched.length === 0 && conditions.every((c, i) => c === before[i]) && conditions.length === before.length;
  if (unchanged) return pod;
  return {
    object: written(object, { status: { ...object.status, conditions, containerStatuses: containers } }),
    kubeletAt: patched.length > 0 ? now + RESTART_MS : pod.kubeletAt,
  };
}

/**
 * What happens to a pod at its kubeletAt instant: a terminating pod is gone (undefined); otherwise its containers that
 * were starting are ready, and those killed for a new image run it (new container id, one more restart).
 */
export function kubeletEvent(pod: SimPod, now: number): SimPod | undefined {
  if (pod.object.metadata?.deletionTimestamp !== undefined) return undefined;
  const name = pod.object.metadata?.name ?? '';
  const specImages = new Map((pod.object.spec?.containers ?? []).map((c) => [c.name, c.image ?? '']));
  const containers = ((pod.object.status?.containerStatuses ?? []) as KubeletStatus[]).map((s): KubeletStatus => {
    if (s.state?.running !== undefined) return { ...s, ready: true };
    const restarts = (s.restartCount ?? 0) + 1;
    return {
      ...s,
      image: specImages.get(s.name) ?? '',
      containerID: containerIdOf(name, s.name, restarts),
      restartCount: restarts,
      ready: true,
      state: { running: {} },
    };
  });
  const started: SimPod = { object: { ...pod.object, status: { ...pod.object.status, containerStatuses: containers } } };
  const synced = kubeletSync(started, now);
  return synced === started ? { object: written(started.object, {}) } : synced;
}

/**
 * A pod that has been running since `since`: every container ready since then, its gate open when it has one, as
 * the pods a rollout starts from.
 */
export function runningPod(owner: SimWorkload, serial: number, since: number, template: PodTemplate): SimPod {
  return settledSince(createdPod(owner, serial, since, template), since, template);
}

/** A pod created at `since` from `template`, as it is once it has run since then: Ready, its gate open when it has one. */
export function settledSince(pod: SimPod, since: number, template: PodTemplate): SimPod {
  const { object } = pod;
  const gated = (template.spec?.readinessGates ?? []).map((g) => ({ type: g.conditionType, status: 'True', lastTransitionTime: iso(since) }));
  const conditions = [...(object.status?.conditions ?? []).map((c) => ({ ...c, status: 'True' })), ...gated];
  const containerStatuses = object.status?.containerStatuses?.map((s) => ({ ...s, ready: true }));
  return { object: { ...object, status: { ...object.status, conditions, ...(containerStatuses && { containerStatuses }) } } };
}
