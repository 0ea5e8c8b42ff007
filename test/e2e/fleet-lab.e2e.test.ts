// Three member clusters side by side (test/cluster/fleet.ts), each a full lab of its own next to the single lab; and
// `edctl fleet connect` between them: the Secret a member gets for a peer reads that peer's ExtendedDeployments and the
// Leases of its agent namespace, and is refused everything else. The lab's memory is printed, never asserted on.
import { spawnSync } from 'node:child_process';
import { delimiter, join } from 'node:path';
import {
  AuthorizationV1Api,
  CoordinationV1Api,
  CoreV1Api,
  CustomObjectsApi,
  KubeConfig,
  KubernetesObjectApi,
  type KubernetesObject,
  type V1Secret,
} from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { parse } from 'yaml';
import { PEER_TOKEN_EXPIRES_ANNOTATION, peerReaderObjects } from '../../cli/fleet-connect.js';
import { PEER_LABEL, peerSecretName } from '../../core/fleet/peers.js';
import { binDirFor, readPins, repoRoot } from '../cluster/build.js';
import { waitCrdsEstablished } from '../cluster/gitops.js';
import { inLab, topologyNodes } from '../cluster/lab.js';
import { startFleet, fleetMemory, type Fleet, type FleetMember } from './fleet-lab.js';
import { createNamespace, errorCode, nodeReady, testPod, uniqueName, waitFor } from './helpers.js';
import { extendedDeployment, GROUP, VERSION } from './rollout-kit.js';

const AGENT_NAMESPACE = 'extended-deployment-system';
let fleet: Fleet;
const member = (name: string): FleetMember => fleet.members.find((m) => m.name === name)!;

beforeAll(async () => {
  fleet = await startFleet(['a', 'b', 'c']);
}, 420_000);

afterAll(async () => {
  await fleet?.stop();
}, 120_000);

/** Creates an object unless it exists (a fleet kept with LAB_KEEP has it from an earlier run). */
async function createIfAbsent(create: () => Promise<unknown>): Promise<void> {
  try {
    await create();
  } catch (e) {
    if (errorCode(e) !== 409) throw e;
  }
}

