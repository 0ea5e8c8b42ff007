import { byName } from '../by-name.js';
import { revisionOwnerReference } from '../history/entries.js';
import type { ObjectMeta, PodTemplate } from '../kube/objects.js';
import { KEEPER_LABEL, NAME_LABEL, REGION_LABEL, REVISION_LABEL } from '../labels.js';
import type { CreateKeeperAction, RolloutAction } from './actions.js';
import type { Budgets } from './budgets.js';
import { isPodActive, isPodTerminating } from './pod-activity.js';
import { countWhere, isAvailable, type PodState, type RegionState } from './snapshot.js';

/**
 * A region's keeper is a ReplicaSet the agent owns, `<workload>-<revision>`, controlled by the ExtendedDeployment, whose
 * template is the one the region ran at the revision its partition keeps (from the ExtendedDeployment's history, never
 * from Git). The regional ReplicaSet makes pods at the rendered template only; the keeper makes old-revision pods
 * again: for a kept pod that died, and for a partition raised above the old pods the region still runs.
 *
 * It is made as soon as a region with a partition runs old pods, with the replicas it needs then (usually none): from
 * then on it records which revision the region keeps, also once every kept pod is gone. It serves
 * `partition − old pods of the regional ReplicaSet`, so the regional ReplicaSet's own kept pods come first and the
 * keeper's pods are the first to go when the partition is lowered or removed. It scales up at once within the
 * region's surge (capacity first), and down make-before-break: its available pods leave only as the region has
 * available pods to spare; the regional ReplicaSet sheds the pods the keeper makes once they are available. When the
 * region keeps nothing any more (no partition, or Git went back to the kept revision), it is scaled to 0 and deleted.
 */
export interface KeeperPlan {
  /**
   * The region as the rest of the rollout plans it: the regional ReplicaSet's share. The pods its keeper serves (its
   * available ones, up to what it makes; without surge also the one it is making) are taken off `desired` and
   * `partition` and recorded in `keeperServes`; its other pods' surge room in `keeperOccupies`.
   */
  readonly region: RegionState;
  /** Writes to the keeper: create or scale it, or delete it. */
  readonly actions: readonly RolloutAction[];
  /**
   * When its Ready pods become available (minReadySeconds): the regional ReplicaSet then plans for less, although no
   * object changes, so the agent must look again then even when the rollout is Healthy with nothing to do.
   */
  readonly wakeAt: readonly number[];
}

/** The name of a region's keeper for `revision`: its regional workload's name and the revision. */
export function keeperName(workload: string, revision: string): string {
  return `${workload}-${revision}`;
}

/** The ExtendedDeployment a keeper belongs to: its name and uid (the keeper's controller ownerReference). */
export interface KeeperOwner {
  readonly name: string;
  readonly uid: string;
}

