import { describe, expect, it } from 'vitest';
import type { Condition } from '../api/conditions.js';
import { setCondition, type ConditionUpdate } from './conditions.js';

const EARLIER = '2026-01-01T00:00:00.000Z';
const NOW = Date.parse('2026-01-02T00:00:00.000Z');
const NOW_ISO = new Date(NOW).toISOString();

const available: Condition = {
  type: 'Available',
  status: 'True',
  reason: 'MinimumReplicasAvailable',
  message: '4 of 4 pods available',
  lastTransitionTime: EARLIER,
  observedGeneration: 1,
};
const progressing: Condition = {
  type: 'Progressing',
  status: 'True',
  reason: 'GroupProgressing',
  message: 'group 1 of 2 in progress',
  lastTransitionTime: EARLIER,
  observedGeneration: 1,
};
const moves: Condition = { type: 'Moves', status: 'False', reason: 'NoMoves', lastTransitionTime: EARLIER, observedGeneration: 1 };

// Each row: the conditions before, the condition set, and the conditions after (meta.SetStatusCondition's semantics).
const rows: readonly { name: string; before: readonly Condition[]; next: ConditionUpdate; after: readonly Condition[] }[] = [
  {
    name: 'a new type is appended, transitioning now',
    before: [progressing],
    next: { type: 'Valid', status: 'False', reason: 'InvalidSpec', message: 'spec.replicas: must not be negative', observedGeneration: 2 },
    after: [
      progressing,
      {
        type: 'Valid',
        status: 'False',
        reason: 'InvalidSpec',
        message: 'spec.replicas: must not be negative',
        lastTransitionTime: NOW_ISO,
        observedGeneration: 2,
      },
    ],
  },
  {
    name: 'the first condition of an empty list',
    before: [],
    next: { type: 'Progressing', status: 'True', reason: 'WaitingForSync' },
    after: [{ type: 'Progressing', status: 'True', reason: 'WaitingForSync', lastTransitionTime: NOW_ISO }],
  },
  {
    name: 'the same status keeps its lastTransitionTime, and takes the new reason, message and observedGeneration',
    before: [progressing, available],
    next: {
      type: 'Progressing',
      status: 'True',
      reason: 'WaitingForConfirmation',
      message: 'group 1 is done; group 2 waits for approval',
      observedGeneration: 2,
    },
    after: [
      {
        type: 'Progressing',
        status: 'True',
        reason: 'WaitingForConfirmation',
        message: 'group 1 is done; group 2 waits for approval',
        lastTransitionTime: EARLIER,
        observedGeneration: 2,
      },
      available,
    ],
  },
  {
    name: 'a new status transitions now',
    before: [progressing, available],
    next: { type: 'Available', status: 'False', reason: 'MinimumReplicasUnavailable', message: '3 of 4 pods available', observedGeneration: 1 },
    after: [
      progressing,
      {
        type: 'Available',
        status: 'False',
        reason: 'MinimumReplicasUnavailable',
        message: '3 of 4 pods available',
        lastTransitionTime: NOW_ISO,
        observedGeneration: 1,
      },
    ],
  },
  {
    name: 'a condition that had no lastTransitionTime gets one, even with the same status',
    before: [{ type: 'Moves', status: 'False', reason: 'NoMoves' }],
    next: { type: 'Moves', status: 'False', reason: 'NoMoves' },
    after: [{ type: 'Moves', status: 'False', reason: 'NoMoves', lastTransitionTime: NOW_ISO }],
  },
  {
    name: 'a message the new condition has not is gone (the condition is replaced, not merged)',
    before: [progressing],
    next: { type: 'Progressing', status: 'True', reason: 'Scaling' },
    after: [{ type: 'Progressing', status: 'True', reason: 'Scaling', lastTransitionTime: EARLIER }],
  },
  {
    name: 'a condition in the middle stays where it is, so that the status compares equal as JSON',
    before: [progressing, moves, available],
    next: { type: 'Moves', status: 'True', reason: 'Shortage', message: '1 replica away from their region: arm64→amd64 1 (Shortage)', observedGeneration: 1 },
    after: [
      progressing,
      {
        type: 'Moves',
        status: 'True',
        reason: 'Shortage',
        message: '1 replica away from their region: arm64→amd64 1 (Shortage)',
        lastTransitionTime: NOW_ISO,
        observedGeneration: 1,
      },
      available,
    ],
  },
  {
    name: 'Unknown is a status of its own: True to Unknown transitions',
    before: [{ ...moves, status: 'True', reason: 'Fault' }],
    next: { type: 'Moves', status: 'Unknown', reason: 'AllRegionsFailed', observedGeneration: 1 },
    after: [{ type: 'Moves', status: 'Unknown', reason: 'AllRegionsFailed', lastTransitionTime: NOW_ISO, observedGeneration: 1 }],
  },
];

describe('setCondition', () => {
  it.each(rows)('$name', ({ before, next, after }) => {
    expect(setCondition(before, next, NOW)).toEqual(after);
  });

  it('leaves the list it was given as it was', () => {
    const before = [progressing, available];
    const copy = structuredClone(before);
    setCondition(before, { type: 'Available', status: 'False', reason: 'MinimumReplicasUnavailable' }, NOW);
    setCondition(before, { type: 'Valid', status: 'False', reason: 'InvalidSpec' }, NOW);
    expect(before).toEqual(copy);
  });
});
