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
  return selecting.flatMap((a) =>
    selecting
      .filter((b) => b.namespace === a.namespace && b.key !== a.key && (selects(a, b) || selects(b, a)))
      .map((b): Problem => {
        const other = formatObject(b.object);
        return selects(a, b)
          ? { object: a.object, path: ['spec', 'selector'], message: `also selects the pods of ${other}: ${CONSEQUENCE}` }
          : { object: a.object, path: ['spec', 'template', 'metadata', 'labels'], message: `are also selected by the selector of ${other}: ${CONSEQUENCE}` };
      }),
  );
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
