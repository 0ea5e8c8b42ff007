import { describe, expect, it } from 'vitest';
import type { ExtendedDeploymentObject } from '../core/kube/objects.js';
import { PAUSED_ANNOTATION } from '../core/labels.js';
import { gateOf } from '../core/rollout/status-reading.js';
import { bar, colorEnabled, colors, outcomeOf, statusFrame, statusLine } from './status-view.js';

const ESC = '\u001b[';

function ed(status: Record<string, unknown>, metadata: Record<string, unknown> = {}): ExtendedDeploymentObject {
  return { metadata: { name: 'web', namespace: 'shop', generation: 2, ...metadata }, status: { observedGeneration: 2, ...status } };
}

const rolling = ed({
  phase: 'WaitingForConfirmation',
  revision: 'abc1234567',
  currentGroup: 1,
  totalGroups: 3,
  regions: [
    { name: 'amd', desired: 4, current: 4, updated: 1, ready: 4 },
    { name: 'arm64', desired: 2, current: 3, updated: 1, ready: 2 },
  ],
  moves: [{ from: 'arm64', to: 'amd', count: 1, reason: 'Shortage', since: '2026-01-01T00:00:00Z' }],
  conditions: [{ type: 'Progressing', status: 'True', reason: 'WaitingForConfirmation', message: 'group 1 done; approve group 2' }],
});

describe('colorEnabled', () => {
  it('colours a terminal unless NO_COLOR is set, never a pipe', () => {
    expect(colorEnabled({ isTTY: true }, {})).toBe(true);
    expect(colorEnabled({ isTTY: true }, { NO_COLOR: '1' })).toBe(false);
    expect(colorEnabled({ isTTY: true }, { NO_COLOR: '' })).toBe(true);
    expect(colorEnabled({ isTTY: false }, {})).toBe(false);
    expect(colorEnabled({}, {})).toBe(false);
  });
});

describe('bar', () => {
  it('shows new, old and missing pods against desired, or against the pods when a surge makes them more', () => {
    const plain = colors(false);
    expect(bar({ desired: 4, updated: 1, old: 2 }, plain, 8)).toBe('██▒▒▒▒··');
    expect(bar({ desired: 2, updated: 2, old: 1 }, plain, 6)).toBe('████▒▒');
    expect(bar({ desired: 0, updated: 0, old: 0 }, plain, 4)).toBe('····');
  });
});

describe('gateOf and outcomeOf', () => {
  it('names the gate, an abort included', () => {
    expect(gateOf({ phase: 'WaitingForConfirmation' })).toBe('WaitingForConfirmation');
    expect(gateOf({ phase: 'Paused', conditions: [{ type: 'Progressing', status: 'True', reason: 'Aborted' }] })).toBe('Aborted');
    expect(gateOf({ phase: 'Progressing' })).toBeUndefined();
  });

  it('is done when Healthy for the current generation, failed when Degraded or invalid', () => {
    expect(outcomeOf(ed({ phase: 'Healthy' }))).toEqual({ done: 'healthy' });
    expect(outcomeOf(ed({ phase: 'Healthy', observedGeneration: 1 }))).toBeUndefined();
    expect(
      outcomeOf(
        ed({
          phase: 'Degraded',
          revision: 'r',
          currentGroup: 2,
          conditions: [{ type: 'Progressing', status: 'False', reason: 'ProgressDeadlineExceeded', message: 'group 2 took longer than 60 s' }],
        }),
      ),
    ).toEqual({
      done: 'failed',
      why: 'rollout r is Degraded in group 2: group 2 took longer than 60 s',
    });
    expect(outcomeOf(ed({ conditions: [{ type: 'Valid', status: 'False', reason: 'InvalidSpec', message: 'bad' }] }))).toEqual({
      done: 'failed',
      why: 'invalid spec: bad',
    });
    expect(outcomeOf(rolling)).toBeUndefined();
  });
});

