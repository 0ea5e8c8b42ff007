import type { ExtendedDeploymentSpec, ExtendedDeploymentStatus } from '../api/extended-deployment.js';
import { isPodActive } from './pod-activity.js';
import { countWhere, type RegionState } from './snapshot.js';
import { rolloutCompleted } from './status.js';

/**
 * The replicas the last status records as the region's own share from the spec: its desired count without the
 * replicas moves lent it or took away. 0 for a region the status does not list (or no status at all).
 */
function recordedShare(status: ExtendedDeploymentStatus | undefined, region: string): number {
  const entry = status?.regions?.find((r) => r.name === region);
  if (entry === undefined) return 0;
  return (entry.desired ?? 0) - (entry.movedIn ?? 0) + (entry.movedOut ?? 0);
}

/**
 * Regions that start from zero: the spec gives them replicas, the last status recorded none for them (a new
 * ExtendedDeployment, a region added, a region grown from 0 in Git) and they run fewer pods than they should. Such a
 * region is created by groups like an upgrade (Beta: one pod first), so that a configuration error costs one pod, not
 * all: the upstream operator's Beta release. `regions` carry the spec's shares (before moves). Native Deployments
 * (compat mode) roll whole regions under their own controller and are created at once.
 */
export function growingRegions(
  spec: Pick<ExtendedDeploymentSpec, 'subsetType'>,
  regions: readonly RegionState[],
  status: ExtendedDeploymentStatus | undefined,
): ReadonlySet<string> {
  if (spec.subsetType === 'Deployment') return new Set();
  return new Set(regions.filter((r) => r.desired > 0 && recordedShare(status, r.name) === 0 && countWhere(r, isPodActive) < r.desired).map((r) => r.name));
}

/** `abc123+2` → `abc123`: the rendered rollout revision a rollout key belongs to. */
export function renderedRevisionOf(key: string): string {
  const plus = key.lastIndexOf('+');
  return plus < 0 ? key : key.slice(0, plus);
}

/** `abc123+2` → 2, `abc123` → 0. */
function growthNumber(key: string): number {
  const plus = key.lastIndexOf('+');
  const n = plus < 0 ? 0 : Number(key.slice(plus + 1));
  return Number.isSafeInteger(n) && n > 0 ? n : 0;
}

/**
 * The key of the rollout under way (status.revision, what approvals and aborts name): the rendered rollout revision
 * for a rollout of a new render; `<revision>+<n>` for the n-th time regions grow from zero on an unchanged render
 * after the last rollout completed. Its own key keeps an approval given to an earlier rollout of the same render from
 * letting this one skip its gates. Otherwise the key the status records: the rollout under way continues.
 */
export function rolloutKey(renderedRevision: string, status: ExtendedDeploymentStatus | undefined, growing: ReadonlySet<string>): string {
  const recorded = status?.revision;
  if (recorded === undefined || renderedRevisionOf(recorded) !== renderedRevision) return renderedRevision;
  if (rolloutCompleted(status) && growing.size > 0) return `${renderedRevision}+${growthNumber(recorded) + 1}`;
  return recorded;
}
