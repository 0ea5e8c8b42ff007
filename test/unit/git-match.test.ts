// The end-of-test "cluster matches Git" comparison (test/e2e/git-match.ts) on synthetic pictures: a converged cluster
// matches; each way of not matching is named.
import { describe, expect, it } from 'vitest';
import { extendedDeploymentSpec } from '../../core/api/extended-deployment.js';
import { gitDifferences, type GitTarget } from '../e2e/git-match.js';
import type { EdSample, PodSample, Sample } from '../e2e/invariants.js';

const target: GitTarget = {
  rolloutRevision: 'roll-2',
  regions: [
    { name: 'a', replicas: 2, revision: 'rev-a2', partition: 0 },
    { name: 'b', replicas: 1, revision: 'rev-b2', partition: 0 },
  ],
};

const strategy = extendedDeploymentSpec.parse({
  selector: { matchLabels: { app: 'x' } },
  template: { metadata: { labels: { app: 'x' } }, spec: { containers: [{ name: 'app', image: 'x' }] } },
  regions: [{ name: 'a', replicas: 1 }],
}).strategy;

const ed = (o: { phase?: string; revision?: string; rolloutRevision?: string; generation?: number; observed?: number } = {}): EdSample => ({
  subsetType: 'ReplicaSet',
  strategy,
  regionOrder: 'Parallel',
  regions: target.regions.map((r) => ({ name: r.name, desired: r.replicas, partition: r.partition, targetRevision: r.revision })),
  rolloutRevision: o.rolloutRevision ?? 'roll-2',
  generation: o.generation ?? 4,
  status: { phase: o.phase ?? 'Healthy', revision: o.revision ?? 'roll-2', observedGeneration: o.observed ?? 4 },
});

const pod = (region: string, id: number, revision: string, extra: Partial<PodSample> = {}): PodSample => ({
  uid: `${region}${id}`,
  name: `${region}${id}`,
  region,
  revision,
  terminating: false,
  ready: true,
  readySince: 0,
  ...extra,
});

const converged = (): Sample => ({
  at: 1,
  ed: ed(),
  workloads: [
    { region: 'a', replicas: 2, revision: 'rev-a2' },
    { region: 'b', replicas: 1, revision: 'rev-b2' },
  ],
  pods: [pod('a', 1, 'rev-a2'), pod('a', 2, 'rev-a2'), pod('b', 1, 'rev-b2')],
});

