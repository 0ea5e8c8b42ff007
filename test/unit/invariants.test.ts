// The e2e invariant watcher's pure check (test/e2e/invariants.ts) on synthetic sequences that must and must not
// violate the rollout model's rules.
import { describe, expect, it } from 'vitest';
import { extendedDeploymentSpec } from '../../core/api/extended-deployment.js';
import { renderSet } from '../../core/render.js';
import { isPodActive } from '../../core/rollout/pod-activity.js';
import { KubeConfig, type KubernetesObject } from '@kubernetes/client-node';
import { REVISIONS_ANNOTATION, ROLLOUT_REVISION_ANNOTATION } from '../../core/labels.js';
import {
  checkSamples,
  edReading,
  InvariantChecker,
  nodeSample,
  podSample,
  start as startWatch,
  type EdSample,
  type NodeSample,
  type PodSample,
  type Sample,
  type WorkloadSample,
} from '../e2e/invariants.js';

const NEW = 'new0000000';
const OLD = 'old0000000';

type Strategy = EdSample['strategy'];

/** Strategy with core's defaults (so budgets and groups read exactly what the agent would), minReadySeconds 0. */
function strategy(overrides: Record<string, unknown> = {}): Strategy {
  const spec = extendedDeploymentSpec.parse({
    selector: { matchLabels: { app: 'x' } },
    template: { metadata: { labels: { app: 'x' } }, spec: { containers: [{ name: 'app', image: 'x' }] } },
    regions: [{ name: 'a', replicas: 1 }],
    strategy: { minReadySeconds: 0, ...overrides },
  });
  return spec.strategy;
}

interface EdOptions {
  strategy?: Record<string, unknown>;
  desired?: Record<string, number>;
  /** Resolved partitions per region (0 when absent). */
  partitions?: Record<string, number>;
  phase?: string;
  group?: number;
  rolloutRegions?: string[];
  revision?: string;
  subsetType?: EdSample['subsetType'];
  groupStart?: string;
  observedGeneration?: number;
}

function ed(o: EdOptions = {}): EdSample {
  const desired = o.desired ?? { a: 3 };
  const s = strategy(o.strategy);
  return {
    subsetType: o.subsetType ?? 'ReplicaSet',
    strategy: s,
    regionOrder: s.regionOrder ?? (o.subsetType === 'Deployment' ? 'Sequential' : 'Parallel'),
    regions: Object.entries(desired).map(([name, d]) => ({ name, desired: d, partition: o.partitions?.[name] ?? 0, targetRevision: NEW })),
    rolloutRevision: 'rollout-2',
    status: {
      phase: o.phase ?? 'Progressing',
      revision: o.revision ?? 'rollout-2',
      currentGroup: o.group ?? 1,
      rolloutRegions: o.rolloutRegions ?? Object.keys(desired),
      ...(o.groupStart !== undefined && { lastGroupStartTime: o.groupStart }),
      ...(o.observedGeneration !== undefined && { observedGeneration: o.observedGeneration }),
    },
  };
}

/**
 * Pods of one region from tokens: `O3` old Ready pod with id 3, `o3` old not Ready, `N7` new Ready, `n7` new not Ready;
 * a trailing `~` marks it terminating, a trailing `!` Failed (evicted). Ids identify pods across samples.
 */
function pods(region: string, tokens: string): PodSample[] {
  return tokens
    .split(/\s+/)
    .filter(Boolean)
    .map((t) => {
      const m = /^([OoNn])(\d+)([~!]?)$/.exec(t);
      if (!m) throw new Error(`bad token ${t}`);
      const [, kind = 'O', id = '0', term] = m;
      const ready = kind === 'O' || kind === 'N';
      return {
        uid: `${region}-${id}`,
        name: `${region}-${id}`,
        region,
        revision: kind.toLowerCase() === 'n' ? NEW : OLD,
        ...(term === '!' && { phase: 'Failed' }),
        terminating: term === '~',
        ready,
        readySince: ready ? 0 : undefined,
      };
    });
}

let clock = 1_000;
function sample(e: EdSample | undefined, byRegion: Record<string, string>, workloads?: WorkloadSample[]): Sample {
  clock += 1_000;
  const all = Object.entries(byRegion).flatMap(([r, t]) => pods(r, t));
  const ws = workloads ?? Object.entries(byRegion).map(([region, t]) => ({ region, replicas: pods(region, t).filter(isPodActive).length }));
  return { at: clock, ed: e, workloads: ws, pods: all };
}

const kinds = (samples: Sample[]) => checkSamples(samples).map((v) => `${v.kind}:${v.region ?? ''}`);

