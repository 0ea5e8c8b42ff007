import { describe, expect, it } from 'vitest';
import type { ExtendedDeployment } from '../api/extended-deployment.js';
import type { RolloutAction } from './actions.js';
import { handOff, heldMessage, withHandOff } from './handoff.js';
import { planRollout, type RolloutInput } from './planner.js';
import type { PodState, RegionState } from './snapshot.js';
import { podState, webEd } from './test-support.js';

const T0 = Date.UTC(2026, 0, 1);
const LONG_AGO = T0 - 3_600_000;

let serial = 0;
/** `n` pods of `revision`: available, Ready but not yet available (`fresh`), or not Ready (`down`). */
function pods(n: number, kind: 'available' | 'fresh' | 'down' = 'available', revision = 'new'): PodState[] {
  return Array.from({ length: n }, () =>
    podState(`p${++serial}`, {
      revision,
      ready: kind !== 'down',
      readySince: kind === 'available' ? LONG_AGO : kind === 'fresh' ? T0 : undefined,
    }),
  );
}

const marked = (list: PodState[], markCost?: number) => list.map((p) => ({ ...p, markedOld: true, ...(markCost !== undefined && { markCost }) }));

function region(name: string, desired: number, podsOf: PodState[]): RegionState {
  return { name, desired, targetRevision: 'new', workload: { name: `web-${name}`, templateRevision: 'new', replicas: podsOf.length }, pods: podsOf };
}

const scale = (r: string, from: number, replicas: number): RolloutAction => ({ kind: 'scale', region: r, workload: `web-${r}`, from, replicas });
const written = (actions: readonly RolloutAction[]) => actions.flatMap((a) => (a.kind === 'scale' ? [`${a.region}:${a.from}->${a.replicas}`] : []));

const ed = (strategy: Record<string, unknown> = { minReadySeconds: 10 }) =>
  webEd(
    ['a', 'b', 'c'].map((name) => ({ name, replicas: 1 })),
    strategy,
  );
const scaleIn = ed({ minReadySeconds: 10, upgradeMode: 'scaleInPriority' });

describe('handOff: a region sheds available pods only as far as pods gained elsewhere are available', () => {
  it.each<[string, RegionState[], RolloutAction[], string[], number[]]>([
    [
      'c to 0 while a and b grow: nothing goes before their new pods are available',
      [region('a', 6, [...pods(4), ...pods(2, 'fresh')]), region('b', 6, [...pods(4), ...pods(2, 'down')]), region('c', 0, pods(4))],
      [scale('c', 4, 0)],
      [],
      [4],
    ],
    [
      'as many of c go as a and b have new pods available',
      [region('a', 6, [...pods(5), ...pods(1, 'fresh')]), region('b', 6, [...pods(5), ...pods(1, 'fresh')]), region('c', 0, pods(4))],
      [scale('c', 4, 0)],
      ['c:4->2'],
      [2],
    ],
    ['every new pod available: c goes to 0', [region('a', 6, pods(6)), region('b', 6, pods(6)), region('c', 0, pods(4))], [scale('c', 4, 0)], ['c:4->0'], []],
    [
      'the total shrinks: c sheds down to the new total at once',
      [region('a', 4, pods(4)), region('b', 4, pods(4)), region('c', 0, pods(4))],
      [scale('c', 4, 0)],
      ['c:4->0'],
      [],
    ],
    [
      'a failed region whose pods are not Ready sheds them freely: they serve nothing',
      [region('a', 6, pods(4)), region('b', 6, pods(4)), region('c', 0, pods(4, 'down'))],
      [scale('c', 4, 0)],
      ['c:4->0'],
      [],
    ],
    [
      'pods that are not Ready go first, available ones stay',
      [region('a', 6, pods(4)), region('b', 6, pods(4)), region('c', 0, [...pods(2), ...pods(2, 'down')])],
      [scale('c', 4, 0)],
      ['c:4->2'],
      [2],
    ],
    [
      'Ready pods still waiting out minReadySeconds go before available ones',
      [region('a', 6, pods(4)), region('b', 6, pods(4)), region('c', 0, [...pods(2), ...pods(2, 'fresh')])],
      [scale('c', 4, 0)],
      ['c:4->2'],
      [2],
    ],
    [
      'but marked pods (a lower pod-deletion-cost: a rollback leaves marks until they are cleared) go first: then nothing may go',
      [region('a', 6, pods(4)), region('b', 6, pods(4)), region('c', 0, [...marked(pods(2)), ...pods(2, 'fresh')])],
      [scale('c', 4, 0)],
      [],
      [2],
    ],
    [
      'marks of different costs (standing marks of two rollouts): the lower go first, available or not',
      [region('a', 6, pods(4)), region('b', 6, pods(4)), region('c', 0, [...marked(pods(2), -10), ...marked(pods(2, 'fresh'), -5)])],
      [scale('c', 4, 0)],
      [],
      [2],
    ],
    [
      'marks of one cost: those waiting out minReadySeconds go before available ones',
      [region('a', 6, pods(4)), region('b', 6, pods(4)), region('c', 0, [...marked(pods(2), -5), ...marked(pods(2, 'fresh'), -5), ...marked(pods(1), -1)])],
      [scale('c', 5, 0)],
      ['c:5->3'],
      [3],
    ],
    [
      'scale-ups are never held, even while a cut is',
      [region('a', 6, pods(4)), region('b', 6, pods(4)), region('c', 0, pods(4))],
      [scale('a', 4, 6), scale('b', 4, 6), scale('c', 4, 0)],
      ['a:4->6', 'b:4->6'],
      [4],
    ],
    [
      'what may be shed goes to the regions in declared order',
      [region('a', 1, pods(2)), region('b', 1, pods(2)), region('c', 2, [...pods(1), ...pods(1, 'fresh')])],
      [scale('a', 2, 1), scale('b', 2, 1)],
      ['a:2->1'],
      [1],
    ],
  ])('%s', (_, regions, actions, expected, waiting) => {
    const result = handOff(actions, regions, { ed: ed(), now: T0 });
    expect(written(result.actions)).toEqual(expected);
    expect(result.held.map((h) => h.waitingFor)).toEqual(waiting);
  });
});

