import { describe, expect, it } from 'vitest';
import { parseDuration } from './duration.js';

describe('parseDuration', () => {
  it.each([
    ['0', 0],
    ['90s', 90_000],
    ['5m', 300_000],
    ['1h30m', 5_400_000],
    ['1.5h', 5_400_000],
    ['250ms', 250],
    ['2m30s', 150_000],
  ])('reads %s as Go does', (value, ms) => {
    expect(parseDuration(value)).toBe(ms);
  });

  it.each(['', '90', '5 m', 'm', '1d', '-5s', '5m ', 'soon'])('refuses %j', (value) => {
    expect(() => parseDuration(value)).toThrow('expected a duration such as 90s, 5m or 1h30m');
  });
});
