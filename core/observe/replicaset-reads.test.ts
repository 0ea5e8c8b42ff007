import { describe, expect, it } from 'vitest';
import { GROUP_RECORD_ANNOTATION, NAME_LABEL, REGION_LABEL, REVISION_LABEL } from '../labels.js';
import { renderSet } from '../render.js';
import type { DeployRegionObject, ExtendedDeploymentObject, WorkloadObject } from '../kube/objects.js';
import { observe } from './observe.js';
import { replicaSetReads } from './replicaset-reads.js';

const region: DeployRegionObject = {
  apiVersion: 'extendeddeployment.io/v1beta1',
  kind: 'DeployRegion',
  metadata: { name: 'amd' },
  spec: { matchLabels: { 'kubernetes.io/arch': 'amd64' } },
};
const rendered = renderSet([
  region,
  {
    apiVersion: 'extendeddeployment.io/v1beta1',
    kind: 'ExtendedDeployment',
    metadata: { name: 'web', namespace: 'shop' },
    spec: {
      replicas: 3,
      selector: { matchLabels: { app: 'web' } },
      template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'app', image: 'web:1' }] } },
      regions: [{ name: 'amd' }],
    },
  },
]);
if (!rendered.ok) throw new Error(JSON.stringify(rendered.problems));
const ed = rendered.value.extendedDeployments[0]!.manifest as ExtendedDeploymentObject;
const revision = rendered.value.extendedDeployments[0]!.regions[0]!.revision;

/** The regional ReplicaSet web-amd as the ReplicaSet controller reports it: 3 replicas, `ready` of them Ready. */
const replicaSet = (status: Record<string, unknown>): WorkloadObject => ({
  metadata: { name: 'web-amd', namespace: 'shop', uid: 'rs-uid', generation: 4, labels: { [NAME_LABEL]: 'web', [REGION_LABEL]: 'amd' } },
  spec: { replicas: 3, template: { metadata: { labels: { app: 'web', [REVISION_LABEL]: revision } } } },
  status: { observedGeneration: 4, replicas: 3, ...status },
});

describe('replicaSetReads', () => {
  const counting = replicaSet({ readyReplicas: 1, availableReplicas: 0, fullyLabeledReplicas: 3 });
  const counted = replicaSet({ readyReplicas: 3, availableReplicas: 3, fullyLabeledReplicas: 3, replicas: 3 });

  it('is the same for versions that differ in the counts the ReplicaSet controller keeps, and so is what observe makes of them', () => {
    expect(replicaSetReads(counted)).toBe(replicaSetReads(counting));
    const inputOf = (rs: WorkloadObject) => {
      const observed = observe(ed, [region], { replicaSets: [rs], deployments: [] }, [], Date.UTC(2026, 10, 30));
      if (!observed.ok) throw new Error(JSON.stringify(observed.problems));
      return observed.input;
    };
    expect(inputOf(counted)).toEqual(inputOf(counting));
  });

  it('changes with anything observe reads: the spec (generation), labels, annotations, owners, deletion, the report', () => {
    const changes: [string, (rs: WorkloadObject) => WorkloadObject][] = [
      ['spec', (rs) => ({ ...rs, metadata: { ...rs.metadata, generation: 5 } })],
      ['labels', (rs) => ({ ...rs, metadata: { ...rs.metadata, labels: { ...rs.metadata?.labels, extra: 'x' } } })],
      ['group record', (rs) => ({ ...rs, metadata: { ...rs.metadata, annotations: { [GROUP_RECORD_ANNOTATION]: '{}' } } })],
      [
        'owner',
        (rs) => ({
          ...rs,
          metadata: { ...rs.metadata, ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'web-amd', uid: 'd', controller: true }] },
        }),
      ],
      ['deletion', (rs) => ({ ...rs, metadata: { ...rs.metadata, deletionTimestamp: '2026-11-30T12:00:00Z' } })],
      ['reported generation', (rs) => ({ ...rs, status: { ...rs.status, observedGeneration: 5 } })],
      ['terminating pods', (rs) => ({ ...rs, status: { ...rs.status, terminatingReplicas: 1 } })],
    ];
    for (const [what, change] of changes) expect(replicaSetReads(change(counted)), what).not.toBe(replicaSetReads(counted));
  });
});
