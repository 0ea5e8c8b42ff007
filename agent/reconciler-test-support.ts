import type { KubernetesObject, V1Node } from '@kubernetes/client-node';
import type { AgentCaches, TrafficCache } from './informers.js';
import type { DeployRegionStatus } from '../core/api/deploy-region.js';
import type { ExtendedDeploymentStatus } from '../core/api/extended-deployment.js';
import { renderSet } from '../core/render.js';
import type { HistoryAction } from '../core/history/revisions.js';
import type { RolloutAction } from '../core/rollout/actions.js';
import type { AdoptionObjects } from '../core/adoption/adoption.js';
import type { RolloutEvent } from '../core/rollout/planner.js';
import type { AnalysisQuery } from '../core/traffic/observation.js';
import type { IndexedCacheReader } from './runtime/informer.js';
import { ownerKey, workloadNameIndex } from './keys.js';
import { indexValueList, type IndexValues } from './runtime/object-index.js';
import type { DeployRegionObject, ExtendedDeploymentObject, MetaObject } from '../core/kube/objects.js';
import type { ReconcilerPorts } from './reconciler.js';
import { MARKED_AT_ANNOTATION, POD_DELETION_COST_ANNOTATION } from '../core/labels.js';
import { OLD_MARK_COST } from '../core/rollout/removal-marks.js';
import type { RegionStatusPorts } from './region-status-reconciler.js';

/**
 * A read-only cache over objects, like an informer's, indexed like the agent's (by owner unless told), and synced. It
 * reads `objects` on each call: a test changes the cluster by changing them.
 */
export function cache<T extends MetaObject>(objects: T[], indexBy: (object: T) => IndexValues = ownerKey): IndexedCacheReader<T> & { synced(): boolean } {
  return {
    synced: () => true,
    list: (namespace?: string) => objects.filter((o) => !namespace || o.metadata?.namespace === namespace),
    get: (name: string, namespace?: string) => objects.find((o) => o.metadata?.name === name && (o.metadata?.namespace ?? '') === (namespace ?? '')),
    byIndex: (value: string) => objects.filter((o) => indexValueList(indexBy(o)).includes(value)),
  };
}

/** The agent's ExtendedDeployment cache over fixed objects: indexed by {@link workloadNameIndex}. */
export function edCache<T extends ExtendedDeploymentObject>(eds: T[]): IndexedCacheReader<T> & { synced(): boolean } {
  return cache(eds, workloadNameIndex);
}

/**
 * Ports of both reconcilers that record every write in order; `failStatus` makes status writes fail like a 409.
 * History writes are kept apart (`history`), so that tests of the rollout's order of writes do not see them. An
 * adoption reads `adoptionObjects`.
 */
export function recorder(failStatus = false, adoptionObjects: AdoptionObjects = { deployments: [], replicaSets: [], inplaceSets: [], pods: [] }) {
  const calls: string[] = [];
  const statuses: ExtendedDeploymentStatus[] = [];
  const history: HistoryAction[] = [];
  const ports: ReconcilerPorts & RegionStatusPorts = {
    async performAction(_ns: string, kind: string, action: RolloutAction) {
      calls.push(`${action.kind}${action.kind === 'scale' ? `:${kind}:${action.replicas}` : 'pod' in action ? `:${action.pod}` : ''}`);
      // No answer: the reconciler waits for its cache to show the write (as after a delete).
      return undefined;
    },
    async performHistoryAction(_ns: string, action: HistoryAction) {
      history.push(action);
      // As the API server answers a create or replace: the revision with a resourceVersion of its own.
      if (action.kind === 'delete') return undefined;
      const version = String(Number(action.object.metadata?.resourceVersion ?? 0) + 1);
      return { ...action.object, metadata: { ...action.object.metadata, resourceVersion: version } };
    },
    async writeStatus(ed: ExtendedDeploymentObject, status: ExtendedDeploymentStatus) {
      if (failStatus) throw Object.assign(new Error('conflict'), { code: 409 });
      calls.push(`status:${status.phase}:${status.currentGroup}`);
      statuses.push(status);
      // As the API server does: a write gives the object a new resourceVersion.
      return { ...ed, metadata: { ...ed.metadata, resourceVersion: String(Number(ed.metadata?.resourceVersion ?? 0) + 1) }, status };
    },
    recordEvent(_ed: ExtendedDeploymentObject, event: RolloutEvent) {
      calls.push(`event:${event.reason}`);
    },
    async fetchAdoptionObjects() {
      calls.push('readAdoption');
      return adoptionObjects;
    },
    // No Prometheus here: every query is answered with an error (tests of analysis pass ports of their own).
    async queryAnalysis(queries: readonly AnalysisQuery[]) {
      calls.push(...queries.map((q) => `query:${q.metric}:${q.role}`));
      return queries.map((query) => ({ query, error: 'no Prometheus in this test', at: 0 }));
    },
    async writeRegionStatus(region: DeployRegionObject, status: DeployRegionStatus) {
      calls.push(`regionStatus:${region.metadata?.name}:${status.phase}`);
    },
  };
  return { calls, statuses, history, ports };
}

