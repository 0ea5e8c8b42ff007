import { parsePercent } from './api/common.js';
import type { DeployRegion } from './api/deploy-region.js';
import type { ExtendedDeployment } from './api/extended-deployment.js';
import { regionsMayOverlap } from './placement.js';
import type { ObjectRef, Problem, ProblemList } from './problems.js';
import { isEmptySelector } from './selector.js';
import { workloadKindOf, workloadName } from './kube/workload-kinds.js';

/** Whether pods of this ExtendedDeployment may be updated in place (upstream InplaceSet, or InPlaceIfPossible). */
export function inPlaceEnabled(ed: ExtendedDeployment): boolean {
  return ed.spec.subsetType === 'InplaceSet' || ed.spec.strategy.updateStrategy.type === 'InPlaceIfPossible';
}

/**
 * Whether region entries may set a partition: ReplicaSet regions (and InplaceSet) keep old pods in place; a native
 * Deployment replaces every pod of its region, and a StatefulSet's partition is the agent's own.
 */
export function takesPartition(spec: Pick<ExtendedDeployment['spec'], 'subsetType'>): boolean {
  return spec.subsetType === 'ReplicaSet' || spec.subsetType === 'InplaceSet';
}

/**
 * What is wrong with the DeployRegion that a region of an ExtendedDeployment names, if anything: it exists but failed
 * its own validation (`invalidRegions`: its own problems say why), or none of that name is among `known`.
 */
export function regionReferenceProblem(name: string, known: ReadonlySet<string>, invalidRegions: ReadonlySet<string>): string | undefined {
  if (invalidRegions.has(name)) return `DeployRegion ${JSON.stringify(name)} is invalid (see its own problems)`;
  if (known.has(name)) return undefined;
  return `DeployRegion ${JSON.stringify(name)} not found (known: ${[...known].sort().join(', ') || 'none'})`;
}

/**
 * The regions of an ExtendedDeployment whose DeployRegion is missing or invalid, as problems of `object` at
 * `spec.regions[i].name` (a region listed twice, once). The agent checks a rendered ExtendedDeployment with this: it
 * was rendered elsewhere, against DeployRegions that may be gone since (deleted by hand, or pruned and re-created by a
 * GitOps tool). Such a region selects no node, which region health reads as a region failed for good, and fault moves
 * would then take the replicas of pods that run fine away from it. The ExtendedDeployment is invalid instead: nothing
 * is moved or scaled until the DeployRegion is back.
 */
export function regionReferenceProblems(ed: ExtendedDeployment, known: ReadonlySet<string>, invalidRegions: ReadonlySet<string>, object: ObjectRef): Problem[] {
  const seen = new Set<string>();
  return ed.spec.regions.flatMap((region, i) => {
    if (seen.has(region.name)) return [];
    seen.add(region.name);
    const message = regionReferenceProblem(region.name, known, invalidRegions);
    return message === undefined ? [] : [{ object, path: ['spec', 'regions', i, 'name'], message }];
  });
}

/**
 * Cross-field rules of one ExtendedDeployment that the schema cannot express, checked against the DeployRegions
 * known to the render. `invalidRegions` names DeployRegions of the render that failed their own validation: they
 * exist, so they are not reported as missing. Everything found is added to `problems`; nothing stops at the first.
 */