describe('invariant check: a correct rollout has no violation', () => {
  it('scaleOutPriority, Beta, batch 1, one region of 3 (new pod first, old removed once it is available)', () => {
    const g1 = ed({ group: 1 });
    const g2 = ed({ group: 2 });
    const g3 = ed({ group: 3 });
    const done = ed({ group: 3, phase: 'Healthy' });
    const seq = [
      sample(ed({ phase: 'Healthy', revision: 'rollout-1', group: 0 }), { a: 'O1 O2 O3' }),
      sample(g1, { a: 'O1 O2 O3' }),
      sample(g1, { a: 'O1 O2 O3 n4' }),
      sample(g1, { a: 'O1 O2 O3 N4' }),
      sample(g1, { a: 'O1 O2 O3~ N4' }),
      sample(g1, { a: 'O1 O2 N4' }),
      sample(g2, { a: 'O1 O2 N4' }),
      sample(g2, { a: 'O1 O2 N4 n5' }),
      sample(g2, { a: 'O1 O2 N4 N5' }),
      sample(g2, { a: 'O1 O2~ N4 N5' }),
      sample(g3, { a: 'O1 N4 N5' }),
      sample(g3, { a: 'O1 N4 N5 N6' }),
      sample(g3, { a: 'O1~ N4 N5 N6' }),
      sample(done, { a: 'N4 N5 N6' }),
    ];
    expect(kinds(seq)).toEqual([]);
  });

  it('scaleInPriority never goes above desired: old removed first (available may dip by the batch)', () => {
    const s = { upgradeMode: 'scaleInPriority' };
    const g1 = ed({ strategy: s, group: 1 });
    const seq = [
      sample(ed({ strategy: s, phase: 'Healthy', revision: 'rollout-1', group: 0 }), { a: 'O1 O2 O3' }),
      sample(g1, { a: 'O1 O2 O3~' }),
      sample(g1, { a: 'O1 O2' }),
      sample(g1, { a: 'O1 O2 n4' }),
      sample(g1, { a: 'O1 O2 N4' }),
    ];
    expect(kinds(seq)).toEqual([]);
  });

  it('the initial fill is not held to the floor, and a grown desired count re-arms the fill', () => {
    const h = (desired: number) => ed({ desired: { a: desired }, phase: 'Healthy', group: 0, rolloutRegions: [] });
    const seq = [
      sample(h(3), { a: 'n1' }),
      sample(h(3), { a: 'N1 n2 n3' }),
      sample(h(3), { a: 'N1 N2 N3' }),
      sample(h(5), { a: 'N1 N2 N3' }),
      sample(h(5), { a: 'N1 N2 N3 n4 n5' }),
      sample(h(5), { a: 'N1 N2 N3 N4 N5' }),
    ];
    expect(kinds(seq)).toEqual([]);
  });

  it('a shrunk desired count may remove pods, new ones included, without ceiling or deletion violations', () => {
    const e = (desired: number) => ed({ desired: { a: desired }, phase: 'Progressing', group: 3 });
    const seq = [sample(e(3), { a: 'N1 N2 N3' }), sample(e(1), { a: 'N1 N2 N3' }), sample(e(1), { a: 'N1 N2~ N3~' }), sample(e(1), { a: 'N1' })];
    expect(kinds(seq)).toEqual([]);
  });

  it('a region shrunk below the new pods it runs holds them as surplus at a gate, without a group-target violation', () => {
    const e = (desired: number, phase = 'WaitingForConfirmation') => ed({ desired: { a: desired, c: 4 }, group: 2, phase });
    const seq = [
      sample(e(4), { a: 'O1 O2 N3 N4', c: 'O1 O2 N3 N4' }),
      sample(e(1), { a: 'O1 O2 N3 N4', c: 'O1 O2 N3 N4' }),
      sample(e(1, 'Progressing'), { a: 'O1~ O2~ N3 N4', c: 'O1 O2 N3 N4' }),
      sample(e(1), { a: 'N3 N4', c: 'O1 O2 N3 N4' }),
    ];
    expect(kinds(seq)).toEqual([]);
    // …but a region that really runs more new pods than its group allows is still one.
    expect(kinds([...seq, sample(e(1), { a: 'N3 N4', c: 'O1 N2 N3 N4' })])).toEqual(['groupTarget:c']);
  });

  it('a raise during a rollout: the region may run it at the new revision while it has old pods, and no more', () => {
    const e = (desired: number) => ed({ desired: { a: desired }, group: 1, phase: 'WaitingForConfirmation' });
    const seq = [sample(e(3), { a: 'O1 O2 N3' }), sample(e(6), { a: 'O1 O2 N3 n4 n5 n6' })];
    expect(kinds(seq)).toEqual([]);
    expect(kinds([...seq, sample(e(6), { a: 'O1 N3 N4 N5 N6 N7' })])).toEqual(['groupTarget:a']);
  });

  it('old-revision pods may go at any time; new ones once the rollout is Healthy', () => {
    const seq = [
      sample(ed({ group: 1 }), { a: 'O1 O2 O3 N4' }),
      sample(ed({ group: 1 }), { a: 'O1 O2 O3~ N4' }),
      sample(ed({ group: 3, phase: 'Healthy' }), { a: 'N4 N5 N6' }),
      sample(ed({ group: 3, phase: 'Healthy' }), { a: 'N4 N5 N6~ n7' }),
    ];
    // (the last step dips below the floor: that is the floor's business, not a deletion during a rollout)
    expect(kinds(seq)).toEqual(['floor:a']);
  });

  it('Sequential: the second region waits with no new pod while the first takes its groups', () => {
    const s = { regionOrder: 'Sequential' };
    const desired = { a: 2, b: 2 };
    const seq = [
      sample(ed({ strategy: s, desired, group: 1 }), { a: 'O1 O2 N3', b: 'O1 O2' }),
      sample(ed({ strategy: s, desired, group: 1 }), { a: 'O1 N3', b: 'O1 O2' }),
      sample(ed({ strategy: s, desired, group: 2 }), { a: 'O1 N3 N4', b: 'O1 O2' }),
      sample(ed({ strategy: s, desired, group: 2 }), { a: 'N3 N4', b: 'O1 O2' }),
      sample(ed({ strategy: s, desired, group: 3 }), { a: 'N3 N4', b: 'O1 O2 n3' }),
    ];
    expect(kinds(seq)).toEqual([]);
  });

  it('replicas moved to another region: the receiving region may run them, the giving one sheds them', () => {
    // (desired counts as edReading computes them from the moves in the status)
    const before = ed({ desired: { a: 3, b: 3 }, phase: 'Healthy', group: 0, rolloutRegions: [] });
    const moved = ed({ desired: { a: 1, b: 5 }, phase: 'Healthy', group: 0, rolloutRegions: [] });
    const seq = [
      sample(before, { a: 'N1 N2 N3', b: 'N4 N5 N6' }),
      sample(moved, { a: 'N1 N2 N3', b: 'N4 N5 N6' }),
      sample(moved, { a: 'N1 N2 N3', b: 'N4 N5 N6 n7 n8' }),
      sample(moved, { a: 'N1 N2~ N3~', b: 'N4 N5 N6 N7 N8' }),
      sample(moved, { a: 'N1', b: 'N4 N5 N6 N7 N8' }),
    ];
    expect(kinds(seq)).toEqual([]);
    // …but the receiving region is still held to its ceiling.
    expect(kinds([...seq, sample(moved, { a: 'N1', b: 'N4 N5 N6 N7 N8 n9 n10' })])).toEqual(['ceiling:b']);
  });

  it('a region drained to 0 outside a rollout sheds its pods only as pods elsewhere become available', () => {
    const before = ed({ desired: { a: 2, b: 2, c: 2 }, phase: 'Healthy', group: 0, rolloutRegions: [] });
    const drained = ed({ desired: { a: 3, b: 3, c: 0 }, phase: 'Healthy', group: 0, rolloutRegions: [] });
    const seq = [
      sample(before, { a: 'N1 N2', b: 'N3 N4', c: 'N5 N6' }),
      sample(drained, { a: 'N1 N2 n7', b: 'N3 N4 n8', c: 'N5 N6' }),
      sample(drained, { a: 'N1 N2 N7', b: 'N3 N4 n8', c: 'N5 N6~' }),
      sample(drained, { a: 'N1 N2 N7', b: 'N3 N4 N8', c: 'N6~' }),
      sample(drained, { a: 'N1 N2 N7', b: 'N3 N4 N8', c: '' }),
    ];
    expect(kinds(seq)).toEqual([]);
  });

  it('a condition that lasts is reported once, and again only after it cleared', () => {
    const g = ed({ group: 1 });
    const seq = [
      sample(g, { a: 'O1 O2 O3' }),
      sample(g, { a: 'O1 O2 O3 n4 n5' }),
      sample(g, { a: 'O1 O2 O3 N4 N5' }),
      sample(g, { a: 'O1 O2 O3 N4' }),
      sample(g, { a: 'O1 O2 O3 N4 n6 n7' }),
    ];
    expect(kinds(seq).filter((k) => k.startsWith('ceiling'))).toEqual(['ceiling:a', 'ceiling:a']);
  });
});

