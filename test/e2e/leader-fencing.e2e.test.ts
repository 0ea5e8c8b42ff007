// Fenced leadership against the real API server. Two agent processes (the compiled `edctl agent`, lease 4 s, as the
// rendered install's ServiceAccount under its RBAC and admission policies) each talk to the lab through their own
// proxy (api-proxy.ts), so one of them can be cut off alone. Mid-rollout, the leader is
// (1) frozen with SIGSTOP and thawed with SIGCONT once the standby has taken over, or (2) black-holed: its proxy keeps
// the connections open and lets nothing through either way. The standby must take over and finish the rollout, the
// old leader must exit on its own (code 1, "lost leadership") and, by the API server's audit log, which names each
// replica through its User-Agent, no write of the old leader may reach the server after the new leader's first Lease
// write, nor any of its workload or status writes after the new leader's first one. (3) Two agents whose wall clocks
// are 30 s behind and 30 s ahead of the host's: every time they write into status is the API server's time (within
// 2 s of when the write arrived), and a progress deadline of 20 s started by one and enforced by the other fires no
// sooner than 20 s after the group started.
import { expect } from 'vitest';
import { renderedIdentity, type AgentIdentity } from './agent-identity.js';
import { AgentProcess } from './agent-process.js';
import { startApiProxy, type ApiProxy } from './api-proxy.js';
import { auditEvents, isWrite, type AuditEvent } from './audit-log.js';
import { waitMatchesGit } from './git-match.js';
import { clients, serverSideApply, test, uniqueName, waitFor } from './helpers.js';
import { start as startWatcher, stopAndReport } from './invariants.js';
import { apply, deleteAll, extendedDeployment, installCrds, readStatus, render, threeRegions, waitRolledOut } from './rollout-fixtures.js';

const REPLICAS = [3, 2, 2] as const;
const LEASE_SECONDS = 4;
const USER_AGENT = /^extended-deployment-agent \((.+)\)$/;
/**
 * How far a time an agent writes may be from the API server's clock: the agents learn it from whole-second Date headers
 * (agent/server-clock.ts), to within tens of milliseconds here; uncorrected, the skew tested is 30 s.
 */
const CLOCK_TOLERANCE_MS = 2_000;

/** One write an agent replica sent, as the API server recorded it. */
interface AgentWrite {
  readonly identity: string;
  readonly received: number;
  readonly completed: number;
  readonly code: number;
  readonly what: string;
  readonly lease: boolean;
  readonly event: AuditEvent;
}

/** The identity of agent `i` (0 or 1) of the pair a test in `ns` starts. */
const pairIdentity = (ns: string, i: number) => `${ns}-${'ab'[i]}`;

/**
 * The agents' writes since `since`, by the API server's clock, in the order they arrived: those in `ns`, and the
 * cluster-scoped ones (DeployRegion statuses) of this test's pair alone, as every suite's agents write those.
 */
function agentWrites(ns: string, since: number): AgentWrite[] {
  const pair = [pairIdentity(ns, 0), pairIdentity(ns, 1)];
  return auditEvents()
    .filter((e) => {
      const identity = USER_AGENT.exec(e.userAgent ?? '')?.[1];
      if (!isWrite(e) || identity === undefined) return false;
      return e.objectRef?.namespace === ns || (!e.objectRef?.namespace && pair.includes(identity));
    })
    .map((e) => ({
      identity: USER_AGENT.exec(e.userAgent ?? '')![1]!,
      received: Date.parse(e.requestReceivedTimestamp ?? ''),
      completed: Date.parse(e.stageTimestamp ?? ''),
      code: e.responseStatus?.code ?? 0,
      what: `${e.verb} ${e.objectRef?.resource}${e.objectRef?.subresource ? `/${e.objectRef.subresource}` : ''}/${e.objectRef?.name ?? ''}`,
      lease: e.objectRef?.resource === 'leases',
      event: e,
    }))
    .filter((w) => w.received >= since)
    .sort((a, b) => a.received - b.received);
}

/**
 * Asserts that the old leader's writes and the new leader's never interleave: nothing from the old leader reached the
 * server after the new leader acquired the Lease (a refused Lease write excepted: it changes nothing), and its last
 * workload or status write was complete before the new leader's first one arrived. Returns the figures for the report.
 */
