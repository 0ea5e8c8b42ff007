import { describe, expect, it } from 'vitest';
import type { ExtendedDeploymentObject } from '../core/kube/objects.js';
import { PAUSED_ANNOTATION } from '../core/labels.js';
import { gateOf } from '../core/rollout/status-reading.js';
import { rolloutReading } from '../core/rollout/status-reading.js';
import {
  analysisWords,
  bar,
  colorEnabled,
  colors,
  nextStep,
  outcomeOf,
  regionViews,
  regionWords,
  statusFrame,
  statusLine,
  trafficWords,
} from './status-view.js';

const ESC = '\u001b[';
const NOW = Date.UTC(2026, 0, 1, 12);
const plain = { colors: colors(false), bin: 'edctl', now: NOW };

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
  it('is one plain line with the group, gate, pods per region, moves, why it waits and the next step', () => {
    expect(statusLine(rolling, plain)).toBe(
      'shop/web: rollout abc1234567 group 1/3 WaitingForConfirmation; amd desired 4 new 1 old 3 ready 4 available 0; arm64 desired 2 new 1 old 2 ready 2 available 0; moves arm64->amd 1 (Shortage); group 1 done; approve group 2; next: edctl approve web -n shop',
    );
    expect(statusLine(ed({}, { generation: 1 }), plain)).toBe('shop/web: no status yet');
    expect(statusLine(rolling, plain)).not.toContain(ESC);
  });

  it('says nothing more than the counts while the rollout goes on by itself', () => {
    const progressing = ed({
      phase: 'Progressing',
      currentGroup: 1,
      totalGroups: 2,
      regions: [{ name: 'amd', desired: 2, current: 2, updated: 1, ready: 2, available: 2 }],
      conditions: [{ type: 'Progressing', status: 'True', reason: 'GroupProgressing', message: 'group 1 of 2 in progress' }],
    });
    expect(statusLine(progressing, plain)).toBe('shop/web: group 1/2 Progressing; amd desired 2 new 1 old 1 ready 2 available 2');
  });
});

describe('regionViews and regionWords', () => {
  const at = (seconds: number) => new Date(NOW + seconds * 1000).toISOString();
  const region = (extra: Record<string, unknown>) => ({ name: 'amd', desired: 4, current: 6, updated: 2, ready: 6, available: 5, ...extra });
  it.each<[string, Record<string, unknown>, string]>([
    ['a surge: more pods than desired, each number named', {}, 'desired 4 new 2 old 4 ready 6 available 5'],
    ['Ready pods waiting out minReadySeconds: how long the last waits', { availableAt: at(11.2) }, 'desired 4 new 2 old 4 ready 6 available 5 (1 more in 12s)'],
    ['the wait is over but the agent has not counted them yet', { availableAt: at(-3) }, 'desired 4 new 2 old 4 ready 6 available 5 (1 more due now)'],
    ['no countdown once every Ready pod is available', { available: 6, availableAt: at(10) }, 'desired 4 new 2 old 4 ready 6 available 6'],
    ['in-place swaps under way', { swapping: 2 }, 'desired 4 new 2 old 4 ready 6 available 5 swapping 2'],
  ])('%s', (_, extra, words) => {
    const [view] = regionViews({ regions: [region(extra)] }, NOW);
    expect(view && regionWords(view).join(' ')).toBe(words);
  });
});

