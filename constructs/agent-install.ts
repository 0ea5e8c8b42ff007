import { ApiObject, Chart, JsonPatch } from 'cdk8s';
import { k8s } from 'cdk8s-plus-28';
import { Construct } from 'constructs';
import { CRD_SYNC_WAVE } from '../core/crd.js';
import { SYNC_WAVE_ANNOTATION } from '../core/labels.js';
import { AGENT_PERMISSIONS, leaseRules, policyRules } from './agent-rbac.js';

/** Where the agent is installed unless told otherwise (also the agent's own default Lease namespace). */
export const DEFAULT_AGENT_NAMESPACE = 'extended-deployment-system';
/** Name of the agent's ServiceAccount, roles, Deployment, Service and Lease. */
export const DEFAULT_AGENT_NAME = 'extended-deployment-agent';

/** Log levels of `edctl agent --log-level`, least to most severe. */
export type AgentLogLevel = 'debug' | 'info' | 'warn' | 'error';

/** CPU and memory of the agent container, as Kubernetes quantities (`"100m"`, `"256Mi"`). */
export interface AgentResourceList {
  /** CPU, e.g. `"100m"`. */
  readonly cpu?: string;
  /** Memory, e.g. `"128Mi"`. */
  readonly memory?: string;
}

/** Requests and limits of the agent container. */
export interface AgentResources {
  /** What the scheduler reserves. */
  readonly requests?: AgentResourceList;
  /** The most the container may use. */
  readonly limits?: AgentResourceList;
}

/** Props of an {@link AgentInstall}. */
export interface AgentInstallProps {
  /** The edctl image built from the repository's Dockerfile; pin it by tag or, better, by digest. */
  readonly image: string;
  /** Namespace the agent runs in; it also holds the agent's Lease. Default: `extended-deployment-system`. */
  readonly namespace?: string;
  /** Render the Namespace object too. Default: true. */
  readonly createNamespace?: boolean;
  /** Name of the ServiceAccount, ClusterRole, Role, bindings, Deployment, Service and Lease. Default: `extended-deployment-agent`. */
  readonly name?: string;
  /** Agent replicas: one leads, the others stand by with warm caches and take over within a lease duration. Default: 2. */
  readonly replicas?: number;
  /** Container resources. Default: requests 100m CPU and 128Mi, limits 500m CPU and 256Mi. */
  readonly resources?: AgentResources;
  /** Port of /healthz, /readyz and /metrics, bound on every interface so the kubelet and Prometheus reach it. Default: 8080. */
  readonly metricsPort?: number;
  /** Least severe log level written (`--log-level`). Default: info. */
  readonly logLevel?: AgentLogLevel;
  /**
   * Watch only this namespace (`--namespace`): the permissions on namespaced resources become a Role there instead of
   * a ClusterRole. DeployRegions and Nodes are cluster-scoped and stay in the ClusterRole. Default: every namespace.
   */
  readonly watchNamespace?: string;
  /** How long the Lease lasts without renewal (`--lease-duration`, seconds). Default: the agent's, 15. */
  readonly leaseDurationSeconds?: number;
  /** ExtendedDeployments reconciled in parallel (`--workers`). Default: the agent's, 48. */
  readonly workers?: number;
  /** Image pull policy. Default: IfNotPresent. */
  readonly imagePullPolicy?: 'Always' | 'IfNotPresent' | 'Never';
  /** Secrets to pull the image with (they must exist in the namespace). Default: none. */
  readonly imagePullSecrets?: readonly string[];
  /** PriorityClass of the agent's pods, e.g. `system-cluster-critical`. Default: none. */
  readonly priorityClassName?: string;
}

/**
 * Node.js flags the agent runs with. `--optimize-for-size` makes V8 keep the heap close to what is live (smaller
 * young generation, slower heap growth): bench/agent measured a peak RSS of 146 MiB instead of 231 MiB for 50
 * ExtendedDeployments, within the default 256Mi limit at 200. A V8 flag, so it goes on the command line (NODE_OPTIONS
 * does not take it); bench/agent starts the agent with the same flags.
 */
export const AGENT_NODE_FLAGS: readonly string[] = ['--optimize-for-size'];

