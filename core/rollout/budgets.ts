import { parsePercent, type IntOrPercent } from '../api/common.js';
import type { ExtendedDeploymentSpec, RolloutStrategy } from '../api/extended-deployment.js';
import { batchPods } from './groups.js';

/** How far a region may go above and below its desired count while it changes. */
export interface Budgets {
  /** Pods above the desired count (terminating ones included). */
  readonly maxSurge: number;
  /** Available pods below the desired count. */
  readonly maxUnavailable: number;
  /** Old pods are deleted directly and the ReplicaSet replaces them (scaleSimultaneously). */
  readonly replaceDirectly: boolean;
}

function scaled(value: IntOrPercent, total: number, roundUp: boolean): number {
  if (typeof value === 'number') return value;
  const exact = (total * (parsePercent(value) ?? 0)) / 100;
  return roundUp ? Math.ceil(exact) : Math.floor(exact);
}

/**
 * Budgets per region for the strategy. RollingUpdate uses maxSurge/maxUnavailable with the Deployment controller's
 * rounding (surge up, unavailable down; both 0 makes unavailable 1). DeleteAllFirst may remove every old pod at
 * once. ReCreate follows the upgrade mode with the group size: scaleOutPriority adds first and never drops below
 * desired; scaleInPriority removes first and never exceeds desired; scaleSimultaneously does both at once.
 */
export function regionBudgets(strategy: RolloutStrategy, desired: number): Budgets {
  const update = strategy.updateStrategy;
  if (update.type === 'RollingUpdate') {
    const rolling = update.rollingUpdate ?? { maxSurge: '25%', maxUnavailable: '25%' };
    const maxSurge = scaled(rolling.maxSurge, desired, true);
    const maxUnavailable = scaled(rolling.maxUnavailable, desired, false);
    return { maxSurge, maxUnavailable: maxSurge === 0 && maxUnavailable === 0 ? 1 : maxUnavailable, replaceDirectly: false };
  }
  if (update.type === 'DeleteAllFirst') return { maxSurge: 0, maxUnavailable: desired, replaceDirectly: false };
  const batch = batchPods(strategy.batchSize, desired);
  switch (strategy.upgradeMode) {
    case 'scaleInPriority':
      return { maxSurge: 0, maxUnavailable: batch, replaceDirectly: false };
    case 'scaleSimultaneously':
      return { maxSurge: batch, maxUnavailable: batch, replaceDirectly: true };
    default:
      return { maxSurge: batch, maxUnavailable: 0, replaceDirectly: false };
  }
}

/**
 * Budgets of a StatefulSet region: its controller replaces one pod at a time and deletes it before making it again (a
 * pod's name and claims allow no second copy), so a region goes one pod below its count and never above it.
 */
export const STATEFUL_SET_BUDGETS: Budgets = { maxSurge: 0, maxUnavailable: 1, replaceDirectly: false };

/** The budgets of a region of this kind of workload: StatefulSet regions' are their controller's. */
export function kindBudgets(spec: Pick<ExtendedDeploymentSpec, 'strategy' | 'subsetType'>, desired: number): Budgets {
  return spec.subsetType === 'StatefulSet' ? STATEFUL_SET_BUDGETS : regionBudgets(spec.strategy, desired);
}
