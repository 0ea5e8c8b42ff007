import { shortHash } from '../revision.js';

/** One region of a member as the release digest reads it. */
export interface ReleaseRegion {
  readonly name: string;
  readonly replicas: number;
  readonly revision: string;
}

/** One member of a fleet as the release digest reads it. */
export interface ReleaseMember {
  readonly cluster: string;
  readonly replicas: number;
  readonly regions: readonly ReleaseRegion[];
}

/**
 * The release of one render of a fleet: the first 10 hex characters of SHA-256 over the canonical JSON of every
 * member's share and region revisions, in spec.clusters order. Every member's render carries the same one, so a
 * follower can tell from its predecessors' published `status.fleet.release` that they completed exactly this render,
 * not an older one. Only these fields are read (copied out), so nothing else of the caller's objects can change it.
 */
export function releaseDigest(members: readonly ReleaseMember[]): string {
  return shortHash(
    members.map((m) => ({
      cluster: m.cluster,
      replicas: m.replicas,
      regions: m.regions.map((r) => ({ name: r.name, replicas: r.replicas, revision: r.revision })),
    })),
  );
}
