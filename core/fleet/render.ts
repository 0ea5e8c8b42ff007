import type { Cluster } from '../api/cluster.js';
import { fleetStrategy, type ExtendedDeployment, type FleetMembership, type FleetStrategy } from '../api/extended-deployment.js';
import type { Fleet } from '../api/fleet.js';
import { CLUSTER_KIND, ED_KIND, FLEET_KIND, REGION_KIND } from '../api/identity.js';
import type { JsonObject } from '../overrides.js';
import { parseExtendedDeployment, refOf } from '../parse.js';
import { failed, formatProblem, ok, type FieldPath, type Problem, type Result } from '../problems.js';
import { mergeSame, renderSet, type RenderedExtendedDeployment, type RenderedSet } from '../render.js';
import { isAgentDeployment, memberAgent } from './agent-member.js';
import { memberObject } from './member.js';
import { isOwnKind, readFleetObjects } from './objects.js';
import { releaseDigest } from './release.js';
import { splitFleet, type MemberShare } from './split.js';
import { fleetWaves, waveOf } from './waves.js';

/** What one member cluster gets. */
export interface ClusterRender {
  readonly cluster: Cluster;
  /** The positions in the input of the objects it gets, in input order. */
  readonly inputs: readonly number[];
  /** Those objects as it gets them (a fleet ExtendedDeployment cut to its share, an agent install with its membership), in the same order. */
  readonly objects: readonly unknown[];
  /** Their render: its ExtendedDeployments carry spec.fleet. */
  readonly rendered: RenderedSet;
}

/** A render without Cluster objects (one set of output, as always), or one per member cluster. */
export type FleetRender =
  | { readonly layout: 'flat'; readonly rendered: RenderedSet }
  | { readonly layout: 'clusters'; readonly clusters: readonly ClusterRender[]; readonly fleet?: Fleet };

/** How one fleet ExtendedDeployment is laid out over its members. */
interface FleetPlan {
  readonly input: number;
  readonly ed?: ExtendedDeployment;
  readonly members: readonly MemberShare[];
  readonly strategy?: FleetStrategy;
  readonly waves: ReadonlyMap<string, number>;
}

/**
 * Renders a set of objects as renderSet does and, when it holds Cluster objects, once per member cluster: each gets
 * the DeployRegions it has, the other objects (an agent install's Deployment with this member's --cluster-name and its
 * peers, the render's other Clusters: agent-member.ts), the ExtendedDeployments without spec.clusters as written, and each
 * fleet ExtendedDeployment naming it cut to its share (memberObject) with spec.fleet filled in: the fleet's name, the
 * member, its wave, every member, and the release, which is the same in every member. Cluster and Fleet objects go to
 * no cluster. Every problem at once, each with the input positions of its object: those of the fleet (splitFleet,
 * fleetWaves, readFleetObjects) and those each cluster's render finds, with their paths as written (a region's index
 * in spec.regions, not in the cluster's cut). A problem only some of the clusters that get an object find says in
 * which. Without Cluster objects the render is renderSet's, plus the fleet fields that then make no sense.
 */
export function renderFleet(objects: readonly unknown[]): Result<FleetRender> {
  const found = readFleetObjects(objects);
  const eds = objects.flatMap((raw, input) => (isOwnKind(raw, ED_KIND) ? [{ raw, input }] : []));
  const problems: Problem[] = [...found.problems, ...eds.flatMap(({ raw, input }) => writtenByRender(raw, input))];
  if (!found.laidOutPerCluster) {
    const flat = renderSet(objects);
    for (const { raw, input } of eds) {
      if (fieldOf(raw, 'clusters') !== undefined) {
        problems.push({ object: refOf(raw), path: ['spec', 'clusters'], message: 'names clusters, but this render holds no Cluster object', inputs: [input] });
      }
    }
    // renderSet's problems first, in its order, as without fleet fields.
    const all = [...(flat.ok ? [] : flat.problems), ...problems];
    return all.length > 0 || !flat.ok ? failed(mergeSame(all)) : ok({ layout: 'flat', rendered: flat.value });
  }

  const plans = new Map<number, FleetPlan>();
  for (const { raw, input } of eds) {
    if (!isFleetExtendedDeployment(raw)) continue;
    const plan = planFleet(raw, input, found.members);
    plans.set(input, plan.plan);
    problems.push(...plan.problems);
  }

  const clusters: ClusterRender[] = [];
  const perCluster: { cluster: string; problems: readonly Problem[] }[] = [];
  for (const { cluster } of found.clusters) {
    const peers = found.clusters.map((c) => c.cluster.metadata.name).filter((c) => c !== cluster.metadata.name);
    const result = renderCluster(objects, { cluster, peers }, found.members.regions.get(cluster.metadata.name) ?? new Set(), plans);
    perCluster.push({ cluster: cluster.metadata.name, problems: result.problems });
    problems.push(...result.overrides);
    if (result.render) clusters.push(result.render);
  }
  problems.push(...inWhichCluster(perCluster, clustersGetting(objects, plans, found)));
  if (problems.length > 0) return failed(mergeSame(problems));
  const fleetName = found.fleet?.metadata.name;
  return ok({ layout: 'clusters', clusters: withMembership(clusters, plans, fleetName), ...(found.fleet && { fleet: found.fleet }) });
}

