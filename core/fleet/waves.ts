import type { FleetStrategy } from '../api/extended-deployment.js';
import { failed, ok, ProblemList, type FieldPath, type ObjectRef, type Result } from '../problems.js';

/** The waves of a fleet: cluster names, wave by wave. */
export type Waves = readonly (readonly string[])[];

const WAVES: FieldPath = ['spec', 'strategy', 'fleet', 'waves'];
const APPROVE_WAVES: FieldPath = ['spec', 'strategy', 'fleet', 'approveWaves'];

/**
 * The waves of an ExtendedDeployment's fleet: `strategy.fleet.waves` as written, or one wave per cluster in
 * spec.clusters order. Every problem at once: an entry that names no member, a member in no wave or in two, an empty
 * wave, an approveWaves index past the last wave.
 */
export function fleetWaves(strategy: Pick<FleetStrategy, 'waves' | 'approveWaves'>, members: readonly string[], object: ObjectRef): Result<Waves> {
  const problems = new ProblemList(object);
  const waves = strategy.waves ?? members.map((m) => [m]);
  const known = new Set(members);
  const placed = new Map<string, string>();
  waves.forEach((wave, w) => {
    if (wave.length === 0) problems.add([...WAVES, w], 'is empty: every wave needs at least one cluster');
    wave.forEach((cluster, k) => {
      const at = `${formatWave(w)}[${k}]`;
      const first = placed.get(cluster);
      if (!known.has(cluster))
        problems.add([...WAVES, w, k], `${JSON.stringify(cluster)} is not a cluster of spec.clusters (clusters: ${[...known].join(', ')})`);
      else if (first !== undefined) problems.add([...WAVES, w, k], `cluster ${JSON.stringify(cluster)} is already in a wave (at ${first})`);
      else placed.set(cluster, at);
    });
  });
  const missing = members.filter((m) => !placed.has(m));
  if (strategy.waves !== undefined && missing.length > 0) {
    problems.add(WAVES, `leave out ${missing.map((m) => JSON.stringify(m)).join(', ')}: every cluster of spec.clusters must be in exactly one wave`);
  }
  (strategy.approveWaves ?? []).forEach((index, k) => {
    if (index >= waves.length) problems.add([...APPROVE_WAVES, k], `names wave ${index}, but the waves are 0 to ${waves.length - 1}`);
  });
  return problems.empty ? ok(waves) : failed(problems.items);
}

function formatWave(w: number): string {
  return `spec.strategy.fleet.waves[${w}]`;
}

/** The wave of each cluster (waves that passed fleetWaves). */
export function waveOf(waves: Waves): ReadonlyMap<string, number> {
  return new Map(waves.flatMap((wave, w) => wave.map((cluster) => [cluster, w] as const)));
}