describe('invariant check: violations', () => {
  it('floor over all regions: outside a rollout, a drained region whose pods go before the others have theirs', () => {
    const before = (o: string) =>
      sample(ed({ desired: { a: 2, b: 2, c: 2 }, phase: 'Healthy', group: 0, rolloutRegions: [] }), { a: `${o}1 ${o}2`, b: `${o}3 ${o}4`, c: `${o}5 ${o}6` });
    const drained = (o: string) =>
      sample(ed({ desired: { a: 3, b: 3, c: 0 }, phase: 'Healthy', group: 0, rolloutRegions: [] }), {
        a: `${o}1 ${o}2 n7`,
        b: `${o}3 ${o}4 n8`,
        c: `${o}5~ ${o}6~`,
      });
    expect(kinds([before('N'), drained('N')])).toEqual(['floor:']);
    expect(checkSamples([before('N'), drained('N')])[0]?.message).toBe("4 pods available over all regions < 6, the sum of the regions' floors");
    // During a rollout (old-revision pods) each region sheds by its own budgets: only the regions' floors hold.
    expect(kinds([before('O'), drained('O')])).toEqual([]);
  });

  it('ceiling: scaleOutPriority above desired + batch (terminating pods count)', () => {
    const g = ed({ group: 1 });
    expect(kinds([sample(g, { a: 'O1 O2 O3' }), sample(g, { a: 'O1 O2 O3~ N4 n5' })])).toContain('ceiling:a');
  });

  it('ceiling: scaleInPriority above desired, also by the workload replicas alone', () => {
    const g = ed({ strategy: { upgradeMode: 'scaleInPriority' }, group: 1 });
    expect(kinds([sample(g, { a: 'O1 O2 O3' }), sample(g, { a: 'O1 O2 O3~ n4' })])).toContain('ceiling:a');
    expect(kinds([sample(g, { a: 'O1 O2 O3' }, [{ region: 'a', replicas: 4 }])])).toEqual(['ceiling:a']);
  });

  it('floor: scaleOutPriority below desired after the fill', () => {
    const g = ed({ group: 1 });
    expect(kinds([sample(g, { a: 'O1 O2 O3' }), sample(g, { a: 'O1 O2 O3~ n4' })])).toEqual(['floor:a']);
    expect(kinds([sample(g, { a: 'O1 O2 O3' }), sample(g, { a: 'O1 O2 o3' })])).toEqual(['floor:a']);
  });

  it('floor: while a region fills up, available pods never drop below what it had (initial fill, grown count)', () => {
    const h = (desired: number) => ed({ desired: { a: desired }, phase: 'Healthy', group: 0, rolloutRegions: [] });
    expect(kinds([sample(h(3), { a: 'N1 N2 n3' }), sample(h(3), { a: 'N1 N2~ n3' })])).toEqual(['floor:a']);
    expect(kinds([sample(h(3), { a: 'N1 N2 N3' }), sample(h(5), { a: 'N1 N2 N3 n4' }), sample(h(5), { a: 'N1 N2 N3~ n4 n5' })])).toEqual(['floor:a']);
    // A floor raised above what runs keeps the pods that run: the shortfall alone is no violation.
    const g = (desired: number) => ed({ desired: { a: desired }, group: 2 });
    expect(kinds([sample(g(2), { a: 'O1 N2' }), sample(g(4), { a: 'O1 N2' }), sample(g(4), { a: 'O1 N2 n3' }), sample(g(4), { a: 'O1 N2 N3' })])).toEqual([]);
  });

  it("StatefulSet regions: their controller's budgets, one pod below the count while it replaces one, never above it", () => {
    const g = ed({ subsetType: 'StatefulSet', group: 1 });
    // The controller deletes the highest ordinal, then makes it again at the new revision (a new pod, a new uid).
    expect(
      kinds([
        sample(g, { a: 'O1 O2 O3' }),
        sample(g, { a: 'O1 O2 O3~' }),
        sample(g, { a: 'O1 O2' }),
        sample(g, { a: 'O1 O2 n4' }),
        sample(g, { a: 'O1 O2 N4' }),
      ]),
    ).toEqual([]);
    expect(kinds([sample(g, { a: 'O1 O2 O3' }), sample(g, { a: 'O1 O2~ O3~' })])).toEqual(['floor:a']);
    expect(kinds([sample(g, { a: 'O1 O2 O3' }), sample(g, { a: 'O1 O2 O3 n4' })])).toEqual(['ceiling:a']);
  });

  it('floor: scaleInPriority below desired − batch', () => {
    const g = ed({ strategy: { upgradeMode: 'scaleInPriority' }, group: 1 });
    expect(kinds([sample(g, { a: 'O1 O2 O3' }), sample(g, { a: 'O1 O2~ O3~' })])).toEqual(['floor:a']);
  });

  it('floor: in-place swaps may take a batch of pods out (desired − max(maxUnavailable, batch)), not more', () => {
    const g = ed({ strategy: { rolloutStrategy: 'Group', batchSize: 2, updateStrategy: { type: 'InPlaceIfPossible' } }, group: 1, desired: { a: 4 } });
    // a swap keeps the pod (same id): it turns not Ready at the old revision, then comes back at the new one
    expect(kinds([sample(g, { a: 'O1 O2 O3 O4' }), sample(g, { a: 'o1 o2 O3 O4' }), sample(g, { a: 'n1 n2 O3 O4' }), sample(g, { a: 'N1 N2 O3 O4' })])).toEqual(
      [],
    );
    expect(kinds([sample(g, { a: 'O1 O2 O3 O4' }), sample(g, { a: 'o1 o2 o3 O4' })])).toEqual(['floor:a']);
    expect(
      kinds([sample(ed({ group: 1, desired: { a: 4 } }), { a: 'O1 O2 O3 O4' }), sample(ed({ group: 1, desired: { a: 4 } }), { a: 'o1 O2 O3 O4' })]),
    ).toEqual(['floor:a']);
  });

  it('newPodDeleted: a new-revision pod gets a deletionTimestamp, or vanishes, while the rollout is in progress', () => {
    const g = ed({ group: 2 });
    expect(kinds([sample(g, { a: 'O1 N2 N3' }), sample(g, { a: 'O1 N2 N3~ n4' })])).toContain('newPodDeleted:a');
    expect(kinds([sample(g, { a: 'O1 N2 N3' }), sample(g, { a: 'O1 N2' })])).toContain('newPodDeleted:a');
    // A new rollout whose status the agent has not written yet is in progress too (the status says Healthy for the old one).
    const stale = ed({ phase: 'Healthy', revision: 'rollout-1', group: 3 });
    expect(kinds([sample(stale, { a: 'O1 N2 N3' }), sample(stale, { a: 'O1 N2 N3~' })])).toContain('newPodDeleted:a');
  });

  it('newPodDeleted: not for a new pod above the share a partition leaves the region (a forced exit)', () => {
    // 3 replicas, 2 old pods Ready: the forced exit sets the partition to 2, so the region keeps 1 new pod of its 2.
    const forced = ed({ group: 2, desired: { a: 3 }, partitions: { a: 2 } });
    expect(kinds([sample(forced, { a: 'O1 O2 N3 n4' }), sample(forced, { a: 'O1 O2 N3 n4~' })]).filter((k) => k.startsWith('newPodDeleted'))).toEqual([]);
    // Below that share, a removal still counts.
    expect(kinds([sample(forced, { a: 'O1 O2 N3 n4' }), sample(forced, { a: 'O1 O2 N3~ n4~' })])).toContain('newPodDeleted:a');
  });

  it('groupTarget: more new pods than the current group allows', () => {
    const g = ed({ group: 1 });
    expect(kinds([sample(g, { a: 'O1 O2 O3' }), sample(g, { a: 'O1 O2 O3 n4 n5' })])).toContain('groupTarget:a');
    // Group strategy with a percentage: 50% of 4 is 2 per group.
    const p = ed({ strategy: { rolloutStrategy: 'Group', batchSize: '50%' }, desired: { a: 4 }, group: 1 });
    expect(kinds([sample(p, { a: 'O1 O2 O3 O4 n5 n6' })])).toEqual([]);
    expect(kinds([sample(p, { a: 'O1 O2 O3 N5 N6 n7' })])).toEqual(['groupTarget:a']);
  });

  it('groupTarget: Sequential, a region gets a new pod before its first group', () => {
    const s = { regionOrder: 'Sequential' };
    expect(kinds([sample(ed({ strategy: s, desired: { a: 2, b: 2 }, group: 2 }), { a: 'O1 N2 N3', b: 'O1 O2 n3' })])).toEqual(['groupTarget:b']);
  });

  it('groupTarget: a partition caps the last group while the region runs old pods', () => {
    // Beta, batch 4, 6 replicas: groups take it to 1, 5 and 6 new pods; with partition 2 to 1 and 4, never 5.
    const g = ed({ strategy: { batchSize: 4 }, desired: { a: 6 }, partitions: { a: 2 }, group: 2 });
    expect(kinds([sample(g, { a: 'O1 O2 N3 N4 N5 N6' })])).toEqual([]);
    expect(kinds([sample(g, { a: 'O1 O2 N3 N4 N5 N6 N7' })])).toEqual(['groupTarget:a']);
    expect(kinds([sample(ed({ strategy: { batchSize: 4 }, desired: { a: 6 }, group: 2 }), { a: 'O1 O2 N3 N4 N5 N6 N7' })])).toEqual([]);
    // A kept pod gone: the region fills up with new ones (nothing makes old pods), beside the group's target.
    expect(kinds([sample(g, { a: 'O1 N2 N3 N4 N5 N6' })])).toEqual([]);
  });

  it('groupTarget: Sequential creation, a region waiting for its group may run the one pod its new ReplicaSet was given, not two', () => {
    const g = ed({ strategy: { regionOrder: 'Sequential' }, desired: { a: 2, b: 2 }, group: 1 });
    expect(kinds([sample(g, { a: 'n1', b: 'n2' })])).toEqual([]);
    expect(kinds([sample(g, { a: 'n1', b: 'n2 n3' })])).toEqual(['groupTarget:b']);
  });

  it("groupAdvance: the next group starts while a region's previous group is not available", () => {
    const desired = { a: 3, b: 2 };
    const g1 = ed({ desired, group: 1 });
    const g2 = ed({ desired, group: 2 });
    // b's new pod is not available yet.
    expect(kinds([sample(g1, { a: 'O1 O2 N3', b: 'O1 O2 n3' }), sample(g2, { a: 'O1 O2 N3', b: 'O1 O2 n3' })])).toEqual(['groupAdvance:b']);
    // available: no violation, whether or not the old pod group 1 replaces has left yet
    expect(kinds([sample(g1, { a: 'O1 O2 N3', b: 'O1 O2 N3' }), sample(g2, { a: 'O1 O2 N3', b: 'O1 O2 N3' })])).toEqual([]);
    expect(kinds([sample(g1, { a: 'O1 O2 N3', b: 'O1 N3' }), sample(g2, { a: 'O1 O2 N3', b: 'O1 N3' })])).toEqual([]);
  });

  it('compat mode: a region waiting for its group keeps its Deployment paused and its pods', () => {
    const c = (group: number) => ed({ subsetType: 'Deployment', desired: { a: 2, b: 2 }, group });
    const paused = (a: boolean, b: boolean): WorkloadSample[] => [
      { region: 'a', replicas: 2, paused: a },
      { region: 'b', replicas: 2, paused: b },
    ];
    const ok = [
      sample(c(1), { a: 'O1 O2', b: 'O1 O2' }, paused(false, true)),
      sample(c(1), { a: 'O1 O2 n3', b: 'O1 O2' }, paused(false, true)),
      sample(c(1), { a: 'O1 O2~ N3 n4', b: 'O1 O2' }, paused(false, true)),
      sample(c(1), { a: 'O1~ N3 N4', b: 'O1 O2' }, paused(false, true)),
      sample(c(2), { a: 'N3 N4', b: 'O1 O2' }, paused(true, false)),
      sample(c(2), { a: 'N3 N4', b: 'O1 O2 n3' }, paused(true, false)),
    ];
    expect(kinds(ok)).toEqual([]);
    expect(kinds([sample(c(1), { a: 'O1 O2', b: 'O1 O2' }, paused(false, false))])).toEqual(['waitingRegionTouched:b']);
    expect(kinds([sample(c(1), { a: 'O1 O2', b: 'O1 O2' }, paused(false, true)), sample(c(1), { a: 'O1 O2', b: 'O1 O2~ n3' }, paused(false, true))])).toContain(
      'waitingRegionTouched:b',
    );
    // group 2 starting while a still runs an old pod
    expect(kinds([sample(c(1), { a: 'O1 N3', b: 'O1 O2' }, paused(false, true)), sample(c(2), { a: 'O1 N3', b: 'O1 O2' }, paused(true, false))])).toContain(
      'groupAdvance:a',
    );
  });
});