function expectNoInterleaving(ns: string, since: number, old: string, next: string): string {
  const writes = agentWrites(ns, since);
  const acquired = writes.find((w) => w.identity === next && w.lease && w.code < 300);
  expect(acquired, `${next} acquired the Lease (audit log)`).toBeDefined();
  const late = writes.filter((w) => w.identity === old && w.received >= acquired!.received && !(w.lease && w.code >= 400));
  expect(
    late.map((w) => `${w.what} ${w.code} at +${w.received - acquired!.received} ms`),
    `writes of ${old} after ${next} took the Lease`,
  ).toEqual([]);
  const oldWork = writes.filter((w) => w.identity === old && !w.lease);
  const nextWork = writes.filter((w) => w.identity === next && !w.lease);
  expect(oldWork.length, `${old} wrote before the fault`).toBeGreaterThan(0);
  expect(nextWork.length, `${next} wrote after the takeover`).toBeGreaterThan(0);
  const lastOld = Math.max(...oldWork.map((w) => w.completed));
  const firstNext = nextWork[0]!.received;
  expect(lastOld, `${old}'s last write complete before ${next}'s first`).toBeLessThan(firstNext);
  return `${old}: ${oldWork.length} writes, the last complete ${firstNext - lastOld} ms before ${next}'s first of ${nextWork.length}; ${next} took the Lease ${firstNext - acquired!.received} ms before its first write`;
}

/** Two agents as the rendered install's ServiceAccount, each behind its own proxy; `a` is started first and leads. */
async function startPair(
  ns: string,
  account: AgentIdentity,
  skews: readonly [number, number] = [0, 0],
): Promise<{ agents: AgentProcess[]; proxies: ApiProxy[] }> {
  const proxies = [await startApiProxy(`${ns}-a`), await startApiProxy(`${ns}-b`)];
  const spawn = (i: number) =>
    new AgentProcess({
      // The proxy forwards the Impersonate-User header: the agent is authorized by the rendered RBAC and policies.
      kubeconfig: account.kubeconfigFile(proxies[i]!.kubeconfig),
      identity: pairIdentity(ns, i),
      namespace: ns,
      leaseNamespace: ns,
      leaseDurationSeconds: LEASE_SECONDS,
      clockSkewMs: skews[i],
      echo: !!process.env['AGENT_ECHO'],
    });
  const a = spawn(0);
  await a.waitForLog('became leader', 60_000);
  const b = spawn(1);
  await b.waitForLog('another agent leads', 60_000);
  return { agents: [a, b], proxies };
}

/** Runs `body` with three regions, the agents' identity, the invariant watcher and cleanup; fails on any invariant violated. */
async function withRegions(
  ns: string,
  name: string,
  body: (regions: ReturnType<typeof threeRegions>, watch: Awaited<ReturnType<typeof startWatcher>>, account: AgentIdentity) => Promise<void>,
): Promise<void> {
  await installCrds();
  const suffix = uniqueName('lf').slice(2);
  const regions = threeRegions(suffix);
  for (const region of regions) await serverSideApply(region);
  const account = await renderedIdentity(ns, suffix);
  const watch = await startWatcher({ kubeConfig: clients().kc, namespace: ns, name: 'web' });
  let failed = false;
  try {
    await body(regions, watch, account);
  } catch (e) {
    failed = true;
    throw e;
  } finally {
    const violations = await stopAndReport(watch, name, failed);
    await account.remove();
    await deleteAll(regions);
    if (!failed) expect(violations).toEqual([]);
  }
}

type Fault = 'freeze' | 'black hole';

