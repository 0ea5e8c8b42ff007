// Two agent processes (the compiled `edctl agent`) compete for one Lease with the default timing (lease 15 s, retry
// 2 s). Once one leads (its /metrics shows the leader gauge at 1, the standby's at 0, and the Lease names it), a rollout
// starts (3 regions, 3/2/2, Beta, batch 1, minReadySeconds 1, no gates); in the middle of it the leader is killed with
// SIGKILL, so it never releases the Lease. The standby must take over once the Lease expires and finish the rollout,
// with the invariant watcher (invariants.ts) beside it throughout, and the cluster must match Git at the end. The
// takeover delay (kill → the standby's "became leader") is printed, not asserted.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { renderedIdentity } from './agent-identity.js';
import { AgentProcess } from './agent-process.js';
import { imageNodeRelease } from '../cluster/image-node.js';
import { clients, serverSideApply, test, uniqueName, waitFor } from './helpers.js';
import { waitMatchesGit } from './git-match.js';
import { start as startWatcher, stopAndReport } from './invariants.js';
import { apply, deleteAll, extendedDeployment, installCrds, readStatus, render, threeRegions, waitRolledOut } from './rollout-fixtures.js';
import { observedExtremes } from './rollout-kit.js';

const REPLICAS = [3, 2, 2] as const;
const BATCH = 1;
const LEASE = 'extended-deployment-agent';

const leaderGauge = async (agent: AgentProcess): Promise<number | undefined> => {
  const m = /^extendeddeployment_agent_leader (\d+)/m.exec(await agent.metrics());
  return m ? Number(m[1]) : undefined;
};

