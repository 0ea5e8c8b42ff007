import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { APPROVED_ANNOTATION, PAUSED_ANNOTATION } from '../../core/labels.js';
import { fakeApi } from '../api-test-support.js';
import { run } from '../run.js';
import { captured, captureOutput } from '../test-support.js';
import { statusText } from './status.js';

const view = { bin: 'edctl', now: Date.UTC(2026, 0, 1, 12) };

describe('statusText', () => {
  it('shows phase, group, controls, the next step, regions and conditions', () => {
    const text = statusText(
      {
        metadata: { name: 'web', namespace: 'shop', generation: 3, annotations: { [PAUSED_ANNOTATION]: 'true', [APPROVED_ANNOTATION]: 'R1/2' } },
        status: {
          observedGeneration: 3,
          phase: 'Paused',
          revision: 'R1',
          currentGroup: 2,
          totalGroups: 3,
          regions: [{ name: 'amd', desired: 3, current: 3, updated: 2, ready: 3, available: 3, revision: 'abc' }],
          conditions: [{ type: 'Progressing', status: 'True', reason: 'Paused', message: 'paused by edctl pause in group 2' }],
        },
      },
      view,
    );
    expect(text.split('\n')).toEqual([
      'ExtendedDeployment shop/web',
      'Phase:     Paused, group 2/3',
      'Revision:  R1',
      'Message:   paused by edctl pause in group 2',
      'Controls:  paused, approved through group 2',
      'Next:      edctl resume web -n shop',
      '',
      'REGION  DESIRED  NEW  OLD  READY  AVAILABLE  REVISION',
      'amd     3        2    1    3      3          abc',
      '',
      'CONDITION    STATUS  REASON  MESSAGE',
      'Progressing  True    Paused  paused by edctl pause in group 2',
      '',
    ]);
  });

  it('says when there is no status yet, and when the status is behind the spec', () => {
    expect(statusText({ metadata: { name: 'web', namespace: 'shop' } }, view)).toBe('ExtendedDeployment shop/web\nNo status yet: is the agent running?\n');
    expect(statusText({ metadata: { name: 'web', namespace: 'shop', generation: 4 }, status: { phase: 'Healthy', observedGeneration: 3 } }, view)).toContain(
      'the agent has not yet seen generation 4',
    );
  });

  it("shows a fleet member's place, the release it completed and its gate", () => {
    const text = statusText(
      {
        metadata: { name: 'web', namespace: 'shop', generation: 2 },
        spec: { fleet: { name: 'prod', cluster: 'eu-1', wave: 1, release: '3f9a1c0d2e', members: [] } },
        status: { observedGeneration: 2, phase: 'Progressing', fleet: { release: '0000000000', gate: { state: 'Waiting', reason: 'Soaking' } } },
      },
      view,
    );
    expect(text).toContain('Fleet:     prod: member eu-1, wave 1; release 3f9a1c0d2e (completed 0000000000); gate Waiting (Soaking)\n');
    expect(statusText({ metadata: { name: 'web', namespace: 'shop' }, status: { phase: 'Healthy' } }, view)).not.toContain('Fleet:');
  });

  it('shows a handover a fleet member holds: what it keeps, toward which share, for whom', () => {
    const text = statusText(
      {
        metadata: { name: 'web', namespace: 'shop', generation: 3 },
        spec: { fleet: { name: 'prod', cluster: 'b', wave: 1, release: '3f9a1c0d2e', members: [] } },
        status: {
          observedGeneration: 3,
          phase: 'Healthy',
          fleet: { release: '3f9a1c0d2e', share: 6, handover: { replicas: 4, since: '2026-11-29T10:00:00Z', waitingFor: ['d', 'e'], message: '…' } },
        },
      },
      view,
    );
    expect(text).toContain('Fleet:     prod: member b, wave 1; release 3f9a1c0d2e (completed 3f9a1c0d2e); handover: keeps 6 of share 4 for d, e\n');
  });

  it('shows an invalid spec', () => {
    const text = statusText(
      {
        metadata: { name: 'bad', namespace: 'shop' },
        status: { conditions: [{ type: 'Valid', status: 'False', reason: 'InvalidSpec', message: 'spec.regions: integer replicas add up to 3' }] },
      },
      view,
    );
    expect(text).toContain('Invalid:   spec.regions: integer replicas add up to 3');
    expect(text).toContain('Next:      fix the fields named above in Git (edctl validate shows every problem)');
  });

  it('shows the swaps under way and the countdown to available, as the watch does', () => {
    const text = statusText(
      {
        metadata: { name: 'web', namespace: 'shop', generation: 1 },
        status: {
          observedGeneration: 1,
          phase: 'Progressing',
          regions: [
            {
              name: 'amd',
              desired: 3,
              current: 3,
              updated: 2,
              ready: 3,
              available: 2,
              availableAt: new Date(view.now + 20_000).toISOString(),
              revision: 'abc',
            },
            { name: 'arm', desired: 2, current: 2, updated: 1, ready: 1, available: 1, swapping: 1, revision: 'def' },
          ],
        },
      },
      view,
    );
    expect(text.split('\n').slice(-4)).toEqual([
      'REGION  DESIRED  NEW  OLD  READY  AVAILABLE          SWAPPING  REVISION',
      'amd     3        2    1    3      2 (1 more in 20s)  0         abc',
      'arm     2        1    1    1      1                  1         def',
      '',
    ]);
  });
});

describe('edctl status against an API server', () => {
  captureOutput();
  const api = fakeApi();
  const progressing = {
    observedGeneration: 1,
    phase: 'Progressing',
    revision: 'R',
    currentGroup: 1,
    totalGroups: 3,
    conditions: [{ type: 'Progressing', status: 'True', reason: 'GroupProgressing', message: 'group 1 of 3 in progress' }],
  };

  it('--timeout gives up with exit 1 and one line saying where the rollout stands (--until-done implied)', async () => {
    api.ed = { metadata: { generation: 1 }, status: progressing };
    expect(await run(['status', 'web', '--kubeconfig', api.kubeconfig, '--timeout', '300ms'])).toBe(1);
    expect(captured.err).toBe('error: ExtendedDeployment shop/web: not done after 0.3s (Progressing: group 1 of 3 in progress)\n');
  });

  it('--timeout does not cut short a rollout that is done; with -o yaml a YAML document per change', async () => {
    const healthy = { ...progressing, phase: 'Healthy', currentGroup: 3 };
    api.ed = { metadata: { generation: 1 }, status: healthy };
    expect(await run(['status', 'web', '--kubeconfig', api.kubeconfig, '--until-done', '--timeout', '5m', '-o', 'yaml'])).toBe(0);
    expect(captured.err).toBe('');
    expect(captured.out).toMatch(/^---\nobservedGeneration: 1\nphase: Healthy\n/);
    expect(parse(captured.out)).toEqual(healthy);
  });

  it('-o yaml prints the data of -o json', async () => {
    api.ed = { metadata: { generation: 1 }, status: progressing };
    expect(await run(['status', 'web', '--kubeconfig', api.kubeconfig, '-o', 'json'])).toBe(0);
    const json: unknown = JSON.parse(captured.out);
    captured.out = '';
    expect(await run(['status', 'web', '--kubeconfig', api.kubeconfig, '-o', 'yaml'])).toBe(0);
    expect(captured.out).toMatch(/^phase: Progressing$/m);
    expect(parse(captured.out)).toEqual(json);
    expect(json).toEqual(progressing);
  });
});
