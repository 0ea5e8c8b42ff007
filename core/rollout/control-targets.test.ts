import { describe, expect, it } from 'vitest';
import { ABORTED_ANNOTATION, APPROVED_ANNOTATION } from '../labels.js';
import type { ExtendedDeploymentObject } from '../kube/objects.js';
import { abortTarget, approveTarget, fleetApprovalTarget } from './control-targets.js';

/** An ExtendedDeployment of generation 2 whose status the agent wrote for it. */
function ed(status: Record<string, unknown>, annotations: Record<string, string> = {}, spec: Record<string, unknown> = {}): ExtendedDeploymentObject {
  return { metadata: { name: 'web', namespace: 'shop', generation: 2, annotations }, spec, status: { observedGeneration: 2, ...status } };
}
const rollout = (phase: string, currentGroup: number, totalGroups = 3) => ({ phase, revision: 'R', currentGroup, totalGroups });

describe('approveTarget', () => {
  it.each([
    ['waiting after group 1', ed(rollout('WaitingForConfirmation', 1)), { ok: true, revision: 'R', group: 2, phase: 'WaitingForConfirmation' }],
    ['progressing in group 2 (approved ahead)', ed(rollout('Progressing', 2)), { ok: true, revision: 'R', group: 3, phase: 'Progressing' }],
    ['an approval of an earlier rollout', ed(rollout('WaitingForConfirmation', 1), { [APPROVED_ANNOTATION]: 'OLD/3' }), { ok: true, group: 2 }],
    ['no status yet', ed({}), { ok: false, reason: 'no rollout yet (no status.revision): is the agent running?' }],
    ['a finished rollout', ed(rollout('Healthy', 3)), { ok: false, reason: 'rollout R is finished (Healthy): nothing to approve' }],
    [
      'a finished rollout the agent has not caught up with',
      { ...ed(rollout('Healthy', 3)), metadata: { name: 'web', generation: 3 } },
      { ok: false, reason: 'rollout R is finished (Healthy): nothing to approve; the agent has not yet seen generation 3, try again once its rollout started' },
    ],
    ['the last group', ed(rollout('Degraded', 3)), { ok: false, reason: 'rollout R is in its last group (3 of 3): there is no later group to approve' }],
    [
      'a group approved by edctl',
      ed(rollout('WaitingForConfirmation', 1), { [APPROVED_ANNOTATION]: 'R/2' }),
      { ok: false, reason: 'group 2 of rollout R is approved already (by edctl approve)' },
    ],
    [
      'a group approved in Git',
      ed(rollout('Progressing', 1), {}, { strategy: { approval: { revision: 'R', throughGroup: 3 } } }),
      { ok: false, reason: 'group 2 of rollout R is approved already (by strategy.approval)' },
    ],
  ])('%s', (_, object, expected) => {
    expect(approveTarget(object)).toMatchObject(expected);
  });
});

describe('abortTarget', () => {
  it.each([
    ['a rollout in progress', ed(rollout('Progressing', 2)), { ok: true, revision: 'R' }],
    ['a rollout waiting for approval', ed(rollout('WaitingForConfirmation', 1)), { ok: true, revision: 'R' }],
    ['an abort of an earlier rollout', ed(rollout('Degraded', 1), { [ABORTED_ANNOTATION]: 'OLD' }), { ok: true, revision: 'R' }],
    ['no status yet', ed({}), { ok: false, reason: 'no rollout yet (no status.revision): is the agent running?' }],
    ['a finished rollout', ed(rollout('Healthy', 3)), { ok: false, reason: 'rollout R is finished (Healthy): nothing to abort' }],
    [
      'an aborted rollout',
      ed(rollout('Paused', 2), { [ABORTED_ANNOTATION]: 'R' }),
      { ok: false, reason: 'rollout R is aborted already (continue it with: edctl resume web)' },
    ],
  ])('%s', (_, object, expected) => {
    expect(abortTarget(object)).toMatchObject(expected);
  });
});

describe('fleetApprovalTarget', () => {
  const member = (reason: string | undefined, fleet: Record<string, unknown> | null = { release: 'abc1234567', wave: 1 }) =>
    ({
      metadata: { name: 'web' },
      spec: fleet === null ? {} : { fleet },
      status: { fleet: { gate: { state: reason ? 'Waiting' : 'Open', reason } } },
    }) as ExtendedDeploymentObject;
  it.each([
    ['a gate waiting only for the approval: the release and wave', member('WaitingForApproval'), { release: 'abc1234567', wave: 1 }],
    ['a gate waiting for a predecessor: approve acts on groups', member('Soaking'), undefined],
    ['an open gate', member(undefined), undefined],
    ['no fleet', member('WaitingForApproval', null), undefined],
  ])('%s', (_name, ed, want) => expect(fleetApprovalTarget(ed)).toEqual(want));
});