test('the standby takes over a killed leader within the lease duration and finishes the rollout', { timeout: 600_000 }, async ({ ns }) => {
  await installCrds();
  const suffix = uniqueName('f').slice(2);
  const regions = threeRegions(suffix);
  for (const region of regions) await serverSideApply(region);
  const desired = new Map(regions.map((r, i) => [r.metadata!.name!, REPLICAS[i]!]));
  // The agents run as the rendered install's ServiceAccount, under its RBAC and admission policies.
  const account = await renderedIdentity(ns, suffix);
  const watch = await startWatcher({ kubeConfig: clients().kc, namespace: ns, name: 'web' });
  let failed = false;
  const echo = !!process.env.AGENT_ECHO;
  const kubeconfig = account.kubeconfigFile();
  const modulesDir = mkdtempSync(join(tmpdir(), 'agent-modules-'));
  const modulesFile = (identity: string) => join(modulesDir, identity);
  const agents = ['a1', 'a2'].map(
    (identity) => new AgentProcess({ kubeconfig, identity, namespace: ns, leaseNamespace: ns, echo, builtinModulesFile: modulesFile(identity) }),
  );
  try {
    const v1 = render([...regions, extendedDeployment(ns, regions, REPLICAS, 'registry.example/web:1')]);
    await apply(v1);

    // One leads: the Lease names it, its gauge is 1, the other's is 0 (a standby with warm caches).
    const lease = () => clients().coord.readNamespacedLease({ name: LEASE, namespace: ns });
    const leaderId = await waitFor('a leader', async () => (await lease()).spec?.holderIdentity || undefined, { timeoutMs: 60_000 });
    const leader = agents.find((a) => a.identity === leaderId)!;
    const standby = agents.find((a) => a.identity !== leaderId)!;
    await waitFor('leader gauge 1 on the leader, 0 on the standby', async () => (await leaderGauge(leader)) === 1 && (await leaderGauge(standby)) === 0);
    await standby.waitForLog('another agent leads');
    // Both run on the agent image's Node.js, not the one running the tests (prom-client's nodejs_version_info).
    for (const agent of agents) expect(/^nodejs_version_info\{version="([^"]+)"/m.exec(await agent.metrics())?.[1]).toBe(`v${imageNodeRelease()}`);
    await waitRolledOut(ns, v1);

    // The rollout; the leader dies with SIGKILL once group 2 is under way.
    const v2 = render([...regions, extendedDeployment(ns, regions, REPLICAS, 'registry.example/web:2')]);
    await apply(v2);
    const atKill = await waitFor(
      'group 2 of the rollout in progress',
      async () => {
        const s = await readStatus(ns);
        return s.revision === v2.rolloutRevision && (s.currentGroup ?? 0) >= 2 && s.phase === 'Progressing' ? s : undefined;
      },
      { timeoutMs: 120_000, intervalMs: 100, describe: () => readStatus(ns) },
    );
    const renewedBefore = (await lease()).spec?.renewTime as unknown as string | undefined;
    const killedAt = Date.now();
    leader.killHard();
    await leader.exited;

    const tookOver = await standby.waitForLog('became leader', 60_000);
    const takeoverMs = tookOver.receivedAt - killedAt;
    const after = await lease();
    expect(after.spec?.holderIdentity).toBe(standby.identity);
    expect(await leaderGauge(standby)).toBe(1);
    const workersAt = (await standby.waitForLog('workers started', 60_000)).receivedAt;

    const final = await waitRolledOut(ns, v2);
    expect(final.regions?.map((r) => [r.name, r.desired, r.updated, r.available])).toEqual(v2.regions.map((r) => [r.name, r.replicas, r.replicas, r.replicas]));
    // The standby did the rest of the rollout: its own actions after taking over.
    const actions = standby.lines.filter((l) => l.msg === 'action' && l.receivedAt > killedAt);
    expect(actions.length).toBeGreaterThan(0);
    expect(await waitMatchesGit(watch, v2), 'the cluster matches Git').toEqual([]);
    const extremes = observedExtremes(watch, 0, [...desired.keys()]);

    // The agent that finished the rollout, stopped as the kubelet stops it, loaded none of the built-in modules it has
    // no use for. On Node.js 22 (the image's) an ESM import of node:http reads its lazy WebSocket getter, which loads
    // undici, http2 and worker_threads, 5 MiB (agent/runtime/node-http.ts); lint keeps such imports out of the source,
    // and this holds the running agent to it on the runtime where it shows (the tests' own Node.js may be 20). http2 (and
    // with it assert) it loads itself: its requests and watches are streams of one HTTP/2 connection to the API server.
    await standby.stop();
    const loaded = readFileSync(modulesFile(standby.identity), 'utf8').split('\n').filter(Boolean);
    expect(loaded, 'the built-in modules are recorded').toContain('https');
    expect(loaded, 'the API server is spoken to over HTTP/2').toContain('http2');
    expect(loaded.filter((m) => /undici|worker_threads/.test(m))).toEqual([]);

    console.log(
      [
        `agent-failover: leader ${leader.identity} killed in ${atKill.phase} group ${atKill.groups} (${atKill.overview}); Lease last renewed ${renewedBefore}`,
        `  takeover delay (SIGKILL → standby "became leader"): ${(takeoverMs / 1000).toFixed(2)} s (lease 15 s, retry 2 s + ≤20 % jitter)`,
        `  → standby workers started: ${((workersAt - killedAt) / 1000).toFixed(2)} s; first action: ${actions[0] ? `${((actions[0].receivedAt - killedAt) / 1000).toFixed(2)} s` : '-'}; actions by the standby: ${actions.length}`,
        `  Lease transitions: ${after.spec?.leaseTransitions}; most pods per region: ${extremes.map((e) => `${e.name} ${e.maxPods}/${(desired.get(e.name) ?? 0) + BATCH}`).join(', ')}`,
      ].join('\n'),
    );
  } catch (e) {
    failed = true;
    throw e;
  } finally {
    await Promise.all(agents.map((a) => a.stop()));
    await account.remove();
    rmSync(modulesDir, { recursive: true, force: true });
    const violations = await stopAndReport(watch, 'agent-failover', failed);
    await deleteAll(regions);
    if (!failed) expect(violations).toEqual([]);
  }
});
