/**
 * The simulated cluster at the instant Git applies a change: the rendered ExtendedDeployment and regional workloads
 * as Git applies them (server-side apply: the agent's spec.replicas and spec.paused stay), over the pods that ran
 * before.
 */
import type { ExtendedDeploymentStatus } from '../api/extended-deployment.js';
import { DEFAULT_NAMESPACE } from '../api/common.js';
import { API_VERSION, REGION_KIND } from '../api/identity.js';
import type { DeployRegionObject, ExtendedDeploymentObject, PodTemplate } from '../kube/objects.js';
import { MARKED_AT_ANNOTATION, POD_DELETION_COST_ANNOTATION, REGION_LABEL, REVISION_LABEL, REVISIONS_ANNOTATION } from '../labels.js';
import { parseExtendedDeployment } from '../parse.js';
import { formatProblem } from '../problems.js';
import { standingMarkCost } from '../rollout/removal-marks.js';
import { inPlaceEnabled } from '../validate.js';
import { shortHash } from '../revision.js';
import { controllerReference, iso, templateOf, uidOf, type Cluster, type Cohort, type Setting, type SimPod, type SimWorkload } from './cluster.js';
import { settle } from './controllers.js';
import { runningPod } from './kubelet.js';
import { revisionName, runningStatefulPod } from './statefulset-controller.js';
import { SETTLED_FOR_MS, SIMULATION_START } from './timing.js';

/** One region at the instant Git applies the change. */
export interface RegionStart {
  readonly name: string;
  /** The rendered regional workload (ReplicaSet, Deployment in compat mode, or StatefulSet, without spec.replicas). */
  readonly workload: SimWorkload;
  /** spec.replicas the agent had set before; undefined when Git creates the workload now (Kubernetes makes it 1). */
  readonly replicas: number | undefined;
  /** Pods running before the change, by revision label, all Ready and available. */
  readonly running: Readonly<Record<string, number>>;
  /**
   * The template the pods at another revision than the workload's were created from (the previous render's).
   * Default: the workload's own with another revision label, which no in-place swap can reach.
   */
  readonly previousTemplate?: PodTemplate | undefined;
}

/** What a simulation starts from. */
export interface SimulationStart {
  /** The rendered ExtendedDeployment (its spec and the render's revision annotations), as Git applies it. */
  readonly extendedDeployment: ExtendedDeploymentObject;
  /** Its regions, in declared order. */
  readonly regions: readonly RegionStart[];
  /**
   * The status the agent last wrote before the change, when the ExtendedDeployment existed: its completed rollout of
   * the base, with each region's count. Without it every region counts as new (growth.ts).
   */
  readonly status?: ExtendedDeploymentStatus;
  /**
   * Whether the pods that ran before at another revision carry the mark for removal that a rollout the agent completed
   * leaves on them (RolloutInput.standingMarks). Default true; false for pods the agent never saw complete a rollout
   * (it was installed since, or the pods were replaced meanwhile).
   */
  readonly standingMarks?: boolean;
}

/**
 * The setting of a simulation: what the rendered ExtendedDeployment fixes. Throws when it is not valid. StatefulSet
 * regions keep every pod as an object whatever `cohorts` asks: cohorts (cohorts.ts) stand for pods that differ only by
 * a serial that their controller never looks at one by one, while the StatefulSet controller acts on each ordinal
 * (it makes the lowest missing one, waits for each below it, replaces the highest not updated), and its pods' names
 * are their ordinals, not serials of a fixed width.
 */
export function settingOf(start: SimulationStart, cohorts: boolean): Setting {
  const parsed = parseExtendedDeployment(start.extendedDeployment);
  if (!parsed.ok) throw new Error(`cannot simulate an invalid ExtendedDeployment: ${parsed.problems.map(formatProblem).join('; ')}`);
  const revisions = JSON.parse(start.extendedDeployment.metadata?.annotations?.[REVISIONS_ANNOTATION] ?? '{}') as Record<string, string>;
  return {
    namespace: start.extendedDeployment.metadata?.namespace ?? DEFAULT_NAMESPACE,
    subsetType: parsed.value.spec.subsetType,
    targets: new Map(Object.entries(revisions)),
    minReadySeconds: parsed.value.spec.strategy.minReadySeconds,
    batchSize: parsed.value.spec.strategy.batchSize,
    cohorts: cohorts && parsed.value.spec.subsetType !== 'StatefulSet',
    standingMarks: start.standingMarks !== false && ['ReplicaSet', 'InplaceSet'].includes(parsed.value.spec.subsetType) && !inPlaceEnabled(parsed.value),
  };
}

