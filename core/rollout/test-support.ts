import type * as z from 'zod';
import { extendedDeployment, type ExtendedDeployment, type ExtendedDeploymentStatus, type regionPlacement } from '../api/extended-deployment.js';
import type { RolloutInput } from './planner.js';
import type { PodState, RegionState } from './snapshot.js';

/** A pod of the new revision as observe records it: bound and running, not Ready yet; `overrides` set the rest. */
export function podState(name: string, overrides: Partial<PodState> = {}): PodState {
  return {
    name,
    uid: `u-${name}`,
    revision: 'new',
    assigned: true,
    running: true,
    ready: false,
    readySince: undefined,
    terminating: false,
    markedOld: false,
    ...overrides,
  };
}

/** ExtendedDeployment shop/web, parsed with its defaults: one container, the given regions, strategy and workload kind. */
export function webEd(
  regions: readonly (z.input<typeof regionPlacement> & { name: string; replicas: number })[],
  strategy: Record<string, unknown> = {},
  subsetType: ExtendedDeployment['spec']['subsetType'] = 'ReplicaSet',
): ExtendedDeployment {
  return extendedDeployment.parse({
    apiVersion: 'extendeddeployment.io/v1beta1',
    kind: 'ExtendedDeployment',
    metadata: { name: 'web', namespace: 'shop' },
    spec: {
      subsetType,
      selector: { matchLabels: { app: 'web' } },
      template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'i' }] } },
      regions,
      strategy,
    },
  });
}

/** The planner's input for `ed` over `regions` at `now`, rollout revision R1, generation 1, no control set but `controls`. */
export function rolloutInput(
  ed: ExtendedDeployment,
  regions: RegionState[],
  now: number,
  status?: ExtendedDeploymentStatus,
  controls: Partial<RolloutInput['controls']> = {},
): RolloutInput {
  return {
    ed,
    generation: 1,
    rolloutRevision: 'R1',
    regions,
    status,
    controls: { paused: false, aborted: false, approvedThrough: undefined, resumedAt: undefined, ...controls },
    now,
  };
}
