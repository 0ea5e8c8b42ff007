import type { ExtendedDeployment, FleetStrategy, RegionOverrides } from '../api/extended-deployment.js';
import { applyTypedOverrides, cloneJson, type JsonObject } from '../overrides.js';
import type { FieldPath, ObjectRef, Problem } from '../problems.js';
import type { MemberShare } from './split.js';

/** A fleet ExtendedDeployment as one member cluster gets it, and where its entries were in the object as written. */
export interface MemberObject {
  /** The ExtendedDeployment for this cluster: its share, its regions, no spec.clusters. */
  readonly object: JsonObject;
  /** For each entry of its spec.regions, the index of the same entry as written. */
  readonly regions: readonly number[];
  /** For each entry of its spec.overriders, the index of the same entry as written. */
  readonly overriders: readonly number[];
  /** Problems of the cluster's overrides. */
  readonly problems: readonly Problem[];
}

/**
 * The ExtendedDeployment `raw` as member `member` gets it: spec.replicas is the member's share (kept as written when
 * the split failed, so that the render still finds every other problem), spec.regions and spec.overriders hold only
 * the regions the cluster has, spec.clusters is gone, the cluster's overrides are applied to the pod template (so they
 * come before each region's own, and the agent, which renders the object again in the cluster, gets the same
 * workloads), and spec.strategy.fleet is written out with its defaults and waves, which the member cannot work out
 * without spec.clusters. `ed` is the parsed object, absent when it does not parse: then only the lists are cut.
 */
export function memberObject(
  raw: unknown,
  ed: ExtendedDeployment | undefined,
  member: MemberShare,
  strategy: FleetStrategy | undefined,
  object: ObjectRef,
): MemberObject {
  const out = cloneJson(raw) as JsonObject & { spec: JsonObject };
  const spec = out.spec;
  delete spec['clusters'];
  // Written by the render once every member rendered; one in Git is a problem of its own (renderFleet).
  delete spec['fleet'];
  if (member.replicas !== undefined) spec['replicas'] = member.replicas;
  const regions = Array.isArray(spec['regions']) ? (spec['regions'] as unknown[]) : [];
  spec['regions'] = member.regions.map((i) => regions[i]);
  const kept = new Set(member.regions.map((i) => (regions[i] as { name?: unknown } | undefined)?.name));
  const overriders: number[] = [];
  if (Array.isArray(spec['overriders'])) {
    const all = spec['overriders'] as unknown[];
    all.forEach((entry, i) => {
      if (kept.has((entry as { name?: unknown } | null)?.name)) overriders.push(i);
    });
    if (overriders.length > 0) spec['overriders'] = overriders.map((i) => all[i]);
    else delete spec['overriders'];
  }
  const problems: Problem[] = [];
  const overrides = ed?.spec.clusters?.[member.index]?.overrides;
  if (ed && overrides) {
    const at: FieldPath = ['spec', 'clusters', member.index, 'overrides'];
    const typed = applyTypedOverrides(ed.spec.template, overrides, at);
    spec['template'] = typed.template;
    problems.push(...typed.problems.map((p) => ({ object, ...p })), ...overrideClaims(spec, overrides, at, object));
  }
  if (strategy) spec['strategy'] = { ...(spec['strategy'] as JsonObject | undefined), fleet: strategy };
  return { object: out, regions: member.regions, overriders, problems };
}

/**
 * A cluster's claim overrides, applied to the claim templates themselves: they are not part of the pod template, and
 * each region's own (applied to its StatefulSet by the render) still comes after them.
 */
function overrideClaims(spec: JsonObject, overrides: RegionOverrides, at: FieldPath, object: ObjectRef): Problem[] {
  const templates = ((spec['statefulSet'] as JsonObject | undefined)?.['volumeClaimTemplates'] ?? []) as JsonObject[];
  return Object.entries(overrides.volumeClaims ?? {}).flatMap(([name, claim]): Problem[] => {
    const template = templates.find((t) => (t['metadata'] as { name?: unknown } | undefined)?.name === name);
    if (!template)
      return [
        { object, path: [...at, 'volumeClaims', name], message: `no claim template named ${JSON.stringify(name)} in spec.statefulSet.volumeClaimTemplates` },
      ];
    const claimSpec = (template['spec'] ??= {}) as JsonObject;
    if (claim.storageClassName !== undefined) claimSpec['storageClassName'] = claim.storageClassName;
    if (claim.storage !== undefined) {
      const resources = (claimSpec['resources'] ??= {}) as JsonObject;
      resources['requests'] = { ...(resources['requests'] as JsonObject | undefined), storage: claim.storage };
    }
    return [];
  });
}
