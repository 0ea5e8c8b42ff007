import { describe, expect, it } from 'vitest';
import { NAME_LABEL, REGION_LABEL, REVISION_LABEL } from '../labels.js';
import { renderSet } from '../render.js';
import type { DeployRegionObject, ExtendedDeploymentObject, PodObject, WorkloadObject } from '../kube/objects.js';
import { observe, podsByRegion } from './observe.js';

const regions: DeployRegionObject[] = [
  { apiVersion: 'extendeddeployment.io/v1beta1', kind: 'DeployRegion', metadata: { name: 'amd' }, spec: { matchLabels: { 'kubernetes.io/arch': 'amd64' } } },
];
const ed: ExtendedDeploymentObject = {
  apiVersion: 'extendeddeployment.io/v1beta1',
  kind: 'ExtendedDeployment',
  metadata: { name: 'db', namespace: 'shop', generation: 1, uid: 'u-db' },
  spec: {
    subsetType: 'StatefulSet',
    selector: { matchLabels: { app: 'db' } },
    template: { metadata: { labels: { app: 'db' } }, spec: { containers: [{ name: 'app', image: 'shop/db:1' }] } },
    regions: [{ name: 'amd', replicas: 3 }],
  },
};

const labels = (revision: string) => ({ app: 'db', [NAME_LABEL]: 'db', [REGION_LABEL]: 'amd', [REVISION_LABEL]: revision });
const pod = (name: string, revision: string, controller: { kind: string; name: string; uid: string }): PodObject => ({
  metadata: {
    name,
    namespace: 'shop',
    uid: `u-${name}`,
    labels: labels(revision),
    ownerReferences: [{ ...controller, apiVersion: 'apps/v1', controller: true }],
  },
  spec: { nodeName: 'n1', containers: [{ name: 'app', image: 'shop/db:1' }] },
  status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: '2025-12-31T23:00:00Z' }] },
});

describe('snapshot of StatefulSet regions', () => {
  const rendered = renderSet([...regions, ed]);
  if (!rendered.ok) throw new Error(JSON.stringify(rendered.problems));
  const revision = rendered.value.extendedDeployments[0]?.regions[0]?.revision ?? '';
  const statefulSet: WorkloadObject = {
    metadata: { name: 'db-amd', namespace: 'shop', uid: 'u-sts', generation: 4, labels: { [NAME_LABEL]: 'db' } },
    spec: {
      replicas: 3,
      template: { metadata: { labels: { [REVISION_LABEL]: revision } } },
      updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 2 } },
    },
    status: { observedGeneration: 3, currentRevision: 'db-amd-6d4f', updateRevision: 'db-amd-7c9b' },
  };
  // A ReplicaSet of the same name (another ExtendedDeployment's kind, say) and its pod are not the region's.
  const replicaSet: WorkloadObject = { metadata: { name: 'db-amd', namespace: 'shop', uid: 'u-rs' }, spec: { replicas: 1 } };
  const stsOwner = { kind: 'StatefulSet', name: 'db-amd', uid: 'u-sts' };
  const pods = [
    pod('db-amd-0', 'old', stsOwner),
    pod('db-amd-1', 'old', stsOwner),
    pod('db-amd-2', revision, stsOwner),
    pod('db-amd-x', revision, { kind: 'ReplicaSet', name: 'db-amd', uid: 'u-rs' }),
  ];

  it("reads the StatefulSet's partition and its controller's revisions, and the pods it controls", () => {
    const snapshot = observe(ed, regions, { replicaSets: [replicaSet], deployments: [], statefulSets: [statefulSet] }, pods, Date.UTC(2026, 0, 1));
    if (!snapshot.ok) throw new Error(JSON.stringify(snapshot.problems));
    const region = snapshot.input.regions[0];
    expect(region?.workload).toEqual({
      name: 'db-amd',
      templateRevision: revision,
      replicas: 3,
      statefulSet: { partition: 2, generation: 4, observedGeneration: 3, currentRevision: 'db-amd-6d4f', updateRevision: 'db-amd-7c9b' },
    });
    expect(region?.pods.map((p) => `${p.name} ${p.revision === revision ? 'new' : p.revision}`)).toEqual(['db-amd-0 old', 'db-amd-1 old', 'db-amd-2 new']);
    expect(region?.keeper).toBeUndefined();
  });

  it('finds the pods by region without the spec too (the fail-safe readiness gate)', () => {
    const byRegion = podsByRegion(ed, { replicaSets: [], deployments: [], statefulSets: [statefulSet] }, pods);
    expect(byRegion.map((r) => [r.name, r.pods.map((p) => p.name)])).toEqual([['amd', ['db-amd-0', 'db-amd-1', 'db-amd-2']]]);
  });

  it('takes a StatefulSet without a partition for one at 0 (the default Kubernetes gives it)', () => {
    const bare = { ...statefulSet, spec: { ...statefulSet.spec, updateStrategy: { type: 'RollingUpdate' } } };
    const snapshot = observe(ed, regions, { replicaSets: [], deployments: [], statefulSets: [bare] }, pods, Date.UTC(2026, 0, 1));
    if (!snapshot.ok) throw new Error(JSON.stringify(snapshot.problems));
    expect(snapshot.input.regions[0]?.workload?.statefulSet?.partition).toBe(0);
  });
});
