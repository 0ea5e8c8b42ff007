import { describe, expect, it } from 'vitest';
import type { ExtendedDeploymentStatus } from '../core/api/extended-deployment.js';
import {
  GROUP_RECORD_ANNOTATION,
  MARKED_AT_ANNOTATION,
  NAME_LABEL,
  OLD_POD_DELETION_COST,
  POD_DELETION_COST_ANNOTATION,
  REGION_LABEL,
  REVISION_LABEL,
} from '../core/labels.js';
import type { RolloutAction } from '../core/rollout/actions.js';
import { SLACK_MS } from '../core/rollout/requeue.js';
import { OLD_MARK_COST } from '../core/rollout/removal-marks.js';
import { FakeClock } from './runtime/clock.js';
import { AgentMetrics } from './metrics.js';
import { EvictionBlockedError } from './eviction.js';
import { silentLogger } from './runtime/log.js';
import { edKeyOf } from './keys.js';
import { AUTHORIZED_CONDITION } from '../core/api/conditions.js';
import { Reconciler, type ReconcilerPorts } from './reconciler.js';
import { PROGRESS_WRITES_PER_SECOND, SYNC_WAIT_REPORT_GRACE_MS } from '../core/rollout/status-pacing.js';
import { controlledBy } from '../core/kube/test-support.js';
import { STANDING_MARK, agentCaches, recorder, webExtendedDeployment } from './reconciler-test-support.js';

const regions = [
  { apiVersion: 'extendeddeployment.io/v1beta1', kind: 'DeployRegion', metadata: { name: 'amd' }, spec: { matchLabels: { 'kubernetes.io/arch': 'amd64' } } },
  { apiVersion: 'extendeddeployment.io/v1beta1', kind: 'DeployRegion', metadata: { name: 'arm' }, spec: { matchLabels: { 'kubernetes.io/arch': 'arm64' } } },
];

function world(
  options: {
    status?: ExtendedDeploymentStatus;
    replicas?: number;
    spec?: Record<string, unknown>;
    podRevision?: 'old' | 'new';
    /** Pods at the new revision lack the mark a completed rollout leaves (the agent was installed since). */
    unmarked?: boolean;
    /** A Pending pod at the new revision, marked for the next rollout above the old pods (standing marks) unless 'unmarked'. */
    newPod?: boolean | 'unmarked';
    regions?: string[];
    /** The ReplicaSets still carry the last template: the sync has not applied the rendered one yet. */
    unsynced?: boolean;
  } = {},
) {
  const regionNames = options.regions ?? ['amd'];
  const { ed, revisionOf } = webExtendedDeployment({
    regions,
    image: 'web:2',
    spec: { replicas: 2, regions: regionNames.map((name) => ({ name })), strategy: { minReadySeconds: 0 }, ...options.spec },
    ...(options.status && { status: options.status }),
  });
  const pods = regionNames.flatMap((region) =>
    ['a', 'b'].map((n) => ({
      metadata: {
        name: `web-${region}-${n}`,
        namespace: 'shop',
        uid: `uid-${region}-${n}`,
        resourceVersion: '1',
        labels: { [NAME_LABEL]: 'web', [REGION_LABEL]: region, [REVISION_LABEL]: options.podRevision === 'new' ? revisionOf(region) : 'old' },
        ...(options.podRevision === 'new' && !options.unmarked && { annotations: STANDING_MARK }),
        ownerReferences: controlledBy(`web-${region}`),
      },
      spec: { nodeName: 'node' },
      status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: '2025-12-31T00:00:00Z' }] },
    })),
  );
  if (options.newPod) {
    pods.push({
      metadata: {
        name: 'web-amd-c',
        namespace: 'shop',
        uid: 'uid-c',
        resourceVersion: '1',
        labels: { [NAME_LABEL]: 'web', [REGION_LABEL]: 'amd', [REVISION_LABEL]: revisionOf('amd') },
        ...(options.newPod !== 'unmarked' && { annotations: NEW_POD_STANDING_MARK }),
        ownerReferences: controlledBy('web-amd'),
      },
      spec: { nodeName: 'node' },
      status: { phase: 'Pending', conditions: [{ type: 'Ready', status: 'False', lastTransitionTime: '2026-01-01T00:00:00Z' }] },
    });
  }
  const replicaSets = regionNames.map((region) => ({
    metadata: { name: `web-${region}`, namespace: 'shop', resourceVersion: '1', labels: { [NAME_LABEL]: 'web' } },
    spec: { replicas: options.replicas ?? 2, template: { metadata: { labels: { [REVISION_LABEL]: options.unsynced ? 'old' : revisionOf(region) } } } },
  }));
  const caches = agentCaches({ eds: [ed], regions, replicaSets, pods });
  return { ed, caches, pods, replicaSets, revisionOf };
}

/** A standing mark above the old pods' marks in these tests (STANDING_MARK's, or a rollout's own). */
const NEW_POD_STANDING_MARK = { ...STANDING_MARK, [POD_DELETION_COST_ANNOTATION]: String(OLD_MARK_COST + 2) };

const clock = () => new FakeClock(Date.UTC(2026, 0, 1));
/** The status-write counter's series as [change, count]. */
const statusWrites = async (metrics: AgentMetrics) =>
  (await metrics.registry.getSingleMetric('extendeddeployment_agent_status_writes_total')!.get()).values.map((v) => [v.labels.change, v.value]);
/** Groups of two pods from the first: the first group marks (and surges) two old pods per region. */
const GROUPS_OF_TWO = { strategy: { minReadySeconds: 0, rolloutStrategy: 'Group', batchSize: 2 } };

