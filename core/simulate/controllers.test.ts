// The workload controllers of the simulated cluster on their own (no agent): the Deployment controller's rolling
// update stays within maxSurge and maxUnavailable and stops while paused (scaling still works); the ReplicaSet
// controller removes pods in the real controller's order.
import { describe, expect, it } from 'vitest';
import { extendedDeployment } from '../api/extended-deployment.js';
import type { RolloutAction } from '../rollout/actions.js';
import { performAll } from './agent-writes.js';
import { ownedBy, serialOf, type Cluster, type Setting } from './cluster.js';
import { cohortSize } from './cohorts.js';
import { advance, nextEvent, settle } from './controllers.js';
import { settingOf, startCluster } from './start.js';
import { startOf } from './test-support.js';

function started(
  subsetType: 'ReplicaSet' | 'Deployment',
  replicas: number,
  strategy: Record<string, unknown> = {},
  cohorts = false,
): { cluster: Cluster; setting: Setting } {
  const ed = extendedDeployment.parse({
    apiVersion: 'extendeddeployment.io/v1beta1',
    kind: 'ExtendedDeployment',
    metadata: { name: 'web', namespace: 'shop' },
    spec: {
      subsetType,
      selector: { matchLabels: { app: 'web' } },
      template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'i' }] } },
      regions: [{ name: 'a', replicas }],
      strategy,
    },
  });
  // Unmarked, as pods the agent never saw complete a rollout: which pods the controllers pick is then the tests' own.
  const start = { ...startOf(ed, 'R1', [{ name: 'a', desired: replicas, targetRevision: 'new', running: { old: replicas } }]), standingMarks: false };
  const setting = settingOf(start, cohorts);
  return { cluster: startCluster(start, setting), setting };
}

/** The agent's writes, then everyone's reaction. */
const act = (c: { cluster: Cluster; setting: Setting }, ...actions: RolloutAction[]): Cluster => settle(performAll(c.cluster, actions, c.setting), c.setting);

/** Every instant until nothing is left to happen, each as the controllers leave it. */
function run(cluster: Cluster, setting: Setting, limit = 10_000): Cluster[] {
  const seen = [cluster];
  for (let next = nextEvent(cluster); next !== undefined && seen.length < limit; next = nextEvent(seen[seen.length - 1] as Cluster)) {
    seen.push(advance(seen[seen.length - 1] as Cluster, next, setting));
  }
  return seen;
}

const active = (c: Cluster) =>
  c.pods.filter((p) => p.object.metadata?.deletionTimestamp === undefined).length + c.cohorts.reduce((n, x) => n + cohortSize(x), 0);
const available = (c: Cluster) => c.replicaSets.reduce((n, rs) => n + (rs.status?.availableReplicas ?? 0), 0);
const specReplicas = (c: Cluster) => c.replicaSets.reduce((n, rs) => n + (rs.spec?.replicas ?? 0), 0);

