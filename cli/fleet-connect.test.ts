import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { DEFAULT_LEASE_NAMESPACE } from '../agent/options.js';
import { DEFAULT_AGENT_NAMESPACE } from '../constructs/agent-install.js';
import { PEER_KUBECONFIG_KEY, PEER_LABEL, peerSecretName } from '../core/fleet/peers.js';
import {
  fleetMembers,
  parseAssignment,
  parseTokenExpiration,
  peerKubeconfig,
  peerReaderObjects,
  peerSecret,
  sameServer,
  type MemberAssignment,
  type PeerAccess,
} from './fleet-connect.js';
import { run } from './run.js';
import { captured, captureOutput, fixture } from './test-support.js';

const a = (cluster: string, value: string): MemberAssignment => ({ cluster, value });

describe('the members on the command line', () => {
  it('splits <cluster>=<value> at the first "=" (a path may hold one)', () => {
    expect(parseAssignment('eu-1=prod-eu')).toEqual({ cluster: 'eu-1', value: 'prod-eu' });
    expect(parseAssignment('us-1=/tmp/a=b/config')).toEqual({ cluster: 'us-1', value: '/tmp/a=b/config' });
  });

  it.each([
    ['prod-eu', 'expected <cluster>=<value>'],
    ['EU=prod', 'cluster name "EU" must be a DNS label'],
    ['eu_1=prod', 'cluster name "eu_1" must be a DNS label'],
    ['=prod', 'cluster name "" must be a DNS label'],
    ['eu-1=', 'nothing after "eu-1="'],
  ])('refuses %j', (arg, message) => {
    expect(() => parseAssignment(arg)).toThrow(message);
  });

  it('joins --context and --kubeconfig of one cluster into one member, in the order first named', () => {
    expect(fleetMembers([a('eu-1', 'ctx-eu'), a('us-1', 'ctx-us')], [a('ap-1', '/k/ap'), a('eu-1', '/k/eu')])).toEqual({
      members: [
        { name: 'eu-1', context: 'ctx-eu', kubeconfig: '/k/eu' },
        { name: 'us-1', context: 'ctx-us' },
        { name: 'ap-1', kubeconfig: '/k/ap' },
      ],
    });
  });

  it.each<[string, MemberAssignment[], MemberAssignment[], string]>([
    ['no member', [], [], 'a fleet needs at least two members, got none'],
    ['one member', [a('eu-1', 'x')], [a('eu-1', '/k')], 'a fleet needs at least two members, got only eu-1'],
    ['a cluster twice', [a('eu-1', 'x'), a('eu-1', 'y')], [], '--context names cluster eu-1 more than once'],
  ])('refuses %s', (_what, contexts, kubeconfigs, message) => {
    expect(fleetMembers(contexts, kubeconfigs)).toEqual({ error: expect.stringContaining(message) });
  });

  it('refuses two members that are one API server', () => {
    expect(
      sameServer([
        { name: 'a', server: 'https://x' },
        { name: 'b', server: 'https://y' },
      ]),
    ).toBeUndefined();
    expect(
      sameServer([
        { name: 'a', server: 'https://x' },
        { name: 'b', server: 'https://y' },
        { name: 'c', server: 'https://x' },
      ]),
    ).toBe('members a and c are the same API server (https://x)');
  });

  it('reads --token-expiration as a duration of at least 10 minutes', () => {
    expect(parseTokenExpiration('720h')).toBe(2_592_000);
    expect(parseTokenExpiration('10m')).toBe(600);
    expect(() => parseTokenExpiration('9m')).toThrow('at least 10m');
    expect(() => parseTokenExpiration('1500ms')).toThrow('whole seconds');
    expect(() => parseTokenExpiration('30d')).toThrow('expected a duration');
  });

  it("defaults the agent namespace to AgentInstall's", () => {
    expect(DEFAULT_LEASE_NAMESPACE).toBe(DEFAULT_AGENT_NAMESPACE);
  });
});

