// What makes an agent one member of a fleet (docs/operating.md, "Fleet members"): its cluster's name and the peer
// Secrets of `edctl fleet connect`, mounted where --peer-kubeconfigs reads them. AgentInstall renders these from its
// `fleet` prop; a fleet render (render.ts) gives each member cluster's copy of an agent install its own, since one
// install written for the whole app goes to every cluster.
import { dnsLabel } from '../api/common.js';
import type { FieldPath, ObjectRef, Problem } from '../problems.js';
import { PEER_KUBECONFIG_KEY, peerKubeconfigPath, peerSecretName } from './peers.js';

/** One agent's place in a fleet. */
export interface AgentMembership {
  /** The member cluster the agent runs in (`--cluster-name`). */
  readonly cluster: string;
  /** Every other member, whose peer Secrets it mounts. */
  readonly peers: readonly string[];
}

/** Where the peer Secrets are mounted in the agent's container (`--peer-kubeconfigs`). */
export const PEER_KUBECONFIG_DIR = '/etc/extended-deployment/peers';
/** The pod volume of the peer Secrets. */
export const PEER_VOLUME = 'fleet-peers';
/** Labels of an agent install's objects (AgentInstall's, beside its name): how a fleet render finds its Deployment. */
export const AGENT_INSTALL_LABELS = { 'app.kubernetes.io/component': 'agent', 'app.kubernetes.io/part-of': 'extended-deployment' } as const;
/** The agent's container in its Deployment. */
export const AGENT_CONTAINER = 'agent';

/** The agent's flags of a membership; a member with no peers reads none (no folder to mount). */
export function membershipArgs(membership: AgentMembership): string[] {
  return [`--cluster-name=${membership.cluster}`, ...(membership.peers.length > 0 ? [`--peer-kubeconfigs=${PEER_KUBECONFIG_DIR}`] : [])];
}

/**
 * The projected volume of the peer Secrets, one source per peer, each `<peer>/kubeconfig`, and its read-only mount in
 * the agent's container; none without peers. Optional sources: a member connected after the agent started must not
 * keep its pods from starting; the kubelet adds the file once the Secret exists, and the agent picks it up (it reads
 * the folder again every 10 s). Not a subPath: those are never updated, and rotated tokens must reach the agent.
 */
export function peerMount(membership: AgentMembership) {
  if (membership.peers.length === 0) return undefined;
  const volume = {
    name: PEER_VOLUME,
    projected: {
      sources: membership.peers.map((peer) => ({
        secret: { name: peerSecretName(peer), optional: true, items: [{ key: PEER_KUBECONFIG_KEY, path: peerKubeconfigPath(peer) }] },
      })),
    },
  };
  return { volume, mount: { name: PEER_VOLUME, mountPath: PEER_KUBECONFIG_DIR, readOnly: true } };
}

/** What is wrong with a membership: names that are no DNS labels (the agent refuses them), the cluster among its peers, a peer twice. */
export function membershipProblems(membership: AgentMembership, object: ObjectRef, at: FieldPath): Problem[] {
  const problems: Problem[] = [];
  const label = (value: string, path: FieldPath) => {
    const parsed = dnsLabel.safeParse(value);
    if (!parsed.success) problems.push({ object, path, message: `${JSON.stringify(value)} ${parsed.error.issues[0]?.message ?? 'is invalid'}` });
  };
  label(membership.cluster, [...at, 'cluster']);
  membership.peers.forEach((peer, i) => {
    const path = [...at, 'peers', i];
    label(peer, path);
    if (peer === membership.cluster) problems.push({ object, path, message: `${JSON.stringify(peer)} is the agent's own cluster, not a peer` });
    else if (membership.peers.indexOf(peer) !== i) problems.push({ object, path, message: `${JSON.stringify(peer)} is named twice` });
  });
  return problems;
}

type Json = Record<string, unknown>;
const obj = (value: unknown): Json => (value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Json) : {});
const list = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);

/** Whether `raw` is an agent install's Deployment: apps/v1, with its labels and its `agent` container. */
export function isAgentDeployment(raw: unknown): boolean {
  const object = obj(raw);
  if (object['apiVersion'] !== 'apps/v1' || object['kind'] !== 'Deployment') return false;
  const labels = obj(obj(object['metadata'])['labels']);
  if (!Object.entries(AGENT_INSTALL_LABELS).every(([k, v]) => labels[k] === v)) return false;
  return list(obj(obj(obj(object['spec'])['template'])['spec'])['containers']).some((c) => obj(c)['name'] === AGENT_CONTAINER);
}

/** The `--cluster-name` an agent's args already give (`--cluster-name=x` or `--cluster-name x`). */
function clusterNameOf(args: readonly unknown[]): string | undefined {
  for (const [i, arg] of args.entries()) {
    if (typeof arg !== 'string') continue;
    if (arg.startsWith('--cluster-name=')) return arg.slice('--cluster-name='.length);
    if (arg === '--cluster-name' && typeof args[i + 1] === 'string') return args[i + 1] as string;
  }
  return undefined;
}

/**
 * An agent Deployment ({@link isAgentDeployment}) as the member `membership.cluster` runs it: its flags, the peer
 * volume and its mount added to a copy. One that already names its cluster is left as written (its own membership),
 * or, when it names another, returned with the problem: that agent would refuse every ExtendedDeployment of this cluster.
 */
export function memberAgent(raw: unknown, membership: AgentMembership): { object: unknown; problem?: Omit<Problem, 'object'> } {
  const deployment = obj(raw);
  const spec = obj(deployment['spec']);
  const template = obj(spec['template']);
  const pod = obj(template['spec']);
  const containers = list(pod['containers']);
  const at = containers.findIndex((c) => obj(c)['name'] === AGENT_CONTAINER);
  const container = obj(containers[at]);
  const args = list(container['args']);
  const named = clusterNameOf(args);
  if (named !== undefined) {
    if (named === membership.cluster) return { object: raw };
    const path = ['spec', 'template', 'spec', 'containers', at, 'args'];
    const message = `names cluster ${JSON.stringify(named)} (--cluster-name), but is rendered into cluster ${membership.cluster}: leave the fleet membership out, each member's copy gets its own`;
    return { object: raw, problem: { path, message } };
  }
  const peers = peerMount(membership);
  const agent = {
    ...container,
    args: [...args, ...membershipArgs(membership)],
    ...(peers && { volumeMounts: [...list(container['volumeMounts']), peers.mount] }),
  };
  const podSpec = {
    ...pod,
    ...(peers && { volumes: [...list(pod['volumes']), peers.volume] }),
    containers: containers.map((c, i) => (i === at ? agent : c)),
  };
  return { object: { ...deployment, spec: { ...spec, template: { ...template, spec: podSpec } } } };
}
