import { describe, expect, it } from 'vitest';
import type { DrainRecord } from '../api/traffic.js';
import { decideDrain, type DrainInput } from './drain.js';

const T0 = Date.UTC(2026, 10, 28, 10);
const S = 1000;
const at = (ms: number) => new Date(ms).toISOString();

const input = (over: Partial<DrainInput>): DrainInput => ({
  revisions: ['old', 'new'],
  routeWeights: new Map([
    ['old', 0],
    ['new', 10000],
  ]),
  accepted: true,
  recorded: undefined,
  drainSeconds: 30,
  now: T0,
  ...over,
});

describe('decideDrain', () => {
  it.each<[string, Partial<DrainInput>, string, readonly DrainRecord[], boolean]>([
    ['weight 0 in an accepted route: the drain starts now, recorded first', {}, 'Draining', [{ revision: 'old', since: at(T0) }], true],
    ['weight 0 not yet accepted: nothing starts', { accepted: false }, 'Serving', [], false],
    [
      'weight 0, drain recorded 10 s ago: still draining',
      { recorded: [{ revision: 'old', since: at(T0 - 10 * S) }] },
      'Draining',
      [{ revision: 'old', since: at(T0 - 10 * S) }],
      false,
    ],
    [
      'weight 0, drain recorded 30 s ago: drained',
      { recorded: [{ revision: 'old', since: at(T0 - 30 * S) }] },
      'Drained',
      [{ revision: 'old', since: at(T0 - 30 * S) }],
      false,
    ],
    [
      'a later generation not accepted yet keeps a started drain (it has the weight at 0 too)',
      { accepted: false, recorded: [{ revision: 'old', since: at(T0 - 40 * S) }] },
      'Drained',
      [{ revision: 'old', since: at(T0 - 40 * S) }],
      false,
    ],
    [
      'weight back above 0 (a revert): the drain ends',
      {
        routeWeights: new Map([
          ['old', 5000],
          ['new', 5000],
        ]),
        recorded: [{ revision: 'old', since: at(T0 - 40 * S) }],
      },
      'Serving',
      [],
      true,
    ],
    ['no backendRef at all counts as weight 0', { routeWeights: new Map([['new', 10000]]) }, 'Draining', [{ revision: 'old', since: at(T0) }], true],
    ['no route: nothing starts', { routeWeights: undefined }, 'Serving', [], false],
    [
      'no route: a started drain goes on',
      { routeWeights: undefined, recorded: [{ revision: 'old', since: at(T0 - 5 * S) }] },
      'Draining',
      [{ revision: 'old', since: at(T0 - 5 * S) }],
      false,
    ],
    [
      'an unreadable recorded time starts the drain again rather than end it early',
      { recorded: [{ revision: 'old', since: 'yesterday' }] },
      'Draining',
      [{ revision: 'old', since: at(T0) }],
      true,
    ],
    ['drainSeconds 0: drained at once', { drainSeconds: 0 }, 'Drained', [{ revision: 'old', since: at(T0) }], true],
  ])('%s', (_, over, state, records, changed) => {
    const decision = decideDrain(input(over));
    expect(decision.revisions.find((r) => r.revision === 'old')?.state).toBe(state);
    expect(decision.revisions.find((r) => r.revision === 'new')?.state).toBe('Serving');
    expect(decision.records).toEqual(records);
    expect(decision.changed).toBe(changed);
    expect(decision.removable).toEqual(state === 'Drained' ? ['old'] : []);
  });

  it('wakes when a drain ends', () => {
    expect(decideDrain(input({ recorded: [{ revision: 'old', since: at(T0 - 10 * S) }] })).wakeAt).toEqual([T0 + 20 * S]);
    expect(decideDrain(input({ recorded: [{ revision: 'old', since: at(T0 - 30 * S) }] })).wakeAt).toEqual([]);
  });

  it('drops the records of revisions without pods', () => {
    const decision = decideDrain(input({ revisions: ['new'], recorded: [{ revision: 'old', since: at(T0 - 40 * S) }] }));
    expect(decision.records).toEqual([]);
    expect(decision.changed).toBe(true);
  });

  it('writes the records in revision order, so the same drains are the same status', () => {
    const recorded = [
      { revision: 'b', since: at(T0 - 5 * S) },
      { revision: 'a', since: at(T0 - 5 * S) },
    ];
    const decision = decideDrain(
      input({
        revisions: ['b', 'a', 'new'],
        routeWeights: new Map([['new', 10000]]),
        recorded,
      }),
    );
    expect(decision.records.map((r) => r.revision)).toEqual(['a', 'b']);
    expect(decision.changed).toBe(false);
  });
});
