import { isPodActive } from './pod-activity.js';
import type { RegionState } from './snapshot.js';
import { stuckIn } from './stuck-pods.js';

/** A region entry's counts that keep exactly the pods it runs Ready: what Git writes for a forced exit. */
export interface ForcedExit {
  /** The region entry (spec.regions[].name). */
  readonly region: string;
  /** Its `replicas`: every pod it runs Ready, at any revision. */
  readonly replicas: number;
  /** Its `partition`: the Ready pods at previous revisions, which then stay there. */
  readonly partition: number;
}

/**
 * The forced exit of a stuck group (deployment-upgrade's "forced interruption", where both targets are set to the
 * ready counts): for each rollout region with new pods that hold it ({@link stuckIn}), the counts that keep what it runs
 * Ready. Written to Git, they end the region's part of the group at once: its not-Ready new pods are surplus over its
 * count and go first (the ReplicaSet removes not-Ready pods first), its Ready old pods are what its partition keeps
 * (marked to stay, and made again by its keeper if one dies), and the rollout goes on with the other regions or
 * completes. A single count cannot say this: it does not name which revision the Ready pods stay at, and with
 * scaleOutPriority a stuck region already runs its count Ready (the stuck pod is the surge).
 */
export function forcedExits(regions: readonly RegionState[], rolloutRegions: readonly string[], now: number): ForcedExit[] {
  return regions
    .filter((r) => rolloutRegions.includes(r.name) && stuckIn(r, now).length > 0)
    .map((r) => {
      const ready = r.pods.filter((p) => isPodActive(p) && p.ready);
      return { region: r.name, replicas: ready.length, partition: ready.filter((p) => p.revision !== r.targetRevision).length };
    });
}

/** How a status message names a forced exit, so that readers of the status (edctl status) can point to it. */
export const FORCED_EXIT_WORDS = 'forced exit';

/** `to keep what runs Ready instead (forced exit), set in Git: region c replicas 2 partition 2, ...`; undefined for none. */
export function forcedExitText(exits: readonly ForcedExit[]): string | undefined {
  if (exits.length === 0) return undefined;
  const counts = exits.map((e) => `region ${e.region} replicas ${e.replicas} partition ${e.partition}`);
  return `to keep what runs Ready instead (${FORCED_EXIT_WORDS}), set in Git: ${counts.join(', ')}`;
}
