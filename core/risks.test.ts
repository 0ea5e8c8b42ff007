import { describe, expect, it } from 'vitest';
import { baseSpec, renderWeb } from './change-test-support.js';
import { planOf } from './plan.js';

const [a, b] = baseSpec.regions;
const template = (image: string, env?: string) => ({
  ...baseSpec.template,
  spec: { containers: [{ name: 'web', image, ...(env && { env: [{ name: 'LOG', value: env }] }) }] },
});
const inPlace = { updateStrategy: { type: 'InPlaceIfPossible' } };

/** The risks `planOf` finds in a change of `web` from `before` to `after` (spec fields merged over the base spec). */
const risks = (before: Record<string, unknown>, after: Record<string, unknown>) =>
  (planOf([renderWeb(after)], [renderWeb(before)]).risks ?? []).map((r) => [r.kind, r.message]);

describe('risks of a change', () => {
  it.each<[string, Record<string, unknown>, Record<string, unknown>, string[][]]>([
    ['nothing changes', {}, {}, []],
    ['an image change with in-place updates on', { strategy: inPlace }, { strategy: inPlace, template: template('web:2') }, []],
    ['more replicas', {}, { replicas: 8, regions: [{ ...a, replicas: 6 }, b] }, []],
    ['a longer deadline, a pause added, gates added', {}, { strategy: { syncWaitTimeout: 900, pause: true, needWaitingForConfirm: true } }, []],
    [
      'approval gates removed',
      { strategy: { needWaitingForConfirm: true } },
      {},
      [['approval-gates-removed', 'approval gates removed (strategy.needWaitingForConfirm true -> false): rollouts no longer stop between groups']],
    ],
    [
      'approval only at the first gate',
      { strategy: { needWaitingForConfirm: true } },
      { strategy: { needWaitingForConfirm: true, needFirstConfirm: true } },
      [['approval-gates-removed', 'approval gates removed after the first (strategy.needFirstConfirm false -> true): only the first gate of a rollout stops']],
    ],
    ['first confirmation while gates are off', {}, { strategy: { needFirstConfirm: true } }, []],
    ['pause removed', { strategy: { pause: true } }, {}, [['pause-removed', 'pause removed (strategy.pause true -> false): a rollout it held continues']]],
    [
      'deadline shortened',
      { strategy: { syncWaitTimeout: 900 } },
      { strategy: { syncWaitTimeout: 5 } },
      [['deadline-shortened', 'progress deadline shortened from 900s to 5s (strategy.syncWaitTimeout 900 -> 5): a slower group makes the rollout Degraded']],
    ],
    [
      'deadline shortened from the default (0 means 300s)',
      {},
      { strategy: { syncWaitTimeout: 60 } },
      [['deadline-shortened', 'progress deadline shortened from 300s to 60s (strategy.syncWaitTimeout 0 -> 60): a slower group makes the rollout Degraded']],
    ],
    ['deadline set to what the default is', {}, { strategy: { syncWaitTimeout: 300 } }, []],
    [
      'maxUnavailable raised',
      { strategy: { updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1 } } } },
      { strategy: { updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '50%' } } } },
      [
        [
          'unavailable-raised',
          'more pods may be unavailable at once during a rollout (per region: a 1 -> 2; see strategy.updateStrategy, upgradeMode, batchSize)',
        ],
      ],
    ],
    [
      'old pods first, in larger batches',
      { strategy: { upgradeMode: 'scaleInPriority' } },
      { strategy: { upgradeMode: 'scaleInPriority', batchSize: 2 } },
      [
        [
          'unavailable-raised',
          'more pods may be unavailable at once during a rollout (per region: a 1 -> 2, b 1 -> 2; see strategy.updateStrategy, upgradeMode, batchSize)',
        ],
      ],
    ],
    ['larger batches, new pods first', {}, { strategy: { batchSize: 2 } }, []],
    [
      'every old pod deleted first',
      {},
      { strategy: { updateStrategy: { type: 'DeleteAllFirst' } } },
      [
        [
          'unavailable-raised',
          'more pods may be unavailable at once during a rollout (per region: a 0 -> 4, b 0 -> 2; see strategy.updateStrategy, upgradeMode, batchSize)',
        ],
      ],
    ],
    ['every pod replaced', {}, { template: template('web:2') }, [['all-pods-replaced', 'every pod is replaced: all 6 pods in a, b get a new pod template']]],
    [
      'every pod replaced although in-place updates are on',
      { strategy: inPlace },
      { strategy: inPlace, template: template('web:2', 'debug') },
      [['all-pods-replaced', 'every pod is replaced: all 6 pods in a, b get a new pod template']],
    ],
    ['one region of two replaced', {}, { regions: [a, { ...b, overrides: { images: { web: 'web:2' } } }] }, []],
    ['a region removed with its pods', {}, { replicas: 4, regions: [a] }, [['region-removed', 'region b is removed with its 2 pods']]],
    ['a region without pods removed', { regions: [a, b, { name: 'c', replicas: 0 }] }, {}, []],
  ])('%s', (_, before, after, expected) => {
    expect(risks(before, after)).toEqual(expected);
  });

  it('sees a change that approves the rollout it starts, not one that approves no more than before', () => {
    const gated = { needWaitingForConfirm: true, batchSize: 2 };
    const revision = renderWeb({ template: template('web:2') }).rolloutRevision;
    const approving = (throughGroup: number) => ({ template: template('web:2'), strategy: { ...gated, approval: { revision, throughGroup } } });
    expect(risks({ strategy: gated }, approving(2))).toEqual([
      ['approved-in-change', 'this change approves its own rollout through group 2 (strategy.approval): those groups start without a stop'],
      ['all-pods-replaced', 'every pod is replaced: all 6 pods in a, b get a new pod template'],
    ]);
    expect(risks(approving(2), approving(2))).toEqual([]);
    expect(risks(approving(2), approving(3)).map(([kind]) => kind)).toEqual(['approved-in-change']);
    expect(risks({ strategy: gated }, { strategy: { ...gated, approval: { revision: 'another', throughGroup: 2 } } })).toEqual([]);
  });

  it('names each ExtendedDeployment, and one the change removes with its pods', () => {
    const plan = planOf([], [renderWeb()]);
    expect(plan.risks).toEqual([{ kind: 'extended-deployment-removed', namespace: 'shop', name: 'web', message: 'removed with its 6 pods' }]);
    expect(planOf([renderWeb({ strategy: { pause: false } })], [renderWeb({ strategy: { pause: true } })]).risks?.[0]).toMatchObject({
      namespace: 'shop',
      name: 'web',
    });
  });

  it('finds none in a plan without a base, nor for an ExtendedDeployment that is new', () => {
    expect(planOf([renderWeb()]).risks).toBeUndefined();
    expect(planOf([renderWeb()], []).risks).toEqual([]);
  });

  it('names a region that starts adopting a workload, also in an ExtendedDeployment the change adds, and not again', () => {
    const adopting = { regions: [{ ...a, adopt: { kind: 'Deployment', name: 'web' } }, b] };
    const message = `region ${a.name} takes over the running pods of Deployment web (adopt): the agent moves them without a restart and scales Deployment web down to 0; delete it in Git once the adoption is done`;
    expect(risks({}, adopting)).toEqual([['workload-adopted', message]]);
    expect(planOf([renderWeb(adopting)], []).risks?.map((r) => r.message)).toEqual([message]);
    expect(risks(adopting, adopting)).toEqual([]);
    // The plan's region shows it where the change adds it, not once it is in the base.
    expect(planOf([renderWeb(adopting)], [renderWeb()]).extendedDeployments[0]?.regions.map((r) => r.adopts)).toEqual(['Deployment/web', undefined]);
    expect(planOf([renderWeb(adopting)], [renderWeb(adopting)]).extendedDeployments[0]?.regions.map((r) => r.adopts)).toEqual([undefined, undefined]);
  });
});

