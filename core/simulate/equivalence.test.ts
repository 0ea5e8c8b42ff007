// The fast paths of the plan simulation against the exact one, over strategies and region sizes:
// - cohorts (settled pods kept as counts, cohorts.ts) against every pod as an object: the same looks, one by one,
//   with the same actions (pod names, uids and resourceVersions included), Events and statuses;
// - collapse (runs of equal groups advanced in one jump, collapse.ts) against simulating every group: the same
//   groups, extremes, approvals, counts and final status.
// StatefulSet regions take neither fast path (settingOf, simulateRollout: the controller acts on every ordinal, and no
// two groups replace the same ones): there the defaults `edctl plan` runs with must be the exact simulation.
import { describe, expect, it } from 'vitest';
import { extendedDeployment } from '../api/extended-deployment.js';
import { simulateFrom } from './test-support.js';
import type { Simulation } from './simulate.js';

const IN_PLACE = { type: 'InPlaceIfPossible', gracePeriodSeconds: 1 };

function ed(strategy: Record<string, unknown>, sizes: readonly number[], subsetType = 'ReplicaSet') {
  return extendedDeployment.parse({
    apiVersion: 'extendeddeployment.io/v1beta1',
    kind: 'ExtendedDeployment',
    metadata: { name: 'web', namespace: 'shop' },
    spec: {
      subsetType,
      selector: { matchLabels: { app: 'web' } },
      template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'i' }] } },
      regions: sizes.map((replicas, i) => ({ name: `r${i}`, replicas })),
      strategy,
    },
  });
}

const STRATEGIES: readonly Record<string, unknown>[] = [
  { batchSize: 1 },
  { batchSize: 2 },
  { rolloutStrategy: 'Group', batchSize: 3 },
  { batchSize: '30%' },
  { batchSize: 1, upgradeMode: 'scaleInPriority' },
  { batchSize: 2, upgradeMode: 'scaleSimultaneously' },
  { batchSize: 1, updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } } },
  { batchSize: 2, updateStrategy: { type: 'RollingUpdate' } },
  { rolloutStrategy: 'Group', batchSize: 100, updateStrategy: { type: 'DeleteAllFirst' } },
  { batchSize: 1, regionOrder: 'Sequential', needWaitingForConfirm: true },
  { batchSize: 1, needWaitingForConfirm: true, needFirstConfirm: true, minReadySeconds: 0 },
  { batchSize: 1, updateStrategy: IN_PLACE },
  { batchSize: 2, upgradeMode: 'scaleInPriority', updateStrategy: IN_PLACE },
];
const SIZES: readonly (readonly number[])[] = [[7, 3], [20], [1, 0, 5]];

const cases = STRATEGIES.flatMap((strategy) => SIZES.map((sizes) => ({ name: `${JSON.stringify(strategy)} over ${JSON.stringify(sizes)}`, strategy, sizes })));

/** The strategies StatefulSet regions take (updateStrategy ReCreate only: validate.ts). */
const STATEFUL_STRATEGIES: readonly Record<string, unknown>[] = [
  { batchSize: 1 },
  { batchSize: 2 },
  { rolloutStrategy: 'Group', batchSize: 3 },
  { batchSize: '30%' },
  { batchSize: 1, regionOrder: 'Sequential', needWaitingForConfirm: true },
  { batchSize: 1, needWaitingForConfirm: true, needFirstConfirm: true, minReadySeconds: 0 },
];
const statefulCases = STATEFUL_STRATEGIES.flatMap((strategy) =>
  SIZES.map((sizes) => ({ name: `${JSON.stringify(strategy)} over ${JSON.stringify(sizes)}`, strategy, sizes })),
);

function simulate(strategy: Record<string, unknown>, sizes: readonly number[], options: Parameters<typeof simulateFrom>[3], subsetType?: string): Simulation {
  const inPlace = (strategy['updateStrategy'] as { type?: string } | undefined)?.type === 'InPlaceIfPossible';
  const start = sizes.map((n, i) => ({ name: `r${i}`, desired: n, targetRevision: 'new', running: { old: n }, ...(inPlace && { swappable: { c: 'i' } }) }));
  return simulateFrom(ed(strategy, sizes, subsetType), 'R1', start, options);
}

/** What a simulation shows, without what it cost. */
const outcome = (s: Simulation) => ({ ...s, looks: 0, trace: undefined, events: undefined });

describe('plan simulation: the fast paths are exact', () => {
  it.each(cases)('cohorts look by look: $name', ({ strategy, sizes }) => {
    const exact = simulate(strategy, sizes, { cohorts: false, minJump: 0, trace: true });
    const counted = simulate(strategy, sizes, { cohorts: true, minJump: 0, trace: true });
    expect(exact.finalStatus.phase).toBe('Healthy');
    expect(counted.trace).toEqual(exact.trace);
    expect({ ...counted, looks: 0, trace: undefined }).toEqual({ ...exact, looks: 0, trace: undefined });
  });

  it.each(cases)('collapsed runs of groups: $name', ({ strategy, sizes }) => {
    const every = simulate(strategy, sizes, { minJump: 0 });
    const collapsed = simulate(strategy, sizes, { minJump: 1 });
    expect(outcome(collapsed)).toEqual(outcome(every));
  });

  it('collapses where groups are alike: a region of 100 in batches of one jumps over most of its groups', () => {
    const every = simulate({ batchSize: 1 }, [100], { minJump: 0 });
    const collapsed = simulate({ batchSize: 1 }, [100], { minJump: 1 });
    expect(outcome(collapsed)).toEqual(outcome(every));
    expect(collapsed.looks).toBeLessThan(every.looks / 4);
  });

  it.each(statefulCases)('StatefulSet, the defaults are the exact simulation: $name', ({ strategy, sizes }) => {
    const exact = simulate(strategy, sizes, { cohorts: false, minJump: 0, trace: true }, 'StatefulSet');
    const defaults = simulate(strategy, sizes, { trace: true }, 'StatefulSet');
    expect(exact.finalStatus.phase).toBe('Healthy');
    expect(defaults).toEqual(exact);
  });

  it.each([[{}], [{ regionOrder: 'Parallel', batchSize: 2 }]])('compat mode, cohorts look by look: %j', (strategy) => {
    const exact = simulate(strategy, [5, 2], { cohorts: false, trace: true }, 'Deployment');
    const counted = simulate(strategy, [5, 2], { cohorts: true, trace: true }, 'Deployment');
    expect(counted.trace).toEqual(exact.trace);
  });
});
