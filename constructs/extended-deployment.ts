import { Chart } from 'cdk8s';
import { Construct, type IConstruct } from 'constructs';
import { k8s } from 'cdk8s-plus-28';
import { API_VERSION, ED_KIND } from '../core/api/identity.js';
import type { ExtendedDeploymentInput, ExtendedDeploymentSpecInput } from '../core/api/extended-deployment.js';
import type { JsonObject } from '../core/overrides.js';
import { renderFleet } from '../core/fleet/render.js';
import { renderExtendedDeployment, workloadNameCollisions } from '../core/render.js';
import type { Cluster } from './cluster.js';
import type { DeployRegion } from './deploy-region.js';
import { emitRenderedExtendedDeployment } from './emit.js';
import { emitManifest } from './manifest.js';
import { parsedClusters } from './parsed-clusters.js';
import { parsedRegions } from './parsed-regions.js';
import type { IntOrPercent, LabelSelector, PatchOperation, RegionOverrides, StrategyProps } from './props.js';
import { RenderError } from './render-error.js';

/** One region an {@link ExtendedDeployment} runs in. */
export interface ExtendedDeploymentRegion {
  /** The region, by reference: a region that does not exist cannot be named. */
  readonly region: DeployRegion;
  /**
   * Replicas here: an integer, or `"N%"` of `replicas`.
   * @default an even share of what the other regions leave
   */
  readonly replicas?: IntOrPercent;
  /**
   * Fewest replicas this region gets; minimums are satisfied first, in declared order.
   * @default 0
   */
  readonly minReplicas?: number;
  /**
   * Most replicas this region gets; what it cannot take goes to later regions.
   * @default no limit
   */
  readonly maxReplicas?: number;
  /**
   * Pods of this region that stay on the revision they ran when a rollout reaches them (a grey phase, UnitedDeployment's
   * manual partition): an integer, or "N%" of the region's replicas rounded up. The rollout stops there, Healthy, with
   * both revisions running; lowering it moves the difference on within the budgets; removing it finishes the rollout.
   * ReplicaSet regions only.
   * @default none: every pod moves to the new revision
   */
  readonly partition?: IntOrPercent;
  /**
   * Typed changes to the pod template for this region (images by container, env, resources, labels, ...).
   * @default none
   */
  readonly overrides?: RegionOverrides;
  /**
   * Raw RFC 6902 operations on this region's pod template, applied after `overrides`.
   * @default none
   */
  readonly patches?: PatchOperation[];
  /**
   * A running Deployment, ReplicaSet or upstream InplaceSet of this namespace whose pods the region takes over without restarting them: the
   * agent moves them to the region's ReplicaSet a few at a time and scales the old workload down by as many, so the
   * Ready count never drops; the old workload ends at 0 replicas with no pods, for Git to delete
   * (docs/migrating-from-upstream.md). ReplicaSet regions only.
   * @default none
   */
  readonly adopt?: AdoptionReference;
}

/** One member cluster an {@link ExtendedDeployment} runs in (a fleet). */
export interface ExtendedDeploymentCluster {
  /** The cluster, by reference: a cluster that does not exist cannot be named. */
  readonly cluster: Cluster;
  /**
   * Replicas in this cluster: an integer, or `"N%"` of `replicas`. Inside the cluster, its regions share them as they
   * share `replicas` without clusters.
   * @default an even share of what the other clusters leave
   */
  readonly replicas?: IntOrPercent;
  /**
   * Fewest replicas this cluster gets; minimums are satisfied first, in declared order.
   * @default 0
   */
  readonly minReplicas?: number;
  /**
   * Most replicas this cluster gets; what it cannot take goes to later clusters.
   * @default no limit
   */
  readonly maxReplicas?: number;
  /**
   * Typed changes to the pod template in every region of this cluster, applied before each region's own.
   * @default none
   */
  readonly overrides?: RegionOverrides;
}

/** What one member cluster of an {@link ExtendedDeployment} with clusters gets. */
export interface ExtendedDeploymentMember {
  /** The cluster's name. */
  readonly cluster: string;
  /** What the render produced in that cluster: its regions, their revisions, its share. */
  readonly rendering: ExtendedDeploymentRendering;
}

