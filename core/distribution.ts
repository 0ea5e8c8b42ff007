import { parsePercent, type IntOrPercent } from './api/common.js';
import { apportionByRoom } from './moves/apportion.js';
import type { FieldPath } from './problems.js';

/**
 * What a total below the regions' needs (their fixed counts, and the minReplicas of the others) means: `refuse`, as for
 * a spec in Git (`edctl validate`, the render), or `scaleDown`, as the agent reads a total set through the scale
 * subresource (`kubectl scale`, a HorizontalPodAutoscaler), which has no say in the region entries.
 */
export type BelowNeeds = 'refuse' | 'scaleDown';

/** What distribution reads of one region entry. */
export interface RegionShare {
  readonly replicas?: IntOrPercent | undefined;
  readonly minReplicas?: number | undefined;
  readonly maxReplicas?: number | undefined;
}

/** A distribution problem, with its path inside the ExtendedDeployment spec. */
export interface DistributionProblem {
  readonly path: FieldPath;
  readonly message: string;
}

/**
 * What is being split, for the problems' paths and messages: spec.regions of spec.replicas, or a fleet's spec.clusters,
 * or the regions of one cluster of a fleet over that cluster's share.
 */
export interface DistributionScope {
  /** The path of the list of entries, e.g. `['spec', 'regions']`. */
  readonly path: FieldPath;
  /** How a message names one entry: `region`. */
  readonly entry: string;
  /** How a message names the total: `spec.replicas`. */
  readonly total: string;
}

/** spec.regions over spec.replicas: the split of an ExtendedDeployment without clusters. */
export const REGIONS: DistributionScope = { path: ['spec', 'regions'], entry: 'region', total: 'spec.replicas' };

/** The outcome: the total and each region's replicas in declared order, or every problem found. */
export type Distribution =
  | { readonly ok: true; readonly total: number; readonly replicas: readonly number[] }
  | { readonly ok: false; readonly problems: readonly DistributionProblem[] };

/**
 * Splits `total` replicas over regions (or the clusters of a fleet: `scope`), deterministically.
 *
 * 1. An integer region gets exactly its count.
 * 2. Percentage regions share floor(total × Σp / 100): each takes floor(total × p / 100), and what is left goes one
 *    by one to the largest remainders, ties to the earlier region (so 50%/50% of 5 is 3 + 2, never 6).
 * 3. Regions without a count share what is left evenly, the remainder going to the earliest declared.
 * 4. Bounds: every region first gets its minReplicas (declared order), then up to its share from steps 2–3 capped
 *    by maxReplicas, then what is still left goes up to every maxReplicas, in declared order.
 *
 * When `total` is undefined it is the sum of the integer counts, and a percentage is a problem.
 *
 * A total below the regions' needs (each region's integer count, else its minReplicas) is a problem, or with
 * `scaleDown` shrinks every need in proportion (Hamilton's method: floor each quota, then one more to the largest
 * remainders, ties to the earlier region); regions without a need get none. So 6 + 3 + 3 fixed at a total of 8 is
 * 4 + 2 + 2, and back at 12 each region has its count again.
 */
