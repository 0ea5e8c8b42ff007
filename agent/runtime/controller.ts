import type { Histogram } from 'prom-client';
import { isFencedWrite } from './api-transport.js';
import { apiError, isConflict, retryAfterMs } from './kube-errors.js';
import type { Logger } from './log.js';
import type { WorkQueue } from './work-queue.js';

/** How one reconcile ended. */
export interface ReconcileOutcome {
  /** The result the reconcile duration is labelled with (`error` and `fenced` are the controller's own). */
  readonly outcome: string;
  /** Look at the key again after this many ms, even if nothing changes. */
  readonly requeueAfterMs?: number;
}

/** Brings the object of one key to its desired state; throws when it failed, and the key is retried with backoff. */
export interface KeyReconciler<K extends string> {
  reconcile(key: K): Promise<ReconcileOutcome>;
}

/** Who a controller is, for its logs and metrics. */
export interface ControllerOptions {
  /** The `controller` label of its metrics. */
  readonly name: string;
  /** The log field that carries the key (e.g. `ed`). */
  readonly keyField: string;
  /** Observes each reconcile's duration, labelled by `controller` and `result`. */
  readonly reconcileDuration?: Histogram<'controller' | 'result'>;
}

/**
 * sample-controller's worker loop: take a key, reconcile it, forget its backoff on success or requeue it rate-limited
 * on failure, and mark it done (so the queue may hand it out again). Several workers share one queue; the queue
 * guarantees a key is never reconciled by two of them at once.
 */
export class Controller<K extends string> {
  constructor(
    private readonly reconciler: KeyReconciler<K>,
    private readonly log: Logger,
    private readonly options: ControllerOptions,
  ) {}

  /** Runs `workers` workers until `queue` is shut down and drained. */
  async run(queue: WorkQueue<K>, workers: number): Promise<void> {
    await Promise.all(Array.from({ length: Math.max(1, workers) }, () => this.worker(queue)));
  }

  private async worker(queue: WorkQueue<K>): Promise<void> {
    for (let key = await queue.get(); key !== undefined; key = await queue.get()) await this.process(queue, key);
  }

  private async process(queue: WorkQueue<K>, key: K): Promise<void> {
    const end = this.options.reconcileDuration?.startTimer({ controller: this.options.name });
    const fields = { [this.options.keyField]: key };
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
        this.log.info('reconcile stopped: not the leader any more', fields);
        return;
      }
      const { code, message } = apiError(error);
      // A conflict only means the cache was behind the object: routine, retried at once on fresher data.
      const level = isConflict(error) ? 'debug' : 'warn';
      this.log[level]('reconcile failed; retrying', { ...fields, code, error: message, retries: queue.numRequeues(key) });
      // A throttled write (429) is retried no sooner than the API server asked.
      queue.addRateLimited(key, retryAfterMs(error));
    } finally {
      end?.({ result });
      queue.done(key);
    }
  }
}
