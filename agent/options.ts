import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';

/** Flags of `edctl agent` and their defaults. */
export interface AgentSettings {
  /** Watch only these namespaces (one informer per namespace and resource); undefined watches all. */
  readonly namespaces: readonly string[] | undefined;
  /** Where /metrics is served (`host:port`). */
  readonly metricsBindAddress: string;
  /** Where /healthz, /livez and /readyz are served (`host:port`), apart from /metrics as controller-runtime does. */
  readonly healthProbeBindAddress: string;
  /**
   * Every /metrics request must carry a bearer token that the API server authenticates (TokenReview) and authorizes
   * for `get` on the non-resource URL /metrics (SubjectAccessReview).
   */
  readonly metricsSecure: boolean;
  /** A directory holding tls.crt and tls.key: /metrics is served over TLS with them (reloaded when they change). */
  readonly metricsCertDir: string | undefined;
  readonly leaderElect: boolean;
  readonly leaseNamespace: string;
  readonly leaseName: string;
  /**
   * How long the Lease is valid without renewal (seconds). The renew deadline and retry period scale with it (2/3 and
   * 2/15 of it: 10 s and 2 s for the default 15 s, controller-runtime's defaults).
   */
  readonly leaseDurationSeconds: number;
  readonly identity: string;
  readonly workers: number;
  /** Caches not synced this long after the start end the process (non-zero exit), so the failure is visible. */
  readonly cacheSyncTimeoutSeconds: number;
  /**
   * The fleet member this agent runs in (a Cluster's name): an ExtendedDeployment rendered for another member is
   * invalid here. Undefined outside a fleet.
   */
  readonly clusterName: string | undefined;
  /** A folder of `<cluster>/kubeconfig` files, one per other member, read only (agent/fleet-peers.ts). */
  readonly peerKubeconfigDir: string | undefined;
}

/** Where the agent is installed when POD_NAMESPACE (from the downward API) is not set. */
export const DEFAULT_LEASE_NAMESPACE = 'extended-deployment-system';
/** The Lease all agent replicas compete for. */
export const DEFAULT_LEASE_NAME = 'extended-deployment-agent';
/** Lease duration (controller-runtime's default). */
export const DEFAULT_LEASE_DURATION_SECONDS = 15;
/** Bounds of --lease-duration: at 2 s a leader renews every ~270 ms; an hour is far beyond any sensible failover time. */
export const LEASE_DURATION_BOUNDS = { min: 2, max: 3600 } as const;
/** Metrics on loopback unless the user opens them (the install: 0.0.0.0:8080, with --metrics-secure). */
export const DEFAULT_METRICS_BIND_ADDRESS = '127.0.0.1:8080';
/**
 * Health probes on loopback too: outside a pod nobody needs to reach them from elsewhere, and an agent run on a laptop
 * opens no port. The install binds :8081, where the kubelet probes the pod IP.
 */
export const DEFAULT_HEALTH_PROBE_BIND_ADDRESS = '127.0.0.1:8081';
/**
 * Workers reconciling ExtendedDeployments in parallel (one key is never reconciled by two at once). A reconcile spends
 * nearly all its time waiting for the API server, so workers are cheap: with many rollouts at once, a group whose pods
 * just became available should not queue behind other objects' writes (bench/agent, 200 rollouts at once: queue wait
 * p99 380 ms with 16 workers, 272 ms with 48; RSS 171 → 178 MiB). Controllers in the field use 10–20 (Argo Rollouts:
 * 10) but write less per reconcile.
 */
export const DEFAULT_WORKERS = 48;

/** The most workers `--workers` takes: past this, more writes in flight only make each slower (bench:peers with 64). */
export const MAX_WORKERS = 64;

/** How long the caches may take to sync (controller-runtime's CacheSyncTimeout default). */
export const DEFAULT_CACHE_SYNC_TIMEOUT_SECONDS = 120;

/** A unique identity per process: the host (the pod name in a cluster) plus a random suffix, as client-go advises. */
export function defaultIdentity(): string {
  return `${hostname()}_${randomBytes(4).toString('hex')}`;
}

/** The lease namespace: the agent's own namespace when it runs in a pod. */
export function defaultLeaseNamespace(env: NodeJS.ProcessEnv = process.env): string {
  return env['POD_NAMESPACE'] || DEFAULT_LEASE_NAMESPACE;
}

/** Settings with every default filled in. */
export function agentSettings(partial: Partial<AgentSettings> = {}): AgentSettings {
  return {
    namespaces: partial.namespaces,
    metricsBindAddress: partial.metricsBindAddress ?? DEFAULT_METRICS_BIND_ADDRESS,
    healthProbeBindAddress: partial.healthProbeBindAddress ?? DEFAULT_HEALTH_PROBE_BIND_ADDRESS,
    metricsSecure: partial.metricsSecure ?? false,
    metricsCertDir: partial.metricsCertDir,
    leaderElect: partial.leaderElect ?? true,
    leaseNamespace: partial.leaseNamespace ?? defaultLeaseNamespace(),
    leaseName: partial.leaseName ?? DEFAULT_LEASE_NAME,
    leaseDurationSeconds: partial.leaseDurationSeconds ?? DEFAULT_LEASE_DURATION_SECONDS,
    identity: partial.identity ?? defaultIdentity(),
    workers: partial.workers ?? DEFAULT_WORKERS,
    cacheSyncTimeoutSeconds: partial.cacheSyncTimeoutSeconds ?? DEFAULT_CACHE_SYNC_TIMEOUT_SECONDS,
    clusterName: partial.clusterName,
    peerKubeconfigDir: partial.peerKubeconfigDir,
  };
}

/** Parses --lease-duration: whole seconds (the Lease field is an integer), within LEASE_DURATION_BOUNDS. */
export function parseLeaseDurationSeconds(value: string): number {
  const n = Number(value.endsWith('s') ? value.slice(0, -1) : value);
  const { min, max } = LEASE_DURATION_BOUNDS;
  if (value.trim() === '' || !Number.isInteger(n) || n < min || n > max) throw new Error(`expected whole seconds from ${min} to ${max} (e.g. 15 or 15s)`);
  return n;
}