describe('invariant check: the compat-mode ceiling counts what the Deployment controller bounds', () => {
  // Region a (desired 3, maxSurge 1 from the default 25% rounded up) rolls under its Deployment; old pods belong to
  // ReplicaSet rs-old, new ones to rs-new.
  const c = ed({ subsetType: 'Deployment', desired: { a: 3 }, group: 1 });
  const owned = (s: Sample, replicaSetReplicas: Record<string, number>): Sample => ({
    ...s,
    pods: s.pods.map((p) => ({ ...p, owner: p.revision === NEW ? 'rs-new' : 'rs-old' })),
    replicaSetReplicas,
  });
  const workloads: WorkloadSample[] = [{ region: 'a', replicas: 3, paused: false }];

  it('a ReplicaSet just scaled down keeps its surplus pod for a moment while the new one made its pod: no violation', () => {
    expect(kinds([owned(sample(c, { a: 'O1 O2 N3 N4 n5' }, workloads), { 'rs-old': 1, 'rs-new': 3 })])).toEqual([]);
  });

  it('pods within their ReplicaSets over the ceiling are a violation; so are pods whose ReplicaSet is unknown', () => {
    expect(kinds([owned(sample(c, { a: 'O1 O2 N3 N4 n5' }, workloads), { 'rs-old': 2, 'rs-new': 3 })])).toEqual(['ceiling:a']);
    expect(kinds([sample(c, { a: 'O1 O2 N3 N4 n5' }, workloads)])).toEqual(['ceiling:a']);
  });
});

