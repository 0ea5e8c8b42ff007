import { isFencedWrite } from './api-transport.js';
import { apiError, isConflict, retryAfterMs } from './kube-errors.js';
import type { Logger } from './log.js';
import type { AgentMetrics } from './metrics.js';
import type { Reconciler } from './reconciler.js';
import type { WorkQueue } from './work-queue.js';

/**
 * sample-controller's worker loop: take a key, reconcile it, forget its backoff on success or requeue it rate-limited
 * on failure, and mark it done (so the queue may hand it out again). Several workers share one queue; the queue
 * guarantees a key is never reconciled by two of them at once.
 */
export class Controller {
  constructor(
    private readonly reconciler: Reconciler,
    private readonly log: Logger,
    private readonly metrics?: AgentMetrics,
  ) {}

  /** Runs `workers` workers until `queue` is shut down and drained. */
  async run(queue: WorkQueue, workers: number): Promise<void> {
    await Promise.all(Array.from({ length: Math.max(1, workers) }, () => this.worker(queue)));
  }

  private async worker(queue: WorkQueue): Promise<void> {
    for (let key = await queue.get(); key !== undefined; key = await queue.get()) await this.process(queue, key);
  }

  private async process(queue: WorkQueue, key: string): Promise<void> {
    const end = this.metrics?.reconcileDuration.startTimer();
    let result = 'error';
    try {
      const outcome = await this.reconciler.reconcile(key);
      result = outcome.outcome;
      queue.forget(key);
      if (outcome.requeueAfterMs !== undefined) queue.addAfter(key, outcome.requeueAfterMs);
    } catch (error) {
      // Leadership is gone: this term's queue is shutting down and the next leader reconciles the key.
      if (isFencedWrite(error)) {
        result = 'fenced';
        this.log.info('reconcile stopped: not the leader any more', { ed: key });
        return;
      }
      const { code, message } = apiError(error);
      // A conflict only means the cache was behind the object: routine, retried at once on fresher data.
      const level = isConflict(error) ? 'debug' : 'warn';
      this.log[level]('reconcile failed; retrying', { ed: key, code, error: message, retries: queue.numRequeues(key) });
      // A throttled write (429) is retried no sooner than the API server asked.
      queue.addRateLimited(key, retryAfterMs(error));
    } finally {
      end?.({ result });
      queue.done(key);
    }
  }
}
