import { timedPlanOf, type ExtendedDeploymentPlan, type Plan, type Risk } from '../plan.js';
import type { RenderedExtendedDeployment, RenderedSet } from '../render.js';
import { sameObject } from '../same-object.js';
import { fleetTimeline, type MemberRollout } from './timeline.js';
import type { Waves } from './waves.js';
import type { ClusterRender, FleetRender } from './render.js';

/** One member cluster's render, as the plan reads it (core/fleet/render.ts ClusterRender). */
export interface PlannedCluster {
  readonly name: string;
  readonly rendered: RenderedSet;
}

/** The state before a change: nothing known, one set every cluster got (a render without Cluster objects), or one per cluster. */
export type FleetBase =
  { readonly layout: 'flat'; readonly rendered: RenderedSet } | { readonly layout: 'clusters'; readonly clusters: readonly PlannedCluster[] };

/** A member cluster's render as the plan reads it. */
export function plannedCluster(c: ClusterRender): PlannedCluster {
  return { name: c.cluster.metadata.name, rendered: c.rendered };
}

/** The state before a change, from its render: a render without Cluster objects is what every cluster got. */
export function fleetBaseOf(before: FleetRender): FleetBase {
  return before.layout === 'flat' ? before : { layout: 'clusters', clusters: before.clusters.map(plannedCluster) };
}

/**
 * What member `name` had before a change: nothing known without a base, the whole base when it had no Cluster objects
 * (objects that name no cluster go into every one), nothing when the member is new. `edctl plan` and `edctl diff`
 * compare each member against it.
 */
export function memberBase(base: FleetBase | undefined, name: string): RenderedSet | undefined {
  if (base === undefined) return undefined;
  return base.layout === 'flat' ? base.rendered : (base.clusters.find((c) => c.name === name)?.rendered ?? NOTHING);
}

/** Today's plan of one member cluster's render (planOf), named after the cluster. */
export interface ClusterPlan extends Plan {
  readonly name: string;
  /** The cluster is in the base only: the plan is of nothing against what it ran (its removals and their risks). */
  readonly removed?: true;
}

/** One region of one member: its replicas, before and after. */
export interface MemberRegionPlan {
  readonly name: string;
  readonly replicas: number;
  /** Absent when the region is new to this member (or there is no base). */
  readonly fromReplicas?: number;
}

/** One member of an ExtendedDeployment's fleet (or, for one without spec.clusters, one cluster that gets it). */
export interface MemberPlan {
  readonly cluster: string;
  /** Absent outside a fleet. */
  readonly wave?: number;
  readonly fromWave?: number;
  readonly replicas: number;
  readonly fromReplicas?: number;
  readonly regions: readonly MemberRegionPlan[];
  /** The groups of its rollout (ExtendedDeploymentPlan.totalGroups); 0: counts only, which no wave holds back. */
  readonly totalGroups: number;
  /** Its simulated rollout, in whole seconds (rounded up). */
  readonly rolloutSeconds: number;
  /** When its change may start and when it is Healthy at the release, in seconds from the sync; absent when never. */
  readonly startSeconds?: number;
  readonly healthySeconds?: number;
}

/** One wave of an ExtendedDeployment's fleet. */
export interface WavePlan {
  readonly wave: number;
  readonly clusters: readonly string[];
  /** Its start waits for an approval (strategy.fleet.approveWaves). */
  readonly approval: boolean;
  /** The clusters of the earlier waves that must each be Healthy at the release for soakSeconds first. */
  readonly after: readonly string[];
  readonly soakSeconds: number;
  /** When its rollouts may start, in seconds from the sync; absent when an earlier rollout stops short of Healthy. */
  readonly startSeconds?: number;
}

/** One ExtendedDeployment over the clusters that get it. */
export interface FleetExtendedDeploymentPlan {
  readonly namespace: string;
  readonly name: string;
  /** Over every member. */
  readonly replicas: number;
  readonly fromReplicas?: number;
  /** spec.fleet.release after and before the change; absent outside a fleet (and before, when the base has none). */
  readonly release?: string;
  readonly fromRelease?: string;
  /** Every region any member has, in declared order. */
  readonly regions: readonly string[];
  /** In spec.clusters order; outside a fleet, every cluster that gets it, in render order. */
  readonly clusters: readonly MemberPlan[];
  /** Outside a fleet, one wave of every cluster at once. */
  readonly waves: readonly WavePlan[];
}

