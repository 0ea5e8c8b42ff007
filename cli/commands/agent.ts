import { InvalidArgumentError, Option, type Command } from 'commander';
import { startAgent, type Agent } from '../../agent/agent.js';
import { KubeConfigError, loadKubeConfig } from '../../agent/kubeconfig.js';
import { jsonLogger, type LogLevel } from '../../agent/log.js';
import { DEFAULT_LEASE_DURATION_SECONDS, DEFAULT_LEASE_NAME, DEFAULT_METRICS_BIND_ADDRESS, DEFAULT_WORKERS, defaultLeaseNamespace, parseLeaseDurationSeconds } from '../../agent/options.js';
import { UserError } from '../user-error.js';

interface AgentFlags {
  kubeconfig?: string;
  context?: string;
  namespace?: string;
  metricsBindAddress: string;
  leaderElect: boolean;
  leaseNamespace: string;
  leaseName: string;
  leaseDuration: number;
  identity?: string;
  workers: number;
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

function parseWorkers(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 64) throw new InvalidArgumentError('expected an integer from 1 to 64');
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
    .option('-n, --namespace <namespace>', 'watch only this namespace (default: all)')
    .option('--metrics-bind-address <host:port>', 'address of /healthz, /readyz and /metrics (0.0.0.0:8080 to expose it in a pod)', DEFAULT_METRICS_BIND_ADDRESS)
    .option('--leader-elect [bool]', 'elect a leader among replicas through a Lease', parseBool, true)
    .option('--lease-namespace <namespace>', 'namespace of the Lease ($POD_NAMESPACE when set)', defaultLeaseNamespace())
    .option('--lease-name <name>', 'name of the Lease', DEFAULT_LEASE_NAME)
    .option(
      '--lease-duration <seconds>',
      'how long the Lease lasts without renewal: a standby takes over this long after a leader died (renew deadline 2/3 and retry period 2/15 of it)',
      parseLeaseDuration,
      DEFAULT_LEASE_DURATION_SECONDS,
    )
    .option('--identity <id>', 'this replica\'s identity in the Lease (default: hostname and a random suffix)')
    .option('--workers <n>', 'ExtendedDeployments reconciled in parallel', parseWorkers, DEFAULT_WORKERS)
    .addOption(new Option('--log-level <level>', 'least severe log level written').choices(LOG_LEVELS).default('info'))
    .addHelpText(
      'after',
      `
Logs are JSON lines on stdout. SIGTERM or SIGINT stops it gracefully: the reconciles in flight finish, the Lease is
released so a standby takes over at once, and it exits 0.

Examples:
  ${bin} agent --kubeconfig .lab/kubeconfig --metrics-bind-address 127.0.0.1:0
  ${bin} agent --namespace shop --leader-elect=false`,
    )
    .action(async (flags: AgentFlags) => {
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
          namespace: flags.namespace,
          metricsBindAddress: flags.metricsBindAddress,
          leaderElect: flags.leaderElect,
          leaseNamespace: flags.leaseNamespace,
          leaseName: flags.leaseName,
          leaseDurationSeconds: flags.leaseDuration,
          workers: flags.workers,
          ...(flags.identity !== undefined && { identity: flags.identity }),
        });
      } catch (error) {
        const code = (error as { code?: unknown } | null)?.code;
        if (code === 'EADDRINUSE' || code === 'EACCES' || code === 'EADDRNOTAVAIL') {
          throw new UserError([`cannot listen on ${flags.metricsBindAddress}: ${String(code)}`]);
        }
        if (error instanceof Error && error.message.startsWith('invalid bind address')) throw new UserError([error.message]);
        throw error;
      }
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
      });
      // Idle keep-alive sockets of the API clients may hold the event loop; this timer fires only if they do.
      setTimeout(() => process.exit(process.exitCode ?? 0), 1_000).unref();
    });
}
