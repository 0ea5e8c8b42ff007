import * as z from 'zod';
import { describe, expect, it } from 'vitest';
import { parseJsonAnnotation } from './json-annotation.js';

describe('parseJsonAnnotation', () => {
  const shape = z.object({ phase: z.enum(['a', 'b']), since: z.number() });

  it('reads JSON of the shape, and nothing from an absent, unparsable or differently shaped value', () => {
    expect(parseJsonAnnotation(shape, '{"phase":"a","since":3}')).toEqual({ phase: 'a', since: 3 });
    expect(parseJsonAnnotation(shape, undefined)).toBeUndefined();
    expect(parseJsonAnnotation(shape, '{"phase":')).toBeUndefined();
    expect(parseJsonAnnotation(shape, '{"phase":"c","since":3}')).toBeUndefined();
    expect(parseJsonAnnotation(shape, '"a"')).toBeUndefined();
  });
});
