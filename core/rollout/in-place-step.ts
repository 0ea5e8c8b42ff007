import type { SwapState } from '../inplace/swap-state.js';
import type { SwapAction } from './actions.js';
import { isPodActive } from './pod-activity.js';
import { countWhere, isAvailable, type PodState, type RegionState } from './snapshot.js';

/** What the in-place part of a region's step did. */
export interface InPlaceStep {
  readonly actions: readonly SwapAction[];
  /** Swaps are under way, started, or waiting for budget: replacement waits until they are through. */
  readonly busy: boolean;
}

/** Whether every container the swap changed restarted (new containerID or higher restartCount), runs and is ready. */
export function swapComplete(pod: PodState, state: SwapState): boolean {
  return Object.entries(state.containers ?? {}).every(([name, before]) => {
    const now = pod.containers?.find((c) => c.name === name);
    if (!now || now.image !== before.to || !now.running || !now.ready) return false;
    return now.containerID !== before.containerID || now.restartCount > (before.restartCount ?? 0);
  });
}

/**
 * When a draining pod's grace period ends: gracePeriodSeconds after the swap began, or after its gate closed when that
 * came later (a leader that died between beginning the swap and closing the gate leaves a pod that was in endpoints all
 * along). The condition's time has whole seconds, so the gate counts as closed at the end of that second.
 */
export function graceEndsAt(pod: PodState, gracePeriodSeconds: number): number {
  const since = pod.swap?.since ?? 0;
  const closed = pod.gateClosedAt === undefined ? since : pod.gateClosedAt + 1000;
  return Math.max(since, closed) + gracePeriodSeconds * 1000;
}

function step(kind: SwapAction['kind'], region: string, pod: PodState, state: SwapState, extra: Partial<SwapAction> = {}): SwapAction {
  return { kind, region, pod: pod.name, uid: pod.uid, resourceVersion: pod.resourceVersion ?? '', state, ...extra };
}

/**
 * The in-place part of a region's step toward `wantNew` new-revision pods. Swaps already under way advance (a
 * draining pod is patched once the grace period passed and its gate is closed; a swapping pod is done once its changed containers
 * restarted and are ready; a draining pod aimed at a revision Git has since moved away from is released). Then old
 * pods that differ from the template only in images start draining, unavailable ones first, while the budget of
 * unavailable pods allows. A pod in the middle of a swap counts as unavailable. Old pods that cannot be swapped are
 * left to replacement, which waits while any swap is busy.
 */
export function stepInPlace(
  region: RegionState,
  wantNew: number,
  maxUnavailable: number,
  gracePeriodSeconds: number,
  minReadySeconds: number,
  now: number,
): InPlaceStep {
  const actions: SwapAction[] = [];
  const active = region.pods.filter(isPodActive);
  for (const pod of active) {
    const state = pod.swap;
    if (!state || state.phase === 'done') continue;
    if (state.phase === 'draining' && state.revision !== region.targetRevision) {
      actions.push(step('swapDone', region.name, pod, { ...state, phase: 'done', since: now }));
    } else if (state.phase === 'draining' && now >= graceEndsAt(pod, gracePeriodSeconds) && (pod.gated !== true || pod.gateOpen === false)) {
      const containers = Object.fromEntries(
        Object.entries(pod.swappable ?? {}).map(([name, to]) => {
          const c = pod.containers?.find((x) => x.name === name);
          return [name, { from: c?.image ?? '', to, ...(c?.containerID !== undefined && { containerID: c.containerID }), restartCount: c?.restartCount ?? 0 }];
        }),
      );
      if (Object.keys(containers).length === 0) continue;
      actions.push(
        step(
          'swapImages',
          region.name,
          pod,
          { revision: state.revision, phase: 'swapping', since: now, containers },
          { images: pod.swappable ?? {}, revision: state.revision },
        ),
      );
    } else if (state.phase === 'swapping' && swapComplete(pod, state)) {
      actions.push(step('swapDone', region.name, pod, { ...state, phase: 'done', since: now }));
    }
  }

  const isNew = (p: PodState) => p.revision === region.targetRevision;
  const draining = active.filter((p) => !isNew(p) && p.swap?.phase === 'draining' && p.swap.revision === region.targetRevision);
  const missing = Math.max(0, Math.min(wantNew, region.desired) - countWhere(region, (p) => isPodActive(p) && isNew(p)) - draining.length);
  // The old pods a partition holds stay as they are: swapping one would only make another old pod the kept one.
  const candidates = active
    .filter((p) => !isNew(p) && !p.held && p.swappable !== undefined && !(p.swap?.phase === 'draining' && p.swap.revision === region.targetRevision))
    .sort((a, b) => Number(isAvailable(a, minReadySeconds, now)) - Number(isAvailable(b, minReadySeconds, now)) || (a.name < b.name ? -1 : 1));
  const available = countWhere(region, (p) => isAvailable(p, minReadySeconds, now));
  const budget = Math.max(0, available - (region.desired - maxUnavailable));
  let started = 0;
  for (const pod of candidates) {
    if (started >= missing) break;
    const free = !isAvailable(pod, minReadySeconds, now);
    if (!free && budget - candidates.slice(0, started).filter((p) => isAvailable(p, minReadySeconds, now)).length <= 0) continue;
    actions.push(step('swapBegin', region.name, pod, { revision: region.targetRevision, phase: 'draining', since: now }));
    started++;
  }
  const inFlight = active.some(
    (p) => p.swap !== undefined && p.swap.phase !== 'done' && !(p.swap.phase === 'draining' && p.swap.revision !== region.targetRevision),
  );
  return { actions, busy: inFlight || started > 0 || (missing > 0 && candidates.length > 0) };
}

/**
 * What in-place swaps may still do while the rollout holds (pause, abort, progress deadline, gate): nothing new is
 * swapped, but a swap whose containers restarted and are ready is done (its gate opens), and a draining pod whose
 * images were not patched yet is released at its old images (done; it may be swapped again once the rollout goes on).
 * A hold must not keep healthy pods out of endpoints; a failed swap stays out until Git changes.
 */
export function settleSwaps(region: RegionState, now: number): SwapAction[] {
  return region.pods
    .filter((p) => isPodActive(p) && p.swap !== undefined && (p.swap.phase === 'draining' || (p.swap.phase === 'swapping' && swapComplete(p, p.swap))))
    .map((p) => step('swapDone', region.name, p, { ...(p.swap as SwapState), phase: 'done', since: now }));
}
