import type { V1Node, V1Pod } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { ClusterNodes, usagePod, type UsagePod, type UsageSource } from './cluster-nodes.js';
import { nodeView } from './node-view.js';

const node = (name: string): V1Node => ({
  metadata: { name, labels: { zone: 'a' } },
  spec: { unschedulable: true, taints: [{ key: 'node.kubernetes.io/unreachable', effect: 'NoExecute', timeAdded: new Date(Date.UTC(2026, 0, 1)) }] },
  status: {
    allocatable: { cpu: '3800m', memory: '7Gi', pods: '20', 'nvidia.com/gpu': '2' },
    conditions: [{ type: 'Ready', status: 'Unknown', lastTransitionTime: '2026-01-01T00:00:05Z' as unknown as Date }],
  },
});
const pod = (name: string, nodeName: string, cpu: string): V1Pod => ({
  metadata: { name, namespace: 'x', uid: name, resourceVersion: '1', labels: { big: 'label' }, annotations: { a: 'b' } },
  spec: { nodeName, containers: [{ name: 'c', image: 'i', resources: { requests: { cpu } } }] },
  status: { phase: 'Running' },
});

describe('nodeView', () => {
  it('reads readiness, cordon, taints with their times and allocatable quantities', () => {
    expect(nodeView(node('n1'), {})).toEqual({
      name: 'n1',
      labels: { zone: 'a' },
      ready: false,
      readySince: Date.UTC(2026, 0, 1, 0, 0, 5),
      unschedulable: true,
      taints: [{ key: 'node.kubernetes.io/unreachable', value: undefined, effect: 'NoExecute', timeAdded: Date.UTC(2026, 0, 1) }],
      allocatable: { cpu: 3.8, memory: 7 * 2 ** 30, pods: 20, 'nvidia.com/gpu': 2 },
      requested: {},
    });
  });
});

describe('usagePod', () => {
  it('keeps only where the pod runs and what it requests', () => {
    expect(usagePod(pod('p', 'n1', '250m'))).toEqual({
      metadata: { name: 'p', namespace: 'x', uid: 'p', resourceVersion: '1' },
      spec: { nodeName: 'n1' },
      requests: { cpu: 0.25 },
    });
  });
});

describe('ClusterNodes', () => {
  function source(pods: UsagePod[]) {
    let started = 0;
    const usage: UsageSource = { list: () => pods, get: () => undefined, start: () => void started++, synced: () => started > 0 };
    return { usage, started: () => started };
  }
  const nodes = { list: () => [node('n1'), node('n2')], get: () => undefined };

  it('counts no usage until asked to, then sums requests and pod slots per node', () => {
    const pods = [usagePod(pod('a', 'n1', '1')), usagePod(pod('b', 'n1', '500m')), usagePod(pod('c', 'n2', '100m'))];
    const { usage, started } = source(pods);
    const cluster = new ClusterNodes(nodes, usage);
    expect(cluster.usageKnown()).toBe(false);
    expect(cluster.list().map((n) => n.requested)).toEqual([{}, {}]);
    cluster.trackUsage();
    cluster.trackUsage();
    expect(started()).toBe(1);
    expect(cluster.usageKnown()).toBe(true);
    expect(cluster.list().map((n) => n.requested)).toEqual([
      { pods: 2, cpu: 1.5 },
      { pods: 1, cpu: 0.1 },
    ]);
  });

  it('rebuilds its views only after a change', () => {
    const pods = [usagePod(pod('a', 'n1', '1'))];
    const { usage } = source(pods);
    const cluster = new ClusterNodes(nodes, usage);
    cluster.trackUsage();
    const first = cluster.list();
    pods.push(usagePod(pod('b', 'n1', '1')));
    expect(cluster.list()).toBe(first);
    cluster.changed();
    expect(cluster.list()[0]?.requested).toEqual({ pods: 2, cpu: 2 });
  });
});