describe('invariant check: Failed (evicted) pods count as the ReplicaSet controller and the agent count them', () => {
  it('an evicted new pod and its replacement: the dead pod is over neither the ceiling nor the group target', () => {
    // Group 1 of a (3, batch 1): the new pod n4 was evicted and the ReplicaSet created n5 in its place.
    const g = ed({ group: 1 });
    expect(
      kinds([
        sample(g, { a: 'O1 O2 O3' }),
        sample(g, { a: 'O1 O2 O3 n4' }),
        sample(g, { a: 'O1 O2 O3 n4!' }),
        sample(g, { a: 'O1 O2 O3 n4! n5' }),
        sample(g, { a: 'O1 O2 O3 n4! N5' }),
      ]),
    ).toEqual([]);
  });

  it('a leftover evicted old pod does not hold a finished rollout in the ceiling', () => {
    const done = ed({ group: 3, phase: 'Healthy' });
    expect(kinds([sample(done, { a: 'N4 N5 N6 o1!' }), sample(done, { a: 'N4 N5 N6 o1! n7' })])).toEqual([]);
  });

  it('newPodDeleted: deleting an evicted new pod (PodGC, a person) is clean-up, not a removal', () => {
    const g = ed({ group: 2 });
    const seq = [sample(g, { a: 'O1 N2 N3' }), sample(g, { a: 'O1 N2 n3!' }), sample(g, { a: 'O1 N2 n3! n4' }), sample(g, { a: 'O1 N2 n4' })];
    expect(kinds(seq).filter((k) => k.startsWith('newPodDeleted'))).toEqual([]);
    // An active new pod deleted is still reported.
    expect(kinds([sample(g, { a: 'O1 N2 N3' }), sample(g, { a: 'O1 N2 N3~' })])).toContain('newPodDeleted:a');
  });

  it('an evicted pod is not available, even while its Ready condition still says True', () => {
    // Group 2 starts while group 1's only new pod has failed: the group was not available.
    const at = (group: number) => ed({ group });
    expect(kinds([sample(at(1), { a: 'O1 O2 O3 N4!' }), sample(at(2), { a: 'O1 O2 O3 N4!' })]).filter((k) => k.startsWith('group'))).toEqual([
      'groupAdvance:a',
    ]);
  });
});

