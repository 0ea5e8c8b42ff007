import * as z from 'zod';
import { parseJsonAnnotation } from '../kube/json-annotation.js';

/** One container being swapped: the image it leaves and gets, and how it looked before the swap. */
const swappedContainer = z.object({
  from: z.string(),
  to: z.string(),
  /** containerID before the swap; a new one proves the container restarted. */
  containerID: z.string().optional(),
  /** restartCount before the swap; a higher one proves it too (the same digest under a new tag keeps the imageID). */
  restartCount: z.number().int().optional(),
});

/**
 * Where a pod's in-place swap stands, kept on the pod itself (annotation), so a new leader continues exactly there.
 * draining: out of endpoints (gate False), waiting the grace period; swapping: images patched, waiting for the
 * containers to restart and be ready; done: swapped (the agent opens the gate).
 */
export const swapState = z.object({
  /** The revision the swap leads to. */
  revision: z.string(),
  phase: z.enum(['draining', 'swapping', 'done']),
  /** When the phase began (ms since epoch). */
  since: z.number(),
  containers: z.record(z.string(), swappedContainer).optional(),
});

/** Where a pod's in-place swap stands. */
export type SwapState = z.infer<typeof swapState>;

/** Reads the annotation; undefined when absent or unreadable (a pod with a garbled state is treated as not swapping). */
export function parseSwapState(text: string | undefined): SwapState | undefined {
  return parseJsonAnnotation(swapState, text);
}
