import { describe, expect, it } from 'vitest';
import { formatProblem } from '../problems.js';
import { fleetWaves, waveOf } from './waves.js';

const object = { kind: 'ExtendedDeployment', name: 'web', namespace: 'shop' };
const members = ['canary-1', 'eu-1', 'us-1'];

describe('fleetWaves', () => {
  it('defaults to one wave per cluster, in spec.clusters order', () => {
    expect(fleetWaves({}, members, object)).toEqual({ ok: true, value: [['canary-1'], ['eu-1'], ['us-1']] });
  });

  it('takes the waves as written', () => {
    const waves = [['canary-1'], ['eu-1', 'us-1']];
    expect(fleetWaves({ waves, approveWaves: [1] }, members, object)).toEqual({ ok: true, value: waves });
    expect([...waveOf(waves)]).toEqual([
      ['canary-1', 0],
      ['eu-1', 1],
      ['us-1', 1],
    ]);
  });

  it.each([
    [
      'an entry that names no member',
      { waves: [['canary-1'], ['eu-1', 'us-1', 'ap-1']] },
      ['ExtendedDeployment shop/web: spec.strategy.fleet.waves[1][2]: "ap-1" is not a cluster of spec.clusters (clusters: canary-1, eu-1, us-1)'],
    ],
    [
      'a member in two waves',
      {
        waves: [
          ['canary-1', 'eu-1'],
          ['eu-1', 'us-1'],
        ],
      },
      ['ExtendedDeployment shop/web: spec.strategy.fleet.waves[1][0]: cluster "eu-1" is already in a wave (at spec.strategy.fleet.waves[0][1])'],
    ],
    [
      'a member in no wave',
      { waves: [['canary-1'], ['eu-1']] },
      ['ExtendedDeployment shop/web: spec.strategy.fleet.waves: leave out "us-1": every cluster of spec.clusters must be in exactly one wave'],
    ],
    [
      'an empty wave',
      { waves: [['canary-1'], [], ['eu-1', 'us-1']] },
      ['ExtendedDeployment shop/web: spec.strategy.fleet.waves[1]: is empty: every wave needs at least one cluster'],
    ],
    [
      'an approveWaves index past the last wave',
      { waves: [['canary-1'], ['eu-1', 'us-1']], approveWaves: [1, 2] },
      ['ExtendedDeployment shop/web: spec.strategy.fleet.approveWaves[1]: names wave 2, but the waves are 0 to 1'],
    ],
    [
      'an approveWaves index past the default waves',
      { approveWaves: [3] },
      ['ExtendedDeployment shop/web: spec.strategy.fleet.approveWaves[0]: names wave 3, but the waves are 0 to 2'],
    ],
  ])('reports %s', (_name, strategy, expected) => {
    const result = fleetWaves(strategy, members, object);
    expect(result.ok ? [] : result.problems.map(formatProblem)).toEqual(expected);
  });

  it('reports every problem at once', () => {
    const result = fleetWaves({ waves: [[], ['x'], ['eu-1', 'eu-1']], approveWaves: [7] }, members, object);
    expect(result.ok ? 0 : result.problems.length).toBe(5);
  });
});