describe('invariant check: pods the test evicts (Sample.disrupted) are disruptions from outside the rollout', () => {
  /** The violations over `states` (pods per region, in order) with `uids` declared evicted, and without the declaration. */
  const evicting = (e: EdSample, states: Record<string, string>[], uids: string[], workloads?: WorkloadSample[]) => {
    const run = (declared: string[]) => kinds(states.map((s) => ({ ...sample(e, s, workloads), disrupted: new Set(declared) })));
    return { declared: run(uids), undeclared: run([]) };
  };

  it('an available old pod evicted (Failed) in group 1: its replacement at the new revision is no groupTarget, the dip no floor', () => {
    // a: 3, scaleOutPriority batch 1 (floor 3). O1 is evicted; the ReplicaSet replaces it with n5 at the template's revision.
    // Undeclared, the dip and the extra new pod are the rollout's.
    const states = [{ a: 'O1 O2 O3 n4' }, { a: 'O1! O2 O3 n4' }, { a: 'O1! O2 O3 n4 n5' }, { a: 'O1! O2 O3 N4 N5' }];
    expect(evicting(ed({ group: 1 }), states, ['a-1'])).toEqual({ declared: [], undeclared: ['floor:a', 'groupTarget:a'] });
  });

  it('the floor is lowered by what evictions took only until the region has it back: the rollout keeps its own budget', () => {
    const g = ed({ group: 1 });
    // While O1's replacement is not available, the rollout removing O3 as well takes a second pod: a violation.
    expect(evicting(g, [{ a: 'O1 O2 O3 n4' }, { a: 'O1! O2 O3 n4' }, { a: 'O1! O2 O3~ n4 n5' }], ['a-1']).declared).toEqual(['floor:a']);
    // Back at the floor, the lowering is gone: a later dip is a violation again.
    const back = [
      { a: 'O1 O2 O3 N4' },
      { a: 'O1! O2 O3 N4' },
      { a: 'O1! O2 O3 N4 N5' },
      { a: 'O1! O2 O3~ N4 N5' },
      { a: 'O1! O2 N4 N5' },
      { a: 'O1! O2~ N4 N5' },
    ];
    expect(evicting(g, back, ['a-1']).declared).toEqual(['floor:a']);
  });

  it('in place: an eviction that leaves the region at its floor still excuses the swap under way', () => {
    // a: 3, batch 1: swaps may take 1 pod out (floor 2). Group 2 began swapping O2 when O3 was evicted: 2 pods out, the
    // swap's and the eviction's, until the replacement n4 is available.
    const g = ed({ group: 2, strategy: { updateStrategy: { type: 'InPlaceIfPossible' } } });
    const states = [{ a: 'N1 O2 O3' }, { a: 'N1 O2 O3!' }, { a: 'N1 O2 O3! n4' }, { a: 'N1 o2 O3! n4' }, { a: 'N1 o2 O3! N4' }, { a: 'N1 N2 O3! N4' }];
    expect(evicting(g, states, ['a-3'])).toEqual({ declared: [], undeclared: ['floor:a', 'groupTarget:a'] });
  });

  it('a pod the Eviction API deleted is not over the ceiling while it terminates and the ReplicaSet replaces it', () => {
    // a: 3 with its surge pod N4 (ceiling 4); O1 is evicted and its replacement n5 comes before O1 is gone.
    const states = [{ a: 'O1 O2 O3 N4' }, { a: 'O1~ O2 O3 N4 n5' }, { a: 'O2 O3 N4 n5' }];
    expect(evicting(ed({ group: 1 }), states, ['a-1'])).toEqual({ declared: [], undeclared: ['ceiling:a', 'groupTarget:a'] });
  });

  it('a new pod deleted by the Eviction API is no newPodDeleted; one the test did not evict still is', () => {
    const g = ed({ group: 2 });
    expect(evicting(g, [{ a: 'O1 N2 N3' }, { a: 'O1 N2~ N3' }, { a: 'O1 N3 n4' }], ['a-2']).declared).toEqual([]);
    expect(evicting(g, [{ a: 'O1 N2 N3' }, { a: 'O1 N2 N3~' }], ['a-2']).declared).toContain('newPodDeleted:a');
  });

  it('compat mode: a pod evicted in a region waiting for its group does not count as touched', () => {
    const c = ed({ subsetType: 'Deployment', desired: { a: 2, b: 2 }, group: 1 });
    const paused: WorkloadSample[] = [
      { region: 'a', replicas: 2, paused: false },
      { region: 'b', replicas: 2, paused: true },
    ];
    const states = [
      { a: 'O1 O2 n3', b: 'O1 O2' },
      { a: 'O1 O2 n3', b: 'O1 O2~' },
      { a: 'O1 O2 n3', b: 'O1 o4' },
      { a: 'O1 O2 n3', b: 'O1 O4' },
    ];
    expect(evicting(c, states, ['b-2'], paused)).toEqual({ declared: [], undeclared: ['floor:b', 'waitingRegionTouched:b'] });
  });
});

describe('invariant check: group history', () => {
  it('groupBack: the group goes back within one rollout; a new rollout may start again at group 1', () => {
    expect(kinds([sample(ed({ group: 2 }), { a: 'O1 O2 N3' }), sample(ed({ group: 1 }), { a: 'O1 O2 N3' })])).toEqual(['groupBack:']);
    expect(kinds([sample(ed({ group: 3, phase: 'Healthy' }), { a: 'N1 N2 N3' }), sample(ed({ group: 1, revision: 'rollout-3' }), { a: 'N1 N2 N3' })])).toEqual(
      [],
    );
  });

  it('groupRestarted: a running group gets a new start time; a new group, or one after Healthy, may', () => {
    const at = (group: number, groupStart: string, phase = 'Progressing') => ed({ group, groupStart, phase });
    const pods = { a: 'O1 O2 O3' };
    expect(kinds([sample(at(1, 't1'), pods), sample(at(1, 't2'), pods)])).toEqual(['groupRestarted:']);
    expect(kinds([sample(at(1, 't1'), pods), sample(at(1, 't1'), pods), sample(at(2, 't2'), { a: 'O1 O2 O3' })]).filter((k) => k.startsWith('group'))).toEqual([
      'groupAdvance:a',
    ]);
    expect(kinds([sample(at(1, 't1', 'Healthy'), pods), sample(at(1, 't2'), pods)])).toEqual([]);
    // A spec change from Git restarts the group's deadline: the status that first observes it may carry a new start.
    const seen = (observedGeneration: number, groupStart: string) => ed({ group: 1, groupStart, phase: 'Degraded', observedGeneration });
    expect(kinds([sample(seen(3, 't1'), pods), sample(seen(4, 't2'), pods)])).toEqual([]);
    expect(kinds([sample(seen(4, 't1'), pods), sample(seen(4, 't2'), pods)])).toEqual(['groupRestarted:']);
  });
});

describe('invariant check: placement and capacity', () => {
  const zoneA = { zone: 'a' };
  const node = (name: string, zone: string, pods = 3, cpu = 1): NodeSample => ({ name, labels: { zone }, allocatable: { pods, cpu, memory: 2 ** 30 } });
  const nodes = [node('a1', 'a'), node('a2', 'a'), node('b1', 'b')];
  /** A sample where the pods of region a are bound to `bindings` (pod id → node) and request `cpu` each. */
  const placed = (bindings: Record<string, string>, cpu = 0.1, allNodes = nodes): Sample => {
    const s = sample(ed({ phase: 'Healthy', group: 0, rolloutRegions: [], desired: { a: Object.keys(bindings).length } }), {
      a: Object.keys(bindings)
        .map((id) => `N${id}`)
        .join(' '),
    });
    return {
      ...s,
      pods: s.pods.map((p) => ({ ...p, node: bindings[p.uid.split('-')[1] ?? ''], requests: { cpu, memory: 2 ** 20 } })),
      nodes: allNodes,
      regionSelectors: { a: { matchLabels: zoneA } },
    };
  };

  it("pods bound to the region's nodes within their allocatable: no violation", () => {
    expect(kinds([placed({ 1: 'a1', 2: 'a1', 3: 'a2' })])).toEqual([]);
  });

  it('placement: a pod bound to a node outside its region', () => {
    expect(kinds([placed({ 1: 'a1', 2: 'b1' })])).toEqual(['placement:a']);
  });

  it("capacity: more pods, or more of a resource, than the region's nodes can hold", () => {
    expect(kinds([placed({ 1: 'a1', 2: 'a1', 3: 'a1', 4: 'a1', 5: 'a2', 6: 'a2', 7: 'a2' })])).toEqual(['capacity:a']);
    expect(kinds([placed({ 1: 'a1', 2: 'a2', 3: 'a2' }, 0.7)])).toEqual(['capacity:a']);
    // A node leaving the region (relabelled) takes its allocatable along: what is bound there now escapes it.
    expect(kinds([placed({ 1: 'a1', 2: 'a2' }, 0.1, [node('a1', 'a'), node('a2', 'b')])])).toEqual(['placement:a']);
  });

  it('capacity: an evicted pod bound to a node holds none of it (its containers stopped)', () => {
    // Region a's nodes take 6 pods in all.
    const full = placed({ 1: 'a1', 2: 'a1', 3: 'a1', 4: 'a1', 5: 'a2', 6: 'a2', 7: 'a2' });
    const evicted = { ...full, pods: full.pods.map((p) => (p.uid === 'a-4' ? { ...p, phase: 'Failed', ready: false } : p)) };
    expect(kinds([full])).toEqual(['capacity:a']);
    expect(kinds([evicted])).toEqual([]);
  });

  it('nothing is checked without nodes or region labels (unbound pods are Pending, not placed)', () => {
    const s = placed({ 1: 'b1' });
    expect(kinds([{ ...s, regionSelectors: {} }])).toEqual([]);
    const { nodes: _nodes, ...withoutNodes } = s;
    expect(kinds([withoutNodes])).toEqual([]);
    expect(kinds([placed({ 1: '' })].map((x) => ({ ...x, pods: x.pods.map((p) => ({ ...p, node: undefined })) })))).toEqual([]);
  });
});

