import { DEFAULT_NAMESPACE, labelMap, labelSelector, type LabelSelector } from './api/common.js';
import { NAME_LABEL, REGION_LABEL } from './labels.js';
import { refOf, regionEntries } from './parse.js';
import { formatObject, type ObjectRef, type Problem } from './problems.js';
import { isEmptySelector, selectorMatches } from './selector.js';

const CONSEQUENCE = "autoscalers, PodDisruptionBudgets and kubectl would count the pods of both as one's; give each ExtendedDeployment labels of its own";

/** What the clash check reads of one ExtendedDeployment. */
interface Selecting {
  readonly object: ObjectRef;
  /** `namespace/name`, as it is rendered: copies of one object defined twice do not clash with each other. */
  readonly key: string;
  readonly namespace: string;
  readonly selector: LabelSelector;
  /** The labels of its pods, one set per region. */
  readonly podLabels: readonly Readonly<Record<string, string>>[];
}

/**
 * Problems of ExtendedDeployments (raw, valid or not) of one namespace where one's selector selects the other's pods:
 * each of the two gets one problem naming the other, at its selector when it is the one selecting, else at its labels. The selector is what the scale subresource publishes, so an autoscaler,
 * a PodDisruptionBudget or `kubectl get pods -l` would take the pods of both for one's. Objects whose selector or pod
 * labels do not parse, or whose selector is empty, are left out: their own problems say why.
 */
export function selectorClashes(objects: readonly unknown[]): Problem[] {
  const selecting = objects.flatMap((raw) => {
    const entry = selectingOf(raw);
    return entry ? [entry] : [];
  });
  const selects = (a: Selecting, b: Selecting) => b.podLabels.some((labels) => selectorMatches(a.selector, labels));
  const candidates = clashCandidates(selecting);
  return selecting.flatMap((a, i) =>
    (candidates[i] ?? [])
      .filter((b) => b.key !== a.key && (selects(a, b) || selects(b, a)))
      .map((b): Problem => {
        const other = formatObject(b.object);
        return selects(a, b)
          ? { object: a.object, path: ['spec', 'selector'], message: `also selects the pods of ${other}: ${CONSEQUENCE}` }
          : { object: a.object, path: ['spec', 'template', 'metadata', 'labels'], message: `are also selected by the selector of ${other}: ${CONSEQUENCE}` };
      }),
  );
}

/**
 * For each object, the objects of its namespace that may select its pods or whose pods it may select, in input order:
 * a superset of its clashes, which are then checked one by one, where comparing every pair of a namespace would grow
 * with the square of its objects. A selector selects only pods that carry each of its
 * matchLabels, so it is indexed under one of them (the one the fewest objects' pods carry), and its candidates are the
 * objects whose pods carry that label; a selector of matchExpressions alone is a candidate of its whole namespace.
 */
function clashCandidates(selecting: readonly Selecting[]): Selecting[][] {
  // One string per namespace, label key and value, unambiguous by the lengths up front (cheaper than JSON of the three).
  const label = (namespace: string, key: string, value: string) => `${namespace.length}:${key.length}:${namespace}${key}${value}`;
  const add = (map: Map<string, Set<number>>, key: string, index: number) => {
    const set = map.get(key);
    if (set) set.add(index);
    else map.set(key, new Set([index]));
  };
  // The labels of each object's pods, each once: its regions' pods share all but the region label.
  const podLabels = selecting.map((s) => {
    const labels = new Set<string>();
    for (const region of s.podLabels) for (const [key, value] of Object.entries(region)) labels.add(label(s.namespace, key, value));
    return labels;
  });
  const namespaces = new Map<string, Set<number>>();
  const podsWith = new Map<string, Set<number>>();
  selecting.forEach((s, i) => {
    add(namespaces, s.namespace, i);
    for (const key of podLabels[i] ?? []) add(podsWith, key, i);
  });
  const owners = (key: string) => podsWith.get(key)?.size ?? 0;
  const anchors = selecting.map((s) => {
    let anchor: string | undefined;
    for (const [key, value] of Object.entries(s.selector.matchLabels ?? {})) {
      const candidate = label(s.namespace, key, value);
      if (anchor === undefined || owners(candidate) < owners(anchor)) anchor = candidate;
    }
    return anchor;
  });
  const selectorsAt = new Map<string, Set<number>>();
  const unanchored = new Map<string, Set<number>>();
  selecting.forEach((s, i) => {
    const anchor = anchors[i];
    if (anchor === undefined) add(unanchored, s.namespace, i);
    else add(selectorsAt, anchor, i);
  });
  return selecting.map((a, index) => {
    const anchor = anchors[index];
    const found = new Set(anchor === undefined ? namespaces.get(a.namespace) : podsWith.get(anchor));
    for (const i of unanchored.get(a.namespace) ?? []) found.add(i);
    for (const key of podLabels[index] ?? []) for (const i of selectorsAt.get(key) ?? []) found.add(i);
    return [...found].sort((x, y) => x - y).flatMap((i) => selecting[i] ?? []);
  });
}

function selectingOf(raw: unknown): Selecting | undefined {
  const object = refOf(raw);
  if (object.name === undefined) return undefined;
  const spec = (raw as { spec?: { selector?: unknown; template?: { metadata?: { labels?: unknown } | null } | null } | null }).spec;
  const selector = labelSelector.safeParse(spec?.selector);
  const labels = labelMap.safeParse(spec?.template?.metadata?.labels ?? {});
  if (!selector.success || !labels.success || isEmptySelector(selector.data)) return undefined;
  const namespace = object.namespace ?? DEFAULT_NAMESPACE;
  const podLabels = regionEntries(raw).map((region) => ({
    ...labels.data,
    ...overrideLabels(raw, region.index),
    [NAME_LABEL]: object.name ?? '',
    [REGION_LABEL]: region.name,
  }));
  return { object, key: `${namespace}/${object.name}`, namespace, selector: selector.data, podLabels };
}

/** The labels a region's typed overrides add to its pods (none when they do not parse). */
function overrideLabels(raw: unknown, index: number): Record<string, string> {
  const regions = (raw as { spec?: { regions?: unknown } | null }).spec?.regions;
  const region: unknown = Array.isArray(regions) ? regions[index] : undefined;
  return labelMap.safeParse((region as { overrides?: { labels?: unknown } | null } | null)?.overrides?.labels ?? {}).data ?? {};
}
