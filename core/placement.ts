import type { Toleration } from './api/common.js';
import type { NodeSelectorRequirement, PodTemplate } from './kube/objects.js';
import { cloneJson, mergeTolerations } from './overrides.js';

/** What placement needs of a DeployRegion. */
export interface RegionNodes {
  readonly name: string;
  readonly matchLabels: Readonly<Record<string, string>>;
  readonly tolerations?: readonly Toleration[] | undefined;
}

/** The placed template, and why the template cannot run in the region if it cannot. */
export interface Placement {
  readonly template: PodTemplate;
  readonly conflict?: string;
}

/**
 * Pins a pod template to a region's nodes. The region's labels are AND-ed into every required node-selector term
 * (a term is created when there is none), never appended as an OR-ed term, which would let pods escape the region.
 * The region's tolerations are added. A template whose own node constraints exclude every node of the region is
 * reported as a conflict.
 */
export function placeInRegion(template: PodTemplate, region: RegionNodes): Placement {
  const out = cloneJson(template);
  const spec = (out.spec ??= {});
  const labels = Object.keys(region.matchLabels)
    .sort()
    .map((key) => ({ key, value: region.matchLabels[key] ?? '' }));

  const nodeSelector = spec.nodeSelector ?? {};
  for (const { key, value } of labels) {
    if (key in nodeSelector && nodeSelector[key] !== value) {
      return {
        template: out,
        conflict: `the template's nodeSelector ${key}=${nodeSelector[key]} excludes every node of region ${region.name} (${key}=${value})`,
      };
    }
  }

  const affinity = (spec.affinity ??= {});
  const nodeAffinity = (affinity.nodeAffinity ??= {});
  const required = (nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution ??= {});
  const terms = required.nodeSelectorTerms && required.nodeSelectorTerms.length > 0 ? required.nodeSelectorTerms : [{}];
  const satisfiable = terms.filter((term) => labels.every(({ key, value }) => (term.matchExpressions ?? []).every((r) => r.key !== key || allows(r, value))));
  if (satisfiable.length === 0) {
    return { template: out, conflict: `every required node-selector term of the template excludes the nodes of region ${region.name}` };
  }
  required.nodeSelectorTerms = satisfiable.map((term) => {
    const expressions = [...(term.matchExpressions ?? [])];
    for (const { key, value } of labels) {
      if (!expressions.some((r) => r.key === key && r.operator === 'In' && r.values?.length === 1 && r.values[0] === value)) {
        expressions.push({ key, operator: 'In', values: [value] });
      }
    }
    return { ...term, matchExpressions: expressions };
  });

  if (region.tolerations && region.tolerations.length > 0) {
    spec.tolerations = mergeTolerations(spec.tolerations, region.tolerations);
  }
  return { template: out };
}

/** Whether a node whose label `key` has `value` can satisfy the requirement on that key. */
function allows(requirement: NodeSelectorRequirement, value: string): boolean {
  switch (requirement.operator) {
    case 'In':
      return (requirement.values ?? []).includes(value);
    case 'NotIn':
      return !(requirement.values ?? []).includes(value);
    case 'DoesNotExist':
      return false;
    case 'Gt':
    case 'Lt': {
      const bound = Number(requirement.values?.[0]);
      const n = Number(value);
      return Number.isInteger(n) && (requirement.operator === 'Gt' ? n > bound : n < bound);
    }
    default:
      return true;
  }
}

/**
 * Whether two regions could select the same node. Two label sets are disjoint only when some key has different
 * values in each; otherwise a node carrying both sets belongs to both (identical and subset sets included).
 */
export function regionsMayOverlap(a: Readonly<Record<string, string>>, b: Readonly<Record<string, string>>): boolean {
  return !Object.keys(a).some((key) => key in b && a[key] !== b[key]);
}
