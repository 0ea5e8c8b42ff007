import { describe, expect, it } from 'vitest';
import { parseQuantity } from './quantity.js';

describe('parseQuantity', () => {
  it.each([
    ['100m', 0.1],
    ['3800m', 3.8],
    ['1e-3', 0.001],
    ['2', 2],
    ['1.5', 1.5],
    ['.5', 0.5],
    ['1Ki', 1024],
    ['8Gi', 8 * 2 ** 30],
    ['512Mi', 512 * 2 ** 20],
    ['1k', 1000],
    ['1M', 1e6],
    ['1G', 1e9],
    ['1e3', 1000],
    ['2E', 2e18],
    ['250u', 250e-6],
    ['+3', 3],
  ])('%s is %d base units', (text, expected) => {
    expect(parseQuantity(text)).toBe(expected);
  });

  it('passes numbers through', () => {
    expect(parseQuantity(4)).toBe(4);
  });

  it.each(['', 'abc', '1Q', '1 Gi', '1gi', 'Gi'])('rejects %j', (text) => {
    expect(parseQuantity(text)).toBeUndefined();
  });
});
