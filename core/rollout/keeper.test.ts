import { describe, expect, it } from 'vitest';
import { KEEPER_LABEL, NAME_LABEL, REGION_LABEL, REVISION_LABEL } from '../labels.js';
import type { PodTemplate } from '../kube/objects.js';
import type { RolloutAction } from './actions.js';
import type { Budgets } from './budgets.js';
import { keeperName, keeperObject, planKeeper } from './keeper.js';
import type { KeeperState, PodState, RegionState } from './snapshot.js';
import { podState } from './test-support.js';

const NOW = 1_000_000;
const owner = { name: 'web', uid: 'ed-uid' };
const surge: Budgets = { maxSurge: 1, maxUnavailable: 0, replaceDirectly: false };
const oldTemplate: PodTemplate = { metadata: { labels: { app: 'web', [REVISION_LABEL]: 'old' } }, spec: { containers: [{ name: 'c', image: 'i:1' }] } };

const available = (name: string, revision: string, extra: Partial<PodState> = {}) =>
  podState(name, { revision, ready: true, readySince: NOW - 60_000, ...extra });
const starting = (name: string, revision: string) => podState(name, { revision });

interface Row {
  readonly name: string;
  readonly desired: number;
  readonly partition?: number;
  /** The regional ReplicaSet's pods. */
  readonly pods: readonly PodState[];
  readonly keeper?: Partial<KeeperState> & { readonly replicas: number; readonly pods: readonly PodState[] };
  readonly templates?: boolean;
  readonly budgets?: Budgets;
  readonly actions: readonly string[];
  /** desired, partition and keeperServes of the region the rollout then plans. */
  readonly view?: readonly [number, number | undefined, number];
  /** keeperOccupies of that region. */
  readonly occupies?: number;
}

function region(row: Row): RegionState {
  return {
    name: 'a',
    desired: row.desired,
    ...(row.partition !== undefined && { partition: row.partition }),
    targetRevision: 'new',
    pods: row.pods,
    workload: { name: 'web-a', templateRevision: 'new', replicas: row.pods.length },
    ...(row.keeper && { keeper: { name: 'web-a-old', uid: 'k-uid', revision: 'old', ...row.keeper } }),
    ...(row.templates !== false && { keptTemplates: { old: oldTemplate } }),
  };
}

function describeAction(a: RolloutAction): string {
  if (a.kind === 'scale') return `scale ${a.workload} ${a.from}->${a.replicas}`;
  if (a.kind === 'createKeeper') return `create ${a.workload} ${a.replicas} of ${a.revision}`;
  if (a.kind === 'dropKeeper') return `drop ${a.workload}`;
  return a.kind;
}