/** The container's `command`: the image's Node.js entry point (see the Dockerfile), with {@link AGENT_NODE_FLAGS}. */
export const AGENT_COMMAND: readonly string[] = ['node', ...AGENT_NODE_FLAGS, 'lib/cli/main.js'];

const DEFAULT_RESOURCES: Required<AgentResources> = { requests: { cpu: '100m', memory: '128Mi' }, limits: { cpu: '500m', memory: '256Mi' } };

/** The container's `args`: `edctl agent` with leader election on and the endpoints open to the kubelet's probes. */
export function agentArgs(props: AgentInstallProps, name: string, metricsPort: number): string[] {
  return [
    'agent',
    '--lease-namespace=$(POD_NAMESPACE)',
    `--lease-name=${name}`,
    '--leader-elect=true',
    `--metrics-bind-address=0.0.0.0:${metricsPort}`,
    `--log-level=${props.logLevel ?? 'info'}`,
    ...(props.watchNamespace !== undefined ? [`--namespace=${props.watchNamespace}`] : []),
    ...(props.leaseDurationSeconds !== undefined ? [`--lease-duration=${props.leaseDurationSeconds}`] : []),
    ...(props.workers !== undefined ? [`--workers=${props.workers}`] : []),
  ];
}

/** A cluster-scoped object never takes the chart's default namespace. */
function clusterScoped<T extends ApiObject>(object: T): T {
  if (Chart.of(object).namespace !== undefined) object.addJsonPatch(JsonPatch.remove('/metadata/namespace'));
  return object;
}

function quantities(list: AgentResourceList | undefined): Record<string, k8s.Quantity> | undefined {
  if (!list) return undefined;
  const entries = Object.entries(list).filter((e): e is [string, string] => typeof e[1] === 'string');
  return entries.length > 0 ? Object.fromEntries(entries.map(([k, v]) => [k, k8s.Quantity.fromString(v)])) : undefined;
}

/**
 * Everything the agent needs in a cluster, rendered like any other manifest: Namespace, ServiceAccount, a ClusterRole
 * with exactly the verbs the agent's code uses ({@link AGENT_PERMISSIONS}), a Role for its Lease, their bindings, the
 * Deployment (leader election on, hardened security context, probes on the metrics port), a PodDisruptionBudget when
 * there is more than one replica, and the metrics Service. Every object carries the CRDs' Argo CD sync wave, so the
 * agent runs before DeployRegions and workloads are synced.
 */
export class AgentInstall extends Construct {
  /** The namespace the agent runs in. */
  readonly namespace: string;
  /** The agent's name (ServiceAccount, roles, Deployment, Service, Lease). */
  readonly name: string;
  /** The agent Deployment, for escape hatches (`ApiObject.of(install.deployment).addJsonPatch(...)`). */
  readonly deployment: k8s.KubeDeployment;
  /** The cluster-wide permissions. */
  readonly clusterRole: k8s.KubeClusterRole;