/**
 * What one member cluster gets, rendered: the objects (its DeployRegions, its cut of each fleet ExtendedDeployment
 * naming it, an agent install's Deployment as this member runs it, everything else but Cluster and Fleet objects) and their renderSet, or the problems, with the input
 * positions and the paths of the objects as written, and apart from them those of the cluster's overrides (which name
 * the cluster in their path) and of an agent install naming another cluster (in its message). Problems about how a fleet ExtendedDeployment's counts add up are
 * left to splitFleet, which words them for the cluster's share.
 */
function renderCluster(
  objects: readonly unknown[],
  { cluster, peers }: { cluster: Cluster; peers: readonly string[] },
  has: ReadonlySet<string>,
  plans: ReadonlyMap<number, FleetPlan>,
): { render?: ClusterRender; problems: readonly Problem[]; overrides: readonly Problem[] } {
  const name = cluster.metadata.name;
  const inputs: number[] = [];
  const list: unknown[] = [];
  const paths = new Map<number, (path: FieldPath) => FieldPath>();
  const cut: Problem[] = [];
  objects.forEach((raw, input) => {
    if (isOwnKind(raw, CLUSTER_KIND) || isOwnKind(raw, FLEET_KIND)) return;
    const ref = refOf(raw);
    if (isOwnKind(raw, REGION_KIND) && ref.name !== undefined && !has.has(ref.name)) return;
    const plan = plans.get(input);
    const member = plan?.members.find((m) => m.cluster === name);
    if (plan && !member) return;
    inputs.push(input);
    if (!plan || !member) {
      const agent = isAgentDeployment(raw) ? memberAgent(raw, { cluster: name, peers }) : undefined;
      if (agent?.problem) cut.push({ ...agent.problem, object: ref, inputs: [input] });
      list.push(agent ? agent.object : raw);
      return;
    }
    const made = memberObject(raw, plan.ed, member, plan.strategy, ref);
    paths.set(list.length, (path) => asWritten(path, made.regions, made.overriders));
    cut.push(...made.problems.map((p) => ({ ...p, inputs: [input] })));
    list.push(made.object);
  });
  const rendered = renderSet(list);
  if (rendered.ok) return { render: { cluster, inputs, objects: list, rendered: rendered.value }, problems: [], overrides: cut };
  const theirs = rendered.problems.flatMap((p): Problem[] => {
    const local = p.inputs ?? [];
    if (local.some((k) => paths.has(k)) && isSumProblem(p)) return [];
    const path = paths.get(local[0] ?? -1)?.(p.path) ?? p.path;
    return [{ ...p, path, inputs: local.map((k) => inputs[k] ?? k) }];
  });
  return { problems: theirs, overrides: cut };
}

/**
 * Fleet fields an ExtendedDeployment in Git may not have: spec.fleet is the render's to write (in Git it would claim a
 * release no render made), and strategy.fleet means nothing without spec.clusters.
 */
function writtenByRender(raw: unknown, input: number): Problem[] {
  const object = refOf(raw);
  const problems: Problem[] = [];
  if (fieldOf(raw, 'fleet') !== undefined) {
    problems.push({
      object,
      path: ['spec', 'fleet'],
      message: 'is written by edctl render, not in Git: remove it (spec.clusters names the members)',
      inputs: [input],
    });
  }
  const strategy = fieldOf(raw, 'strategy');
  const fleet = strategy !== null && typeof strategy === 'object' ? (strategy as Record<string, unknown>)['fleet'] : undefined;
  if (fleet !== undefined && fieldOf(raw, 'clusters') === undefined) {
    problems.push({ object, path: ['spec', 'strategy', 'fleet'], message: 'applies only with spec.clusters', inputs: [input] });
  }
  return problems;
}

