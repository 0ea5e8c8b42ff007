import { cluster as clusterSchema, type Cluster } from '../api/cluster.js';
import { fleet as fleetSchema, type Fleet } from '../api/fleet.js';
import { API_GROUP, API_VERSION, CLUSTER_KIND, FLEET_KIND, REGION_KIND } from '../api/identity.js';
import { issuesToProblems, parseDeployRegion, refOf } from '../parse.js';
import type { Problem } from '../problems.js';
import type { FleetClusters } from './split.js';

/** A Cluster of the render and where it is in the input. */
export interface ClusterObject {
  readonly cluster: Cluster;
  readonly input: number;
}

/** The Cluster and Fleet objects of a render, and the DeployRegions each Cluster has. */
export interface FleetObjects {
  /** Whether the render holds any Cluster object, valid or not: then it is laid out per cluster. */
  readonly laidOutPerCluster: boolean;
  /** The valid Clusters, in input order (a name defined twice, once). */
  readonly clusters: readonly ClusterObject[];
  /** The Fleet, when there is exactly one valid one. */
  readonly fleet?: Fleet;
  /** What splitFleet reads of the Clusters and DeployRegions. */
  readonly members: FleetClusters;
  /** Problems of these objects, each with its input positions. */
  readonly problems: readonly Problem[];
}

/** Whether `raw` is an object of this project's API of `kind`, at any version (a wrong version is a problem of its own). */
export function isOwnKind(raw: unknown, kind: string): boolean {
  const apiVersion = (raw as { apiVersion?: unknown } | null)?.apiVersion;
  return refOf(raw).kind === kind && typeof apiVersion === 'string' && apiVersion.startsWith(`${API_GROUP}/`);
}

/**
 * Reads the Cluster and Fleet objects of a render (every problem at once: the schema, a name defined twice, a second
 * Fleet, a Cluster's region that names no DeployRegion of the render), and which DeployRegions each Cluster has: those
 * its spec.regions names, or every one of the render. Kinds of the same name in other API groups (Cluster API's
 * Cluster) are not this project's and are left alone.
 */
export function readFleetObjects(objects: readonly unknown[]): FleetObjects {
  const problems: Problem[] = [];
  const known = new Set<string>();
  const invalid = new Set<string>();
  const clusters: ClusterObject[] = [];
  const clusterAt = new Map<string, number[]>();
  const fleets: { fleet: Fleet; input: number }[] = [];
  let laidOutPerCluster = false;
  objects.forEach((raw, input) => {
    const ref = refOf(raw);
    if (isOwnKind(raw, REGION_KIND) && ref.name !== undefined) {
      known.add(ref.name);
      if (!parseDeployRegion(raw).ok) invalid.add(ref.name);
    }
    const isCluster = isOwnKind(raw, CLUSTER_KIND);
    if (!isCluster && !isOwnKind(raw, FLEET_KIND)) return;
    laidOutPerCluster ||= isCluster;
    const parsed = (isCluster ? clusterSchema : fleetSchema).safeParse(raw, { reportInput: true });
    if (!parsed.success) {
      const wrongVersion = (raw as { apiVersion?: unknown }).apiVersion !== API_VERSION;
      const found = wrongVersion
        ? [{ object: ref, path: ['apiVersion'], message: `must be ${API_VERSION}, not ${JSON.stringify((raw as { apiVersion?: unknown }).apiVersion)}` }]
        : issuesToProblems(ref, parsed.error.issues, isCluster ? clusterSchema : fleetSchema);
      problems.push(...found.map((p) => ({ ...p, inputs: [input] })));
      return;
    }
    if (isCluster) {
      const value = parsed.data as Cluster;
      const same = clusterAt.get(value.metadata.name);
      if (same) same.push(input);
      else {
        clusterAt.set(value.metadata.name, [input]);
        clusters.push({ cluster: value, input });
      }
    } else fleets.push({ fleet: parsed.data as Fleet, input });
  });
  for (const [name, inputs] of clusterAt) {
    if (inputs.length > 1) {
      const times = inputs.length === 2 ? 'twice' : `${inputs.length} times`;
      problems.push({ object: { kind: CLUSTER_KIND, name }, path: ['metadata', 'name'], message: `is defined ${times} in this render`, inputs });
    }
  }
  if (fleets.length > 1) {
    for (const { fleet, input } of fleets) {
      const others = fleets.filter((f) => f.input !== input).map((f) => f.fleet.metadata.name);
      problems.push({
        object: { kind: FLEET_KIND, name: fleet.metadata.name },
        path: [],
        message: `is one of ${fleets.length} Fleets in this render (also ${others.join(', ')}): a render takes at most one`,
        inputs: [input],
      });
    }
  }
  if (!laidOutPerCluster) {
    for (const { fleet, input } of fleets) {
      problems.push({
        object: { kind: FLEET_KIND, name: fleet.metadata.name },
        path: [],
        message: 'needs the Cluster objects of its members in this render',
        inputs: [input],
      });
    }
  }
  const regions = new Map<string, ReadonlySet<string>>();
  for (const { cluster, input } of clusters) {
    (cluster.spec.regions ?? []).forEach((name, k) => {
      if (known.has(name)) return;
      const all = [...known].sort().join(', ') || 'none';
      problems.push({
        object: { kind: CLUSTER_KIND, name: cluster.metadata.name },
        path: ['spec', 'regions', k],
        message: `${JSON.stringify(name)} names no DeployRegion of this render (DeployRegions: ${all})`,
        inputs: [input],
      });
    });
    regions.set(cluster.metadata.name, new Set(cluster.spec.regions ?? known));
  }
  return {
    laidOutPerCluster,
    clusters,
    ...(fleets.length === 1 && fleets[0] && { fleet: fleets[0].fleet }),
    members: { regions, known, invalid },
    problems,
  };
}
