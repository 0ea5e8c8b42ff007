import { ApiObject, Chart, JsonPatch } from 'cdk8s';
import { k8s } from 'cdk8s-plus-28';
import { Construct } from 'constructs';
import { dnsLabel } from '../core/api/common.js';
import { CRD_SYNC_WAVE } from '../core/crd.js';
import { AGENT_CONTAINER, AGENT_INSTALL_LABELS, membershipArgs, membershipProblems, peerMount } from '../core/fleet/agent-member.js';
import { adoptionFreezePolicy } from './adoption-freeze.js';
import { SYNC_WAVE_ANNOTATION } from '../core/labels.js';
import { agentAdmissionPolicies } from './agent-admission.js';
import { AGENT_PERMISSIONS, isMetricsAccessPermission, leaseRules, policyRules, TRAFFIC_PERMISSIONS } from './agent-rbac.js';
import { RenderError } from './render-error.js';
import type { ObjectRef } from '../core/problems.js';
import { parseQuantity } from '../core/moves/quantity.js';

/** Where the agent is installed unless told otherwise (also the agent's own default Lease namespace). */
export const DEFAULT_AGENT_NAMESPACE = 'extended-deployment-system';
/** Name of the agent's ServiceAccount, roles, Deployment, Service and Lease. */
export const DEFAULT_AGENT_NAME = 'extended-deployment-agent';
/** Where the Secret of `metricsCertSecret` is mounted in the agent's container (`--metrics-cert-dir`). */
export const METRICS_CERT_DIR = '/etc/extended-deployment/metrics-certs';

/** Log levels of `edctl agent --log-level`, least to most severe. */
export type AgentLogLevel = 'debug' | 'info' | 'warn' | 'error';

/** CPU and memory of the agent container, as Kubernetes quantities (`"100m"`, `"256Mi"`); anything else is refused at render. */
export interface AgentResourceList {
  /**
   * CPU, e.g. `"100m"`.
   * @default none
   */
  readonly cpu?: string;
  /**
   * Memory, e.g. `"128Mi"`.
   * @default none
   */
  readonly memory?: string;
}

/** Requests and limits of the agent container. */
export interface AgentResources {
  /**
   * What the scheduler reserves.
   * @default none
   */
  readonly requests?: AgentResourceList;
  /**
   * The most the container may use.
   * @default none
   */
  readonly limits?: AgentResourceList;
}

/** The fleet an agent's cluster is a member of (docs/operating.md, "Fleet members"). */
export interface AgentFleetProps {
  /** The member cluster this agent runs in, as its Cluster is named (`--cluster-name`); a DNS label. */
  readonly cluster: string;
  /**
   * Every other member, each a DNS label, none twice, not `cluster`. The agent reads each through the Secret
   * `extendeddeployment-peer-<peer>` that `edctl fleet connect` writes into the agent's namespace, mounted at
   * `<peer>/kubeconfig` in `--peer-kubeconfigs`; a Secret that does not exist yet keeps no pod from starting.
   */
  readonly peers: readonly string[];
}

