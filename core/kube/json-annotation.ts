import type * as z from 'zod';

/**
 * An annotation that holds JSON in `schema`'s shape, read: undefined when it is absent, not JSON, or of another shape
 * (a value garbled by hand counts as none, never as an error that stops the agent).
 */
export function parseJsonAnnotation<S extends z.ZodType>(schema: S, text: string | undefined): z.output<S> | undefined {
  if (text === undefined) return undefined;
  try {
    const result = schema.safeParse(JSON.parse(text));
    return result.success ? result.data : undefined;
  } catch {
    return undefined;
  }
}
