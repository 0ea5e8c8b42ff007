import { describe, expect, it } from 'vitest';
import { compareResourceVersions } from './resource-version.js';

describe('compareResourceVersions', () => {
  it.each([
    ['9', '10', -1],
    ['10', '9', 1],
    ['123', '123', 0],
    ['199', '200', -1],
    ['1000000000000000000001', '999999999999999999999', 1],
  ])('orders %s against %s as integers', (a, b, sign) => {
    expect(Math.sign(compareResourceVersions(a, b)!)).toBe(sign);
  });

  it.each([
    ['', '1'],
    ['01', '2'],
    ['abc', '1'],
    ['1', '-1'],
    ['1.5', '2'],
  ])('leaves %s against %s unordered (not a KEP-5504 version)', (a, b) => {
    expect(compareResourceVersions(a, b)).toBeUndefined();
  });
});
