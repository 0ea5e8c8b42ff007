/**
 * The Deployment controller of the simulated cluster (compat mode, subsetType Deployment), after Kubernetes'
 * pkg/controller/deployment: one ReplicaSet per template (named after the template's hash), RollingUpdate within
 * maxSurge and maxUnavailable, Recreate, proportional scaling, and `spec.paused`, which stops the rollout (no
 * ReplicaSet is created for a new template) while scaling still works. Old ReplicaSets are kept (no history clean-up:
 * it changes no pod). Each call is one sync, as the real controller's; the caller repeats them until nothing changes.
 */
import { parsePercent } from '../api/common.js';
import { shortHash } from '../revision.js';
import { isPodTerminal } from '../rollout/pod-activity.js';
import { controllerReference, iso, ownedBy, replaced, uidOf, withSpec, written, type Cluster, type SimWorkload } from './cluster.js';
import { cohortSize } from './cohorts.js';

const HASH_LABEL = 'pod-template-hash';
const REVISION_ANNOTATION = 'deployment.kubernetes.io/revision';
const DESIRED_ANNOTATION = 'deployment.kubernetes.io/desired-replicas';
const MAX_ANNOTATION = 'deployment.kubernetes.io/max-replicas';

const replicasOf = (w: SimWorkload | undefined): number => w?.spec?.replicas ?? 0;
const sum = (rss: readonly SimWorkload[], f: (rs: SimWorkload) => number) => rss.reduce((n, rs) => n + f(rs), 0);

/** An int-or-percent of `total`, rounded up or down (intstr.GetScaledValueFromIntOrPercent). */
function scaled(value: number | string | undefined, total: number, roundUp: boolean): number {
  if (typeof value === 'number') return value;
  const exact = (total * (parsePercent(value ?? '25%') ?? 0)) / 100;
  return roundUp ? Math.ceil(exact) : Math.floor(exact);
}

/** maxSurge and maxUnavailable of a Deployment resolved for its replicas (ResolveFenceposts: both 0 makes unavailable 1). */
function fenceposts(d: SimWorkload): { maxSurge: number; maxUnavailable: number } {
  const rolling = d.spec?.strategy?.rollingUpdate;
  const maxSurge = scaled(rolling?.maxSurge, replicasOf(d), true);
  const maxUnavailable = scaled(rolling?.maxUnavailable, replicasOf(d), false);
  return { maxSurge, maxUnavailable: maxSurge === 0 && maxUnavailable === 0 ? 1 : maxUnavailable };
}

/** The pod-template-hash of a Deployment's template (a memo per template object: objects are never changed, only replaced). */
function templateHash(d: SimWorkload): string {
  const template = d.spec?.template ?? {};
  let hash = hashes.get(template);
  if (hash === undefined) {
    hash = shortHash(template);
    hashes.set(template, hash);
  }
  return hash;
}

const hashes = new WeakMap<object, string>();

/** The Deployment's ReplicaSets, oldest first, and the one of its current template. */
function replicaSetsOf(cluster: Cluster, d: SimWorkload): { all: SimWorkload[]; newRS: SimWorkload | undefined; old: SimWorkload[] } {
  const all = cluster.replicaSets
    .filter((rs) => ownedBy(rs, d))
    .sort((a, b) => Number(a.metadata?.annotations?.[REVISION_ANNOTATION] ?? 0) - Number(b.metadata?.annotations?.[REVISION_ANNOTATION] ?? 0));
  const hash = templateHash(d);
  const newRS = all.find((rs) => rs.metadata?.labels?.[HASH_LABEL] === hash);
  return { all, newRS, old: all.filter((rs) => rs !== newRS) };
}

/** Sets a ReplicaSet's replicas and the Deployment's sizes in its annotations (scaleReplicaSet). */
function scaleTo(cluster: Cluster, d: SimWorkload, rs: SimWorkload, replicas: number): Cluster {
  const index = cluster.replicaSets.indexOf(rs);
  const annotations = {
    ...rs.metadata?.annotations,
    [DESIRED_ANNOTATION]: String(replicasOf(d)),
    [MAX_ANNOTATION]: String(replicasOf(d) + fenceposts(d).maxSurge),
  };
  const sameAnnotations =
    rs.metadata?.annotations?.[DESIRED_ANNOTATION] === annotations[DESIRED_ANNOTATION] &&
    rs.metadata?.annotations?.[MAX_ANNOTATION] === annotations[MAX_ANNOTATION];
  if (index < 0 || (replicasOf(rs) === replicas && sameAnnotations)) return cluster;
  const annotated = { ...rs, metadata: { ...rs.metadata, annotations } };
  const next = replicasOf(rs) === replicas ? written(annotated, {}) : withSpec(annotated, { replicas });
  return { ...cluster, replicaSets: replaced(cluster.replicaSets, index, next), writes: cluster.writes + 1 };
}