function fieldOf(raw: unknown, field: string): unknown {
  const spec = (raw as { spec?: unknown } | null)?.spec;
  return spec !== null && typeof spec === 'object' ? (spec as Record<string, unknown>)[field] : undefined;
}

/** The split and waves of one fleet ExtendedDeployment, or as much of its members as can be read when it does not parse. */
function planFleet(raw: unknown, input: number, members: Parameters<typeof splitFleet>[1]): { plan: FleetPlan; problems: Problem[] } {
  const object = refOf(raw);
  const parsed = parseExtendedDeployment(raw);
  const tag = (found: readonly Problem[]) => found.map((p) => ({ ...p, inputs: [input] }));
  if (!parsed.ok) {
    // Its schema problems come from the clusters' renders; the members are read as far as they can be.
    const spec = readable(raw);
    const split = splitFleet(spec, members, object);
    return { plan: { input, members: split.members.map(({ cluster, index, regions }) => ({ cluster, index, regions })), waves: new Map() }, problems: [] };
  }
  const ed = parsed.value;
  const split = splitFleet({ replicas: ed.spec.replicas, regions: ed.spec.regions, clusters: ed.spec.clusters ?? [] }, members, object);
  const written = ed.spec.strategy.fleet ?? fleetStrategy.parse({});
  const waves = fleetWaves(
    written,
    (ed.spec.clusters ?? []).map((c) => c.name),
    object,
  );
  const strategy: FleetStrategy = { ...written, waves: waves.ok ? waves.value.map((w) => [...w]) : (written.waves ?? []) };
  return {
    plan: { input, ed, members: split.members, strategy, waves: waves.ok ? waveOf(waves.value) : new Map() },
    problems: tag([...split.problems, ...(waves.ok ? [] : waves.problems)]),
  };
}

/** The names and region names of an ExtendedDeployment that does not parse, as far as they read (counts left out). */
function readable(raw: unknown): Parameters<typeof splitFleet>[0] {
  const names = (list: unknown) =>
    (Array.isArray(list) ? list : []).flatMap((e: unknown) =>
      typeof (e as { name?: unknown } | null)?.name === 'string' ? [{ name: (e as { name: string }).name }] : [],
    );
  return { regions: names(fieldOf(raw, 'regions')), clusters: names(fieldOf(raw, 'clusters')) };
}

/** A path into a member's cut as written: its region and overriders indexes are those of the object in Git. */
function asWritten(path: FieldPath, regions: readonly number[], overriders: readonly number[]): FieldPath {
  const [spec, list, at] = path;
  if (spec !== 'spec' || typeof at !== 'number') return path;
  const index = list === 'regions' ? regions[at] : list === 'overriders' ? overriders[at] : undefined;
  return index === undefined || list === undefined ? path : [spec, list, index, ...path.slice(3)];
}

/**
 * A member's problem about how spec.replicas adds up over its regions: splitFleet reports those about the cluster's
 * share, in its words (a member's spec.replicas is its share, or, when the split failed, the fleet's total).
 */
function isSumProblem(p: Problem): boolean {
  if (p.path[0] !== 'spec') return false;
  if (p.path.length === 2) return p.path[1] === 'replicas' || p.path[1] === 'regions';
  return p.path[1] === 'regions' && p.path[3] === 'replicas' && p.message.endsWith('needs spec.replicas to take a share of');
}

/** For each input position, how many clusters get that object. */
function clustersGetting(objects: readonly unknown[], plans: ReadonlyMap<number, FleetPlan>, found: ReturnType<typeof readFleetObjects>): Map<number, number> {
  const counts = new Map<number, number>();
  objects.forEach((raw, input) => {
    const plan = plans.get(input);
    const name = refOf(raw).name;
    const n = plan
      ? plan.members.length
      : isOwnKind(raw, REGION_KIND) && name !== undefined
        ? found.clusters.filter((c) => found.members.regions.get(c.cluster.metadata.name)?.has(name)).length
        : found.clusters.length;
    counts.set(input, n);
  });
  return counts;
}

