// The pure parts of bench/peers (bench/peers-figures.ts) and the percentile it shares with the other benches: a wrong
// step mapping would compare different rollouts, a wrong grouping or reaction would print wrong ratios without failing.
import { describe, expect, it } from 'vitest';
import { groupTarget, regionGroups } from '../../core/rollout/groups.js';
import { percentile } from '../../bench/figures.js';
import {
  belongsTo,
  canaryWeights,
  parseAuditEvent,
  perRollout,
  poolRounds,
  ratio,
  requestsByVerbResource,
  scaleWrites,
  stepReactions,
  untilSecondOffset,
  wallEnds,
  type AuditEvent,
  type RoundSamples,
} from '../../bench/peers-figures.js';

describe('canaryWeights', () => {
  it("maps the bench's ExtendedDeployment groups (Beta, batch 2, 10 pods) onto setWeight steps of the same pods", () => {
    const strategy = { rolloutStrategy: 'Beta' as const, batchSize: 2 };
    const targets = Array.from({ length: regionGroups(strategy, 10) }, (_, i) => groupTarget(strategy, 10, i + 1));
    expect(targets).toEqual([1, 3, 5, 7, 9, 10]);
    expect(canaryWeights(targets, 10)).toEqual([10, 30, 50, 70, 90, 100]);
  });

  it('refuses a target no whole weight moves exactly, and targets out of range', () => {
    expect(canaryWeights([1, 2, 3], 4)).toEqual([25, 50, 75]);
    expect(() => canaryWeights([1, 3], 3)).toThrow('no setWeight moves exactly 1 of 3 pods');
    expect(() => canaryWeights([0], 10)).toThrow('not within 1..10');
    expect(() => canaryWeights([11], 10)).toThrow('not within 1..10');
  });
});

const line = (o: Record<string, unknown>) => JSON.stringify(o);

describe('parseAuditEvent', () => {
  it('reads a ResponseComplete event: user, verb, resource/subresource, object, both instants', () => {
    const e = parseAuditEvent(
      line({
        stage: 'ResponseComplete',
        verb: 'patch',
        user: { username: 'system:serviceaccount:bench-peers:argo-rollouts' },
        objectRef: { namespace: 'ns', name: 'app-001', resource: 'rollouts', subresource: 'status' },
        responseStatus: { code: 200 },
        requestReceivedTimestamp: '2026-01-01T00:00:00.100000Z',
        stageTimestamp: '2026-01-01T00:00:00.250000Z',
      }),
    );
    expect(e).toEqual({
      user: 'system:serviceaccount:bench-peers:argo-rollouts',
      verb: 'patch',
      resource: 'rollouts/status',
      namespace: 'ns',
      name: 'app-001',
      received: Date.parse('2026-01-01T00:00:00.100Z'),
      completed: Date.parse('2026-01-01T00:00:00.250Z'),
      code: 200,
    });
  });

  it('skips other stages and blank lines', () => {
    expect(parseAuditEvent('')).toBeUndefined();
    expect(parseAuditEvent(line({ stage: 'ResponseStarted', verb: 'watch', requestReceivedTimestamp: 'x', stageTimestamp: 'y' }))).toBeUndefined();
  });
});

const ev = (user: string, verb: string, resource: string, received: number): AuditEvent => ({
  user,
  verb,
  resource,
  namespace: 'ns',
  name: 'x',
  received,
  completed: received + 1,
  code: 200,
});

