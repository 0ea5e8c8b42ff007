import { describe, expect, it } from 'vitest';
import { fleetTimeline, type MemberRollout, type Timeline } from './timeline.js';

const rolls = (cluster: string, seconds: number, more: Partial<MemberRollout> = {}): MemberRollout => ({
  cluster,
  gated: true,
  seconds,
  stops: false,
  ...more,
});

describe('fleetTimeline', () => {
  it.each<[string, readonly (readonly string[])[], readonly MemberRollout[], number, Timeline]>([
    [
      'wave 0 at once; the next wave once every earlier member has soaked, from its own completion',
      [['canary'], ['eu', 'us']],
      [rolls('canary', 10), rolls('eu', 30), rolls('us', 40)],
      600,
      {
        waves: [
          { wave: 0, after: [], start: 0 },
          { wave: 1, after: ['canary'], start: 610 },
        ],
        members: [
          { cluster: 'canary', start: 0, healthy: 10 },
          { cluster: 'eu', start: 610, healthy: 640 },
          { cluster: 'us', start: 610, healthy: 650 },
        ],
      },
    ],
    [
      'a wave waits for the slowest member of every earlier wave',
      [['a', 'b'], ['c'], ['d']],
      [rolls('a', 5), rolls('b', 20), rolls('c', 1), rolls('d', 1)],
      100,
      {
        waves: [
          { wave: 0, after: [], start: 0 },
          { wave: 1, after: ['a', 'b'], start: 120 },
          { wave: 2, after: ['a', 'b', 'c'], start: 221 },
        ],
        members: [
          { cluster: 'a', start: 0, healthy: 5 },
          { cluster: 'b', start: 0, healthy: 20 },
          { cluster: 'c', start: 120, healthy: 121 },
          { cluster: 'd', start: 221, healthy: 222 },
        ],
      },
    ],
    [
      'a member without groups is not held back: its counts apply at once, and its soak counts from then',
      [['canary'], ['eu']],
      [rolls('canary', 3, { gated: false }), rolls('eu', 2, { gated: false })],
      300,
      {
        waves: [
          { wave: 0, after: [], start: 0 },
          { wave: 1, after: ['canary'], start: 303 },
        ],
        members: [
          { cluster: 'canary', start: 0, healthy: 3 },
          { cluster: 'eu', start: 0, healthy: 2 },
        ],
      },
    ],
    [
      'a rollout that stops never completes: no later wave starts, and its members never do',
      [['canary'], ['eu'], ['us']],
      [rolls('canary', 10, { stops: true }), rolls('eu', 5), rolls('us', 5, { gated: false })],
      60,
      {
        waves: [
          { wave: 0, after: [], start: 0 },
          { wave: 1, after: ['canary'] },
          { wave: 2, after: ['canary', 'eu'] },
        ],
        members: [{ cluster: 'canary', start: 0 }, { cluster: 'eu' }, { cluster: 'us', start: 0, healthy: 5 }],
      },
    ],
    [
      'a member without a rollout takes no time',
      [['a'], ['b']],
      [rolls('b', 7)],
      0,
      {
        waves: [
          { wave: 0, after: [], start: 0 },
          { wave: 1, after: ['a'], start: 0 },
        ],
        members: [
          { cluster: 'a', start: 0, healthy: 0 },
          { cluster: 'b', start: 0, healthy: 7 },
        ],
      },
    ],
  ])('%s', (_, waves, rollouts, soak, expected) => {
    expect(fleetTimeline(waves, rollouts, soak)).toEqual(expected);
  });
});