/** Props of an {@link AgentInstall}. */
export interface AgentInstallProps {
  /** The edctl image built from the repository's Dockerfile; pin it by tag or, better, by digest. */
  readonly image: string;
  /**
   * Namespace the agent runs in; it also holds the agent's Lease.
   * @default "extended-deployment-system"
   */
  readonly namespace?: string;
  /**
   * Render the Namespace object too.
   * @default true
   */
  readonly createNamespace?: boolean;
  /**
   * Name of the ServiceAccount, ClusterRole, Role, bindings, Deployment, Service and Lease.
   * @default "extended-deployment-agent"
   */
  readonly name?: string;
  /**
   * Agent replicas: one leads, the others stand by with warm caches and take over within a lease duration.
   * @default 2
   */
  readonly replicas?: number;
  /**
   * Container resources.
   * @default requests 100m CPU and 128Mi, limits 500m CPU and 256Mi
   */
  readonly resources?: AgentResources;
  /**
   * Port of /metrics, bound on every interface so Prometheus reaches it through the Service.
   * @default 8080
   */
  readonly metricsPort?: number;
  /**
   * Port of /healthz, /livez and /readyz, bound on every interface for the kubelet's probes; not in the Service.
   * @default 8081
   */
  readonly healthProbePort?: number;
  /**
   * Serve /metrics only to bearer tokens allowed to `get` the non-resource URL /metrics (`--metrics-secure`): bind
   * the rendered `<name>-metrics-reader` ClusterRole to Prometheus' ServiceAccount. The agent checks each token with
   * a TokenReview and a SubjectAccessReview (answers cached for a minute or so), which its ClusterRole then also
   * grants.
   * @default true
   */
  readonly metricsSecure?: boolean;
  /**
   * A Secret of type `kubernetes.io/tls` in the agent's namespace (e.g. a cert-manager Certificate's): /metrics is
   * served over TLS with its tls.crt and tls.key (`--metrics-cert-dir`), picked up again when it is renewed. Without
   * one, /metrics is plain HTTP and scrapers' bearer tokens cross the network in clear text.
   * @default none
   */
  readonly metricsCertSecret?: string;
  /**
   * Least severe log level written (`--log-level`).
   * @default "info"
   */
  readonly logLevel?: AgentLogLevel;
  /**
   * Watch only these namespaces (`--namespace=a,b`, one informer per namespace and resource): the permissions on
   * namespaced resources become a Role in each of them instead of a ClusterRole. DeployRegions and Nodes are
   * cluster-scoped and stay in the ClusterRole. The admission policies then also refuse the agent's writes in any
   * other namespace. At least one; each a namespace name, none twice.
   * @default every namespace
   */
  readonly watchNamespaces?: readonly string[];
  /**
   * Render ValidatingAdmissionPolicies and their bindings (admissionregistration.k8s.io/v1, Kubernetes 1.30 or
   * later) that hold the agent's ServiceAccount to the writes it makes: only on pods, ReplicaSets and Deployments
   * labelled as an ExtendedDeployment's, and on them only container images, its own pod annotations, the revision
   * label, the InPlaceUpdateReady condition, pod deletion, `spec.replicas` and `spec.paused` (see
   * constructs/agent-admission.ts). RBAC alone lets the agent's token patch any pod or workload in the cluster. Turn
   * it off only where policies cannot be installed (older clusters) or are managed elsewhere.
   * @default true
   */
  readonly admissionPolicy?: boolean;
  /**
   * Render the adoption freeze (constructs/adoption-freeze.ts): a ValidatingAdmissionPolicy on pod creation that
   * reads the ExtendedDeployments of the pod's namespace, without which a region cannot adopt pods (`adopt`: the
   * agent proves the freeze before each step and waits while it does not hold). Kubernetes 1.30 or later.
   * @default true
   */
  readonly adoptionFreeze?: boolean;
  /**
   * Let the agent shift traffic (spec.strategy.traffic mode Weighted): render the `<name>-traffic` ClusterRole and its
   * binding, which grant create, patch and delete on Services and on Gateway API HTTPRoutes
   * (gateway.networking.k8s.io), the objects the agent then owns (a Service per live revision, the HTTPRoute `<ed>`),
   * and update on ExtendedDeployments' finalizers, which some clusters require of an ownerReference that blocks the
   * owner's deletion.
   * With `watchNamespaces` it is a Role `<name>-traffic` in each of them instead. The agent reads Services and
   * HTTPRoutes either way; without this, an ExtendedDeployment of mode Weighted reports the forbidden write and its
   * rollout waits, while everything else rolls out. Mode Replicas and Prometheus analysis need no write.
   * @default false
   */
  readonly traffic?: boolean;
  /**
   * How long the Lease lasts without renewal (`--lease-duration`, seconds).
   * @default 15 (the agent's)
   */
  readonly leaseDurationSeconds?: number;
  /**
   * ExtendedDeployments reconciled in parallel (`--workers`).
   * @default 48 (the agent's)
   */
  readonly workers?: number;
  /**
   * Image pull policy.
   * @default "IfNotPresent"
   */
  readonly imagePullPolicy?: 'Always' | 'IfNotPresent' | 'Never';
  /**
   * Secrets to pull the image with (they must exist in the namespace).
   * @default none
   */
  readonly imagePullSecrets?: readonly string[];
  /**
   * PriorityClass of the agent's pods, e.g. `system-cluster-critical`.
   * @default none
   */
  readonly priorityClassName?: string;
  /**
   * Run the agent as a member of a fleet: `--cluster-name` and the peer Secrets mounted for `--peer-kubeconfigs`
   * (no further permissions: the kubelet mounts the Secrets, the agent reads none through the API). In an app with
   * Cluster constructs leave it out: each member cluster's copy of the install gets its own (core/fleet/agent-member.ts).
   * @default not a fleet member
   */
  readonly fleet?: AgentFleetProps;
}

