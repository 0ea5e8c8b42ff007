import { describe, expect, it } from 'vitest';
import { retainedBytes } from '../../core/heap-test-support.js';
import { StringPool } from './string-pool.js';

const MB = 1_000_000;
/** A string equal to `text` but a copy of its own, as JSON.parse gives each object one. */
const copyOf = (text: string): string => JSON.parse(JSON.stringify(text)) as string;
const LONG = `registry.example/${'x'.repeat(10_000)}:2`;

describe('StringPool', () => {
  it('holds one copy of a string for every equal one it is given', () => {
    const copies = retainedBytes(() => Array.from({ length: 2000 }, () => copyOf(LONG)));
    const pool = new StringPool(10);
    const pooled = retainedBytes(() => Array.from({ length: 2000 }, () => pool.intern(copyOf(LONG))));
    expect(copies).toBeGreaterThan(15 * MB);
    expect(pooled).toBeLessThan(1 * MB);
    expect(pool.intern(copyOf(LONG))).toBe(LONG);
    expect(pool.size).toBe(1);
  });

  it('passes anything but a string through and holds nothing of it', () => {
    const pool = new StringPool(10);
    const object = { a: 1 };
    expect(pool.intern(object)).toBe(object);
    expect(pool.intern(undefined)).toBeUndefined();
    expect(pool.intern(7)).toBe(7);
    expect(pool.size).toBe(0);
  });

  it('starts again empty when full, so that strings without end hold no memory', () => {
    const pool = new StringPool(3);
    for (const name of ['a', 'b', 'c']) pool.intern(name);
    expect(pool.size).toBe(3);
    pool.intern('d');
    expect(pool.size).toBe(1);
    for (let i = 0; i < 100; i++) pool.intern(`pod-${i}`);
    expect(pool.size).toBeLessThanOrEqual(3);
  });
});
