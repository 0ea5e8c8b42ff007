import { describe, expect, it } from 'vitest';
import { formatProblem } from '../problems.js';
import { isAgentDeployment, memberAgent } from './agent-member.js';
import { renderFleet } from './render.js';

const V = 'extendeddeployment.io/v1beta1';
const labels = { 'app.kubernetes.io/name': 'agent', 'app.kubernetes.io/component': 'agent', 'app.kubernetes.io/part-of': 'extended-deployment' };
/** An agent install's Deployment as AgentInstall writes it, as far as a fleet render reads it. */
const agent = (args: string[] = ['agent', '--log-level=info'], pod: Record<string, unknown> = {}) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'agent', namespace: 'ops', labels },
  spec: {
    template: {
      spec: {
        ...pod,
        containers: [
          { name: 'sidecar', image: 's' },
          { name: 'agent', image: 'edctl', args },
        ],
      },
    },
  },
});
type Pod = { volumes?: unknown[]; containers: { name: string; args?: string[]; volumeMounts?: unknown[] }[] };
const podOf = (object: unknown) => (object as { spec: { template: { spec: Pod } } }).spec.template.spec;

describe('isAgentDeployment', () => {
  it("knows an agent install's Deployment by its labels and its agent container", () => {
    expect(isAgentDeployment(agent())).toBe(true);
    expect(isAgentDeployment({ ...agent(), metadata: { name: 'agent', labels: { 'app.kubernetes.io/component': 'agent' } } })).toBe(false);
    expect(isAgentDeployment({ ...agent(), kind: 'StatefulSet' })).toBe(false);
    expect(isAgentDeployment({ ...agent(), spec: { template: { spec: { containers: [{ name: 'web' }] } } } })).toBe(false);
    expect(isAgentDeployment(null)).toBe(false);
  });
});

describe('memberAgent', () => {
  it('adds the flags, the peer volume and its mount to a copy, next to what the pod has', () => {
    const raw = agent(['agent'], { volumes: [{ name: 'metrics-cert', secret: { secretName: 'tls' } }] });
    const before = structuredClone(raw);
    const { object, problem } = memberAgent(raw, { cluster: 'eu-1', peers: ['us-1'] });
    expect(problem).toBeUndefined();
    expect(raw).toEqual(before);
    const pod = podOf(object);
    expect(pod.containers[0]).toEqual({ name: 'sidecar', image: 's' });
    expect(pod.containers[1]?.args).toEqual(['agent', '--cluster-name=eu-1', '--peer-kubeconfigs=/etc/extended-deployment/peers']);
    expect(pod.containers[1]?.volumeMounts).toEqual([{ name: 'fleet-peers', mountPath: '/etc/extended-deployment/peers', readOnly: true }]);
    expect(pod.volumes).toEqual([
      { name: 'metrics-cert', secret: { secretName: 'tls' } },
      {
        name: 'fleet-peers',
        projected: { sources: [{ secret: { name: 'extendeddeployment-peer-us-1', optional: true, items: [{ key: 'kubeconfig', path: 'us-1/kubeconfig' }] } }] },
      },
    ]);
  });

  it('leaves an agent that names this cluster as written, and reports one that names another', () => {
    for (const args of [
      ['agent', '--cluster-name=eu-1'],
      ['agent', '--cluster-name', 'eu-1'],
    ]) {
      const raw = agent(args);
      expect(memberAgent(raw, { cluster: 'eu-1', peers: ['us-1'] })).toEqual({ object: raw });
      expect(memberAgent(raw, { cluster: 'us-1', peers: ['eu-1'] }).problem).toEqual({
        path: ['spec', 'template', 'spec', 'containers', 1, 'args'],
        message: `names cluster "eu-1" (--cluster-name), but is rendered into cluster us-1: leave the fleet membership out, each member's copy gets its own`,
      });
    }
  });
});

describe('a fleet render', () => {
  const clusters = ['canary-1', 'eu-1', 'us-1'].map((name) => ({ apiVersion: V, kind: 'Cluster', metadata: { name }, spec: {} }));

  it("gives each member's copy of the agent its own cluster, the others as peers", () => {
    const result = renderFleet([...clusters, agent()]);
    if (!result.ok || result.value.layout !== 'clusters') throw new Error('no clusters');
    expect(
      result.value.clusters.map((c) => {
        const pod = podOf(c.objects[0]);
        const sources = (pod.volumes?.[0] as { projected: { sources: { secret: { name: string } }[] } }).projected.sources;
        return [pod.containers[1]?.args?.find((a) => a.startsWith('--cluster-name')), sources.map((s) => s.secret.name)];
      }),
    ).toEqual([
      ['--cluster-name=canary-1', ['extendeddeployment-peer-eu-1', 'extendeddeployment-peer-us-1']],
      ['--cluster-name=eu-1', ['extendeddeployment-peer-canary-1', 'extendeddeployment-peer-us-1']],
      ['--cluster-name=us-1', ['extendeddeployment-peer-canary-1', 'extendeddeployment-peer-eu-1']],
    ]);
  });

  it('refuses an agent install that names one member, in every other', () => {
    const result = renderFleet([...clusters, agent(['agent', '--cluster-name=eu-1'])]);
    expect(result.ok ? [] : result.problems.map(formatProblem)).toEqual(
      ['canary-1', 'us-1'].map(
        (c) =>
          `Deployment ops/agent: spec.template.spec.containers[1].args: names cluster "eu-1" (--cluster-name), but is rendered into cluster ${c}: leave the fleet membership out, each member's copy gets its own`,
      ),
    );
  });
});
