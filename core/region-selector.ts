import type { NodeSelectorRequirement } from './kube/objects.js';
import { selectorMatches } from './selector.js';

/** A requirement on a node label, as node affinity and label selectors write it (no Gt or Lt in a region). */
export interface RegionRequirement {
  readonly key: string;
  readonly operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist';
  /** The values of In and NotIn; none for Exists and DoesNotExist. */
  readonly values?: readonly string[] | undefined;
}

/** Which nodes form a region: all of `matchLabels` and all of `matchExpressions`. */
export interface RegionSelector {
  readonly matchLabels?: Readonly<Record<string, string>> | undefined;
  readonly matchExpressions?: readonly RegionRequirement[] | undefined;
}

/** Every requirement of a region, its labels as `In [value]`, labels first (by key), then its expressions as written. */
export function regionRequirements(selector: RegionSelector): RegionRequirement[] {
  const labels = selector.matchLabels ?? {};
  return [
    ...Object.keys(labels)
      .sort()
      .map((key): RegionRequirement => ({ key, operator: 'In', values: [labels[key] ?? ''] })),
    ...(selector.matchExpressions ?? []),
  ];
}

/** Whether a node with these labels belongs to the region. */
export function nodeInRegion(labels: Readonly<Record<string, string>>, selector: RegionSelector): boolean {
  return selectorMatches({ ...(selector.matchLabels && { matchLabels: { ...selector.matchLabels } }), matchExpressions: regionExpressions(selector) }, labels);
}

/** The region's expressions as a label selector's (mutable copies). */
export function regionExpressions(selector: RegionSelector): { key: string; operator: RegionRequirement['operator']; values?: string[] }[] {
  return (selector.matchExpressions ?? []).map((r) => ({ key: r.key, operator: r.operator, ...(r.values && { values: [...r.values] }) }));
}

/**
 * What the requirements on one label key allow a node: whether it may lack the label, and if it has it, the values it
 * may have (`only`) or may not have (`except`). Exactly one of `only` and `except` is set.
 */
export interface KeyConstraint {
  readonly absent: boolean;
  readonly only?: ReadonlySet<string>;
  readonly except?: ReadonlySet<string>;
}

/** No requirement on the key. */
export const ANY_VALUE: KeyConstraint = { absent: true, except: new Set() };

/** What one requirement allows; undefined for operators this model does not know (Gt, Lt). */
export function constraintOf(requirement: { readonly operator: string; readonly values?: readonly string[] | undefined }): KeyConstraint | undefined {
  const values = new Set(requirement.values ?? []);
  switch (requirement.operator) {
    case 'In':
      return { absent: false, only: values };
    case 'NotIn':
      return { absent: true, except: values };
    case 'Exists':
      return { absent: false, except: new Set() };
    case 'DoesNotExist':
      return { absent: true, only: new Set() };
    default:
      return undefined;
  }
}

/** What both constraints allow (the requirements AND-ed). */
export function both(a: KeyConstraint, b: KeyConstraint): KeyConstraint {
  const absent = a.absent && b.absent;
  if (a.only && b.only) return { absent, only: new Set([...a.only].filter((v) => b.only?.has(v))) };
  if (a.only) return { absent, only: new Set([...a.only].filter((v) => !b.except?.has(v))) };
  if (b.only) return { absent, only: new Set([...b.only].filter((v) => !a.except?.has(v))) };
  return { absent, except: new Set([...(a.except ?? []), ...(b.except ?? [])]) };
}

/** Whether some node satisfies the constraint: it may lack the label, or some value is allowed (an `except` set leaves infinitely many). */
export function satisfiable(c: KeyConstraint): boolean {
  return c.absent || c.except !== undefined || (c.only?.size ?? 0) > 0;
}

/** Whether a node whose label has `value` (undefined: no such label) satisfies the constraint. */
export function accepts(c: KeyConstraint, value: string | undefined): boolean {
  if (value === undefined) return c.absent;
  return c.only ? c.only.has(value) : !(c.except?.has(value) ?? false);
}

/** The constraint per label key of a set of requirements (AND-ed within a key). */
export function keyConstraints(requirements: readonly RegionRequirement[]): Map<string, KeyConstraint> {
  const byKey = new Map<string, KeyConstraint>();
  for (const r of requirements) {
    const c = constraintOf(r) ?? ANY_VALUE;
    const previous = byKey.get(r.key);
    byKey.set(r.key, previous ? both(previous, c) : c);
  }
  return byKey;
}

/** Why two regions share no node: the key on which their requirements cannot both hold. */
export interface Disjoint {
  readonly disjoint: true;
  readonly key: string;
}

/** Two regions may share nodes: the labels of such a node (keys it lacks left out). */
export interface Shared {
  readonly disjoint: false;
  readonly node: Readonly<Record<string, string>>;
}

/**
 * Whether two regions can select the same node, decided exactly: the requirements on each key are independent of the
 * other keys', so the regions are disjoint when (and only when) on some key their requirements cannot both hold, and
 * otherwise a node that satisfies both on every key exists: it is returned, as the proof.
 */
export function regionOverlap(a: RegionSelector, b: RegionSelector): Disjoint | Shared {
  const ca = keyConstraints(regionRequirements(a));
  const cb = keyConstraints(regionRequirements(b));
  const node: Record<string, string> = {};
  for (const key of [...new Set([...ca.keys(), ...cb.keys()])].sort()) {
    const c = both(ca.get(key) ?? ANY_VALUE, cb.get(key) ?? ANY_VALUE);
    if (!satisfiable(c)) return { disjoint: true, key };
    if (c.absent) continue;
    node[key] = c.only ? ([...c.only].sort()[0] ?? '') : valueOutside(c.except ?? new Set());
  }
  return { disjoint: false, node };
}

/** A label value not in `excluded` (the first of `x`, `x1`, `x2`, …). */
function valueOutside(excluded: ReadonlySet<string>): string {
  for (let i = 0; ; i++) {
    const candidate = i === 0 ? 'x' : `x${i}`;
    if (!excluded.has(candidate)) return candidate;
  }
}

/** The requirement as a node selector requirement (node affinity writes the same four operators). */
export function nodeSelectorRequirement(r: RegionRequirement): NodeSelectorRequirement {
  return { key: r.key, operator: r.operator, ...(r.values && { values: [...r.values] }) };
}