/** A risk of the change and the clusters it is found in. */
export interface FleetRisk extends Risk {
  readonly clusters: readonly string[];
}

/**
 * What `edctl plan --output json` prints for a render with Cluster objects. The shape is a contract others read: keep
 * it stable, only add fields.
 */
export interface FleetPlan {
  /** The Fleet object's name, when the render has one. */
  readonly fleet?: string;
  /** Every member's plan, as `edctl plan` prints one cluster's, in render order (then clusters of the base only). */
  readonly clusters: readonly ClusterPlan[];
  readonly extendedDeployments: readonly FleetExtendedDeploymentPlan[];
  /** Planned against a base: each cluster's risks, each once with the clusters it is found in. */
  readonly risks?: readonly FleetRisk[];
}

const NOTHING: RenderedSet = { deployRegions: [], extendedDeployments: [] };

/**
 * The plan of a render laid out per cluster: each member cluster's change planned exactly as one cluster's (planOf on
 * what the cluster gets, against what it got before), and each ExtendedDeployment over its members: replicas per
 * cluster and region, waves, release and when each wave starts (fleetTimeline on the simulated durations). A cluster
 * new to the base starts from nothing; a base without Cluster objects is what every cluster got, as objects that name
 * no cluster go into every one.
 */
export function fleetPlanOf(clusters: readonly PlannedCluster[], base?: FleetBase, fleet?: string): FleetPlan {
  const timed = clusters.map((c) => {
    const before = memberBase(base, c.name);
    return { cluster: c, before, ...timedPlanOf(c.rendered.extendedDeployments, before?.extendedDeployments) };
  });
  const gone =
    base?.layout === 'clusters'
      ? base.clusters
          .filter((b) => !clusters.some((c) => c.name === b.name))
          .map((b): ClusterPlan => ({ name: b.name, removed: true, ...timedPlanOf([], b.rendered.extendedDeployments).plan }))
      : [];
  const plans: ClusterPlan[] = [...timed.map((t) => ({ name: t.cluster.name, ...withoutMembership(t.plan) })), ...gone];

  const names: { namespace: string; name: string }[] = [];
  for (const { cluster } of timed) {
    for (const ed of cluster.rendered.extendedDeployments) {
      const key = { namespace: ed.ref.namespace ?? '', name: ed.ref.name ?? '' };
      if (!names.some((n) => n.namespace === key.namespace && n.name === key.name)) names.push(key);
    }
  }
  const extendedDeployments = names.map((key) => {
    const gets = timed.flatMap((t) => {
      const k = t.cluster.rendered.extendedDeployments.findIndex((ed) => (ed.ref.namespace ?? '') === key.namespace && ed.ref.name === key.name);
      const ed = t.cluster.rendered.extendedDeployments[k];
      const plan = t.plan.extendedDeployments[k];
      if (!ed || !plan) return [];
      const before = t.before?.extendedDeployments.find((b) => sameObject(b, ed));
      return [{ cluster: t.cluster.name, ed, plan, durationMs: t.durationsMs[k] ?? 0, ...(before && { before }) }];
    });
    return overClusters(key, gets);
  });
  const risks = base === undefined ? undefined : mergeRisks(plans);
  return { ...(fleet !== undefined && { fleet }), clusters: plans, extendedDeployments, ...(risks && { risks }) };
}

/** One ExtendedDeployment as one cluster gets it, planned. */
interface Member {
  readonly cluster: string;
  readonly ed: RenderedExtendedDeployment;
  readonly before?: RenderedExtendedDeployment;
  readonly plan: ExtendedDeploymentPlan;
  readonly durationMs: number;
}