export function validateExtendedDeployment(
  ed: ExtendedDeployment,
  regions: ReadonlyMap<string, DeployRegion>,
  problems: ProblemList,
  invalidRegions: ReadonlySet<string> = new Set(),
): void {
  const { spec } = ed;
  const known = new Set(regions.keys());

  const firstIndex = new Map<string, number>();
  spec.regions.forEach((region, i) => {
    const first = firstIndex.get(region.name);
    if (first !== undefined) {
      problems.add(['spec', 'regions', i, 'name'], `region ${JSON.stringify(region.name)} is listed twice (first at spec.regions[${first}])`);
      return;
    }
    firstIndex.set(region.name, i);
    const problem = regionReferenceProblem(region.name, known, invalidRegions);
    if (problem !== undefined) problems.add(['spec', 'regions', i, 'name'], problem);
  });

  const used = [...firstIndex.entries()].filter(([name]) => regions.has(name));
  used.forEach(([name, i], k) => {
    for (const [other] of used.slice(0, k)) {
      const shared = regionsMayOverlap(regions.get(other)?.spec ?? {}, regions.get(name)?.spec ?? {});
      if (shared) {
        const labels = Object.entries(shared).map(([key, value]) => `${key}=${value}`);
        const node = labels.length > 0 ? `a node labelled ${labels.join(', ')}` : 'a node without any of their labels';
        problems.add(
          ['spec', 'regions', i, 'name'],
          `DeployRegion ${JSON.stringify(name)} may select the same nodes as ${JSON.stringify(other)}: no label key rules out both, so ${node} would belong to both`,
        );
      }
    }
  });

  const overriderIndex = new Map<string, number>();
  (spec.overriders ?? []).forEach((entry, i) => {
    const first = overriderIndex.get(entry.name);
    if (first !== undefined) {
      problems.add(['spec', 'overriders', i, 'name'], `second entry for region ${JSON.stringify(entry.name)} (first at spec.overriders[${first}]); merge them`);
    } else overriderIndex.set(entry.name, i);
    if (!firstIndex.has(entry.name))
      problems.add(['spec', 'overriders', i, 'name'], `${JSON.stringify(entry.name)} is not a region of this ExtendedDeployment`);
  });

  if (isEmptySelector(spec.selector)) problems.add(['spec', 'selector'], 'must select something: set matchLabels or matchExpressions');

  const seen = new Set<string>();
  const podSpec = spec.template.spec;
  [
    ...podSpec.containers.map((c, i) => ['containers', i, c.name] as const),
    ...(podSpec.initContainers ?? []).map((c, i) => ['initContainers', i, c.name] as const),
  ].forEach(([list, i, name]) => {
    if (seen.has(name)) problems.add(['spec', 'template', 'spec', list, i, 'name'], `container name ${JSON.stringify(name)} is used twice`);
    seen.add(name);
  });
  if (podSpec.restartPolicy !== undefined && podSpec.restartPolicy !== 'Always') {
    problems.add(['spec', 'template', 'spec', 'restartPolicy'], `must be Always for a long-running workload, not ${JSON.stringify(podSpec.restartPolicy)}`);
  }

  if (spec.subsetType === 'Deployment') {
    spec.regions.forEach((region, i) => {
      if (region.partition !== undefined)
        problems.add(['spec', 'regions', i, 'partition'], 'needs subsetType ReplicaSet (or InplaceSet): a native Deployment replaces every pod of a region');
    });
  }

  statefulSetProblems(ed, problems);
  adoptionProblems(ed, problems);

  const strategy = spec.strategy;
  if (spec.subsetType === 'Deployment' && strategy.updateStrategy.type === 'InPlaceIfPossible') {
    problems.add(
      ['spec', 'strategy', 'updateStrategy', 'type'],
      'InPlaceIfPossible needs subsetType ReplicaSet (or InplaceSet); native Deployments replace pods',
    );
  }
  if (typeof strategy.batchSize === 'number' ? strategy.batchSize < 1 : parsePercent(strategy.batchSize) === 0) {
    problems.add(['spec', 'strategy', 'batchSize'], `${JSON.stringify(strategy.batchSize)} must be at least 1 pod or 1%`);
  }
  const rolling = strategy.updateStrategy.rollingUpdate;
  if (rolling && isZero(rolling.maxSurge) && isZero(rolling.maxUnavailable)) {
    problems.add(['spec', 'strategy', 'updateStrategy', 'rollingUpdate'], 'maxSurge and maxUnavailable cannot both be 0: nothing could ever change');
  }
  if (isZero(strategy.faultMove.failureThreshold)) {
    problems.add(['spec', 'strategy', 'faultMove', 'failureThreshold'], 'must be at least 1 node or 1%: 0 would mark every region failed');
  }
}

