// What the caches keep of a regional workload or an ExtendedDeployment (pooledWorkload): all of it but managedFields,
// its repeated strings shared.
import type { V1ReplicaSet } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { NAME_LABEL, REGION_LABEL, REVISION_LABEL } from '../core/labels.js';
import { pooledWorkload } from './informers.js';
import { retainedBytes } from '../core/heap-test-support.js';

/** A regional ReplicaSet as the API server sends it, its long strings `fill` characters longer. */
function replicaSet(name: string, fill = 0): V1ReplicaSet {
  const long = (what: string) => `${what}${'x'.repeat(fill)}`;
  const labels = { app: long('web'), [NAME_LABEL]: 'web', [REGION_LABEL]: 'amd', [REVISION_LABEL]: long('r1') };
  return {
    apiVersion: 'apps/v1',
    kind: 'ReplicaSet',
    metadata: {
      name,
      namespace: long('shop'),
      uid: `uid-${name}`,
      resourceVersion: '42',
      generation: 3,
      labels,
      annotations: { 'example.com/owner': long('team-a') },
      ownerReferences: [{ apiVersion: 'rollout.extendeddeployment.io/v1beta1', kind: 'ExtendedDeployment', name: 'web', uid: long('ed'), controller: true }],
      managedFields: [{ manager: 'edctl-agent', operation: 'Apply', fieldsV1: { 'f:spec': {} } }],
    },
    spec: {
      replicas: 3,
      selector: { matchLabels: labels },
      template: {
        metadata: { labels },
        spec: {
          containers: [
            {
              name: long('app'),
              image: long('registry.example/web:2'),
              env: [{ name: 'MODE', value: long('prod') }],
              args: [long('--serve'), long('--port=8080')],
              resources: { requests: { cpu: '100m', memory: '64Mi' } },
            },
          ],
          nodeSelector: { 'kubernetes.io/arch': long('amd64') },
        },
      },
    },
    status: {
      replicas: 3,
      readyReplicas: 2,
      availableReplicas: 2,
      observedGeneration: 3,
      conditions: [{ type: 'ReplicaFailure', status: 'False', message: long('m') }],
    },
  };
}

describe('pooledWorkload', () => {
  it('keeps all of it but managedFields: the reconciler reads the same object', () => {
    const whole = replicaSet('web-amd-r1');
    const { managedFields: _dropped, ...metadata } = whole.metadata!;
    expect(pooledWorkload(structuredClone(whole))).toEqual({ ...whole, metadata });
  });

  it('keeps one copy of the strings of its metadata and spec that other workloads repeat', () => {
    const fill = 4000;
    const text = (i: number) => JSON.stringify(replicaSet(`web-amd-${i}`, fill));
    // As a watch delivers them: each parsed from its own text, so each has copies of its own of every string.
    const sets = (n: number) => Array.from({ length: n }, (_, i) => JSON.parse(text(i)) as V1ReplicaSet);
    const whole = retainedBytes(() => sets(300));
    const pooled = retainedBytes(() => sets(300).map((rs) => pooledWorkload(rs)));
    // 15 long strings of 4 KB in metadata and spec (11 distinct: the labels come three times) and 1 in status: 19 MB
    // over 300 workloads whole; pooled, 44 KB for those of metadata and spec and each status' own message, 1.2 MB.
    expect(whole).toBeGreaterThan(18_000_000);
    expect(pooled).toBeLessThan(3_000_000);
  });
});
