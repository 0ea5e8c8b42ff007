import { describe, expect, it } from 'vitest';
import { baseSpec, renderWeb } from './change-test-support.js';
import type { FieldChange } from './field-changes.js';
import { specChanges } from './spec-changes.js';

const changes = (before: Record<string, unknown>, after: Record<string, unknown>): FieldChange[] => specChanges(renderWeb(before), renderWeb(after));

const [a, b] = baseSpec.regions;

describe('specChanges', () => {
  it.each<[string, Record<string, unknown>, Record<string, unknown>, FieldChange[]]>([
    [
      'approval gates and the progress deadline',
      { strategy: { needWaitingForConfirm: true, syncWaitTimeout: 900 } },
      { strategy: { syncWaitTimeout: 5 } },
      [
        { path: 'spec.strategy.needWaitingForConfirm', from: true, to: false },
        { path: 'spec.strategy.syncWaitTimeout', from: 900, to: 5 },
      ],
    ],
    ['batch size', {}, { strategy: { batchSize: '50%' } }, [{ path: 'spec.strategy.batchSize', from: 1, to: '50%' }]],
    ['first confirmation only', {}, { strategy: { needFirstConfirm: true } }, [{ path: 'spec.strategy.needFirstConfirm', from: false, to: true }]],
    ['pause', { strategy: { pause: true } }, {}, [{ path: 'spec.strategy.pause', from: true, to: false }]],
    ['minReadySeconds', {}, { strategy: { minReadySeconds: 30 } }, [{ path: 'spec.strategy.minReadySeconds', from: 5, to: 30 }]],
    [
      'update type and budgets',
      {},
      { strategy: { updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 2 } } } },
      [
        { path: 'spec.strategy.updateStrategy.type', from: 'ReCreate', to: 'RollingUpdate' },
        { path: 'spec.strategy.updateStrategy.rollingUpdate.maxUnavailable', from: '25%', to: 2 },
      ],
    ],
    [
      'in-place settings',
      {},
      { strategy: { updateStrategy: { gracePeriodSeconds: 30 } } },
      [{ path: 'spec.strategy.updateStrategy.gracePeriodSeconds', from: 5, to: 30 }],
    ],
    [
      'a declarative approval',
      {},
      { strategy: { approval: { revision: 'abc', throughGroup: 2 } } },
      [{ path: 'spec.strategy.approval', to: { revision: 'abc', throughGroup: 2 } }],
    ],
    [
      'moves',
      {},
      { strategy: { autoReschedule: { enable: true }, moveBack: { stabilizationSeconds: 60 } } },
      [
        { path: 'spec.strategy.autoReschedule.enable', from: false, to: true },
        { path: 'spec.strategy.moveBack.stabilizationSeconds', from: 300, to: 60 },
      ],
    ],
    ['history', {}, { historyLimit: 2 }, [{ path: 'spec.historyLimit', from: 5, to: 2 }]],
    [
      'per-region settings and overrides, matched by name where the region now is',
      {},
      { regions: [{ name: 'c', replicas: 0 }, { ...b, maxReplicas: 3, overrides: { images: { web: 'web:1-arm' } } }, a] },
      [
        { path: 'spec.regions[*].name', from: ['a', 'b'], to: ['c', 'b', 'a'] },
        { path: 'spec.regions[1].maxReplicas', to: 3 },
        { path: 'spec.regions[1].overrides', to: { images: { web: 'web:1-arm' } } },
      ],
    ],
    ['a region added, in order: the region says it, not a field', {}, { regions: [a, b, { name: 'c', replicas: 0 }] }, []],
    ['a region removed: the region says it', {}, { replicas: 4, regions: [a] }, [{ path: 'spec.replicas', from: 6, to: 4 }]],
    [
      'raw patches of a region',
      { overriders: [{ name: 'b', overriders: [{ op: 'replace', path: '/spec/containers/0/image', value: 'web:1-arm' }] }] },
      { overriders: [{ name: 'b', overriders: [{ op: 'replace', path: '/spec/containers/0/image', value: 'web:2-arm' }] }] },
      [{ path: 'spec.overriders[0].overriders[0].value', from: 'web:1-arm', to: 'web:2-arm' }],
    ],
    [
      'raw patches added and removed',
      { overriders: [{ name: 'a', overriders: [] }] },
      { overriders: [{ name: 'b', overriders: [] }] },
      [
        { path: 'spec.overriders[0]', from: { name: 'a', overriders: [] } },
        { path: 'spec.overriders[0]', to: { name: 'b', overriders: [] } },
      ],
    ],
  ])('%s', (_, before, after, expected) => {
    expect(changes(before, after)).toEqual(expected);
  });

  it('sees no change in a default spelled out or left out', () => {
    const spelled = {
      strategy: {
        batchSize: 1,
        syncWaitTimeout: 0,
        pause: false,
        regionOrder: 'Parallel',
        updateStrategy: { type: 'ReCreate', rollingUpdate: { maxSurge: '25%', maxUnavailable: '25%' } },
        faultMove: { enable: false },
      },
    };
    expect(changes({}, spelled)).toEqual([]);
    expect(changes(spelled, {})).toEqual([]);
  });

  it('sees no change in total replicas left to the sum of the regions', () => {
    expect(renderWeb({ replicas: undefined }).parsed.spec.replicas).toBeUndefined();
    expect(changes({}, { replicas: undefined })).toEqual([]);
  });

  it('includes the labels and annotations of the object', () => {
    expect(specChanges(renderWeb({}, { team: 'a' }), renderWeb({}, { team: 'b' }))).toEqual([{ path: 'metadata.labels.team', from: 'a', to: 'b' }]);
  });
});
