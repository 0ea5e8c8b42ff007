import { describe, expect, it } from 'vitest';
import { NAME_LABEL, REVISION_LABEL } from '../labels.js';
import { renderSet } from '../render.js';
import type { DeployRegionObject, ExtendedDeploymentObject, WorkloadObject } from '../kube/objects.js';
import { observe } from './observe.js';

const regions: DeployRegionObject[] = [
  { apiVersion: 'extendeddeployment.io/v1beta1', kind: 'DeployRegion', metadata: { name: 'amd' }, spec: { matchLabels: { 'kubernetes.io/arch': 'amd64' } } },
];
const ed: ExtendedDeploymentObject = {
  apiVersion: 'extendeddeployment.io/v1beta1',
  kind: 'ExtendedDeployment',
  metadata: { name: 'web', namespace: 'shop', generation: 1 },
  spec: {
    subsetType: 'Deployment',
    selector: { matchLabels: { app: 'web' } },
    template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'app', image: 'shop/web:1' }] } },
    regions: [{ name: 'amd', replicas: 3 }],
  },
};

describe('snapshot of a native Deployment (compat mode)', () => {
  it("reads paused, generations and the Deployment controller's counts", () => {
    const rendered = renderSet([...regions, ed]);
    if (!rendered.ok) throw new Error(JSON.stringify(rendered.problems));
    const revision = rendered.value.extendedDeployments[0]?.regions[0]?.revision ?? '';
    const deployment: WorkloadObject = {
      metadata: { name: 'web-amd', namespace: 'shop', generation: 4, labels: { [NAME_LABEL]: 'web' } },
      spec: { replicas: 3, paused: true, template: { metadata: { labels: { [REVISION_LABEL]: revision } } } },
      status: { observedGeneration: 3, replicas: 3, updatedReplicas: 1, readyReplicas: 3, availableReplicas: 2 },
    };
    const snapshot = observe(ed, regions, { replicaSets: [], deployments: [deployment] }, [], Date.UTC(2026, 0, 1));
    if (!snapshot.ok) throw new Error(JSON.stringify(snapshot.problems));
    expect(snapshot.input.regions[0]?.workload).toEqual({
      name: 'web-amd',
      templateRevision: revision,
      replicas: 3,
      deployment: { paused: true, generation: 4, observedGeneration: 3, replicas: 3, updatedReplicas: 1, readyReplicas: 3, availableReplicas: 2 },
    });
  });
});
