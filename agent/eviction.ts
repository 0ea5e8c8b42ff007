import { answerUnread, type CoreV1Api } from './runtime/kube-client.js';
import { apiError, isConflict, isNotFound } from './runtime/kube-errors.js';

/**
 * An eviction the API server refused because a PodDisruptionBudget allows no disruption now (429 with a
 * DisruptionBudget cause): the pod was not touched. Not a failure of the agent: the rollout holds until the budget
 * allows it (see EvictionBlocks).
 */
export class EvictionBlockedError extends Error {
  constructor(
    /** The pod's namespace. */
    readonly namespace: string,
    /** The pod that was to be replaced. */
    readonly pod: string,
    /** The budget's name, when the API server named it. */
    readonly budget: string | undefined,
    /** What the API server said, e.g. "The disruption budget web needs 2 healthy pods and has 2 currently". */
    readonly detail: string,
  ) {
    super(`eviction of pod ${namespace}/${pod} blocked by ${budget ? `PodDisruptionBudget ${budget}` : 'a PodDisruptionBudget'}: ${detail}`);
    this.name = 'EvictionBlockedError';
  }
}

/** The cause of a 429 from the eviction subresource when a disruption budget refused it; undefined for any other error. */
export function disruptionBudgetRefusal(error: unknown): { budget: string | undefined; detail: string } | undefined {
  const info = apiError(error);
  if (info.code !== 429) return undefined;
  const raw = (error as { body?: unknown }).body;
  let body: unknown = raw;
  if (typeof raw === 'string') {
    try {
      body = JSON.parse(raw);
    } catch {
      body = undefined;
    }
  }
  const causes = (body as { details?: { causes?: { reason?: unknown; message?: unknown }[] } } | undefined)?.details?.causes ?? [];
  const cause = causes.find((c) => c.reason === 'DisruptionBudget');
  // API Priority and Fairness answers 429 too ("Too many requests"): only the budget's refusal names a budget.
  const detail = typeof cause?.message === 'string' ? cause.message : /disruption budget/i.test(info.message) ? info.message : undefined;
  if (detail === undefined) return undefined;
  return { budget: /disruption budget (\S+)/i.exec(detail)?.[1], detail };
}

/**
 * Evicts one exact pod (uid precondition) through the Eviction API (policy/v1), so the pod's PodDisruptionBudgets
 * hold as they do for `kubectl drain`; its ReplicaSet replaces it at the template's revision. A pod already gone (404)
 * or replaced by another of the same name (409: the uid precondition failed) counts as done. A budget that allows no
 * disruption now throws EvictionBlockedError; anything else is thrown as it is.
 */
export async function evictPod(core: CoreV1Api, namespace: string, name: string, uid: string): Promise<void> {
  try {
    await core.createNamespacedPodEviction(
      {
        name,
        namespace,
        body: { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name, namespace }, deleteOptions: { preconditions: { uid } } },
      },
      answerUnread(),
    );
  } catch (error) {
    if (isNotFound(error) || isConflict(error)) return;
    const refusal = disruptionBudgetRefusal(error);
    if (refusal) throw new EvictionBlockedError(namespace, name, refusal.budget, refusal.detail);
    throw error;
  }
}
