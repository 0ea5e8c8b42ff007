import { Chart, Testing } from 'cdk8s';
import { describe, expect, it } from 'vitest';
import { AgentInstall, RenderError, type AgentInstallProps } from './index.js';

type Obj = { apiVersion: string; kind: string; metadata: { name: string; namespace?: string; annotations?: Record<string, string> }; [key: string]: unknown };
type Rule = { apiGroups: string[]; resources: string[]; verbs: string[]; resourceNames?: string[] };

function render(props: Partial<AgentInstallProps> = {}, chartNamespace?: string): Obj[] {
  const chart = new Chart(Testing.app(), 'agent-install', chartNamespace !== undefined ? { namespace: chartNamespace } : {});
  new AgentInstall(chart, 'agent', { image: 'registry.example.com/edctl:1.0.0', ...props });
  return Testing.synth(chart) as Obj[];
}

const find = (objects: Obj[], kind: string, name?: string) => {
  const found = objects.find((o) => o.kind === kind && (name === undefined || o.metadata.name === name));
  if (!found) throw new Error(`no ${kind} ${name ?? ''}`);
  return found;
};
const rulesOf = (o: Obj) => o['rules'] as Rule[];
const row = (r: Rule) => `${r.apiGroups.join(',')} ${r.resources.join(',')} ${r.verbs.join(',')}${r.resourceNames ? ` [${r.resourceNames.join(',')}]` : ''}`;

/** The agent's container and pod spec from the rendered Deployment. */
function podOf(objects: Obj[]) {
  const deployment = find(objects, 'Deployment') as Obj & {
    spec: { replicas: number; template: { spec: Record<string, unknown> & { containers: Record<string, unknown>[] } } };
  };
  const pod = deployment.spec.template.spec;
  const container = pod.containers[0] as Record<string, unknown> & { args: string[]; securityContext: Record<string, unknown> };
  return { deployment, pod, container };
}