describe('Reconciler', () => {
  it('records a new rollout in status before acting on it, events after the status', async () => {
    const { caches } = world();
    const { calls, ports } = recorder();
    const result = await new Reconciler({ caches, ports, clock: clock(), log: silentLogger }).reconcile(edKeyOf('shop', 'web'));
    expect(result.outcome).toBe('synced');
    expect(result.requeueAfterMs).toBeGreaterThan(0);
    // The Beta group replaces one old pod and the next group the other: both are marked, nothing else moves yet.
    expect(calls).toEqual(['status:Progressing:1', 'markOld:web-amd-a', 'markOld:web-amd-b', 'scale:ReplicaSet:3', 'event:RolloutStarted']);
  });

  it('within a group acts first, and writes a change of counts alone one interval after acting', async () => {
    const t = clock();
    const first = recorder();
    const w = world();
    await new Reconciler({ caches: w.caches, ports: first.ports, clock: t, log: silentLogger }).reconcile(edKeyOf('shop', 'web'));
    // The cluster after that reconcile: status written, RS scaled, a new pod created; the cache does not show the mark yet.
    const { caches, pods } = world({ status: first.statuses[0], replicas: 3, newPod: true });
    const { calls, ports } = recorder();
    const metrics = new AgentMetrics({ queueDepth: () => 0 });
    const reconciler = new Reconciler({ caches, ports, clock: t, log: silentLogger, metrics });
    const result = await reconciler.reconcile(edKeyOf('shop', 'web'));
    // The new pod counts are not written while the key is busy acting: the mark's own event changes them again.
    expect(calls).toEqual(['markOld:web-amd-a', 'markOld:web-amd-b']);
    expect(result.requeueAfterMs).toBe(1_000);
    for (const pod of pods)
      if (pod.metadata.name !== 'web-amd-c')
        Object.assign(pod.metadata, { resourceVersion: '2', annotations: { [POD_DELETION_COST_ANNOTATION]: OLD_POD_DELETION_COST } });
    t.advance(999);
    expect((await reconciler.reconcile(edKeyOf('shop', 'web'))).requeueAfterMs).toBe(1);
    t.advance(1);
    await reconciler.reconcile(edKeyOf('shop', 'web'));
    expect(calls).toEqual(['markOld:web-amd-a', 'markOld:web-amd-b', 'status:Progressing:1']);
    expect(await statusWrites(metrics)).toEqual([['progress', 1]]);
    expect(calls.filter((c) => c.startsWith('event:'))).toEqual([]);
  });

  it('lets a change of counts wait at most one interval in all, however often the agent acts meanwhile', async () => {
    const t = clock();
    const first = recorder();
    await new Reconciler({ caches: world().caches, ports: first.ports, clock: t, log: silentLogger }).reconcile(edKeyOf('shop', 'web'));
    const { caches, pods, replicaSets } = world({ status: first.statuses[0], replicas: 3, newPod: true });
    const { calls, ports } = recorder();
    const reconciler = new Reconciler({ caches, ports, clock: t, log: silentLogger });
    expect((await reconciler.reconcile(edKeyOf('shop', 'web'))).requeueAfterMs).toBe(1_000);
    for (const pod of pods)
      if (pod.metadata.name !== 'web-amd-c')
        Object.assign(pod.metadata, { resourceVersion: '2', annotations: { [POD_DELETION_COST_ANNOTATION]: OLD_POD_DELETION_COST } });
    // 600 ms later someone has scaled the ReplicaSet back: the agent acts again, and the counts still wait, 400 ms more.
    Object.assign(replicaSets[0]!, { metadata: { ...replicaSets[0]!.metadata, resourceVersion: '2' }, spec: { ...replicaSets[0]!.spec, replicas: 2 } });
    t.advance(600);
    expect((await reconciler.reconcile(edKeyOf('shop', 'web'))).requeueAfterMs).toBe(400);
    expect(calls).toEqual(['markOld:web-amd-a', 'markOld:web-amd-b', 'scale:ReplicaSet:3']);
  });

  /**
   * A reconciler whose next look at shop/web finds only counts changed (the cluster after a group's first reconcile:
   * its status, the ReplicaSet scaled, the old pods marked, a new pod Pending), its status written just now, and its
   * pacing state to set up.
   */
  async function countsOnly() {
    const t = clock();
    const first = recorder();
    await new Reconciler({ caches: world().caches, ports: first.ports, clock: t, log: silentLogger }).reconcile(edKeyOf('shop', 'web'));
    const { caches, pods } = world({ status: first.statuses[0], replicas: 3, newPod: true });
    for (const pod of pods)
      if (pod.metadata.name !== 'web-amd-c') Object.assign(pod.metadata, { annotations: { [POD_DELETION_COST_ANNOTATION]: OLD_POD_DELETION_COST } });
    const { calls, ports } = recorder();
    const reconciler = new Reconciler({ caches, ports, clock: t, log: silentLogger });
    const pacing = reconciler as unknown as { countsPendingSince: Map<string, number>; rollingOut: Set<string>; lastWrite: Map<string, number> };
    pacing.lastWrite.set('shop/web', t.now());
    return { t, calls, reconciler, pending: pacing.countsPendingSince, rollingOut: pacing.rollingOut };
  }

  it('stretches the wait of counts while many keys have counts waiting: about PROGRESS_WRITES_PER_SECOND in all', async () => {
    const { t, calls, reconciler, pending } = await countsOnly();
    // 24 other keys wait with counts of their own: with this one, 25 at 5 per second is 5 s each.
    for (let i = 0; i < 24; i++) pending.set(`shop/other-${i}`, t.now());
    expect(25 / PROGRESS_WRITES_PER_SECOND).toBe(5);
    expect((await reconciler.reconcile(edKeyOf('shop', 'web'))).requeueAfterMs).toBe(5_000);
    t.advance(1_000);
    expect((await reconciler.reconcile(edKeyOf('shop', 'web'))).requeueAfterMs).toBe(4_000);
    expect(calls).toEqual([]);
    // The others were written meanwhile: the interval is back to one second, which has passed.
    pending.clear();
    pending.set('shop/web', t.now() - 1_000);
    await reconciler.reconcile(edKeyOf('shop', 'web'));
    expect(calls).toEqual(['status:Progressing:1']);
    expect(pending.size).toBe(0);
  });

  it('stretches the wait of counts by the keys with a rollout under way too, though none of their counts waits now', async () => {
    const { t, calls, reconciler, pending, rollingOut } = await countsOnly();
    // 20 other keys roll out, most with nothing waiting (their statuses were just written), and 6 keys wait, 2 of them
    // among those rolling out: with this one, 25 writers at 5 per second is 5 s each.
    for (let i = 0; i < 20; i++) rollingOut.add(`shop/other-${i}`);
    for (let i = 18; i < 24; i++) pending.set(`shop/other-${i}`, t.now());
    expect((await reconciler.reconcile(edKeyOf('shop', 'web'))).requeueAfterMs).toBe(5_000);
    expect(calls).toEqual([]);
    expect(rollingOut.has('shop/web'), 'its own look found its rollout under way').toBe(true);
    // The others completed: the interval is back to one second, which has passed by then.
    rollingOut.clear();
    pending.clear();
    rollingOut.add('shop/web');
    pending.set('shop/web', t.now());
    t.advance(1_000);
    await reconciler.reconcile(edKeyOf('shop', 'web'));
    expect(calls).toEqual(['status:Progressing:1']);
  });

  it('counts a key among the writers no longer once its look finds no rollout under way', async () => {
    const { ports } = recorder();
    const reconciler = new Reconciler({ caches: world({ podRevision: 'new' }).caches, ports, clock: clock(), log: silentLogger });
    const { rollingOut } = reconciler as unknown as { rollingOut: Set<string> };
    rollingOut.add('shop/web');
    await reconciler.reconcile(edKeyOf('shop', 'web'));
    expect(rollingOut.has('shop/web')).toBe(false);
  });

  it('holds counts due now for a pod turning available within the next interval, whose look writes them with the group start', async () => {
    const t = clock();
    const metrics = new AgentMetrics({ queueDepth: () => 0 });
    const minReady = { spec: { strategy: { minReadySeconds: 1 } } };
    const first = recorder();
    await new Reconciler({ caches: world(minReady).caches, ports: first.ports, clock: t, log: silentLogger, metrics }).reconcile(edKeyOf('shop', 'web'));
    const { caches, pods } = world({ ...minReady, status: first.statuses[0], replicas: 3, newPod: true });
    for (const pod of pods)
      if (pod.metadata.name !== 'web-amd-c') Object.assign(pod.metadata, { annotations: { [POD_DELETION_COST_ANNOTATION]: OLD_POD_DELETION_COST } });
    // The new pod turned Ready just now: available (and counted so) one second from now.
    Object.assign(
      pods.find((p) => p.metadata.name === 'web-amd-c')!,
      {
        status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: new Date(t.now()).toISOString() }] },
      },
    );
    const { calls, ports } = recorder();
    const reconciler = new Reconciler({ caches, ports, clock: t, log: silentLogger, metrics });
    const { countsPendingSince: pending, lastWrite } = reconciler as unknown as { countsPendingSince: Map<string, number>; lastWrite: Map<string, number> };
    // Counts have waited 900 ms of their 1 s: due in 100 ms, but the look at the pod's availability comes 901 ms later.
    lastWrite.set('shop/web', t.now() - 900);
    pending.set('shop/web', t.now() - 900);
    expect((await reconciler.reconcile(edKeyOf('shop', 'web'))).requeueAfterMs).toBe(1_000 + SLACK_MS);
    expect(calls).toEqual([]);
    // That look finds the pod available and starts the next group: the status it writes carries the counts.
    t.advance(1_000 + SLACK_MS);
    await reconciler.reconcile(edKeyOf('shop', 'web'));
    expect(calls).toEqual(['scale:ReplicaSet:2', 'status:Progressing:2', 'event:GroupStarted']);
    expect(await statusWrites(metrics)).toEqual([['transition', 2]]);
  });

  it('acts and writes the status in one reconcile when the status records more than counts', async () => {
    const { caches } = world({ replicas: 1 });
    const { calls, ports } = recorder();
    await new Reconciler({ caches, ports, clock: clock(), log: silentLogger }).reconcile(edKeyOf('shop', 'web'));
    // A new rollout: its status goes first, whatever the actions.
    expect(calls.slice(0, 2)).toEqual(['status:Progressing:1', 'markOld:web-amd-a']);
  });

  it("starts a group whose first write is a ReplicaSet's scale-down with that write, which records the group, then writes the status", async () => {
    const key = edKeyOf('shop', 'web');
    const t = clock();
    const first = recorder();
    await new Reconciler({ caches: world().caches, ports: first.ports, clock: t, log: silentLogger }).reconcile(key);
    const groupOne = first.statuses[0]!;
    // Group 1 available 10 s later: its new pod Ready, the old pods marked, the ReplicaSet surged to 3.
    const { caches, pods, replicaSets } = world({ status: groupOne, replicas: 3, newPod: true });
    for (const pod of pods) {
      if (pod.metadata.name === 'web-amd-c')
        pod.status = { phase: 'Running', conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: '2026-01-01T00:00:05Z' }] };
      else Object.assign(pod.metadata, { annotations: STANDING_MARK });
    }
    t.advance(10_000);
    const { calls, ports } = recorder(true);
    const scales: RolloutAction[] = [];
    const recording: ReconcilerPorts = { ...ports, performAction: async (ns, kind, action) => (scales.push(action), ports.performAction(ns, kind, action)) };
    // The status write that follows the scale-down fails (a conflict; the same as a leader dying in between).
    await expect(new Reconciler({ caches, ports: recording, clock: t, log: silentLogger }).reconcile(key)).rejects.toThrow('conflict');
    expect(calls).toEqual(['scale:ReplicaSet:2']);
    const record = { revision: groupOne.revision, rolloutStart: groupOne.rolloutStartTime, group: 2, groupStart: new Date(t.now()).toISOString() };
    expect(scales).toEqual([expect.objectContaining({ kind: 'scale', replicas: 2, record })]);

    // A later look (another leader, 5 s on) finds the ReplicaSet scaled down with the record: group 2 goes on from
    // its recorded start; the status records it before the scale-up adds its pods, then its Event.
    Object.assign(replicaSets[0]!, {
      metadata: { ...replicaSets[0]!.metadata, resourceVersion: '2', annotations: { [GROUP_RECORD_ANNOTATION]: JSON.stringify(record) } },
      spec: { ...replicaSets[0]!.spec, replicas: 2 },
    });
    pods.splice(
      pods.findIndex((pod) => pod.metadata.name === 'web-amd-a'),
      1,
    );
    t.advance(5_000);
    const next = recorder();
    await new Reconciler({ caches, ports: next.ports, clock: t, log: silentLogger }).reconcile(key);
    expect(next.statuses[0]).toMatchObject({ currentGroup: 2, lastGroupStartTime: record.groupStart });
    expect(next.calls).toEqual(['status:Progressing:2', 'scale:ReplicaSet:3', 'event:GroupStarted']);
  });

  it('does not act when the status that records a new group cannot be written', async () => {
    const { caches } = world();
    const { calls, ports } = recorder(true);
    await expect(new Reconciler({ caches, ports, clock: clock(), log: silentLogger }).reconcile(edKeyOf('shop', 'web'))).rejects.toThrow('conflict');
    expect(calls).toEqual([]);
  });

  it('writes nothing when the status is unchanged and nothing is to do', async () => {
    const first = recorder();
    await new Reconciler({ caches: world({ podRevision: 'new' }).caches, ports: first.ports, clock: clock(), log: silentLogger }).reconcile(
      edKeyOf('shop', 'web'),
    );
    expect(first.statuses[0]?.phase).toBe('Healthy');
    const { calls, ports } = recorder();
    const result = await new Reconciler({
      caches: world({ podRevision: 'new', status: first.statuses[0] }).caches,
      ports,
      clock: clock(),
      log: silentLogger,
    }).reconcile(edKeyOf('shop', 'web'));
    expect(calls).toEqual([]);
    expect(result).toEqual({ outcome: 'synced' });
  });

  it('looks again at once after writing the status alone, not after writing pods or workloads too (whose events bring the next look)', async () => {
    // The echo of its own status write wakes no key (agent.ts): a status may record a transition the next look acts on.
    const alone = recorder();
    const wroteStatus = await new Reconciler({ caches: world({ podRevision: 'new' }).caches, ports: alone.ports, clock: clock(), log: silentLogger }).reconcile(
      edKeyOf('shop', 'web'),
    );
    expect(alone.calls).toEqual(['status:Healthy:0']);
    expect(wroteStatus).toEqual({ outcome: 'synced', requeueAfterMs: 0 });
    const acting = recorder();
    const acted = await new Reconciler({ caches: world().caches, ports: acting.ports, clock: clock(), log: silentLogger }).reconcile(edKeyOf('shop', 'web'));
    expect(acting.calls).toEqual(['status:Progressing:1', 'markOld:web-amd-a', 'markOld:web-amd-b', 'scale:ReplicaSet:3', 'event:RolloutStarted']);
    expect(acted.requeueAfterMs).toBeGreaterThan(0);
  });

  it('tells whether the last look at a key found its next step waiting for its workload controller (the agent looks at its events sooner)', async () => {
    const key = edKeyOf('shop', 'web');
    // Git has not synced the rendered template to the ReplicaSet yet.
    const unsynced = world();
    const labels = unsynced.replicaSets[0]!.spec.template.metadata.labels;
    const rendered = labels[REVISION_LABEL];
    labels[REVISION_LABEL] = 'old';
    const t = clock();
    const since = t.now();
    const reconciler = new Reconciler({ caches: unsynced.caches, ports: recorder().ports, clock: t, log: silentLogger });
    await reconciler.reconcile(key);
    expect(reconciler.awaitingSince(key)).toBe(since);
    // Still waiting a look later: the wait counts from its first look.
    t.advance(50);
    await reconciler.reconcile(key);
    expect(reconciler.awaitingSince(key)).toBe(since);
    // Synced: the rollout starts (its first scale-up waits for no controller), and the wait is over.
    labels[REVISION_LABEL] = rendered!;
    await reconciler.reconcile(key);
    expect(reconciler.awaitingSince(key)).toBeUndefined();
    // Synced and complete: nothing to wait for. A key never looked at waits for nothing either.
    const healthy = new Reconciler({ caches: world({ podRevision: 'new' }).caches, ports: recorder().ports, clock: clock(), log: silentLogger });
    expect(healthy.awaitingSince(key)).toBeUndefined();
    await healthy.reconcile(key);
    expect(healthy.awaitingSince(key)).toBeUndefined();
  });

  it('counts the next look from the instant it observed: the time its writes took is not waited again', async () => {
    const quick = recorder();
    const promptly = await new Reconciler({ caches: world().caches, ports: quick.ports, clock: clock(), log: silentLogger }).reconcile(edKeyOf('shop', 'web'));
    const t = clock();
    const slow = recorder();
    // Each write takes 40 ms.
    const ports: ReconcilerPorts = {
      ...slow.ports,
      performAction: (...args) => (t.advance(40), slow.ports.performAction(...args)),
      writeStatus: (...args) => (t.advance(40), slow.ports.writeStatus(...args)),
    };
    const slowly = await new Reconciler({ caches: world().caches, ports, clock: t, log: silentLogger }).reconcile(edKeyOf('shop', 'web'));
    expect(slow.calls).toEqual(['status:Progressing:1', 'markOld:web-amd-a', 'markOld:web-amd-b', 'scale:ReplicaSet:3', 'event:RolloutStarted']);
    expect(promptly.requeueAfterMs).toBeGreaterThan(160);
    expect(slowly.requeueAfterMs).toBe(promptly.requeueAfterMs! - 160);
  });

  it('marks the pods of a completed rollout for the next one (standing marks; marked, nothing is written: above), without waiting for the marks', async () => {
    const { calls, ports } = recorder();
    let answered = 0;
    let release = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    // The API server answers the marks only when the test says so.
    const slowMarks: ReconcilerPorts = {
      ...ports,
      performAction: async (...args) => {
        const answer = await ports.performAction(...args);
        await held;
        answered += 1;
        return answer;
      },
    };
    const reconciler = new Reconciler({ caches: world({ podRevision: 'new', unmarked: true }).caches, ports: slowMarks, clock: clock(), log: silentLogger });
    const result = await reconciler.reconcile(edKeyOf('shop', 'web'));
    expect(calls).toEqual(['status:Healthy:0', 'markOld:web-amd-a', 'markOld:web-amd-b']);
    expect(answered).toBe(0);
    // The marks' events bring the next look: not one at once for the status written.
    expect(result).toEqual({ outcome: 'synced', requeueAfterMs: 30_000 });
    release();
    await reconciler.standingMarksSent();
    expect(answered).toBe(2);
  });

  it('sends standing marks two at a time while a reconcile is under way, and as many as its own marks once none is', async () => {
    const { ports } = recorder();
    const held: (() => void)[] = [];
    // Each mark sent, and whether a reconcile was under way then.
    const sent: [string, boolean][] = [];
    const w = world({ podRevision: 'new', unmarked: true, regions: ['amd', 'arm'] });
    const reconciler: Reconciler = new Reconciler({
      caches: w.caches,
      ports: {
        ...ports,
        performAction: async (namespace, kind, action) => {
          const answer = await ports.performAction(namespace, kind, action);
          if (action.kind === 'markOld') {
            sent.push([action.pod, (reconciler as unknown as { looks: Map<string, unknown> }).looks.size > 0]);
            await new Promise<void>((resolve) => held.push(resolve));
          }
          return answer;
        },
      },
      clock: clock(),
      log: silentLogger,
    });
    await reconciler.reconcile(edKeyOf('shop', 'web'));
    // Two while the reconcile that planned them was under way; the other two at once when it ended, none answered yet.
    expect(sent).toEqual([
      ['web-amd-a', true],
      ['web-amd-b', true],
      ['web-arm-a', false],
      ['web-arm-b', false],
    ]);
    for (const release of held.splice(0)) release();
    await reconciler.standingMarksSent();
  });

  it('fails the next look of a key whose standing mark the API server refused, and reports a 403 on the object', async () => {
    const base = recorder();
    const denied = Object.assign(new Error('forbidden'), {
      code: 403,
      body: { kind: 'Status', reason: 'Forbidden', message: 'pods "web-amd-a" is forbidden: User cannot patch resource "pods"' },
    });
    const ports: ReconcilerPorts = {
      ...base.ports,
      performAction: async (namespace, kind, action) => {
        if (action.kind === 'markOld') throw denied;
        return base.ports.performAction(namespace, kind, action);
      },
    };
    const woken: string[] = [];
    const reconciler = new Reconciler({
      caches: world({ podRevision: 'new', unmarked: true }).caches,
      ports,
      clock: clock(),
      log: silentLogger,
      wake: (key) => woken.push(key),
    });
    await reconciler.reconcile(edKeyOf('shop', 'web'));
    await reconciler.standingMarksSent();
    expect(woken).toEqual([edKeyOf('shop', 'web')]);
    await expect(reconciler.reconcile(edKeyOf('shop', 'web'))).rejects.toBe(denied);
    expect(base.calls).toEqual(['status:Healthy:0', 'status:Healthy:0', 'event:Forbidden']);
    expect(base.statuses.at(-1)?.conditions?.find((c) => c.type === AUTHORIZED_CONDITION)).toMatchObject({ status: 'False', reason: 'Forbidden' });
  });

  it('plans on the object its last status write returned while the cache still shows the version it replaced', async () => {
    const w = world({ podRevision: 'new' });
    const { calls, ports } = recorder();
    const bases: (string | undefined)[] = [];
    const tracking: ReconcilerPorts = { ...ports, writeStatus: (ed, status) => (bases.push(ed.metadata?.resourceVersion), ports.writeStatus(ed, status)) };
    const reconciler = new Reconciler({ caches: w.caches, ports: tracking, clock: clock(), log: silentLogger });
    // Written alone, the status brings the next look at once (see the test above).
    expect(await reconciler.reconcile(edKeyOf('shop', 'web'))).toEqual({ outcome: 'synced', requeueAfterMs: 0 });
    expect(calls).toEqual(['status:Healthy:0']);
    // The cache still shows version 10 (no status): the written status holds, nothing is written again.
    expect(await reconciler.reconcile(edKeyOf('shop', 'web'))).toEqual({ outcome: 'synced' });
    expect(calls).toEqual(['status:Healthy:0']);
    // A pod stops being Ready: the next write builds on the returned version 11, not on the cache's 10.
    w.pods[0]!.status.conditions[0]!.status = 'False';
    w.pods[0]!.metadata.resourceVersion = '2';
    await reconciler.reconcile(edKeyOf('shop', 'web'));
    expect(bases).toEqual(['10', '11']);
    // Two writes in a row, and the cache still shows the first one's base: planned on the second one's answer.
    const writes = calls.length;
    await reconciler.reconcile(edKeyOf('shop', 'web'));
    expect(calls.length).toBe(writes);
    // The cache shows an object nobody in this chain wrote (another writer): the cache is planned on again.
    w.ed.metadata!.resourceVersion = '20';
    await reconciler.reconcile(edKeyOf('shop', 'web'));
    expect(bases.at(-1)).toBe('20');
  });

  it('does not plan again until the caches show the workloads and pods it wrote (or gone)', async () => {
    const w = world();
    const first = recorder();
    const reconciler = new Reconciler({ caches: w.caches, ports: first.ports, clock: clock(), log: silentLogger });
    await reconciler.reconcile(edKeyOf('shop', 'web'));
    expect(first.calls).toEqual(['status:Progressing:1', 'markOld:web-amd-a', 'markOld:web-amd-b', 'scale:ReplicaSet:3', 'event:RolloutStarted']);
    // The cache shows the status write, not yet the scale and the mark: planning now would write them again.
    Object.assign(w.ed, { status: first.statuses[0], metadata: { ...w.ed.metadata, resourceVersion: '11' } });
    const before = first.calls.length;
    expect(await reconciler.reconcile(edKeyOf('shop', 'web'))).toEqual({ outcome: 'stale', requeueAfterMs: 250 });
    Object.assign(w.replicaSets[0]!, { metadata: { ...w.replicaSets[0]!.metadata, resourceVersion: '2' }, spec: { ...w.replicaSets[0]!.spec, replicas: 3 } });
    expect((await reconciler.reconcile(edKeyOf('shop', 'web'))).outcome).toBe('stale'); // the mark still does not show
    for (const pod of w.pods) Object.assign(pod.metadata, { resourceVersion: '2', annotations: { [POD_DELETION_COST_ANNOTATION]: OLD_POD_DELETION_COST } });
    expect((await reconciler.reconcile(edKeyOf('shop', 'web'))).outcome).toBe('synced');
    expect(first.calls.slice(before)).toEqual([]); // nothing was written twice
  });

  it('plans on the answers to its status and workload writes while the caches do not show them; waits for pod writes', async () => {
    const w = world();
    const { calls, ports } = recorder();
    const answering: ReconcilerPorts = {
      ...ports,
      async performAction(ns, kind, action) {
        await ports.performAction(ns, kind, action);
        const rs = w.replicaSets.find((r) => action.kind === 'scale' && r.metadata.name === action.workload);
        if (rs && action.kind === 'scale')
          return { ...rs, metadata: { ...rs.metadata, resourceVersion: '2' }, spec: { ...rs.spec, replicas: action.replicas } };
        const pod = w.pods.find((p) => 'pod' in action && p.metadata.name === action.pod);
        return pod && { ...pod, metadata: { ...pod.metadata, resourceVersion: '2', annotations: { [POD_DELETION_COST_ANNOTATION]: OLD_POD_DELETION_COST } } };
      },
    };
    const reconciler = new Reconciler({ caches: w.caches, ports: answering, clock: clock(), log: silentLogger });
    await reconciler.reconcile(edKeyOf('shop', 'web'));
    const before = calls.length;
    // The caches show none of the status, the scale or the marks. Marks are not planned on before the cache shows them
    // (the ReplicaSet controller must see them before any scale-down relies on them), even when answered.
    expect(await reconciler.reconcile(edKeyOf('shop', 'web'))).toEqual({ outcome: 'stale', requeueAfterMs: 250 });
    for (const pod of w.pods) Object.assign(pod.metadata, { resourceVersion: '2', annotations: { [POD_DELETION_COST_ANNOTATION]: OLD_POD_DELETION_COST } });
    // The marks show; the status and the scale still do not: planned on their answers.
    expect(await reconciler.reconcile(edKeyOf('shop', 'web'))).toMatchObject({ outcome: 'synced' });
    expect(calls.slice(before)).toEqual([]);
  });

  it('reports an invalid spec once, as Valid=False and an InvalidSpec event, and acts on nothing', async () => {
    const { caches } = world({ spec: { replicas: 1, regions: [{ name: 'amd', replicas: 3, minReplicas: 4 }] } });
    const first = recorder();
    expect((await new Reconciler({ caches, ports: first.ports, clock: clock(), log: silentLogger }).reconcile(edKeyOf('shop', 'web'))).outcome).toBe('invalid');
    expect(first.calls).toEqual(['status:undefined:undefined', 'event:InvalidSpec']);
    expect(first.statuses[0]?.conditions?.[0]).toMatchObject({ type: 'Valid', status: 'False', reason: 'InvalidSpec' });
    const again = world({ spec: { replicas: 1, regions: [{ name: 'amd', replicas: 3, minReplicas: 4 }] }, status: first.statuses[0] });
    const second = recorder();
    await new Reconciler({ caches: again.caches, ports: second.ports, clock: clock(), log: silentLogger }).reconcile(edKeyOf('shop', 'web'));
    expect(second.calls).toEqual([]);
  });

  it('marks old pods concurrently, and acts on nothing else until every mark is answered', async () => {
    const { caches } = world({ spec: GROUPS_OF_TWO });
    const { calls, ports } = recorder();
    const log: string[] = [];
    let inFlight = 0;
    let most = 0;
    const release: (() => void)[] = [];
    const slow: ReconcilerPorts = {
      ...ports,
      async performAction(ns, kind, action) {
        log.push(`start ${action.kind}`);
        if (action.kind === 'markOld') {
          inFlight++;
          most = Math.max(most, inFlight);
          await new Promise<void>((resolve) => release.push(resolve));
          inFlight--;
        }
        const answer = await ports.performAction(ns, kind, action);
        log.push(`end ${action.kind}`);
        return answer;
      },
    };
    const done = new Reconciler({ caches, ports: slow, clock: clock(), log: silentLogger }).reconcile(edKeyOf('shop', 'web'));
    for (let i = 0; i < 20 && release.length < 2; i++) await new Promise((r) => setTimeout(r, 1));
    expect(most).toBe(2); // both marks are out before either is answered
    expect(log).toEqual(['start markOld', 'start markOld']);
    release.splice(0).forEach((r) => r());
    await done;
    expect(log).toEqual(['start markOld', 'start markOld', 'end markOld', 'end markOld', 'start scale', 'end scale']);
    expect(calls.filter((c) => !c.startsWith('markOld'))).toEqual(['status:Progressing:1', 'scale:ReplicaSet:4', 'event:RolloutStarted']);
  });

  it('waits for every mark of a run, then fails the reconcile with the first failure, before anything after it', async () => {
    const { caches } = world({ spec: GROUPS_OF_TWO });
    const { calls, ports } = recorder();
    const failing: ReconcilerPorts = {
      ...ports,
      async performAction(ns, kind, action) {
        if ('pod' in action && action.pod === 'web-amd-a') throw Object.assign(new Error('boom'), { code: 500 });
        await new Promise((r) => setTimeout(r, 5));
        return ports.performAction(ns, kind, action);
      },
    };
    await expect(new Reconciler({ caches, ports: failing, clock: clock(), log: silentLogger }).reconcile(edKeyOf('shop', 'web'))).rejects.toThrow('boom');
    expect(calls).toEqual(['status:Progressing:1', 'markOld:web-amd-b']);
  });

  it('acts on regions concurrently, each region in its own order: marks before its scale', async () => {
    const { caches } = world({ regions: ['amd', 'arm'], spec: { replicas: 4, ...GROUPS_OF_TWO } });
    const { ports } = recorder();
    const log: string[] = [];
    const release = new Map<string, () => void>();
    const slow: ReconcilerPorts = {
      ...ports,
      async performAction(_ns, _kind, action) {
        const name = `${action.kind} ${'pod' in action ? action.pod : 'region' in action ? action.region : ''}`;
        log.push(`start ${name}`);
        await new Promise<void>((resolve) => release.set(name, resolve));
        log.push(`end ${name}`);
        return undefined;
      },
    };
    const done = new Reconciler({ caches, ports: slow, clock: clock(), log: silentLogger }).reconcile(edKeyOf('shop', 'web'));
    const waitFor = async (n: number) => {
      for (let i = 0; i < 50 && release.size < n; i++) await new Promise((r) => setTimeout(r, 1));
    };
    await waitFor(4);
    // Every old pod of both regions is being marked; no scale yet.
    expect(log).toEqual(['start markOld web-amd-a', 'start markOld web-amd-b', 'start markOld web-arm-a', 'start markOld web-arm-b']);
    for (const pod of ['web-arm-a', 'web-arm-b']) release.get(`markOld ${pod}`)!();
    await waitFor(5);
    // arm's marks are answered: its scale goes out while amd still waits for its marks.
    expect(log.slice(4)).toEqual(['end markOld web-arm-a', 'end markOld web-arm-b', 'start scale arm']);
    release.get('scale arm')!();
    for (const pod of ['web-amd-a', 'web-amd-b']) release.get(`markOld ${pod}`)!();
    await waitFor(6);
    release.get('scale amd')!();
    await done;
    expect(log.indexOf('start scale amd')).toBeGreaterThan(log.indexOf('end markOld web-amd-b'));
  });

  it('writes a change of pod counts alone at most once per interval, and requeues to write it later', async () => {
    const t = clock();
    const first = recorder();
    const reconciler = new Reconciler({ caches: world().caches, ports: first.ports, clock: t, log: silentLogger });
    await reconciler.reconcile(edKeyOf('shop', 'web'));
    expect(first.statuses).toHaveLength(1);
    // The cluster after that reconcile: its status, the ReplicaSet scaled, the old pods marked, a new pod Pending.
    const next = world({ status: first.statuses[0], replicas: 3, newPod: true });
    next.ed.metadata!.resourceVersion = '11';
    for (const pod of next.caches.pods.list('shop')) {
      if (pod.metadata?.name !== 'web-amd-c') pod.metadata!.annotations = { [POD_DELETION_COST_ANNOTATION]: OLD_POD_DELETION_COST };
    }
    const later = recorder();
    const paced = new Reconciler({ caches: next.caches, ports: later.ports, clock: t, log: silentLogger });
    (paced as unknown as { lastWrite: Map<string, number> }).lastWrite.set('shop/web', t.now());
    const result = await paced.reconcile(edKeyOf('shop', 'web'));
    expect(later.calls).toEqual([]); // only counts changed (a new pod, not Ready): nothing written yet
    expect(result.requeueAfterMs).toBeGreaterThan(0);
    expect(result.requeueAfterMs).toBeLessThanOrEqual(1_000);
    t.advance(1_000);
    await paced.reconcile(edKeyOf('shop', 'web'));
    expect(later.calls).toEqual(['status:Progressing:1']);
    expect(later.statuses[0]?.regions?.[0]).toMatchObject({ current: 3, updated: 1 });
  });

  it('marks a new pod for the next rollout as it is seen, in the lane of standing marks, and paces counts as if it wrote nothing', async () => {
    const t = clock();
    const first = recorder();
    await new Reconciler({ caches: world().caches, ports: first.ports, clock: t, log: silentLogger }).reconcile(edKeyOf('shop', 'web'));
    // The cluster after that reconcile: the old pods marked, a new pod Pending and not marked yet.
    const next = world({ status: first.statuses[0], replicas: 3, newPod: 'unmarked' });
    next.ed.metadata!.resourceVersion = '11';
    for (const pod of next.caches.pods.list('shop'))
      if (pod.metadata?.name !== 'web-amd-c') pod.metadata!.annotations = { [POD_DELETION_COST_ANNOTATION]: OLD_POD_DELETION_COST };
    const look = (lastWriteAgoMs?: number) => {
      const later = recorder();
      const actions: RolloutAction[] = [];
      const ports: ReconcilerPorts = {
        ...later.ports,
        performAction: async (ns, kind, action) => (actions.push(action), later.ports.performAction(ns, kind, action)),
      };
      const reconciler = new Reconciler({ caches: next.caches, ports, clock: t, log: silentLogger });
      if (lastWriteAgoMs !== undefined) (reconciler as unknown as { lastWrite: Map<string, number> }).lastWrite.set('shop/web', t.now() - lastWriteAgoMs);
      return { reconciler, calls: later.calls, actions };
    };
    // The key wrote nothing since its last status: the counts (a new pod) are written at once, as without the mark.
    const idle = look();
    const wrote = await idle.reconciler.reconcile(edKeyOf('shop', 'web'));
    await idle.reconciler.standingMarksSent();
    // Its echo wakes no look (StandingMarks.isEcho): the status was written alone, so the next look comes at once.
    expect(wrote.requeueAfterMs).toBe(0);
    expect(idle.actions).toEqual([expect.objectContaining({ kind: 'markOld', pod: 'web-amd-c', cost: OLD_MARK_COST + 1, standing: true })]);
    // The mark of a rollout under way goes out once no reconcile is, after the status.
    expect(idle.calls).toEqual(['status:Progressing:1', 'markOld:web-amd-c']);
    // The cache does not show it yet: the next look plans all the same (a rollout's marks are not tracked as the key's
    // own writes, which it would wait for), and sends it no second time.
    t.advance(1_000);
    expect((await idle.reconciler.reconcile(edKeyOf('shop', 'web'))).outcome).toBe('synced');
    await idle.reconciler.standingMarksSent();
    expect(idle.calls).toEqual(['status:Progressing:1', 'markOld:web-amd-c']);
    // It wrote 600 ms ago: the counts wait out the interval, as without the mark, and the mark goes out meanwhile.
    const busy = look(600);
    expect((await busy.reconciler.reconcile(edKeyOf('shop', 'web'))).requeueAfterMs).toBe(400);
    await busy.reconciler.standingMarksSent();
    expect(busy.calls).toEqual(['markOld:web-amd-c']);
  });

  it('holds a change of pod counts alone for a look due within the interval (a pod turning available), at most one interval', async () => {
    const t = clock();
    const first = recorder();
    await new Reconciler({ caches: world().caches, ports: first.ports, clock: t, log: silentLogger }).reconcile(edKeyOf('shop', 'web'));
    // The new pod turned Ready 200 ms ago: available after minReadySeconds, 800 ms from now.
    const readyNow = (minReadySeconds: number) => {
      const next = world({ status: first.statuses[0], replicas: 3, newPod: true, spec: { strategy: { minReadySeconds } } });
      next.ed.metadata!.resourceVersion = '11';
      for (const pod of next.caches.pods.list('shop')) {
        if (pod.metadata?.name === 'web-amd-c')
          pod.status = { phase: 'Running', conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: new Date(t.now() - 200) }] };
        else pod.metadata!.annotations = { [POD_DELETION_COST_ANNOTATION]: OLD_POD_DELETION_COST };
      }
      return next;
    };
    const soon = recorder();
    const held = new Reconciler({ caches: readyNow(1).caches, ports: soon.ports, clock: t, log: silentLogger });
    const result = await held.reconcile(edKeyOf('shop', 'web'));
    expect(soon.calls).toEqual([]);
    expect(result.requeueAfterMs).toBe(800 + SLACK_MS);
    t.advance(400);
    // Looked at again before the instant (another pod event): still held, the instant is within the interval.
    expect((await held.reconcile(edKeyOf('shop', 'web'))).requeueAfterMs).toBe(400 + SLACK_MS);
    expect(soon.calls).toEqual([]);
    // A look 5 s away is not worth holding the counts for: written at once.
    const late = recorder();
    await new Reconciler({ caches: readyNow(5).caches, ports: late.ports, clock: t, log: silentLogger }).reconcile(edKeyOf('shop', 'web'));
    expect(late.calls).toEqual(['status:Progressing:1']);
  });

  it('reports a wait for the sync only once it lasts SYNC_WAIT_REPORT_GRACE_MS, and counts it among no writers meanwhile', async () => {
    const t = clock();
    const { calls, ports } = recorder();
    const reconciler = new Reconciler({ caches: world({ unsynced: true }).caches, ports, clock: t, log: silentLogger });
    const { rollingOut } = reconciler as unknown as { rollingOut: Set<string> };
    expect((await reconciler.reconcile(edKeyOf('shop', 'web'))).requeueAfterMs).toBe(SYNC_WAIT_REPORT_GRACE_MS);
    expect(calls).toEqual([]);
    // At group 0 its counts hold: it does not stretch the others' pacing.
    expect(rollingOut.has('shop/web')).toBe(false);
    t.advance(SYNC_WAIT_REPORT_GRACE_MS - 500);
    expect((await reconciler.reconcile(edKeyOf('shop', 'web'))).requeueAfterMs).toBe(500);
    expect(calls).toEqual([]);
    t.advance(500);
    await reconciler.reconcile(edKeyOf('shop', 'web'));
    expect(calls).toEqual(['status:Progressing:0', 'event:RolloutStarted']);
  });

  it('starts a rollout whose sync lands within the grace with one status write and one Event, as if it never waited', async () => {
    const t = clock();
    const { calls, ports, statuses } = recorder();
    const w = world({ unsynced: true });
    const reconciler = new Reconciler({ caches: w.caches, ports, clock: t, log: silentLogger });
    await reconciler.reconcile(edKeyOf('shop', 'web'));
    expect(calls).toEqual([]);
    // The sync applies the ReplicaSet 100 ms later.
    w.replicaSets[0]!.spec.template.metadata.labels[REVISION_LABEL] = w.revisionOf('amd');
    t.advance(100);
    await reconciler.reconcile(edKeyOf('shop', 'web'));
    expect(calls).toEqual(['status:Progressing:1', 'markOld:web-amd-a', 'markOld:web-amd-b', 'scale:ReplicaSet:3', 'event:RolloutStarted']);
    expect(statuses[0]?.conditions?.find((c) => c.type === 'Progressing')?.reason).toBe('GroupProgressing');
  });

  it('ignores a deleted ExtendedDeployment', async () => {
    const { caches } = world();
    const { calls, ports } = recorder();
    expect(await new Reconciler({ caches, ports, clock: clock(), log: silentLogger }).reconcile(edKeyOf('shop', 'gone'))).toEqual({ outcome: 'gone' });
    expect(calls).toEqual([]);
  });
});

