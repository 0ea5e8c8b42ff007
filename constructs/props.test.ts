import { describe, expectTypeOf, it } from 'vitest';
import type * as z from 'zod';
import type { labelSelector, toleration } from '../core/api/common.js';
import type { deployRegionSpec } from '../core/api/deploy-region.js';
import type { clusterSpec } from '../core/api/cluster.js';
import type {
  clusterPlacement,
  extendedDeploymentSpec,
  fleetStrategy,
  patchOperation,
  regionOverrides,
  regionPlacement,
  rolloutStrategy,
} from '../core/api/extended-deployment.js';
import type { fleetSpec } from '../core/api/fleet.js';
import type { trafficStrategy } from '../core/api/traffic.js';
import type { ClusterProps } from './cluster.js';
import type { DeployRegionProps } from './deploy-region.js';
import type { ExtendedDeploymentCluster, ExtendedDeploymentProps, ExtendedDeploymentRegion } from './extended-deployment.js';
import type { FleetProps } from './fleet.js';
import type { FleetStrategyProps, LabelSelector, PatchOperation, RegionOverrides, StrategyProps, Toleration, TrafficProps } from './props.js';

// Compile-time checks (npm run typecheck fails, not vitest): each hand-written props type accepts exactly the
// schema's input, field by field, optionality included. Props are readonly and schema inputs are not, which is no
// difference to a caller, so readonly is dropped on both sides.

type Writable<T> = T extends readonly (infer E)[] ? Writable<E>[] : T extends object ? { -readonly [K in keyof T]: Writable<T[K]> } : T;
type Input<T extends z.ZodType> = Writable<NonNullable<z.input<T>>>;
type Spec = NonNullable<z.input<typeof extendedDeploymentSpec>>;
type Placement = NonNullable<z.input<typeof regionPlacement>>;
type ClusterEntry = NonNullable<z.input<typeof clusterPlacement>>;

/** The fields ExtendedDeploymentProps takes from the spec as they are (selector is optional there: the template's labels). */
type SpecFields = 'replicas' | 'selector' | 'subsetType' | 'historyLimit' | 'strategy';

describe('construct props', () => {
  it('are the schema inputs, field by field', () => {
    expectTypeOf<Writable<StrategyProps>>().toEqualTypeOf<Input<typeof rolloutStrategy>>();
    expectTypeOf<Writable<RegionOverrides>>().toEqualTypeOf<Input<typeof regionOverrides>>();
    expectTypeOf<Writable<LabelSelector>>().toEqualTypeOf<Input<typeof labelSelector>>();
    expectTypeOf<Writable<Toleration>>().toEqualTypeOf<Input<typeof toleration>>();
    expectTypeOf<Writable<PatchOperation>>().toEqualTypeOf<Input<typeof patchOperation>>();
    expectTypeOf<Writable<Required<Pick<ExtendedDeploymentProps, SpecFields>>>>().toEqualTypeOf<Writable<Required<Pick<Spec, SpecFields>>>>();
    expectTypeOf<Writable<Omit<ExtendedDeploymentRegion, 'region' | 'patches'>>>().toEqualTypeOf<Writable<Omit<Placement, 'name'>>>();
    expectTypeOf<Writable<Omit<DeployRegionProps, 'name' | 'labels'>>>().toEqualTypeOf<Input<typeof deployRegionSpec>>();
    expectTypeOf<Writable<FleetStrategyProps>>().toEqualTypeOf<Input<typeof fleetStrategy>>();
    expectTypeOf<Writable<TrafficProps>>().toEqualTypeOf<Input<typeof trafficStrategy>>();
    expectTypeOf<Writable<Omit<ExtendedDeploymentCluster, 'cluster'>>>().toEqualTypeOf<Writable<Omit<ClusterEntry, 'name'>>>();
    // Regions by reference: a Cluster names DeployRegion constructs, the schema their names.
    expectTypeOf<Writable<Omit<ClusterProps, 'name' | 'labels' | 'regions'>>>().toEqualTypeOf<Omit<Input<typeof clusterSpec>, 'regions'>>();
    expectTypeOf<Writable<Omit<FleetProps, 'name'>>>().toEqualTypeOf<Input<typeof fleetSpec>>();
  });
});
