import { describe, expect, it } from 'vitest';
import { GROUP_RECORD_ANNOTATION, NAME_LABEL, REGION_LABEL, REVISION_LABEL } from '../labels.js';
import type { WorkloadObject } from '../kube/objects.js';
import { replicaSetReads } from './replicaset-reads.js';

/** The regional ReplicaSet web-amd with the status the ReplicaSet controller reports. */
const replicaSet = (status: Record<string, unknown>): WorkloadObject => ({
  metadata: { name: 'web-amd', namespace: 'shop', uid: 'rs-uid', generation: 4, labels: { [NAME_LABEL]: 'web', [REGION_LABEL]: 'amd' } },
  spec: { replicas: 3, template: { metadata: { labels: { app: 'web', [REVISION_LABEL]: 'r1' } } } },
  status: { observedGeneration: 4, replicas: 3, ...status },
});

describe('replicaSetReads', () => {
  const counting = replicaSet({ readyReplicas: 1, availableReplicas: 0, fullyLabeledReplicas: 3 });
  const counted = replicaSet({ readyReplicas: 3, availableReplicas: 3, fullyLabeledReplicas: 3, replicas: 3 });

  it('is the same for versions that differ in the counts the ReplicaSet controller keeps (observe.test.ts: so is its input)', () => {
    expect(replicaSetReads(counted)).toBe(replicaSetReads(counting));
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