describe('scaleWrites', () => {
  const rs = (name: string, verb: string, completed: number, replicas: number | undefined): AuditEvent => ({
    ...ev('a', verb, 'replicasets', completed - 1),
    name,
    completed,
    replicas,
  });

  it("keeps the ReplicaSet writes that changed spec.replicas (creation with pods included), in the API server's order", () => {
    const events = [
      rs('a-1', 'update', 30, 3), // scale 1 → 3
      rs('a-1', 'create', 10, 1),
      rs('a-1', 'update', 20, 1), // annotations only
      rs('a-2', 'patch', 25, 9),
      rs('a-1', 'patch', 40, undefined), // a failed write: no ReplicaSet returned
      rs('a-2', 'patch', 50, 9),
      rs('a-3', 'create', 55, 0), // created without pods (Argo Rollouts' canary): no scaling yet
      rs('a-3', 'update', 60, 1),
    ];
    expect(scaleWrites(events).map((e) => `${e.name}@${e.completed}`)).toEqual(['a-1@10', 'a-2@25', 'a-1@30', 'a-3@60']);
  });

  it('parseAuditEvent reads the replicas a ReplicaSet write returned', () => {
    const base = { stage: 'ResponseComplete', verb: 'update', requestReceivedTimestamp: '2026-01-01T00:00:00Z', stageTimestamp: '2026-01-01T00:00:00Z' };
    expect(parseAuditEvent(line({ ...base, responseObject: { kind: 'ReplicaSet', spec: { replicas: 4 } } }))?.replicas).toBe(4);
    expect(parseAuditEvent(line({ ...base, responseObject: { kind: 'Status' } }))?.replicas).toBeUndefined();
  });
});

describe('requestsByVerbResource', () => {
  it("counts one user's requests inside the window by verb and resource, per rollout", () => {
    const events = [
      ev('a', 'patch', 'replicasets', 10),
      ev('a', 'patch', 'replicasets', 20),
      ev('a', 'update', 'rollouts/status', 20),
      ev('b', 'patch', 'replicasets', 20),
      ev('a', 'patch', 'replicasets', 5),
      ev('a', 'patch', 'replicasets', 31),
    ];
    expect(requestsByVerbResource(events, 'a', 10, 30, 2)).toEqual(
      new Map([
        ['patch replicasets', 1],
        ['update rollouts/status', 0.5],
      ]),
    );
  });
});

describe('stepReactions', () => {
  it("times each step from its target-th pod available to the controller's first write after it", () => {
    // pods available at 100, 200, 300, 400 (unordered); steps need 1, 3 and 4 pods; writes at 150, 320, 330, 1000
    expect(stepReactions([300, 100, 400, 200], [1, 3, 4], [330, 150, 1000, 320])).toEqual([50, 20, 600]);
  });

  it('leaves out a step whose pods never all became available, or that no write followed', () => {
    expect(stepReactions([100, 200], [1, 3], [150])).toEqual([50]);
    expect(stepReactions([100, 200], [1, 2], [150])).toEqual([50]);
  });

  it('belongsTo: the rollout itself and its ReplicaSets, not a rollout whose name merely starts alike', () => {
    expect(belongsTo('app-001', 'app-001')).toBe(true);
    expect(belongsTo('app-001-7d9f', 'app-001')).toBe(true);
    expect(belongsTo('app-0010', 'app-001')).toBe(false);
    expect(belongsTo(undefined, 'app-001')).toBe(false);
  });
});

describe('percentile and ratio', () => {
  it('percentile: nearest rank of ascending values', () => {
    const v = Array.from({ length: 100 }, (_, i) => i + 1);
    expect(percentile(v, 50)).toBe(50);
    expect(percentile(v, 99)).toBe(99);
    expect(percentile([7], 99)).toBe(7);
    expect(percentile([], 50)).toBeNaN();
  });

  it('ratio: ours / theirs, or a dash when it means nothing', () => {
    expect(ratio(1, 4)).toBe('0.25');
    expect(ratio(0, 0)).toBe('1.00');
    expect(ratio(1, 0)).toBe('-');
    expect(ratio(Number.NaN, 1)).toBe('-');
  });

  it('perRollout: small counts keep two significant digits, so the ratio beside them reads from them', () => {
    expect([0.04, 0.02].map(perRollout)).toEqual(['0.040', '0.020']);
    expect(ratio(0.04, 0.02)).toBe('2.00');
    expect(perRollout(0.123)).toBe('0.12');
    expect(perRollout(40.44)).toBe('40.4');
    expect(perRollout(0)).toBe('0.0');
    expect(perRollout(Number.NaN)).toBe('-');
  });
});

