import { describe, expect, it } from 'vitest';
import { APPROVED_ANNOTATION, PAUSED_ANNOTATION } from '../../core/labels.js';
import { statusText } from './status.js';

describe('statusText', () => {
  it('shows phase, group, controls, regions and conditions', () => {
    const text = statusText({
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
    });
    expect(text.split('\n')).toEqual([
      'ExtendedDeployment shop/web',
      'Phase:     Paused, group 2/3',
      'Revision:  R1',
      'Message:   paused by edctl pause in group 2',
      'Controls:  paused, approved through group 2',
      '',
      'REGION  DESIRED  CURRENT  UPDATED  READY  AVAILABLE  REVISION',
      'amd     3        3        2        3      3          abc',
      '',
      'CONDITION    STATUS  REASON  MESSAGE',
      'Progressing  True    Paused  paused by edctl pause in group 2',
      '',
    ]);
  });

  it('says when there is no status yet, and when the status is behind the spec', () => {
    expect(statusText({ metadata: { name: 'web', namespace: 'shop' } })).toBe('ExtendedDeployment shop/web\nNo status yet: is the agent running?\n');
    expect(statusText({ metadata: { name: 'web', namespace: 'shop', generation: 4 }, status: { phase: 'Healthy', observedGeneration: 3 } })).toContain(
      'the agent has not yet seen generation 4',
    );
  });

  it('shows an invalid spec', () => {
    const text = statusText({
      metadata: { name: 'bad', namespace: 'shop' },
      status: { conditions: [{ type: 'Valid', status: 'False', reason: 'InvalidSpec', message: 'spec.regions: integer replicas add up to 3' }] },
    });
    expect(text).toContain('Invalid:   spec.regions: integer replicas add up to 3');
  });
});
