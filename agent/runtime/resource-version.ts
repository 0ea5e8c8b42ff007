/** A resourceVersion Kubernetes lets clients compare: a decimal integer without leading zeros (KEP-5504). */
const COMPARABLE = /^[1-9][0-9]*$/;

/**
 * Orders two resourceVersions of objects of one kind: negative when `a` is older than `b`, 0 when equal, positive
 * when newer. Kubernetes 1.35+ guarantees this order (KEP-5504: Comparable Resource Version; client-go's
 * CompareResourceVersion). Undefined when either is not a well-formed integer, as from a server that keeps them
 * opaque: then only equality means anything.
 */
export function compareResourceVersions(a: string, b: string): number | undefined {
  if (!COMPARABLE.test(a) || !COMPARABLE.test(b)) return undefined;
  if (a.length !== b.length) return a.length - b.length;
  return a < b ? -1 : a > b ? 1 : 0;
}
