// The StatefulSet controller of the simulated cluster on its own (no agent), against the behaviours of Kubernetes'
// pkg/controller/statefulset that the agent's partition steps rely on: a new template replaces no pod while the
// partition covers it; below the partition pods stay (or are made again) at the current revision; the rolling update
// replaces the highest ordinal first, one pod at a time, each once the one before is available; OrderedReady makes and
// removes pods one at a time in ordinal order, Parallel all at once; currentRevision follows the update revision once
// every pod runs it.
import { describe, expect, it } from 'vitest';
import { extendedDeployment } from '../api/extended-deployment.js';
import { timestampMs } from '../kube/objects.js';
import { REVISION_LABEL } from '../labels.js';
import type { RolloutAction } from '../rollout/actions.js';
import { performAll } from './agent-writes.js';
import { written, type Cluster, type Setting, type SimWorkload } from './cluster.js';
import { advance, nextEvent, settle } from './controllers.js';
import { settingOf, startCluster } from './start.js';
import { CONTROLLER_REVISION_LABEL } from './statefulset-controller.js';
import { startOf } from './test-support.js';

const MIN_READY_SECONDS = 5;

/** A region `a` of a StatefulSet ED whose pods all run revision `old` (`running` of them), rolling to `new`. */
function started(
  replicas: number,
  { policy = 'OrderedReady', running = replicas, exists = true }: { policy?: string; running?: number; exists?: boolean } = {},
): { cluster: Cluster; setting: Setting } {
  const ed = extendedDeployment.parse({
    apiVersion: 'extendeddeployment.io/v1beta1',
    kind: 'ExtendedDeployment',
    metadata: { name: 'web', namespace: 'shop' },
    spec: {
      subsetType: 'StatefulSet',
      statefulSet: { podManagementPolicy: policy },
      selector: { matchLabels: { app: 'web' } },
      template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'i' }] } },
      regions: [{ name: 'a', replicas }],
      strategy: { minReadySeconds: MIN_READY_SECONDS },
    },
  });
  const region: { running: Record<string, number>; replicas: number | undefined } = exists
    ? { running: { old: running }, replicas }
    : { running: {}, replicas: undefined };
  const start = startOf(ed, 'R1', [{ name: 'a', desired: replicas, targetRevision: 'new', ...region }]);
  const setting = settingOf(start, false);
  return { cluster: startCluster(start, setting), setting };
}

const partition = (to: number): RolloutAction => ({ kind: 'setPartition', region: 'a', workload: 'web-a', from: 0, partition: to });
const scale = (to: number): RolloutAction => ({ kind: 'scale', region: 'a', workload: 'web-a', from: 0, replicas: to });

/** The agent's writes, then everyone's reaction. */
const act = (cluster: Cluster, setting: Setting, ...actions: RolloutAction[]): Cluster => settle(performAll(cluster, actions, setting), setting);

/** `cluster`, then every instant until nothing is left to happen, each as the controllers leave it. */
function run(cluster: Cluster, setting: Setting, limit = 1_000): Cluster[] {
  const seen = [cluster];
  for (let next = nextEvent(cluster); next !== undefined && seen.length < limit; next = nextEvent(seen[seen.length - 1] as Cluster)) {
    seen.push(advance(seen[seen.length - 1] as Cluster, next, setting));
  }
  return seen;
}

const last = (instants: readonly Cluster[]): Cluster => instants[instants.length - 1] as Cluster;
const sts = (c: Cluster): SimWorkload => c.statefulSets[0] as SimWorkload;

interface PodView {
  readonly ordinal: number;
  readonly uid: string;
  readonly revision: string;
  readonly terminating: boolean;
  readonly ready: boolean;
  /** Ready for minReadySeconds. */
  readonly available: boolean;
}

function pods(c: Cluster): PodView[] {
  return c.pods.map(({ object }) => {
    const ready = object.status?.conditions?.find((x) => x.type === 'Ready');
    const since = ready?.status === 'True' ? timestampMs(ready.lastTransitionTime) : undefined;
    return {
      ordinal: Number((object.metadata?.name ?? '').replace('web-a-', '')),
      uid: object.metadata?.uid ?? '',
      revision: object.metadata?.labels?.[REVISION_LABEL] ?? '',
      terminating: object.metadata?.deletionTimestamp !== undefined,
      ready: since !== undefined,
      available: since !== undefined && since + MIN_READY_SECONDS * 1000 <= c.now,
    };
  });
}