export function distributeReplicas(
  total: number | undefined,
  regions: readonly RegionShare[],
  belowNeeds: BelowNeeds = 'refuse',
  scope: DistributionScope = REGIONS,
): Distribution {
  const problems: DistributionProblem[] = [];
  const list = scope.path;
  const at = (i: number, field: string): FieldPath => [...list, i, field];
  const { entry, total: totalName } = scope;

  const percents = regions.map((r) => (typeof r.replicas === 'string' ? parsePercent(r.replicas) : undefined));
  const ints = regions.map((r) => (typeof r.replicas === 'number' ? r.replicas : undefined));
  const intSum = ints.reduce<number>((sum, n) => sum + (n ?? 0), 0);

  if (total === undefined) {
    percents.forEach((p, i) => {
      if (p !== undefined) problems.push({ path: at(i, 'replicas'), message: `${JSON.stringify(regions[i]?.replicas)} needs ${totalName} to take a share of` });
    });
  }
  const T = total ?? intSum;

  regions.forEach((r, i) => {
    const n = ints[i];
    if (n === undefined) return;
    if (r.minReplicas !== undefined && n < r.minReplicas) problems.push({ path: at(i, 'replicas'), message: `${n} is below minReplicas ${r.minReplicas}` });
    if (r.maxReplicas !== undefined && n > r.maxReplicas) problems.push({ path: at(i, 'replicas'), message: `${n} is above maxReplicas ${r.maxReplicas}` });
  });
  regions.forEach((r, i) => {
    if (r.minReplicas !== undefined && r.maxReplicas !== undefined && r.minReplicas > r.maxReplicas) {
      problems.push({ path: at(i, 'minReplicas'), message: `${r.minReplicas} exceeds maxReplicas ${r.maxReplicas}` });
    }
  });

  const percentSum = percents.reduce<number>((sum, p) => sum + (p ?? 0), 0);
  if (percentSum > 100) problems.push({ path: list, message: `percentages add up to ${percentSum}%, more than 100%` });
  const needs = regions.map((r, i) => ints[i] ?? r.minReplicas ?? 0);
  const needSum = needs.reduce((sum, n) => sum + n, 0);
  if (belowNeeds === 'scaleDown' && problems.length === 0 && total !== undefined && total < needSum) {
    const shares = apportionByRoom(
      total,
      needs.map((room, i) => ({ name: String(i), room })),
    );
    return { ok: true, total, replicas: needs.map((_, i) => shares.get(String(i)) ?? 0) };
  }
  if (intSum > T) problems.push({ path: list, message: `integer replicas add up to ${intSum}, more than ${totalName} (${T})` });
  if (problems.length > 0) return { ok: false, problems };

  const targets = regions.map((_, i) => ints[i] ?? 0);
  const percentTotal = Math.floor((T * percentSum) / 100);
  const percentIdx = indexesWhere(percents, (p) => p !== undefined);
  largestRemainder(
    T,
    percentIdx.map((i) => percents[i] ?? 0),
    percentTotal,
  ).forEach((n, k) => (targets[percentIdx[k] ?? 0] = n));

  const unsetIdx = indexesWhere(regions, (r) => r.replicas === undefined);
  const rest = T - intSum - percentTotal;
  if (rest < 0) {
    return {
      ok: false,
      problems: [{ path: list, message: `${entry}s ask for ${intSum + percentTotal} replicas, more than ${totalName} (${T})` }],
    };
  }
  if (unsetIdx.length === 0 && rest > 0) {
    return {
      ok: false,
      problems: [{ path: list, message: `every ${entry} has a fixed count, but they add up to ${T - rest}, not ${totalName} (${T})` }],
    };
  }
  unsetIdx.forEach((i, k) => (targets[i] = Math.floor(rest / unsetIdx.length) + (k < rest % unsetIdx.length ? 1 : 0)));

  return applyBounds(T - intSum, regions, ints, targets, scope);
}

/** Hamilton's method: floor each quota, then hand the rest to the largest remainders, ties to the earlier entry. */
function largestRemainder(total: number, percents: readonly number[], seats: number): number[] {
  const floors = percents.map((p) => Math.floor((total * p) / 100));
  const remainders = percents.map((p, i) => ({ i, r: (total * p) % 100 }));
  let left = seats - floors.reduce((a, b) => a + b, 0);
  remainders.sort((a, b) => b.r - a.r || a.i - b.i);
  for (const { i } of remainders) {
    if (left <= 0) break;
    floors[i] = (floors[i] ?? 0) + 1;
    left--;
  }
  return floors;
}

function applyBounds(
  pool: number,
  regions: readonly RegionShare[],
  ints: readonly (number | undefined)[],
  targets: readonly number[],
  { path, entry }: DistributionScope,
): Distribution {
  const flexible = indexesWhere(ints, (n) => n === undefined);
  const lo = (i: number) => regions[i]?.minReplicas ?? 0;
  const hi = (i: number) => regions[i]?.maxReplicas ?? Number.POSITIVE_INFINITY;
  const minSum = flexible.reduce((s, i) => s + lo(i), 0);
  const maxSum = flexible.reduce((s, i) => s + hi(i), 0);
  if (minSum > pool) {
    return {
      ok: false,
      problems: [{ path, message: `minReplicas add up to ${minSum}, more than the ${pool} replicas these ${entry}s share` }],
    };
  }
  if (flexible.length > 0 && maxSum < pool) {
    return {
      ok: false,
      problems: [{ path, message: `maxReplicas add up to ${maxSum}, fewer than the ${pool} replicas these ${entry}s share` }],
    };
  }

  const result = regions.map((_, i) => ints[i] ?? lo(i));
  let left = pool - minSum;
  const raiseTo = (i: number, ceiling: number) => {
    const give = Math.max(0, Math.min(ceiling - (result[i] ?? 0), left));
    result[i] = (result[i] ?? 0) + give;
    left -= give;
  };
  for (const i of flexible) raiseTo(i, Math.min(Math.max(targets[i] ?? 0, lo(i)), hi(i)));
  for (const i of flexible) raiseTo(i, hi(i));
  return { ok: true, total: ints.reduce<number>((s, n) => s + (n ?? 0), 0) + pool, replicas: result };
}

function indexesWhere<T>(items: readonly T[], test: (item: T) => boolean): number[] {
  const out: number[] = [];
  items.forEach((item, i) => {
    if (test(item)) out.push(i);
  });
  return out;
}
