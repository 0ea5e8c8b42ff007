// A fleet of three real clusters rolled wave by wave (#21): one render with Cluster objects synced into every member at
// once (`edctl render -o DIR`, each member applying its own DIR/clusters/<name>/), one agent per member reading its
// peers through the Secrets `edctl fleet connect` made. The later wave waits until the first is Healthy at the new
// release for the soak, measured from its own first observation, recorded in its status before it acts (a restart
// during the soak keeps it); then it rolls. A predecessor that hangs or refuses holds the next wave. The template leak
// of ReplicaSet regions is measured. With failover Additive, the survivors of a member whose API server dies add their
// parts of its replicas after the toleration and give them back once it is stable, with the fleet's available pods
// never below the total. No agent writes into another cluster: the peer readers' requests in every member's audit log
// are reads. Figures (soak end → first group, loss → additions) are printed, never asserted on.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { stringify } from 'yaml';
import { binDirFor, readPins, repoRoot } from '../cluster/build.js';
import { waitCrdsEstablished } from '../cluster/gitops.js';
import { failNodes, healNodes, inLab, livePid, pidAlive, startProcess } from '../cluster/lab.js';
import { AgentProcess } from './agent-process.js';
import { auditEvents } from './audit-log.js';
import { startFleet, type Fleet, type FleetMember } from './fleet-lab.js';
import { errorCode, sleep, waitFor } from './helpers.js';
import { GROUP, VERSION } from './rollout-kit.js';

const AGENT_NAMESPACE = 'extended-deployment-system';
const NAMESPACE = 'fleet-waves';
const ED = 'web';
const SOAK_SECONDS = 12;
const FAILOVER_TOLERANCE_SECONDS = 8;
/** Failover on: a member lost for the toleration is covered by the others. */
const API: App = { name: 'api', fleet: { failover: { mode: 'Additive', toleranceSeconds: FAILOVER_TOLERANCE_SECONDS, stabilizationSeconds: 10 } } };
/** The nodes of the fleet's one region (general-amd64) in a member. */
const REGION_NODES = `kubernetes.io/arch=amd64,${GROUP}/pool=general`;
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

/** An application of the fleet: its ExtendedDeployment's name and fleet strategy, and its members (a, b and c by default). */
interface App {
  readonly name: string;
  readonly fleet: Record<string, unknown>;
  readonly clusters?: readonly { readonly name: string; readonly replicas: number }[];
}
/** Waves: a, then b and c, after a soak. */
const WEB: App = { name: ED, fleet: { waves: [['a'], ['b', 'c']], minSuccessSeconds: SOAK_SECONDS } };