/**
 * What only StatefulSet regions may have, and what they may not: the StatefulSet controller replaces pods itself, one at
 * a time from the highest ordinal, deleting each before making it again (a pod's name and claims allow no second
 * copy), and its partition is the agent's, so neither another replacement type nor a region's partition applies.
 */
function statefulSetProblems(ed: ExtendedDeployment, problems: ProblemList): void {
  const { spec } = ed;
  const stateful = spec.subsetType === 'StatefulSet';
  if (!stateful) {
    if (spec.statefulSet) problems.add(['spec', 'statefulSet'], `needs subsetType StatefulSet (subsetType is ${spec.subsetType})`);
    spec.regions.forEach((region, i) => {
      if (region.overrides?.volumeClaims) problems.add(['spec', 'regions', i, 'overrides', 'volumeClaims'], 'needs subsetType StatefulSet');
    });
    return;
  }
  const type = spec.strategy.updateStrategy.type;
  if (type !== 'ReCreate')
    problems.add(
      ['spec', 'strategy', 'updateStrategy', 'type'],
      `${type} does not apply to StatefulSet regions: the StatefulSet controller replaces pods one at a time (ReCreate, the default)`,
    );
  const claims = new Set((spec.statefulSet?.volumeClaimTemplates ?? []).map((t) => t.metadata.name));
  (spec.statefulSet?.volumeClaimTemplates ?? []).forEach((t, i) => {
    if ((spec.statefulSet?.volumeClaimTemplates ?? []).findIndex((o) => o.metadata.name === t.metadata.name) !== i)
      problems.add(
        ['spec', 'statefulSet', 'volumeClaimTemplates', i, 'metadata', 'name'],
        `claim template ${JSON.stringify(t.metadata.name)} is defined twice`,
      );
  });
  spec.regions.forEach((region, i) => {
    if (region.partition !== undefined)
      problems.add(['spec', 'regions', i, 'partition'], "does not apply to StatefulSet regions: the agent owns the StatefulSet's own partition");
    for (const name of Object.keys(region.overrides?.volumeClaims ?? {})) {
      if (!claims.has(name))
        problems.add(
          ['spec', 'regions', i, 'overrides', 'volumeClaims', name],
          `no volume claim template named ${JSON.stringify(name)} (spec.statefulSet.volumeClaimTemplates: ${[...claims].join(', ') || 'none'})`,
        );
    }
  });
}

/**
 * An `adopt` reference takes pods into a regional ReplicaSet (core/adoption): not into a native Deployment or a
 * StatefulSet, whose controllers own their pods' names and revisions. A workload can be adopted by one region only,
 * and never one of the ExtendedDeployment's own.
 */
function adoptionProblems(ed: ExtendedDeployment, problems: ProblemList): void {
  const { spec } = ed;
  const own = new Set(spec.regions.map((r) => workloadName(ed.metadata.name, r.name)));
  const first = new Map<string, number>();
  spec.regions.forEach((region, i) => {
    if (!region.adopt) return;
    const path = ['spec', 'regions', i, 'adopt'];
    if (workloadKindOf(spec.subsetType) !== 'ReplicaSet')
      problems.add(path, `needs subsetType ReplicaSet (or InplaceSet): a ${spec.subsetType}'s pods belong to its own controller`);
    const source = `${region.adopt.kind}/${region.adopt.name}`;
    if (own.has(region.adopt.name)) problems.add([...path, 'name'], `${source} is a workload of this ExtendedDeployment`);
    const earlier = first.get(source);
    if (earlier !== undefined) problems.add([...path, 'name'], `${source} is adopted by spec.regions[${earlier}] already`);
    else first.set(source, i);
  });
}

function isZero(value: number | string): boolean {
  return typeof value === 'number' ? value === 0 : parsePercent(value) === 0;
}
