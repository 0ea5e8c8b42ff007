/**
 * Kubernetes resource quantities (`500m`, `2Gi`, `1e3`, `1.5`), as numbers of base units (cores, bytes, pods).
 * Capacity counting divides free by requested amounts of the same resource, so a float's precision is plenty.
 */

const BINARY: Readonly<Record<string, number>> = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50, Ei: 2 ** 60 };
/** Decimal suffixes as powers of ten. */
const DECIMAL: Readonly<Record<string, number>> = { n: -9, u: -6, m: -3, '': 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
// The API server's grammar: a signed decimal number, then a binary suffix, a decimal suffix or an exponent.
const QUANTITY = /^([+-]?(?:\d+\.?\d*|\.\d+))(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?\d+)?$/;

/** The quantity's value in base units, or undefined when it is not a Kubernetes quantity. Numbers pass through. */
export function parseQuantity(value: string | number | undefined): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  if (value === undefined) return undefined;
  const match = QUANTITY.exec(value.trim());
  if (!match) return undefined;
  const number = Number(match[1]);
  const suffix = match[2] ?? '';
  if (suffix in BINARY) return number * (BINARY[suffix] ?? 1);
  return scale(number, suffix in DECIMAL ? (DECIMAL[suffix] ?? 0) : Number(suffix.slice(1)));
}

/** number × 10^exponent, dividing for negative exponents so that `3800m` is exactly 3.8. */
function scale(number: number, exponent: number): number {
  return exponent >= 0 ? number * 10 ** exponent : number / 10 ** -exponent;
}
