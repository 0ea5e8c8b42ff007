// A fleet of three real clusters rolled wave by wave (#21): one render with Cluster objects synced into every member at
// once (`edctl render -o DIR`, each member applying its own DIR/clusters/<name>/), one agent per member reading its
// peers through the Secrets `edctl fleet connect` made. The later wave waits until the first is Healthy at the new
// release for the soak, measured from its own first observation, recorded in its status before it acts (a restart
// during the soak keeps it); then it rolls. No agent writes into another cluster: the peer readers' requests in every
// member's audit log are reads. Figures (gate open → first group) are printed, never asserted on.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { stringify } from 'yaml';
import { binDirFor, readPins, repoRoot } from '../cluster/build.js';
import { inLab, livePid, startProcess } from '../cluster/lab.js';
import { AgentProcess } from './agent-process.js';
import { auditEvents } from './audit-log.js';
import { startFleet, type Fleet, type FleetMember } from './fleet-lab.js';
import { errorCode, sleep, waitFor } from './helpers.js';
import { GROUP, VERSION } from './rollout-kit.js';

const AGENT_NAMESPACE = 'extended-deployment-system';
const NAMESPACE = 'fleet-waves';
const ED = 'web';
const SOAK_SECONDS = 12;
const PEER_READER = `system:serviceaccount:${AGENT_NAMESPACE}:extendeddeployment-peer-reader`;

let fleet: Fleet;
let work = '';
const agents = new Map<string, AgentProcess>();
const member = (name: string): FleetMember => fleet.members.find((m) => m.name === name)!;
const kubectl = () => join(binDirFor(readPins()), 'kubectl');

