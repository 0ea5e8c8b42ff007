import type { GateAction } from './actions.js';
import { isPodActive } from './pod-activity.js';
import type { PodState, RegionPods } from './snapshot.js';

const swapping = (p: PodState) => p.swap !== undefined && p.swap.phase !== 'done';

/**
 * The InPlaceUpdateReady condition of every gated active pod (a terminating or terminal one never serves again):
 * False while the pod is swapped in place (its swap record says draining or swapping: out of endpoints until the swap
 * is verified, failed swaps included), True otherwise (without it a gated pod never becomes Ready), whether or not a
 * rollout runs, in every phase.
 *
 * It reads the pods alone, never the spec or a plan, so the agent applies it to an ExtendedDeployment it cannot plan
 * too (an invalid spec, a plan or status write that failed): a broken spec or a failing agent write must not keep new
 * pods out of service.
 */
export function gateActions(regions: readonly RegionPods[]): GateAction[] {
  return regions.flatMap((region) =>
    region.pods
      .filter((p) => p.gated === true && isPodActive(p) && (p.gateOpen === true) === swapping(p))
      .map((p) => ({ kind: swapping(p) ? ('closeGate' as const) : ('openGate' as const), region: region.name, pod: p.name, uid: p.uid })),
  );
}