describe('planKeeper', () => {
  const rows: readonly Row[] = [
    {
      name: 'a region without a partition has no keeper',
      desired: 4,
      pods: [available('o1', 'old'), available('n1', 'new')],
      actions: [],
    },
    {
      name: 'a partitioned region that runs old pods gets its keeper at once, with nothing to make yet',
      desired: 4,
      partition: 2,
      pods: [available('o1', 'old'), available('o2', 'old'), available('o3', 'old'), available('n1', 'new')],
      actions: ['create web-a-old 0 of old'],
      view: [4, 2, 0],
    },
    {
      name: 'the kept revision is the one the held pods run',
      desired: 3,
      partition: 1,
      pods: [available('o1', 'older'), available('o2', 'older'), available('o3', 'old', { held: true })],
      actions: ['create web-a-old 0 of old'],
    },
    {
      name: 'no keeper without the kept template in the history',
      desired: 4,
      partition: 2,
      templates: false,
      pods: [available('o1', 'old'), available('n1', 'new')],
      actions: [],
    },
    {
      name: 'a region without old pods keeps nothing (created, or a partition added after its rollout)',
      desired: 4,
      partition: 2,
      pods: [available('n1', 'new'), available('n2', 'new')],
      actions: [],
    },
    {
      name: 'a kept pod that died is made again at the old revision',
      desired: 3,
      partition: 2,
      pods: [available('o1', 'old', { held: true }), available('n1', 'new'), available('n2', 'new')],
      keeper: { replicas: 0, pods: [] },
      actions: ['scale web-a-old 0->1'],
      view: [3, 2, 0],
    },
    {
      name: 'every kept pod gone: the keeper makes them all',
      desired: 3,
      partition: 1,
      pods: [available('n1', 'new'), available('n2', 'new'), available('n3', 'new')],
      keeper: { replicas: 0, pods: [] },
      actions: ['scale web-a-old 0->1'],
    },
    {
      name: 'a partition raised above the old pods left adds old pods, within the surge',
      desired: 4,
      partition: 3,
      pods: [available('o1', 'old', { held: true }), available('n1', 'new'), available('n2', 'new'), available('n3', 'new')],
      keeper: { replicas: 0, pods: [] },
      budgets: { maxSurge: 2, maxUnavailable: 0, replaceDirectly: false },
      actions: ['scale web-a-old 0->2'],
      view: [4, 3, 0],
    },
    {
      name: 'the surge room counts the keeper’s pods and the terminating ones',
      desired: 4,
      partition: 3,
      pods: [
        available('o1', 'old', { held: true }),
        available('n1', 'new'),
        available('n2', 'new'),
        podState('t1', { revision: 'new', terminating: true }),
        podState('t2', { revision: 'new', terminating: true }),
      ],
      keeper: { replicas: 1, pods: [starting('k1', 'old')] },
      budgets: { maxSurge: 2, maxUnavailable: 0, replaceDirectly: false },
      actions: [],
    },
    {
      name: 'without any surge, one old pod at a time, served at once so that the regional ReplicaSet makes room',
      desired: 4,
      partition: 3,
      pods: [available('o1', 'old', { held: true }), available('n1', 'new'), available('n2', 'new'), available('n3', 'new')],
      keeper: { replicas: 0, pods: [] },
      budgets: { maxSurge: 0, maxUnavailable: 1, replaceDirectly: false },
      actions: ['scale web-a-old 0->1'],
      view: [3, 2, 1],
    },
    {
      name: "the keeper's starting pod is served by the regional ReplicaSet meanwhile (make before break)",
      desired: 3,
      partition: 2,
      pods: [available('o1', 'old', { held: true }), available('n1', 'new'), available('n2', 'new')],
      keeper: { replicas: 1, pods: [starting('k1', 'old')] },
      actions: [],
      view: [3, 2, 0],
    },
    {
      name: "once the keeper's pod is available, the regional ReplicaSet plans for the rest",
      desired: 3,
      partition: 2,
      pods: [available('o1', 'old', { held: true }), available('n1', 'new'), available('n2', 'new')],
      keeper: { replicas: 1, pods: [available('k1', 'old')] },
      actions: [],
      view: [2, 1, 1],
    },
    {
      name: 'a lower partition takes the keeper’s pods first, as the region has available pods to spare',
      desired: 3,
      partition: 1,
      pods: [available('o1', 'old', { held: true }), available('n1', 'new'), available('n2', 'new')],
      keeper: { replicas: 1, pods: [available('k1', 'old')] },
      actions: ['scale web-a-old 1->0'],
      view: [3, 1, 0],
    },
    {
      name: 'a lower partition waits while the region has no available pod to spare',
      desired: 3,
      partition: 1,
      pods: [available('o1', 'old', { held: true }), available('n1', 'new')],
      keeper: { replicas: 1, pods: [available('k1', 'old')] },
      actions: [],
      view: [3, 1, 0],
    },
    {
      name: 'a keeper pod that is not available goes at once',
      desired: 3,
      partition: 1,
      pods: [available('o1', 'old', { held: true }), available('n1', 'new')],
      keeper: { replicas: 2, pods: [available('k1', 'old'), starting('k2', 'old')] },
      actions: ['scale web-a-old 2->1'],
    },
    {
      name: 'with maxUnavailable the keeper may shrink below the count',
      desired: 2,
      partition: 0,
      pods: [available('n1', 'new')],
      keeper: { replicas: 1, pods: [available('k1', 'old')] },
      budgets: { maxSurge: 0, maxUnavailable: 1, replaceDirectly: false },
      actions: ['scale web-a-old 1->0'],
    },
    {
      name: 'a keeper that keeps nothing and has no pods left is deleted',
      desired: 3,
      pods: [available('n1', 'new'), available('n2', 'new'), available('n3', 'new')],
      keeper: { replicas: 0, pods: [podState('k0', { revision: 'old', phase: 'Failed' })] },
      actions: ['drop web-a-old'],
    },
    {
      name: 'not while a pod of its own still terminates (deleted, the keeper would leave it to no one observed)',
      desired: 3,
      pods: [available('n1', 'new'), available('n2', 'new'), available('n3', 'new')],
      keeper: { replicas: 0, pods: [podState('k1', { revision: 'old', terminating: true })] },
      actions: [],
    },
    {
      name: "the regional ReplicaSet leaves the surge room its keeper's unserved pods take",
      desired: 3,
      partition: 2,
      pods: [available('o1', 'old', { held: true }), available('n1', 'new'), podState('t', { revision: 'old', terminating: true })],
      keeper: { replicas: 1, pods: [starting('k1', 'old')] },
      actions: [],
      view: [3, 2, 0],
      occupies: 1,
    },
    {
      name: 'without any surge, no next pod while the last one is not available; that one is served meanwhile',
      desired: 4,
      partition: 3,
      pods: [available('o1', 'old', { held: true }), available('n1', 'new'), available('n2', 'new')],
      keeper: { replicas: 1, pods: [starting('k1', 'old')] },
      budgets: { maxSurge: 0, maxUnavailable: 1, replaceDirectly: false },
      actions: [],
      view: [3, 2, 1],
      occupies: 0,
    },
    {
      name: 'an empty keeper stays while the partition keeps its revision (it records it)',
      desired: 4,
      partition: 2,
      pods: [available('o1', 'old'), available('o2', 'old'), available('n1', 'new'), available('n2', 'new')],
      keeper: { replicas: 0, pods: [] },
      actions: [],
    },
    {
      name: 'Git back at the kept revision: the keeper retires',
      desired: 2,
      partition: 1,
      pods: [available('n1', 'new'), available('n2', 'new')],
      keeper: { replicas: 1, revision: 'new', pods: [available('k1', 'new')] },
      actions: ['scale web-a-old 1->0'],
      view: [2, 1, 0],
    },
  ];

  it.each(rows)('$name', (row) => {
    const plan = planKeeper(region(row), owner, row.budgets ?? surge, 0, NOW);
    expect(plan.actions.map(describeAction)).toEqual(row.actions);
    if (row.view) expect([plan.region.desired, plan.region.partition, plan.region.keeperServes ?? 0]).toEqual(row.view);
    if (row.occupies !== undefined) expect(plan.region.keeperOccupies).toBe(row.occupies);
  });

  it('creates its keeper from the kept template, controlled by the ExtendedDeployment, and not without its uid', () => {
    const row = rows[1]!;
    const [create] = planKeeper(region(row), owner, surge, 0, NOW).actions;
    expect(create).toMatchObject({ kind: 'createKeeper', template: oldTemplate, owner, workload: keeperName('web-a', 'old') });
    expect(planKeeper(region(row), { name: 'web', uid: '' }, surge, 0, NOW).actions).toEqual([]);
  });
});

