import type { ClusterPlacement, RegionPlacement } from '../api/extended-deployment.js';
import { distributeReplicas, REGIONS, type DistributionProblem, type DistributionScope } from '../distribution.js';
import { ProblemList, type ObjectRef, type Problem } from '../problems.js';
import { regionReferenceProblem } from '../validate.js';

/** What the split reads of the render's Cluster and DeployRegion objects. */
export interface FleetClusters {
  /** The DeployRegions (by name) that exist in each Cluster of the render. */
  readonly regions: ReadonlyMap<string, ReadonlySet<string>>;
  /** Every DeployRegion of the render by name, invalid ones included. */
  readonly known: ReadonlySet<string>;
  /** DeployRegions of the render that failed their own validation. */
  readonly invalid: ReadonlySet<string>;
}

/** One member cluster of an ExtendedDeployment's fleet and its part of the replicas. */
export interface MemberShare {
  readonly cluster: string;
  /** Its index in spec.clusters. */
  readonly index: number;
  /** Its share of spec.replicas; absent when the split failed. */
  readonly replicas?: number;
  /** The indexes in spec.regions of the regions this cluster has, in declared order. */
  readonly regions: readonly number[];
  /** The replicas of each of those regions, in the same order; absent when the split failed. */
  readonly regionReplicas?: readonly number[];
}

/** The split of a fleet ExtendedDeployment: every member (as far as known even when the split failed) and every problem. */
export interface FleetSplit {
  /** The members, in spec.clusters order; an entry that names no Cluster, or a Cluster twice, is left out. */
  readonly members: readonly MemberShare[];
  readonly problems: readonly Problem[];
}

/** What the split reads of an ExtendedDeployment spec. */
export interface FleetSpec {
  readonly replicas?: number | undefined;
  readonly regions: readonly Pick<RegionPlacement, 'name' | 'replicas' | 'minReplicas' | 'maxReplicas'>[];
  readonly clusters: readonly Pick<ClusterPlacement, 'name' | 'replicas' | 'minReplicas' | 'maxReplicas'>[];
}

const CLUSTERS: DistributionScope = { path: ['spec', 'clusters'], entry: 'cluster', total: 'spec.replicas' };

/**
 * Splits spec.replicas over spec.clusters exactly as regions split it without clusters (distributeReplicas: integers,
 * percentages, an even share of the rest, minReplicas and maxReplicas), then each cluster's share over the regions of
 * spec.regions that the cluster has, the same way. A region entry applies in every member that has its DeployRegion:
 * a region no member has, or a member with none of the regions, is a problem, as is an entry that names no Cluster of
 * the render or one named twice. Problems name the entry of spec.clusters or spec.regions they are about.
 */
export function splitFleet(spec: FleetSpec, clusters: FleetClusters, object: ObjectRef): FleetSplit {
  const problems = new ProblemList(object);
  const firstAt = new Map<string, number>();
  const members: { cluster: string; index: number; regions: number[] }[] = [];
  spec.clusters.forEach((entry, index) => {
    const first = firstAt.get(entry.name);
    if (first !== undefined) {
      problems.add(['spec', 'clusters', index, 'name'], `cluster ${JSON.stringify(entry.name)} is listed twice (first at spec.clusters[${first}])`);
      return;
    }
    firstAt.set(entry.name, index);
    const has = clusters.regions.get(entry.name);
    if (!has) {
      const names = [...clusters.regions.keys()].sort().join(', ') || 'none';
      problems.add(['spec', 'clusters', index, 'name'], `${JSON.stringify(entry.name)} names no Cluster of this render (clusters: ${names})`);
      return;
    }
    const regions = spec.regions.flatMap((r, i) => (has.has(r.name) ? [i] : []));
    if (regions.length === 0) {
      problems.add(['spec', 'clusters', index, 'name'], `cluster ${JSON.stringify(entry.name)} has none of the regions of spec.regions`);
    }
    members.push({ cluster: entry.name, index, regions });
  });
  spec.regions.forEach((region, i) => {
    if (members.some((m) => m.regions.includes(i))) return;
    const missing = regionReferenceProblem(region.name, clusters.known, clusters.invalid);
    problems.add(['spec', 'regions', i, 'name'], missing ?? `DeployRegion ${JSON.stringify(region.name)} is in no cluster of spec.clusters`);
  });

  const split = distributeReplicas(spec.replicas, spec.clusters, 'refuse', CLUSTERS);
  if (!split.ok) {
    addAll(problems, split.problems);
    return { members, problems: problems.items };
  }
  const seen = new Set<string>();
  const shared = members.map((m) => {
    const replicas = split.replicas[m.index] ?? 0;
    if (m.regions.length === 0) return { ...m, replicas };
    const scope: DistributionScope = { ...REGIONS, total: `cluster ${m.cluster}'s share` };
    const inside = distributeReplicas(
      replicas,
      m.regions.map((i) => spec.regions[i]!),
      'refuse',
      scope,
    );
    if (inside.ok) return { ...m, replicas, regionReplicas: inside.replicas };
    // A region's own bounds read the same in every cluster that has it: reported once.
    const declared = inside.problems.map((p) => ({
      ...p,
      path: p.path.map((part, k) => (k === 2 && typeof part === 'number' ? (m.regions[part] ?? part) : part)),
    }));
    addAll(
      problems,
      declared.filter((p) => !seen.has(JSON.stringify(p)) && seen.add(JSON.stringify(p))),
    );
    return { ...m, replicas };
  });
  return { members: shared, problems: problems.items };
}

function addAll(list: ProblemList, found: readonly DistributionProblem[]): void {
  for (const p of found) list.add(p.path, p.message);
}
