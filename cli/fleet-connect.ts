// What `edctl fleet connect` writes, as pure functions (the command, which talks to the clusters, is
// commands/fleet.ts): the members from the command line, the read-only identity every member gets for its peers
// (docs/proposals/fleet.md, "Peers"), and the kubeconfig Secret through which the other members' agents read it.
import type { KubernetesObject, V1ClusterRole, V1ClusterRoleBinding, V1Role, V1RoleBinding, V1Secret, V1ServiceAccount } from '@kubernetes/client-node';
import { InvalidArgumentError } from 'commander';
import { stringify } from 'yaml';
import { dnsLabel } from '../core/api/common.js';
import { API_GROUP, ED_PLURAL } from '../core/api/identity.js';
import { PEER_KUBECONFIG_KEY, PEER_LABEL, peerSecretName } from '../core/fleet/peers.js';
import { parseDuration } from './duration.js';

/** Name of the ServiceAccount, roles and bindings a member's peers read it as. */
export const PEER_READER = 'extendeddeployment-peer-reader';
/** When the token of a peer Secret expires (RFC 3339): the time to run `fleet connect` again. */
export const PEER_TOKEN_EXPIRES_ANNOTATION = 'extendeddeployment.io/peer-token-expires';

/** 30 days: long enough to run by hand monthly, bounded so that a leaked Secret stops working on its own. */
export const DEFAULT_TOKEN_EXPIRATION_SECONDS = 30 * 24 * 3600;
/** The TokenRequest API refuses shorter lifetimes. */
export const MIN_TOKEN_EXPIRATION_SECONDS = 600;

/** `--token-expiration`: a duration as kubectl's (`720h`, `90m`), in whole seconds, at least the API's minimum. */
export function parseTokenExpiration(value: string): number {
  const seconds = parseDuration(value) / 1000;
  if (!Number.isInteger(seconds) || seconds < MIN_TOKEN_EXPIRATION_SECONDS) {
    throw new InvalidArgumentError(`expected whole seconds of at least ${MIN_TOKEN_EXPIRATION_SECONDS / 60}m (the TokenRequest API's minimum), e.g. 720h`);
  }
  return seconds;
}

const LABELS = {
  'app.kubernetes.io/name': PEER_READER,
  'app.kubernetes.io/component': 'fleet-peer',
  'app.kubernetes.io/part-of': 'extended-deployment',
  'app.kubernetes.io/managed-by': 'edctl',
} as const;

/** One `--context <cluster>=<context>` or `--kubeconfig <cluster>=<path>`. */
export interface MemberAssignment {
  readonly cluster: string;
  readonly value: string;
}

/**
 * Parses `<cluster>=<value>` (split at the first `=`: a cluster name has none, a path may); the cluster must be a DNS
 * label, since it becomes a label value and part of a Secret's name. A bad one is a usage error.
 */
export function parseAssignment(arg: string): MemberAssignment {
  const at = arg.indexOf('=');
  if (at < 0) throw new InvalidArgumentError('expected <cluster>=<value>, e.g. eu-1=prod-eu');
  const cluster = arg.slice(0, at);
  const value = arg.slice(at + 1);
  const name = dnsLabel.safeParse(cluster);
  if (!name.success) throw new InvalidArgumentError(`cluster name ${JSON.stringify(cluster)} ${name.error.issues[0]?.message ?? 'is invalid'}`);
  if (value === '') throw new InvalidArgumentError(`nothing after "${cluster}="`);
  return { cluster, value };
}

/** A repeatable option's parser: each occurrence is added to the ones before (none before the first). */
export function collectAssignment(arg: string, previous: readonly MemberAssignment[] | undefined): MemberAssignment[] {
  return [...(previous ?? []), parseAssignment(arg)];
}

/** A member cluster and where its access is: a kubeconfig file (default: kubectl's), a context (default: the current). */
export interface MemberRef {
  readonly name: string;
  readonly kubeconfig?: string;
  readonly context?: string;
}

/**
 * The members, in the order first named: `--context` and `--kubeconfig` of one cluster name one member (that context
 * in that file). A cluster given twice to one option, or fewer than two members, is a usage error (the message).
 */