describe('AgentInstall', () => {
  it("renders the install in its namespace, every object in the CRDs' sync wave", () => {
    const objects = render();
    expect(objects.map((o) => `${o.kind} ${o.metadata.namespace ?? '-'}/${o.metadata.name}`)).toEqual([
      'Namespace -/extended-deployment-system',
      'ServiceAccount extended-deployment-system/extended-deployment-agent',
      'ClusterRole -/extended-deployment-agent',
      'ClusterRoleBinding -/extended-deployment-agent',
      'ClusterRole -/extended-deployment-agent-metrics-reader',
      'Role extended-deployment-system/extended-deployment-agent-leader-election',
      'RoleBinding extended-deployment-system/extended-deployment-agent-leader-election',
      'ValidatingAdmissionPolicy -/extended-deployment-agent-pods',
      'ValidatingAdmissionPolicyBinding -/extended-deployment-agent-pods',
      'ValidatingAdmissionPolicy -/extended-deployment-agent-replicasets',
      'ValidatingAdmissionPolicyBinding -/extended-deployment-agent-replicasets',
      'ValidatingAdmissionPolicy -/extended-deployment-agent-deployments',
      'ValidatingAdmissionPolicyBinding -/extended-deployment-agent-deployments',
      'ValidatingAdmissionPolicy -/extended-deployment-agent-statefulsets',
      'ValidatingAdmissionPolicyBinding -/extended-deployment-agent-statefulsets',
      'ValidatingAdmissionPolicy -/extended-deployment-agent-controllerrevisions',
      'ValidatingAdmissionPolicyBinding -/extended-deployment-agent-controllerrevisions',
      'ValidatingAdmissionPolicy -/extendeddeployment-adoption-freeze',
      'ValidatingAdmissionPolicyBinding -/extendeddeployment-adoption-freeze',
      'Deployment extended-deployment-system/extended-deployment-agent',
      'PodDisruptionBudget extended-deployment-system/extended-deployment-agent',
      'Service extended-deployment-system/extended-deployment-agent',
    ]);
    // Namespace, RBAC and policies with the CRDs; what has a health of its own with the workloads, so that an agent pod
    // on a failed node holds no sync.
    const running = new Set(['Deployment', 'PodDisruptionBudget', 'Service']);
    for (const o of objects) expect(o.metadata.annotations?.['argocd.argoproj.io/sync-wave'], `${o.kind}`).toBe(running.has(o.kind) ? '0' : '-2');
  });

  it('grants exactly the verbs the agent uses, cluster-wide, with no wildcard and no Secrets', () => {
    const role = find(render(), 'ClusterRole');
    expect(rulesOf(role).map(row)).toEqual([
      'extendeddeployment.io extendeddeployments list,watch',
      'extendeddeployment.io extendeddeployments/status update',
      'extendeddeployment.io deployregions list,watch',
      'extendeddeployment.io deployregions/status update',
      'apps replicasets list,watch,patch,create,delete',
      'apps deployments list,watch,patch',
      'apps statefulsets list,watch,patch',
      'apps controllerrevisions list,watch,create,update,delete',
      ' pods list,watch',
      ' pods patch,create',
      'apps deployments/scale patch',
      'extendeddeployment.io inplacesets list',
      'extendeddeployment.io inplacesets/scale patch',
      'apps replicasets/scale patch',
      ' pods/eviction create',
      ' pods/status patch',
      ' services list,watch',
      'gateway.networking.k8s.io httproutes list,watch',
      ' nodes list,watch',
      ' events create',
      'authentication.k8s.io tokenreviews create',
      'authorization.k8s.io subjectaccessreviews create',
    ]);
    for (const rule of rulesOf(role)) {
      for (const value of [...rule.apiGroups, ...rule.resources, ...rule.verbs]) expect(value).not.toContain('*');
    }
    expect(JSON.stringify(role).toLowerCase()).not.toContain('secret');
    expect(JSON.stringify(role).toLowerCase()).not.toContain('configmap');
  });

  it('binds the ClusterRole and a Lease-only Role to the ServiceAccount', () => {
    const objects = render();
    const subject = [{ kind: 'ServiceAccount', name: 'extended-deployment-agent', namespace: 'extended-deployment-system' }];
    expect(find(objects, 'ClusterRoleBinding')['subjects']).toEqual(subject);
    expect(find(objects, 'ClusterRoleBinding')['roleRef']).toEqual({
      apiGroup: 'rbac.authorization.k8s.io',
      kind: 'ClusterRole',
      name: 'extended-deployment-agent',
    });
    expect(rulesOf(find(objects, 'Role')).map(row)).toEqual([
      'coordination.k8s.io leases create',
      'coordination.k8s.io leases get,update [extended-deployment-agent]',
    ]);
    expect(find(objects, 'RoleBinding')['subjects']).toEqual(subject);
  });

  it('with watchNamespaces, namespaced permissions move to a Role in each of those namespaces', () => {
    const objects = render({ watchNamespaces: ['shop', 'pay'] });
    // Cluster-wide still: DeployRegions and Nodes, pods for capacity (every pod on a region's nodes counts), and Events
    // about DeployRegions (filed in default).
    expect(rulesOf(find(objects, 'ClusterRole')).map(row)).toEqual([
      'extendeddeployment.io deployregions list,watch',
      'extendeddeployment.io deployregions/status update',
      ' pods list,watch',
      ' nodes list,watch',
      ' events create',
      'authentication.k8s.io tokenreviews create',
      'authorization.k8s.io subjectaccessreviews create',
    ]);
    const roles = objects.filter((o) => o.kind === 'Role' && o.metadata.name === 'extended-deployment-agent');
    expect(roles.map((r) => r.metadata.namespace)).toEqual(['shop', 'pay']);
    for (const watch of roles)
      expect(rulesOf(watch).map((r) => r.resources[0])).toEqual([
        'extendeddeployments',
        'extendeddeployments/status',
        'replicasets',
        'deployments',
        'statefulsets',
        'controllerrevisions',
        'pods',
        'deployments/scale',
        'inplacesets',
        'inplacesets/scale',
        'replicasets/scale',
        'pods/eviction',
        'pods/status',
        'services',
        'httproutes',
      ]);
    const bindings = objects.filter((o) => o.kind === 'RoleBinding' && o.metadata.name === 'extended-deployment-agent');
    expect(bindings.map((b) => [b.metadata.namespace, (b['roleRef'] as { name: string }).name])).toEqual([
      ['shop', 'extended-deployment-agent'],
      ['pay', 'extended-deployment-agent'],
    ]);
    expect(podOf(objects).container.args).toContain('--namespace=shop,pay');
  });

  it('grants no write on Services or HTTPRoutes unless traffic is on', () => {
    const objects = render();
    expect(objects.filter((o) => o.metadata.name.endsWith('-traffic'))).toEqual([]);
    const writes = objects
      .filter((o) => o.kind === 'ClusterRole' || o.kind === 'Role')
      .flatMap((o) => rulesOf(o))
      .filter((r) => (r.resources ?? []).some((x) => x === 'services' || x === 'httproutes'));
    expect(writes.map(row)).toEqual([' services list,watch', 'gateway.networking.k8s.io httproutes list,watch']);
  });

  it('with traffic, grants the writes of traffic shifting in a ClusterRole of their own, bound to the agent', () => {
    const objects = render({ traffic: true });
    const role = find(objects, 'ClusterRole', 'extended-deployment-agent-traffic');
    expect(rulesOf(role).map(row)).toEqual([
      ' services create,patch,delete',
      'gateway.networking.k8s.io httproutes create,patch,delete',
      'extendeddeployment.io extendeddeployments/finalizers update',
    ]);
    const binding = find(objects, 'ClusterRoleBinding', 'extended-deployment-agent-traffic');
    expect(binding['roleRef']).toEqual({ apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'extended-deployment-agent-traffic' });
    expect(binding['subjects']).toEqual([{ kind: 'ServiceAccount', name: 'extended-deployment-agent', namespace: 'extended-deployment-system' }]);
    // RBAC with the CRDs, cluster-scoped even in a namespaced chart; the main role is unchanged.
    expect(role.metadata.annotations?.['argocd.argoproj.io/sync-wave']).toBe('-2');
    expect(find(render({ traffic: true }, 'apps'), 'ClusterRole', 'extended-deployment-agent-traffic').metadata.namespace).toBeUndefined();
    expect(rulesOf(find(objects, 'ClusterRole', 'extended-deployment-agent'))).toEqual(rulesOf(find(render(), 'ClusterRole', 'extended-deployment-agent')));
  });

  it('with traffic and watchNamespaces, the traffic writes are a Role in each watched namespace, nothing cluster-wide', () => {
    const objects = render({ traffic: true, watchNamespaces: ['shop', 'pay'] });
    expect(objects.filter((o) => o.metadata.name === 'extended-deployment-agent-traffic').map((o) => `${o.kind} ${o.metadata.namespace}`)).toEqual([
      'Role shop',
      'RoleBinding shop',
      'Role pay',
      'RoleBinding pay',
    ]);
    for (const o of objects.filter((x) => x.kind === 'Role' && x.metadata.name === 'extended-deployment-agent-traffic'))
      expect(rulesOf(o).map(row)).toEqual([
        ' services create,patch,delete',
        'gateway.networking.k8s.io httproutes create,patch,delete',
        'extendeddeployment.io extendeddeployments/finalizers update',
      ]);
    const binding = objects.find((o) => o.kind === 'RoleBinding' && o.metadata.name === 'extended-deployment-agent-traffic');
    expect(binding?.['roleRef']).toEqual({ apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'extended-deployment-agent-traffic' });
  });

  it.each([[[]], [['shop', 'shop']], [['Shop']]])('refuses watchNamespaces %j', (watchNamespaces) => {
    expect(() => render({ watchNamespaces })).toThrow(/watchNamespaces must name at least one namespace, each a DNS label, none twice/);
  });

  it('runs 2 leader-elected replicas with the Lease in their own namespace, secure metrics and the probes on a port of their own', () => {
    const { deployment, container } = podOf(render());
    expect(deployment.spec.replicas).toBe(2);
    expect(container.args).toEqual([
      'agent',
      '--lease-namespace=$(POD_NAMESPACE)',
      '--lease-name=extended-deployment-agent',
      '--leader-elect=true',
      '--metrics-bind-address=0.0.0.0:8080',
      '--metrics-secure=true',
      '--health-probe-bind-address=0.0.0.0:8081',
      '--log-level=info',
    ]);
    // The image's entry point with 2 MiB semi-spaces, no optimizing compiler and the heap sized for the 256Mi limit, as the benches measure the agent.
    expect(container['command']).toEqual(['node', '--max-semi-space-size=2', '--max-opt=1', '--max-old-space-size=192', 'lib/cli/main.js']);
    // glibc's malloc arenas capped at two, as the benches and e2e suites run the agent.
    expect(container['env']).toEqual([
      { name: 'POD_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
      { name: 'MALLOC_ARENA_MAX', value: '2' },
    ]);
    expect(container['ports']).toEqual([
      { name: 'metrics', containerPort: 8080, protocol: 'TCP' },
      { name: 'health', containerPort: 8081, protocol: 'TCP' },
    ]);
  });

  it('hardens the pod: non-root, read-only root, no privilege escalation, no capabilities, RuntimeDefault seccomp', () => {
    const { pod, container } = podOf(render());
    expect(container.securityContext).toEqual({
      runAsNonRoot: true,
      readOnlyRootFilesystem: true,
      allowPrivilegeEscalation: false,
      capabilities: { drop: ['ALL'] },
      seccompProfile: { type: 'RuntimeDefault' },
    });
    expect(pod['securityContext']).toMatchObject({ runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } });
    expect(pod['serviceAccountName']).toBe('extended-deployment-agent');
  });

  it('probes /healthz and /readyz on the health port and sets requests and limits', () => {
    const { container } = podOf(render());
    expect(container['livenessProbe']).toMatchObject({ httpGet: { path: '/healthz', port: 'health' } });
    expect(container['readinessProbe']).toMatchObject({ httpGet: { path: '/readyz', port: 'health' } });
    expect(container['resources']).toEqual({ requests: { cpu: '100m', memory: '128Mi' }, limits: { cpu: '500m', memory: '256Mi' } });
  });

  it("caps V8's old generation at three quarters of the container's memory limit", () => {
    const command = (memory: string) => podOf(render({ resources: { limits: { memory } } })).container['command'];
    expect(command('1Gi')).toEqual(['node', '--max-semi-space-size=2', '--max-opt=1', '--max-old-space-size=768', 'lib/cli/main.js']);
    expect(command('512M')).toEqual(['node', '--max-semi-space-size=2', '--max-opt=1', '--max-old-space-size=366', 'lib/cli/main.js']);
  });

  it('refuses resource quantities that are none, every one at once with its field path, and a bad fleet with them', () => {
    const bad = () =>
      render({ resources: { requests: { cpu: '0.1 cores', memory: '128Mi' }, limits: { memory: '256MB' } }, fleet: { cluster: 'EU_1', peers: [] } });
    expect(bad).toThrow(RenderError);
    const problems = (() => {
      try {
        bad();
      } catch (error) {
        return (error as RenderError).problems.map((p) => `${p.path.join('.')}: ${p.message}`);
      }
      return [];
    })();
    expect(problems).toEqual([
      expect.stringMatching(/^fleet\.cluster: "EU_1" must be a DNS label/),
      'resources.requests.cpu: "0.1 cores" is not a Kubernetes quantity (e.g. "500m", "256Mi", "1G")',
      'resources.limits.memory: "256MB" is not a Kubernetes quantity (e.g. "500m", "256Mi", "1G")',
    ]);
  });

  it('takes its settings from props', () => {
    const objects = render({
      namespace: 'ops',
      replicas: 1,
      metricsPort: 9090,
      healthProbePort: 9091,
      logLevel: 'debug',
      leaseDurationSeconds: 30,
      workers: 4,
      resources: { requests: { cpu: '50m' } },
      createNamespace: false,
    });
    expect(objects.map((o) => o.kind)).not.toContain('Namespace');
    expect(objects.map((o) => o.kind)).not.toContain('PodDisruptionBudget');
    const { deployment, container } = podOf(objects);
    expect(deployment.spec.replicas).toBe(1);
    expect(deployment.metadata.namespace).toBe('ops');
    expect(container.args).toEqual(
      expect.arrayContaining([
        '--metrics-bind-address=0.0.0.0:9090',
        '--health-probe-bind-address=0.0.0.0:9091',
        '--log-level=debug',
        '--lease-duration=30',
        '--workers=4',
      ]),
    );
    expect(container['resources']).toEqual({ requests: { cpu: '50m' } });
    // No memory limit: V8's old generation is not capped either.
    expect(container['command']).toEqual(['node', '--max-semi-space-size=2', '--max-opt=1', 'lib/cli/main.js']);
    expect(find(objects, 'Service')['spec']).toEqual({
      selector: { 'app.kubernetes.io/name': 'extended-deployment-agent' },
      ports: [{ name: 'metrics', port: 9090, targetPort: 'metrics', protocol: 'TCP' }],
    });
  });

  it('renders a metrics-reader ClusterRole for Prometheus to bind, and the Service exposes only the metrics port', () => {
    const objects = render();
    expect(rulesOf(find(objects, 'ClusterRole', 'extended-deployment-agent-metrics-reader'))).toEqual([{ nonResourceURLs: ['/metrics'], verbs: ['get'] }]);
    expect(objects.filter((o) => o.kind === 'ClusterRoleBinding').map((o) => o.metadata.name)).toEqual(['extended-deployment-agent']);
    expect(find(objects, 'Service')['spec']).toMatchObject({ ports: [{ name: 'metrics', port: 8080, targetPort: 'metrics', protocol: 'TCP' }] });
  });

  it('with metricsSecure false, serves metrics without token checks and grants no reviews', () => {
    const objects = render({ metricsSecure: false });
    expect(podOf(objects).container.args).toContain('--metrics-secure=false');
    expect(objects.map((o) => o.metadata.name)).not.toContain('extended-deployment-agent-metrics-reader');
    expect(
      rulesOf(find(objects, 'ClusterRole', 'extended-deployment-agent'))
        .map(row)
        .filter((r) => /review/.test(r)),
    ).toEqual([]);
  });

  it('with metricsCertSecret, mounts the Secret read-only and serves /metrics over TLS with it', () => {
    const { pod, container } = podOf(render({ metricsCertSecret: 'agent-metrics-tls' }));
    expect(container.args).toEqual(expect.arrayContaining(['--metrics-secure=true', '--metrics-cert-dir=/etc/extended-deployment/metrics-certs']));
    expect(pod['volumes']).toEqual([{ name: 'metrics-cert', secret: { secretName: 'agent-metrics-tls' } }]);
    expect(container['volumeMounts']).toEqual([{ name: 'metrics-cert', mountPath: '/etc/extended-deployment/metrics-certs', readOnly: true }]);
    expect(podOf(render()).container.args.some((a) => a.startsWith('--metrics-cert-dir'))).toBe(false);
  });

  describe('as a fleet member', () => {
    const fleet = { cluster: 'eu-1', peers: ['canary-1', 'us-1'] };

    it('names its cluster, reads its peers from their Secrets, mounted read only, each optional', () => {
      const { pod, container } = podOf(render({ fleet }));
      expect(container.args.slice(-2)).toEqual(['--cluster-name=eu-1', '--peer-kubeconfigs=/etc/extended-deployment/peers']);
      expect(pod['volumes']).toEqual([
        {
          name: 'fleet-peers',
          projected: {
            sources: [
              { secret: { name: 'extendeddeployment-peer-canary-1', optional: true, items: [{ key: 'kubeconfig', path: 'canary-1/kubeconfig' }] } },
              { secret: { name: 'extendeddeployment-peer-us-1', optional: true, items: [{ key: 'kubeconfig', path: 'us-1/kubeconfig' }] } },
            ],
          },
        },
      ]);
      expect(container['volumeMounts']).toEqual([{ name: 'fleet-peers', mountPath: '/etc/extended-deployment/peers', readOnly: true }]);
    });

    it('needs no further permission: the kubelet mounts the Secrets', () => {
      const plain = render().filter((o) => o.kind !== 'Deployment');
      expect(render({ fleet }).filter((o) => o.kind !== 'Deployment')).toEqual(plain);
    });

    it('mounts the peers beside the metrics certificate', () => {
      const { pod, container } = podOf(render({ fleet, metricsCertSecret: 'agent-metrics-tls' }));
      expect((pod['volumes'] as { name: string }[]).map((v) => v.name)).toEqual(['metrics-cert', 'fleet-peers']);
      expect((container['volumeMounts'] as { name: string }[]).map((v) => v.name)).toEqual(['metrics-cert', 'fleet-peers']);
    });

    it('with no peers, names its cluster and mounts nothing', () => {
      const { pod, container } = podOf(render({ fleet: { cluster: 'eu-1', peers: [] } }));
      expect(container.args.at(-1)).toBe('--cluster-name=eu-1');
      expect(container.args.some((a) => a.startsWith('--peer-kubeconfigs'))).toBe(false);
      expect(pod['volumes']).toBeUndefined();
      expect(container['volumeMounts']).toBeUndefined();
    });

    it.each([
      [{ cluster: 'EU_1', peers: ['us-1'] }, 'fleet.cluster: "EU_1" must be a DNS label'],
      [{ cluster: 'eu-1', peers: ['us-1', 'us.2'] }, 'fleet.peers[1]: "us.2" must be a DNS label'],
      [{ cluster: 'eu-1', peers: ['us-1', 'eu-1'] }, `fleet.peers[1]: "eu-1" is the agent's own cluster, not a peer`],
      [{ cluster: 'eu-1', peers: ['us-1', 'us-1'] }, 'fleet.peers[1]: "us-1" is named twice'],
    ])('refuses fleet %j', (bad, message) => {
      expect(() => render({ fleet: bad })).toThrow(RenderError);
      expect(() => render({ fleet: bad })).toThrow(`AgentInstall extended-deployment-system/extended-deployment-agent: ${message}`);
    });
  });

  it("keeps cluster-scoped objects out of a namespaced chart's namespace", () => {
    const objects = render({}, 'somewhere');
    for (const kind of ['Namespace', 'ClusterRole', 'ClusterRoleBinding']) expect(find(objects, kind).metadata.namespace, kind).toBeUndefined();
    expect(find(objects, 'Deployment').metadata.namespace).toBe('extended-deployment-system');
  });
});