/** A workload whose pods a region adopts. */
export interface AdoptionReference {
  /** `Deployment` or `ReplicaSet` (apps/v1), or the upstream operator's `InplaceSet` once that operator is uninstalled. */
  readonly kind: 'Deployment' | 'ReplicaSet' | 'InplaceSet';
  /** Its name, in the ExtendedDeployment's namespace. */
  readonly name: string;
}

/** One regional workload an {@link ExtendedDeployment} rendered. */
export interface RenderedRegion {
  /** Region name. */
  readonly name: string;
  /** Target replicas from the distribution (before any move by the agent). */
  readonly replicas: number;
  /** Revision of the final regional pod template. */
  readonly revision: string;
}

/**
 * What an {@link ExtendedDeployment} rendered: the part of core's RenderedExtendedDeployment users read, whose
 * declarations, unlike the whole's, reach no zod type (see props.ts).
 */
export interface ExtendedDeploymentRendering {
  /** Regions in declared order. */
  readonly regions: readonly RenderedRegion[];
  /** Total replicas over all regions. */
  readonly replicas: number;
  /** The rollout revision that approvals name (`strategy.approval.revision`, `edctl approve`). */
  readonly rolloutRevision: string;
}

/**
 * The manifest of each rendered ExtendedDeployment of an app, by the `namespace/name` of each of its regional
 * workloads: every ExtendedDeployment of one app is synthesized together, so two whose workloads get the same name
 * fail the synth, as they fail `edctl validate`. An index, so that each new one looks up only its own workloads.
 */
const workloadOwners = new WeakMap<IConstruct, Map<string, JsonObject>>();

function workloadKey(workload: JsonObject): string {
  const metadata = workload['metadata'] as { name?: string; namespace?: string };
  return `${metadata.namespace ?? ''}/${metadata.name ?? ''}`;
}

/** Props of an {@link ExtendedDeployment}. */
export interface ExtendedDeploymentProps {
  /**
   * Object name (a DNS label).
   * @default the construct id
   */
  readonly name?: string;
  /**
   * Namespace of the ExtendedDeployment and its regional workloads.
   * @default the chart's namespace, else "default"
   */
  readonly namespace?: string;
  /**
   * Labels of the ExtendedDeployment object.
   * @default none
   */
  readonly labels?: Record<string, string>;
  /**
   * Annotations of the ExtendedDeployment object.
   * @default none
   */
  readonly annotations?: Record<string, string>;
  /**
   * Total replicas over all regions.
   * @default the sum of the regions' integer replicas (percentages then need it)
   */
  readonly replicas?: number;
  /**
   * Selects the application's pods; must match the template's labels. Immutable.
   * @default the template's labels
   */
  readonly selector?: LabelSelector;
  /** Pod template every region starts from, as typed Kubernetes structs (`k8s.PodTemplateSpec` of cdk8s-plus-28). */
  readonly template: k8s.PodTemplateSpec;
  /** Regions to run in, in priority order. */
  readonly regions: ExtendedDeploymentRegion[];
  /**
   * Regional workload kind: `ReplicaSet`, `Deployment` (compat mode), `InplaceSet` (upstream), or `StatefulSet`
   * (stable pod names and a claim per pod; groups are partition steps). Immutable.
   * @default "ReplicaSet"
   */
  readonly subsetType?: 'ReplicaSet' | 'Deployment' | 'InplaceSet' | 'StatefulSet';
  /**
   * StatefulSet regions only: the fields of each regional StatefulSet beside the pod template.
   * @default none
   */
  readonly statefulSet?: StatefulSetProps;
  /**
   * Old revisions kept for rollback.
   * @default 5
   */
  readonly historyLimit?: number;
  /**
   * How rollouts proceed.
   * @default Beta groups of 1, new pods first, no gates (each field of {@link StrategyProps} has its default)
   */
  readonly strategy?: StrategyProps;
  /**
   * Member clusters to run in (a fleet): `replicas` is split over them as over regions, and each gets its own
   * ExtendedDeployment with its share and the regions it has; `writeApp` writes each under `clusters/<name>/`.
   * @default none: one set of output, as without clusters
   */
  readonly clusters?: ExtendedDeploymentCluster[];
}

