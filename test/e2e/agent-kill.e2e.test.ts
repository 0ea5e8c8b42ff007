// The agent killed with SIGKILL in the middle of rollouts. The compiled agent runs as a child process through a small
// TLS proxy (api-proxy.ts) that sees every request it makes. Two kinds of kills:
//
// - random: a seeded generator picks a delay of 0.3–3 s after each new agent became leader (the seed is printed;
//   KILL_SEED=<n> repeats the schedule);
// - between intent and action: the proxy lets through the status write that records a new group (or a new rollout)
//   and kills the agent at its very next write to a ReplicaSet or pod, which is dropped: the cluster holds the intent
//   but not the action, exactly what a crash between the two writes leaves.
//
// Every kill is followed by a new agent process (new identity, same Lease), which must wait for the dead holder's Lease
// to expire (--lease-duration 4 keeps that short). Rollouts (3 regions, 3/2/2 replicas, Beta, batch 1, minReadySeconds
// 1, no gates) follow each other until every kill has happened. Throughout, the invariant watcher (invariants.ts) checks that no pod at the
// revision its region is rolling to is deleted, that no region ever has more than desired + batch pods (terminating
// ones included: the scaleOutPriority ceiling) or fewer available than desired, and the rest of its rules, among them that the group never goes back within a rollout and that a group keeps its start
// time across agents. Each rollout must end Healthy with exactly the desired pods per region, all at the new revision,
// and the cluster must match Git at the end. Nothing asserts on speed.
import { randomInt } from 'node:crypto';
import { expect } from 'vitest';
import type { ExtendedDeploymentStatus } from '../../core/api/extended-deployment.js';
import { NAME_LABEL } from '../../core/labels.js';
import type { RenderedExtendedDeployment } from '../../core/render.js';
import { renderedIdentity } from './agent-identity.js';
import { AgentProcess, seededRandom } from './agent-process.js';
import { startApiProxy, type ProxiedRequest, type Verdict } from './api-proxy.js';
import { clients, serverSideApply, sleep, test, uniqueName, waitFor } from './helpers.js';
import {
  apply,
  readStatus,
  deleteAll,
  extendedDeployment,
  installCrds,
  podCounts,
  podLabels,
  render,
  threeRegions,
  waitRolledOut,
} from './rollout-fixtures.js';
import { waitMatchesGit } from './git-match.js';
import { start as startWatcher, stopAndReport } from './invariants.js';
import { observedExtremes } from './rollout-kit.js';

const REPLICAS = [3, 2, 2] as const;
const BATCH = 1;
const RANDOM_KILLS = 5;
const LEASE_SECONDS = 4;
const MAX_ROLLOUTS = 12;

interface Kill {
  readonly n: number;
  readonly kind: 'random' | 'intent';
  readonly agent: string;
  /** ms after the agent became leader */
  readonly afterLeaderMs: number;
  readonly status: string;
  readonly detail?: string;
}

/** Where an intent kill is armed: the status write that records `group` of rollout `revision`. */
interface IntentTrap {
  readonly revision: string;
  readonly group: number;
  statusWritten: boolean;
  fired: boolean;
  /** The status found right after the kill (before the next agent leads). */
  left?: ExtendedDeploymentStatus;
}

