import { Chart } from 'cdk8s';
import { Construct, type IConstruct } from 'constructs';
import { k8s } from 'cdk8s-plus-28';
import { type IntOrPercent, type LabelSelector } from '../core/api/common.js';
import { API_VERSION, ED_KIND } from '../core/api/identity.js';
import type { ExtendedDeploymentInput, ExtendedDeploymentSpecInput, RegionOverrides } from '../core/api/extended-deployment.js';
import type { JsonObject, PatchOperation } from '../core/overrides.js';
import { renderExtendedDeployment, workloadNameCollisions, type RenderedExtendedDeployment } from '../core/render.js';
import type { DeployRegion } from './deploy-region.js';
import { emitRenderedExtendedDeployment } from './emit.js';
import { RenderError } from './render-error.js';

/** Rollout strategy; every field is optional and documented in docs/reference (generated from the schema). */
export type StrategyProps = NonNullable<ExtendedDeploymentSpecInput['strategy']>;

/** One region an {@link ExtendedDeployment} runs in. */
export interface ExtendedDeploymentRegion {
  /** The region, by reference: a region that does not exist cannot be named. */
  readonly region: DeployRegion;
  /** Replicas here: an integer, or `"N%"` of `replicas`. Default: an even share of what other regions leave. */
  readonly replicas?: IntOrPercent;
  /** Fewest replicas this region gets. Default: 0. */
  readonly minReplicas?: number;
  /** Most replicas this region gets. Default: no limit. */
  readonly maxReplicas?: number;
  /** Typed changes to the pod template for this region (images by container, env, resources, labels, ...). */
  readonly overrides?: RegionOverrides;
  /** Raw RFC 6902 operations on this region's pod template, applied after `overrides`. */
  readonly patches?: PatchOperation[];
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
  /** Object name (a DNS label). Default: the construct id. */
  readonly name?: string;
  /** Namespace of the ExtendedDeployment and its regional workloads. Default: the chart's namespace, else `default`. */
  readonly namespace?: string;
  /** Labels of the ExtendedDeployment object. Default: none. */
  readonly labels?: Record<string, string>;
  /** Annotations of the ExtendedDeployment object. Default: none. */
  readonly annotations?: Record<string, string>;
  /** Total replicas over all regions. Default: the sum of the regions' integer replicas. */
  readonly replicas?: number;
  /** Selects the application's pods. Default: the template's labels. */
  readonly selector?: LabelSelector;
  /** Pod template every region starts from, as typed Kubernetes structs (`k8s.PodTemplateSpec` of cdk8s-plus-28). */
  readonly template: k8s.PodTemplateSpec;
  /** Regions to run in, in priority order. */
  readonly regions: ExtendedDeploymentRegion[];
  /** Regional workload kind. Default: ReplicaSet. */
  readonly subsetType?: ExtendedDeploymentSpecInput['subsetType'];
  /** Old revisions kept for rollback. Default: 5. */
  readonly historyLimit?: number;
  /** How rollouts proceed. Default: Beta groups of 1, new pods first, no gates. */
  readonly strategy?: StrategyProps;
}

/**
 * One application spread over several regions. Renders the ExtendedDeployment itself and one workload per region
 * (`<name>-<region>`), each with its overrides applied, pinned to its region's nodes, and without `spec.replicas`,
 * which the agent owns. Invalid props fail the synth with every problem listed.
 */
export class ExtendedDeployment extends Construct {
  /** The object's name. */
  readonly name: string;
  /** What the render produced: regions, revisions, replicas. */
  readonly rendered: RenderedExtendedDeployment;

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
      ...(props.historyLimit !== undefined && { historyLimit: props.historyLimit }),
      regions: props.regions.map((r) => ({
        name: r.region.name,
        ...(r.replicas !== undefined && { replicas: r.replicas }),
        ...(r.minReplicas !== undefined && { minReplicas: r.minReplicas }),
        ...(r.maxReplicas !== undefined && { maxReplicas: r.maxReplicas }),
        ...(r.overrides && { overrides: r.overrides }),
      })),
      ...(overriders.length > 0 && { overriders }),
      ...(props.strategy && { strategy: props.strategy }),
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
    const regions = new Map(props.regions.map((r) => [r.region.name, r.region.object]));
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
}