/** ExtendedDeployment ns/web over regions r1 (60% of 5) and r2, rendered by core as `edctl render` writes it. */
function renderedWeb() {
  const rendered = renderSet([
    { apiVersion: 'extendeddeployment.io/v1beta1', kind: 'DeployRegion', metadata: { name: 'r1' }, spec: { matchLabels: { zone: 'a' } } },
    { apiVersion: 'extendeddeployment.io/v1beta1', kind: 'DeployRegion', metadata: { name: 'r2' }, spec: { matchLabels: { zone: 'b' } } },
    {
      apiVersion: 'extendeddeployment.io/v1beta1',
      kind: 'ExtendedDeployment',
      metadata: { name: 'web', namespace: 'ns' },
      spec: {
        replicas: 5,
        selector: { matchLabels: { app: 'web' } },
        template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'app', image: 'x:1' }] } },
        regions: [{ name: 'r1', replicas: '60%' }, { name: 'r2' }],
        strategy: { upgradeMode: 'scaleInPriority', regionOrder: 'Sequential' },
      },
    },
  ]);
  if (!rendered.ok) throw new Error('render failed');
  return rendered.value.extendedDeployments[0]!;
}

describe('samples from objects', () => {
  it('edReading reads a rendered ExtendedDeployment as core parses it; podSample reads Date and string timestamps', () => {
    const r = renderedWeb();
    const s = edReading({ ...(r?.manifest as object), status: { phase: 'Healthy', revision: r?.rolloutRevision, currentGroup: 2, rolloutRegions: ['r1'] } }).ed;
    expect(s?.regions).toEqual(r?.regions.map((x) => ({ name: x.name, desired: x.replicas, partition: 0, targetRevision: x.revision })));
    expect(s?.regions.map((x) => x.desired)).toEqual([3, 2]);
    expect(s?.rolloutRevision).toBe(r?.rolloutRevision);
    expect(s?.regionOrder).toBe('Sequential');
    expect(s?.strategy.upgradeMode).toBe('scaleInPriority');
    expect(s?.status).toEqual({
      observedGeneration: undefined,
      lastGroupStartTime: undefined,
      phase: 'Healthy',
      revision: r?.rolloutRevision,
      currentGroup: 2,
      totalGroups: undefined,
      rolloutRegions: ['r1'],
    });
    // Replicas the status records as moved count in the region they moved to.
    const moved = edReading({
      ...(r?.manifest as object),
      status: { moves: [{ from: 'r1', to: 'r2', count: 2, reason: 'Shortage', since: '2026-01-01T00:00:00Z' }] },
    }).ed;
    expect(moved?.regions.map((x) => x.desired)).toEqual([1, 4]);

    const labels = { 'extendeddeployment.io/region': 'r1', 'extendeddeployment.io/revision': 'abc' };
    const t = '2026-01-01T00:00:05Z';
    const fromWatch = podSample({
      metadata: { uid: 'u', name: 'p', labels, deletionTimestamp: t },
      status: { conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: t }] },
    });
    const fromList = podSample({
      metadata: { uid: 'u', name: 'p', labels, deletionTimestamp: new Date(t) },
      status: { conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: new Date(t) }] },
    });
    expect(fromWatch).toEqual(fromList);
    expect(fromWatch).toEqual({
      uid: 'u',
      name: 'p',
      region: 'r1',
      revision: 'abc',
      terminating: true,
      ready: true,
      readySince: Date.parse(t),
      node: undefined,
      requests: {},
    });
    expect(
      podSample({
        metadata: { uid: 'e', name: 'e', labels },
        status: { phase: 'Failed', conditions: [{ type: 'Ready', status: 'False', lastTransitionTime: t }] },
      }),
    ).toMatchObject({ phase: 'Failed', terminating: false, ready: false });

    // Requests as the scheduler counts them: containers summed, the largest init container if larger.
    const bound = podSample({
      metadata: { uid: 'u', name: 'p', labels },
      spec: {
        nodeName: 'n1',
        containers: [{ resources: { requests: { cpu: '250m', memory: '64Mi' } } }, { resources: { requests: { cpu: '50m' } } }],
        initContainers: [{ resources: { requests: { cpu: '1', memory: '16Mi' } } }],
      },
    });
    expect(bound.node).toBe('n1');
    expect(bound.requests).toEqual({ cpu: 1, memory: 64 * 2 ** 20 });
    expect(
      nodeSample({ metadata: { name: 'n1', labels: { zone: 'a' } }, status: { allocatable: { cpu: '4', memory: '8Gi', pods: '20', 'nvidia.com/gpu': '2' } } }),
    ).toEqual({
      name: 'n1',
      labels: { zone: 'a' },
      allocatable: { cpu: 4, memory: 8 * 2 ** 30, pods: 20, 'nvidia.com/gpu': 2 },
    });
  });
});