describe('nextStep', () => {
  const progressing = (reason: string, message = '') => [{ type: 'Progressing', status: 'True', reason, message }];
  const step = (status: Record<string, unknown>, metadata: Record<string, unknown> = {}, spec?: unknown) => {
    const object = { ...ed(status, metadata), ...(spec !== undefined && { spec }) };
    return nextStep(object, rolloutReading(object), 'kubectl ed');
  };
  it.each<[string, string | undefined, ...Parameters<typeof step>]>([
    ['approve at a gate', 'kubectl ed approve web -n shop', { phase: 'WaitingForConfirmation' }],
    [
      'resume after edctl pause',
      'kubectl ed resume web -n shop',
      { phase: 'Paused', conditions: progressing('Paused') },
      { annotations: { [PAUSED_ANNOTATION]: 'true' } },
    ],
    [
      'change Git after a pause from Git',
      'set strategy.pause to false in Git',
      { phase: 'Paused', conditions: progressing('Paused') },
      {},
      { strategy: { pause: true } },
    ],
    [
      'both when both pause',
      'kubectl ed resume web -n shop, and set strategy.pause to false in Git',
      { phase: 'Paused', conditions: progressing('Paused') },
      { annotations: { [PAUSED_ANNOTATION]: 'true' } },
      { strategy: { pause: true } },
    ],
    ['nothing when the cause of a pause is unknown', undefined, { phase: 'Paused', conditions: progressing('Paused') }],
    [
      'resume or change Git after an abort',
      'kubectl ed resume web -n shop, or change Git (a new revision starts a new rollout)',
      { phase: 'Paused', conditions: progressing('Aborted') },
    ],
    [
      'fix and push, or retry, after a missed deadline',
      'fix the cause in Git and push (a new revision starts a new rollout), or kubectl ed resume web -n shop to retry the group',
      { phase: 'Degraded', conditions: [{ type: 'Progressing', status: 'False', reason: 'ProgressDeadlineExceeded' }] },
    ],
    [
      'fix an invalid spec',
      'fix the fields named above in Git (kubectl ed validate shows every problem), then let Argo CD or Flux sync',
      { conditions: [{ type: 'Valid', status: 'False', reason: 'InvalidSpec', message: 'spec.replicas: must not be negative' }] },
    ],
    [
      'look at the sync while the workloads lag behind',
      'check the sync in Argo CD or Flux: every regional workload must carry the rendered revision',
      { phase: 'Progressing', conditions: progressing('WaitingForSync') },
    ],
    ['nothing while the rollout goes on', undefined, { phase: 'Progressing', conditions: progressing('GroupProgressing') }],
    ['nothing once Healthy', undefined, { phase: 'Healthy' }],
    ['nothing for a status of an older spec', undefined, { phase: 'WaitingForConfirmation', observedGeneration: 1 }],
  ])('%s', (_, expected, ...args) => {
    expect(step(...args)).toBe(expected);
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
    expect(statusLine(moving, plain)).toContain(
      'moves arm64->amd 1 (+1 returning) (Fault); moves blocked: region arm64 failed; no other region has room for 1 replica',
    );
    const frame = statusFrame(moving, plain).split('\n');
    expect(frame).toContain('  moved 1 (+1 returning) from arm64 to amd (Fault since 2026-01-01T00:00:00Z)');
    expect(frame).toContain('  moves blocked: region arm64 failed; no other region has room for 1 replica');
  });

  it('says nothing about moves when none are blocked', () => {
    const fine = ed({ phase: 'Healthy', conditions: [{ type: 'Moves', status: 'False', reason: 'NoMoves', message: 'every region runs its own replicas' }] });
    expect(statusLine(fine, plain)).not.toContain('moves');
  });
});

describe('traffic and analysis in the status views', () => {
  const shifting = ed({
    phase: 'Progressing',
    currentGroup: 1,
    totalGroups: 3,
    traffic: {
      revision: 'R1',
      group: 1,
      weights: [
        { revision: 'new', weight: 2500 },
        { revision: 'old', weight: 7500 },
      ],
      appliedGeneration: 3,
    },
    analysis: {
      revision: 'R1',
      group: 1,
      outcome: 'Running',
      metrics: [
        {
          name: 'error-rate',
          outcome: 'Running',
          consecutiveSuccesses: 1,
          failures: 0,
          errors: 0,
          consecutiveErrors: 0,
          consecutiveNoData: 0,
          samples: [{ time: '2026-01-01T11:59:30.000Z', query: 'q', value: 0.01, verdict: 'Success' }],
        },
      ],
    },
  });

  it('shows the live weights and each metric with its last sample, in every view', () => {
    const weights = 'weights new 25%, old 75% (route generation 3 accepted)';
    const analysis = 'analysis of group 1: Running; error-rate 1 in a row, last 0.01 Success at 11:59:30Z';
    const status = shifting.status as Parameters<typeof trafficWords>[0];
    expect(trafficWords(status)).toBe(weights);
    expect(analysisWords(status)).toBe(analysis);
    expect(statusLine(shifting, plain)).toContain(`${weights}; ${analysis}`);
    expect(statusFrame(shifting, plain).split('\n')).toEqual(expect.arrayContaining([`  traffic ${weights}`, `  ${analysis}`]));
  });

  it('a weight not yet accepted, a shift back and a drain say so; a status without traffic shows none', () => {
    const held = {
      traffic: { weights: [{ revision: 'new', weight: 0 }], shiftedBack: true, message: 'writing the route', draining: [{ revision: 'old', since: 'T' }] },
    };
    expect(trafficWords(held as Parameters<typeof trafficWords>[0])).toBe('weights new 0% (writing the route; shifted back; old draining since T)');
    expect(trafficWords({})).toBeUndefined();
    expect(analysisWords({})).toBeUndefined();
  });
});

