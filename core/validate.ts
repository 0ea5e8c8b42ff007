import { parsePercent } from './api/common.js';
import type { DeployRegion } from './api/deploy-region.js';
import type { ExtendedDeployment } from './api/extended-deployment.js';
import { regionsMayOverlap } from './placement.js';
import type { ProblemList } from './problems.js';
import { isEmptySelector } from './selector.js';

/** Whether pods of this ExtendedDeployment may be updated in place (upstream InplaceSet, or InPlaceIfPossible). */
export function inPlaceEnabled(ed: ExtendedDeployment): boolean {
  return ed.spec.subsetType === 'InplaceSet' || ed.spec.strategy.updateStrategy.type === 'InPlaceIfPossible';
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

  const firstIndex = new Map<string, number>();
  spec.regions.forEach((region, i) => {
    const first = firstIndex.get(region.name);
    if (first !== undefined) {
      problems.add(['spec', 'regions', i, 'name'], `region ${JSON.stringify(region.name)} is listed twice (first at spec.regions[${first}])`);
      return;
    }
    firstIndex.set(region.name, i);
    if (invalidRegions.has(region.name)) {
      problems.add(['spec', 'regions', i, 'name'], `DeployRegion ${JSON.stringify(region.name)} is invalid (see its own problems)`);
    } else if (!regions.has(region.name)) {
      const known = [...regions.keys()].sort().join(', ') || 'none';
      problems.add(['spec', 'regions', i, 'name'], `DeployRegion ${JSON.stringify(region.name)} not found (known: ${known})`);
    }
  });

  const used = [...firstIndex.entries()].filter(([name]) => regions.has(name));
  used.forEach(([name, i], k) => {
    for (const [other] of used.slice(0, k)) {
      const a = regions.get(other)?.spec.matchLabels ?? {};
      const b = regions.get(name)?.spec.matchLabels ?? {};
      if (regionsMayOverlap(a, b)) {
        problems.add(
          ['spec', 'regions', i, 'name'],
          `DeployRegion ${JSON.stringify(name)} may select the same nodes as ${JSON.stringify(other)}: no label key has different values in both, so a node could belong to two regions`,
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
    if (!firstIndex.has(entry.name)) problems.add(['spec', 'overriders', i, 'name'], `${JSON.stringify(entry.name)} is not a region of this ExtendedDeployment`);
  });

  if (isEmptySelector(spec.selector)) problems.add(['spec', 'selector'], 'must select something: set matchLabels or matchExpressions');

  const seen = new Set<string>();
  const podSpec = spec.template.spec;
  [...podSpec.containers.map((c, i) => ['containers', i, c.name] as const), ...(podSpec.initContainers ?? []).map((c, i) => ['initContainers', i, c.name] as const)].forEach(
    ([list, i, name]) => {
      if (seen.has(name)) problems.add(['spec', 'template', 'spec', list, i, 'name'], `container name ${JSON.stringify(name)} is used twice`);
      seen.add(name);
    },
  );
  if (podSpec.restartPolicy !== undefined && podSpec.restartPolicy !== 'Always') {
    problems.add(['spec', 'template', 'spec', 'restartPolicy'], `must be Always for a long-running workload, not ${JSON.stringify(podSpec.restartPolicy)}`);
  }

  const strategy = spec.strategy;
  if (spec.subsetType === 'Deployment' && strategy.updateStrategy.type === 'InPlaceIfPossible') {
    problems.add(['spec', 'strategy', 'updateStrategy', 'type'], 'InPlaceIfPossible needs subsetType ReplicaSet (or InplaceSet); native Deployments replace pods');
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

function isZero(value: number | string): boolean {
  return typeof value === 'number' ? value === 0 : parsePercent(value) === 0;
}
