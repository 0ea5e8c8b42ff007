import { describe, expect, it } from 'vitest';
import type { ExtendedDeploymentStatus } from '../api/extended-deployment.js';
import type { Problem } from '../problems.js';
import {
  forbiddenMessage,
  forbiddenStatus,
  invalidSpecStatus,
  jsonEqual,
  problemsMessage,
  progressOnlyChange,
  statusChanged,
  statusFirst,
} from './status-decision.js';

const T = Date.UTC(2026, 0, 1);
const status: ExtendedDeploymentStatus = {
  observedGeneration: 2,
  phase: 'Progressing',
  revision: 'R1',
  currentGroup: 1,
  totalGroups: 3,
  regions: [{ name: 'a', desired: 2, current: 2 }],
  conditions: [{ type: 'Progressing', status: 'True', reason: 'GroupProgressing', lastTransitionTime: '2026-01-01T00:00:00.000Z' }],
};

describe('jsonEqual / statusChanged', () => {
  it('ignores key order and undefined properties', () => {
    expect(jsonEqual({ a: 1, b: [1, { c: 2 }] }, { b: [1, { c: 2 }], a: 1 })).toBe(true);
    expect(jsonEqual({ a: 1, b: undefined }, { a: 1 })).toBe(true);
  });

  it('sees every other difference', () => {
    expect(jsonEqual([1, 2], [2, 1])).toBe(false);
    expect(jsonEqual({ a: 1 }, { a: '1' })).toBe(false);
    expect(jsonEqual({ a: [] }, { a: {} })).toBe(false);
    expect(jsonEqual({ a: null }, { a: undefined })).toBe(false);
    expect(jsonEqual({ a: 1 }, { a: 1, b: 2 })).toBe(false);
    expect(jsonEqual({ a: 1, b: 2 }, { a: 1 })).toBe(false);
    expect(jsonEqual({ a: 1, b: undefined }, { a: 1, c: 2 })).toBe(false);
    expect(jsonEqual({ a: 1, b: 2 }, { a: 1, b: undefined })).toBe(false);
    expect(jsonEqual([{ a: 1 }], [{ a: 1, b: [] }])).toBe(false);
  });

  it('writes only when anything differs, timestamps included', () => {
    expect(statusChanged(structuredClone(status), status)).toBe(false);
    const moved = structuredClone(status);
    moved.conditions = [{ type: 'Progressing', status: 'True', reason: 'GroupProgressing', lastTransitionTime: '2026-01-01T00:00:01.000Z' }];
    expect(statusChanged(status, moved)).toBe(true);
    expect(statusChanged(undefined, status)).toBe(true);
    expect(statusChanged(undefined, {})).toBe(false);
  });
});

describe('statusFirst', () => {
  it('writes status first when a rollout or a group starts', () => {
    expect(statusFirst(undefined, status)).toBe(true);
    expect(statusFirst(status, { ...status, currentGroup: 2 })).toBe(true);
    expect(statusFirst(status, { ...status, revision: 'R2' })).toBe(true);
  });

  it('writes status first when moves change, so a successor never moves the same replicas twice', () => {
    const moved = { ...status, moves: [{ from: 'a', to: 'b', count: 2, reason: 'Shortage' as const, since: '2026-01-01T00:00:00.000Z' }] };
    expect(statusFirst(status, moved)).toBe(true);
    expect(statusFirst(moved, { ...moved, moves: [{ ...moved.moves[0]!, count: 1, returning: 1 }] })).toBe(true);
    expect(statusFirst(moved, { ...moved, phase: 'Progressing' })).toBe(false);
  });

  it('writes actions first for a group the workloads record in the same writes, but not for a rollout or moves', () => {
    expect(statusFirst(status, { ...status, currentGroup: 2 }, true)).toBe(false);
    expect(statusFirst(status, { ...status, currentGroup: 2, revision: 'R2' }, true)).toBe(true);
    const moved = { ...status, currentGroup: 2, moves: [{ from: 'a', to: 'b', count: 2, reason: 'Shortage' as const, since: '2026-01-01T00:00:00.000Z' }] };
    expect(statusFirst(status, moved, true)).toBe(true);
  });

  it('writes actions first within a group', () => {
    expect(statusFirst(status, { ...status, phase: 'WaitingForConfirmation', regions: [] })).toBe(false);
    expect(statusFirst({}, {})).toBe(false);
  });
});

describe('invalidSpecStatus', () => {
  const problems: Problem[] = [
    { object: { kind: 'ExtendedDeployment', name: 'web', namespace: 'shop' }, path: ['spec', 'replicas'], message: 'must not be negative' },
    { object: { kind: 'ExtendedDeployment', name: 'web', namespace: 'shop' }, path: ['spec', 'regions', 0, 'name'], message: 'is required' },
  ];

  it('formats problems with field paths', () => {
    expect(problemsMessage(problems)).toBe('spec.replicas: must not be negative; spec.regions[0].name: is required');
  });

  it('keeps the previous status, sets Valid=False and emits InvalidSpec once', () => {
    const first = invalidSpecStatus(status, problems, 3, T);
    expect(first.status.phase).toBe('Progressing');
    expect(first.status.currentGroup).toBe(1);
    expect(first.status.observedGeneration).toBe(3);
    expect(first.status.conditions?.map((c) => c.type)).toEqual(['Progressing', 'Valid']);
    expect(first.status.conditions?.[1]).toEqual({
      type: 'Valid',
      status: 'False',
      reason: 'InvalidSpec',
      message: 'spec.replicas: must not be negative; spec.regions[0].name: is required',
      lastTransitionTime: '2026-01-01T00:00:00.000Z',
      observedGeneration: 3,
    });
    expect(first.events).toEqual([
      {
        type: 'Warning',
        reason: 'InvalidSpec',
        message: 'the agent cannot act on this spec: spec.replicas: must not be negative; spec.regions[0].name: is required',
      },
    ]);

    const again = invalidSpecStatus(first.status, problems, 3, T + 60_000);
    expect(again.events).toEqual([]);
    expect(statusChanged(first.status, again.status)).toBe(false); // no write, no event: a stable invalid object costs nothing

    const other = invalidSpecStatus(first.status, problems.slice(1), 4, T + 120_000);
    expect(other.events).toHaveLength(1);
    expect(other.status.conditions?.[1]?.lastTransitionTime).toBe('2026-01-01T00:00:00.000Z'); // still False since T
  });

  it('works without a previous status', () => {
    const { status: s } = invalidSpecStatus(undefined, problems, 1, T);
    expect(s.observedGeneration).toBe(1);
    expect(s.conditions).toHaveLength(1);
  });
});

