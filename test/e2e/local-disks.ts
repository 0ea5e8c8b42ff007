// Local disks for the lab: what an operator pre-creates where a StorageClass has no provisioner. For every StatefulSet
// among some objects whose claim templates use such a StorageClass (defined among the same objects), PersistentVolumes
// of the claim's size on the StatefulSet's region: each volume's node affinity is the pod template's required node
// affinity (the region's placement), so the scheduler binds a claim (WaitForFirstConsumer) on a node of the pod's region.
import type { KubernetesObject, V1PersistentVolume } from '@kubernetes/client-node';
import { clients, serverSideApply } from './helpers.js';

interface StatefulSetLike extends KubernetesObject {
  spec?: {
    template?: { spec?: { affinity?: { nodeAffinity?: { requiredDuringSchedulingIgnoredDuringExecution?: { nodeSelectorTerms?: unknown[] } } } } };
    volumeClaimTemplates?: { metadata?: { name?: string }; spec?: { storageClassName?: string; resources?: { requests?: { storage?: string } } } }[];
  };
}

/**
 * Creates `perClaim` PersistentVolumes per claim template of every StatefulSet in `objects` whose StorageClass is one of
 * `objects` without a provisioner, and returns them (cluster-scoped: the caller deletes them with removeLocalDisks).
 */
export async function provideLocalDisks(objects: readonly KubernetesObject[], perClaim: number): Promise<V1PersistentVolume[]> {
  const local = new Set(
    objects
      .filter((o) => o.kind === 'StorageClass' && (o as { provisioner?: string }).provisioner === 'kubernetes.io/no-provisioner')
      .map((o) => o.metadata?.name ?? ''),
  );
  const volumes: V1PersistentVolume[] = [];
  for (const sts of objects.filter((o): o is StatefulSetLike => o.kind === 'StatefulSet')) {
    const terms = sts.spec?.template?.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms ?? [];
    for (const claim of sts.spec?.volumeClaimTemplates ?? []) {
      const storageClass = claim.spec?.storageClassName ?? '';
      if (!local.has(storageClass)) continue;
      for (let i = 0; i < perClaim; i++) {
        const name = `lab-${sts.metadata?.namespace ?? ''}-${sts.metadata?.name ?? ''}-${claim.metadata?.name ?? ''}-${i}`;
        volumes.push(localVolume(name, storageClass, claim.spec?.resources?.requests?.storage ?? '1Gi', terms));
      }
    }
  }
  for (const v of volumes) await serverSideApply(v as KubernetesObject);
  return volumes;
}

/** Deletes the volumes provideLocalDisks made (a bound one goes once its claim is gone). */
export async function removeLocalDisks(volumes: readonly V1PersistentVolume[]): Promise<void> {
  for (const v of volumes) {
    try {
      await clients().core.deletePersistentVolume({ name: v.metadata?.name ?? '' });
    } catch {
      // already gone
    }
  }
}

/** A local PersistentVolume of `storageClass` on the nodes `nodeSelectorTerms` select, its reclaim policy Retain. */
export function localVolume(name: string, storageClass: string, storage: string, nodeSelectorTerms: readonly unknown[]): V1PersistentVolume {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolume',
    metadata: { name, labels: { 'lab.extendeddeployment.io/disk': 'local' } },
    spec: {
      capacity: { storage },
      accessModes: ['ReadWriteOnce'],
      storageClassName: storageClass,
      persistentVolumeReclaimPolicy: 'Retain',
      local: { path: `/mnt/disks/${name}` },
      nodeAffinity: { required: { nodeSelectorTerms: nodeSelectorTerms as never } },
    },
  };
}