describe('what keeps the rules from covering a run fails it', () => {
  const rendered = () => renderedWeb().manifest as { metadata: { annotations: Record<string, string> }; spec: Record<string, unknown> };

  it('edReading names the object and why the rules cannot read it', () => {
    const manifest = rendered();
    const annotations = manifest.metadata.annotations;
    const readings = [
      { ...manifest, spec: 'replicas: 3' },
      { ...manifest, metadata: { ...manifest.metadata, annotations: {} } },
      { ...manifest, metadata: { ...manifest.metadata, annotations: { ...annotations, [REVISIONS_ANNOTATION]: '{"r1": ' } } },
      { ...manifest, metadata: { ...manifest.metadata, annotations: { ...annotations, [REVISIONS_ANNOTATION]: '{}' } } },
      { ...manifest, spec: { ...manifest.spec, replicas: 1, regions: [{ name: 'r1', replicas: 3, minReplicas: 4 }] } },
    ].map((o) => edReading(o));
    expect(readings.map((r) => r.ed)).toEqual([undefined, undefined, undefined, undefined, undefined]);
    expect(readings.map((r) => r.unparsed)).toEqual([
      'ExtendedDeployment ns/web: does not parse: spec: must be an object, not the string "replicas: 3"',
      `ExtendedDeployment ns/web: carries no rendered revisions (annotations ${REVISIONS_ANNOTATION}, ${ROLLOUT_REVISION_ANNOTATION})`,
      `ExtendedDeployment ns/web: annotation ${REVISIONS_ANNOTATION} is not JSON`,
      `ExtendedDeployment ns/web: annotation ${REVISIONS_ANNOTATION} has no revision for region r1, r2`,
      'ExtendedDeployment ns/web: replicas cannot be distributed: spec.regions[0].replicas: 3 is below minReplicas 4; spec.regions: integer replicas add up to 3, more than spec.replicas (1)',
    ]);
    expect(edReading(manifest).unparsed).toBeUndefined();
  });

  it('an ExtendedDeployment the rules cannot read is a violation, once per stretch, and those samples are not counted as checked', () => {
    const unreadable = (): Sample => ({ ...sample(undefined, { a: 'O1' }), unparsed: 'ExtendedDeployment ns/web: does not parse: spec: x' });
    const seq = [sample(ed(), { a: 'O1' }), unreadable(), unreadable(), sample(ed(), { a: 'O1' }), unreadable()];
    const checker = new InvariantChecker();
    for (const s of seq) checker.observe(s);
    expect(checker.violations.map((v) => `${v.kind}: ${v.message}`)).toEqual([
      'unparsed: the rules cannot run: ExtendedDeployment ns/web: does not parse: spec: x',
      'unparsed: the rules cannot run: ExtendedDeployment ns/web: does not parse: spec: x',
    ]);
    expect(checker.checked).toBe(2);
    // A test that makes it unreadable on purpose declares so: those samples are only left unchecked.
    const expecting = new InvariantChecker({ expectInvalid: true });
    for (const s of seq) expecting.observe(s);
    expect(expecting.violations).toEqual([]);
    expect(expecting.checked).toBe(2);
    // Before the object exists there is nothing to read and nothing wrong.
    expect(checkSamples([sample(undefined, {})])).toEqual([]);
  });

  /** A list-watch stand-in: the objects it lists, and events and errors played by the test. */
  class FakeWatch {
    readonly objects: KubernetesObject[] = [];
    private readonly handlers = new Map<string, ((arg: unknown) => void)[]>();
    on(event: string, cb: (arg: unknown) => void): void {
      this.handlers.set(event, [...(this.handlers.get(event) ?? []), cb]);
    }
    emit(event: string, arg: unknown): void {
      for (const cb of this.handlers.get(event) ?? []) cb(arg);
    }
    async start(): Promise<void> {}
    async stop(): Promise<void> {}
    list(): KubernetesObject[] {
      return this.objects;
    }
  }

  /** Starts the watcher on fakes, in its order of watches: ExtendedDeployments, ReplicaSets, Deployments, pods, nodes, DeployRegions. */
  const watchOnFakes = async (expectInvalid = false) => {
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromOptions({
      clusters: [{ name: 'c', server: 'http://127.0.0.1:1' }],
      users: [{ name: 'u' }],
      contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
      currentContext: 'x',
    });
    const fakes: FakeWatch[] = [];
    const watch = await startWatch({
      kubeConfig,
      namespace: 'ns',
      name: 'web',
      expectInvalid,
      makeInformer: (() => fakes[fakes.push(new FakeWatch()) - 1]) as never,
    });
    const [eds, , , , pods] = fakes as [FakeWatch, FakeWatch, FakeWatch, FakeWatch, FakeWatch];
    return { watch, eds, pods };
  };

  it('the watcher: counts the events the rules ran on apart from all events, and fails on an unreadable object and on a watch error', async () => {
    const { watch, eds, pods } = await watchOnFakes();
    const manifest = rendered();
    eds.emit('add', { ...manifest, metadata: { ...manifest.metadata, resourceVersion: '5' } });
    eds.emit('update', { ...manifest, metadata: { ...manifest.metadata, resourceVersion: '6' }, spec: 'replicas: 3' });
    pods.emit('error', new Error('connection reset by peer'));
    const violations = await watch.stop();
    expect(violations.map((v) => v.kind)).toEqual(['unparsed', 'watchError']);
    expect(violations[1]?.message).toBe('pod watch: connection reset by peer');
    // The sample of the initial lists (no object yet), the readable one, the unreadable one.
    expect(watch.events()).toBe(3);
    expect(watch.checked()).toBe(1);
  });

  it('the watcher: a watch the API server refused to start with 429 is restarted and reported as throttled, no violation', async () => {
    const { watch, eds, pods } = await watchOnFakes();
    // The two ways client-node words the API server's `storage is (re)initializing` answer.
    pods.emit('error', new Error('HTTP-Code: 429 Message: Unknown API Status Code!'));
    eds.emit('error', new Error('Too Many Requests'));
    await new Promise((resolve) => setTimeout(resolve, 1_100)); // restarted after a second
    expect(await watch.stop()).toEqual([]);
    expect(watch.throttled).toEqual([
      expect.stringMatching(/pod watch: HTTP-Code: 429 Message: Unknown API Status Code!: watched again after \d+ ms$/),
      expect.stringMatching(/ed watch: Too Many Requests: watched again after \d+ ms$/),
    ]);
  });

  it('the watcher: an unreadable object the test expects is no violation, a watch error still is', async () => {
    const { watch, eds, pods } = await watchOnFakes(true);
    eds.emit('add', { metadata: { name: 'web', namespace: 'ns', resourceVersion: '5' }, spec: 'replicas: 3' });
    pods.emit('error', new Error('connection reset by peer'));
    expect((await watch.stop()).map((v) => v.kind)).toEqual(['watchError']);
    expect(watch.checked()).toBe(0);
  });
});