/**
 * ExtendedDeployment shop/web (selector and pod label app=web, one container `app` running `image`) with `spec` over
 * those defaults, as the agent's cache holds it: rendered against `regions` (an invalid spec stays unrendered), with a
 * uid, resourceVersion 10, generation 1 and `status`. `revisionOf` gives a region's rendered revision (`x` if none).
 */
export function webExtendedDeployment(o: {
  regions: readonly DeployRegionObject[];
  image: string;
  spec: Record<string, unknown>;
  status?: ExtendedDeploymentStatus;
}) {
  const raw = {
    apiVersion: 'extendeddeployment.io/v1beta1',
    kind: 'ExtendedDeployment',
    metadata: { name: 'web', namespace: 'shop' },
    spec: {
      selector: { matchLabels: { app: 'web' } },
      template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'app', image: o.image }] } },
      ...o.spec,
    },
  };
  const rendered = renderSet([...o.regions, raw]);
  const r = rendered.ok ? rendered.value.extendedDeployments[0] : undefined;
  const manifest = (r?.manifest ?? raw) as ExtendedDeploymentObject;
  const ed: ExtendedDeploymentObject = {
    ...manifest,
    metadata: { ...manifest.metadata, uid: 'uid-web', resourceVersion: '10', generation: 1 },
    ...(o.status && { status: o.status }),
  };
  return { ed, revisionOf: (region: string) => r?.regions.find((x) => x.name === region)?.revision ?? 'x' };
}

/** A DeployRegion selecting the nodes of one CPU architecture. */
export const archRegion = (name: string, arch: string): DeployRegionObject => ({
  apiVersion: 'extendeddeployment.io/v1beta1',
  kind: 'DeployRegion',
  metadata: { name, generation: 1 },
  spec: { matchLabels: { 'kubernetes.io/arch': arch } },
});

/** A node of one architecture, Ready, or unreachable (tainted and Unknown) for the last two minutes before `now`. */
export const archNode = (name: string, arch: string, ready: boolean, now: number): V1Node => ({
  metadata: { name, labels: { 'kubernetes.io/arch': arch } },
  spec: ready ? {} : { taints: [{ key: 'node.kubernetes.io/unreachable', effect: 'NoExecute', timeAdded: new Date(now - 120_000) }] },
  status: {
    allocatable: { cpu: '8', memory: '8Gi', pods: '20' },
    conditions: [{ type: 'Ready', status: ready ? 'True' : 'Unknown', lastTransitionTime: new Date(now - 120_000) }],
  },
});

/** A traffic cache over fixed objects: synced and readable unless told. */
export function trafficCache<T extends KubernetesObject>(
  resource: string,
  objects: T[],
  state: { synced?: boolean; forbidden?: 'list' | 'watch' } = {},
): TrafficCache<T> {
  return {
    resource,
    synced: () => state.synced ?? true,
    forbidden: () => state.forbidden,
    list: (namespace?: string) => objects.filter((o) => namespace === undefined || o.metadata?.namespace === namespace),
    get: (name: string, namespace?: string) => objects.find((o) => o.metadata?.name === name && o.metadata?.namespace === namespace),
  };
}

/** An analysis metric of the agent's traffic tests. */
export const ERRORS = { name: 'errors', query: 'sum(rate(errors{service="{{name}}-{{revision}}"}[{{window}}]))', threshold: { op: '<', value: 1 } };

/**
 * The agent's caches over fixed objects (the informers' view of one reconcile): the ExtendedDeployment, its regions,
 * workloads and pods; `more` adds or replaces caches (nodes, usage, traffic).
 */
export function agentCaches(
  o: { eds: ExtendedDeploymentObject[]; regions: DeployRegionObject[]; replicaSets?: MetaObject[]; pods?: MetaObject[] },
  more: Record<string, unknown> = {},
): AgentCaches {
  return {
    extendedDeployments: edCache(o.eds),
    deployRegions: cache(o.regions),
    replicaSets: cache(o.replicaSets ?? []),
    deployments: cache([]),
    statefulSets: cache([]),
    controllerRevisions: cache([]),
    pods: cache(o.pods ?? []),
    nodes: cache([]),
    ...more,
  } as unknown as AgentCaches;
}

/**
 * The annotations a rollout leaves on its pods (RolloutInput.standingMarks) where no old pod carried a mark (the first
 * rollout): pods of a Healthy fixture carry them, as the agent keeps them, unless the test is about pods without them.
 */
export const STANDING_MARK = { [POD_DELETION_COST_ANNOTATION]: String(OLD_MARK_COST + 1), [MARKED_AT_ANNOTATION]: '2025-12-31T00:00:00Z' } as const;