/** The source as a platform team writes it: three Clusters, a DeployRegion, the ExtendedDeployment over them. */
function source(image: string, app: App): string {
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
      metadata: { name: app.name, namespace: NAMESPACE },
      spec: {
        replicas: app.clusters?.reduce((sum, c) => sum + c.replicas, 0) ?? 9,
        selector: { matchLabels: { app: app.name } },
        template: { metadata: { labels: { app: app.name } }, spec: { containers: [{ name: 'app', image }] } },
        clusters: app.clusters ?? [{ name: 'a' }, { name: 'b' }, { name: 'c' }],
        regions: [{ name: 'general-amd64' }],
        strategy: {
          rolloutStrategy: 'Group',
          batchSize: 2,
          minReadySeconds: 1,
          fleet: app.fleet,
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
async function deliver(image: string, to: readonly FleetMember[] = fleet.members, app: App = WEB): Promise<number> {
  const split = (app.clusters ?? []).map((c) => `${c.name}${c.replicas}`).join('-');
  const dir = join(work, `render-${app.name}-${image.replace(/[^a-z0-9]/g, '-')}${split && `-${split}`}`);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'fleet.yaml'), source(image, app));
  edctl('render', '-f', join(dir, 'fleet.yaml'), '-o', join(dir, 'out'));
  const at = Date.now();
  await Promise.all(to.map(async (m) => kubectlIn(m, 'apply', '--server-side', '--field-manager', 'gitops', '-f', join(dir, 'out', 'clusters', m.name))));
  return at;
}

interface FleetStatus {
  release?: string;
  share?: number;
  handover?: { replicas: number; waitingFor: string[]; message: string };
  regionsFailed?: boolean;
  additions?: { cluster: string; replicas: number; since: string }[];
  gate?: { state: string; reason?: string; message?: string };
  peers?: { cluster: string; healthySince?: string; healthyRelease?: string; lostSince?: string }[];
}
interface EdView {
  metadata: { generation?: number };
  spec: { fleet: { release: string; wave: number } };
  status?: { phase?: string; observedGeneration?: number; currentGroup?: number; lastGroupStartTime?: string; revision?: string; fleet?: FleetStatus };
}
async function readEd(m: FleetMember, name = ED): Promise<EdView> {
  return (await m.custom.getNamespacedCustomObject({
    group: GROUP,
    version: VERSION,
    namespace: NAMESPACE,
    plural: 'extendeddeployments',
    name,
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
      for (const m of followers) if ((await podsWithImage(m, 'registry.example/web:3')) > 0) early.push(`${m.name}: pods of web:3 while a is ${how}`);
      const eds = await Promise.all(followers.map((m) => readEd(m)));
      return eds.every((ed) => ed.status?.fleet?.gate?.reason === 'PredecessorUnreachable' && ed.status.observedGeneration === ed.metadata.generation);
    },
    { timeoutMs: 60_000, intervalMs: 300 },
  );
  expect(early).toEqual([]);
}

/** Waits until every survivor records its part of c's replicas (api), and checks that the parts add up to them. */
async function survivorsCover(survivors: readonly FleetMember[]): Promise<{ cluster: string; replicas: number; since: string }[]> {
  const parts = await waitFor(
    `${survivors.map((m) => m.name).join(' and ')} add their parts of c`,
    async () => {
      const found = await Promise.all(survivors.map(async (m) => (await readEd(m, 'api')).status?.fleet?.additions?.find((x) => x.cluster === 'c')));
      return found.every((p) => p !== undefined) ? found : undefined;
    },
    { timeoutMs: 90_000, intervalMs: 300 },
  );
  expect(
    parts.reduce((sum, p) => sum + p.replicas, 0),
    'the parts add up to c’s replicas',
  ).toBe(3);
  return parts;
}

/** Ready pods of an application in a member, as its API server shows them. */
async function availablePods(m: FleetMember, app: string): Promise<number> {
  const pods = await m.core.listNamespacedPod({ namespace: NAMESPACE, labelSelector: `app=${app}` });
  return pods.items.filter((p) => !p.metadata?.deletionTimestamp && p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')).length;
}

/**
 * Kills a member's API server (SIGKILL); the function returned starts it again with the same command line once the
 * killed one has exited (its port is free only then: a restart right after the kill failed with "address already in
 * use") and waits until it answers.
 */
function killApiServer(m: FleetMember): () => Promise<void> {
  const pid = inLab(m.dir, m.context, () => livePid('kube-apiserver'))!;
  const [bin, ...args] = readFileSync(`/proc/${pid}/cmdline`, 'utf8')
    .split('\0')
    .filter((arg) => arg !== '');
  process.kill(pid, 'SIGKILL');
  return async () => {
    await waitFor(`${m.name}'s killed API server exits`, async () => !pidAlive(pid), { timeoutMs: 30_000, intervalMs: 50 });
    inLab(m.dir, m.context, () => startProcess('kube-apiserver', bin!, args));
    await waitFor(
      `${m.name} answers again`,
      async () =>
        m.core
          .listNamespace()
          .then(() => true)
          .catch(() => false),
      { timeoutMs: 60_000 },
    );
  };
}

/** Agent processes started per member so far: each gets an identity of its own. */
const started = new Map<string, number>();

/**
 * Starts an agent in `m`, started again when it exits by itself, as its Deployment would: an agent whose API server
 * does not answer for the renew deadline steps down and exits (agent.ts), which a slow machine reaches while the tests
 * pause or kill a member's API server (CI did, and every later test waited for an agent that was gone).
 */
function startAgent(m: FleetMember): AgentProcess {
  const run = started.get(m.name) ?? 0;
  started.set(m.name, run + 1);
  const agent = new AgentProcess({
    kubeconfig: m.kubeconfig,
    identity: `fleet-${m.name}-${run}`,
    namespace: NAMESPACE,
    leaseNamespace: AGENT_NAMESPACE,
    clusterName: m.name,
    peerKubeconfigs: join(work, 'peers', m.name),
    echo: !!process.env['AGENT_ECHO'],
  });
  agents.set(m.name, agent);
  void agent.exited.then(({ code, signal }) => {
    if (agent.endedByTest || agents.get(m.name) !== agent) return;
    const why = agent.lines.findLast((l) => l.msg === 'exiting')?.['error'];
    console.log(
      `fleet: ${agent.identity} exited by itself (code ${code}, signal ${signal}: ${typeof why === 'string' ? why : 'no reason logged'}); ` +
        'started again, as its Deployment would',
    );
    startAgent(m);
  });
  return agent;
}

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'fleet-waves-'));
  fleet = await startFleet(['a', 'b', 'c']);
  for (const m of fleet.members) {
    kubectlIn(m, 'apply', '--server-side', '-f', join(repoRoot, 'crds'));
    // Not `kubectl wait --for=condition=Established`: it fails at once on a CRD without status yet (CI hit it).
    await inLab(m.dir, m.name, () => waitCrdsEstablished([`extendeddeployments.${GROUP}`, `deployregions.${GROUP}`]));
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
    const look = async (m: FleetMember): Promise<EdView> => {
      // Pods first, then the status: a gate that opens between the two reads cannot count its own pods as early.
      const pods = await podsWithImage(m, 'registry.example/web:2');
      const ed = await readEd(m);
      const started = ed.status?.revision !== undefined && ed.status.fleet?.gate?.state === 'Open';
      if (!started && pods > 0) early.push(`${m.name}: new pod while ${JSON.stringify(ed.status?.fleet?.gate)}`);
      return ed;
    };
    await waitFor(
      'wave 1 starts its first group',
      async () => {
        const [b, c] = await Promise.all([look(member('b')), look(member('c'))]);
        const since = b.status?.fleet?.peers?.find((p) => p.cluster === 'a')?.healthySince;
        if (since !== undefined && !restarted && b.status?.fleet?.gate?.reason === 'Soaking') {
          // b's agent dies during the soak (no graceful stop) and a new one takes over after the Lease expires.
          soakStart = since;
          restarted = true;
          agents.get('b')!.killHard();
          startAgent(member('b'));
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
    const restartA = killApiServer(a);
    await waitUnreachable(followers, 'refused');
    await restartA();

    await deliver('registry.example/web:3', [a]);
    const release = (await readEd(a)).spec.fleet.release;
    await Promise.all(
      fleet.members.map((m) => waitFor(`${m.name} Healthy at ${release}`, async () => healthyAt(await readEd(m), release), { timeoutMs: 180_000 })),
    );
  }, 600_000);

  test('the template leak of ReplicaSet regions: pods replaced in a waiting wave start at the new template (measured)', async () => {
    await deliver('registry.example/web:4');
    const b = member('b');
    await waitFor('b waits for a', async () => (await readEd(b)).status?.fleet?.gate?.state === 'Waiting', { timeoutMs: 60_000 });
    // Two of b's pods go (an eviction, a lost node): its ReplicaSet replaces them from the template Git synced.
    const pods = (await b.core.listNamespacedPod({ namespace: NAMESPACE, labelSelector: `app=${ED}` })).items;
    const deleted = pods.slice(0, 2).map((p) => p.metadata!.name!);
    await Promise.all(deleted.map((name) => b.core.deleteNamespacedPod({ name, namespace: NAMESPACE })));
    const leaked = await waitFor(
      'the replacements, while b still waits',
      async () => {
        // Pods first: the agent writes a group's start into the status before it makes a pod, so a status still
        // waiting after the list means no pod of the list is the rollout's.
        const early = await podsWithImage(b, 'registry.example/web:4');
        const ed = await readEd(b);
        return ed.status?.fleet?.gate?.state === 'Waiting' && early >= deleted.length ? early : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 200 },
    );
    console.log(`fleet leak: ${leaked} of b's 3 pods run web:4 before its wave opened, after ${deleted.length} pods were deleted (ReplicaSet regions)`);
    expect(leaked, 'each replaced pod, and only those, starts at the new template').toBe(deleted.length);
    const release = (await readEd(member('a'))).spec.fleet.release;
    await Promise.all(
      fleet.members.map((m) => waitFor(`${m.name} Healthy at ${release}`, async () => healthyAt(await readEd(m), release), { timeoutMs: 180_000 })),
    );
  }, 600_000);

  test('failover Additive: a member whose API server dies is covered by the others within the toleration; they give it back once it is stable', async () => {
    await deliver('registry.example/api:1', fleet.members, API);
    await Promise.all(
      fleet.members.map((m) => waitFor(`${m.name} runs api Healthy`, async () => (await readEd(m, 'api')).status?.phase === 'Healthy', { timeoutMs: 120_000 })),
    );
    const [a, b, c] = [member('a'), member('b'), member('c')];

    // Fleet-wide available pods, sampled all along; a member that cannot be read counts with what it last showed (its
    // pods keep running where only its API server is down).
    const lastSeen = new Map<string, number>(await Promise.all(fleet.members.map(async (m) => [m.name, await availablePods(m, 'api')] as const)));
    expect([...lastSeen.values()], 'every member runs its 3 pods before c is lost').toEqual([3, 3, 3]);
    const samples: number[] = [];
    const timeline: string[] = [];
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        const counts = await Promise.all(
          fleet.members.map(async (m) => {
            const seen = await availablePods(m, 'api').catch(() => undefined);
            if (seen !== undefined) lastSeen.set(m.name, seen);
            return lastSeen.get(m.name) ?? 0;
          }),
        );
        samples.push(counts.reduce((x, y) => x + y, 0));
        timeline.push(`${new Date().toISOString().slice(11, 23)} ${counts.join('+')}`);
        await sleep(500);
      }
    })();

    try {
      // c is lost: its agent and its API server die (kill -9).
      agents.get('c')!.killHard();
      const restartC = killApiServer(c);
      const killed = Date.now();
      const added = await survivorsCover([a, b]);
      for (const m of [a, b]) {
        const lostSince = (await readEd(m, 'api')).status?.fleet?.peers?.find((p) => p.cluster === 'c')?.lostSince;
        const since = Date.parse(added[m === a ? 0 : 1]!.since);
        console.log(
          `fleet failover: ${m.name} recorded c lost ${Date.parse(lostSince ?? '') - killed} ms after the kill and added ` +
            `${added[m === a ? 0 : 1]!.replicas} replicas ${since - Date.parse(lostSince ?? '') - FAILOVER_TOLERANCE_SECONDS * 1000} ms after the toleration ended`,
        );
      }
      await waitFor('a and b run all 9 pods available', async () => (await availablePods(a, 'api')) + (await availablePods(b, 'api')) === 9, {
        timeoutMs: 90_000,
      });

      // c comes back: its API server with the same command line, then its agent; a and b give their parts back only
      // once c has been Healthy with its replicas available for the stabilization.
      await restartC();
      startAgent(c);
      await Promise.all(
        [a, b].map((m) =>
          waitFor(`${m.name} gives its part back`, async () => ((await readEd(m, 'api')).status?.fleet?.additions ?? []).length === 0, { timeoutMs: 120_000 }),
        ),
      );
      await waitFor(
        'every member runs its own 3 pods again',
        async () => (await Promise.all(fleet.members.map((m) => availablePods(m, 'api')))).every((n) => n === 3),
        {
          timeoutMs: 120_000,
        },
      );
    } finally {
      sampling = false;
      await sampler;
    }
    console.log(`fleet failover: fleet-wide available pods over ${samples.length} samples: min ${Math.min(...samples)}, max ${Math.max(...samples)} (total 9)`);
    expect(Math.min(...samples), `fleet-wide available pods never below the total (a+b+c per sample: ${timeline.join(', ')})`).toBeGreaterThanOrEqual(9);
  }, 600_000);

  test('failover Additive: a member whose every node fails (its API alive) is covered too, and given back once its nodes are back', async () => {
    const [a, b, c] = [member('a'), member('b'), member('c')];
    await Promise.all(
      fleet.members.map((m) => waitFor(`${m.name} runs api Healthy`, async () => (await readEd(m, 'api')).status?.phase === 'Healthy', { timeoutMs: 120_000 })),
    );
    const quiet = () => undefined;
    await inLab(c.dir, c.context, () => failNodes(REGION_NODES, quiet));
    try {
      await waitFor('c publishes that every region failed', async () => (await readEd(c, 'api')).status?.fleet?.regionsFailed === true, { timeoutMs: 120_000 });
      await survivorsCover([a, b]);
      await waitFor('a and b run all 9 pods available', async () => (await availablePods(a, 'api')) + (await availablePods(b, 'api')) === 9, {
        timeoutMs: 90_000,
      });
    } finally {
      await inLab(c.dir, c.context, () => healNodes(REGION_NODES, quiet));
    }
    await Promise.all(
      [a, b].map((m) =>
        waitFor(`${m.name} gives its part back`, async () => ((await readEd(m, 'api')).status?.fleet?.additions ?? []).length === 0, { timeoutMs: 180_000 }),
      ),
    );
    await waitFor(
      'every member runs its own 3 pods again',
      async () => (await Promise.all(fleet.members.map((m) => availablePods(m, 'api')))).every((n) => n === 3),
      {
        timeoutMs: 120_000,
      },
    );
  }, 600_000);

  test('a false alarm (b reads c through a dead port while c is fine) adds at most c’s replicas, and b gives them back', async () => {
    const [a, b, c] = [member('a'), member('b'), member('c')];
    await Promise.all(
      fleet.members.map((m) => waitFor(`${m.name} runs api Healthy`, async () => (await readEd(m, 'api')).status?.phase === 'Healthy', { timeoutMs: 120_000 })),
    );
    const file = join(work, 'peers', 'b', 'c', 'kubeconfig');
    const good = readFileSync(file, 'utf8');
    // b's peer kubeconfig for c points at a port nobody listens on (a wrong address, a firewall); the agent reads the
    // folder again within 10 s.
    writeFileSync(file, good.replace(/server: https:\/\/127\.0\.0\.1:\d+/, 'server: https://127.0.0.1:9'));
    try {
      const part = await waitFor(
        'b counts c as lost and adds its part',
        async () => (await readEd(b, 'api')).status?.fleet?.additions?.find((x) => x.cluster === 'c'),
        { timeoutMs: 90_000, intervalMs: 300 },
      );
      // Only b believes it: a adds nothing, c keeps its own; the extra is bounded by c's replicas.
      expect((await readEd(a, 'api')).status?.fleet?.additions ?? []).toEqual([]);
      expect(part.replicas).toBeLessThanOrEqual(3);
      await waitFor('b runs its extra pods', async () => (await availablePods(b, 'api')) === 3 + part.replicas, { timeoutMs: 60_000 });
      expect(await availablePods(c, 'api')).toBe(3);
      console.log(`fleet false alarm: b added ${part.replicas} replica(s) for c; a and c unchanged`);
    } finally {
      writeFileSync(file, good);
    }
    await waitFor('b gives its part back once it sees c stable', async () => ((await readEd(b, 'api')).status?.fleet?.additions ?? []).length === 0, {
      timeoutMs: 120_000,
    });
    await waitFor('b runs its own 3 pods again', async () => (await availablePods(b, 'api')) === 3, { timeoutMs: 60_000 });
  }, 600_000);

  test('make-before-break through Git: a cluster added, then one drained and removed; members shrink only once the others run their shares', async () => {
    const [a, b, c] = [member('a'), member('b'), member('c')];
    /** The shop application with these shares, in a, b, c order. */
    const shop = (shares: Record<string, number>): App => ({
      name: 'shop',
      fleet: { minSuccessSeconds: 1 },
      clusters: Object.entries(shares).map(([name, replicas]) => ({ name, replicas })),
    });
    const counts = async (members: readonly FleetMember[]) => Promise.all(members.map((m) => availablePods(m, 'shop')));
    for (const m of fleet.members) if (!agents.has(m.name)) startAgent(m);
    await deliver('registry.example/shop:1', [a, b], shop({ a: 4, b: 4 }));
    await waitFor('a and b run 4 shop pods each', async () => (await counts([a, b])).every((n) => n === 4), { timeoutMs: 120_000 });

    /**
     * Fleet-wide available shop pods, sampled all along, the growing members read before the shrinking ones: a growing
     * count read earlier is at most what it is when the last count is read, so each sample is a lower bound of the
     * fleet's pods at one instant.
     */
    const watchFleet = (growing: readonly FleetMember[], shrinking: readonly FleetMember[]) => {
      const samples: string[] = [];
      let low = Number.POSITIVE_INFINITY;
      let on = true;
      const done = (async () => {
        while (on) {
          const n = [...(await counts(growing)), ...(await counts(shrinking))];
          low = Math.min(
            low,
            n.reduce((x, y) => x + y, 0),
          );
          samples.push(n.join('+'));
          await sleep(250);
        }
      })();
      return {
        stop: async () => {
          on = false;
          await done;
          return { low, samples };
        },
      };
    };
    /** Waits until `m` holds a handover for `waitingFor`, then checks it keeps its pods for a while. */
    const holds = async (m: FleetMember, share: number, kept: number, waitingFor: string) => {
      const ed = await waitFor(`${m.name} holds ${kept} pods for ${waitingFor}`, async () => {
        const ed = await readEd(m, 'shop');
        return ed.status?.fleet?.handover?.waitingFor.includes(waitingFor) && ed.status.observedGeneration === ed.metadata.generation ? ed : undefined;
      });
      expect(ed.status?.fleet).toMatchObject({ share: kept, handover: { replicas: share } });
      await sleep(4_000);
      expect(await availablePods(m, 'shop'), `${m.name} still runs ${kept} pods: ${(await readEd(m, 'shop')).status?.fleet?.handover?.message}`).toBe(kept);
    };

    // c joins (a, b: 4 → 3; c: 2) while c's agent is down: a and b keep their 4 pods until c runs its 2.
    await agents.get('c')!.stop();
    const joining = watchFleet([c], [a, b]);
    try {
      await deliver('registry.example/shop:1', fleet.members, shop({ a: 3, b: 3, c: 2 }));
      await Promise.all([holds(a, 3, 4, 'c'), holds(b, 3, 4, 'c')]);
      // Without its agent c has at most the one pod its new ReplicaSet starts with (Git creates it without replicas).
      expect(await availablePods(c, 'shop')).toBeLessThan(2);
      // What an operator sees of it, every member in one table (each read with its own kubeconfig).
      const report = JSON.parse(
        edctl('fleet', 'status', 'shop', '-n', NAMESPACE, '-o', 'json', ...fleet.members.flatMap((m) => ['--kubeconfig', `${m.name}=${m.kubeconfig}`])),
      ) as { releases: string[]; members: { cluster: string; share: number; runs: number; notes: string[] }[] };
      expect(report.releases).toHaveLength(1);
      expect(report.members.map((m) => [m.cluster, m.share, m.runs])).toEqual([
        ['a', 3, 4],
        ['b', 3, 4],
        ['c', 2, 2],
      ]);
      expect(report.members[0]?.notes).toContain('handover: keeps 4, waiting for c');
      // kubectl get ed -o wide: the member's place in the fleet, from the CRD's printer columns.
      const wide = kubectlIn(a, 'get', 'ed', 'shop', '-n', NAMESPACE, '-o', 'wide').split('\n');
      expect(wide[0]).toMatch(/AGE\s+CLUSTER\s+WAVE\s+RELEASE\s+GATE/);
      expect(wide[1]).toMatch(new RegExp(`\\s+a\\s+0\\s+${report.releases[0]}`));
      startAgent(c);
      await waitFor('a 3, b 3 and c 2 shop pods', async () => (await counts([a, b, c])).join() === '3,3,2', { timeoutMs: 120_000 });
    } finally {
      const { low, samples } = await joining.stop();
      console.log(`fleet handover (c joins): fleet-wide available shop pods min ${low} over ${samples.length} samples (total 8; c+a+b: ${samples.join(', ')})`);
      expect(low, 'never fewer than the total while c joined').toBeGreaterThanOrEqual(8);
    }
    for (const m of [a, b]) expect((await readEd(m, 'shop')).status?.fleet).toMatchObject({ share: 3 });

    // c is drained (c: 0; a, b: 4) while a's agent is down: c keeps its 2 pods until a runs its 4.
    await agents.get('a')!.stop();
    const draining = watchFleet([a, b], [c]);
    try {
      await deliver('registry.example/shop:1', fleet.members, shop({ a: 4, b: 4, c: 0 }));
      await holds(c, 0, 2, 'a');
      startAgent(a);
      await waitFor('a 4, b 4 and c 0 shop pods', async () => (await counts([a, b, c])).join() === '4,4,0', { timeoutMs: 120_000 });
    } finally {
      const { low, samples } = await draining.stop();
      console.log(
        `fleet handover (c drains): fleet-wide available shop pods min ${low} over ${samples.length} samples (total 8; a+b+c: ${samples.join(', ')})`,
      );
      expect(low, 'never fewer than the total while c drained').toBeGreaterThanOrEqual(8);
    }

    // c leaves the fleet: the render has no folder for it (Argo CD and Flux prune its objects); a and b keep their 4.
    await deliver('registry.example/shop:1', [a, b], shop({ a: 4, b: 4 }));
    await c.custom.deleteNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: NAMESPACE, plural: 'extendeddeployments', name: 'shop' });
    const release = (await readEd(a, 'shop')).spec.fleet.release;
    for (const m of [a, b]) {
      await waitFor(`${m.name} Healthy at the release without c`, async () => healthyAt(await readEd(m, 'shop'), release), { timeoutMs: 120_000 });
      expect((await readEd(m, 'shop')).status?.fleet?.handover).toBeUndefined();
    }
    expect(await counts([a, b])).toEqual([4, 4]);
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
