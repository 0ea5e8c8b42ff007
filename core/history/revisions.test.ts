import { describe, expect, it } from 'vitest';
import { CHANGE_CAUSE_ANNOTATION, CURRENT_SINCE_ANNOTATION, NAME_LABEL, REVISION_LABEL, ROLLOUT_REVISION_ANNOTATION } from '../labels.js';
import type { PodTemplate } from '../kube/objects.js';
import { historyEntries, type ControllerRevisionObject } from './entries.js';
import { heldRevisions, liveTemplates, planHistory, type HistoryAction, type HistoryInput, type LiveTemplate } from './revisions.js';
import type { RegionState } from '../rollout/snapshot.js';
import { podState } from '../rollout/test-support.js';

const NOW = Date.UTC(2026, 0, 1, 12);
const ed = { metadata: { name: 'web', namespace: 'shop', uid: 'u-web', annotations: { [CHANGE_CAUSE_ANNOTATION]: 'image 3' } } };

/** A template as the API server stores it: with defaults filled in. */
const template = (revision: string, image: string): PodTemplate => {
  const spec = { restartPolicy: 'Always', containers: [{ name: 'app', image, terminationMessagePath: '/dev/termination-log' }] };
  return { metadata: { labels: { app: 'web', [REVISION_LABEL]: revision } }, spec };
};
const live = (a: string, b: string): LiveTemplate[] => [
  { region: 'a', targetRevision: 'ra3', template: template(a, 'web:3') },
  { region: 'b', targetRevision: 'rb3', template: template(b, 'web:3') },
];

/** A ControllerRevision of rollout revision `rollout` numbered `revision`, owned by the ExtendedDeployment unless `owner` says otherwise. */
function recorded(rollout: string, revision: number | undefined, owner: { uid?: string; kind?: string } | null = {}, data: unknown = { regions: [] }) {
  return {
    metadata: {
      name: `web-${rollout}`,
      namespace: 'shop',
      uid: `u-${rollout}`,
      resourceVersion: `rv-${rollout}`,
      labels: { [NAME_LABEL]: 'web' },
      annotations: { [ROLLOUT_REVISION_ANNOTATION]: rollout },
      ...(owner && {
        ownerReferences: [
          { apiVersion: 'extendeddeployment.io/v1beta1', kind: owner.kind ?? 'ExtendedDeployment', name: 'web', uid: owner.uid ?? 'u-web', controller: true },
        ],
      }),
    },
    ...(revision !== undefined && { revision }),
    data,
  } satisfies ControllerRevisionObject;
}

const input = (over: Partial<HistoryInput>): HistoryInput => ({
  ed,
  historyLimit: 5,
  rolloutRevision: 'R3',
  regions: live('ra3', 'rb3'),
  existing: [],
  now: NOW,
  ...over,
});

/** Actions in short: `create R3#1`, `update R1#3`, `delete web-R0`. */
const short = (actions: readonly HistoryAction[]) =>
  actions.map((a) =>
    a.kind === 'delete'
      ? `delete ${a.name} (${a.uid})`
      : `${a.kind} ${a.object.metadata?.annotations?.[ROLLOUT_REVISION_ANNOTATION]}#${a.object.revision}${a.kind === 'update' ? ` at ${a.object.metadata?.resourceVersion}` : ''}`,
  );

describe('heldRevisions', () => {
  const pod = (name: string, revision: string, terminating = false) => ({ ...podState(name, { revision }), terminating });
  it('names the revisions of the old pods of partitioned regions and of their keepers, and nothing else', () => {
    const regions: RegionState[] = [
      { name: 'a', desired: 3, partition: 1, targetRevision: 'ra3', workload: undefined, pods: [pod('o', 'ra1'), pod('n', 'ra3'), pod('t', 'ra0', true)] },
      {
        name: 'b',
        desired: 3,
        partition: 1,
        targetRevision: 'rb3',
        workload: undefined,
        pods: [],
        keeper: { name: 'k', uid: 'k', revision: 'rb2', replicas: 1, pods: [] },
      },
      { name: 'c', desired: 3, targetRevision: 'rc3', workload: undefined, pods: [pod('x', 'rc1')] },
    ];
    expect(heldRevisions(regions)).toEqual([
      { region: 'a', revision: 'ra1' },
      { region: 'b', revision: 'rb2' },
    ]);
  });
});