describe('gitDifferences', () => {
  it('a converged cluster matches Git', () => {
    expect(gitDifferences(converged(), target)).toEqual([]);
  });

  it('names the ExtendedDeployment missing, another rollout, a status not Healthy or of an older generation', () => {
    expect(gitDifferences({ ...converged(), ed: undefined }, target)).toEqual(['the ExtendedDeployment is missing']);
    expect(gitDifferences({ ...converged(), ed: undefined, unparsed: 'ExtendedDeployment ns/web: does not parse: spec: x' }, target)).toEqual([
      'ExtendedDeployment ns/web: does not parse: spec: x',
    ]);
    expect(gitDifferences({ ...converged(), ed: ed({ rolloutRevision: 'roll-1', revision: 'roll-1' }) }, target)).toEqual([
      'ExtendedDeployment at rollout revision roll-1, Git rendered roll-2',
      'status Healthy for rollout roll-1, not Healthy for roll-2',
    ]);
    expect(gitDifferences({ ...converged(), ed: ed({ phase: 'Progressing' }) }, target)).toEqual([
      'status Progressing for rollout roll-2, not Healthy for roll-2',
    ]);
    expect(gitDifferences({ ...converged(), ed: ed({ observed: 3 }) }, target)).toEqual(['status.observedGeneration 3 ≠ metadata.generation 4']);
  });

  it('names a workload missing, at another revision or with another replica count', () => {
    const s = converged();
    expect(gitDifferences({ ...s, workloads: [s.workloads[1]!] }, target)).toEqual(['a: no workload']);
    expect(gitDifferences({ ...s, workloads: [{ region: 'a', replicas: 3, revision: 'rev-a1' }, s.workloads[1]!] }, target)).toEqual([
      'a: workload template at revision rev-a1, Git rendered rev-a2',
      'a: workload spec.replicas 3, Git wants 2',
    ]);
  });

  it('names pods at another revision, terminating, not Ready, too few, or of a region Git does not render', () => {
    const s = converged();
    const withPods = (pods: PodSample[]) => gitDifferences({ ...s, pods }, target);
    expect(withPods([pod('a', 1, 'rev-a2'), pod('a', 2, 'rev-a1'), pod('b', 1, 'rev-b2')])).toEqual([
      'a: 1 pods at rev-a2 (0 not Ready), 1 at other revisions, 0 terminating; Git wants 2 Ready at rev-a2',
    ]);
    expect(withPods([...s.pods, pod('a', 3, 'rev-a2', { terminating: true })])).toEqual([
      'a: 2 pods at rev-a2 (0 not Ready), 0 at other revisions, 1 terminating; Git wants 2 Ready at rev-a2',
    ]);
    expect(withPods([pod('a', 1, 'rev-a2'), pod('a', 2, 'rev-a2', { ready: false }), pod('b', 1, 'rev-b2')])).toEqual([
      'a: 2 pods at rev-a2 (1 not Ready), 0 at other revisions, 0 terminating; Git wants 2 Ready at rev-a2',
    ]);
    expect(withPods([pod('a', 1, 'rev-a2'), pod('a', 2, 'rev-a2')])).toEqual([
      'b: 0 pods at rev-b2 (0 not Ready), 0 at other revisions, 0 terminating; Git wants 1 Ready at rev-b2',
    ]);
    expect(withPods([...s.pods, pod('c', 1, 'rev-c')])).toEqual(['1 pods of regions Git does not render (c)']);
  });

  it('accepts old pods a partition keeps, at most that many, beside the new ones', () => {
    const partitioned: GitTarget = { ...target, regions: [{ ...target.regions[0]!, partition: 1 }, target.regions[1]!] };
    const withPods = (pods: PodSample[]) => gitDifferences({ ...converged(), pods }, partitioned);
    expect(withPods([pod('a', 1, 'rev-a2'), pod('a', 2, 'rev-a1'), pod('b', 1, 'rev-b2')])).toEqual([]);
    expect(withPods([pod('a', 1, 'rev-a1'), pod('a', 2, 'rev-a1'), pod('b', 1, 'rev-b2')])).toEqual([
      'a: 0 pods at rev-a2 (0 not Ready), 2 at other revisions, 0 terminating; Git wants 2 Ready at rev-a2 (its partition keeps up to 1 at the previous one)',
    ]);
  });

  it("counts a keeper's replicas with its region's workload, up to the partition", () => {
    const partitioned: GitTarget = { ...target, regions: [{ ...target.regions[0]!, partition: 1 }, target.regions[1]!] };
    const s = converged();
    const pods = [pod('a', 1, 'rev-a2'), pod('a', 2, 'rev-a1'), pod('b', 1, 'rev-b2')];
    const keeping = (replicas: number, keeperReplicas: number) =>
      gitDifferences({ ...s, pods, workloads: [{ region: 'a', replicas, revision: 'rev-a2', keeperReplicas }, s.workloads[1]!] }, partitioned);
    expect(keeping(1, 1)).toEqual([]);
    expect(keeping(2, 1)).toEqual(['a: workload spec.replicas 2 and its keeper 1, Git wants 2']);
    expect(keeping(0, 2)).toEqual(['a: workload spec.replicas 0 and its keeper 2, Git wants 2']);
  });

  it('counts pods that stopped for good (Failed, Succeeded) nowhere, as the agent does; an active one being deleted is terminating', () => {
    const s = converged();
    const withPods = (pods: PodSample[]) => gitDifferences({ ...s, pods }, target);
    const stopped = [
      pod('a', 3, 'rev-a2', { phase: 'Failed', ready: false }),
      pod('a', 4, 'rev-a1', { phase: 'Succeeded', ready: false }),
      pod('b', 2, 'rev-b2', { phase: 'Failed', terminating: true }),
    ];
    expect(withPods([...s.pods, ...stopped])).toEqual([]);
    expect(withPods([pod('a', 1, 'rev-a2'), pod('a', 2, 'rev-a2', { phase: 'Failed', ready: false }), pod('b', 1, 'rev-b2')])).toEqual([
      'a: 1 pods at rev-a2 (0 not Ready), 0 at other revisions, 0 terminating; Git wants 2 Ready at rev-a2',
    ]);
  });
});
