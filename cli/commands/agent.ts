import { InvalidArgumentError, Option, type Command } from 'commander';
import type { Agent, AgentFailure } from '../../agent/agent.js';
import { jsonLogger, type LogLevel } from '../../agent/runtime/log.js';
import {
  DEFAULT_CACHE_SYNC_TIMEOUT_SECONDS,
  DEFAULT_HEALTH_PROBE_BIND_ADDRESS,
  DEFAULT_LEASE_DURATION_SECONDS,
  DEFAULT_LEASE_NAME,
  DEFAULT_METRICS_BIND_ADDRESS,
  DEFAULT_WORKERS,
  MAX_WORKERS,
  defaultLeaseNamespace,
  parseLeaseDurationSeconds,
} from '../../agent/options.js';
import { dnsLabel } from '../../core/api/common.js';
import { UserError } from '../user-error.js';

interface AgentFlags {
  kubeconfig?: string;
  context?: string;
  namespace?: string[];
  metricsBindAddress: string;
  healthProbeBindAddress: string;
  metricsSecure: boolean;
  metricsCertDir?: string;
  leaderElect: boolean;
  leaseNamespace: string;
  leaseName: string;
  leaseDuration: number;
  identity?: string;
  workers: number;
  cacheSyncTimeout: number;
  clusterName?: string;
  peerKubeconfigs?: string;
  logLevel: LogLevel;
}

function parseBool(value: string): boolean {
  if (value === 'true') return true;
  if (value === 'false') return false;
  throw new InvalidArgumentError('expected true or false');
}

function parseLeaseDuration(value: string): number {
  try {
    return parseLeaseDurationSeconds(value);
  } catch (error) {
    throw new InvalidArgumentError((error as Error).message);
  }
}

/** `shop,payments`: namespaces, each a DNS label (RFC 1123), none twice. */
function parseNamespaces(value: string): string[] {
  const names = value.split(',').map((n) => n.trim());
  const bad = names.filter((n) => !dnsLabel.safeParse(n).success);
  if (bad.length > 0) throw new InvalidArgumentError(`not a namespace name: ${bad.map((n) => JSON.stringify(n)).join(', ')}`);
  if (new Set(names).size !== names.length) throw new InvalidArgumentError('a namespace is named twice');
  return names;
}

function parseWorkers(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > MAX_WORKERS) throw new InvalidArgumentError(`expected an integer from 1 to ${MAX_WORKERS}`);
  return n;
}

function parseClusterName(value: string): string {
  if (!dnsLabel.safeParse(value).success) throw new InvalidArgumentError('expected a Cluster name: a DNS label (lower-case letters, digits and "-")');
  return value;
}

function parseSeconds(value: string): number {
  const n = Number(value.endsWith('s') ? value.slice(0, -1) : value);
  if (value.trim() === '' || !Number.isInteger(n) || n < 1 || n > 3600)
    throw new InvalidArgumentError('expected whole seconds from 1 to 3600 (e.g. 120 or 120s)');
  return n;
}

/** Values of --log-level, least to most severe. */
export const LOG_LEVELS: readonly LogLevel[] = ['debug', 'info', 'warn', 'error'];

