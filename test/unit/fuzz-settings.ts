// Run counts and seeds of the fuzz suites (fuzz-*.test.ts). `npm test` runs a short, fixed-seed version; long runs:
//
//   FUZZ_RUNS=5000 npx vitest run test/unit/fuzz        # more inputs per property (default 100; slow ones scale down)
//   FUZZ_SEED=random npx vitest run test/unit/fuzz      # a new seed, printed; FUZZ_SEED=<n> repeats it
//
// A failing property prints its seed and shrink path (fast-check's `{ seed, path }`), and the smallest input found.

const DEFAULT_RUNS = 100;
const DEFAULT_SEED = 20260808;

function seedFromEnv(): number {
  const raw = process.env['FUZZ_SEED'];
  if (raw === undefined || raw === '') return DEFAULT_SEED;
  if (raw === 'random') {
    const seed = Math.floor(Math.random() * 2 ** 31);
    console.log(`fuzz: FUZZ_SEED=${seed}`);
    return seed;
  }
  const seed = Number(raw);
  if (!Number.isSafeInteger(seed)) throw new Error(`FUZZ_SEED must be an integer or "random", not ${JSON.stringify(raw)}`);
  return seed;
}

/** The seed every property of this run uses. */
export const FUZZ_SEED = seedFromEnv();
/** Inputs per property at weight 1. */
export const FUZZ_RUNS = Number(process.env['FUZZ_RUNS'] ?? '') || DEFAULT_RUNS;

/** fc.assert parameters: `weight` × FUZZ_RUNS inputs (at least 1), this run's seed. */
export function fuzz(weight = 1): { seed: number; numRuns: number } {
  return { seed: FUZZ_SEED, numRuns: Math.max(1, Math.round(FUZZ_RUNS * weight)) };
}

/** Counts inputs tried per property, printed at the end of a suite (figures for docs/reliability.md). */
export class Tally {
  private readonly counts = new Map<string, number>();
  add(property: string, n = 1): void {
    this.counts.set(property, (this.counts.get(property) ?? 0) + n);
  }
  print(suite: string): void {
    const total = [...this.counts.values()].reduce((a, b) => a + b, 0);
    console.log(`[fuzz] ${suite}: ${total} inputs (seed ${FUZZ_SEED}): ${[...this.counts].map(([k, v]) => `${k} ${v}`).join(', ')}`);
  }
}

/** Test timeout that grows with FUZZ_RUNS (the unit config's 60 s fits the default runs many times over). */
export const FUZZ_TIMEOUT_MS = Math.max(60_000, FUZZ_RUNS * 500);