function run(command: string, args: readonly string[]): string {
  const r = spawnSync(command, args, { cwd: repoRoot, encoding: 'utf8', timeout: 120_000 });
  if (r.status !== 0) throw new Error(`${command} ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  return r.stdout;
}
const edctl = (...args: string[]) => run(process.execPath, ['--import', 'tsx', join(repoRoot, 'cli', 'main.ts'), ...args]);
const kubectlIn = (m: FleetMember, ...args: string[]) => run(kubectl(), ['--kubeconfig', m.kubeconfig, ...args]);

/** The source as a platform team writes it: three Clusters, a DeployRegion, the ExtendedDeployment over them. */
function source(image: string): string {
  const docs = [
    ...['a', 'b', 'c'].map((name) => ({ apiVersion: `${GROUP}/${VERSION}`, kind: 'Cluster', metadata: { name } })),
    {
      apiVersion: `${GROUP}/${VERSION}`,
      kind: 'DeployRegion',
      metadata: { name: 'general-amd64' },
      spec: { matchLabels: { 'kubernetes.io/arch': 'amd64', [`${GROUP}/pool`]: 'general' } },
    },
    {
      apiVersion: `${GROUP}/${VERSION}`,
      kind: 'ExtendedDeployment',
      metadata: { name: ED, namespace: NAMESPACE },
      spec: {
        replicas: 9,
        selector: { matchLabels: { app: ED } },
        template: { metadata: { labels: { app: ED } }, spec: { containers: [{ name: 'app', image }] } },
        clusters: [{ name: 'a' }, { name: 'b' }, { name: 'c' }],
        regions: [{ name: 'general-amd64' }],
        strategy: {
          rolloutStrategy: 'Group',
          batchSize: 2,
          minReadySeconds: 1,
          fleet: { waves: [['a'], ['b', 'c']], minSuccessSeconds: SOAK_SECONDS },
        },
      },
    },
  ];
  return docs.map((d) => stringify(d)).join('---\n');
}

/**
 * Renders the source and applies each member's folder to it, all members at once (what Argo CD or Flux would do), or
 * to `to` only (a member that cannot be reached gets it later).
 */
async function deliver(image: string, to: readonly FleetMember[] = fleet.members): Promise<number> {
  const dir = join(work, `render-${image.replace(/[^a-z0-9]/g, '-')}`);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'fleet.yaml'), source(image));
  edctl('render', '-f', join(dir, 'fleet.yaml'), '-o', join(dir, 'out'));
  const at = Date.now();
  await Promise.all(to.map(async (m) => kubectlIn(m, 'apply', '--server-side', '--field-manager', 'gitops', '-f', join(dir, 'out', 'clusters', m.name))));
  return at;
}

interface FleetStatus {
  release?: string;
  gate?: { state: string; reason?: string; message?: string };
  peers?: { cluster: string; healthySince?: string; healthyRelease?: string }[];
}
interface EdView {
  metadata: { generation?: number };
  spec: { fleet: { release: string; wave: number } };
  status?: { phase?: string; observedGeneration?: number; currentGroup?: number; lastGroupStartTime?: string; revision?: string; fleet?: FleetStatus };
}
async function readEd(m: FleetMember): Promise<EdView> {
  return (await m.custom.getNamespacedCustomObject({
    group: GROUP,
    version: VERSION,
    namespace: NAMESPACE,
    plural: 'extendeddeployments',
    name: ED,
  })) as EdView;
}
const healthyAt = (ed: EdView, release: string) =>
  ed.status?.phase === 'Healthy' && ed.status.observedGeneration === ed.metadata.generation && ed.status.fleet?.release === release;

/** Pods of the ExtendedDeployment in a member running `image`. */
async function podsWithImage(m: FleetMember, image: string): Promise<number> {
  const pods = await m.core.listNamespacedPod({ namespace: NAMESPACE, labelSelector: `app=${ED}` });
  return pods.items.filter((p) => !p.metadata?.deletionTimestamp && p.spec?.containers[0]?.image === image).length;
}

/** Waits until every follower's gate waits for an unreachable predecessor, with no pod of web:3 started meanwhile. */
async function waitUnreachable(followers: readonly FleetMember[], how: string): Promise<void> {
  const early: string[] = [];
  await waitFor(
    `the next wave waits for an unreachable predecessor (${how})`,
    async () => {
      const eds = await Promise.all(followers.map(readEd));
      for (const m of followers) if ((await podsWithImage(m, 'registry.example/web:3')) > 0) early.push(`${m.name}: pods of web:3 while a is ${how}`);
      return eds.every((ed) => ed.status?.fleet?.gate?.reason === 'PredecessorUnreachable' && ed.status.observedGeneration === ed.metadata.generation);
    },
    { timeoutMs: 60_000, intervalMs: 300 },
  );
  expect(early).toEqual([]);
}

function startAgent(m: FleetMember, run = 0): AgentProcess {
  const agent = new AgentProcess({
    kubeconfig: m.kubeconfig,
    identity: `fleet-${m.name}-${run}`,
    namespace: NAMESPACE,
    leaseNamespace: AGENT_NAMESPACE,
    clusterName: m.name,
    peerKubeconfigs: join(work, 'peers', m.name),
  });
  agents.set(m.name, agent);
  return agent;
}

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'fleet-waves-'));
  fleet = await startFleet(['a', 'b', 'c']);
  for (const m of fleet.members) {
    kubectlIn(m, 'apply', '--server-side', '-f', join(repoRoot, 'crds'));
    kubectlIn(m, 'wait', '--for=condition=Established', '--timeout=60s', `crd/extendeddeployments.${GROUP}`, `crd/deployregions.${GROUP}`);
    for (const namespace of [AGENT_NAMESPACE, NAMESPACE]) {
      try {
        await m.core.createNamespace({ body: { metadata: { name: namespace } } });
      } catch (e) {
        if (errorCode(e) !== 409) throw e;
      }
    }
  }
  edctl('fleet', 'connect', ...fleet.members.flatMap((m) => ['--kubeconfig', `${m.name}=${m.kubeconfig}`]));
  // The agent's pod mounts the peer Secrets as <dir>/<cluster>/kubeconfig; here the files are written from them.
  for (const m of fleet.members) {
    for (const peer of fleet.members.filter((p) => p !== m)) {
      const secret = await m.core.readNamespacedSecret({ name: `extendeddeployment-peer-${peer.name}`, namespace: AGENT_NAMESPACE });
      mkdirSync(join(work, 'peers', m.name, peer.name), { recursive: true });
      writeFileSync(join(work, 'peers', m.name, peer.name, 'kubeconfig'), Buffer.from(secret.data?.['kubeconfig'] ?? '', 'base64'));
    }
  }
}, 600_000);

afterAll(async () => {
  await Promise.all([...agents.values()].map((a) => a.stop()));
  for (const m of fleet?.members ?? []) await m.core.deleteNamespace({ name: NAMESPACE }).catch(() => undefined);
  await fleet?.stop();
  if (work) rmSync(work, { recursive: true, force: true });
}, 180_000);

describe('waves', () => {
  test('the later wave starts only after the first is Healthy at the release for the soak; a restart keeps the soak', async () => {
    await deliver('registry.example/web:1');
    for (const m of fleet.members) startAgent(m);
    const first = (await readEd(member('a'))).spec.fleet.release;
    await Promise.all(
      fleet.members.map((m) => waitFor(`${m.name} Healthy at ${first}`, async () => healthyAt(await readEd(m), first), { timeoutMs: 180_000 })),
    );

    const delivered = await deliver('registry.example/web:2');
    const release = (await readEd(member('a'))).spec.fleet.release;
    expect(release).not.toBe(first);
    for (const m of fleet.members) expect((await readEd(m)).spec.fleet.release, `${m.name} renders the same release`).toBe(release);

    // Until the gate opens, no pod of the new template in wave 1; the soak start is recorded before anything acts.
    let restarted = false;
    let soakStart: string | undefined;
    const early: string[] = [];
    await waitFor(
      'wave 1 starts its first group',
      async () => {
        const [b, c] = await Promise.all([readEd(member('b')), readEd(member('c'))]);
        for (const [m, ed] of [
          [member('b'), b],
          [member('c'), c],
        ] as const) {
          const started = ed.status?.revision !== undefined && ed.status.fleet?.gate?.state === 'Open';
          if (!started && (await podsWithImage(m, 'registry.example/web:2')) > 0)
            early.push(`${m.name}: new pod while ${JSON.stringify(ed.status?.fleet?.gate)}`);
        }
        const since = b.status?.fleet?.peers?.find((p) => p.cluster === 'a')?.healthySince;
        if (since !== undefined && !restarted && b.status?.fleet?.gate?.reason === 'Soaking') {
          // b's agent dies during the soak (no graceful stop) and a new one takes over after the Lease expires.
          soakStart = since;
          restarted = true;
          agents.get('b')!.killHard();
          startAgent(member('b'), 1);
        }
        return b.status?.fleet?.gate?.state === 'Open' && c.status?.fleet?.gate?.state === 'Open';
      },
      { timeoutMs: 240_000, intervalMs: 300 },
    );
    expect(early).toEqual([]);
    expect(restarted, 'b was restarted during its soak').toBe(true);

    const a = await readEd(member('a'));
    expect(healthyAt(a, release), 'wave 0 completed the release').toBe(true);
    for (const m of [member('b'), member('c')]) {
      const ed = await readEd(m);
      const peer = ed.status?.fleet?.peers?.find((p) => p.cluster === 'a');
      expect(peer?.healthyRelease).toBe(release);
      const since = Date.parse(peer!.healthySince!);
      if (m.name === 'b') expect(peer?.healthySince, 'the restarted agent kept the recorded soak start').toBe(soakStart);
      const opened = since + SOAK_SECONDS * 1000;
      // The status write that started group 1 of this rollout, as the member's API server recorded it.
      const write = auditEvents(m.dir).find((e) => {
        const status = (e.requestObject as { status?: { revision?: string; currentGroup?: number } } | undefined)?.status;
        const at = Date.parse(e.stageTimestamp ?? '');
        return at >= delivered && e.objectRef?.subresource === 'status' && status?.revision === ed.status?.revision && status?.currentGroup === 1;
      });
      const groupStart = Date.parse((write?.requestObject as { status: { lastGroupStartTime: string } }).status.lastGroupStartTime);
      const written = Date.parse(write!.stageTimestamp!);
      expect(groupStart, `${m.name} started no earlier than the soak's end`).toBeGreaterThanOrEqual(opened);
      console.log(
        `fleet waves: ${m.name}${m.name === 'b' ? ' (its agent restarted during the soak: a new leader after the Lease expired)' : ''} ` +
          `started its first group ${groupStart - opened} ms after its soak ended, written ${written - opened} ms after (soak ${SOAK_SECONDS} s from ${peer?.healthySince})`,
      );
    }
    await Promise.all(
      fleet.members.map((m) => waitFor(`${m.name} Healthy at ${release}`, async () => healthyAt(await readEd(m), release), { timeoutMs: 180_000 })),
    );
  }, 600_000);

  test('an unreachable predecessor holds the next wave, hung and then refused; it goes on once the predecessor completes the release', async () => {
    const a = member('a');
    const followers = [member('b'), member('c')];
    const pid = inLab(a.dir, a.context, () => livePid('kube-apiserver'))!;
    // Hung: a's API server stops answering but keeps its connections (a frozen VM, a partition that drops packets).
    process.kill(pid, 'SIGSTOP');
    try {
      await deliver('registry.example/web:3', followers);
      await waitUnreachable(followers, 'hung');
    } finally {
      process.kill(pid, 'SIGCONT');
    }
    // Refused: a's API server is gone; started again with the same command line.
    const args = readFileSync(`/proc/${pid}/cmdline`, 'utf8')
      .split('\0')
      .filter((arg) => arg !== '');
    process.kill(pid, 'SIGKILL');
    await waitUnreachable(followers, 'refused');
    const [bin, ...rest] = args;
    inLab(a.dir, a.context, () => startProcess('kube-apiserver', bin!, rest));
    await waitFor(
      'a answers again',
      async () =>
        await a.core
          .listNamespace()
          .then(() => true)
          .catch(() => false),
      { timeoutMs: 60_000 },
    );

    await deliver('registry.example/web:3', [a]);
    const release = (await readEd(a)).spec.fleet.release;
    await Promise.all(
      fleet.members.map((m) => waitFor(`${m.name} Healthy at ${release}`, async () => healthyAt(await readEd(m), release), { timeoutMs: 180_000 })),
    );
  }, 600_000);

  test('no agent wrote into another cluster: every request of the peer readers in each member is a read', async () => {
    await sleep(1_000);
    for (const m of fleet.members) {
      const peerRequests = auditEvents(m.dir).filter((e) => e.user?.username === PEER_READER);
      expect(peerRequests.length, `${m.name} was read by its peers`).toBeGreaterThan(0);
      expect(
        peerRequests.filter((e) => !['get', 'list', 'watch'].includes(e.verb ?? '')).map((e) => `${e.verb} ${e.requestURI}`),
        m.name,
      ).toEqual([]);
    }
  });
});