/** `edctl agent`: runs the in-cluster agent until SIGTERM or SIGINT. */
export function registerAgent(program: Command): void {
  const bin = program.name();
  program
    .command('agent')
    .description('Run the agent: watch ExtendedDeployments and pace their rollouts (leader-elected)')
    .option('--kubeconfig <path>', 'kubeconfig file (default: $KUBECONFIG, in-cluster service account, ~/.kube/config)')
    .option('--context <name>', 'kubeconfig context')
    .option('-n, --namespace <namespaces>', 'watch only these namespaces, comma-separated (default: all)', parseNamespaces)
    .option(
      '--metrics-bind-address <host:port>',
      'address of /metrics (0.0.0.0:8080 to expose it in a pod, with --metrics-secure)',
      DEFAULT_METRICS_BIND_ADDRESS,
    )
    .option(
      '--metrics-secure [bool]',
      'serve /metrics only to bearer tokens the API server accepts and allows to get /metrics (TokenReview, SubjectAccessReview)',
      parseBool,
      false,
    )
    .option('--metrics-cert-dir <dir>', 'serve /metrics over TLS with tls.crt and tls.key from this directory, reloaded when they change (default: plain HTTP)')
    .option(
      '--health-probe-bind-address <host:port>',
      'address of /healthz, /livez and /readyz (:8081 in a pod, where the kubelet probes)',
      DEFAULT_HEALTH_PROBE_BIND_ADDRESS,
    )
    .option('--leader-elect [bool]', 'elect a leader among replicas through a Lease', parseBool, true)
    .option('--lease-namespace <namespace>', 'namespace of the Lease ($POD_NAMESPACE when set)', defaultLeaseNamespace())
    .option('--lease-name <name>', 'name of the Lease', DEFAULT_LEASE_NAME)
    .option(
      '--lease-duration <seconds>',
      'how long the Lease lasts without renewal: a standby takes over this long after a leader died (renew deadline 2/3 and retry period 2/15 of it)',
      parseLeaseDuration,
      DEFAULT_LEASE_DURATION_SECONDS,
    )
    .option('--identity <id>', "this replica's identity in the Lease (default: hostname and a random suffix)")
    .option('--workers <n>', 'ExtendedDeployments reconciled in parallel', parseWorkers, DEFAULT_WORKERS)
    .option(
      '--cache-sync-timeout <seconds>',
      'exit non-zero when the caches have not synced this long after the start',
      parseSeconds,
      DEFAULT_CACHE_SYNC_TIMEOUT_SECONDS,
    )
    .option(
      '--cluster-name <name>',
      'the fleet member this agent runs in (a Cluster of the render): it paces its waves against the other members',
      parseClusterName,
    )
    .option(
      '--peer-kubeconfigs <dir>',
      "a folder with <cluster>/kubeconfig for every other member, read only (the peer Secrets of 'edctl fleet connect', mounted)",
    )
    .addOption(new Option('--log-level <level>', 'least severe log level written').choices(LOG_LEVELS).default('info'))
    .addHelpText(
      'after',
      `
Logs are JSON lines on stdout. SIGTERM or SIGINT stops it gracefully: the reconciles in flight finish, the Lease is
released so a standby takes over at once, and it exits 0. It exits 1 when it loses leadership (no write of the lost
term is sent after that) or when its caches have not synced within --cache-sync-timeout; its Deployment starts it again.

Examples:
  ${bin} agent --kubeconfig .lab/kubeconfig --metrics-bind-address 127.0.0.1:0 --health-probe-bind-address 127.0.0.1:0
  ${bin} agent --metrics-bind-address :8443 --metrics-secure --metrics-cert-dir /etc/edctl/metrics-certs
  ${bin} agent --namespace shop --leader-elect=false`,
    )
    .action(async (flags: AgentFlags) => {
      // The agent and the Kubernetes client are imported when the agent starts, not with every edctl command (see connect).
      const [{ startAgent }, { KubeConfigError, loadKubeConfig }] = await Promise.all([
        import('../../agent/agent.js'),
        import('../../agent/runtime/kubeconfig.js'),
      ]);
      let kubeConfig;
      try {
        kubeConfig = loadKubeConfig({ kubeconfig: flags.kubeconfig, context: flags.context, preferInCluster: true });
      } catch (error) {
        if (error instanceof KubeConfigError) throw new UserError([error.message]);
        throw error;
      }
      const log = jsonLogger({ level: flags.logLevel });
      let agent: Agent;
      try {
        agent = await startAgent({
          kubeConfig,
          log,
          processMetrics: true,
          ...(flags.namespace !== undefined && { namespaces: flags.namespace }),
          metricsBindAddress: flags.metricsBindAddress,
          healthProbeBindAddress: flags.healthProbeBindAddress,
          metricsSecure: flags.metricsSecure,
          ...(flags.metricsCertDir !== undefined && { metricsCertDir: flags.metricsCertDir }),
          leaderElect: flags.leaderElect,
          leaseNamespace: flags.leaseNamespace,
          leaseName: flags.leaseName,
          leaseDurationSeconds: flags.leaseDuration,
          workers: flags.workers,
          cacheSyncTimeoutSeconds: flags.cacheSyncTimeout,
          ...(flags.identity !== undefined && { identity: flags.identity }),
          ...(flags.clusterName !== undefined && { clusterName: flags.clusterName }),
          ...(flags.peerKubeconfigs !== undefined && { peerKubeconfigDir: flags.peerKubeconfigs }),
        });
      } catch (error) {
        const { code, address, port } = (error ?? {}) as { code?: unknown; address?: unknown; port?: unknown };
        if (code === 'EADDRINUSE' || code === 'EACCES' || code === 'EADDRNOTAVAIL') {
          throw new UserError([`cannot listen on ${String(address)}:${String(port)}: ${String(code)}`]);
        }
        if (error instanceof Error && /^(invalid bind address|cannot read the metrics certificate)/.test(error.message)) throw new UserError([error.message]);
        throw error;
      }
      let failed: AgentFailure | undefined;
      await new Promise<void>((resolve) => {
        const onSignal = (signal: NodeJS.Signals) => {
          log.info('signal received', { signal });
          // A second signal means "now": exit without waiting for the graceful stop.
          process.once('SIGTERM', () => process.exit(1));
          process.once('SIGINT', () => process.exit(1));
          void agent.stop().then(resolve);
        };
        process.once('SIGTERM', onSignal);
        process.once('SIGINT', onSignal);
        void agent.failed.then((failure) => {
          log.error('exiting', { reason: failure.reason, error: failure.message });
          failed = failure;
          resolve();
        });
      });
      // Idle keep-alive sockets of the API clients (or connections a partition left open) may hold the event loop;
      // this timer fires only if they do.
      setTimeout(() => process.exit(process.exitCode ?? 0), 1_000).unref();
      // Exit 1 (the error line on stderr too): the Deployment restarts the process, visibly.
      const failure = failed;
      if (failure) throw new UserError([failure.message]);
    });
}
