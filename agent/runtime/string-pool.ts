/**
 * One copy of each string that many cached objects repeat. JSON.parse gives every object of a watch its own copies:
 * the pods of an ExtendedDeployment each hold its namespace, labels, owner, images and condition words, and a pod
 * cache of 4,000 pods held the same image name 3,394 times. Bounded: emptied when full, so that values without end
 * (the names of ever new objects) hold no memory; only values that repeat belong in it.
 */
export class StringPool {
  readonly #strings = new Map<string, string>();

  /** @param capacity the strings held at most; the pool starts again empty when it is reached. */
  constructor(private readonly capacity: number) {}

  /** The pool's copy of `value` (`value` itself the first time); anything but a string as it is. */
  intern<T>(value: T): T {
    if (typeof value !== 'string') return value;
    const held = this.#strings.get(value);
    if (held !== undefined) return held as T;
    if (this.#strings.size >= this.capacity) this.#strings.clear();
    this.#strings.set(value, value);
    return value;
  }

  /** Strings held now. */
  get size(): number {
    return this.#strings.size;
  }
}
