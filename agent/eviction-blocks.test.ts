import { describe, expect, it } from 'vitest';
import type { RolloutEvent } from '../core/rollout/planner.js';
import { EVICTION_BLOCKED_BACKOFF, EvictionBlocks } from './eviction-blocks.js';
import { EvictionBlockedError } from './eviction.js';
import { silentLogger } from './runtime/log.js';

const BUDGET = 'The disruption budget web-pdb needs 2 healthy pods and has 2 currently';
const blocked =
  (pod: string, detail = BUDGET) =>
  async () =>
    Promise.reject(new EvictionBlockedError('shop', pod, 'web-pdb', detail));

function setup() {
  const events: RolloutEvent[] = [];
  // random() = 1: no jitter, each delay is the full backoff.
  const blocks = new EvictionBlocks(() => 1);
  const run = (step: () => Promise<void>, key = 'shop/web') =>
    blocks.run(key, 'the ExtendedDeployment', step, { record: (_object, event) => events.push(event), log: silentLogger });
  return { blocks, events, run };
}

describe('EvictionBlocks', () => {
  it('turns a refused eviction into a held reconcile with a Warning Event naming the budget and the pod', async () => {
    const { events, run } = setup();
    expect(await run(blocked('web-amd-a'))).toEqual({ outcome: 'blocked', requeueAfterMs: EVICTION_BLOCKED_BACKOFF.baseMs });
    expect(events).toEqual([
      {
        type: 'Warning',
        reason: 'EvictionBlocked',
        message: `eviction of pod shop/web-amd-a blocked by PodDisruptionBudget web-pdb: ${BUDGET}; the rollout waits and retries`,
      },
    ]);
  });

  it('reports each refusal once while the block lasts, and retries with a backoff that doubles up to 30 s', async () => {
    const { events, run } = setup();
    const delays: number[] = [];
    for (let i = 0; i < 8; i++) delays.push((await run(blocked('web-amd-a')))?.requeueAfterMs ?? -1);
    expect(delays).toEqual([1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000, 30_000]);
    expect(events).toHaveLength(1);
    // Another pod, or the same pod refused for another reason (the budget changed), is news.
    await run(blocked('web-amd-b'));
    await run(blocked('web-amd-a', 'The disruption budget web-pdb needs 3 healthy pods and has 3 currently'));
    expect(events).toHaveLength(3);
  });

  it('ends the block when the actions go through: the backoff and the reports start over', async () => {
    const { events, run } = setup();
    await run(blocked('web-amd-a'));
    await run(blocked('web-amd-a'));
    expect(await run(async () => undefined)).toBeUndefined();
    expect(await run(blocked('web-amd-a'))).toEqual({ outcome: 'blocked', requeueAfterMs: 1_000 });
    expect(events).toHaveLength(2);
  });

  it('keeps keys apart, and forgets one whose object is gone', async () => {
    const { blocks, events, run } = setup();
    await run(blocked('web-amd-a'), 'shop/web');
    expect(await run(blocked('api-amd-a'), 'shop/api')).toMatchObject({ requeueAfterMs: 1_000 });
    blocks.forget('shop/web');
    expect(await run(blocked('web-amd-a'), 'shop/web')).toMatchObject({ requeueAfterMs: 1_000 });
    expect(events).toHaveLength(3);
  });

  it('passes any other failure through, so the work queue retries it as an error', async () => {
    const { events, run } = setup();
    const failure = Object.assign(new Error('HTTP 500'), { code: 500 });
    await expect(run(async () => Promise.reject(failure))).rejects.toBe(failure);
    expect(events).toEqual([]);
  });
});
