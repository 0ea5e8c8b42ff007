import type { Waves } from './waves.js';

/** One member's rollout as the timeline reads it (from its plan's simulation). */
export interface MemberRollout {
  readonly cluster: string;
  /** Whether its change has groups: only the first group of a rollout waits for the earlier waves; counts apply at once. */
  readonly gated: boolean;
  /** The simulated rollout, in whole seconds (rounded up). */
  readonly seconds: number;
  /** Its rollout stops short of Healthy (Paused, Degraded): it never completes the release. */
  readonly stops: boolean;
}

/** When one member's change runs, in seconds from the change's sync; both absent when it never starts. */
export interface MemberTimes {
  readonly cluster: string;
  readonly start?: number;
  /** When it is Healthy at the release; absent when it never gets there. */
  readonly healthy?: number;
}

/** When one wave may start: absent when a cluster of an earlier wave never completes the release. */
export interface WaveTimes {
  readonly wave: number;
  /** The clusters of the earlier waves it waits for, each Healthy at the release for the soak. */
  readonly after: readonly string[];
  readonly start?: number;
}

/** The waves and members of one fleet change on one clock. */
export interface Timeline {
  readonly waves: readonly WaveTimes[];
  readonly members: readonly MemberTimes[];
}

/**
 * When each wave and member runs, as the fleet gate (gate.ts) lets them when every rollout goes as simulated: wave 0
 * starts at once; wave w once every member of the earlier waves has been Healthy at the release for `soakSeconds`
 * (each member's soak counts from its own completion), an approval (approveWaves) taken as given at that moment, as
 * the simulation takes group approvals. A member without groups is not gated: its counts apply at 0 whatever its
 * wave. A member whose rollout stops never completes, so no later wave starts. Members missing from `rollouts` take
 * no time.
 */
export function fleetTimeline(waves: Waves, rollouts: readonly MemberRollout[], soakSeconds: number): Timeline {
  const byCluster = new Map(rollouts.map((r) => [r.cluster, r]));
  const members: MemberTimes[] = [];
  const times: WaveTimes[] = [];
  // The latest end of a soak among the members placed so far; undefined once one of them never completes.
  let soaked: number | undefined = 0;
  const after: string[] = [];
  waves.forEach((wave, w) => {
    const start = w === 0 ? 0 : soaked;
    times.push({ wave: w, after: [...after], ...(start !== undefined && { start }) });
    for (const cluster of wave) {
      const r = byCluster.get(cluster) ?? { cluster, gated: false, seconds: 0, stops: false };
      const begins = r.gated ? start : 0;
      const healthy = begins === undefined || r.stops ? undefined : begins + r.seconds;
      members.push({ cluster, ...(begins !== undefined && { start: begins }), ...(healthy !== undefined && { healthy }) });
      soaked = healthy === undefined || soaked === undefined ? undefined : Math.max(soaked, healthy + soakSeconds);
    }
    after.push(...wave);
  });
  return { waves: times, members };
}
