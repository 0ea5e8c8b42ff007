import { describe, expect, it } from 'vitest';
import { rolloutStrategy } from '../api/extended-deployment.js';
import { regionBudgets, type Budgets } from './budgets.js';

const rolling = (maxSurge: number | string, maxUnavailable: number | string) => ({
  updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge, maxUnavailable } },
});
const recreate = (upgradeMode: string, batchSize: number | string) => ({ upgradeMode, batchSize, updateStrategy: { type: 'ReCreate' } });

describe('regionBudgets', () => {
  const rows: readonly { name: string; strategy: Record<string, unknown>; desired: number; want: Budgets }[] = [
    // RollingUpdate: the Deployment controller's rounding, surge up and unavailable down.
    {
      name: 'RollingUpdate 25%/25% of 4: one each way',
      strategy: rolling('25%', '25%'),
      desired: 4,
      want: { maxSurge: 1, maxUnavailable: 1, replaceDirectly: false },
    },
    {
      name: 'RollingUpdate 25%/25% of 10: surge rounds up, unavailable down',
      strategy: rolling('25%', '25%'),
      desired: 10,
      want: { maxSurge: 3, maxUnavailable: 2, replaceDirectly: false },
    },
    {
      name: 'RollingUpdate 25%/25% of 1: unavailable rounds down to 0',
      strategy: rolling('25%', '25%'),
      desired: 1,
      want: { maxSurge: 1, maxUnavailable: 0, replaceDirectly: false },
    },
    {
      name: 'RollingUpdate defaults when rollingUpdate is omitted: 25%/25%',
      strategy: { updateStrategy: { type: 'RollingUpdate' } },
      desired: 8,
      want: { maxSurge: 2, maxUnavailable: 2, replaceDirectly: false },
    },
    { name: 'RollingUpdate 100%/100% of 3', strategy: rolling('100%', '100%'), desired: 3, want: { maxSurge: 3, maxUnavailable: 3, replaceDirectly: false } },
    {
      name: 'RollingUpdate integers are taken as they are, even above desired',
      strategy: rolling(5, 2),
      desired: 2,
      want: { maxSurge: 5, maxUnavailable: 2, replaceDirectly: false },
    },
    {
      name: 'RollingUpdate maxSurge 0: replaces within maxUnavailable',
      strategy: rolling(0, 2),
      desired: 4,
      want: { maxSurge: 0, maxUnavailable: 2, replaceDirectly: false },
    },
    {
      name: 'RollingUpdate maxUnavailable 0: surges only',
      strategy: rolling(1, 0),
      desired: 4,
      want: { maxSurge: 1, maxUnavailable: 0, replaceDirectly: false },
    },
    {
      name: 'RollingUpdate both 0: unavailable becomes 1 so the rollout can move',
      strategy: rolling(0, 0),
      desired: 4,
      want: { maxSurge: 0, maxUnavailable: 1, replaceDirectly: false },
    },
    {
      name: 'RollingUpdate percentages both rounding to 0: unavailable becomes 1',
      strategy: rolling('0%', '10%'),
      desired: 5,
      want: { maxSurge: 0, maxUnavailable: 1, replaceDirectly: false },
    },
    {
      name: 'RollingUpdate desired 0: both 0, so unavailable 1',
      strategy: rolling('25%', '25%'),
      desired: 0,
      want: { maxSurge: 0, maxUnavailable: 1, replaceDirectly: false },
    },
    // DeleteAllFirst: every old pod may go at once.
    {
      name: 'DeleteAllFirst: no surge, the whole region unavailable',
      strategy: { updateStrategy: { type: 'DeleteAllFirst' } },
      desired: 4,
      want: { maxSurge: 0, maxUnavailable: 4, replaceDirectly: false },
    },
    {
      name: 'DeleteAllFirst desired 0: nothing either way',
      strategy: { updateStrategy: { type: 'DeleteAllFirst' } },
      desired: 0,
      want: { maxSurge: 0, maxUnavailable: 0, replaceDirectly: false },
    },
    // ReCreate: the upgrade mode with the group's batch.
    {
      name: 'ReCreate scaleOutPriority: add a batch first, never below desired',
      strategy: recreate('scaleOutPriority', 2),
      desired: 5,
      want: { maxSurge: 2, maxUnavailable: 0, replaceDirectly: false },
    },
    {
      name: 'ReCreate scaleInPriority: remove a batch first, never above desired',
      strategy: recreate('scaleInPriority', 2),
      desired: 5,
      want: { maxSurge: 0, maxUnavailable: 2, replaceDirectly: false },
    },
    {
      name: 'ReCreate scaleSimultaneously: both, by deleting old pods directly',
      strategy: recreate('scaleSimultaneously', 2),
      desired: 5,
      want: { maxSurge: 2, maxUnavailable: 2, replaceDirectly: true },
    },
    {
      name: 'ReCreate batch 50% of 5 rounds up to 3',
      strategy: recreate('scaleOutPriority', '50%'),
      desired: 5,
      want: { maxSurge: 3, maxUnavailable: 0, replaceDirectly: false },
    },
    {
      name: 'ReCreate batch 10% of 3 is at least 1',
      strategy: recreate('scaleInPriority', '10%'),
      desired: 3,
      want: { maxSurge: 0, maxUnavailable: 1, replaceDirectly: false },
    },
    {
      name: 'ReCreate batch 0 is at least 1',
      strategy: recreate('scaleOutPriority', 0),
      desired: 3,
      want: { maxSurge: 1, maxUnavailable: 0, replaceDirectly: false },
    },
    {
      name: 'ReCreate desired 0: the batch is still 1',
      strategy: recreate('scaleSimultaneously', '50%'),
      desired: 0,
      want: { maxSurge: 1, maxUnavailable: 1, replaceDirectly: true },
    },
    {
      name: 'ReCreate defaults: scaleOutPriority, batch 1',
      strategy: { updateStrategy: { type: 'ReCreate' } },
      desired: 3,
      want: { maxSurge: 1, maxUnavailable: 0, replaceDirectly: false },
    },
    // InPlaceIfPossible: replacement (for pods no swap reaches) follows the upgrade mode, as ReCreate does.
    {
      name: 'InPlaceIfPossible follows the upgrade mode',
      strategy: { upgradeMode: 'scaleInPriority', batchSize: 3, updateStrategy: { type: 'InPlaceIfPossible' } },
      desired: 6,
      want: { maxSurge: 0, maxUnavailable: 3, replaceDirectly: false },
    },
  ];

  it.each(rows)('$name', ({ strategy, desired, want }) => {
    expect(regionBudgets(rolloutStrategy.parse(strategy), desired)).toEqual(want);
  });
});