  constructor(scope: Construct, id: string, props: AgentInstallProps) {
    super(scope, id);
    const namespace = (this.namespace = props.namespace ?? DEFAULT_AGENT_NAMESPACE);
    const name = (this.name = props.name ?? DEFAULT_AGENT_NAME);
    const metricsPort = props.metricsPort ?? 8080;
    const replicas = props.replicas ?? 2;
    const labels = { 'app.kubernetes.io/name': name, 'app.kubernetes.io/component': 'agent', 'app.kubernetes.io/part-of': 'extended-deployment' };
    const annotations = { [SYNC_WAVE_ANNOTATION]: CRD_SYNC_WAVE };
    const meta = (objectName: string, objectNamespace?: string) => ({ name: objectName, ...(objectNamespace && { namespace: objectNamespace }), labels, annotations });
    const subjects = [{ kind: 'ServiceAccount', name, namespace }];

    if (props.createNamespace ?? true) clusterScoped(new k8s.KubeNamespace(this, 'namespace', { metadata: meta(namespace) }));
    new k8s.KubeServiceAccount(this, 'service-account', { metadata: meta(name, namespace), automountServiceAccountToken: true });

    const watchNamespace = props.watchNamespace;
    const clusterWide = watchNamespace === undefined ? AGENT_PERMISSIONS : AGENT_PERMISSIONS.filter((p) => p.scope === 'Cluster');
    this.clusterRole = clusterScoped(new k8s.KubeClusterRole(this, 'cluster-role', { metadata: meta(name), rules: policyRules(clusterWide) }));
    clusterScoped(
      new k8s.KubeClusterRoleBinding(this, 'cluster-role-binding', { metadata: meta(name), roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name }, subjects }),
    );
    if (watchNamespace !== undefined) {
      const namespaced = AGENT_PERMISSIONS.filter((p) => p.scope === 'Namespaced');
      new k8s.KubeRole(this, 'watch-role', { metadata: meta(name, watchNamespace), rules: policyRules(namespaced) });
      new k8s.KubeRoleBinding(this, 'watch-role-binding', { metadata: meta(name, watchNamespace), roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name }, subjects });
    }
    const leaseRole = `${name}-leader-election`;
    new k8s.KubeRole(this, 'lease-role', { metadata: meta(leaseRole, namespace), rules: leaseRules(name) });
    new k8s.KubeRoleBinding(this, 'lease-role-binding', {
      metadata: meta(leaseRole, namespace),
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: leaseRole },
      subjects,
    });

    const selector = { 'app.kubernetes.io/name': name };
    const resources = props.resources ?? DEFAULT_RESOURCES;
    const requests = quantities(resources.requests);
    const limits = quantities(resources.limits);
    const port = k8s.IntOrString.fromString('metrics');
    this.deployment = new k8s.KubeDeployment(this, 'deployment', {
      metadata: meta(name, namespace),
      spec: {
        replicas,
        selector: { matchLabels: selector },
        template: {
          metadata: { labels },
          spec: {
            serviceAccountName: name,
            automountServiceAccountToken: true,
            enableServiceLinks: false,
            ...(props.priorityClassName && { priorityClassName: props.priorityClassName }),
            ...(props.imagePullSecrets && { imagePullSecrets: props.imagePullSecrets.map((s) => ({ name: s })) }),
            securityContext: { runAsNonRoot: true, runAsUser: 10001, runAsGroup: 10001, seccompProfile: { type: 'RuntimeDefault' } },
            // Graceful stop: in-flight reconciles drain (at most 15 s), then the Lease is released.
            terminationGracePeriodSeconds: 30,
            affinity: {
              podAntiAffinity: {
                preferredDuringSchedulingIgnoredDuringExecution: [
                  { weight: 100, podAffinityTerm: { topologyKey: 'kubernetes.io/hostname', labelSelector: { matchLabels: selector } } },
                ],
              },
            },
            containers: [
              {
                name: 'agent',
                image: props.image,
                imagePullPolicy: props.imagePullPolicy ?? 'IfNotPresent',
                command: [...AGENT_COMMAND],
                args: agentArgs(props, name, metricsPort),
                env: [{ name: 'POD_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } }],
                ports: [{ name: 'metrics', containerPort: metricsPort, protocol: 'TCP' }],
                livenessProbe: { httpGet: { path: '/healthz', port }, periodSeconds: 10, timeoutSeconds: 5, failureThreshold: 3 },
                readinessProbe: { httpGet: { path: '/readyz', port }, periodSeconds: 5, timeoutSeconds: 5, failureThreshold: 3 },
                ...((requests || limits) && { resources: { ...(requests && { requests }), ...(limits && { limits }) } }),
                securityContext: {
                  runAsNonRoot: true,
                  readOnlyRootFilesystem: true,
                  allowPrivilegeEscalation: false,
                  capabilities: { drop: ['ALL'] },
                  seccompProfile: { type: 'RuntimeDefault' },
                },
              },
            ],
          },
        },
      },
    });
    if (replicas > 1) {
      new k8s.KubePodDisruptionBudget(this, 'pdb', { metadata: meta(name, namespace), spec: { maxUnavailable: k8s.IntOrString.fromNumber(1), selector: { matchLabels: selector } } });
    }
    new k8s.KubeService(this, 'service', {
      metadata: meta(name, namespace),
      spec: { selector, ports: [{ name: 'metrics', port: metricsPort, targetPort: port, protocol: 'TCP' }] },
    });
  }
}
