import { readFileSync } from 'node:fs';
import { InvalidArgumentError, Option, type Command } from 'commander';
import type { KubernetesObject } from '@kubernetes/client-node';
import { DEFAULT_LEASE_NAMESPACE } from '../../agent/options.js';
import { isNotFound } from '../../agent/runtime/kube-errors.js';
import { dnsLabel } from '../../core/api/common.js';
import { peerSecretName } from '../../core/fleet/peers.js';
import {
  collectAssignment,
  DEFAULT_TOKEN_EXPIRATION_SECONDS,
  describeObject,
  fleetMembers,
  PEER_READER,
  peerReaderObjects,
  peerSecret,
  parseTokenExpiration,
  sameServer,
  type MemberAssignment,
  type MemberRef,
  type PeerAccess,
} from '../fleet-connect.js';
import { fleetStatusReport, fleetStatusText, type MemberRead } from '../fleet-status-view.js';
import { connect, EDCTL_FIELD_MANAGER, readExtendedDeployment, userErrorOf, type Kube } from '../kube.js';
import { data, outputOption, type OutputFormat } from '../output.js';
import { UserError } from '../user-error.js';

interface ConnectFlags {
  context?: MemberAssignment[];
  kubeconfig?: MemberAssignment[];
  agentNamespace: string;
  tokenExpiration: number;
}

interface Member {
  readonly ref: MemberRef;
  readonly kube: Kube;
}

/** A member's token and how to reach the member with it. */
interface Minted {
  readonly access: PeerAccess;
  readonly expiresAt: string;
}

function parseNamespace(value: string): string {
  if (!dnsLabel.safeParse(value).success) throw new InvalidArgumentError('not a namespace name (a DNS label)');
  return value;
}

/** Every message about a member names it: with several clusters, "context not found" alone does not say which. */
function aboutMember(name: string, error: UserError): UserError {
  return new UserError(
    error.lines.map((line) => `member ${name}: ${line}`),
    error.exitCode,
  );
}

async function connectMember(ref: MemberRef): Promise<Member> {
  try {
    return { ref, kube: await connect(ref) };
  } catch (error) {
    throw error instanceof UserError ? aboutMember(ref.name, error) : error;
  }
}

/** An API call of one member; its failure becomes one line naming the member and what was being done. */
async function call<T>(member: Member, what: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    throw aboutMember(member.ref.name, userErrorOf(member.kube, error, what));
  }
}

/** The agent namespace must exist: a mistyped --agent-namespace fails here, before anything is written anywhere. */
async function checkNamespace(member: Member, namespace: string): Promise<void> {
  const { CoreV1Api } = await import('@kubernetes/client-node');
  const core = member.kube.kc.makeApiClient(CoreV1Api);
  try {
    await core.readNamespace({ name: namespace });
  } catch (error) {
    if (!isNotFound(error)) throw aboutMember(member.ref.name, userErrorOf(member.kube, error, `namespace ${namespace}`));
    throw new UserError([
      `member ${member.ref.name}: namespace ${namespace} not found at ${member.kube.server} (install the agent there first, or pass --agent-namespace)`,
    ]);
  }
}

/** Server-side apply with edctl's field manager, forced: running again changes nothing, and takes back edited fields. */
async function apply(member: Member, object: KubernetesObject): Promise<void> {
  const { KubernetesObjectApi, PatchStrategy } = await import('@kubernetes/client-node');
  const objects = KubernetesObjectApi.makeApiClient(member.kube.kc);
  await call(member, `apply ${describeObject(object)}`, () =>
    objects.patch(object, undefined, undefined, EDCTL_FIELD_MANAGER, true, PatchStrategy.ServerSideApply),
  );
}

/** Applies the peer reader and its roles in one member and mints its token. */
async function mint(member: Member, namespace: string, expirationSeconds: number): Promise<Minted> {
  for (const object of peerReaderObjects(namespace)) await apply(member, object);
  const { CoreV1Api } = await import('@kubernetes/client-node');
  const core = member.kube.kc.makeApiClient(CoreV1Api);
  // No audiences: the API server's own, which is what a client presenting the token to it needs.
  const request = await call(member, `token of ServiceAccount ${namespace}/${PEER_READER}`, () =>
    core.createNamespacedServiceAccountToken({ name: PEER_READER, namespace, body: { spec: { audiences: [], expirationSeconds } } }),
  );
  const token = request.status?.token;
  if (!token) throw new UserError([`member ${member.ref.name}: the TokenRequest for ${namespace}/${PEER_READER} returned no token`]);
  const cluster = member.kube.kc.getCurrentCluster();
  // A CA file of the user's machine means nothing in another cluster: its content goes into the Secret.
  const caData = cluster?.caData ?? (cluster?.caFile ? readFileSync(cluster.caFile).toString('base64') : undefined);
  return {
    access: {
      cluster: member.ref.name,
      server: member.kube.server,
      ...(caData === undefined ? {} : { caData }),
      ...(cluster?.skipTLSVerify ? { insecureSkipTlsVerify: true } : {}),
      ...(cluster?.tlsServerName ? { tlsServerName: cluster.tlsServerName } : {}),
      token,
      namespace,
    },
    expiresAt: new Date(request.status?.expirationTimestamp ?? Date.now() + expirationSeconds * 1000).toISOString().replace(/\.\d+Z$/, 'Z'),
  };
}

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);