/** Creates the ReplicaSet of the Deployment's current template with `replicas`. */
function createReplicaSet(cluster: Cluster, d: SimWorkload, old: readonly SimWorkload[], replicas: number): Cluster {
  const hash = templateHash(d);
  const name = `${d.metadata?.name ?? ''}-${hash}`;
  const template = d.spec?.template ?? {};
  const labels = { ...template.metadata?.labels, [HASH_LABEL]: hash };
  const revision = Math.max(0, ...old.map((rs) => Number(rs.metadata?.annotations?.[REVISION_ANNOTATION] ?? 0))) + 1;
  const rs: SimWorkload = {
    apiVersion: 'apps/v1',
    kind: 'ReplicaSet',
    metadata: {
      name,
      namespace: d.metadata?.namespace ?? '',
      uid: uidOf(name),
      resourceVersion: '1',
      generation: 1,
      labels,
      annotations: {
        [REVISION_ANNOTATION]: String(revision),
        [DESIRED_ANNOTATION]: String(replicasOf(d)),
        [MAX_ANNOTATION]: String(replicasOf(d) + fenceposts(d).maxSurge),
      },
      creationTimestamp: iso(cluster.now),
      ownerReferences: [controllerReference(d, 'Deployment')],
    },
    spec: {
      replicas,
      minReadySeconds: d.spec?.minReadySeconds ?? 0,
      selector: { matchLabels: { ...d.spec?.selector?.matchLabels, [HASH_LABEL]: hash } },
      template: { ...template, metadata: { ...template.metadata, labels } },
    },
    status: {},
  };
  return { ...cluster, replicaSets: [...cluster.replicaSets, rs], writes: cluster.writes + 1 };
}

/** Whether a ReplicaSet's desired-replicas annotation disagrees with the Deployment (isScalingEvent). */
function scalingEvent(d: SimWorkload, all: readonly SimWorkload[]): boolean {
  return all.some(
    (rs) =>
      replicasOf(rs) > 0 &&
      rs.metadata?.annotations?.[DESIRED_ANNOTATION] !== undefined &&
      Number(rs.metadata.annotations[DESIRED_ANNOTATION]) !== replicasOf(d),
  );
}

/** What a ReplicaSet should add of `toAdd` in proportion to its size (GetProportion, getReplicaSetFraction). */
function proportion(d: SimWorkload, rs: SimWorkload, toAdd: number, added: number): number {
  if (replicasOf(rs) === 0 || toAdd === 0 || toAdd === added) return 0;
  const deploymentReplicas = replicasOf(d) + fenceposts(d).maxSurge;
  const annotated = Number(rs.metadata?.annotations?.[MAX_ANNOTATION] ?? d.status?.replicas ?? 0);
  const fraction = replicasOf(d) === 0 ? -replicasOf(rs) : Math.round((replicasOf(rs) * deploymentReplicas) / (annotated || 1)) - replicasOf(rs);
  const allowed = toAdd - added;
  return toAdd > 0 ? Math.min(fraction, allowed) : Math.max(fraction, allowed);
}

/** Scaling without a rollout (paused, or only spec.replicas changed): the controller's `scale`. */
function scaleOnly(cluster: Cluster, d: SimWorkload, newRS: SimWorkload | undefined, old: readonly SimWorkload[]): Cluster {
  const all = [...(newRS ? [newRS] : []), ...old];
  const active = all.filter((rs) => replicasOf(rs) > 0);
  const activeOrLatest = active.length === 1 ? active[0] : active.length === 0 ? (newRS ?? old[old.length - 1]) : undefined;
  if (activeOrLatest) return scaleTo(cluster, d, activeOrLatest, replicasOf(d));
  const saturated = newRS !== undefined && replicasOf(newRS) === replicasOf(d) && newRS.status?.availableReplicas === replicasOf(d);
  if (saturated) return old.filter((rs) => replicasOf(rs) > 0).reduce((c, rs) => scaleTo(c, d, rs, 0), cluster);
  if (d.spec?.strategy?.type === 'Recreate') return cluster;
  const allowed = replicasOf(d) > 0 ? replicasOf(d) + fenceposts(d).maxSurge : 0;
  const toAdd = allowed - sum(active, replicasOf);
  const newer = (a: SimWorkload, b: SimWorkload) =>
    Number(b.metadata?.annotations?.[REVISION_ANNOTATION] ?? 0) - Number(a.metadata?.annotations?.[REVISION_ANNOTATION] ?? 0);
  // Larger first; among equal sizes newer first when growing, older first when shrinking.
  const ordered = [...active].sort((a, b) => replicasOf(b) - replicasOf(a) || (toAdd > 0 ? newer(a, b) : -newer(a, b)));
  let added = 0;
  const sizes = ordered.map((rs) => {
    const p = proportion(d, rs, toAdd, added);
    added += p;
    return replicasOf(rs) + p;
  });
  if (sizes.length > 0) sizes[0] = Math.max(0, (sizes[0] ?? 0) + toAdd - added);
  return ordered.reduce((c, rs, i) => scaleTo(c, d, c.replicaSets.find((x) => x.metadata?.uid === rs.metadata?.uid) ?? rs, sizes[i] ?? 0), cluster);
}

