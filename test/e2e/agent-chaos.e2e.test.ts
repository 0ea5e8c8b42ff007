// Agent chaos: multi-region rollouts while the agent is killed with SIGKILL at seeded random moments and restarted
// each time (agent-supervisor.ts), in three scenarios:
//
// - replacement: one agent; scaleOutPriority, Beta, batch 1, three regions 4/3/3;
// - in place: one agent; updateStrategy InPlaceIfPossible (image-only changes are swapped in place);
// - leader kills: two agents share the Lease; the leader is killed, the standby takes over, the killed one is
//   replaced by a new standby.
//
// Each scenario rolls new images one after another until every planned kill happened; each rollout must complete
// (Healthy, every pod at its region's revision) and the cluster must then match Git (git-match.ts). The invariant
// watcher (invariants.ts) runs throughout; any violation fails the scenario. Kills per scenario: CHAOS_KILLS (default 3,
// so `npm test` keeps a short run; `npm run test:chaos` sets 20). The seed is printed; CHAOS_SEED=<n> repeats the kill
// delays (scenario i uses seed + i). Lease 4 s keeps takeovers short. Nothing asserts on speed.
import { randomInt } from 'node:crypto';
import { describe, expect } from 'vitest';
import { renderedIdentity } from './agent-identity.js';
import { seededRandom } from './agent-process.js';
import { AgentSupervisor } from './agent-supervisor.js';
import { waitMatchesGit } from './git-match.js';
import { clients, serverSideApply, test, uniqueName } from './helpers.js';
import { start as startWatcher, stopAndReport } from './invariants.js';
import { deleteAll, waitRolledOut } from './rollout-fixtures.js';
import { apply, deployRegions, ED_NAME, extendedDeployment, installCrds, render, type EdOptions } from './rollout-kit.js';

const KILLS = Number(process.env.CHAOS_KILLS ?? 3);
const SEED = process.env.CHAOS_SEED ? Number(process.env.CHAOS_SEED) : randomInt(2 ** 31);
const LEASE_SECONDS = 4;
const REPLICAS = [4, 3, 3] as const;
/** Rollouts before giving up on reaching the planned kills (each must still complete). */
const MAX_ROLLOUTS = 4 + KILLS;

interface Scenario {
  readonly name: string;
  readonly agents: 1 | 2;
  readonly strategy: Record<string, unknown>;
}

const SCENARIOS: readonly Scenario[] = [
  { name: 'replacement', agents: 1, strategy: { rolloutStrategy: 'Beta', batchSize: 1, needWaitingForConfirm: false } },
  {
    name: 'in place',
    agents: 1,
    strategy: { rolloutStrategy: 'Beta', batchSize: 1, needWaitingForConfirm: false, updateStrategy: { type: 'InPlaceIfPossible', gracePeriodSeconds: 1 } },
  },
  { name: 'leader kills, two agents', agents: 2, strategy: { rolloutStrategy: 'Beta', batchSize: 1, needWaitingForConfirm: false } },
];

console.log(`agent-chaos: seed ${SEED} (CHAOS_SEED=${SEED} repeats the kill delays), ${KILLS} kills per scenario (CHAOS_KILLS)`);

describe('agent chaos: SIGKILL at seeded random moments during multi-region rollouts', () => {
  SCENARIOS.forEach((scenario, index) => {
    test(
      `${scenario.name}: ${KILLS} kills, every rollout completes, no invariant broken, the cluster matches Git`,
      { timeout: 300_000 + KILLS * 40_000 },
      async ({ ns }) => {
        const seed = SEED + index;
        await installCrds();
        const suffix = uniqueName('c').slice(2);
        const regions = deployRegions(suffix);
        for (const region of regions) await serverSideApply(region);
        const renderImage = (v: number) =>
          render([
            ...regions,
            extendedDeployment(ns, suffix, { image: `registry.example/web:${v}`, replicas: REPLICAS, strategy: scenario.strategy } satisfies EdOptions),
          ]);
        // The agents run as the rendered install's ServiceAccount, under its RBAC and admission policies.
        const account = await renderedIdentity(ns, suffix);
        const watch = await startWatcher({ kubeConfig: clients().kc, namespace: ns, name: ED_NAME });
        const supervisor = new AgentSupervisor({
          kubeconfig: account.kubeconfigFile(),
          namespace: ns,
          prefix: 'chaos-',
          agents: scenario.agents,
          leaseSeconds: LEASE_SECONDS,
          random: seededRandom(seed),
          kills: KILLS,
          describe: () => {
            const s = watch.latest().ed?.status;
            return `${s?.phase ?? '-'} group ${s?.currentGroup ?? '-'}/${s?.totalGroups ?? '-'}`;
          },
        });
        let failed = false;
        const rollouts: string[] = [];
        const byMode = { swapped: 0, replaced: 0 };
        try {
          const v1 = renderImage(1);
          await apply(v1);
          await supervisor.start();
          await waitRolledOut(ns, v1);
          let last = v1;
          for (let v = 2; v <= MAX_ROLLOUTS && !supervisor.done(); v++) {
            const next = renderImage(v);
            const started = Date.now();
            const killsBefore = supervisor.kills.length;
            await apply(next);
            if (v === 2) supervisor.arm();
            const status = await waitRolledOut(ns, next, 240_000 + KILLS * 15_000);
            expect(await waitMatchesGit(watch, next), `rollout v${v}: the cluster matches Git`).toEqual([]);
            const swapped = (status.regions ?? []).reduce((n, r) => n + (r.swappedInPlace ?? 0), 0);
            const replaced = (status.regions ?? []).reduce((n, r) => n + (r.replaced ?? 0), 0);
            byMode.swapped += swapped;
            byMode.replaced += replaced;
            rollouts.push(
              `v${v} ${((Date.now() - started) / 1000).toFixed(1)} s, ${supervisor.kills.length - killsBefore} kills, ${swapped} swapped in place, ${replaced} replaced`,
            );
            last = next;
          }
          expect(supervisor.kills).toHaveLength(KILLS);
          // The scenario exercised the mode it names: pods swapped in place, or replaced.
          if (scenario.strategy['updateStrategy']) expect(byMode.swapped).toBeGreaterThan(0);
          else expect([byMode.swapped, byMode.replaced > 0]).toEqual([0, true]);
          expect(await waitMatchesGit(watch, last), 'the cluster matches Git at the end').toEqual([]);
        } catch (e) {
          failed = true;
          throw e;
        } finally {
          console.log(
            [
              `agent-chaos ${scenario.name}: seed ${seed}; ${supervisor.kills.length}/${KILLS} kills over ${rollouts.length} rollouts (${rollouts.join('; ')}); ${supervisor.processes} agent processes; lease ${LEASE_SECONDS} s`,
              ...supervisor.kills.map((k) => `  kill ${k.n} of ${k.agent}, ${k.afterLeaderMs} ms after it became leader, during ${k.during}`),
            ].join('\n'),
          );
          await supervisor.stop();
          await account.remove();
          const violations = await stopAndReport(watch, `agent-chaos ${scenario.name} (seed ${seed})`, failed);
          await deleteAll(regions);
          if (!failed) expect(violations).toEqual([]);
        }
      },
    );
  });
});