describe('three clusters side by side', () => {
  test('each has its own API server, nodes and controllers; what one holds the others do not', async () => {
    expect(new Set(fleet.members.map((m) => m.kc.getCurrentCluster()?.server)).size).toBe(3);
    const expected = topologyNodes().map((n) => n.metadata.name);
    await Promise.all(
      fleet.members.map((m) =>
        waitFor(`every node of ${m.name} Ready`, async () => {
          const nodes = (await m.core.listNode()).items;
          return expected.every((name) => nodes.some((n) => n.metadata?.name === name && nodeReady(n) === 'True'));
        }),
      ),
    );

    // A ReplicaSet in each: its own controller-manager creates the pods, its scheduler binds them, its kwok runs them.
    const namespaces = await Promise.all(fleet.members.map((m) => createNamespace('fleet', m.core)));
    try {
      await Promise.all(
        fleet.members.map(async (m, i) => {
          const namespace = namespaces[i]!;
          const labels = { app: 'web' };
          await m.apps.createNamespacedReplicaSet({
            namespace,
            body: {
              metadata: { name: 'web' },
              spec: { replicas: 2, selector: { matchLabels: labels }, template: { metadata: { labels }, spec: testPod('web').spec! } },
            },
          });
          await waitFor(`ReplicaSet ${namespace}/web Ready in ${m.name}`, async () => {
            const rs = await m.apps.readNamespacedReplicaSet({ name: 'web', namespace });
            return rs.status?.readyReplicas === 2;
          });
        }),
      );

      const a = member('a');
      const marker = uniqueName('only-in-a');
      await a.core.createNamespacedConfigMap({ namespace: namespaces[0]!, body: { metadata: { name: marker }, data: { cluster: 'a' } } });
      expect((await a.core.listConfigMapForAllNamespaces({ fieldSelector: `metadata.name=${marker}` })).items).toHaveLength(1);
      for (const other of [member('b'), member('c')]) {
        expect((await other.core.listConfigMapForAllNamespaces({ fieldSelector: `metadata.name=${marker}` })).items, other.name).toHaveLength(0);
        await expect(other.core.readNamespace({ name: namespaces[0]! }), other.name).rejects.toMatchObject({ code: 404 });
      }

      const memory = fleetMemory(fleet);
      const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(0)} MiB`;
      console.log(
        `fleet lab memory (RSS of etcd, kube-apiserver, kcm, scheduler and kwok, per cluster, with a ReplicaSet of 2 pods each): ` +
          `${memory.map((m) => `${m.name} ${mib(m.rssBytes)}`).join(', ')}; total ${mib(memory.reduce((sum, m) => sum + m.rssBytes, 0))}`,
      );
    } finally {
      await Promise.all(fleet.members.map((m, i) => m.core.deleteNamespace({ name: namespaces[i]! })));
    }
  });
});

/** `edctl fleet connect` as users run it, from the sources; `env` adds to this process's environment. */
function fleetConnect(args: readonly string[], env: NodeJS.ProcessEnv = {}): { code: number | null; out: string; err: string } {
  const r = spawnSync(process.execPath, ['--import', 'tsx', join(repoRoot, 'cli', 'main.ts'), 'fleet', 'connect', ...args], {
    cwd: repoRoot,
    encoding: 'utf8',
    env: { ...process.env, ...env },
    timeout: 120_000,
  });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

/** Clients of the kubeconfig in a peer Secret. */
function peerClients(secret: V1Secret) {
  const kc = new KubeConfig();
  kc.loadFromString(Buffer.from(secret.data?.['kubeconfig'] ?? '', 'base64').toString());
  return {
    kc,
    core: kc.makeApiClient(CoreV1Api),
    coordination: kc.makeApiClient(CoordinationV1Api),
    custom: kc.makeApiClient(CustomObjectsApi),
    authorization: kc.makeApiClient(AuthorizationV1Api),
  };
}

async function peerSecretIn(holder: FleetMember, peer: string): Promise<V1Secret> {
  return holder.core.readNamespacedSecret({ name: peerSecretName(peer), namespace: AGENT_NAMESPACE });
}

/** The resourceVersion of every peer-reader object in a member: a run that changes nothing leaves them as they are. */
async function readerVersions(m: FleetMember): Promise<(string | undefined)[]> {
  const objects = KubernetesObjectApi.makeApiClient(m.kc);
  return Promise.all(
    peerReaderObjects(AGENT_NAMESPACE).map(async (o) => (await objects.read(o as KubernetesObject & { metadata: { name: string } })).metadata?.resourceVersion),
  );
}

describe('edctl fleet connect', () => {
  let edNamespace = '';
  const kubeconfigArgs = () => fleet.members.flatMap((m) => ['--kubeconfig', `${m.name}=${m.kubeconfig}`]);

  beforeAll(async () => {
    await Promise.all(fleet.members.map((m) => createIfAbsent(() => m.core.createNamespace({ body: { metadata: { name: AGENT_NAMESPACE } } }))));
    // In a: the CRDs (the lab's kubectl, as a GitOps tool applies crds/), an ExtendedDeployment and the agent's Lease.
    const a = member('a');
    const kubectl = join(binDirFor(readPins()), 'kubectl');
    const args = ['apply', '--server-side', '-f', join(repoRoot, 'crds')];
    const r = spawnSync(kubectl, ['--kubeconfig', a.kubeconfig, ...args], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`kubectl ${args.join(' ')}: ${r.stderr}`);
    // Not `kubectl wait --for=condition=Established`: it fails at once on a CRD without status yet (CI hit it).
    await inLab(a.dir, a.name, () => waitCrdsEstablished([`extendeddeployments.${GROUP}`]));
    edNamespace = await createNamespace('fleet-ed', a.core);
    const ed = extendedDeployment(edNamespace, 'x', { image: 'registry.example/app:1', replicas: [1] });
    // An Established CRD can take a moment more to be served.
    await waitFor('ExtendedDeployment created in a', async () => {
      await a.custom.createNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: edNamespace, plural: 'extendeddeployments', body: ed });
      return true;
    });
    await createIfAbsent(() =>
      a.kc
        .makeApiClient(CoordinationV1Api)
        .createNamespacedLease({ namespace: AGENT_NAMESPACE, body: { metadata: { name: 'extended-deployment-agent' }, spec: { holderIdentity: 'agent-0' } } }),
    );
  }, 180_000);

  afterAll(async () => {
    if (edNamespace) await member('a').core.deleteNamespace({ name: edNamespace });
  });

  test('every member gets a Secret per peer; the one in b reads the EDs and Leases of a and nothing else', async () => {
    const r = fleetConnect(kubeconfigArgs());
    expect(r.code, r.err).toBe(0);
    expect(r.out.trim().split('\n')).toHaveLength(3);
    for (const m of fleet.members) {
      const secrets = await m.core.listNamespacedSecret({ namespace: AGENT_NAMESPACE, labelSelector: PEER_LABEL });
      const peers = fleet.members.filter((p) => p !== m).map((p) => p.name);
      expect(secrets.items.map((s) => s.metadata?.labels?.[PEER_LABEL]).sort(), m.name).toEqual(peers);
      expect(secrets.items.map((s) => s.metadata?.name).sort()).toEqual(peers.map(peerSecretName));
    }

    const secret = await peerSecretIn(member('b'), 'a');
    // The default lifetime, 30 days (the lab's API server does not cap it).
    const expires = Date.parse(secret.metadata?.annotations?.[PEER_TOKEN_EXPIRES_ANNOTATION] ?? '');
    expect((expires - Date.now()) / 86_400_000).toBeCloseTo(30, 0);
    const peer = peerClients(secret);
    expect(peer.kc.getCurrentCluster()?.server).toBe(member('a').kc.getCurrentCluster()?.server);
    // Reads: the ExtendedDeployments of every namespace, the Leases of the agent namespace.
    const eds = (await peer.custom.listClusterCustomObject({ group: GROUP, version: VERSION, plural: 'extendeddeployments' })) as { items: KubernetesObject[] };
    expect(eds.items.map((e) => `${e.metadata?.namespace}/${e.metadata?.name}`)).toContain(`${edNamespace}/web`);
    await peer.custom.getNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: edNamespace, plural: 'extendeddeployments', name: 'web' });
    expect((await peer.coordination.listNamespacedLease({ namespace: AGENT_NAMESPACE })).items.map((l) => l.metadata?.name)).toContain(
      'extended-deployment-agent',
    );
    expect((await peer.coordination.readNamespacedLease({ name: 'extended-deployment-agent', namespace: AGENT_NAMESPACE })).spec?.holderIdentity).toBe(
      'agent-0',
    );
    for (const [group, resource, namespace] of [
      [GROUP, 'extendeddeployments', undefined],
      ['coordination.k8s.io', 'leases', AGENT_NAMESPACE],
    ] as const) {
      const review = await peer.authorization.createSelfSubjectAccessReview({
        body: { spec: { resourceAttributes: { group, resource, namespace, verb: 'watch' } } },
      });
      expect(review.status?.allowed, `watch ${resource}`).toBe(true);
    }

    // Refused: every write, and reading anything else (Secrets, Pods, Leases elsewhere).
    const forbidden: [string, () => Promise<unknown>][] = [
      [
        'create an ExtendedDeployment',
        () =>
          peer.custom.createNamespacedCustomObject({
            group: GROUP,
            version: VERSION,
            namespace: edNamespace,
            plural: 'extendeddeployments',
            body: extendedDeployment(edNamespace, 'y', { image: 'x:1', replicas: [1] }),
          }),
      ],
      [
        'delete an ExtendedDeployment',
        () => peer.custom.deleteNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: edNamespace, plural: 'extendeddeployments', name: 'web' }),
      ],
      ['create a Lease', () => peer.coordination.createNamespacedLease({ namespace: AGENT_NAMESPACE, body: { metadata: { name: 'x' } } })],
      [
        'update the Lease',
        () =>
          peer.coordination.replaceNamespacedLease({
            name: 'extended-deployment-agent',
            namespace: AGENT_NAMESPACE,
            body: { metadata: { name: 'extended-deployment-agent' }, spec: { holderIdentity: 'peer' } },
          }),
      ],
      ['list Secrets', () => peer.core.listNamespacedSecret({ namespace: AGENT_NAMESPACE })],
      ['read a Secret', () => peer.core.readNamespacedSecret({ name: peerSecretName('b'), namespace: AGENT_NAMESPACE })],
      ['list Pods', () => peer.core.listPodForAllNamespaces()],
      ['list Leases of another namespace', () => peer.coordination.listNamespacedLease({ namespace: 'kube-node-lease' })],
    ];
    for (const [what, call] of forbidden) await expect(call(), what).rejects.toMatchObject({ code: 403 });
  });

  test('running it again (--context over merged kubeconfigs) changes nothing but the tokens', async () => {
    const versions = await Promise.all(fleet.members.map(readerVersions));
    const before = await peerSecretIn(member('b'), 'a');
    const r = fleetConnect(
      fleet.members.flatMap((m) => ['--context', `${m.name}=${m.context}`]),
      { KUBECONFIG: fleet.members.map((m) => m.kubeconfig).join(delimiter) },
    );
    expect(r.code, r.err).toBe(0);
    expect(await Promise.all(fleet.members.map(readerVersions))).toEqual(versions);
    const after = await peerSecretIn(member('b'), 'a');
    const kubeconfig = (s: V1Secret) => parse(Buffer.from(s.data?.['kubeconfig'] ?? '', 'base64').toString()) as { users: { user: { token: string } }[] };
    const [old, renewed] = [kubeconfig(before), kubeconfig(after)];
    expect(renewed.users[0]?.user.token).not.toBe(old.users[0]?.user.token);
    renewed.users[0]!.user.token = old.users[0]!.user.token;
    expect(renewed).toEqual(old);
    // The new token reads too.
    const peer = peerClients(after);
    await peer.coordination.readNamespacedLease({ name: 'extended-deployment-agent', namespace: AGENT_NAMESPACE });
  });

  test('a mistyped agent namespace fails before anything is written: one line, exit 1', () => {
    const r = fleetConnect([...kubeconfigArgs(), '--agent-namespace', 'no-such-namespace']);
    expect(r.code).toBe(1);
    expect(r.out).toBe('');
    expect(r.err).toMatch(
      /^error: member [abc]: namespace no-such-namespace not found at https:\/\/127\.0\.0\.1:\d+ \(install the agent there first, or pass --agent-namespace\)\n$/,
    );
  });

  test('an unknown context is one line naming the member, exit 1', () => {
    const r = fleetConnect([...kubeconfigArgs(), '--context', 'b=nope']);
    expect(r.code).toBe(1);
    expect(r.err).toBe(`error: member b: context "nope" not found in kubeconfig (known: ${member('b').context})\n`);
  });
});