/** An ExtendedDeployment over its members: in a fleet, in spec.clusters order with its waves; else every cluster at once. */
function overClusters(key: { namespace: string; name: string }, gets: readonly Member[]): FleetExtendedDeploymentPlan {
  const fleet = gets[0]?.ed.parsed.spec.fleet;
  const strategy = gets[0]?.ed.parsed.spec.strategy.fleet;
  const order = fleet ? fleet.members.map((m) => m.cluster) : gets.map((g) => g.cluster);
  const members = order.flatMap((c) => gets.filter((g) => g.cluster === c));
  const waves: Waves = fleet && strategy?.waves ? strategy.waves : [members.map((m) => m.cluster)];
  const soak = fleet ? (strategy?.minSuccessSeconds ?? 0) : 0;
  const rollouts: MemberRollout[] = members.map((m) => ({
    cluster: m.cluster,
    gated: m.plan.totalGroups > 0,
    seconds: Math.ceil(m.durationMs / 1000),
    stops: m.plan.stopped !== undefined,
  }));
  const timeline = fleetTimeline(waves, rollouts, soak);
  const fromRelease = members.find((m) => m.before?.parsed.spec.fleet)?.before?.parsed.spec.fleet?.release;
  const based = members.filter((m) => m.before);
  return {
    namespace: key.namespace,
    name: key.name,
    replicas: sum(members.map((m) => m.ed.replicas)),
    ...(based.length > 0 && { fromReplicas: sum(based.map((m) => m.before?.replicas ?? 0)) }),
    ...(fleet && { release: fleet.release }),
    ...(fromRelease !== undefined && { fromRelease }),
    regions: inDeclaredOrder(members.map((m) => m.ed.regions.map((r) => r.name))),
    clusters: members.map((m, k): MemberPlan => {
      const times = timeline.members.find((t) => t.cluster === m.cluster);
      const fromWave = m.before?.parsed.spec.fleet?.wave;
      return {
        cluster: m.cluster,
        ...(fleet && { wave: waves.findIndex((w) => w.includes(m.cluster)) }),
        ...(fromWave !== undefined && { fromWave }),
        replicas: m.ed.replicas,
        ...(m.before && { fromReplicas: m.before.replicas }),
        regions: m.ed.regions.map((r) => {
          const was = m.before?.regions.find((b) => b.name === r.name);
          return { name: r.name, replicas: r.replicas, ...(was && { fromReplicas: was.replicas }) };
        }),
        totalGroups: m.plan.totalGroups,
        rolloutSeconds: rollouts[k]?.seconds ?? 0,
        ...(times?.start !== undefined && { startSeconds: times.start }),
        ...(times?.healthy !== undefined && { healthySeconds: times.healthy }),
      };
    }),
    waves: timeline.waves.map((t) => ({
      wave: t.wave,
      clusters: waves[t.wave] ?? [],
      approval: (strategy?.approveWaves ?? []).includes(t.wave) && fleet !== undefined,
      after: t.after,
      soakSeconds: soak,
      ...(t.start !== undefined && { startSeconds: t.start }),
    })),
  };
}

/**
 * A member's plan without the changes of spec.fleet: the render writes it from every member's share and revisions, so
 * every member would list the same release and members; the fleet's plan shows them once (release, clusters).
 */
function withoutMembership(plan: Plan): Plan {
  return {
    ...plan,
    extendedDeployments: plan.extendedDeployments.map((ed) =>
      ed.specChanges === undefined ? ed : { ...ed, specChanges: ed.specChanges.filter((c) => c.path !== 'spec.fleet' && !c.path.startsWith('spec.fleet.')) },
    ),
  };
}

const sum = (list: readonly number[]) => list.reduce((a, b) => a + b, 0);

/**
 * The region names of every member in one declared order: each member lists its regions in spec.regions order, so a
 * name missing so far goes right after the one before it in the member that has it.
 */
export function inDeclaredOrder(lists: readonly (readonly string[])[]): string[] {
  const out: string[] = [];
  for (const list of lists) {
    list.forEach((name, i) => {
      if (out.includes(name)) return;
      const previous = i > 0 ? out.indexOf(list[i - 1] ?? '') : -1;
      out.splice(previous + 1, 0, name);
    });
  }
  return out;
}

/** Each cluster's risks once, with the clusters that find the same one, in the order first found. */
function mergeRisks(plans: readonly ClusterPlan[]): FleetRisk[] {
  const merged: { risk: Risk; clusters: string[] }[] = [];
  for (const plan of plans) {
    for (const risk of plan.risks ?? []) {
      const same = merged.find(
        (m) => m.risk.kind === risk.kind && m.risk.namespace === risk.namespace && m.risk.name === risk.name && m.risk.message === risk.message,
      );
      if (same) same.clusters.push(plan.name);
      else merged.push({ risk, clusters: [plan.name] });
    }
  }
  return merged.map(({ risk, clusters }) => ({ ...risk, clusters }));
}
