import { InvalidArgumentError } from 'commander';

/** Milliseconds per unit of a Go duration. */
const UNITS: Readonly<Record<string, number>> = { h: 3_600_000, m: 60_000, s: 1_000, ms: 1 };

/** One `<number><unit>` of a Go duration; `ms` before `m`, or `5ms` would read as 5 minutes and a stray `s`. */
const PART = /(\d+(?:\.\d+)?)(ms|h|m|s)/y;

/**
 * Parses a duration as kubectl's --timeout does (Go's time.ParseDuration): `90s`, `5m`, `1h30m`, `1.5h`, or `0`.
 * Returns milliseconds; anything else is a usage error.
 */
export function parseDuration(value: string): number {
  if (value === '0') return 0;
  let ms = 0;
  let at = 0;
  while (at < value.length || at === 0) {
    PART.lastIndex = at;
    const match = PART.exec(value);
    if (!match) throw new InvalidArgumentError('expected a duration such as 90s, 5m or 1h30m');
    ms += Number(match[1]) * (UNITS[match[2] ?? ''] ?? 0);
    at = PART.lastIndex;
  }
  return Math.round(ms);
}