describe('Reconciler and PodDisruptionBudgets', () => {
  const BUDGET = 'The disruption budget web-pdb needs 2 healthy pods and has 2 currently';
  /** scaleSimultaneously, both pods at the old revision: the agent evicts old pods itself. */
  const SIMULTANEOUS = { strategy: { minReadySeconds: 0, upgradeMode: 'scaleSimultaneously' } };

  /** Ports recording every write, whose evictions a budget refuses while `budget.open` is false. */
  function guardedPorts() {
    const budget = { open: false };
    const { calls, statuses, ports } = recorder();
    const guarded: ReconcilerPorts = {
      ...ports,
      async performAction(namespace: string, kind: 'ReplicaSet' | 'Deployment', action: RolloutAction) {
        if (action.kind === 'deletePod' && !budget.open) {
          calls.push(`refused:${action.pod}`);
          throw new EvictionBlockedError(namespace, action.pod, 'web-pdb', BUDGET);
        }
        return ports.performAction(namespace, kind, action);
      },
    };
    return { budget, calls, statuses, ports: guarded };
  }

  /** The caches catch up with the agent's writes: its last status, and the marks on the old pods. */
  function catchUp(w: ReturnType<typeof world>, status: ExtendedDeploymentStatus | undefined) {
    Object.assign(w.ed, { status, metadata: { ...w.ed.metadata, resourceVersion: '11' } });
    for (const pod of w.pods)
      Object.assign(pod.metadata, {
        resourceVersion: '2',
        annotations: { [POD_DELETION_COST_ANNOTATION]: OLD_POD_DELETION_COST, [MARKED_AT_ANNOTATION]: '2026-01-01T00:00:00.000Z' },
      });
  }

  it("holds a rollout whose eviction a budget refuses: no error, a backoff, one Warning Event, and the rollout's own Events", async () => {
    const w = world({ spec: SIMULTANEOUS });
    const { calls, statuses, ports } = guardedPorts();
    const t = clock();
    const reconciler = new Reconciler({ caches: w.caches, ports, clock: t, log: silentLogger });
    const first = await reconciler.reconcile(edKeyOf('shop', 'web'));
    expect(first.outcome).toBe('blocked');
    expect(first.requeueAfterMs).toBeGreaterThanOrEqual(500);
    expect(first.requeueAfterMs).toBeLessThanOrEqual(1_000);
    // The new rollout is recorded first, then the marks; the eviction is refused; the rollout's Events still go out.
    expect(calls).toEqual([
      'status:Progressing:1',
      'markOld:web-amd-a',
      'markOld:web-amd-b',
      'refused:web-amd-a',
      'event:EvictionBlocked',
      'event:RolloutStarted',
    ]);

    catchUp(w, statuses.at(-1));
    t.advance(first.requeueAfterMs ?? 0);
    calls.length = 0;
    expect((await reconciler.reconcile(edKeyOf('shop', 'web'))).outcome).toBe('blocked');
    expect(calls).toEqual(['refused:web-amd-a']); // reported once while the block lasts; nothing else written
  });

  it('goes on once the budget allows the eviction', async () => {
    const w = world({ spec: SIMULTANEOUS });
    const { budget, calls, statuses, ports } = guardedPorts();
    const t = clock();
    const reconciler = new Reconciler({ caches: w.caches, ports, clock: t, log: silentLogger });
    const blocked = await reconciler.reconcile(edKeyOf('shop', 'web'));
    expect(blocked.outcome).toBe('blocked');
    catchUp(w, statuses.at(-1));
    t.advance(blocked.requeueAfterMs ?? 0);
    budget.open = true;
    calls.length = 0;
    expect((await reconciler.reconcile(edKeyOf('shop', 'web'))).outcome).toBe('synced');
    expect(calls).toContain('deletePod:web-amd-a');
  });
});

