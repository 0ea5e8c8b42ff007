import { isPodActive } from './pod-activity.js';
import type { PodState, RegionState } from './snapshot.js';

/** Most pods a message names; the rest are counted. */
const LISTED_PODS = 3;
/** Longest kubelet message quoted: an image pull error can run to several hundred characters. */
const MESSAGE_LENGTH = 120;

/** How long a new pod may take to start before it counts as stuck: a younger one is starting, not holding anything. */
export const STARTING_MS = 10_000;

const clip = (text: string) => (text.length > MESSAGE_LENGTH ? `${text.slice(0, MESSAGE_LENGTH - 1)}…` : text);

/**
 * Why a pod is not Ready, in the words `kubectl get pods` and `kubectl describe pod` use: the scheduler's Unschedulable,
 * an init container that holds it (Init:CrashLoopBackOff), a container's waiting reason with the kubelet's message (CrashLoopBackOff, ImagePullBackOff, CreateContainerConfigError),
 * a terminated container's reason, a running container that is not ready (its readiness probe), or the closed
 * InPlaceUpdateReady gate; undefined when the pod shows none of these.
 */
export function podTrouble(pod: PodState): string | undefined {
  if (pod.unschedulableSince !== undefined) return 'Unschedulable';
  if (!pod.assigned) return 'Pending';
  if (pod.initTrouble !== undefined) return clip(pod.initTrouble);
  const containers = pod.containers ?? [];
  const waiting = containers.find((c) => c.waiting !== undefined);
  if (waiting?.waiting) return `${waiting.waiting.reason}${waiting.waiting.message ? ` (${clip(waiting.waiting.message)})` : ''}`;
  const terminated = containers.find((c) => c.terminated !== undefined);
  if (terminated) return `container ${terminated.name} terminated (${terminated.terminated ?? ''})`;
  const unready = containers.find((c) => c.running && !c.ready);
  if (unready) return `container ${unready.name} is running but not ready (readiness probe)`;
  if (pod.gated && !pod.gateOpen) return 'InPlaceUpdateReady is False';
  return undefined;
}

/**
 * A region's pods that hold its rollout: active pods at the region's target revision that are not Ready (new pods, and
 * pods swapped in place whose new image does not run), except those created less than {@link STARTING_MS} before `now`.
 */
export function stuckIn(region: RegionState, now: number): PodState[] {
  const starting = (p: PodState) => p.createdAt !== undefined && p.createdAt > now - STARTING_MS;
  return region.pods.filter((p) => isPodActive(p) && p.revision === region.targetRevision && !p.ready && !starting(p));
}

/**
 * The pods that hold a rollout ({@link stuckIn} over its regions), with why. `not Ready: web-amd64-x: CrashLoopBackOff
 * (back-off 5m0s restarting failed container=app ...); web-arm64-y: Unschedulable`, at most three named and the others
 * counted; undefined when there are none.
 */
export function stuckPods(regions: readonly RegionState[], rolloutRegions: readonly string[], now: number): string | undefined {
  const stuck = regions.filter((r) => rolloutRegions.includes(r.name)).flatMap((r) => stuckIn(r, now));
  if (stuck.length === 0) return undefined;
  const named = stuck.slice(0, LISTED_PODS).map((p) => {
    const trouble = podTrouble(p);
    return trouble === undefined ? p.name : `${p.name}: ${trouble}`;
  });
  const more = stuck.length > LISTED_PODS ? `; and ${stuck.length - LISTED_PODS} more` : '';
  return `not Ready: ${named.join('; ')}${more}`;
}