for (const fault of ['freeze', 'black hole'] as const satisfies readonly Fault[]) {
  test(`a leader cut off by a ${fault} stops writing before the standby starts, exits, and the standby finishes`, { timeout: 600_000 }, async ({ ns }) => {
    await withRegions(ns, `leader-fencing ${fault}`, async (regions, watch, account) => {
      const { agents, proxies } = await startPair(ns, account);
      const [a, b] = agents as [AgentProcess, AgentProcess];
      try {
        const v1 = render([...regions, extendedDeployment(ns, regions, REPLICAS, 'registry.example/web:1')]);
        await apply(v1);
        await waitRolledOut(ns, v1);
        const v2 = render([...regions, extendedDeployment(ns, regions, REPLICAS, 'registry.example/web:2')]);
        await apply(v2);
        await waitFor(
          'group 2 of the rollout in progress',
          async () => {
            const s = await readStatus(ns);
            return s.revision === v2.rolloutRevision && (s.currentGroup ?? 0) >= 2 && s.phase === 'Progressing';
          },
          { timeoutMs: 120_000, intervalMs: 100, describe: () => readStatus(ns) },
        );

        const cutAt = Date.now();
        if (fault === 'freeze') a.freeze(true);
        else proxies[0]!.blackHole(true);
        const tookOver = await b.waitForLog('became leader', 60_000);
        if (fault === 'freeze') {
          // Thawed once its lease has long expired: its timers and reconciles resume where they were.
          await new Promise((r) => setTimeout(r, LEASE_SECONDS * 1000));
          a.freeze(false);
        }
        const exit = await Promise.race([
          a.exited,
          new Promise<never>((_, reject) =>
            setTimeout(
              () =>
                reject(
                  new Error(
                    `${a.identity} still running 60 s after the takeover; its last lines:\n${a.lines
                      .slice(-20)
                      .map((l) => JSON.stringify(l))
                      .join('\n')}`,
                  ),
                ),
              60_000,
            ),
          ),
        ]);
        expect(exit.code, `${a.identity} exits non-zero on its own`).toBe(1);
        const lost = a.lines.find((l) => l.msg === 'lost leadership');
        expect(lost, `${a.identity} logged why it stopped`).toBeDefined();
        proxies[0]!.blackHole(false);

        const final = await waitRolledOut(ns, v2);
        expect(final.regions?.map((r) => [r.name, r.updated, r.available])).toEqual(v2.regions.map((r) => [r.name, r.replicas, r.replicas]));
        expect(await waitMatchesGit(watch, v2), 'the cluster matches Git').toEqual([]);
        const figures = expectNoInterleaving(ns, cutAt - 60_000, a.identity, b.identity);
        console.log(
          [
            `leader-fencing ${fault}: ${a.identity} cut off in group 2; ${b.identity} became leader ${((tookOver.receivedAt - cutAt) / 1000).toFixed(1)} s later (lease ${LEASE_SECONDS} s)`,
            `  ${a.identity} exited with code ${exit.code}: ${typeof lost?.['reason'] === 'string' ? lost['reason'] : ''}`,
            `  audit log: ${figures}`,
          ].join('\n'),
        );
      } finally {
        await Promise.all(agents.map((x) => x.stop()));
        await Promise.all(proxies.map((p) => p.close()));
      }
    });
  });
}

const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

/** Every timestamp string in an object, by path. */
function timestamps(value: unknown, path = ''): Map<string, string> {
  const found = new Map<string, string>();
  if (typeof value === 'string' && ISO_TIME.test(value)) found.set(path, value);
  else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) for (const [p, t] of timestamps(v, `${path}.${k}`)) found.set(p, t);
  }
  return found;
}

/**
 * How late a deadline may fire after its instant (or after the takeover, if that came later) and still count as on
 * time: half the skew. Uncorrected, an agent whose clock is 30 s behind fires 30 s late; a reconcile at the instant the
 * plan names comes within a second or two.
 */
const LATE_BOUND_MS = 15_000;