/** RollingUpdate (rolloutRolling): scale the new ReplicaSet up within maxSurge, else the old ones down within maxUnavailable. */
function rollingUpdate(cluster: Cluster, d: SimWorkload): Cluster {
  const { maxSurge, maxUnavailable } = fenceposts(d);
  const desired = replicasOf(d);
  let c = cluster;
  let { all, newRS, old } = replicaSetsOf(c, d);
  if (!newRS) {
    const current = sum(old, replicasOf);
    c = createReplicaSet(c, d, old, current >= desired + maxSurge ? 0 : Math.min(desired + maxSurge - current, desired));
    ({ all, newRS, old } = replicaSetsOf(c, d));
  } else if (replicasOf(newRS) !== desired) {
    const target =
      replicasOf(newRS) > desired
        ? desired
        : sum(all, replicasOf) >= desired + maxSurge
          ? replicasOf(newRS)
          : replicasOf(newRS) + Math.min(desired + maxSurge - sum(all, replicasOf), desired - replicasOf(newRS));
    if (target !== replicasOf(newRS)) return scaleTo(c, d, newRS, target);
  }
  if (!newRS || sum(old, replicasOf) === 0) return c;
  const minAvailable = desired - maxUnavailable;
  const newUnavailable = replicasOf(newRS) - (newRS.status?.availableReplicas ?? 0);
  const maxScaledDown = sum(all, replicasOf) - minAvailable - newUnavailable;
  if (maxScaledDown <= 0) return c;
  // Unhealthy old replicas go first (cleanupUnhealthyReplicas), then available ones down to minAvailable.
  let cleaned = 0;
  for (const rs of old) {
    if (cleaned >= maxScaledDown) break;
    const unhealthy = replicasOf(rs) - (rs.status?.availableReplicas ?? 0);
    if (replicasOf(rs) === 0 || unhealthy <= 0) continue;
    const down = Math.min(maxScaledDown - cleaned, unhealthy);
    c = scaleTo(c, d, rs, replicasOf(rs) - down);
    cleaned += down;
  }
  ({ all, old } = replicaSetsOf(c, d));
  const available = sum(all, (rs) => rs.status?.availableReplicas ?? 0);
  let toScaleDown = available - minAvailable;
  for (const rs of old) {
    if (toScaleDown <= 0) break;
    if (replicasOf(rs) === 0) continue;
    const down = Math.min(replicasOf(rs), toScaleDown);
    c = scaleTo(c, d, rs, replicasOf(rs) - down);
    toScaleDown -= down;
  }
  return c;
}

/** Whether any pod of the old ReplicaSets still runs (terminating ones included), as Recreate waits for. */
function oldPodsRunning(cluster: Cluster, old: readonly SimWorkload[]): boolean {
  return old.some(
    (rs) =>
      (rs.status?.replicas ?? 0) > 0 ||
      cluster.cohorts.some((c) => ownedBy(c.pod, rs) && cohortSize(c) > 0) ||
      cluster.pods.some((p) => ownedBy(p.object, rs) && !isPodTerminal({ phase: p.object.status?.phase, terminating: false })),
  );
}

/** Recreate (rolloutRecreate): every old ReplicaSet to 0, and once their pods are gone the new one to the full count. */
function recreate(cluster: Cluster, d: SimWorkload): Cluster {
  const { newRS, old } = replicaSetsOf(cluster, d);
  const shrinking = old.filter((rs) => replicasOf(rs) > 0);
  if (shrinking.length > 0) return shrinking.reduce((c, rs) => scaleTo(c, d, rs, 0), cluster);
  if (oldPodsRunning(cluster, old)) return cluster;
  return newRS ? scaleTo(cluster, d, newRS, replicasOf(d)) : createReplicaSet(cluster, d, old, replicasOf(d));
}

/** The Deployment's status from its ReplicaSets' (calculateStatus). */
function withStatus(cluster: Cluster, index: number): Cluster {
  const d = cluster.deployments[index] as SimWorkload;
  const { all, newRS } = replicaSetsOf(cluster, d);
  const status = {
    observedGeneration: d.metadata?.generation ?? 0,
    replicas: sum(all, (rs) => rs.status?.replicas ?? 0),
    updatedReplicas: newRS?.status?.replicas ?? 0,
    readyReplicas: sum(all, (rs) => rs.status?.readyReplicas ?? 0),
    availableReplicas: sum(all, (rs) => rs.status?.availableReplicas ?? 0),
  };
  const old = d.status ?? {};
  if (Object.entries(status).every(([k, v]) => old[k as keyof typeof old] === v)) return cluster;
  return { ...cluster, deployments: replaced(cluster.deployments, index, written(d, { status })), writes: cluster.writes + 1 };
}

/** One sync of the Deployment at `index`: the same cluster when it has nothing to do. */
export function reconcileDeployment(cluster: Cluster, index: number): Cluster {
  const d = cluster.deployments[index] as SimWorkload;
  const { all, newRS, old } = replicaSetsOf(cluster, d);
  const synced =
    d.spec?.paused === true || scalingEvent(d, all)
      ? scaleOnly(cluster, d, newRS, old)
      : d.spec?.strategy?.type === 'Recreate'
        ? recreate(cluster, d)
        : rollingUpdate(cluster, d);
  return withStatus(synced, index);
}