/** A DeployRegion that selects the region's own nodes: the simulation places no pod by node, but observe checks that it exists. */
function deployRegion(name: string): DeployRegionObject {
  return { apiVersion: API_VERSION, kind: REGION_KIND, metadata: { name }, spec: { matchLabels: { [REGION_LABEL]: name } } };
}

/** A template with another revision label. */
function atRevision(template: PodTemplate, revision: string): PodTemplate {
  return { ...template, metadata: { ...template.metadata, labels: { ...template.metadata?.labels, [REVISION_LABEL]: revision } } };
}

/** The workload as Git applies it over the agent's fields, stored (uid, generation) in the simulation's namespace. */
function applied(region: RegionStart, namespace: string, compat: boolean): SimWorkload {
  const name = region.workload.metadata?.name ?? '';
  return {
    ...region.workload,
    metadata: {
      ...region.workload.metadata,
      namespace,
      uid: uidOf(name),
      resourceVersion: '1',
      generation: region.replicas === undefined ? 1 : 2,
      creationTimestamp: iso(SIMULATION_START - SETTLED_FOR_MS),
    },
    spec: {
      ...region.workload.spec,
      replicas: region.replicas ?? 1,
      // A regional Deployment rests paused between rollouts (the agent unpauses it in its group); a new one is not.
      ...(compat && { paused: region.replicas !== undefined }),
    },
    status: {},
  };
}

/** A ReplicaSet the Deployment made earlier for `template` (compat mode), with `replicas`. */
function earlierReplicaSet(deployment: SimWorkload, template: PodTemplate, replicas: number, revision: number): SimWorkload {
  const hash = shortHash(template);
  const name = `${deployment.metadata?.name ?? ''}-${hash}`;
  const labels = { ...template.metadata?.labels, 'pod-template-hash': hash };
  return {
    apiVersion: 'apps/v1',
    kind: 'ReplicaSet',
    metadata: {
      name,
      namespace: deployment.metadata?.namespace ?? '',
      uid: uidOf(name),
      resourceVersion: '1',
      generation: 1,
      labels,
      annotations: {
        'deployment.kubernetes.io/revision': String(revision),
        'deployment.kubernetes.io/desired-replicas': String(deployment.spec?.replicas ?? 1),
      },
      creationTimestamp: iso(SIMULATION_START - SETTLED_FOR_MS),
      ownerReferences: [controllerReference(deployment, 'Deployment')],
    },
    spec: {
      replicas,
      minReadySeconds: deployment.spec?.minReadySeconds ?? 0,
      selector: { matchLabels: { ...deployment.spec?.selector?.matchLabels, 'pod-template-hash': hash } },
      template: { ...template, metadata: { ...template.metadata, labels } },
    },
    status: {},
  };
}

/** A StatefulSet region at the instant Git applies the change: the StatefulSet, its pods and its revisions' templates. */
interface StatefulSetStart {
  readonly statefulSet: SimWorkload;
  readonly pods: readonly SimPod[];
  readonly revisions: Readonly<Record<string, PodTemplate>>;
}

/**
 * A StatefulSet region at the instant Git applies the change. Before it, the StatefulSet rested after its previous
 * rollout: its pods at ordinals 0..n-1, those at another revision than the rendered one below those at it (a rolling
 * update replaces from the highest ordinal down), its status naming the revision of its lowest ordinal as both its
 * current and update revision, its partition (the agent's, which Git's apply leaves) at its replica count
 * (statefulset-adapter.ts, atRest). Git's apply changes its template, a new generation: the controller finds the new
 * update revision when it syncs (startCluster settles). One Git creates now has the API server's defaults: one replica,
 * partition 0, no status.
 */