/** The share of the container's memory limit V8's old generation may take; the rest is Node itself, code and connections. */
const OLD_SPACE_SHARE = 0.75;

/**
 * Node.js flags the agent runs with in a container whose memory limit is `memoryLimit` (a Kubernetes quantity, checked by
 * checkProps; none: no cap). V8 sizes its heap for the machine, not the container. Measured by bench:peers with 200
 * rollouts at once (before the agent's connections were bounded): left alone, with 4 MiB semi-spaces, the agent peaked
 * at 231 MiB, and at 149 MiB with the old generation capped at 192 MiB.
 *
 * `--max-opt=1`: V8 compiles no further than Sparkplug, its baseline compiler; TurboFan, the optimizing compiler,
 * never runs (nor Maglev, the tier between, which Node.js 22 ships off for its wrong code, nodejs/node#54384, and a
 * later Node.js on). TurboFan is most of what the agent's peak had over Argo Rollouts': its compiler's part of the
 * binary is resident once it compiles (the agent's file-backed peak is 45 MiB without it, 51 with), its compile zones
 * held 6–8 MiB of malloc's peak, and its code several MiB of the heap. bench:peers on 5 December 2026 (one round each, ratios to Argo Rollouts' in the same run;
 * at 200 rollouts at once, then 50): with TurboFan and 1 MiB semi-spaces peak RSS 1.01 and 1.03 (107 and 93 MiB), CPU
 * 0.85 and 0.88; the interpreter alone (`--no-turbofan`, Sparkplug off) 0.82 and 0.84 (89 and 77 MiB), CPU 1.02 and
 * 1.02; Sparkplug as the top tier 0.87 and 0.88, CPU 1.02 and 0.84; with 2 MiB semi-spaces as well (these flags)
 * 0.86 and 0.91 (92 and 82 MiB), CPU 0.91 and 0.77. Earlier runs that left TurboFan out were in V8's memory-saving
 * mode (`--optimize-for-size`, the install's until 5 December 2026), and cost more: the interpreter alone 40–52 % more
 * CPU at 200, Sparkplug as the top tier 1.19 of Argo Rollouts' CPU at 50.
 *
 * `--max-semi-space-size=2`: a young generation of two 2 MiB semi-spaces; with 1 MiB ones (the install's choice while
 * TurboFan ran, as its peak at 50 rollouts at once was 1.02–1.05 of Argo Rollouts' against 1.08–1.09 with 2 MiB) the
 * agent without TurboFan collects its young generation more often, and its CPU was above Argo Rollouts' at 200 (above).
 * glibc's malloc set to give memory back sooner (`MALLOC_TRIM_THRESHOLD_=65536` with `MALLOC_MMAP_THRESHOLD_=131072`)
 * took nothing off the peak at 50 for 18 % more CPU: a 64 KiB socket read buffer is an mmap each. A lower heap growing
 * factor (`--heap-growing-percent=20`: after a full collection the old generation may grow by at least 8 MiB, and in
 * the agent that step is what sets its limit), `--single-threaded-gc` and `--single-threaded` left the peak within
 * the runs' spread; `--compact-on-every-full-gc` raised it by 12–18 MiB (evacuation needs pages of its own). V8
 * flags, so they go on the command line (NODE_OPTIONS does not take them).
 */