describe('wallEnds', () => {
  it("splits off a rollout's start (apply → the first scaling after it) and end (its last step's pods available → done)", () => {
    // Applied at 1000; a scaling of an earlier rollout (900) is not its start; targets 1, 3: the 3rd pod is the last step.
    expect(wallEnds(1000, 9000, [4000, 2000, 6500, 3000], 3, [900, 1300, 2100])).toEqual({ start: 300, end: 5000 });
  });

  it('leaves out what it cannot know: no scaling after the apply, not done, too few pods available', () => {
    expect(wallEnds(1000, undefined, [2000], 3, [900])).toEqual({});
    expect(wallEnds(1000, 9000, [2000, 3000], 3, [1200])).toEqual({ start: 200 });
  });
});

describe('untilSecondOffset', () => {
  it('waits until the clock is the offset past a whole second, the next one if that instant has passed', () => {
    expect(untilSecondOffset(1_700_000_000_010, 50)).toBe(40);
    expect(untilSecondOffset(1_700_000_000_050, 50)).toBe(0);
    expect(untilSecondOffset(1_700_000_000_051, 50)).toBe(999);
    expect(untilSecondOffset(1_700_000_000_990, 50)).toBe(60);
  });
});

describe('poolRounds', () => {
  const round = (o: Partial<RoundSamples>): RoundSamples => ({
    walls: [],
    starts: [],
    ends: [],
    reactions: [],
    scalings: [],
    byVerb: new Map(),
    cpuSeconds: 0,
    peakMiB: 0,
    ...o,
  });

  it("takes percentiles over every round's rollouts and steps, not one round's", () => {
    const pooled = poolRounds([
      round({ walls: [7000], starts: [300], ends: [40], reactions: [5, 9], scalings: [8] }),
      round({ walls: [6000], starts: [100], ends: [60], reactions: [4, 30], scalings: [6] }),
      round({ walls: [6100], starts: [200], ends: [50], reactions: [6, 7], scalings: [7] }),
    ]);
    expect([pooled.wallP50, pooled.wallP99]).toEqual([6100, 7000]);
    expect([pooled.startP50, pooled.endP50]).toEqual([200, 50]);
    expect([pooled.reactionP50, pooled.reactionP99, pooled.reactions]).toEqual([6, 30, 6]);
    expect([pooled.scaleP50, pooled.scaleP99]).toEqual([7, 8]);
  });

  it("averages requests per rollout over rounds (a kind one round lacks counts 0 there) and takes the rounds' median CPU and peak", () => {
    const pooled = poolRounds([
      round({
        byVerb: new Map([
          ['patch replicasets', 12],
          ['get leases', 3],
        ]),
        cpuSeconds: 0.3,
        peakMiB: 70,
      }),
      round({ byVerb: new Map([['patch replicasets', 14]]), cpuSeconds: 0.9, peakMiB: 75 }),
      round({ byVerb: new Map([['patch replicasets', 13]]), cpuSeconds: 0.2, peakMiB: 71 }),
    ]);
    expect(pooled.byVerb.get('patch replicasets')).toBeCloseTo(13);
    expect(pooled.byVerb.get('get leases')).toBeCloseTo(1);
    expect([pooled.cpu, pooled.peak]).toEqual([0.3, 71]);
    expect(pooled.cpuRounds).toEqual([0.3, 0.9, 0.2]);
    expect(pooled.peakRounds).toEqual([70, 75, 71]);
  });

  it('splits the peak into the median anonymous and file-backed parts of the rounds that were sampled, and says so when none was', () => {
    const pooled = poolRounds([
      round({ peakMiB: 120, peakSplit: { anonMiB: 70, fileMiB: 50 } }),
      round({ peakMiB: 118, peakSplit: { anonMiB: 66, fileMiB: 52 } }),
      round({ peakMiB: 119 }),
      round({ peakMiB: 125, peakSplit: { anonMiB: 74, fileMiB: 51 } }),
    ]);
    expect([pooled.peakAnon, pooled.peakFile]).toEqual([70, 51]);
    const unsampled = poolRounds([round({ peakMiB: 100 })]);
    expect([unsampled.peakAnon, unsampled.peakFile]).toEqual([Number.NaN, Number.NaN]);
  });
});