/** Per instant that makes or deletes pods: the ordinals made (ascending) and deleted (descending) then. */
function changes(instants: readonly Cluster[]): { created: number[][]; deleted: number[][] } {
  const created: number[][] = [];
  const deleted: number[][] = [];
  instants.slice(1).forEach((c, i) => {
    const before = pods(instants[i] as Cluster);
    const made = pods(c).filter((p) => !before.some((b) => b.uid === p.uid));
    const gone = pods(c).filter((p) => p.terminating && before.some((b) => b.uid === p.uid && !b.terminating));
    if (made.length > 0) created.push(made.map((p) => p.ordinal).sort((a, b) => a - b));
    if (gone.length > 0) deleted.push(gone.map((p) => p.ordinal).sort((a, b) => b - a));
  });
  return { created, deleted };
}

/** The revision of each ordinal, lowest first. */
const revisions = (c: Cluster): string[] =>
  pods(c)
    .sort((a, b) => a.ordinal - b.ordinal)
    .map((p) => p.revision);

describe('the StatefulSet controller', () => {
  it("takes up Git's new template without replacing a pod while the partition covers every pod", () => {
    const s = started(3);
    const status = sts(s.cluster).status;
    expect(sts(s.cluster).spec?.updateStrategy?.rollingUpdate?.partition).toBe(3);
    expect(status?.updateRevision).not.toBe(status?.currentRevision);
    expect(status).toMatchObject({ replicas: 3, readyReplicas: 3, currentReplicas: 3, updatedReplicas: 0, observedGeneration: 2 });
    expect(s.cluster.pods.every((p) => p.object.metadata?.labels?.[CONTROLLER_REVISION_LABEL] === status?.currentRevision)).toBe(true);
    expect(nextEvent(s.cluster)).toBeUndefined();
    expect(s.cluster.tally.podsCreated).toBe(0);
  });

  it.each([
    { name: '5 → 2', replicas: 5, to: 2, policy: 'OrderedReady', replaced: [4, 3, 2] },
    { name: '4 → 3', replicas: 4, to: 3, policy: 'OrderedReady', replaced: [3] },
    { name: '3 → 0', replicas: 3, to: 0, policy: 'OrderedReady', replaced: [2, 1, 0] },
    { name: '5 → 1', replicas: 5, to: 1, policy: 'Parallel', replaced: [4, 3, 2, 1] },
    { name: '3 → 3', replicas: 3, to: 3, policy: 'Parallel', replaced: [] },
  ])(
    '$policy, partition $name: replaces the pods at or above it, highest ordinal first, each once the one before is available',
    ({ replicas, to, policy, replaced }) => {
      const s = started(replicas, { policy });
      const instants = run(act(s.cluster, s.setting, partition(to)), s.setting);
      const { deleted, created } = changes([s.cluster, ...instants]);
      expect(deleted).toEqual(replaced.map((o) => [o]));
      expect(created).toEqual(replaced.map((o) => [o]));
      [s.cluster, ...instants].forEach((c, i, all) => {
        // One pod at a time: never more than one ordinal without an available pod.
        expect(pods(c).filter((p) => p.terminating || !p.available).length).toBeLessThanOrEqual(1);
        // A deletion only once every other pod is available.
        const before = all[i - 1];
        if (!before) return;
        const victims = pods(c).filter((p) => p.terminating && pods(before).some((b) => b.uid === p.uid && !b.terminating));
        for (const victim of victims)
          expect(
            pods(c)
              .filter((p) => p.uid !== victim.uid)
              .every((p) => p.available),
          ).toBe(true);
      });
      const end = last(instants);
      expect(revisions(end)).toEqual(Array.from({ length: replicas }, (_, o) => (o < to ? 'old' : 'new')));
      expect(sts(end).status).toMatchObject({ replicas, readyReplicas: replicas, availableReplicas: replicas, updatedReplicas: replicas - to });
      expect(end.tally.newPodsRemoved).toBe(0);
    },
  );

  it('makes a pod below the partition again at the current revision, and one at or above it at the update revision', () => {
    const s = started(4);
    const rolled = last(run(act(s.cluster, s.setting, partition(2)), s.setting));
    expect(revisions(rolled)).toEqual(['old', 'old', 'new', 'new']);
    const victims = rolled.pods.filter((p) => ['web-a-0', 'web-a-3'].includes(p.object.metadata?.name ?? ''));
    const deletions = victims.map((p): RolloutAction => ({
      kind: 'deletePod',
      region: 'a',
      pod: p.object.metadata?.name ?? '',
      uid: p.object.metadata?.uid ?? '',
    }));
    const remade = last(run(act(rolled, s.setting, ...deletions), s.setting));
    expect(revisions(remade)).toEqual(['old', 'old', 'new', 'new']);
    expect(pods(remade).filter((p) => victims.some((v) => v.object.metadata?.uid === p.uid))).toEqual([]);
    const status = sts(remade).status;
    expect(remade.pods[0]?.object.metadata?.labels?.[CONTROLLER_REVISION_LABEL]).toBe(status?.currentRevision);
    expect(remade.pods[3]?.object.metadata?.labels?.[CONTROLLER_REVISION_LABEL]).toBe(status?.updateRevision);
  });

  it('makes the pods a raise adds below the partition at the current revision, the others at the update revision', () => {
    const s = started(2);
    const grown = last(run(act(s.cluster, s.setting, partition(3), scale(4)), s.setting));
    expect(revisions(grown)).toEqual(['old', 'old', 'old', 'new']);
    expect(sts(grown).status).toMatchObject({ replicas: 4, readyReplicas: 4, currentReplicas: 3, updatedReplicas: 1 });
  });

  it('reports the update revision as current exactly once every pod runs it and is Ready', () => {
    const s = started(3);
    const instants = run(act(s.cluster, s.setting, partition(0)), s.setting);
    const old = sts(s.cluster).status?.currentRevision;
    for (const c of instants) {
      const status = sts(c).status ?? {};
      const complete = status.updatedReplicas === 3 && status.readyReplicas === 3 && status.replicas === 3;
      expect(status.currentRevision).toBe(complete ? status.updateRevision : old);
      expect(status.currentReplicas).toBe(complete ? 3 : pods(c).filter((p) => !p.terminating && p.revision === 'old').length);
    }
    expect(sts(last(instants)).status?.currentRevision).toBe(sts(last(instants)).status?.updateRevision);
  });

  it.each([
    { policy: 'OrderedReady', up: [[1], [2], [3]], down: [[3], [2], [1]] },
    { policy: 'Parallel', up: [[1, 2, 3]], down: [[3, 2, 1]] },
  ])('$policy: makes and removes pods by ordinal ($up up, $down down)', ({ policy, up, down }) => {
    const s = started(1, { policy });
    const growing = run(act(s.cluster, s.setting, partition(4), scale(4)), s.setting);
    expect(changes([s.cluster, ...growing]).created).toEqual(up);
    if (policy === 'OrderedReady') {
      // The lowest missing ordinal only once every lower one is Running and Ready.
      for (const c of growing) {
        const made = pods(c).sort((a, b) => a.ordinal - b.ordinal);
        made.forEach((p) => expect(made.filter((x) => x.ordinal < p.ordinal).every((x) => x.ready) || p.ordinal === 0).toBe(true));
        expect(made.map((p) => p.ordinal)).toEqual(made.map((_, i) => i));
      }
    }
    const grown = last(growing);
    const shrinking = run(act(grown, s.setting, scale(1)), s.setting);
    expect(changes([grown, ...shrinking]).deleted).toEqual(down);
    // OrderedReady: each pod goes once the one above it is gone.
    if (policy === 'OrderedReady') for (const c of shrinking) expect(pods(c).filter((p) => p.terminating).length).toBeLessThanOrEqual(1);
    expect(sts(last(shrinking)).status).toMatchObject({ replicas: 1, readyReplicas: 1 });
  });

  it('deletes a Failed pod and makes it again under the same name, with a uid of its own', () => {
    const s = started(3);
    const index = s.cluster.pods.findIndex((p) => p.object.metadata?.name === 'web-a-1');
    const failed = s.cluster.pods[index];
    if (!failed) throw new Error('no pod web-a-1');
    const object = written(failed.object, { status: { ...failed.object.status, phase: 'Failed' } });
    const broken: Cluster = { ...s.cluster, pods: s.cluster.pods.map((p, i) => (i === index ? { object } : p)) };
    const instants = run(settle(broken, s.setting), s.setting);
    expect(pods(instants[0] as Cluster).find((p) => p.ordinal === 1)?.terminating).toBe(true);
    const end = last(instants);
    const remade = pods(end).find((p) => p.ordinal === 1);
    expect(remade).toMatchObject({ revision: 'old', ready: true, terminating: false });
    expect(remade?.uid).not.toBe(failed.object.metadata?.uid);
    expect(sts(end).status).toMatchObject({ replicas: 3, readyReplicas: 3, currentReplicas: 3 });
  });

  it('creates a StatefulSet Git creates now with one pod of its template, whose revision is current at once', () => {
    const s = started(3, { exists: false });
    const end = last(run(s.cluster, s.setting));
    expect(pods(end).map((p) => [p.ordinal, p.revision, p.ready])).toEqual([[0, 'new', true]]);
    const status = sts(end).status;
    expect(status).toMatchObject({ replicas: 1, readyReplicas: 1, updatedReplicas: 1, observedGeneration: 1 });
    expect(status?.currentRevision).toBe(status?.updateRevision);
  });
});
