import type { Toleration } from './api/common.js';
import type { NodeSelectorRequirement, NodeSelectorTerm, PodSpec, PodTemplate } from './kube/objects.js';
import { mergeTolerations } from './overrides.js';
import { selectorString } from './selector.js';
import {
  ANY_VALUE,
  accepts,
  both,
  constraintOf,
  keyConstraints,
  nodeSelectorRequirement,
  regionExpressions,
  regionOverlap,
  regionRequirements,
  satisfiable,
  type KeyConstraint,
  type RegionSelector,
} from './region-selector.js';

/** What placement needs of a DeployRegion. */
export interface RegionNodes extends RegionSelector {
  readonly name: string;
  readonly tolerations?: readonly Toleration[] | undefined;
}

/** The placed template, and why the template cannot run in the region if it cannot. */
export interface Placement {
  readonly template: PodTemplate;
  readonly conflict?: string;
}

/**
 * Pins a pod template to a region's nodes. The region's requirements (its labels as `In [value]`, then its
 * expressions) are AND-ed into every required node-selector term (a term is created when there is none), never
 * appended as an OR-ed term, which would let pods escape the region. The region's tolerations are added. A template
 * whose own node constraints exclude every node of the region is reported as a conflict; terms that do are dropped.
 * `template` is not changed: the placed template is a new one that shares with it every part placement does not
 * change (the renderer's regions share what no region changes, core/render.ts).
 */
export function placeInRegion(template: PodTemplate, region: RegionNodes): Placement {
  const spec: PodSpec = { ...template.spec };
  const out: PodTemplate = { ...template, spec };
  const requirements = regionRequirements(region);
  const constraints = keyConstraints(requirements);

  const nodeSelector = spec.nodeSelector ?? {};
  for (const key of Object.keys(nodeSelector).sort()) {
    const constraint = constraints.get(key);
    if (constraint && !accepts(constraint, nodeSelector[key])) {
      return {
        template: out,
        conflict: `the template's nodeSelector ${key}=${nodeSelector[key]} excludes every node of region ${region.name} (${onKey(region, key)})`,
      };
    }
  }

  // Each object on the way to the terms is copied, in its place (or added, as `??=` would add it).
  const affinity = (spec.affinity = { ...spec.affinity });
  const nodeAffinity = (affinity.nodeAffinity = { ...affinity.nodeAffinity });
  const required = (nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution = { ...nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution });
  const terms = required.nodeSelectorTerms && required.nodeSelectorTerms.length > 0 ? required.nodeSelectorTerms : [{}];
  const satisfiable = terms.filter((term) => [...constraints].every(([key, constraint]) => termAllows(term, key, constraint)));
  if (satisfiable.length === 0) {
    return { template: out, conflict: `every required node-selector term of the template excludes the nodes of region ${region.name}` };
  }
  required.nodeSelectorTerms = satisfiable.map((term) => {
    const expressions = [...(term.matchExpressions ?? [])];
    for (const requirement of requirements.map(nodeSelectorRequirement)) {
      if (!expressions.some((r) => sameRequirement(r, requirement))) expressions.push(requirement);
    }
    return { ...term, matchExpressions: expressions };
  });

  if (region.tolerations && region.tolerations.length > 0) {
    spec.tolerations = mergeTolerations(spec.tolerations, region.tolerations);
  }
  return { template: out };
}

/** The region's requirements on `key`, as `kubectl get -l` writes them: `zone=a`, `zone in (a,b)`, `!gpu`. */
function onKey(region: RegionSelector, key: string): string {
  const label = region.matchLabels?.[key];
  return selectorString({
    ...(label !== undefined && { matchLabels: { [key]: label } }),
    matchExpressions: regionExpressions(region).filter((r) => r.key === key),
  });
}

/**
 * Whether a node of the region (as far as `constraint` says of `key`) can satisfy the term's requirements on `key`.
 * Gt and Lt are checked against the values the region allows when it names them; otherwise they only require the
 * label to be there.
 */
function termAllows(term: NodeSelectorTerm, key: string, constraint: KeyConstraint): boolean {
  let combined = constraint;
  for (const r of (term.matchExpressions ?? []).filter((e) => e.key === key)) {
    const c = constraintOf(r);
    if (c) combined = both(combined, c);
    else if (combined.only) combined = { absent: false, only: new Set([...combined.only].filter((v) => numericallyAllows(r, v))) };
    else combined = both(combined, { ...ANY_VALUE, absent: false });
  }
  return satisfiable(combined);
}

/** Whether a node whose label has `value` satisfies a Gt or Lt requirement. */
function numericallyAllows(requirement: NodeSelectorRequirement, value: string): boolean {
  const bound = Number(requirement.values?.[0]);
  const n = Number(value);
  return Number.isInteger(n) && (requirement.operator === 'Gt' ? n > bound : requirement.operator === 'Lt' ? n < bound : true);
}

function sameRequirement(a: NodeSelectorRequirement, b: NodeSelectorRequirement): boolean {
  return a.key === b.key && a.operator === b.operator && JSON.stringify(a.values ?? []) === JSON.stringify(b.values ?? []);
}

/**
 * Whether two regions could select the same node, and if so a node that both select (region-selector.ts
 * regionOverlap: exact for label requirements).
 */
export function regionsMayOverlap(a: RegionSelector, b: RegionSelector): Readonly<Record<string, string>> | undefined {
  const overlap = regionOverlap(a, b);
  return overlap.disjoint ? undefined : overlap.node;
}
