// StatefulSet regions (#19) on the lab's real StatefulSet controller, with claims bound to pre-created local
// PersistentVolumes (a StorageClass without a provisioner, WaitForFirstConsumer: the scheduler places each claim on a
// volume of a node in the pod's region). An image change rolls gate by gate (confirmation on): at each gate the new pods
// per region are what `edctl plan`'s simulation predicts for that group, they are the highest ordinals, and each
// StatefulSet's partition sits at its replicas less that count; a pause holds the controller's rollout where it is. At the
// end every pod is new (replaced: new uids) under its old name, each claim is still bound to the same volume, each pod
// runs on its volume's node, the partitions cover every pod again, and the cluster matches Git. The agent runs as the
// rendered install's ServiceAccount under its admission policies; the invariant watcher checks the StatefulSet budgets
// (one pod below the count, never above it) on every event.
import type { KubernetesObject, V1PersistentVolumeClaim, V1Pod, V1StatefulSet } from '@kubernetes/client-node';
import { expect } from 'vitest';
import { REGION_LABEL, REVISION_LABEL } from '../../core/labels.js';
import type { RenderedExtendedDeployment } from '../../core/render.js';
import { waitMatchesGit } from './git-match.js';
import { localVolume } from './local-disks.js';
import { clients, serverSideApply, sleep, test, waitFor } from './helpers.js';
import {
  apply,
  edctl,
  edPods,
  fill,
  isLive,
  podCounts,
  readStatus,
  simulateFromCluster,
  waitForPhase,
  waitForPods,
  withRolloutEnv,
  type EdOptions,
  type RolloutEnv,
} from './rollout-kit.js';

/** Region letter → the labels of its lab nodes (rollout-kit's deployRegions). */
const REGION_NODES: Record<string, Record<string, string>> = {
  a: { 'extendeddeployment.io/pool': 'general', 'topology.kubernetes.io/zone': 'zone-a' },
  b: { 'extendeddeployment.io/pool': 'general', 'topology.kubernetes.io/zone': 'zone-b' },
};

/**
 * A StorageClass without a provisioner and `perRegion[letter]` local PersistentVolumes on the region's nodes, round robin:
 * what an operator pre-creates for local disks. Returns the objects, to delete them afterwards (they are cluster-scoped).
 */
async function localVolumes(suffix: string, perRegion: Record<string, number>): Promise<{ storageClass: string; objects: KubernetesObject[] }> {
  const storageClass = `ed-local-${suffix}`;
  const objects: KubernetesObject[] = [
    {
      apiVersion: 'storage.k8s.io/v1',
      kind: 'StorageClass',
      metadata: { name: storageClass },
      provisioner: 'kubernetes.io/no-provisioner',
      volumeBindingMode: 'WaitForFirstConsumer',
    } as KubernetesObject,
  ];
  const nodes = (await clients().core.listNode()).items;
  for (const [letter, count] of Object.entries(perRegion)) {
    const labels = REGION_NODES[letter] ?? {};
    const mine = nodes.filter((n) => Object.entries(labels).every(([k, v]) => n.metadata?.labels?.[k] === v)).map((n) => n.metadata?.name ?? '');
    for (let i = 0; i < count; i++) {
      const node = mine[i % mine.length] ?? '';
      const pv = localVolume(`${storageClass}-${letter}-${i}`, storageClass, '1Gi', [
        { matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: [node] }] },
      ]);
      objects.push(pv);
    }
  }
  for (const o of objects) await serverSideApply(o);
  return { storageClass, objects };
}

const statefulSets = async (ns: string): Promise<V1StatefulSet[]> => (await clients().apps.listNamespacedStatefulSet({ namespace: ns })).items;
const partitionOf = (sts: V1StatefulSet) => sts.spec?.updateStrategy?.rollingUpdate?.partition ?? 0;
const ordinalOf = (pod: V1Pod) => Number(/-(\d+)$/.exec(pod.metadata?.name ?? '')?.[1] ?? -1);

/** Per region: its StatefulSet's replicas and partition, and its live pods' ordinals at the rendered revision. */
async function regionView(ns: string, to: RenderedExtendedDeployment) {
  const sets = await statefulSets(ns);
  const pods = (await edPods(ns)).filter(isLive);
  return to.regions.map((r) => {
    const sts = sets.find((s) => s.metadata?.name === `web-${r.name}`);
    const mine = pods.filter((p) => p.metadata?.labels?.[REGION_LABEL] === r.name);
    const newOrdinals = mine
      .filter((p) => p.metadata?.labels?.[REVISION_LABEL] === r.revision)
      .map(ordinalOf)
      .sort((x, y) => x - y);
    return { name: r.name, replicas: sts?.spec?.replicas, partition: sts ? partitionOf(sts) : undefined, newOrdinals };
  });
}