/** The fields of each regional StatefulSet (subsetType `StatefulSet`) beside the pod template. */
export interface StatefulSetProps {
  /**
   * The governing headless Service (defined beside the ExtendedDeployment) that gives each pod a stable DNS name.
   * Immutable in Kubernetes.
   * @default none
   */
  readonly serviceName?: string;
  /**
   * How a region creates and removes pods when it scales: one at a time in ordinal order, or all at once. Immutable in
   * Kubernetes.
   * @default "OrderedReady"
   */
  readonly podManagementPolicy?: 'OrderedReady' | 'Parallel';
  /**
   * A claim per pod and template, made by the StatefulSet controller in the pod's region (claims are named
   * `<name>-<statefulset>-<ordinal>`). Immutable in Kubernetes.
   * @default none
   */
  readonly volumeClaimTemplates?: VolumeClaimTemplateProps[];
  /**
   * Whether claims outlive their pods (Kubernetes 1.32+): `Retain` or `Delete`, when the StatefulSet is deleted and when
   * a region scales pods away (moves included).
   * @default both Retain
   */
  readonly persistentVolumeClaimRetentionPolicy?: { readonly whenDeleted?: 'Retain' | 'Delete'; readonly whenScaled?: 'Retain' | 'Delete' };
}

/** One volume claim template of StatefulSet regions. */
export interface VolumeClaimTemplateProps {
  /** Claim name: containers mount it by this name. */
  readonly name: string;
  /** The claim's spec, as typed Kubernetes structs (`k8s.PersistentVolumeClaimSpec` of cdk8s-plus-28). */
  readonly spec: k8s.PersistentVolumeClaimSpec;
}

function statefulSetSpec(props: StatefulSetProps): NonNullable<ExtendedDeploymentSpecInput['statefulSet']> {
  return {
    ...(props.serviceName !== undefined && { serviceName: props.serviceName }),
    ...(props.podManagementPolicy !== undefined && { podManagementPolicy: props.podManagementPolicy }),
    ...(props.volumeClaimTemplates && {
      volumeClaimTemplates: props.volumeClaimTemplates.map((t) => ({
        metadata: { name: t.name },
        spec: k8s.toJson_PersistentVolumeClaimSpec(t.spec) ?? {},
      })),
    }),
    ...(props.persistentVolumeClaimRetentionPolicy && { persistentVolumeClaimRetentionPolicy: { ...props.persistentVolumeClaimRetentionPolicy } }),
  };
}

/**
 * One application spread over several regions. Renders the ExtendedDeployment itself and one workload per region
 * (`<name>-<region>`), each with its overrides applied, pinned to its region's nodes, and without `spec.replicas`,
 * which the agent owns. Invalid props fail the synth with every problem listed.
 */
export class ExtendedDeployment extends Construct {
  /** The object's name. */
  readonly name: string;
  /**
   * What the render produced: regions, revisions, replicas. With `clusters`, the fleet's total and no regions: each
   * member's render is in `members`.
   */
  readonly rendered: ExtendedDeploymentRendering;
  /** With `clusters`: what each member cluster gets, in declared order; empty without. */
  readonly members: readonly ExtendedDeploymentMember[];