describe('forbiddenStatus', () => {
  const patchPods = { verb: 'patch', resource: 'pods/status' } as const;

  it('keeps the previous status (observedGeneration included), sets Authorized=False naming verb and resource, and reports it once', () => {
    const first = forbiddenStatus(status, patchPods, 'shop', 3, T);
    expect({ ...first.status, conditions: undefined }).toEqual({ ...status, conditions: undefined });
    const message = "the API server forbids the agent to patch pods/status in namespace shop; it retries with backoff. Grant it in the agent's ClusterRole";
    expect(first.status.conditions).toEqual([
      status.conditions?.[0],
      { type: 'Authorized', status: 'False', reason: 'Forbidden', message, lastTransitionTime: '2026-01-01T00:00:00.000Z', observedGeneration: 3 },
    ]);
    expect(first.events).toEqual([{ type: 'Warning', reason: 'Forbidden', message }]);

    const again = forbiddenStatus(first.status, patchPods, 'shop', 3, T + 60_000);
    expect(again.events).toEqual([]);
    expect(statusChanged(first.status, again.status)).toBe(false);

    const other = forbiddenStatus(first.status, { verb: 'create', resource: 'pods/eviction' }, 'shop', 3, T + 120_000);
    expect(other.events.map((e) => e.message)).toEqual([forbiddenMessage({ verb: 'create', resource: 'pods/eviction' }, 'shop')]);
    expect(other.status.conditions?.[1]?.lastTransitionTime).toBe('2026-01-01T00:00:00.000Z'); // still False since T
  });

  it('names the namespace only for a namespaced object', () => {
    expect(forbiddenMessage({ verb: 'update', resource: 'deployregions/status' }, undefined)).toBe(
      "the API server forbids the agent to update deployregions/status; it retries with backoff. Grant it in the agent's ClusterRole",
    );
  });
});

describe('progressOnlyChange', () => {
  const withRegion = (region: Record<string, unknown>, extra: Partial<ExtendedDeploymentStatus> = {}): ExtendedDeploymentStatus => ({
    ...status,
    replicas: 2,
    overview: '[Normal]a: 2/2',
    regions: [{ name: 'a', desired: 2, current: 2, updated: 0, ready: 2, available: 2, revision: 'r2', ...region }],
    ...extra,
  });

  it('is true when only pod counts, the overview or condition messages changed', () => {
    expect(progressOnlyChange(withRegion({}), withRegion({ current: 3, updated: 1, ready: 2 }, { replicas: 3, overview: '[Normal]a: 3/2' }))).toBe(true);
    expect(progressOnlyChange(withRegion({ replaced: 0, swappedInPlace: 0 }), withRegion({ replaced: 1, swappedInPlace: 2 }))).toBe(true);
    expect(progressOnlyChange(withRegion({}), withRegion({ swapping: 1, availableAt: '2026-01-01T00:00:05Z' }))).toBe(true);
    const msg = (m: string) =>
      withRegion({}, { conditions: [{ type: 'Progressing', status: 'True', reason: 'GroupProgressing', message: m, lastTransitionTime: 'T' }] });
    expect(progressOnlyChange(msg('new pod x is not Ready yet'), msg('group 1 of 3 in progress'))).toBe(true);
  });

  it('is false for anything a rollout decides on or a transition changes, and when nothing changed', () => {
    expect(progressOnlyChange(withRegion({}), withRegion({}))).toBe(false);
    expect(progressOnlyChange(withRegion({}), withRegion({}, { currentGroup: 2 }))).toBe(false);
    expect(progressOnlyChange(withRegion({}), withRegion({}, { phase: 'Healthy' }))).toBe(false);
    expect(progressOnlyChange(withRegion({}), withRegion({}, { lastGroupStartTime: 'T2' }))).toBe(false);
    expect(progressOnlyChange(withRegion({}), withRegion({ desired: 3 }))).toBe(false);
    expect(progressOnlyChange(withRegion({}), withRegion({ revision: 'r3' }))).toBe(false);
    expect(progressOnlyChange(withRegion({ movedIn: 0 }), withRegion({ movedIn: 1 }))).toBe(false);
    const cond = (s: 'True' | 'False') => withRegion({}, { conditions: [{ type: 'Available', status: s, reason: 'X', lastTransitionTime: 'T' }] });
    expect(progressOnlyChange(cond('True'), cond('False'))).toBe(false);
    expect(progressOnlyChange(undefined, withRegion({}))).toBe(false);
    expect(progressOnlyChange('garbage', withRegion({}))).toBe(false);
  });
});