describe('statusFrame', () => {
  it('draws a bar per region, the moves and the next step at a gate, without escape codes when colour is off', () => {
    const frame = statusFrame(rolling, { ...plain, bin: 'kubectl ed' });
    expect(frame.split('\n')).toEqual([
      'ExtendedDeployment shop/web  rollout abc1234567  group 1/3  WaitingForConfirmation',
      '  amd    ██████▒▒▒▒▒▒▒▒▒▒▒▒▒▒▒▒▒▒  desired 4  new 1  old 3  ready 4  available 0',
      '  arm64  ████████▒▒▒▒▒▒▒▒▒▒▒▒▒▒▒▒  desired 2  new 1  old 2  ready 2  available 0',
      '  moved 1 from arm64 to amd (Shortage since 2026-01-01T00:00:00Z)',
      '  group 1 done; approve group 2',
      '  next: kubectl ed approve web -n shop',
      '',
    ]);
  });

  it('colours the phase and the bars when colour is on', () => {
    const frame = statusFrame(rolling, { ...plain, colors: colors(true) });
    expect(frame).toContain(`${ESC}33mWaitingForConfirmation`);
    expect(frame).toContain(`${ESC}32m██████`);
    expect(statusFrame(ed({ phase: 'Healthy' }), { ...plain, colors: colors(true) })).toContain(`${ESC}32mHealthy`);
  });

  it('aligns the counts of the regions, with the countdown and the swaps at the end', () => {
    const frame = statusFrame(
      ed({
        phase: 'Progressing',
        regions: [
          { name: 'amd64', desired: 12, current: 13, updated: 6, ready: 13, available: 11, availableAt: new Date(NOW + 4000).toISOString() },
          { name: 'arm', desired: 2, current: 2, updated: 1, ready: 1, available: 1, swapping: 1 },
        ],
      }),
      plain,
    );
    expect(frame.split('\n').slice(1, 3)).toEqual([
      '  amd64  ███████████▒▒▒▒▒▒▒▒▒▒▒▒▒  desired 12  new  6  old  7  ready 13  available 11 (2 more in 4s)',
      '  arm    ████████████▒▒▒▒▒▒▒▒▒▒▒▒  desired  2  new  1  old  1  ready  1  available  1  swapping 1',
    ]);
  });

  it('shows in red why a rollout is Degraded (the pods that hold it) and what to do', () => {
    const message =
      'group 2 did not finish within 300s; the rollout stopped; not Ready: web-amd64-abc: CrashLoopBackOff (back-off 5m0s restarting failed container)';
    const degraded = ed({ phase: 'Degraded', conditions: [{ type: 'Progressing', status: 'False', reason: 'ProgressDeadlineExceeded', message }] });
    const lines = statusFrame(degraded, plain).split('\n');
    expect(lines.slice(1, 3)).toEqual([
      `  ${message}`,
      '  next: fix the cause in Git and push (a new revision starts a new rollout), or edctl resume web -n shop to retry the group',
    ]);
    expect(statusFrame(degraded, { ...plain, colors: colors(true) })).toContain(`${ESC}31m${message}`);
    expect(statusLine(degraded, plain)).toContain(`; ${message}; next: fix the cause`);
    // A stuck region's forced exit: the message names its counts, and the next step points to them.
    const exit = `${message}; to keep what runs Ready instead (forced exit), set in Git: region amd64 replicas 12 partition 6`;
    const forced = ed({ phase: 'Degraded', conditions: [{ type: 'Progressing', status: 'False', reason: 'ProgressDeadlineExceeded', message: exit }] });
    expect(statusFrame(forced, plain).split('\n').slice(1, 3)).toEqual([
      `  ${exit}`,
      '  next: fix the cause in Git and push (a new revision starts a new rollout), set the counts named above in Git to keep what runs Ready, or edctl resume web -n shop to retry the group',
    ]);
  });

  it('suggests resume after edctl pause or abort, but not for a pause from Git', () => {
    const paused = { phase: 'Paused', conditions: [{ type: 'Progressing', status: 'True', reason: 'Paused' }] };
    expect(statusFrame(ed(paused, { annotations: { [PAUSED_ANNOTATION]: 'true' } }), plain)).toContain('next: edctl resume web -n shop');
    expect(statusFrame(ed(paused), plain)).not.toContain('next: edctl resume');
    expect(statusFrame(ed({}, { generation: 1 }), plain)).toContain('no status yet');
  });
});