/** Decides one region's keeper and the region the rollout plans with. */
export function planKeeper(region: RegionState, owner: KeeperOwner, budgets: Budgets, minReadySeconds: number, now: number): KeeperPlan {
  const keeper = region.keeper;
  const keep = Math.min(region.partition ?? 0, region.desired);
  const target = region.targetRevision;
  const isOld = (p: PodState) => isPodActive(p) && p.revision !== target;
  const regionalOld = countWhere(region, isOld);
  const revision = keeper?.revision ?? keptRevision(region.pods.filter(isOld));
  const holding = keep > 0 && revision !== undefined && revision !== target;
  const wanted = holding ? Math.max(0, keep - regionalOld) : 0;

  if (!keeper) {
    const template = revision === undefined ? undefined : region.keptTemplates?.[revision];
    const workload = region.workload;
    if (!holding || revision === undefined || !template || !workload || !owner.uid) return { region, actions: [], wakeAt: [] };
    return {
      region,
      actions: [{ kind: 'createKeeper', region: region.name, workload: keeperName(workload.name, revision), replicas: wanted, revision, template, owner }],
      wakeAt: [],
    };
  }

  const available = keeper.pods.filter((p) => isAvailable(p, minReadySeconds, now)).length;
  // What it makes or is making: its count, or its active pods while the controller has not removed some yet.
  const making = Math.max(keeper.replicas, keeper.pods.filter(isPodActive).length);
  const terminating = keeper.pods.filter(isPodTerminating).length;
  // Up at once within the region's surge room, which the region's pods, its keeper's and the terminating ones of both
  // share. Without any surge no room ever comes (the regional ReplicaSet sheds for the keeper only once it serves):
  // then one pod at a time, once every pod it made is available, served as soon as it is asked for, so that the regional
  // ReplicaSet makes room for it in the same step; that costs one available pod for a while, within maxUnavailable
  // (validation makes it at least 1 where maxSurge is 0).
  const surge = budgets.maxSurge > 0;
  const room = Math.max(0, region.desired + budgets.maxSurge - countWhere(region, (p) => isPodActive(p) || isPodTerminating(p)) - making - terminating);
  const up = wanted <= keeper.replicas ? 0 : surge ? Math.min(wanted - keeper.replicas, room) : making === available ? 1 : 0;
  const serves = Math.min(wanted, surge ? available : available + Math.min(1, making + up - available));
  const view: RegionState = {
    ...region,
    desired: region.desired - serves,
    ...(region.partition !== undefined && { partition: Math.max(0, region.partition - serves) }),
    keeperServes: serves,
    keeperOccupies: making + up + terminating - serves,
    ...(holding && { keptWhole: keep }),
  };
  const actions: RolloutAction[] = [];
  const scale = (replicas: number) => actions.push({ kind: 'scale', region: region.name, workload: keeper.name, from: keeper.replicas, replicas });
  if (up > 0) scale(keeper.replicas + up);
  else if (wanted < keeper.replicas) {
    // Pods it has not made available yet go at once; available ones only as the region has some to spare.
    const regionAvailable = countWhere(region, (p) => isAvailable(p, minReadySeconds, now)) + available;
    const spare = Math.max(0, regionAvailable - (region.desired - budgets.maxUnavailable));
    const down = Math.min(keeper.replicas - wanted, keeper.replicas - available + spare);
    if (down > 0) scale(keeper.replicas - down);
  } else if (!holding && keeper.replicas === 0 && !keeper.pods.some((p) => isPodActive(p) || isPodTerminating(p))) {
    // Not while a pod of its own still terminates: deleting it would leave that pod to no one the agent observes.
    actions.push({ kind: 'dropKeeper', region: region.name, workload: keeper.name, uid: keeper.uid });
  }
  const wakeAt = keeper.pods.flatMap((p) =>
    isPodActive(p) && p.ready && p.readySince !== undefined && !isAvailable(p, minReadySeconds, now) ? [p.readySince + minReadySeconds * 1000] : [],
  );
  return { region: view, actions, wakeAt };
}

/**
 * The revision a region's partition keeps, from its old pods: that of the most pods the partition already holds (the
 * hold mark), else of the most old pods; ties by revision, so the choice is stable. Undefined without old pods.
 */
function keptRevision(oldPods: readonly PodState[]): string | undefined {
  const held = oldPods.filter((p) => p.held);
  const pool = held.length > 0 ? held : oldPods;
  const counts = new Map<string, number>();
  for (const pod of pool) if (pod.revision !== undefined) counts.set(pod.revision, (counts.get(pod.revision) ?? 0) + 1);
  const ranked = [...counts].sort(([a, m], [b, n]) => n - m || byName({ name: a }, { name: b }));
  return ranked[0]?.[0];
}

/** A keeper as the agent creates it: a ReplicaSet controlled by the ExtendedDeployment, from the kept template. */
export interface KeeperObject {
  readonly apiVersion: 'apps/v1';
  readonly kind: 'ReplicaSet';
  readonly metadata: ObjectMeta;
  readonly spec: { readonly replicas: number; readonly selector: { readonly matchLabels: Record<string, string> }; readonly template: PodTemplate };
}

/**
 * The keeper a CreateKeeperAction creates in `namespace`. Its selector adds the revision to the regional one, so it
 * selects exactly the kept revision's pods (it never adopts them: the regional ReplicaSet controls its own); its labels
 * carry the keeper mark, which observe, the admission policy and `kubectl get rs -l` go by.
 */
export function keeperObject(action: CreateKeeperAction, namespace: string): KeeperObject {
  const selector = { [NAME_LABEL]: action.owner.name, [REGION_LABEL]: action.region, [REVISION_LABEL]: action.revision };
  const template = action.template;
  return {
    apiVersion: 'apps/v1',
    kind: 'ReplicaSet',
    metadata: {
      name: action.workload,
      namespace,
      labels: { ...selector, [KEEPER_LABEL]: 'true' },
      ownerReferences: [revisionOwnerReference(action.owner)],
    },
    spec: {
      replicas: action.replicas,
      selector: { matchLabels: selector },
      template: { ...template, metadata: { ...template.metadata, labels: { ...template.metadata?.labels, ...selector } } },
    },
  };
}