describe('statusLine', () => {
  it('is one plain line with the group, gate, pods per region and moves', () => {
    expect(statusLine(rolling)).toBe(
      'shop/web: rollout abc1234567 group 1/3 WaitingForConfirmation; amd new 1/4 old 3 ready 4; arm64 new 1/2 old 2 ready 2; moves arm64->amd 1 (Shortage)',
    );
    expect(statusLine(ed({}, { generation: 1 }))).toBe('shop/web: no status yet');
    expect(statusLine(rolling)).not.toContain(ESC);
  });
});

describe('moves in the status views', () => {
  const moving = ed({
    phase: 'Healthy',
    regions: [{ name: 'amd', desired: 5, updated: 5, current: 5, ready: 5 }],
    moves: [{ from: 'arm64', to: 'amd', count: 1, returning: 1, reason: 'Fault', since: '2026-01-01T00:00:00Z' }],
    conditions: [{ type: 'Moves', status: 'True', reason: 'NoRoom', message: 'region arm64 failed; no other region has room for 1 replica' }],
  });

  it('shows replicas on their way back and why a move is blocked', () => {
    expect(statusLine(moving)).toContain(
      'moves arm64->amd 1 (+1 returning) (Fault); moves blocked: region arm64 failed; no other region has room for 1 replica',
    );
    const frame = statusFrame(moving, { colors: colors(false), bin: 'edctl' }).split('\n');
    expect(frame).toContain('  moved 1 (+1 returning) from arm64 to amd (Fault since 2026-01-01T00:00:00Z)');
    expect(frame).toContain('  moves blocked: region arm64 failed; no other region has room for 1 replica');
  });

  it('says nothing about moves when none are blocked', () => {
    const fine = ed({ phase: 'Healthy', conditions: [{ type: 'Moves', status: 'False', reason: 'NoMoves', message: 'every region runs its own replicas' }] });
    expect(statusLine(fine)).not.toContain('moves');
  });
});

describe('statusFrame', () => {
  it('draws a bar per region, the moves and the next step at a gate, without escape codes when colour is off', () => {
    const frame = statusFrame(rolling, { colors: colors(false), bin: 'kubectl ed' });
    expect(frame.split('\n')).toEqual([
      'ExtendedDeployment shop/web  rollout abc1234567  group 1/3  WaitingForConfirmation',
      '  amd    ██████▒▒▒▒▒▒▒▒▒▒▒▒▒▒▒▒▒▒  new 1/4  old 3  ready 4/4',
      '  arm64  ████████▒▒▒▒▒▒▒▒▒▒▒▒▒▒▒▒  new 1/2  old 2  ready 2/2',
      '  moved 1 from arm64 to amd (Shortage since 2026-01-01T00:00:00Z)',
      '  group 1 done; approve group 2',
      '  next: kubectl ed approve web -n shop',
      '',
    ]);
  });

  it('colours the phase and the bars when colour is on', () => {
    const frame = statusFrame(rolling, { colors: colors(true), bin: 'edctl' });
    expect(frame).toContain(`${ESC}33mWaitingForConfirmation`);
    expect(frame).toContain(`${ESC}32m██████`);
    expect(statusFrame(ed({ phase: 'Healthy' }), { colors: colors(true), bin: 'edctl' })).toContain(`${ESC}32mHealthy`);
  });

  it('suggests resume after edctl pause or abort, but not for a pause from Git', () => {
    const paused = { phase: 'Paused', conditions: [{ type: 'Progressing', status: 'True', reason: 'Paused' }] };
    expect(statusFrame(ed(paused, { annotations: { [PAUSED_ANNOTATION]: 'true' } }), { colors: colors(false), bin: 'edctl' })).toContain(
      'next: edctl resume web -n shop',
    );
    expect(statusFrame(ed(paused), { colors: colors(false), bin: 'edctl' })).not.toContain('next:');
    expect(statusFrame(ed({}, { generation: 1 }), { colors: colors(false), bin: 'edctl' })).toContain('no status yet');
  });
});