describe('what every member gets', () => {
  it('a ServiceAccount that may only read ExtendedDeployments and the Leases of the agent namespace', () => {
    const [sa, clusterRole, clusterBinding, role, binding] = peerReaderObjects('agents');
    expect(sa).toMatchObject({ kind: 'ServiceAccount', metadata: { name: 'extendeddeployment-peer-reader', namespace: 'agents' } });
    expect(clusterRole.metadata).not.toHaveProperty('namespace');
    expect(clusterRole.rules).toEqual([{ apiGroups: ['extendeddeployment.io'], resources: ['extendeddeployments'], verbs: ['get', 'list', 'watch'] }]);
    expect(role.metadata).toMatchObject({ name: 'extendeddeployment-peer-reader', namespace: 'agents' });
    expect(role.rules).toEqual([{ apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get', 'list', 'watch'] }]);
    const subjects = [{ kind: 'ServiceAccount', name: 'extendeddeployment-peer-reader', namespace: 'agents' }];
    // One ClusterRoleBinding per agent namespace: two agent namespaces in one cluster do not take each other's.
    expect(clusterBinding).toMatchObject({
      metadata: { name: 'extendeddeployment-peer-reader-agents' },
      roleRef: { kind: 'ClusterRole', name: 'extendeddeployment-peer-reader' },
      subjects,
    });
    expect(binding).toMatchObject({ metadata: { namespace: 'agents' }, roleRef: { kind: 'Role', name: 'extendeddeployment-peer-reader' }, subjects });
  });
});

describe('the peer Secret', () => {
  const access: PeerAccess = { cluster: 'eu-1', server: 'https://eu.example:6443', caData: 'Q0E=', token: 'tok', namespace: 'agents' };

  it('holds a kubeconfig with the server, CA and token, its context current and in the agent namespace', () => {
    expect(parse(peerKubeconfig(access))).toEqual({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'eu-1', cluster: { server: 'https://eu.example:6443', 'certificate-authority-data': 'Q0E=' } }],
      users: [{ name: 'extendeddeployment-peer-reader', user: { token: 'tok' } }],
      contexts: [{ name: 'eu-1', context: { cluster: 'eu-1', user: 'extendeddeployment-peer-reader', namespace: 'agents' } }],
      'current-context': 'eu-1',
    });
  });

  it('keeps what else the context says of TLS', () => {
    const { caData: _ca, ...withoutCa } = access;
    expect(parse(peerKubeconfig({ ...withoutCa, insecureSkipTlsVerify: true, tlsServerName: 'api.eu' })).clusters[0].cluster).toEqual({
      server: 'https://eu.example:6443',
      'insecure-skip-tls-verify': true,
      'tls-server-name': 'api.eu',
    });
  });

  it('is named and labelled after the cluster it reads, with the kubeconfig under "kubeconfig"', () => {
    const secret = peerSecret(access, 'agents', '2026-12-28T00:00:00.000Z');
    expect(secret.metadata).toMatchObject({
      name: 'extendeddeployment-peer-eu-1',
      namespace: 'agents',
      labels: { 'extendeddeployment.io/peer': 'eu-1' },
      annotations: { 'extendeddeployment.io/peer-token-expires': '2026-12-28T00:00:00.000Z' },
    });
    expect(Buffer.from(secret.data?.['kubeconfig'] ?? '', 'base64').toString()).toBe(peerKubeconfig(access));
    // The names the agent install mounts (constructs/agent-install.ts) come from the same definitions.
    expect(secret.metadata).toMatchObject({ name: peerSecretName('eu-1'), labels: { [PEER_LABEL]: 'eu-1' } });
    expect(Object.keys(secret.data ?? {})).toEqual([PEER_KUBECONFIG_KEY]);
  });
});

describe('edctl fleet connect, before any cluster is contacted', () => {
  captureOutput();
  /** A kubeconfig with one context, `one`, of a server that is never contacted. */
  const oneContext = () =>
    join(
      fixture({
        config:
          'apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]\nusers: [{name: u, user: {token: t}}]\n' +
          'contexts: [{name: one, context: {cluster: c, user: u}}]\ncurrent-context: one\n',
      }),
      'config',
    );

  it.each([
    [['--context', 'eu-1=x'], 'error: a fleet needs at least two members, got only eu-1'],
    [
      ['--context', 'EU=x', '--context', 'us=y'],
      `error: option '--context <cluster>=<context>' argument 'EU=x' is invalid. cluster name "EU" must be a DNS label`,
    ],
    [['--context', 'a=x', '--context', 'b=y', '--token-expiration', '1m'], 'at least 10m'],
  ])('%j is a usage error (exit 2, no stack trace)', async (args, message) => {
    expect(await run(['fleet', 'connect', ...args])).toBe(2);
    expect(captured.err).toContain(message);
    expect(captured.err).toContain("Run 'edctl fleet connect --help' for usage.");
    expect(captured.err).not.toMatch(/^\s+at /m);
  });

  it('an unknown context is one line naming the member (exit 1)', async () => {
    const kubeconfig = oneContext();
    expect(await run(['fleet', 'connect', '--kubeconfig', `a=${kubeconfig}`, '--kubeconfig', `b=${kubeconfig}`, '--context', 'b=two'])).toBe(1);
    expect(captured.err).toBe('error: member b: context "two" not found in kubeconfig (known: one)\n');
  });

  it('two members on one API server are refused (exit 1)', async () => {
    const kubeconfig = oneContext();
    expect(await run(['fleet', 'connect', '--kubeconfig', `a=${kubeconfig}`, '--kubeconfig', `b=${kubeconfig}`])).toBe(1);
    expect(captured.err).toBe('error: members a and b are the same API server (https://127.0.0.1:1)\n');
  });
});
