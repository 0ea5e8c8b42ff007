import { describe, expect, it } from 'vitest';
import { ABORTED_ANNOTATION, APPROVED_ANNOTATION, APPROVED_RELEASE_ANNOTATION, PAUSED_ANNOTATION, RESUMED_AT_ANNOTATION } from '../../core/labels.js';
import { fakeApi } from '../api-test-support.js';
import { run } from '../run.js';
import { captured, captureOutput } from '../test-support.js';

captureOutput();
const api = fakeApi();
const rollout = (phase: string, currentGroup: number) => ({ observedGeneration: 1, phase, revision: 'R', currentGroup, totalGroups: 3 });

describe('edctl approve and abort', () => {
  it.each([
    ['approve', rollout('Healthy', 3), {}, 'rollout R is finished (Healthy): nothing to approve'],
    ['approve', rollout('Progressing', 3), {}, 'rollout R is in its last group (3 of 3): there is no later group to approve'],
    ['approve', rollout('WaitingForConfirmation', 1), { [APPROVED_ANNOTATION]: 'R/2' }, 'group 2 of rollout R is approved already (by edctl approve)'],
    ['abort', rollout('Healthy', 3), {}, 'rollout R is finished (Healthy): nothing to abort'],
    ['abort', rollout('Paused', 2), { [ABORTED_ANNOTATION]: 'R' }, 'rollout R is aborted already (continue it with: edctl resume web)'],
    ['abort', {}, {}, 'no rollout yet (no status.revision): is the agent running?'],
  ])('%s refuses with exit 1 and one line when there is nothing to act on: %j', async (command, status, annotations, reason) => {
    api.ed = { metadata: { generation: 1, annotations }, status };
    expect(await run([command, 'web', '--kubeconfig', api.kubeconfig])).toBe(1);
    expect(captured.err).toBe(`error: ExtendedDeployment shop/web: ${reason}\n`);
    expect(api.patches).toEqual([]);
  });

  it.each([
    ['approve', { [APPROVED_ANNOTATION]: 'R/2' }, 'approved group 2 of rollout R'],
    ['abort', { [ABORTED_ANNOTATION]: 'R' }, 'rollout R aborted'],
  ])('%s acts on a rollout that waits for approval', async (command, annotations, said) => {
    api.ed = { metadata: { generation: 1 }, status: rollout('WaitingForConfirmation', 1) };
    expect(await run([command, 'web', '--kubeconfig', api.kubeconfig])).toBe(0);
    expect(captured.out).toBe(`ExtendedDeployment shop/web: ${said}\n`);
    expect(api.patches).toEqual([{ metadata: { annotations } }]);
  });

  it("approve lets a fleet member's wave start when its gate waits only for that: the release, and only it", async () => {
    api.ed = {
      metadata: { generation: 1 },
      spec: { fleet: { release: '3f9a1c0d2e', wave: 1 } },
      status: { observedGeneration: 1, phase: 'Progressing', fleet: { gate: { state: 'Waiting', reason: 'WaitingForApproval' } } },
    };
    expect(await run(['approve', 'web', '--kubeconfig', api.kubeconfig])).toBe(0);
    expect(captured.out).toBe('ExtendedDeployment shop/web: approved release 3f9a1c0d2e for wave 1\n');
    expect(api.patches).toEqual([{ metadata: { annotations: { [APPROVED_RELEASE_ANNOTATION]: '3f9a1c0d2e' } } }]);
  });
});

describe('edctl resume', () => {
  it('clears the pause and the abort it finds by value (never removing an annotation Git does not own), with the time', async () => {
    api.ed = { metadata: { generation: 1, annotations: { [PAUSED_ANNOTATION]: 'true', [ABORTED_ANNOTATION]: 'R' } }, status: rollout('Paused', 2) };
    expect(await run(['resume', 'web', '--kubeconfig', api.kubeconfig])).toBe(0);
    expect(captured.out).toBe('ExtendedDeployment shop/web: resumed\n');
    expect(api.patches).toEqual([
      { metadata: { annotations: { [PAUSED_ANNOTATION]: 'false', [ABORTED_ANNOTATION]: '', [RESUMED_AT_ANNOTATION]: expect.any(String) } } },
    ]);
  });

  it('writes only the time when there is no pause or abort to clear', async () => {
    api.ed = { metadata: { generation: 1 }, status: rollout('Degraded', 2) };
    expect(await run(['resume', 'web', '--kubeconfig', api.kubeconfig])).toBe(0);
    expect(api.patches).toEqual([{ metadata: { annotations: { [RESUMED_AT_ANNOTATION]: expect.any(String) } } }]);
  });
});
