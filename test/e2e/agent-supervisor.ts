// Runs one or two agent processes (agent-process.ts) on one Lease and kills the leader with SIGKILL at seeded random
// moments: once armed, each leader is killed a random 0.2–3 s after it became leader or after the arming, whichever
// is later (drawn from the seeded generator, in kill order), until the planned number of kills happened. A killed process is replaced by a new one
// (new identity, same Lease) as soon as it exited; with two agents the replacement starts as the standby and the other
// process takes over once the dead leader's Lease expires.
import { AgentProcess } from './agent-process.js';

/** One kill, for the test's report. */
export interface AgentKill {
  readonly n: number;
  readonly agent: string;
  /** ms between the victim's "became leader" and the kill. */
  readonly afterLeaderMs: number;
  /** What the test said was going on (the rollout's status) at the kill. */
  readonly during: string;
}

export interface SupervisorOptions {
  readonly kubeconfig: string;
  readonly namespace: string;
  /** Identities are `<prefix><n>`. */
  readonly prefix: string;
  /** Agent processes running at once (one leads, the other stands by). */
  readonly agents: 1 | 2;
  readonly leaseSeconds: number;
  /** Seeded generator in [0, 1): the kill delays. */
  readonly random: () => number;
  /** Kills to make once armed. */
  readonly kills: number;
  /** Describes the moment of a kill (e.g. the rollout's status). */
  readonly describe: () => string;
}

const MIN_DELAY_MS = 200;
const SPREAD_MS = 2800;

export class AgentSupervisor {
  readonly kills: AgentKill[] = [];
  private readonly running = new Set<AgentProcess>();
  private readonly leaderSince = new Map<AgentProcess, number>();
  private spawned = 0;
  private armedAt: number | undefined;
  private stopping = false;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly options: SupervisorOptions) {}

  /** Agent processes started so far. */
  get processes(): number {
    return this.spawned;
  }

  /** Starts the agents; resolves once one of them leads. */
  async start(): Promise<void> {
    const started = Array.from({ length: this.options.agents }, () => this.spawn());
    await Promise.any(started.map((p) => p.waitForLog('became leader', 120_000)));
  }

  /** From now on, leaders are killed (the one leading now too, its delay counted from now). */
  arm(): void {
    this.armedAt = Date.now();
    this.schedule();
  }

  /** Every planned kill happened. */
  done(): boolean {
    return this.kills.length >= this.options.kills;
  }

  /** Stops killing and stops every agent gracefully. */
  async stop(): Promise<void> {
    this.stopping = true;
    clearTimeout(this.timer);
    await Promise.all([...this.running].map((p) => p.stop()));
  }

  private leader(): AgentProcess | undefined {
    return [...this.leaderSince.keys()].find((p) => p.alive());
  }

  private spawn(): AgentProcess {
    this.spawned += 1;
    const o = this.options;
    const agent = new AgentProcess({
      kubeconfig: o.kubeconfig,
      identity: `${o.prefix}${this.spawned}`,
      namespace: o.namespace,
      leaseNamespace: o.namespace,
      leaseDurationSeconds: o.leaseSeconds,
      echo: !!process.env.AGENT_ECHO,
    });
    this.running.add(agent);
    agent.waitForLog('became leader', 600_000).then(
      () => {
        this.leaderSince.set(agent, Date.now());
        this.schedule();
      },
      () => undefined, // killed or stopped before it led
    );
    void agent.exited.then(() => {
      this.running.delete(agent);
      this.leaderSince.delete(agent);
      if (!this.stopping) this.spawn();
    });
    return agent;
  }

  /** Arms one kill timer for the current leader, if kills are due and none is armed. */
  private schedule(): void {
    if (this.armedAt === undefined || this.stopping || this.timer || this.done()) return;
    const victim = this.leader();
    if (!victim) return;
    const since = this.leaderSince.get(victim) ?? Date.now();
    const from = Math.max(since, this.armedAt);
    const delay = Math.max(0, from + MIN_DELAY_MS + Math.floor(this.options.random() * SPREAD_MS) - Date.now());
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (this.stopping || !victim.alive()) return this.schedule();
      this.kills.push({ n: this.kills.length + 1, agent: victim.identity, afterLeaderMs: Date.now() - since, during: this.options.describe() });
      victim.killHard();
    }, delay);
  }
}
