import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';

/** Flags of `edctl agent` and their defaults. */
export interface AgentSettings {
  /** Watch one namespace; undefined watches all. */
  readonly namespace: string | undefined;
  readonly metricsBindAddress: string;
  readonly leaderElect: boolean;
  readonly leaseNamespace: string;
  readonly leaseName: string;
  readonly identity: string;
  readonly workers: number;
}

/** Where the agent is installed when POD_NAMESPACE (from the downward API) is not set. */
export const DEFAULT_LEASE_NAMESPACE = 'extended-deployment-system';
/** The Lease all agent replicas compete for. */
export const DEFAULT_LEASE_NAME = 'extended-deployment-agent';
/** Health and metrics on loopback unless the user opens them (in a pod: 0.0.0.0:8080). */
export const DEFAULT_METRICS_BIND_ADDRESS = '127.0.0.1:8080';
/** Workers reconciling ExtendedDeployments in parallel. */
export const DEFAULT_WORKERS = 2;

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
    namespace: partial.namespace,
    metricsBindAddress: partial.metricsBindAddress ?? DEFAULT_METRICS_BIND_ADDRESS,
    leaderElect: partial.leaderElect ?? true,
    leaseNamespace: partial.leaseNamespace ?? defaultLeaseNamespace(),
    leaseName: partial.leaseName ?? DEFAULT_LEASE_NAME,
    identity: partial.identity ?? defaultIdentity(),
    workers: partial.workers ?? DEFAULT_WORKERS,
  };
}