describe("handOff: a rollout's own scale-downs are bounded by its budgets, not held", () => {
  it.each<[string, ExtendedDeployment, RegionState[], RolloutAction[], string[], number[]]>([
    [
      'old pods removed below the desired count (scaleInPriority) while another region is short',
      scaleIn,
      [region('a', 4, pods(4, 'available', 'old')), region('b', 4, [...pods(3), ...pods(1, 'down')])],
      [scale('a', 4, 3)],
      ['a:4->3'],
      [],
    ],
    [
      'a surge pod made ahead of an old one (scaleOutPriority): the old one goes once the new one is available',
      ed(),
      [region('a', 4, [...pods(4, 'available', 'old'), ...pods(1)]), region('b', 4, [...pods(4, 'available', 'old'), ...pods(1, 'fresh')])],
      [scale('a', 5, 4)],
      ['a:5->4'],
      [],
    ],
    [
      'also while another region has fewer pods available than desired (it is being created by groups that wait for this one)',
      ed(),
      [region('a', 4, [...pods(4, 'available', 'old'), ...pods(1)]), region('b', 4, pods(1))],
      [scale('a', 5, 4)],
      ['a:5->4'],
      [],
    ],
    [
      'old pods above a count lowered during the rollout: its budgets bound them (drain a region outside a rollout)',
      ed(),
      [region('a', 3, pods(4, 'available', 'old')), region('b', 5, [...pods(4), ...pods(1, 'fresh')])],
      [scale('a', 4, 3)],
      ['a:4->3'],
      [],
    ],
    [
      "what another region's rollout takes counts against what shedding may take",
      scaleIn,
      [region('a', 4, pods(4, 'available', 'old')), region('b', 5, pods(5)), region('c', 0, pods(1))],
      [scale('a', 4, 3), scale('c', 1, 0)],
      ['a:4->3'],
      [1],
    ],
  ])('%s', (_, strategy, regions, actions, expected, waiting) => {
    const result = handOff(actions, regions, { ed: strategy, now: T0 });
    expect(written(result.actions)).toEqual(expected);
    expect(result.held.map((h) => h.waitingFor)).toEqual(waiting);
  });
});

describe('withHandOff and planRollout', () => {
  const input = (regions: RegionState[]): RolloutInput => ({
    ed: ed(),
    generation: 2,
    rolloutRevision: 'R1',
    regions,
    status: { revision: 'R1', phase: 'Healthy', regions: regions.map((r) => ({ name: r.name, desired: 4 })) },
    controls: { paused: false, aborted: false, approvedThrough: undefined, resumedAt: undefined },
    now: T0,
  });

  it('planRollout holds the cut of a region set to 0 and says why in the Progressing condition', () => {
    const plan = planRollout(input([region('a', 6, pods(4)), region('b', 6, pods(4)), region('c', 0, pods(4))]));
    expect(written(plan.actions)).toEqual(['a:4->6', 'b:4->6']);
    const progressing = plan.status.conditions?.find((c) => c.type === 'Progressing');
    expect(progressing?.message).toContain('region c keeps 4 pods until 4 more are available in other regions (make-before-break)');
    expect(progressing?.message?.startsWith('regions are converging to their replica counts; ')).toBe(true);
  });

  it('planRollout lets the cut go once the pods gained elsewhere are available, and says nothing', () => {
    const plan = planRollout(input([region('a', 6, pods(6)), region('b', 6, pods(6)), region('c', 0, pods(4))]));
    expect(written(plan.actions)).toEqual(['c:4->0']);
    expect(plan.status.conditions?.find((c) => c.type === 'Progressing')?.message).not.toContain('make-before-break');
  });

  it('withHandOff leaves a plan without a held cut as it is', () => {
    const plan = planRollout(input([region('a', 4, pods(4)), region('b', 4, pods(4)), region('c', 4, pods(4))]));
    expect(withHandOff(plan, input([region('a', 4, pods(4)), region('b', 4, pods(4)), region('c', 4, pods(4))]))).toBe(plan);
  });

  it('heldMessage: one clause per held region', () => {
    expect(
      heldMessage([
        { region: 'c', wanted: 0, replicas: 2, waitingFor: 2 },
        { region: 'd', wanted: 1, replicas: 3, waitingFor: 1 },
      ]),
    ).toBe(
      'region c keeps 2 pods until 2 more are available in other regions (make-before-break); region d keeps 2 pods until 1 more are available in other regions (make-before-break)',
    );
  });
});
