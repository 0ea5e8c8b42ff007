/**
 * Arithmetic progressions of JSON values. A value is split into its shape (everything but its numbers) and its
 * numbers: every JSON number, every time written as RFC 3339 (as ms), and every run of digits inside other strings
 * (a pod's serial in its name, a group in a message). Values of one shape whose numbers progress by the same step
 * from one to the next can be continued: `at(k)` is the value k steps on, built as the values are (same texts, same
 * zero padding).
 */

/** A value taken apart: its shape (a text) and its numbers in order. */
export interface Split {
  readonly shape: string;
  readonly numbers: readonly number[];
}

const TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{3})?Z$/;
/** Longer digit runs are not counted as numbers: they would lose digits as doubles (and are ids, never counts). */
const MAX_DIGITS = 15;

/**
 * Walks a value, handing every number to `f` (with how it is written: `#` a JSON number, `t` / `T` a time with or
 * without milliseconds, `pN` digits zero-padded to N, `d` plain digits) and rebuilding the value from what `f`
 * returns; `shape` collects the rest.
 */
function walk(value: unknown, f: (n: number, kind: string) => number, shape: string[]): unknown {
  if (typeof value === 'number') {
    shape.push('#');
    return f(value, '#');
  }
  if (typeof value === 'string') {
    const time = TIME.exec(value);
    if (time) {
      const kind = time[1] === undefined ? 'T' : 't';
      shape.push(kind);
      const ms = f(Date.parse(value), kind);
      return kind === 't' ? new Date(ms).toISOString() : new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
    }
    const kindOf = (digits: string) => (digits.length > 1 && digits.startsWith('0') ? `p${digits.length}` : 'd');
    shape.push(`"${value.replace(/\d+/g, (digits) => (digits.length > MAX_DIGITS ? digits : `<${kindOf(digits)}>`))}`);
    return value.replace(/\d+/g, (digits) => {
      if (digits.length > MAX_DIGITS) return digits;
      const kind = kindOf(digits);
      const n = f(Number(digits), kind);
      return kind === 'd' ? String(n) : String(n).padStart(digits.length, '0');
    });
  }
  if (Array.isArray(value)) {
    shape.push(`[${value.length}`);
    return value.map((item) => walk(item, f, shape));
  }
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort()) {
      const item = (value as Record<string, unknown>)[key];
      if (item === undefined) continue;
      shape.push(`{${JSON.stringify(key)}`);
      out[key] = walk(item, f, shape);
    }
    shape.push('}');
    return out;
  }
  shape.push(JSON.stringify(value) ?? 'undefined');
  return value;
}

/** The value taken apart into its shape and numbers. */
export function split(value: unknown): Split {
  const shape: string[] = [];
  const numbers: number[] = [];
  walk(
    value,
    (n) => {
      numbers.push(n);
      return n;
    },
    shape,
  );
  return { shape: shape.join('\u0001'), numbers };
}

/** The step from `a` to `b` when they have one shape; undefined otherwise. */
export function stepBetween(a: Split, b: Split): number[] | undefined {
  if (a.shape !== b.shape || a.numbers.length !== b.numbers.length) return undefined;
  return b.numbers.map((n, i) => n - (a.numbers[i] ?? 0));
}

/** Whether two steps are the same. */
export const sameStep = (a: readonly number[], b: readonly number[]): boolean => a.length === b.length && a.every((n, i) => n === b[i]);

/**
 * `value` continued `k` steps of `step` (from split(value)): every number moves by k × its step. Undefined when a
 * number would leave what its writing can hold (a negative count or digits, a padded serial outgrowing its width).
 */
export function continued<T>(value: T, step: readonly number[], k: number): T | undefined {
  let i = 0;
  let fits = true;
  const out = walk(
    value,
    (n, kind) => {
      const next = n + k * (step[i++] ?? 0);
      if ((n >= 0 && next < 0) || !Number.isSafeInteger(next)) fits = false;
      if (kind.startsWith('p') && String(next).length > Number(kind.slice(1))) fits = false;
      return next;
    },
    [],
  );
  return fits ? (out as T) : undefined;
}