function agentNodeFlags(memoryLimit: string | undefined): string[] {
  const bytes = parseQuantity(memoryLimit);
  const oldSpace = bytes !== undefined && bytes > 0 ? [`--max-old-space-size=${Math.floor((bytes * OLD_SPACE_SHARE) / 2 ** 20)}`] : [];
  return ['--max-semi-space-size=2', '--max-opt=1', ...oldSpace];
}

/** The container's `command` for a memory limit: the image's Node.js entry point (see the Dockerfile) with {@link agentNodeFlags}. */
function agentCommand(memoryLimit: string | undefined): string[] {
  return ['node', ...agentNodeFlags(memoryLimit), 'lib/cli/main.js'];
}

const DEFAULT_RESOURCES: Required<AgentResources> = { requests: { cpu: '100m', memory: '128Mi' }, limits: { cpu: '500m', memory: '256Mi' } };

/** The flags of the default install (its 256Mi limit): the e2e suites and the benches start the agent with them. */
export const AGENT_NODE_FLAGS: readonly string[] = agentNodeFlags(DEFAULT_RESOURCES.limits.memory);

/**
 * Environment the agent's container sets (besides POD_NAMESPACE), and the e2e suites and benches with it. glibc
 * (the image is Debian's) gives each thread that allocates under contention an arena of its own, up to 8 per core,
 * each holding freed memory: the agent's libuv and V8 worker threads held 7 MiB in six of them at its peak with 200
 * rollouts at once (bench:peers, its /proc/self/smaps), 3 MiB in two with MALLOC_ARENA_MAX=2, its peak RSS 4 MiB
 * lower over three runs each, CPU within the runs' spread.
 */
export const AGENT_ENV: Readonly<Record<string, string>> = { MALLOC_ARENA_MAX: '2' };

/**
 * The container's `args`: `edctl agent` with leader election on, the probes open to the kubelet and the metrics to
 * Prometheus (behind a token check unless `metricsSecure` is false).
 */
export function agentArgs(props: AgentInstallProps, name: string, metricsPort: number, healthProbePort = 8081): string[] {
  return [
    'agent',
    '--lease-namespace=$(POD_NAMESPACE)',
    `--lease-name=${name}`,
    '--leader-elect=true',
    `--metrics-bind-address=0.0.0.0:${metricsPort}`,
    `--metrics-secure=${props.metricsSecure ?? true}`,
    ...(props.metricsCertSecret !== undefined ? [`--metrics-cert-dir=${METRICS_CERT_DIR}`] : []),
    `--health-probe-bind-address=0.0.0.0:${healthProbePort}`,
    `--log-level=${props.logLevel ?? 'info'}`,
    ...(props.watchNamespaces !== undefined ? [`--namespace=${props.watchNamespaces.join(',')}`] : []),
    ...(props.leaseDurationSeconds !== undefined ? [`--lease-duration=${props.leaseDurationSeconds}`] : []),
    ...(props.workers !== undefined ? [`--workers=${props.workers}`] : []),
    ...(props.fleet !== undefined ? membershipArgs(props.fleet) : []),
  ];
}

