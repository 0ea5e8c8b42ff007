import { describe, expect, it } from 'vitest';
import { podRequests, podsThatFit, sumResources } from './resources.js';

describe('podRequests', () => {
  it('sums regular containers and reads limits where requests are unset', () => {
    const requests = podRequests({
      containers: [{ resources: { requests: { cpu: '250m', memory: '256Mi' } } }, { resources: { limits: { cpu: '500m', 'nvidia.com/gpu': '1' } } }],
    });
    expect(requests).toEqual({ cpu: 0.75, memory: 256 * 2 ** 20, 'nvidia.com/gpu': 1 });
  });

  it('takes the largest one-off init container when it exceeds the regular sum', () => {
    const requests = podRequests({
      containers: [{ resources: { requests: { cpu: '100m' } } }],
      initContainers: [{ resources: { requests: { cpu: '2' } } }, { resources: { requests: { cpu: '1' } } }],
    });
    expect(requests.cpu).toBe(2);
  });

  it('adds sidecars (restartPolicy Always) to the regular sum and to later init containers', () => {
    const requests = podRequests({
      containers: [{ resources: { requests: { cpu: '1' } } }],
      initContainers: [{ restartPolicy: 'Always', resources: { requests: { cpu: '500m' } } }, { resources: { requests: { cpu: '1400m' } } }],
    });
    // regular 1 + sidecar 0.5 = 1.5; the one-off init runs beside the sidecar: 0.5 + 1.4 = 1.9.
    expect(requests.cpu).toBeCloseTo(1.9, 9);
  });

  it('adds the pod overhead', () => {
    expect(podRequests({ containers: [{ resources: { requests: { memory: '1Gi' } } }], overhead: { memory: '1Gi' } })).toEqual({ memory: 2 * 2 ** 30 });
  });

  it('is empty for a pod without requests', () => {
    expect(podRequests({ containers: [{}] })).toEqual({});
  });
});

describe('podsThatFit', () => {
  const node = { cpu: 4, memory: 8 * 2 ** 30, pods: 20 };
  it('is decided by the tightest resource, counting what is used', () => {
    expect(podsThatFit(node, { cpu: 2.5, pods: 3 }, { cpu: 0.5, memory: 2 ** 30 })).toBe(3);
    expect(podsThatFit(node, { memory: 7 * 2 ** 30 }, { cpu: 0.1, memory: 2 ** 30 })).toBe(1);
  });

  it('counts a pod without requests against the pod limit only', () => {
    expect(podsThatFit(node, { pods: 18 }, {})).toBe(2);
  });

  it('fits nothing when the node lacks a requested resource', () => {
    expect(podsThatFit(node, {}, { 'nvidia.com/gpu': 1 })).toBe(0);
    expect(podsThatFit({ ...node, 'nvidia.com/gpu': 2 }, { 'nvidia.com/gpu': 1 }, { 'nvidia.com/gpu': 1 })).toBe(1);
  });

  it('never goes negative on an overcommitted node and tolerates float sums', () => {
    expect(podsThatFit(node, { cpu: 5 }, { cpu: 1 })).toBe(0);
    const used = sumResources([{ cpu: 0.1 }, { cpu: 0.2 }]);
    expect(podsThatFit({ cpu: 1, pods: 10 }, used, { cpu: 0.7 })).toBe(1);
  });
});