/** `edctl fleet connect`: each member readable by the others' agents, through a kubeconfig Secret per peer. */
export function registerFleet(program: Command): void {
  const bin = program.name();
  const examples = `
Examples:
  ${bin} fleet connect --context eu-1=prod-eu --context us-1=prod-us --context ap-1=prod-ap
  ${bin} fleet connect --kubeconfig eu-1=eu.yaml --kubeconfig us-1=us.yaml --token-expiration 168h`;
  const fleet = program.command('fleet').description('Manage the member clusters of a fleet').addHelpText('after', examples);
  registerFleetStatus(fleet, bin);
  const command = fleet
    .command('connect')
    .description(
      'Let every member read the others: a read-only ServiceAccount in each, its token in a kubeconfig Secret in every other member (run again to renew the tokens)',
    )
    .option('--context <cluster>=<context>', 'a member and its kubeconfig context (repeat for each member)', collectAssignment)
    .option(
      '--kubeconfig <cluster>=<path>',
      "a member and its kubeconfig file (repeat; default: $KUBECONFIG or ~/.kube/config, with --context's context or the file's current one)",
      collectAssignment,
    )
    .option(
      '--agent-namespace <namespace>',
      'where the agent runs in every member: the ServiceAccount, the Role on Leases and the Secrets go there',
      parseNamespace,
      DEFAULT_LEASE_NAMESPACE,
    )
    .addOption(
      new Option(
        '--token-expiration <duration>',
        "lifetime of each minted token (TokenRequest's expirationSeconds; at least 10m; the API server may shorten it)",
      )
        .argParser(parseTokenExpiration)
        .default(DEFAULT_TOKEN_EXPIRATION_SECONDS, `720h, ${DEFAULT_TOKEN_EXPIRATION_SECONDS / 86400} days`),
    )
    .addHelpText(
      'after',
      `
In every member it applies (server-side, field manager edctl) the ServiceAccount
${PEER_READER} in the agent namespace, a ClusterRole with get/list/watch on
extendeddeployments.extendeddeployment.io, a Role with get/list/watch on Leases in the agent namespace, and their
bindings; it mints the ServiceAccount's token (TokenRequest API) and writes into every other member the Secret
${peerSecretName('<cluster>')} (label extendeddeployment.io/peer=<cluster>, key kubeconfig): a kubeconfig with
the member's server and CA as the context names them, and the token. Running it again changes nothing but the tokens
(and their expiry, annotation extendeddeployment.io/peer-token-expires): run it before they expire.
${examples}`,
    )
    .showHelpAfterError(`Run '${bin} fleet connect --help' for usage.`)
    .action(async (flags: ConnectFlags) => {
      const chosen = fleetMembers(flags.context ?? [], flags.kubeconfig ?? []);
      if ('error' in chosen) return command.error(`error: ${chosen.error}`);
      const namespace = flags.agentNamespace;
      const members: Member[] = [];
      // One after another: a kubeconfig error names the first member at fault, not whichever failed first.
      for (const ref of chosen.members) members.push(await connectMember(ref));
      const same = sameServer(members.map((m) => ({ name: m.ref.name, server: m.kube.server })));
      if (same) throw new UserError([same]);
      await Promise.all(members.map((m) => checkNamespace(m, namespace)));
      const minted = await Promise.all(members.map((m) => mint(m, namespace, flags.tokenExpiration)));
      await Promise.all(
        members.map(async (member) => {
          for (const peer of minted) if (peer.access.cluster !== member.ref.name) await apply(member, peerSecret(peer.access, namespace, peer.expiresAt));
        }),
      );
      for (const [i, member] of members.entries()) {
        const peers = members.filter((m) => m !== member).map((m) => peerSecretName(m.ref.name));
        process.stdout.write(
          `member ${member.ref.name}: ServiceAccount ${namespace}/${PEER_READER} with its roles applied, token valid until ${minted[i]?.expiresAt}; ` +
            `Secrets ${peers.join(', ')} applied in ${namespace}\n`,
        );
        if (LOOPBACK.has(new URL(member.kube.server).hostname)) {
          process.stderr.write(
            `note: member ${member.ref.name}'s API server ${member.kube.server} is a loopback address: only agents on this machine reach it\n`,
          );
        }
      }
    });
}