/** The watched namespaces, refused when empty, named twice or not namespace names (the agent's flag would refuse them). */
function checkedNamespaces(namespaces: readonly string[]): readonly string[] {
  const bad = namespaces.filter((n) => !dnsLabel.safeParse(n).success);
  if (namespaces.length === 0 || bad.length > 0 || new Set(namespaces).size !== namespaces.length)
    throw new Error(`AgentInstall: watchNamespaces must name at least one namespace, each a DNS label, none twice: ${JSON.stringify(namespaces)}`);
  return namespaces;
}

/**
 * Throws every problem of the props the API server or the agent would refuse later: a fleet membership the agent's
 * flags refuse, and resource quantities that are none (`"256MB"`: the Deployment would be refused at apply, and the heap
 * cap derived from the memory limit lost at render).
 */
function checkProps(props: AgentInstallProps, object: ObjectRef): void {
  const resources = props.resources ?? {};
  const problems = [
    ...(props.fleet ? membershipProblems(props.fleet, object, ['fleet']) : []),
    ...(['requests', 'limits'] as const).flatMap((list) =>
      (Object.entries(resources[list] ?? {}) as [string, string | undefined][])
        .filter(([, value]) => value !== undefined && parseQuantity(value) === undefined)
        .map(([resource, value]) => ({
          object,
          path: ['resources', list, resource],
          message: `${JSON.stringify(value)} is not a Kubernetes quantity (e.g. "500m", "256Mi", "1G")`,
        })),
    ),
  ];
  if (problems.length > 0) throw new RenderError(problems);
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

/** The Argo CD sync wave of the agent's Deployment, PodDisruptionBudget and Service: the workloads' (see AgentInstall). */
export const AGENT_SYNC_WAVE = '0';

/**
 * Everything the agent needs in a cluster, rendered like any other manifest: Namespace, ServiceAccount, a ClusterRole
 * with exactly the verbs the agent's code uses ({@link AGENT_PERMISSIONS}; with `traffic`, the writes of traffic
 * shifting in a `<name>-traffic` role of their own, {@link TRAFFIC_PERMISSIONS}), a Role for its Lease, their bindings,
 * admission policies that narrow those verbs to the agent's own fields and objects ({@link agentAdmissionPolicies}), the
 * Deployment (leader election on, hardened security context, probes on a port of their own), a PodDisruptionBudget
 * when there is more than one replica, the metrics Service, and (with `metricsSecure`) the `<name>-metrics-reader`
 * ClusterRole for Prometheus to bind. The Namespace, RBAC and admission policies carry the CRDs' Argo CD sync wave,
 * so they exist before any DeployRegion or workload. The Deployment, its PodDisruptionBudget and the Service are in
 * the workloads' wave ({@link AGENT_SYNC_WAVE}): Argo CD waits for an earlier wave to be healthy, and an agent whose
 * pod sat on a node that failed would hold every sync there, the fix for the outage included.
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
  /** `get` on /metrics, to bind to Prometheus' ServiceAccount; rendered only with `metricsSecure`. */
  readonly metricsReaderRole: k8s.KubeClusterRole | undefined;

  constructor(scope: Construct, id: string, props: AgentInstallProps) {
    super(scope, id);
    const namespace = (this.namespace = props.namespace ?? DEFAULT_AGENT_NAMESPACE);
    const name = (this.name = props.name ?? DEFAULT_AGENT_NAME);
    const metricsPort = props.metricsPort ?? 8080;
    const healthProbePort = props.healthProbePort ?? 8081;
    const metricsSecure = props.metricsSecure ?? true;
    const replicas = props.replicas ?? 2;
    const labels = { 'app.kubernetes.io/name': name, ...AGENT_INSTALL_LABELS };
    const meta = (objectName: string, objectNamespace?: string, wave = CRD_SYNC_WAVE) => ({
      name: objectName,
      ...(objectNamespace && { namespace: objectNamespace }),
      labels,
      annotations: { [SYNC_WAVE_ANNOTATION]: wave },
    });
    const subjects = [{ kind: 'ServiceAccount', name, namespace }];
    checkProps(props, { kind: 'AgentInstall', name, namespace });
    const peers = props.fleet && peerMount(props.fleet);

    if (props.createNamespace ?? true) clusterScoped(new k8s.KubeNamespace(this, 'namespace', { metadata: meta(namespace) }));
    new k8s.KubeServiceAccount(this, 'service-account', { metadata: meta(name, namespace), automountServiceAccountToken: true });

    const watchNamespaces = props.watchNamespaces && checkedNamespaces(props.watchNamespaces);
    const needed = AGENT_PERMISSIONS.filter((p) => metricsSecure || !isMetricsAccessPermission(p));
    const clusterWide = watchNamespaces === undefined ? needed : needed.filter((p) => p.scope === 'Cluster');
    this.clusterRole = clusterScoped(new k8s.KubeClusterRole(this, 'cluster-role', { metadata: meta(name), rules: policyRules(clusterWide) }));
    clusterScoped(
      new k8s.KubeClusterRoleBinding(this, 'cluster-role-binding', {
        metadata: meta(name),
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name },
        subjects,
      }),
    );
    // Not bound here: who scrapes is the cluster's choice (a ClusterRoleBinding to Prometheus' ServiceAccount).
    this.metricsReaderRole = metricsSecure
      ? clusterScoped(
          new k8s.KubeClusterRole(this, 'metrics-reader', {
            metadata: meta(`${name}-metrics-reader`),
            rules: [{ nonResourceUrLs: ['/metrics'], verbs: ['get'] }],
          }),
        )
      : undefined;
    const namespaced = AGENT_PERMISSIONS.filter((p) => p.scope === 'Namespaced');
    for (const watched of watchNamespaces ?? []) {
      new k8s.KubeRole(this, `watch-role-${watched}`, { metadata: meta(name, watched), rules: policyRules(namespaced) });
      new k8s.KubeRoleBinding(this, `watch-role-binding-${watched}`, {
        metadata: meta(name, watched),
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name },
        subjects,
      });
    }
    // Traffic shifting's writes, apart: an install without it gives the agent no write on any Service or route.
    if (props.traffic ?? false) {
      const trafficRole = `${name}-traffic`;
      const rules = policyRules(TRAFFIC_PERMISSIONS);
      if (watchNamespaces === undefined) {
        clusterScoped(new k8s.KubeClusterRole(this, 'traffic-role', { metadata: meta(trafficRole), rules }));
        clusterScoped(
          new k8s.KubeClusterRoleBinding(this, 'traffic-role-binding', {
            metadata: meta(trafficRole),
            roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: trafficRole },
            subjects,
          }),
        );
      }
      for (const watched of watchNamespaces ?? []) {
        new k8s.KubeRole(this, `traffic-role-${watched}`, { metadata: meta(trafficRole, watched), rules });
        new k8s.KubeRoleBinding(this, `traffic-role-binding-${watched}`, {
          metadata: meta(trafficRole, watched),
          roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: trafficRole },
          subjects,
        });
      }
    }
    const leaseRole = `${name}-leader-election`;
    new k8s.KubeRole(this, 'lease-role', { metadata: meta(leaseRole, namespace), rules: leaseRules(name) });
    new k8s.KubeRoleBinding(this, 'lease-role-binding', {
      metadata: meta(leaseRole, namespace),
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: leaseRole },
      subjects,
    });
    if (props.admissionPolicy ?? true) {
      for (const { resource, name: policyName, policy, binding } of agentAdmissionPolicies({ namespace, name, watchNamespaces })) {
        const apiVersion = 'admissionregistration.k8s.io/v1';
        clusterScoped(
          new ApiObject(this, `admission-policy-${resource}`, { apiVersion, kind: 'ValidatingAdmissionPolicy', metadata: meta(policyName), spec: policy }),
        );
        clusterScoped(
          new ApiObject(this, `admission-binding-${resource}`, {
            apiVersion,
            kind: 'ValidatingAdmissionPolicyBinding',
            metadata: meta(policyName),
            spec: binding,
          }),
        );
      }
    }

    if (props.adoptionFreeze ?? true) {
      const freeze = adoptionFreezePolicy();
      const apiVersion = 'admissionregistration.k8s.io/v1';
      clusterScoped(
        new ApiObject(this, 'adoption-freeze-policy', { apiVersion, kind: 'ValidatingAdmissionPolicy', metadata: meta(freeze.name), spec: freeze.policy }),
      );
      clusterScoped(
        new ApiObject(this, 'adoption-freeze-binding', {
          apiVersion,
          kind: 'ValidatingAdmissionPolicyBinding',
          metadata: meta(freeze.name),
          spec: freeze.binding,
        }),
      );
    }

    const selector = { 'app.kubernetes.io/name': name };
    const resources = props.resources ?? DEFAULT_RESOURCES;
    const requests = quantities(resources.requests);
    const limits = quantities(resources.limits);
    const port = k8s.IntOrString.fromString('metrics');
    const healthPort = k8s.IntOrString.fromString('health');
    const metricsCert = props.metricsCertSecret;
    const volumes = [...(metricsCert !== undefined ? [{ name: 'metrics-cert', secret: { secretName: metricsCert } }] : []), ...(peers ? [peers.volume] : [])];
    const volumeMounts = [
      ...(metricsCert !== undefined ? [{ name: 'metrics-cert', mountPath: METRICS_CERT_DIR, readOnly: true }] : []),
      ...(peers ? [peers.mount] : []),
    ];
    this.deployment = new k8s.KubeDeployment(this, 'deployment', {
      metadata: meta(name, namespace, AGENT_SYNC_WAVE),
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
            ...(volumes.length > 0 && { volumes }),
            affinity: {
              podAntiAffinity: {
                preferredDuringSchedulingIgnoredDuringExecution: [
                  { weight: 100, podAffinityTerm: { topologyKey: 'kubernetes.io/hostname', labelSelector: { matchLabels: selector } } },
                ],
              },
            },
            containers: [
              {
                name: AGENT_CONTAINER,
                image: props.image,
                imagePullPolicy: props.imagePullPolicy ?? 'IfNotPresent',
                command: agentCommand(resources.limits?.memory),
                args: agentArgs(props, name, metricsPort, healthProbePort),
                env: [
                  { name: 'POD_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
                  ...Object.entries(AGENT_ENV).map(([envName, value]) => ({ name: envName, value })),
                ],
                ports: [
                  { name: 'metrics', containerPort: metricsPort, protocol: 'TCP' },
                  { name: 'health', containerPort: healthProbePort, protocol: 'TCP' },
                ],
                // The probes need no token: they have a server of their own, which answers nothing but the probes.
                livenessProbe: { httpGet: { path: '/healthz', port: healthPort }, periodSeconds: 10, timeoutSeconds: 5, failureThreshold: 3 },
                readinessProbe: { httpGet: { path: '/readyz', port: healthPort }, periodSeconds: 5, timeoutSeconds: 5, failureThreshold: 3 },
                ...(volumeMounts.length > 0 && { volumeMounts }),
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
      new k8s.KubePodDisruptionBudget(this, 'pdb', {
        metadata: meta(name, namespace, AGENT_SYNC_WAVE),
        spec: { maxUnavailable: k8s.IntOrString.fromNumber(1), selector: { matchLabels: selector } },
      });
    }
    new k8s.KubeService(this, 'service', {
      metadata: meta(name, namespace, AGENT_SYNC_WAVE),
      spec: { selector, ports: [{ name: 'metrics', port: metricsPort, targetPort: port, protocol: 'TCP' }] },
    });
  }
}