test(
  'kill -9 at random points and between intent and action: every rollout completes, no new pod is ever deleted, no region exceeds desired + batch',
  { timeout: 900_000 },
  async ({ ns }) => {
    const seed = process.env.KILL_SEED ? Number(process.env.KILL_SEED) : randomInt(2 ** 31);
    const random = seededRandom(seed);
    console.log(`agent-kill: seed ${seed} (KILL_SEED=${seed} repeats the kill delays)`);
    await installCrds();
    const suffix = uniqueName('k').slice(2);
    const regions = threeRegions(suffix);
    for (const region of regions) await serverSideApply(region);
    const renders: RenderedExtendedDeployment[] = [];
    const renderVersion = (v: number) => render([...regions, extendedDeployment(ns, regions, REPLICAS, `registry.example/web:${v}`)]);

    // ---- the agents' identity: the rendered install's ServiceAccount, under its RBAC and admission policies
    const account = await renderedIdentity(ns, suffix);

    // ---- invariants, from watches
    const desired = new Map(regions.map((r, i) => [r.metadata!.name!, REPLICAS[i]!]));
    const watch = await startWatcher({ kubeConfig: clients().kc, namespace: ns, name: 'web' });
    let failed = false;
    const describeStatus = () => {
      const s = watch.latest().ed?.status;
      return `rollout ${s?.revision ?? '-'} ${s?.phase ?? '-'} group ${s?.currentGroup ?? '-'}/${s?.totalGroups ?? '-'}`;
    };

    // ---- agents: one at a time, each killed and replaced by the next
    const kills: Kill[] = [];
    const traps: IntentTrap[] = [];
    let agent: AgentProcess | undefined;
    let agents = 0;
    let leaderAt = 0;
    let randomKillTimer: NodeJS.Timeout | undefined;
    let finishing = false;

    const kill = (kind: Kill['kind'], detail?: string, trap?: IntentTrap) => {
      const victim = agent;
      if (!victim || !victim.alive()) return;
      clearTimeout(randomKillTimer);
      randomKillTimer = undefined;
      victim.killHard();
      const record: Kill = {
        n: kills.length + 1,
        kind,
        agent: victim.identity,
        afterLeaderMs: leaderAt ? Date.now() - leaderAt : -1,
        status: describeStatus(),
        ...(detail && { detail }),
      };
      kills.push(record);
      if (kind === 'intent') {
        // What the crash left in the cluster: the status records the group, the ReplicaSets are as they were.
        void (async () => {
          const status = await readStatus(ns);
          if (trap) trap.left = status;
          const replicaSets = (await clients().apps.listNamespacedReplicaSet({ namespace: ns, labelSelector: `${NAME_LABEL}=web` })).items;
          const left = `left: status ${status.revision} group ${status.currentGroup} started ${status.lastGroupStartTime}; ReplicaSets ${replicaSets.map((r) => `${r.metadata?.name}=${r.spec?.replicas}`).join(' ')}`;
          kills[record.n - 1] = { ...record, detail: `${record.detail}; ${left}` };
        })().catch(() => undefined);
      }
      void victim.exited.then(() => startAgentProcess());
    };
    const onRequest = (r: ProxiedRequest): Verdict => {
      const path = r.path.split('?')[0] ?? '';
      const trap = traps.find((t) => !t.fired);
      if (!trap || !agent?.alive()) return 'forward';
      if (r.method === 'PUT' && path.endsWith('/extendeddeployments/web/status')) {
        const status = (JSON.parse(r.body.toString() || '{}') as { status?: ExtendedDeploymentStatus }).status;
        if (status?.revision === trap.revision && status.currentGroup === trap.group) trap.statusWritten = true;
        return 'forward';
      }
      if (trap.statusWritten && r.method !== 'GET' && /\/(replicasets|pods)(\/|$)/.test(path)) {
        trap.fired = true;
        kill('intent', `rollout ${trap.revision} group ${trap.group}: status written, then dropped ${r.method} ${path.replace(`/namespaces/${ns}`, '')}`, trap);
        return 'drop';
      }
      return 'forward';
    };
    const proxy = await startApiProxy(ns, onRequest);
    // Through the proxy as the ServiceAccount: the proxy forwards the Impersonate-User header with the admin's certificate.
    const kubeconfig = account.kubeconfigFile(proxy.kubeconfig);

    const startAgentProcess = () => {
      if (finishing) return;
      agents += 1;
      leaderAt = 0;
      const next = new AgentProcess({
        kubeconfig,
        identity: `a${agents}`,
        namespace: ns,
        leaseNamespace: ns,
        leaseDurationSeconds: LEASE_SECONDS,
        echo: !!process.env.AGENT_ECHO,
      });
      agent = next;
      next.waitForLog('became leader', 120_000).then(
        () => {
          if (agent !== next || !next.alive()) return;
          leaderAt = Date.now();
          scheduleRandomKill();
        },
        () => undefined, // killed before it led (the intent trap can hit a fresh leader too): the next one takes over
      );
    };
    /** Random kills start with the first rollout (v2); each leader gets one, 0.3–3 s after it started leading. */
    let randomKillsArmed = false;
    const scheduleRandomKill = () => {
      if (!randomKillsArmed || finishing || !leaderAt || randomKillTimer || kills.filter((k) => k.kind === 'random').length >= RANDOM_KILLS) return;
      const delay = Math.max(0, leaderAt + 300 + Math.floor(random() * 2700) - Date.now());
      randomKillTimer = setTimeout(() => {
        randomKillTimer = undefined;
        kill('random');
      }, delay);
    };

    try {
      // v1: the agent scales the freshly synced ReplicaSets to 3/2/2.
      renders.push(renderVersion(1));
      await apply(renders[0]!);
      startAgentProcess();
      await waitRolledOut(ns, renders[0]!);

      // Rollouts one after another until every kill happened. The intent traps: the start of group 2 of the first
      // rollout, and the start of the second rollout (group 1: its first pods are marked and scaled right after).
      const durations: string[] = [];
      for (let v = 2; v <= MAX_ROLLOUTS; v++) {
        const next = renderVersion(v);
        renders.push(next);
        if (v === 2) traps.push({ revision: next.rolloutRevision, group: 2, statusWritten: false, fired: false });
        if (v === 3) traps.push({ revision: next.rolloutRevision, group: 1, statusWritten: false, fired: false });
        const started = Date.now();
        await apply(next);
        randomKillsArmed = true;
        scheduleRandomKill();
        const status = await waitRolledOut(ns, next, 300_000);
        expect(status.regions?.map((r) => [r.name, r.desired, r.updated, r.available])).toEqual(
          next.regions.map((r) => [r.name, r.replicas, r.replicas, r.replicas]),
        );
        durations.push(`v${v}: ${((Date.now() - started) / 1000).toFixed(1)} s`);
        const randomKills = kills.filter((k) => k.kind === 'random').length;
        if (v >= 3 && randomKills >= RANDOM_KILLS && traps.every((t) => t.fired)) break;
      }
      finishing = true;
      clearTimeout(randomKillTimer);

      // The final state, once more from a fresh read: every pod of every region at the last revision, desired counts;
      // and the watcher's picture matches Git.
      const last = renders[renders.length - 1]!;
      const counts = await podCounts(ns, last);
      expect(counts.map((c) => [c.name, c.updated, c.old, c.terminating])).toEqual(last.regions.map((r) => [r.name, r.replicas, 0, 0]));
      const livePods = (await clients().core.listNamespacedPod({ namespace: ns, labelSelector: `${NAME_LABEL}=web` })).items;
      const lastTargets = new Map(last.regions.map((r) => [r.name, r.revision]));
      for (const pod of livePods) expect(podLabels(pod).revision).toBe(lastTargets.get(podLabels(pod).region));
      expect(await waitMatchesGit(watch, last), 'the cluster matches Git').toEqual([]);

      const extremes = observedExtremes(watch, 0, [...desired.keys()]);
      console.log(
        [
          `agent-kill: seed ${seed}; ${renders.length - 1} rollouts after v1 (${durations.join(', ')}); ${agents} agent processes; lease ${LEASE_SECONDS} s`,
          ...kills.map(
            (k) =>
              `  kill ${k.n} (${k.kind}) of ${k.agent}, ${k.afterLeaderMs} ms after it became leader; status then: ${k.status}${k.detail ? `; ${k.detail}` : ''}`,
          ),
          `  most pods seen per region (ceiling desired + ${BATCH}): ${extremes.map((e) => `${e.name} ${e.maxPods}/${(desired.get(e.name) ?? 0) + BATCH}`).join(', ')}`,
        ].join('\n'),
      );
      expect(kills.filter((k) => k.kind === 'random')).toHaveLength(RANDOM_KILLS);
      expect(traps.map((t) => t.fired)).toEqual([true, true]);
      // Each intent kill left the new group recorded in the status (and the action undone); the groups' start times
      // were kept by the agents that continued them (the watcher's groupRestarted rule).
      expect(traps.map((t) => [t.left?.revision, t.left?.currentGroup])).toEqual(traps.map((t) => [t.revision, t.group]));
    } catch (e) {
      failed = true;
      throw e;
    } finally {
      finishing = true;
      clearTimeout(randomKillTimer);
      await agent?.stop();
      const violations = await stopAndReport(watch, `agent-kill (seed ${seed})`, failed);
      await proxy.close();
      await account.remove();
      await deleteAll(regions);
      if (!failed) expect(violations).toEqual([]);
    }
    // Quiet check: nothing is left behind that would keep working on the namespace.
    await sleep(100);
    await waitFor('agent process exited', async () => !agent?.alive());
  },
);
