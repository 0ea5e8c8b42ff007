import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

setFlagsFromString('--expose-gc');
const collect = runInNewContext('gc') as () => void;

/** A full collection now (the tests run without --expose-gc). */
export function collectGarbage(): void {
  collect();
}

/**
 * Heap bytes that what `make` returns holds after a full collection (measured, so for differences of megabytes: what
 * a copy saves, not the size of one object).
 */
export function retainedBytes(make: () => unknown): number {
  collect();
  const before = process.memoryUsage().heapUsed;
  const kept = make();
  collect();
  const after = process.memoryUsage().heapUsed;
  // Read after the measurement, so that `kept` is live until then.
  if (kept === Symbol.for('never')) throw new Error('unreachable');
  return after - before;
}
