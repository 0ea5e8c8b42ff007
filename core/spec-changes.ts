import { rolloutStrategy, type ExtendedDeployment } from './api/extended-deployment.js';
import { fieldChanges, type FieldChange } from './field-changes.js';
import type { RenderedExtendedDeployment } from './render.js';
import { regionOrderOf } from './rollout/groups.js';

/** The budgets RollingUpdate uses when `rollingUpdate` is left out: the schema's defaults. */
const DEFAULT_BUDGETS = rolloutStrategy.parse({ updateStrategy: { rollingUpdate: {} } }).updateStrategy.rollingUpdate;

/**
 * What a change does to an ExtendedDeployment outside its pod template: strategy (gates, deadlines, modes, budgets,
 * moves), replicas, per-region settings and overrides, the order of the regions, labels and annotations. Both sides
 * are the parsed objects with every default applied, so spelling a default out or leaving it out is no change: also
 * the defaults that depend on other fields (total replicas, region order, RollingUpdate budgets) are filled in.
 *
 * The pod template is left out: each region's rendered template shows what reaches the pods. Region entries
 * (`spec.regions`, `spec.overriders`) are matched by name, not position, with paths at their index in `after`; a
 * region added or removed is left out too (plan and diff list it as a region). When the regions both sides share
 * change order (which decides priority), one change `spec.regions[*].name` lists the names before and after.
 */
export function specChanges(renderedBefore: RenderedExtendedDeployment, renderedAfter: RenderedExtendedDeployment): FieldChange[] {
  const [before, after] = [renderedBefore.parsed, renderedAfter.parsed];
  const metadata = (ed: ExtendedDeployment) => ({ labels: ed.metadata.labels, annotations: ed.metadata.annotations });
  const rest = ({ parsed, replicas }: RenderedExtendedDeployment) => {
    const { template: _template, regions: _regions, overriders: _overriders, strategy, ...spec } = parsed.spec;
    const updateStrategy = { ...strategy.updateStrategy, rollingUpdate: strategy.updateStrategy.rollingUpdate ?? DEFAULT_BUDGETS };
    return { ...spec, replicas, strategy: { ...strategy, regionOrder: regionOrderOf(parsed.spec), updateStrategy } };
  };
  const shared = after.spec.regions.filter((r) => before.spec.regions.some((b) => b.name === r.name)).map((r) => r.name);
  const sharedBefore = before.spec.regions.filter((r) => shared.includes(r.name)).map((r) => r.name);
  const order: FieldChange[] =
    sharedBefore.join() === shared.join()
      ? []
      : [{ path: 'spec.regions[*].name', from: before.spec.regions.map((r) => r.name), to: after.spec.regions.map((r) => r.name) }];
  const regions = after.spec.regions.flatMap((region, i) => {
    const old = before.spec.regions.find((b) => b.name === region.name);
    return old ? fieldChanges(old, region, ['spec', 'regions', i]) : [];
  });
  const patches = shared.flatMap((name) => {
    const i = (after.spec.overriders ?? []).findIndex((o) => o.name === name);
    const j = (before.spec.overriders ?? []).findIndex((o) => o.name === name);
    if (i < 0 && j < 0) return [];
    if (i < 0) return [{ path: `spec.overriders[${j}]`, from: before.spec.overriders?.[j] }];
    if (j < 0) return [{ path: `spec.overriders[${i}]`, to: after.spec.overriders?.[i] }];
    return fieldChanges(before.spec.overriders?.[j]?.overriders, after.spec.overriders?.[i]?.overriders, ['spec', 'overriders', i, 'overriders']);
  });
  return [
    ...fieldChanges(metadata(before), metadata(after), ['metadata']),
    ...fieldChanges(rest(renderedBefore), rest(renderedAfter), ['spec']),
    ...order,
    ...regions,
    ...patches,
  ];
}