describe('planHistory', () => {
  const cases: { name: string; over: Partial<HistoryInput>; want: string[] }[] = [
    { name: 'records the first revision', over: {}, want: ['create R3#1'] },
    { name: 'numbers a new revision above the highest', over: { existing: [recorded('R1', 1), recorded('R2', 4)] }, want: ['create R3#5'] },
    { name: 'records nothing while a workload still carries the old template', over: { regions: live('ra3', 'rb2') }, want: [] },
    {
      name: 'prunes nothing before the current revision is recorded',
      over: { regions: live('ra2', 'rb2'), historyLimit: 0, existing: [recorded('R1', 1), recorded('R2', 2)] },
      want: [],
    },
    {
      name: 'records nothing for a region without its workload',
      over: { regions: [...live('ra3', 'rb3'), { region: 'c', targetRevision: 'rc3', template: undefined }] },
      want: [],
    },
    { name: 'nothing to do once recorded and newest', over: { existing: [recorded('R2', 1), recorded('R3', 2)] }, want: [] },
    {
      name: 'a revert renumbers the recorded revision above the highest, guarded by its resourceVersion',
      over: { existing: [recorded('R3', 1), recorded('R4', 2)] },
      want: ['update R3#3 at rv-R3'],
    },
    {
      name: 'keeps the current one and historyLimit others, deleting the oldest',
      over: { historyLimit: 1, existing: [recorded('R1', 1), recorded('R2', 2)] },
      want: ['create R3#3', 'delete web-R1 (u-R1)'],
    },
    {
      name: 'historyLimit 0 keeps only the current one',
      over: { historyLimit: 0, existing: [recorded('R2', 2), recorded('R3', 3), recorded('R1', 1)] },
      want: ['delete web-R2 (u-R2)', 'delete web-R1 (u-R1)'],
    },
    {
      name: 'a revert within the limit renumbers and prunes the oldest other',
      over: { historyLimit: 1, existing: [recorded('R1', 1), recorded('R3', 2), recorded('R4', 3)] },
      want: ['update R3#4 at rv-R3', 'delete web-R1 (u-R1)'],
    },
    {
      name: "ignores someone else's ControllerRevisions carrying the name label: never counted, never deleted",
      over: {
        historyLimit: 0,
        existing: [
          recorded('X1', 9, { uid: 'u-other' }),
          recorded('X2', 8, null),
          recorded('X3', 7, { kind: 'StatefulSet' }),
          recorded('R3', 1, {}, 'garbage'),
        ],
      },
      want: [],
    },
    {
      name: 'reads an owned revision leniently: without a number it counts as 0 and is pruned',
      over: { historyLimit: 0, existing: [recorded('R1', undefined, {}, 'garbage')] },
      want: ['create R3#1', 'delete web-R1 (u-R1)'],
    },
    { name: 'a session suffix names the same revision', over: { rolloutRevision: 'R3+2', existing: [recorded('R3', 1)] }, want: [] },
    {
      name: "keeps beyond historyLimit a revision whose template a partition keeps (a keeper's source), prunes the others",
      over: {
        historyLimit: 0,
        existing: [recorded('R1', 1, {}, { regions: [{ region: 'a', revision: 'ra1', template: template('ra1', 'web:1') }] }), recorded('R2', 2)],
        held: [{ region: 'a', revision: 'ra1' }],
      },
      want: ['create R3#3', 'delete web-R2 (u-R2)'],
    },
    {
      name: 'a held revision of another region keeps nothing',
      over: {
        historyLimit: 0,
        existing: [recorded('R1', 1, {}, { regions: [{ region: 'a', revision: 'ra1', template: template('ra1', 'web:1') }] })],
        held: [{ region: 'b', revision: 'ra1' }],
      },
      want: ['create R3#2', 'delete web-R1 (u-R1)'],
    },
  ];
  for (const c of cases) it(c.name, () => expect(short(planHistory(input(c.over))), c.name).toEqual(c.want));

  it('records a ControllerRevision owned by the ExtendedDeployment, with the live templates without defaults and the change cause', () => {
    const [action] = planHistory(input({ rolloutRevision: 'R3+1' }));
    expect(action).toEqual({
      kind: 'create',
      object: {
        apiVersion: 'apps/v1',
        kind: 'ControllerRevision',
        metadata: {
          name: 'web-R3',
          namespace: 'shop',
          labels: { [NAME_LABEL]: 'web' },
          annotations: { [ROLLOUT_REVISION_ANNOTATION]: 'R3', [CURRENT_SINCE_ANNOTATION]: '2026-01-01T12:00:00.000Z', [CHANGE_CAUSE_ANNOTATION]: 'image 3' },
          ownerReferences: [
            { apiVersion: 'extendeddeployment.io/v1beta1', kind: 'ExtendedDeployment', name: 'web', uid: 'u-web', controller: true, blockOwnerDeletion: false },
          ],
        },
        data: {
          regions: [
            {
              region: 'a',
              revision: 'ra3',
              template: { metadata: { labels: { app: 'web', [REVISION_LABEL]: 'ra3' } }, spec: { containers: [{ name: 'app', image: 'web:3' }] } },
            },
            {
              region: 'b',
              revision: 'rb3',
              template: { metadata: { labels: { app: 'web', [REVISION_LABEL]: 'rb3' } }, spec: { containers: [{ name: 'app', image: 'web:3' }] } },
            },
          ],
        },
        revision: 1,
      },
    });
  });

  it('renumbers a reverted revision as stored, with the annotations of its new turn and its data untouched', () => {
    const first = recorded('R3', 1, {}, { regions: [{ region: 'a', revision: 'ra3', template: {} }] });
    const annotations = { ...first.metadata.annotations, [CHANGE_CAUSE_ANNOTATION]: 'image 3 the first time', 'team.example/note': 'kept' };
    const stored = { ...first, metadata: { ...first.metadata, annotations } };
    const [action] = planHistory(input({ existing: [stored, recorded('R4', 2)] }));
    expect(action).toEqual({
      kind: 'update',
      object: {
        ...stored,
        apiVersion: 'apps/v1',
        kind: 'ControllerRevision',
        metadata: {
          ...stored.metadata,
          annotations: {
            'team.example/note': 'kept',
            [ROLLOUT_REVISION_ANNOTATION]: 'R3',
            [CURRENT_SINCE_ANNOTATION]: '2026-01-01T12:00:00.000Z',
            [CHANGE_CAUSE_ANNOTATION]: 'image 3',
          },
        },
        revision: 3,
      },
    });
  });

  it('is level-based: applying its writes leaves nothing to do', () => {
    let existing: ControllerRevisionObject[] = [recorded('R1', 1), recorded('R2', 2), recorded('R3', 3)];
    for (const rollout of ['R4', 'R2', 'R5']) {
      const over = { historyLimit: 2, rolloutRevision: rollout };
      for (const a of planHistory(input({ ...over, existing }))) {
        if (a.kind === 'delete') existing = existing.filter((o) => o.metadata?.uid !== a.uid);
        else {
          const stored = { ...a.object, metadata: { ...a.object.metadata, uid: `u-${rollout}`, resourceVersion: 'rv' } };
          existing = [...existing.filter((o) => o.metadata?.name !== a.object.metadata?.name), stored];
        }
      }
      expect(planHistory(input({ ...over, existing }))).toEqual([]);
    }
    expect(historyEntries({ name: 'web', uid: 'u-web' }, existing).map((e) => `${e.rolloutRevision}#${e.revision}`)).toEqual(['R4#4', 'R2#5', 'R5#6']);
  });
});

describe('liveTemplates', () => {
  const workload = (name: string, revision: string) => ({ metadata: { name, namespace: 'shop' }, spec: { template: template(revision, 'web:3') } });
  const planned = (subsetType: 'ReplicaSet' | 'Deployment') => ({
    ed: { metadata: { name: 'web', namespace: 'shop' }, spec: { subsetType } } as never,
    regions: [
      { name: 'a', targetRevision: 'ra' },
      { name: 'b', targetRevision: 'rb' },
    ] as never,
  });
  const workloads = { replicaSets: [workload('web-a', 'rs-a'), workload('web-b', 'rs-b')], deployments: [workload('web-a', 'd-a')] };

  it.each([
    ['ReplicaSet', ['rs-a', 'rs-b']],
    ['Deployment', ['d-a', undefined]],
  ] as const)('reads each region from its %s', (kind, revisions) => {
    const regions = liveTemplates(planned(kind), workloads);
    expect(regions.map((r) => r.template?.metadata?.labels?.[REVISION_LABEL])).toEqual(revisions);
    expect(regions.map((r) => `${r.region}:${r.targetRevision}`)).toEqual(['a:ra', 'b:rb']);
  });
});
