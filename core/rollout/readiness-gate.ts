import type { OpenGateAction } from './actions.js';
import type { RegionState } from './snapshot.js';

/**
 * Pods rendered with the InPlaceUpdateReady readiness gate become Ready only when someone sets that condition: the
 * agent opens it on every gated pod that is not terminating and not in the middle of an in-place swap (whose gate
 * stays False until the swap is verified), whether or not a rollout runs, in every phase.
 */
export function openGates(regions: readonly RegionState[]): OpenGateAction[] {
  return regions.flatMap((region) =>
    region.pods.filter((p) => p.gated === true && p.gateOpen !== true && !p.terminating && (p.swap === undefined || p.swap.phase === 'done')).map((p) => ({ kind: 'openGate' as const, region: region.name, pod: p.name, uid: p.uid })),
  );
}
