import { describe, expect, it } from 'vitest';
import { ABORTED_ANNOTATION, APPROVED_ANNOTATION, PAUSED_ANNOTATION, RESUMED_AT_ANNOTATION } from '../labels.js';
import { approvalValue, controlTarget, parseApproval, parseControls, parseTime, resumeAnnotations } from './controls.js';

describe('parseControls', () => {
  it('reads no annotations as no controls', () => {
    expect(parseControls(undefined, 'r1')).toEqual({ paused: false, aborted: false, approvedThrough: undefined, resumedAt: undefined });
    expect(parseControls({}, 'r1')).toEqual({ paused: false, aborted: false, approvedThrough: undefined, resumedAt: undefined });
  });

  it('reads every control of the current rollout', () => {
    const controls = parseControls(
      {
        [PAUSED_ANNOTATION]: 'true',
        [ABORTED_ANNOTATION]: 'r1',
        [APPROVED_ANNOTATION]: 'r1/3',
        [RESUMED_AT_ANNOTATION]: '2026-01-01T10:00:00Z',
      },
      'r1',
    );
    expect(controls).toEqual({ paused: true, aborted: true, approvedThrough: 3, resumedAt: Date.UTC(2026, 0, 1, 10) });
  });

  it('pauses only on exactly "true"', () => {
    expect(parseControls({ [PAUSED_ANNOTATION]: 'false' }, 'r1').paused).toBe(false);
    expect(parseControls({ [PAUSED_ANNOTATION]: 'yes' }, 'r1').paused).toBe(false);
    expect(parseControls({ [PAUSED_ANNOTATION]: '' }, 'r1').paused).toBe(false);
  });

  it('ignores abort and approval given for another rollout', () => {
    const controls = parseControls({ [ABORTED_ANNOTATION]: 'r0', [APPROVED_ANNOTATION]: 'r0/5' }, 'r1');
    expect(controls.aborted).toBe(false);
    expect(controls.approvedThrough).toBeUndefined();
  });
});

describe('resumeAnnotations', () => {
  const at = Date.UTC(2026, 11, 1, 12);
  it('clears a pause and an abort by value, never by removal, and records when', () => {
    const paused = { [PAUSED_ANNOTATION]: 'true', [ABORTED_ANNOTATION]: 'r1@2026-12-01T11:00:00.000Z', [APPROVED_ANNOTATION]: 'r1/2' };
    const written = resumeAnnotations(paused, at);
    expect(written).toEqual({ [PAUSED_ANNOTATION]: 'false', [ABORTED_ANNOTATION]: '', [RESUMED_AT_ANNOTATION]: '2026-12-01T12:00:00.000Z' });
    // What the agent reads after the merge patch: neither paused nor aborted, resumed then.
    const after = parseControls({ ...paused, ...written }, 'r1', '2026-12-01T11:00:00.000Z');
    expect(after).toEqual({ paused: false, aborted: false, approvedThrough: 2, resumedAt: at });
  });

  it('writes only the time on an ExtendedDeployment that was neither paused nor aborted', () => {
    expect(resumeAnnotations(undefined, at)).toEqual({ [RESUMED_AT_ANNOTATION]: '2026-12-01T12:00:00.000Z' });
  });
});

describe('parseApproval', () => {
  const is = (want: string) => (rollout: string) => rollout === want;
  it('splits at the last slash', () => {
    expect(parseApproval('abc/2', is('abc'))).toBe(2);
    expect(parseApproval('a/b/7', is('a/b'))).toBe(7);
    expect(parseApproval(approvalValue('abc', 4), is('abc'))).toBe(4);
  });

  it('rejects malformed values', () => {
    for (const value of ['abc', 'abc/', '/2', 'abc/-1', 'abc/1.5', 'abc/x', 'abc/ 2', '']) expect(parseApproval(value, is('abc')), value).toBeUndefined();
  });

  it('accepts group 0', () => {
    expect(parseApproval('abc/0', is('abc'))).toBe(0);
  });
});

describe('controls name the rollout and its start: an earlier rollout of the same revision is another rollout', () => {
  const T1 = '2026-01-01T10:00:00.000Z';
  const T2 = '2026-01-02T10:00:00.000Z';
  it('edctl names the rollout under way with its start', () => {
    expect(controlTarget({ revision: 'r1', rolloutStartTime: T1 })).toBe(`r1@${T1}`);
    expect(controlTarget({ revision: 'r1' })).toBe('r1');
    expect(controlTarget({})).toBeUndefined();
  });

  it.each<[string, Record<string, string>, string | undefined, boolean, number | undefined]>([
    ['this rollout', { [ABORTED_ANNOTATION]: `r1@${T2}`, [APPROVED_ANNOTATION]: `r1@${T2}/3` }, T2, true, 3],
    ['an earlier rollout of r1 (a revert since)', { [ABORTED_ANNOTATION]: `r1@${T1}`, [APPROVED_ANNOTATION]: `r1@${T1}/3` }, T2, false, undefined],
    ['a rollout the status does not record yet', { [ABORTED_ANNOTATION]: `r1@${T1}`, [APPROVED_ANNOTATION]: `r1@${T1}/3` }, undefined, false, undefined],
    ['a value an earlier edctl wrote (the key alone)', { [ABORTED_ANNOTATION]: 'r1', [APPROVED_ANNOTATION]: 'r1/2' }, T2, true, 2],
  ])('%s', (_, annotations, started, aborted, approvedThrough) => {
    expect(parseControls(annotations, 'r1', started)).toMatchObject({ aborted, approvedThrough });
  });
});

describe('parseTime', () => {
  it('parses RFC 3339 with offsets and fractions', () => {
    expect(parseTime('2026-01-01T10:00:00.500+02:00')).toBe(Date.UTC(2026, 0, 1, 8, 0, 0, 500));
  });

  it('treats garbage as absent', () => {
    for (const value of [undefined, '', 'now', '1700000000', '2026-13-45T99:00:00Z']) expect(parseTime(value), String(value)).toBeUndefined();
  });
});