export function fleetMembers(contexts: readonly MemberAssignment[], kubeconfigs: readonly MemberAssignment[]): { members: MemberRef[] } | { error: string } {
  for (const [option, list] of [
    ['--context', contexts],
    ['--kubeconfig', kubeconfigs],
  ] as const) {
    const twice = list.find((a, i) => list.findIndex((b) => b.cluster === a.cluster) !== i);
    if (twice) return { error: `${option} names cluster ${twice.cluster} more than once` };
  }
  const names = [...new Set([...contexts, ...kubeconfigs].map((a) => a.cluster))];
  if (names.length < 2) {
    return {
      error: `a fleet needs at least two members, got ${names.length === 0 ? 'none' : `only ${names[0]}`} (name each with --context <cluster>=<context> or --kubeconfig <cluster>=<path>)`,
    };
  }
  const members = names.map((name): MemberRef => {
    const context = contexts.find((a) => a.cluster === name)?.value;
    const kubeconfig = kubeconfigs.find((a) => a.cluster === name)?.value;
    return { name, ...(kubeconfig === undefined ? {} : { kubeconfig }), ...(context === undefined ? {} : { context }) };
  });
  return { members };
}

/** Two members that are one API server (a context named twice, say): the message, else undefined. */
export function sameServer(members: readonly { readonly name: string; readonly server: string }[]): string | undefined {
  for (const [i, a] of members.entries()) {
    const b = members.slice(i + 1).find((m) => m.server === a.server);
    if (b) return `members ${a.name} and ${b.name} are the same API server (${a.server})`;
  }
  return undefined;
}

/**
 * What every member gets so that its peers can read it, and nothing more: its ExtendedDeployments in every namespace
 * (the fleet gate reads their status) and the Leases of the agent namespace (whether its agent is alive). The
 * ClusterRoleBinding's name carries the namespace, so that two agent namespaces in one cluster do not share one.
 */
export function peerReaderObjects(namespace: string): [V1ServiceAccount, V1ClusterRole, V1ClusterRoleBinding, V1Role, V1RoleBinding] {
  const read = ['get', 'list', 'watch'];
  const subjects = [{ kind: 'ServiceAccount', name: PEER_READER, namespace }];
  const meta = { name: PEER_READER, namespace, labels: { ...LABELS } };
  const clusterMeta = { name: PEER_READER, labels: { ...LABELS } };
  return [
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: meta },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: clusterMeta,
      rules: [{ apiGroups: [API_GROUP], resources: [ED_PLURAL], verbs: read }],
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { ...clusterMeta, name: `${PEER_READER}-${namespace}` },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: PEER_READER },
      subjects,
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: meta,
      rules: [{ apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: read }],
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: meta,
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: PEER_READER },
      subjects,
    },
  ];
}

/** How to reach one member as its peer reader. */
export interface PeerAccess {
  /** The member's cluster name (the kubeconfig's cluster and context). */
  readonly cluster: string;
  /** Its API server, as the context that connected names it. */
  readonly server: string;
  /** The CA bundle (base64 PEM), when the context has one. */
  readonly caData?: string;
  readonly insecureSkipTlsVerify?: boolean;
  readonly tlsServerName?: string;
  /** The peer reader's token (TokenRequest). */
  readonly token: string;
  /** The agent namespace: the context's default namespace, where the Leases are. */
  readonly namespace: string;
}

/** The kubeconfig of a peer Secret: one cluster, the peer reader's token, one context, current. */
export function peerKubeconfig(access: PeerAccess): string {
  const cluster = {
    server: access.server,
    ...(access.caData === undefined ? {} : { 'certificate-authority-data': access.caData }),
    ...(access.insecureSkipTlsVerify ? { 'insecure-skip-tls-verify': true } : {}),
    ...(access.tlsServerName === undefined ? {} : { 'tls-server-name': access.tlsServerName }),
  };
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: access.cluster, cluster }],
    users: [{ name: PEER_READER, user: { token: access.token } }],
    contexts: [{ name: access.cluster, context: { cluster: access.cluster, user: PEER_READER, namespace: access.namespace } }],
    'current-context': access.cluster,
  });
}

/** The Secret, in another member's agent namespace, through which that member's agent reads `access.cluster`. */
export function peerSecret(access: PeerAccess, namespace: string, expiresAt: string): V1Secret {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      name: peerSecretName(access.cluster),
      namespace,
      labels: { ...LABELS, [PEER_LABEL]: access.cluster },
      annotations: { [PEER_TOKEN_EXPIRES_ANNOTATION]: expiresAt },
    },
    type: 'Opaque',
    data: { [PEER_KUBECONFIG_KEY]: Buffer.from(peerKubeconfig(access)).toString('base64') },
  };
}

/** `kind namespace/name` of an object, for messages. */
export function describeObject(object: KubernetesObject): string {
  const { namespace, name } = object.metadata ?? {};
  return `${object.kind ?? '?'} ${namespace ? `${namespace}/` : ''}${name ?? '?'}`;
}
