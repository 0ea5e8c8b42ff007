import type { HealthKind } from './argocd-cm.js';
import type { FluxStatus } from './flux-health.js';
import type { ArgoHealthStatus } from './lua-health.js';

// The expected health of every fixture under gitops/fixtures/, keyed by fixture folder (the kind in lower case) and
// fixture name. Data only, no runtime imports: the unit tests (health.test.ts) and end-to-end tests that run the same
// fixtures through Argo CD's and Flux's own code read the same expectations, so the two can never drift apart.

/** What Argo CD shows for a fixture: the status and message of its health. */
export interface ArgoExpectation {
  readonly status: ArgoHealthStatus;
  readonly message: string;
}

const overview = '([Normal]amd64: 6/6; arm64: 4/4)';
const stillSyncs = 'shown as Healthy so that syncs go on; see kubectl describe deployregion arm64';

/**
 * Argo CD health from our Lua scripts (gitops/argocd/), for the kinds that have one, and the same health and message
 * from the reading edctl uses (core/rollout/status-reading.ts). Each such kind lists every one of its fixtures. Other
 * kinds are absent on purpose: Argo CD judges ReplicaSets with its built-in check, not ours.
 */
export const ARGO_CASES: { readonly [Dir in Lowercase<HealthKind>]: Readonly<Record<string, ArgoExpectation>> } = {
  extendeddeployment: {
    'no-status': { status: 'Progressing', message: 'Waiting for the extended-deployment agent to report status' },
    'no-observed-generation': { status: 'Progressing', message: 'Waiting for the agent to observe generation 3' },
    'generation-not-observed': { status: 'Progressing', message: 'Waiting for the agent to observe generation 4' },
    'waiting-for-sync': { status: 'Progressing', message: `waiting for the sync: workload web-arm64 is not at revision 7d793037a0 ${overview}` },
    progressing: { status: 'Progressing', message: `group 2 of 3 in progress ${overview}` },
    'waiting-for-confirmation': {
      status: 'Suspended',
      message: `group 1 is done; group 2 waits for approval ${overview}; approve with: edctl approve web -n shop`,
    },
    paused: { status: 'Suspended', message: `paused by edctl pause in group 2 ${overview}` },
    'analysis-failed': {
      status: 'Degraded',
      message: `the analysis of group 2 failed: the rollout holds until Git changes, or edctl resume runs the analysis again ${overview}`,
    },
    'analysis-waiting-for-data': { status: 'Progressing', message: `group 2 is analysed before group 3 starts (WaitingForData) ${overview}` },
    aborted: { status: 'Suspended', message: `rollout aborted in group 2; it holds until Git changes or it is resumed ${overview}` },
    degraded: { status: 'Degraded', message: 'group 2 did not finish within 300s; the rollout stopped ([Normal]amd64: 6/6; arm64: 3/4)' },
    'invalid-spec': { status: 'Degraded', message: 'Invalid spec: spec.regions: integer replicas add up to 12, more than spec.replicas (10)' },
    'invalid-from-the-start': { status: 'Degraded', message: 'Invalid spec: spec.regions[1].name: DeployRegion "arm64" not found (known: amd64)' },
    healthy: { status: 'Healthy', message: `every region runs its rendered revision ${overview}` },
  },
  // Node trouble is Healthy with a plain message: a Degraded DeployRegion in wave -1 would fail every sync.
  deployregion: {
    'no-status': { status: 'Healthy', message: 'No node health reported for this region yet' },
    'generation-not-observed': { status: 'Progressing', message: 'Waiting for the agent to observe generation 2' },
    healthy: { status: 'Healthy', message: 'Healthy: 4 of 4 nodes ready' },
    degraded: { status: 'Healthy', message: `Degraded: 3 of 4 nodes ready (${stillSyncs})` },
    failed: { status: 'Healthy', message: `Failed: 0 of 4 nodes ready (${stillSyncs})` },
  },
};

/** The kinds with `healthCheckExprs` in examples/gitops/flux-kustomization.yaml, by fixture folder. */
export const FLUX_KINDS = {
  extendeddeployment: { apiVersion: 'extendeddeployment.io/v1beta1', kind: 'ExtendedDeployment' },
  replicaset: { apiVersion: 'apps/v1', kind: 'ReplicaSet' },
} as const;

/** A fixture folder with Flux expectations. */
export type FluxDir = keyof typeof FLUX_KINDS;

/** Flux's status from the example Kustomization's expressions; each kind lists every one of its fixtures. */
export const FLUX_CASES: { readonly [Dir in FluxDir]: Readonly<Record<string, FluxStatus>> } = {
  extendeddeployment: {
    'no-status': 'Unknown',
    'no-observed-generation': 'InProgress',
    'generation-not-observed': 'InProgress',
    'waiting-for-sync': 'InProgress',
    progressing: 'InProgress',
    'waiting-for-confirmation': 'InProgress',
    paused: 'InProgress',
    'analysis-failed': 'Failed',
    'analysis-waiting-for-data': 'InProgress',
    aborted: 'InProgress',
    degraded: 'Failed',
    'invalid-spec': 'Failed',
    'invalid-from-the-start': 'Failed',
    healthy: 'Current',
  },
  // A regional ReplicaSet is Current once its generation is observed, whatever its pods do: the ExtendedDeployment
  // decides. Any other ReplicaSet waits for its replicas, and none ever Fails (no fail-fast).
  replicaset: {
    'regional-rollout-unavailable': 'Current',
    'regional-generation-not-observed': 'InProgress',
    'regional-not-yet-observed': 'InProgress',
    'plain-short-of-replicas': 'InProgress',
    'plain-complete': 'Current',
    'plain-default-replicas-unavailable': 'InProgress',
    'plain-default-replicas-available': 'Current',
  },
};
