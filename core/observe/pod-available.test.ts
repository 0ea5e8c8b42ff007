import { describe, expect, it } from 'vitest';
import type { ExtendedDeploymentObject, PodObject } from '../kube/objects.js';
import { podAvailableAt } from './pod-available.js';

const READY_AT = '2026-01-01T00:00:10Z';
const readyMs = Date.parse(READY_AT);

const ed = (strategy: Record<string, unknown> | undefined, resourceVersion = '1'): ExtendedDeploymentObject => ({
  apiVersion: 'extendeddeployment.io/v1beta1',
  kind: 'ExtendedDeployment',
  metadata: { name: 'web', namespace: 'shop', resourceVersion },
  spec: {
    selector: { matchLabels: { app: 'web' } },
    template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'app', image: 'web:1' }] } },
    regions: [{ name: 'amd', replicas: 2 }],
    ...(strategy && { strategy }),
  },
});

const pod = (o: { ready?: boolean; deleting?: boolean; phase?: string } = {}): PodObject => ({
  metadata: { name: 'web-amd-1', namespace: 'shop', resourceVersion: '7', ...(o.deleting && { deletionTimestamp: '2026-01-01T00:00:11Z' }) },
  spec: { nodeName: 'n1', containers: [{ name: 'app', image: 'web:2' }] },
  status: { phase: o.phase ?? 'Running', conditions: [{ type: 'Ready', status: o.ready === false ? 'False' : 'True', lastTransitionTime: READY_AT }] },
});

describe('podAvailableAt', () => {
  it('is the Ready condition time plus the spec minReadySeconds, or its default of 5', () => {
    expect(podAvailableAt(ed({ minReadySeconds: 3 }), pod())).toBe(readyMs + 3_000);
    expect(podAvailableAt(ed({ minReadySeconds: 0 }), pod())).toBe(readyMs);
    expect(podAvailableAt(ed(undefined), pod())).toBe(readyMs + 5_000);
  });

  it('has no instant for a pod that is not Ready, is terminating or terminal', () => {
    expect(podAvailableAt(ed({ minReadySeconds: 3 }), pod({ ready: false }))).toBeUndefined();
    expect(podAvailableAt(ed({ minReadySeconds: 3 }), pod({ deleting: true }))).toBeUndefined();
    expect(podAvailableAt(ed({ minReadySeconds: 3 }), pod({ phase: 'Succeeded' }))).toBeUndefined();
  });

  it('has no instant under a spec the agent cannot act on (its looks report the problem)', () => {
    expect(podAvailableAt(ed({ minReadySeconds: -1 }), pod())).toBeUndefined();
    expect(podAvailableAt(ed({ minReadySeconds: '1s' }, '2'), pod())).toBeUndefined();
  });
});