describe('planKeeper: when to look again', () => {
  it("names the instant its Ready pods become available: the regional ReplicaSet's share changes then, and nothing announces it", () => {
    const row: Row = {
      name: '',
      desired: 3,
      partition: 2,
      pods: [available('o1', 'old', { held: true }), available('n1', 'new'), available('n2', 'new')],
      keeper: { replicas: 1, pods: [podState('k1', { revision: 'old', ready: true, readySince: NOW - 1_000 })] },
      actions: [],
    };
    const plan = planKeeper(region(row), owner, surge, 5, NOW);
    expect(plan.wakeAt).toEqual([NOW + 4_000]);
    expect(plan.region.keeperServes).toBe(0);
    expect(planKeeper(region(row), owner, surge, 5, NOW + 4_000).region.keeperServes).toBe(1);
  });
});

describe('keeperObject', () => {
  it('selects exactly the kept revision of the region, carries the keeper mark and its owner', () => {
    const object = keeperObject(
      { kind: 'createKeeper', region: 'a', workload: 'web-a-old', replicas: 2, revision: 'old', template: oldTemplate, owner },
      'shop',
    );
    const selector = { [NAME_LABEL]: 'web', [REGION_LABEL]: 'a', [REVISION_LABEL]: 'old' };
    expect(object.metadata).toEqual({
      name: 'web-a-old',
      namespace: 'shop',
      labels: { ...selector, [KEEPER_LABEL]: 'true' },
      ownerReferences: [
        { apiVersion: 'extendeddeployment.io/v1beta1', kind: 'ExtendedDeployment', name: 'web', uid: 'ed-uid', controller: true, blockOwnerDeletion: false },
      ],
    });
    expect(object.spec.selector).toEqual({ matchLabels: selector });
    expect(object.spec.replicas).toBe(2);
    expect(object.spec.template.metadata?.labels).toEqual({ app: 'web', ...selector });
    expect(object.spec.template.spec).toEqual(oldTemplate.spec);
  });
});