function statefulSetStart(region: RegionStart, namespace: string, since: number): StatefulSetStart {
  const stored = applied(region, namespace, false);
  const strategy = stored.spec?.updateStrategy;
  const statefulSet: SimWorkload = {
    ...stored,
    spec: { ...stored.spec, updateStrategy: { ...strategy, rollingUpdate: { ...strategy?.rollingUpdate, partition: region.replicas ?? 0 } } },
  };
  const template = templateOf(statefulSet);
  const target = template.metadata?.labels?.[REVISION_LABEL];
  const templateAt = (revision: string) => (revision === target ? template : atRevision(region.previousTemplate ?? template, revision));
  const running = Object.entries(region.running)
    .sort(([a], [b]) => Number(a === target) - Number(b === target))
    .map(([revision, count]) => {
      const at = templateAt(revision);
      return { count, template: at, name: revisionName(statefulSet, at) };
    });
  const pods: SimPod[] = [];
  for (const r of running) {
    for (let k = 0; k < r.count; k++) pods.push(runningStatefulPod(statefulSet, pods.length, r.name, r.template, since));
  }
  // A region without pods rested at the revision it names (a count of 0).
  const current = region.replicas === undefined ? undefined : (running.find((r) => r.count > 0) ?? running[0])?.name;
  return {
    statefulSet: { ...statefulSet, status: current === undefined ? {} : { observedGeneration: 1, currentRevision: current, updateRevision: current } },
    pods,
    revisions: Object.fromEntries(running.map((r) => [r.name, r.template])),
  };
}

/** A pod with the mark for removal the agent made at `at` (RolloutInput.standingMarks). */
function withStandingMark(pod: SimPod, at: number): SimPod {
  const annotations = { ...pod.object.metadata?.annotations, [POD_DELETION_COST_ANNOTATION]: String(standingMarkCost([])), [MARKED_AT_ANNOTATION]: iso(at) };
  return { ...pod, object: { ...pod.object, metadata: { ...pod.object.metadata, annotations } } };
}

/**
 * The cluster when Git applies the change, after its controllers reacted. The pods that ran before are listed one by
 * one, or (with cohorts) kept as one cohort per workload and revision.
 */
export function startCluster(start: SimulationStart, setting: Setting): Cluster {
  const compat = setting.subsetType === 'Deployment';
  const since = SIMULATION_START - SETTLED_FOR_MS;
  const replicaSets: SimWorkload[] = [];
  const deployments: SimWorkload[] = [];
  const statefulSets: SimWorkload[] = [];
  const controllerRevisions: Record<string, PodTemplate> = {};
  const pods: SimPod[] = [];
  const cohorts: Cohort[] = [];
  const serials: Record<string, number> = {};
  for (const region of start.regions) {
    if (setting.subsetType === 'StatefulSet') {
      const sts = statefulSetStart(region, setting.namespace, since);
      statefulSets.push(sts.statefulSet);
      pods.push(...sts.pods);
      Object.assign(controllerRevisions, sts.revisions);
      serials[sts.statefulSet.metadata?.name ?? ''] = sts.pods.length;
      continue;
    }
    const workload = applied(region, setting.namespace, compat);
    (compat ? deployments : replicaSets).push(workload);
    const template = workload.spec?.template ?? {};
    const target = template.metadata?.labels?.[REVISION_LABEL];
    Object.entries(region.running).forEach(([revision, count], i) => {
      const podTemplate = revision === target ? template : atRevision(region.previousTemplate ?? template, revision);
      const owner = compat ? earlierReplicaSet(workload, podTemplate, count, i + 1) : workload;
      if (compat) replicaSets.push(owner);
      const ownerTemplate = compat ? (owner.spec?.template ?? {}) : podTemplate;
      const rested = (k: number) => {
        const pod = runningPod(owner, k, since, ownerTemplate);
        return setting.standingMarks && revision !== target ? withStandingMark(pod, since) : pod;
      };
      const serial = serials[owner.metadata?.name ?? ''] ?? 0;
      serials[owner.metadata?.name ?? ''] = serial + count;
      if (count === 0) return;
      if (setting.cohorts) {
        cohorts.push({ pod: rested(serial).object, serials: [[serial, serial + count]] });
      } else {
        for (let k = 0; k < count; k++) pods.push(rested(serial + k));
      }
    });
  }
  const ed: ExtendedDeploymentObject = {
    ...start.extendedDeployment,
    metadata: {
      ...start.extendedDeployment.metadata,
      namespace: setting.namespace,
      uid: uidOf(start.extendedDeployment.metadata?.name ?? ''),
      generation: 1,
      resourceVersion: '1',
    },
    ...(start.status && { status: start.status }),
  };
  const cluster: Cluster = {
    now: SIMULATION_START,
    ed,
    deployRegions: start.regions.map((r) => deployRegion(r.name)),
    replicaSets,
    deployments,
    statefulSets,
    controllerRevisions,
    pods: pods.sort((a, b) => ((a.object.metadata?.name ?? '') < (b.object.metadata?.name ?? '') ? -1 : 1)),
    cohorts,
    serials,
    writes: 0,
    tally: { podsCreated: 0, podsSwapped: 0, newPodsRemoved: 0 },
  };
  return settle(cluster, setting);
}