/** Every claim of the namespace: `claim → volume`, and each pod's node and claim's volume's node. */
async function claims(ns: string): Promise<{ bound: Record<string, string>; misplaced: string[] }> {
  const pvcs: V1PersistentVolumeClaim[] = (await clients().core.listNamespacedPersistentVolumeClaim({ namespace: ns })).items;
  const pvs = (await clients().core.listPersistentVolume()).items;
  const bound = Object.fromEntries(pvcs.map((c) => [c.metadata?.name ?? '', c.spec?.volumeName ?? '-']).sort());
  const misplaced: string[] = [];
  for (const pod of (await edPods(ns)).filter(isLive)) {
    const claim = `data-${pod.metadata?.name ?? ''}`;
    const pv = pvs.find((v) => v.metadata?.name === bound[claim]);
    const node = pv?.spec?.nodeAffinity?.required?.nodeSelectorTerms?.[0]?.matchExpressions?.[0]?.values?.[0];
    if (node !== pod.spec?.nodeName)
      misplaced.push(`${pod.metadata?.name ?? ''} on ${pod.spec?.nodeName ?? '-'}, its volume ${bound[claim] ?? '-'} on ${node ?? '-'}`);
  }
  return { bound, misplaced };
}

test('StatefulSet regions: partition steps from the highest ordinal as the plan predicts, claims stay on their volumes', async ({ ns }) => {
  let volumes: KubernetesObject[] = [];
  await withRolloutEnv(ns, 'statefulset', async (env: RolloutEnv) => {
    const storage = await localVolumes(env.suffix, { a: 3, b: 2 });
    volumes = storage.objects;
    const options = (image: string): EdOptions => ({
      image,
      replicas: [3, 2],
      subsetType: 'StatefulSet',
      statefulSet: {
        volumeClaimTemplates: [
          {
            metadata: { name: 'data' },
            spec: { accessModes: ['ReadWriteOnce'], storageClassName: storage.storageClass, resources: { requests: { storage: '1Gi' } } },
          },
        ],
      },
      container: { volumeMounts: [{ name: 'data', mountPath: '/data' }] },
      strategy: { needWaitingForConfirm: true },
    });

    const v1 = await fill(env, options('registry.example/web:1'));
    // At rest each partition covers every pod: a template Git syncs changes none before the agent's first group.
    await waitFor('partitions at the replica counts', async () => JSON.stringify((await regionView(ns, v1)).map((r) => r.partition)) === '[3,2]', {
      describe: () => regionView(ns, v1),
    });
    const before = await claims(ns);
    // A claim per pod, named after its StatefulSet and ordinal, each bound to one of the volumes.
    const claimNames = v1.regions.flatMap((r) => Array.from({ length: r.replicas }, (_, i) => `data-web-${r.name}-${i}`)).sort();
    expect(Object.keys(before.bound)).toEqual(claimNames);
    expect(Object.values(before.bound).every((v) => v.startsWith(storage.storageClass))).toBe(true);
    expect(before.misplaced).toEqual([]);
    const uids = new Set((await edPods(ns)).map((p) => p.metadata?.uid));

    const v2 = env.render(options('registry.example/web:2'));
    const sim = await simulateFromCluster(ns, v2);
    await apply(v2);
    // Git's template alone changes no pod: the agent's partition holds them until its first group.
    await sleep(2000);
    const lines: string[] = [];
    for (const group of sim.groups) {
      const last = group.group === sim.totalGroups;
      await waitForPhase(ns, v2.rolloutRevision, group.group, last ? 'Healthy' : 'WaitingForConfirmation', 180_000, v2);
      const expected = group.regions.map((r) => ({ name: r.name, updated: r.updated, old: r.old }));
      await waitForPods(ns, v2, expected, `group ${group.group}`);
      // At a gate the partition covers every pod again (a template Git syncs meanwhile waits for the next group).
      const view = last
        ? await regionView(ns, v2)
        : await waitFor(`partitions over every pod at gate ${group.group}`, async () => {
            const v = await regionView(ns, v2);
            return v.every((r) => r.partition === r.replicas) && v;
          });
      for (const r of view) {
        const replicas = r.replicas ?? 0;
        const updated = r.newOrdinals.length;
        // The highest ordinals, as the StatefulSet controller updates them.
        expect(r.newOrdinals, `${r.name} group ${group.group}`).toEqual(Array.from({ length: updated }, (_, i) => replicas - updated + i));
      }
      lines.push(`group ${group.group}: ${view.map((r) => `${r.name} new ordinals [${r.newOrdinals.join(',')}] partition ${r.partition}`).join('; ')}`);
      if (group.group === 2 && !last) {
        // A pause at a gate: approved meanwhile, nothing moves until it is resumed.
        expect(await edctl(ns, 'pause')).toBe(0);
        expect(await edctl(ns, 'approve')).toBe(0);
        const held = await podCounts(ns, v2);
        await sleep(4000);
        expect(await podCounts(ns, v2)).toEqual(held);
        expect((await readStatus(ns)).phase).toBe('Paused');
        expect(await edctl(ns, 'resume')).toBe(0);
      } else if (!last) expect(await edctl(ns, 'approve')).toBe(0);
    }
    expect(await waitMatchesGit(env.watch, v2), 'the cluster matches Git').toEqual([]);
    await waitFor('partitions back at the replica counts', async () => JSON.stringify((await regionView(ns, v2)).map((r) => r.partition)) === '[3,2]', {
      describe: () => regionView(ns, v2),
    });

    const after = await claims(ns);
    expect(after.bound).toEqual(before.bound);
    expect(after.misplaced).toEqual([]);
    const replaced = (await edPods(ns)).filter((p) => isLive(p) && !uids.has(p.metadata?.uid));
    expect(replaced).toHaveLength(5);
    console.log(`[statefulset] ${sim.totalGroups} groups as planned\n  ${lines.join('\n  ')}\n  claims kept: ${JSON.stringify(after.bound)}`);

    // A bad v3 reaches group 2 (a: ordinals 1–2, b: 0–1), then Git reverts to v2. The revert finds its pods at the
    // lowest ordinals and replaces the v3 ones one group at a time, from the highest, as the plan predicts: at the
    // revert's first gate a still runs v3 on two pods.
    const v3 = env.render(options('registry.example/web:3'));
    await apply(v3);
    await waitForPhase(ns, v3.rolloutRevision, 1, 'WaitingForConfirmation', 180_000, v3);
    expect(await edctl(ns, 'approve')).toBe(0);
    await waitForPhase(ns, v3.rolloutRevision, 2, 'WaitingForConfirmation', 180_000, v3);
    await waitForPods(
      ns,
      v3,
      [
        { name: v3.regions[0]!.name, updated: 2, old: 1 },
        { name: v3.regions[1]!.name, updated: 2, old: 0 },
      ],
      'v3 group 2',
    );
    const back = env.render(options('registry.example/web:2'));
    expect(back.rolloutRevision).toBe(v2.rolloutRevision);
    const revertSim = await simulateFromCluster(ns, back);
    await apply(back);
    const reverted: string[] = [];
    for (const group of revertSim.groups) {
      const last = group.group === revertSim.totalGroups;
      await waitForPhase(ns, back.rolloutRevision, group.group, last ? 'Healthy' : 'WaitingForConfirmation', 180_000, back);
      await waitForPods(
        ns,
        back,
        group.regions.map((r) => ({ name: r.name, updated: r.updated, old: r.old })),
        `revert group ${group.group}`,
      );
      const view = await regionView(ns, back);
      // The pods back at v2 are the lowest ordinals plus those replaced from the top: in a, v3 leaves from ordinal 2 down.
      const a = view[0]!;
      if (!last) expect(a.newOrdinals, `a at revert group ${group.group}`).toEqual(group.group === 1 ? [0] : group.group === 2 ? [0, 2] : [0, 1, 2]);
      reverted.push(`group ${group.group}: ${view.map((r) => `${r.name} at v2 [${r.newOrdinals.join(',')}] partition ${r.partition}`).join('; ')}`);
      if (!last) expect(await edctl(ns, 'approve')).toBe(0);
    }
    expect(await waitMatchesGit(env.watch, back), 'the cluster matches Git after the revert').toEqual([]);
    console.log(`[statefulset] revert from v3 at group 2: ${revertSim.totalGroups} groups as planned\n  ${reverted.join('\n  ')}`);
  });
  for (const o of volumes.reverse()) {
    try {
      await clients().objects.delete(o);
    } catch {
      // already gone
    }
  }
});