// Who starts the group and who enforces its deadline: the agent behind, then the one ahead (uncorrected, it would fire
// 60 s early), and the other way round (uncorrected, 60 s late).
for (const skews of [
  [-30_000, 30_000],
  [30_000, -30_000],
] as const) {
  const [first, second] = skews.map((s) => `${s > 0 ? '+' : ''}${s / 1000} s`);
  test(
    `agents whose clocks are ${first} and ${second} off write the API server's time, and a deadline is neither early nor late`,
    { timeout: 600_000 },
    async ({ ns }) => {
      await withRegions(ns, `leader-fencing clock skew ${first}/${second}`, async (regions, _watch, account) => {
        const { agents, proxies } = await startPair(ns, account, skews);
        const [a, b] = agents as [AgentProcess, AgentProcess];
        try {
          const since = Date.now();
          const v1 = render([...regions, extendedDeployment(ns, regions, REPLICAS, 'registry.example/web:1')]);
          await apply(v1);
          await waitRolledOut(ns, v1);
          // A release that never becomes ready, with a 20 s deadline: started by a (30 s behind), enforced by b (30 s ahead).
          const broken = extendedDeployment(ns, regions, REPLICAS, 'registry.example/web:broken-1') as { spec: { strategy: Record<string, unknown> } };
          broken.spec.strategy['syncWaitTimeout'] = 20;
          const v2 = render([...regions, broken]);
          await apply(v2);
          const started = await waitFor(
            'group 1 of the broken release started',
            async () => {
              const s = await readStatus(ns);
              return s.revision === v2.rolloutRevision && s.phase === 'Progressing' && s.lastGroupStartTime ? s : undefined;
            },
            { timeoutMs: 60_000, intervalMs: 100, describe: () => readStatus(ns) },
          );
          a.killHard();
          await b.waitForLog('became leader', 60_000);
          const tookOver = Date.now();
          const degraded = await waitFor(
            'the broken release Degraded',
            async () => {
              const s = await readStatus(ns);
              return s.revision === v2.rolloutRevision && s.phase === 'Degraded' ? s : undefined;
            },
            { timeoutMs: 120_000, intervalMs: 200, describe: () => readStatus(ns) },
          );
          expect(degraded.lastGroupStartTime).toBe(started.lastGroupStartTime);

          // What was written: every new timestamp in a status write is the server's time of that write, within 2 s.
          const statusWrites = agentWrites(ns, since).filter((w) => w.what.includes('extendeddeployments/status') && w.code < 300);
          expect(statusWrites.length).toBeGreaterThan(0);
          const off: string[] = [];
          let previous = new Map<string, string>();
          let checked = 0;
          for (const w of statusWrites) {
            const now = timestamps((w.event.responseObject as { status?: unknown } | undefined)?.status);
            for (const [path, value] of now) {
              if (previous.get(path) === value) continue;
              checked++;
              const t = Date.parse(value);
              if (t < w.received - CLOCK_TOLERANCE_MS || t > w.completed + CLOCK_TOLERANCE_MS)
                off.push(`${w.identity} ${path}=${value} written at ${new Date(w.received).toISOString()}`);
            }
            previous = now;
          }
          expect(checked, 'timestamps written').toBeGreaterThan(0);
          expect(off, "timestamps off the API server's clock by more than 2 s").toEqual([]);

          // When: the Degraded write arrived no sooner than 20 s after the group started (by the server's clock, within the
          // clocks' tolerance; uncorrected, b would end the deadline at once, 60 s early by its clock).
          const degradedWrite = statusWrites.find((w) => (w.event.responseObject as { status?: { phase?: string } } | undefined)?.status?.phase === 'Degraded');
          expect(degradedWrite?.identity).toBe(b.identity);
          const groupStart = Date.parse(started.lastGroupStartTime!);
          const afterMs = degradedWrite!.received - groupStart;
          expect(afterMs, 'the deadline fired no sooner than 20 s after the group started').toBeGreaterThanOrEqual(20_000 - CLOCK_TOLERANCE_MS);
          // Nor late: soon after the later of its instant and the takeover.
          const dueAt = Math.max(groupStart + 20_000, tookOver);
          expect(degradedWrite!.received - dueAt, 'the deadline fired within the late bound of its instant or the takeover').toBeLessThan(LATE_BOUND_MS);
          console.log(
            [
              `leader-fencing clock skew: ${a.identity} ${first}, ${b.identity} ${second}; ${checked} timestamps in ${statusWrites.length} status writes, all within 2 s of the server's time`,
              `  deadline 20 s: group started ${started.lastGroupStartTime} by ${a.identity}; Degraded written by ${b.identity} ${(afterMs / 1000).toFixed(1)} s later, ${((degradedWrite!.received - dueAt) / 1000).toFixed(1)} s after it was due (the later of the deadline and the takeover)`,
            ].join('\n'),
          );
        } finally {
          await Promise.all(agents.map((x) => x.stop()));
          await Promise.all(proxies.map((p) => p.close()));
        }
      });
    },
  );
}
