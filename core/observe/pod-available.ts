import type { ExtendedDeploymentObject, PodObject } from '../kube/objects.js';
import { availableAt } from '../rollout/snapshot.js';
import { podState } from './observe.js';
import { parsedExtendedDeployment } from './parsed.js';

/**
 * When a pod of `ed`, as one watch event shows it, counts as available (Ready for the spec's minReadySeconds): the
 * instant a look at `ed` may find its group available, which no event announces. Undefined when the pod is not Ready
 * and active, or the spec is invalid (its looks report that). The same rule as the planner's (availableAt), read from
 * the same remembered parses, so a wake set from an event is the instant the next look would have asked for.
 */
export function podAvailableAt(ed: ExtendedDeploymentObject, pod: PodObject): number | undefined {
  const parsed = parsedExtendedDeployment(ed);
  return parsed.ok ? availableAt(podState(pod), parsed.value.spec.strategy.minReadySeconds) : undefined;
}
