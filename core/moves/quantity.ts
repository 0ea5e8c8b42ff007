/**
 * Kubernetes resource quantities (`500m`, `2Gi`, `1e3`, `1.5`), as numbers of base units (cores, bytes, pods).
 * Capacity counting divides free by requested amounts of the same resource, so a float's precision is plenty.
 */

const BINARY: Readonly<Record<string, number>> = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50, Ei: 2 ** 60 };
const DECIMAL: Readonly<Record<string, number>> = { n: 1e-9, u: 1e-6, m: 1e-3, '': 1, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18 };
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
  if (suffix in DECIMAL) return number * (DECIMAL[suffix] ?? 1);
  return number * 10 ** Number(suffix.slice(1));
}