  constructor(scope: Construct, id: string, props: ExtendedDeploymentProps) {
    super(scope, id);
    this.name = props.name ?? id;
    const namespace = props.namespace ?? Chart.of(this).namespace;
    const template = k8s.toJson_PodTemplateSpec(props.template) as ExtendedDeploymentSpecInput['template'];
    const templateLabels = template.metadata?.labels ?? {};
    const overriders = props.regions.filter((r) => r.patches && r.patches.length > 0).map((r) => ({ name: r.region.name, overriders: r.patches ?? [] }));
    const spec: ExtendedDeploymentSpecInput = {
      ...(props.replicas !== undefined && { replicas: props.replicas }),
      selector: props.selector ?? { matchLabels: templateLabels },
      template,
      ...(props.subsetType && { subsetType: props.subsetType }),
      ...(props.statefulSet && { statefulSet: statefulSetSpec(props.statefulSet) }),
      ...(props.historyLimit !== undefined && { historyLimit: props.historyLimit }),
      regions: props.regions.map((r) => ({
        name: r.region.name,
        ...(r.replicas !== undefined && { replicas: r.replicas }),
        ...(r.minReplicas !== undefined && { minReplicas: r.minReplicas }),
        ...(r.maxReplicas !== undefined && { maxReplicas: r.maxReplicas }),
        ...(r.partition !== undefined && { partition: r.partition }),
        ...(r.overrides && { overrides: r.overrides }),
        ...(r.adopt && { adopt: r.adopt }),
      })),
      ...(overriders.length > 0 && { overriders }),
      ...(props.strategy && { strategy: props.strategy }),
      ...(props.clusters && {
        clusters: props.clusters.map((c) => ({
          name: c.cluster.name,
          ...(c.replicas !== undefined && { replicas: c.replicas }),
          ...(c.minReplicas !== undefined && { minReplicas: c.minReplicas }),
          ...(c.maxReplicas !== undefined && { maxReplicas: c.maxReplicas }),
          ...(c.overrides && { overrides: c.overrides }),
        })),
      }),
    };
    const manifest: ExtendedDeploymentInput = {
      apiVersion: API_VERSION,
      kind: ED_KIND,
      metadata: {
        name: this.name,
        ...(namespace && { namespace }),
        ...(props.labels && { labels: props.labels }),
        ...(props.annotations && { annotations: props.annotations }),
      },
      spec,
    };
    if (props.clusters) {
      const fleet = this.renderMembers(manifest);
      this.members = fleet.members;
      this.rendered = { regions: [], replicas: fleet.replicas, rolloutRevision: '' };
      // The input form: writeApp renders it for each member, with the rest of the app.
      emitManifest(this, 'Resource', { ...manifest });
      return;
    }
    this.members = [];
    const regions = new Map(props.regions.flatMap((r) => parsedRegions.get(r.region) ?? []).map((region) => [region.metadata.name, region]));
    const result = renderExtendedDeployment(manifest, regions);
    if (!result.ok) throw new RenderError(result.problems);
    const owners = workloadOwners.get(this.node.root) ?? new Map<string, JsonObject>();
    workloadOwners.set(this.node.root, owners);
    const others = new Set(result.value.regions.flatMap((r) => owners.get(workloadKey(r.workload)) ?? []));
    // Empty for the same object defined twice (a collision only between different objects).
    const collisions = others.size > 0 ? workloadNameCollisions([...others, result.value.manifest]) : [];
    if (collisions.length > 0) throw new RenderError(collisions);
    for (const r of result.value.regions) owners.set(workloadKey(r.workload), result.value.manifest);
    this.rendered = result.value;
    emitRenderedExtendedDeployment(this, result.value);
  }

  /**
   * Checks the fleet split and each member's render now, against every DeployRegion and Cluster of the app so far (the
   * ones this object names exist already), so that invalid props fail here, where the stack points at them; writeApp
   * renders the members again with the whole app.
   */
  private renderMembers(manifest: ExtendedDeploymentInput): { members: ExtendedDeploymentMember[]; replicas: number } {
    const all = this.node.root.node.findAll();
    const objects = [...all.flatMap((c) => parsedRegions.get(c) ?? []), ...all.flatMap((c) => parsedClusters.get(c) ?? []), manifest];
    const result = renderFleet(objects);
    if (!result.ok) throw new RenderError(result.problems);
    const members = result.value.layout === 'clusters' ? result.value.clusters : [];
    const mine = members.flatMap((c) => {
      const rendered = c.rendered.extendedDeployments[0];
      return rendered ? [{ cluster: c.cluster.metadata.name, rendering: rendered }] : [];
    });
    const order = (manifest.spec.clusters ?? []).map((c) => c.name);
    mine.sort((a, b) => order.indexOf(a.cluster) - order.indexOf(b.cluster));
    return { members: mine, replicas: mine.reduce((sum, m) => sum + m.rendering.replicas, 0) };
  }
}