interface StatusFlags {
  context?: MemberAssignment[];
  kubeconfig?: MemberAssignment[];
  namespace?: string;
  output: OutputFormat;
}

/**
 * `edctl fleet status`: one row per member of an ExtendedDeployment's fleet, each from the member's own object. The
 * members are the ones named on the command line and every member their objects list (spec.fleet.members); one not
 * named is read through the kubeconfig context of its own name.
 */
function registerFleetStatus(fleet: Command, bin: string): void {
  fleet
    .command('status')
    .description("Show an ExtendedDeployment's rollout in every member cluster: wave, share, release completed, phase, gate, handover and failover")
    .argument('<name>', 'ExtendedDeployment name')
    .option('--context <cluster>=<context>', 'a member and its kubeconfig context (repeat; default: the context named like the cluster)', collectAssignment)
    .option('--kubeconfig <cluster>=<path>', 'a member and its kubeconfig file (repeat; default: $KUBECONFIG or ~/.kube/config)', collectAssignment)
    .option('-n, --namespace <namespace>', "namespace (default: the first member's context's)")
    .addOption(outputOption())
    .addHelpText(
      'after',
      `
A member that cannot be read shows why in its row; the command fails only when no member can be read.

Examples:
  ${bin} fleet status web -n shop --context canary-1=prod-canary     # the other members through contexts named eu-1, us-1...
  ${bin} fleet status web -n shop --kubeconfig eu-1=eu.yaml --kubeconfig us-1=us.yaml -o json`,
    )
    .action(async (name: string, flags: StatusFlags) => {
      const named = new Map<string, MemberRef>();
      for (const a of flags.context ?? []) named.set(a.cluster, { ...named.get(a.cluster), name: a.cluster, context: a.value });
      for (const a of flags.kubeconfig ?? []) named.set(a.cluster, { ...named.get(a.cluster), name: a.cluster, kubeconfig: a.value });
      // Without any member named, the current context is where the member list comes from.
      const first = named.size === 0 ? [{ name: '', ref: {} }] : [...named.values()].map((ref) => ({ name: ref.name, ref }));
      const reads = new Map<string, MemberRead>();
      let namespace = flags.namespace;
      for (const { name: cluster, ref } of first) {
        const read = await readMember(ref, cluster, name, namespace);
        namespace ??= read.namespace;
        const self = cluster || fleetOf(read.read.ed)?.cluster || 'current context';
        reads.set(self, { ...read.read, cluster: self });
      }
      const listed = [...reads.values()].flatMap((r) => fleetOf(r.ed)?.members ?? []);
      const missing = [...new Set(listed)].filter((c) => !reads.has(c));
      const more = await Promise.all(missing.map(async (cluster) => (await readMember({ context: cluster }, cluster, name, namespace)).read));
      for (const read of more) reads.set(read.cluster, read);
      if (![...reads.values()].some((r) => r.ed !== undefined)) {
        throw new UserError([...reads.values()].map((r) => `member ${r.cluster}: ${r.error ?? 'not read'}`));
      }
      // Members in the order the fleet lists them (the render's spec.clusters order), the others after.
      const order = [...new Set([...listed, ...reads.keys()])];
      const report = fleetStatusReport(
        namespace ?? 'default',
        name,
        order.map((c) => reads.get(c)!),
      );
      process.stdout.write(flags.output === 'text' ? fleetStatusText(report) : data(report, flags.output));
    });
}

/** The fleet membership an object's spec.fleet names, read unvalidated. */
function fleetOf(ed: MemberRead['ed']): { cluster?: string; members: string[] } | undefined {
  const fleet = (ed?.spec as { fleet?: { cluster?: unknown; members?: unknown } } | undefined)?.fleet;
  if (fleet === undefined) return undefined;
  const members = Array.isArray(fleet.members) ? (fleet.members as { cluster?: unknown }[]).map((m) => m.cluster).filter((c) => typeof c === 'string') : [];
  return { ...(typeof fleet.cluster === 'string' && { cluster: fleet.cluster }), members };
}

/** One member's ExtendedDeployment, or the one-line reason it cannot be read (never thrown: the others still show). */
async function readMember(
  ref: Pick<MemberRef, 'kubeconfig' | 'context'>,
  cluster: string,
  name: string,
  namespace: string | undefined,
): Promise<{ read: MemberRead; namespace?: string }> {
  try {
    const kube = await connect({ ...ref, ...(namespace !== undefined && { namespace }) });
    return { read: { cluster, ed: await readExtendedDeployment(kube, name) }, namespace: kube.namespace };
  } catch (error) {
    if (error instanceof UserError) return { read: { cluster, error: error.lines.join('; ') } };
    throw error;
  }
}