describe('Reconciler: adoption (core/adoption)', () => {
  const adopt = { regions: [{ name: 'amd', adopt: { kind: 'Deployment', name: 'old' } }] };

  it('reads the adopted workload fresh while the adoption is open, and holds the rollout meanwhile', async () => {
    const { caches } = world({ spec: adopt });
    const { calls, ports, statuses } = recorder();
    await new Reconciler({ caches, ports, clock: clock(), log: silentLogger }).reconcile(edKeyOf('shop', 'web'));
    // The fetch shows no ReplicaSet web-amd yet (the caches do): the adoption waits, and nothing marks or scales a pod.
    expect(calls).toEqual(['readAdoption', 'status:Progressing:0', 'event:AdoptionWaiting']);
    expect(statuses[0]?.adoptions).toEqual([
      { region: 'amd', source: 'Deployment/old', phase: 'Waiting', message: 'waiting for the sync to create ReplicaSet web-amd' },
    ]);
  });

  it('reads nothing once the status shows every adoption done', async () => {
    const done: ExtendedDeploymentStatus = { adoptions: [{ region: 'amd', source: 'Deployment/old', phase: 'Adopted', moved: 2 }] };
    const { caches } = world({ spec: adopt, status: done });
    const { calls, ports, statuses } = recorder();
    await new Reconciler({ caches, ports, clock: clock(), log: silentLogger }).reconcile(edKeyOf('shop', 'web'));
    expect(calls).not.toContain('readAdoption');
    expect(statuses.at(-1)?.adoptions).toEqual(done.adoptions);
  });

  it('while a step is open, its writes are all the reconcile does: nothing scales the region to its count', async () => {
    const moving: ExtendedDeploymentStatus = { adoptions: [{ region: 'amd', source: 'Deployment/old', phase: 'Moving', frozen: ['old-rs'], moved: 2 }] };
    const { caches, replicaSets, pods } = world({ spec: { ...adopt, replicas: 9 }, status: moving });
    const oldRs = {
      metadata: {
        name: 'old-5d8f',
        uid: 'old-rs',
        generation: 1,
        ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'old', uid: 'dep', controller: true }],
      },
      spec: { replicas: 3, template: {} },
      status: { observedGeneration: 1, replicas: 3 },
    };
    const oldPods = [0, 1, 2].map((i) => ({
      metadata: {
        name: `old-${i}`,
        uid: `old-${i}`,
        resourceVersion: '1',
        labels: { app: 'web' },
        ownerReferences: [{ kind: 'ReplicaSet', name: 'old-5d8f', uid: 'old-rs', controller: true }],
      },
      status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] },
    }));
    const ours = { ...replicaSets[0]!, metadata: { ...replicaSets[0]!.metadata, uid: 'ours' }, status: { observedGeneration: 0, replicas: 2 } };
    const objects = {
      deployments: [
        {
          metadata: { name: 'old', uid: 'dep', generation: 1 },
          spec: { replicas: 3, selector: { matchLabels: { app: 'web' } } },
          status: { observedGeneration: 1 },
        },
      ],
      replicaSets: [ours, oldRs],
      inplaceSets: [],
      pods: [
        ...pods.map((p) => ({ ...p, metadata: { ...p.metadata, ownerReferences: [{ kind: 'ReplicaSet', name: 'web-amd', uid: 'ours', controller: true }] } })),
        ...oldPods,
      ],
    };
    const { calls, ports } = recorder(false, objects);
    await new Reconciler({ caches, ports, clock: clock(), log: silentLogger }).reconcile(edKeyOf('shop', 'web'));
    // No step open (2 pods, 2 replicas; 3 and 3): prove the freeze, then raise the region by the old pods, not to its count of 9.
    expect(calls.filter((c) => !c.startsWith('status') && !c.startsWith('event'))).toEqual(['readAdoption', 'verifyFreeze', 'scale:ReplicaSet:5']);
  });
});