/**
 * The clusters' problems, each once: a problem every cluster that gets its object finds reads as it is; one that only
 * some of them find names each (`in cluster eu-1: ...`), since it depends on what that cluster has.
 */
function inWhichCluster(perCluster: readonly { cluster: string; problems: readonly Problem[] }[], getting: ReadonlyMap<number, number>): Problem[] {
  const seenIn = new Map<string, Set<string>>();
  for (const { cluster, problems } of perCluster) {
    for (const p of problems) {
      const line = formatProblem(p);
      const set = seenIn.get(line) ?? new Set<string>();
      set.add(cluster);
      seenIn.set(line, set);
    }
  }
  return perCluster.flatMap(({ cluster, problems }) =>
    problems.map((p) => {
      const inAll = (seenIn.get(formatProblem(p))?.size ?? 0) >= (getting.get(p.inputs?.[0] ?? -1) ?? 0);
      return inAll ? p : { ...p, message: `in cluster ${cluster}: ${p.message}` };
    }),
  );
}

/**
 * Writes spec.fleet into every member's ExtendedDeployment once every cluster rendered: the release is a digest over
 * every member's regions and revisions, which only the renders of all of them give.
 */
function withMembership(clusters: readonly ClusterRender[], plans: ReadonlyMap<number, FleetPlan>, fleetName: string | undefined): ClusterRender[] {
  const edInputs = new Map(clusters.map((c) => [c.cluster.metadata.name, extendedDeploymentInputs(c)]));
  const renderedOf = (cluster: string, input: number): RenderedExtendedDeployment | undefined => {
    const c = clusters.find((x) => x.cluster.metadata.name === cluster);
    return c?.rendered.extendedDeployments[edInputs.get(cluster)?.indexOf(input) ?? -1];
  };
  const memberships = new Map<number, Omit<FleetMembership, 'cluster' | 'wave'>>();
  for (const [input, plan] of plans) {
    const members = plan.members.map((m) => ({
      cluster: m.cluster,
      replicas: m.replicas ?? 0,
      wave: plan.waves.get(m.cluster) ?? 0,
      regions: renderedOf(m.cluster, input)?.regions ?? [],
    }));
    memberships.set(input, {
      name: fleetName ?? plan.ed?.metadata.name ?? '',
      release: releaseDigest(members),
      members: members.map(({ cluster, replicas, wave }) => ({ cluster, replicas, wave })),
    });
  }
  return clusters.map((c) => {
    const name = c.cluster.metadata.name;
    const extendedDeployments = c.rendered.extendedDeployments.map((rendered, p) => {
      const input = edInputs.get(name)?.[p] ?? -1;
      const membership = memberships.get(input);
      if (!membership) return rendered;
      const fleet: FleetMembership = { ...membership, cluster: name, wave: plans.get(input)?.waves.get(name) ?? 0 };
      const manifest = rendered.manifest as JsonObject & { spec: JsonObject };
      return {
        ...rendered,
        manifest: { ...manifest, spec: { ...manifest.spec, fleet } },
        parsed: { ...rendered.parsed, spec: { ...rendered.parsed.spec, fleet } },
      };
    });
    return { ...c, rendered: { ...c.rendered, extendedDeployments } };
  });
}

/** The input positions of a cluster's ExtendedDeployments, in the order of its rendered ones (renderSet keeps input order). */
function extendedDeploymentInputs(c: Pick<ClusterRender, 'inputs' | 'objects'>): number[] {
  return c.inputs.filter((_, k) => isOwnKind(c.objects[k], ED_KIND));
}

/** The ExtendedDeployment at input position `input` as cluster `c` got it, if it got it. */
export function renderedExtendedDeploymentOf(c: ClusterRender, input: number): RenderedExtendedDeployment | undefined {
  const position = extendedDeploymentInputs(c).indexOf(input);
  return position < 0 ? undefined : c.rendered.extendedDeployments[position];
}

/** Whether a raw object is a fleet ExtendedDeployment: one with spec.clusters, which each member gets cut to its share. */
export function isFleetExtendedDeployment(raw: unknown): boolean {
  return isOwnKind(raw, ED_KIND) && fieldOf(raw, 'clusters') !== undefined;
}