describe('risks of a change to StatefulSet regions', () => {
  const claim = (storage: string) => ({ metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage } } } });
  const stateful = (statefulSet: Record<string, unknown>, regionB: Record<string, unknown> = b) => ({
    subsetType: 'StatefulSet',
    statefulSet,
    regions: [a, regionB],
  });

  it.each<[string, Record<string, unknown>, Record<string, unknown>, string[][]]>([
    [
      'an image change',
      stateful({ volumeClaimTemplates: [claim('1Gi')] }),
      { ...stateful({ volumeClaimTemplates: [claim('1Gi')] }), template: template('web:2') },
      [['all-pods-replaced', expect.stringMatching(/^every pod is replaced/)]],
    ],
    [
      'a bigger claim everywhere',
      stateful({ volumeClaimTemplates: [claim('1Gi')] }),
      stateful({ volumeClaimTemplates: [claim('2Gi')] }),
      ['a', 'b'].map((r) => [
        'immutable-field-changed',
        `region ${r}: spec.volumeClaimTemplates of StatefulSet web-${r} change, which Kubernetes refuses to update: every sync fails until the StatefulSet is deleted with --cascade=orphan (its pods and claims stay)`,
      ]),
    ],
    [
      "one region's claim override, and a new governing Service",
      stateful({ volumeClaimTemplates: [claim('1Gi')] }),
      stateful({ serviceName: 'web', volumeClaimTemplates: [claim('1Gi')] }, { ...b, overrides: { volumeClaims: { data: { storage: '5Gi' } } } }),
      [
        ['immutable-field-changed', expect.stringMatching(/^region a: spec\.serviceName of StatefulSet web-a change/)],
        ['immutable-field-changed', expect.stringMatching(/^region b: spec\.serviceName, spec\.volumeClaimTemplates of StatefulSet web-b change/)],
      ],
    ],
  ])('%s', (_, before, after, expected) => {
    expect(risks(before, after)).toEqual(expected);
  });
});