describe('the Deployment controller (compat mode)', () => {
  const rolling = { updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 2, maxUnavailable: 1 } } };
  const unpause: RolloutAction = { kind: 'setPaused', region: 'a', workload: 'web-a', paused: false };

  it('rolls within maxSurge and maxUnavailable to one ReplicaSet of the new template', () => {
    for (const cohorts of [false, true]) {
      const s = started('Deployment', 10, rolling, cohorts);
      const instants = run(act(s, unpause), s.setting);
      for (const c of instants) {
        expect(specReplicas(c)).toBeLessThanOrEqual(12);
        expect(active(c)).toBeLessThanOrEqual(12);
        expect(available(c)).toBeGreaterThanOrEqual(9);
      }
      const end = instants[instants.length - 1] as Cluster;
      expect(end.replicaSets.map((rs) => rs.spec?.replicas)).toEqual([0, 10]);
      expect(end.deployments[0]?.status).toMatchObject({
        replicas: 10,
        updatedReplicas: 10,
        availableReplicas: 10,
        observedGeneration: end.deployments[0]?.metadata?.generation,
      });
      expect(end.tally.podsCreated).toBe(10);
    }
  });

  it('creates no ReplicaSet for a new template while paused, yet scales; unpaused, it rolls', () => {
    const s = started('Deployment', 4, rolling);
    expect(s.cluster.deployments[0]?.status).toMatchObject({ replicas: 4, updatedReplicas: 0 });
    const scaled = run(act(s, { kind: 'scale', region: 'a', workload: 'web-a', from: 4, replicas: 6 }), s.setting);
    const paused = scaled[scaled.length - 1] as Cluster;
    expect(paused.replicaSets.map((rs) => rs.spec?.replicas)).toEqual([6]);
    expect(paused.deployments[0]?.status).toMatchObject({ replicas: 6, availableReplicas: 6, updatedReplicas: 0 });
    const rolled = run(act({ cluster: paused, setting: s.setting }, unpause), s.setting);
    expect((rolled[rolled.length - 1] as Cluster).deployments[0]?.status).toMatchObject({ replicas: 6, updatedReplicas: 6, availableReplicas: 6 });
  });

  it('Recreate: every old pod is gone before a new one starts', () => {
    const s = started('Deployment', 3, { updateStrategy: { type: 'DeleteAllFirst' } });
    const instants = run(act(s, unpause), s.setting);
    for (const c of instants) {
      const olds = c.pods.filter((p) => p.object.metadata?.labels?.['pod-template-hash'] === c.replicaSets[0]?.metadata?.labels?.['pod-template-hash']).length;
      const news = c.pods.length - olds;
      expect(olds === 0 || news === 0).toBe(true);
    }
    expect((instants[instants.length - 1] as Cluster).deployments[0]?.status).toMatchObject({ replicas: 3, updatedReplicas: 3, availableReplicas: 3 });
  });
});

describe('the ReplicaSet controller', () => {
  const names = (c: Cluster, deleted: boolean) =>
    c.pods.filter((p) => (p.object.metadata?.deletionTimestamp !== undefined) === deleted).map((p) => serialOf(p.object.metadata?.name ?? ''));
  const scale = (from: number, replicas: number): RolloutAction => ({ kind: 'scale', region: 'a', workload: 'web-a', from, replicas });
  const mark = (c: Cluster, serial: number): RolloutAction => {
    const pod = c.pods.find((p) => serialOf(p.object.metadata?.name ?? '') === serial)?.object;
    return {
      kind: 'markOld',
      region: 'a',
      pod: pod?.metadata?.name ?? '',
      uid: pod?.metadata?.uid ?? '',
      at: new Date(c.now).toISOString(),
      cost: -2147483648,
    };
  };

  it('removes marked pods (lower deletion cost) first, the newest of them first', () => {
    const s = started('ReplicaSet', 4);
    const marked = act(s, mark(s.cluster, 1), mark(s.cluster, 2));
    const removed = act({ cluster: marked, setting: s.setting }, scale(4, 3));
    expect(names(removed, true)).toEqual([2]);
  });

  it('removes a pod that is not Ready before any Ready one, marked or not', () => {
    const s = started('ReplicaSet', 3);
    const grown = act(s, mark(s.cluster, 0), scale(3, 4));
    expect(names(grown, false)).toEqual([0, 1, 2, 3]);
    const shrunk = act({ cluster: grown, setting: s.setting }, scale(4, 3));
    expect(names(shrunk, true)).toEqual([3]);
  });

  it('takes members out of a cohort when it must remove settled pods, newest first', () => {
    const s = started('ReplicaSet', 5, {}, true);
    expect(s.cluster.pods).toEqual([]);
    const shrunk = act(s, scale(5, 3));
    expect(names(shrunk, true)).toEqual([3, 4]);
    expect(shrunk.cohorts.map((c) => c.serials)).toEqual([[[0, 3]]]);
    expect(shrunk.replicaSets[0]?.status).toMatchObject({ replicas: 3, terminatingReplicas: 2 });
    expect(shrunk.pods.every((p) => ownedBy(p.object, shrunk.replicaSets[0] ?? {}))).toBe(true);
  });
});
