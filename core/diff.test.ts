import { readFileSync } from 'node:fs';
import { parseAllDocuments } from 'yaml';
import { describe, expect, it } from 'vitest';
import { diffOf } from './diff.js';
import { renderSet, type RenderedExtendedDeployment } from './render.js';

const regions = readFileSync('examples/upstream-sample/deployregions.yaml', 'utf8');
const sample = readFileSync('examples/upstream-sample/extendeddeployment.yaml', 'utf8');

function render(...texts: string[]): RenderedExtendedDeployment[] {
  const objects = texts.flatMap((t) => parseAllDocuments(t).map((d) => d.toJS() as unknown));
  const result = renderSet(objects);
  if (!result.ok) throw new Error(JSON.stringify(result.problems));
  return [...result.value.extendedDeployments];
}

describe('diffOf', () => {
  it('per region: template paths (revision label left out), in place or replace, and the groups from planOf', () => {
    const before = render(regions, sample);
    const after = render(regions, sample.replace('          image: alpine\n', '          image: alpine:3.20\n'));
    const [ed] = diffOf(after, before).extendedDeployments;
    expect(ed?.change).toBe('changed');
    expect(ed?.fromRolloutRevision).toBe(before[0]?.rolloutRevision);
    expect(ed?.regions.map((r) => [r.name, r.change, r.update, r.templateChanges])).toEqual([
      ['region1', 'none', undefined, []],
      ['region2', 'rollout', 'in-place', [{ path: 'spec.containers[0].image', from: 'alpine', to: 'alpine:3.20' }]],
    ]);
    expect(ed?.groups.length).toBeGreaterThan(0);
    expect(ed?.removedRegions).toEqual([]);
  });

  it('says what is new, unchanged and removed', () => {
    const before = render(regions, sample);
    expect(diffOf(before, before).extendedDeployments.map((e) => e.change)).toEqual(['none']);
    expect(diffOf(before, []).extendedDeployments.map((e) => e.change)).toEqual(['new']);
    const removed = diffOf([], before).extendedDeployments;
    expect(removed.map((e) => [e.change, e.fromReplicas, e.removedRegions])).toEqual([['removed', 2, ['region1', 'region2']]]);
  });

  it('takes an ExtendedDeployment that now names the default namespace for the same object as before, when it named none', () => {
    const before = render(regions, sample);
    const after = render(regions, sample.replace('  name: extendeddeployment-sample\n', '  name: extendeddeployment-sample\n  namespace: default\n'));
    expect(after[0]?.manifest['metadata']).toHaveProperty('namespace', 'default');
    expect(diffOf(after, before).extendedDeployments.map((e) => [e.namespace, e.name, e.change])).toEqual([['default', 'extendeddeployment-sample', 'none']]);
  });

  it('sees a change outside the pod template: a strategy-only change is a change, with its fields and risks', () => {
    const before = render(regions, sample.replace('    needWaitingForConfirm: false\n', '    needWaitingForConfirm: true\n    syncWaitTimeout: 900\n'));
    const after = render(regions, sample.replace('    needWaitingForConfirm: false\n', '    syncWaitTimeout: 5\n'));
    const diff = diffOf(after, before);
    expect(diff.extendedDeployments.map((e) => [e.change, e.totalGroups, e.regions.map((r) => r.change), e.specChanges])).toEqual([
      [
        'changed',
        0,
        ['none', 'none'],
        [
          { path: 'spec.strategy.needWaitingForConfirm', from: true, to: false },
          { path: 'spec.strategy.syncWaitTimeout', from: 900, to: 5 },
        ],
      ],
    ]);
    expect(diff.risks.map((r) => r.kind)).toEqual(['approval-gates-removed', 'deadline-shortened']);
    expect(diffOf(before, before).risks).toEqual([]);
  });

  it('sees a DeployRegion that selects other nodes in the template of every region on it', () => {
    const before = render(regions, sample);
    const after = render(regions.replace('extendeddeployment.io/region: region2', 'extendeddeployment.io/region: region2-new'), sample);
    const [ed] = diffOf(after, before).extendedDeployments;
    expect(ed?.regions.map((r) => [r.name, r.change, r.templateChanges.map((c) => [c.path, c.to])])).toEqual([
      ['region1', 'none', []],
      [
        'region2',
        'rollout',
        [['spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].values[0]', 'region2-new']],
      ],
    ]);
  });

  it('compares the DeployRegions of both sides when given them: new, removed, changed with its fields, or not', () => {
    const regionsOf = (...texts: string[]) => {
      const result = renderSet(texts.flatMap((t) => parseAllDocuments(t).map((d) => d.toJS() as unknown)));
      if (!result.ok) throw new Error(JSON.stringify(result.problems));
      return result.value.deployRegions;
    };
    const extra = 'apiVersion: extendeddeployment.io/v1beta1\nkind: DeployRegion\nmetadata:\n  name: gpu\nspec:\n  matchLabels:\n    pool: gpu\n';
    const before = regionsOf(regions, extra);
    const after = regionsOf(regions.replace('extendeddeployment.io/region: region2', 'extendeddeployment.io/region: region2-new'), extra.replace('gpu', 'tpu'));
    expect(diffOf([], [], { after, before }).deployRegions).toEqual([
      { name: 'region1', change: 'none', specChanges: [] },
      {
        name: 'region2',
        change: 'changed',
        specChanges: [{ path: 'spec.matchLabels["extendeddeployment.io/region"]', from: 'region2', to: 'region2-new' }],
      },
      { name: 'tpu', change: 'new', specChanges: [] },
      { name: 'gpu', change: 'removed', specChanges: [] },
    ]);
    expect(diffOf([], []).deployRegions).toEqual([]);
  });
});
