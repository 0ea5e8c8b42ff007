import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { SWAP_STATE_ANNOTATION } from '../labels.js';
import type { DeployRegionObject, ExtendedDeploymentObject, PodObject, WorkloadObject } from '../kube/objects.js';
import { controlledBy } from '../kube/test-support.js';
import { observe } from './observe.js';

const docs = (file: string) =>
  parseAllDocuments(readFileSync(file, 'utf8')).map((d) => d.toJS() as { kind: string; metadata: { name: string; namespace?: string } });

describe('snapshot of in-place updates', () => {
  it('marks an old pod swappable to the new images, and reads its containers and swap state', () => {
    const regions = docs('dist/regions.k8s.yaml').filter((o) => o.kind === 'DeployRegion') as DeployRegionObject[];
    const gpu = docs('dist/gpu-inference.k8s.yaml');
    const ed = structuredClone(gpu.find((o) => o.kind === 'ExtendedDeployment')) as ExtendedDeploymentObject & {
      spec: { template: { spec: { containers: { image: string }[] } } };
    };
    // Git changes the image: the rendered ExtendedDeployment and ReplicaSets carry the new revision (render them).
    ed.spec.template.spec.containers[0]!.image = 'registry.example.com/ml/llm-server:1.0.0';
    delete ed.metadata?.annotations;
    const snapshotOf = (workloads: WorkloadObject[], pod: PodObject) =>
      observe(ed, regions, { replicaSets: workloads, deployments: [] }, [pod], Date.UTC(2026, 0, 1));
    const first = snapshotOf([], { metadata: { name: 'x' } });
    if (!first.ok) throw new Error(JSON.stringify(first.problems));
    const target = first.input.regions[0]?.targetRevision ?? '';
    const oldRs = gpu.find((o) => o.kind === 'ReplicaSet' && o.metadata.name === 'llm-server-gpu-a') as WorkloadObject & {
      spec: { template: { metadata: { labels: Record<string, string> }; spec: { containers: { image: string }[] } } };
    };
    const rs = structuredClone(oldRs);
    rs.spec.template.metadata.labels['extendeddeployment.io/revision'] = target;
    rs.spec.template.spec.containers[0]!.image = 'registry.example.com/ml/llm-server:1.0.0';
    rs.metadata = { ...rs.metadata, namespace: 'ml' };

    // A pod a real API server created from the old template (captured on the lab), in namespace ml.
    const captured = JSON.parse(readFileSync('core/inplace/fixtures/pod-llm-server-gpu-a.json', 'utf8')) as PodObject;
    const state = { revision: target, phase: 'draining', since: 1 };
    const pod: PodObject = {
      ...captured,
      // The capture keeps no ownerReferences; its ReplicaSet's are set as the ReplicaSet controller sets them.
      metadata: {
        ...captured.metadata,
        name: 'p1',
        namespace: 'ml',
        uid: 'u1',
        resourceVersion: '42',
        annotations: { [SWAP_STATE_ANNOTATION]: JSON.stringify(state) },
        ownerReferences: controlledBy('llm-server-gpu-a'),
      },
      status: {
        phase: 'Running',
        containerStatuses: [{ name: 'server', containerID: 'containerd://abc', restartCount: 2, ready: true, state: { running: {} } }],
      },
    };
    const snapshot = snapshotOf([rs], pod);
    if (!snapshot.ok) throw new Error(JSON.stringify(snapshot.problems));
    expect(snapshot.input.regions[0]?.pods[0]).toMatchObject({
      resourceVersion: '42',
      swap: state,
      swappable: { server: 'registry.example.com/ml/llm-server:1.0.0' },
      containers: [
        { name: 'server', image: 'registry.example.com/ml/llm-server:0.9.1', containerID: 'containerd://abc', restartCount: 2, running: true, ready: true },
      ],
    });
  });
});
