/**
 * The timings of the simulated cluster: the rollout `edctl plan` shows is the one the agent performs when every pod
 * starts this fast. Times are kept to the millisecond in every object (the API server keeps whole seconds): the
 * planner reads times only as "since when" against now, and rounding would make groups that are alike differ by a
 * millisecond here and there, which would hide that they are alike (collapse.ts).
 */

/** When the simulated rollout starts: 2026-01-01T00:00:00Z. */
export const SIMULATION_START = Date.UTC(2026, 0, 1);

/** How long the pods running before the rollout have been Ready. */
export const SETTLED_FOR_MS = 3_600_000;

/** From a pod's creation (scheduled and running at once) until its containers are ready. */
export const POD_START_MS = 1_000;

/**
 * From a pod's deletion until it is gone (its containers stopped). Shorter than a start, as on real nodes (and the
 * lab's kwok: gone within 0.6 s, Ready after 1.7 s at least): an old pod a group removes is gone before the next
 * group's pods are Ready, so the most pods a region runs at once is what the agent's budgets allow, not an overlap
 * of slow deletions.
 */
export const TERMINATION_MS = 500;

/** From an in-place image patch until the restarted containers run and are ready. */
export const RESTART_MS = 1_000;

/**
 * From a gate's being reached until its approval (`edctl approve`, by a person or a pipeline) reaches the agent. Not
 * instant, as in a real cluster: pods that the finished group removed are gone by then (TERMINATION_MS), so the next
 * group does not start next to them.
 */
export const APPROVAL_MS = 1_000;
