import type { RegionPlan } from './plan.js';
import type { RenderedExtendedDeployment } from './render.js';
import { kindBudgets } from './rollout/budgets.js';
import { progressDeadlineMs } from './rollout/gates.js';
import { sameObject } from './same-object.js';

/** What makes a change worth a second look in review. */
export type RiskKind =
  | 'approval-gates-removed'
  | 'approved-in-change'
  | 'pause-removed'
  | 'all-pods-replaced'
  | 'region-removed'
  | 'extended-deployment-removed'
  | 'deadline-shortened'
  | 'unavailable-raised'
  | 'immutable-field-changed'
  | 'workload-adopted';

/** One risk of a change, for the summary that leads a review. */
export interface Risk {
  readonly kind: RiskKind;
  /** The ExtendedDeployment it concerns. */
  readonly namespace: string;
  readonly name: string;
  /** One sentence for people, naming the fields and values. */
  readonly message: string;
}

/** A risk before it is tied to its ExtendedDeployment. */
type Finding = Pick<Risk, 'kind' | 'message'>;

const pods = (n: number) => `${n} ${n === 1 ? 'pod' : 'pods'}`;

/**
 * Risks of a strategy change: gates removed or approved by the change itself (strategy.approval naming the rollout
 * it starts), a pause removed, a deadline shortened, and more pods unavailable at once.
 */
function strategyRisks(before: RenderedExtendedDeployment, after: RenderedExtendedDeployment): Finding[] {
  const s0 = before.parsed.spec.strategy;
  const s1 = after.parsed.spec.strategy;
  const found: Finding[] = [];
  if (s0.needWaitingForConfirm && !s1.needWaitingForConfirm) {
    found.push({
      kind: 'approval-gates-removed',
      message: 'approval gates removed (strategy.needWaitingForConfirm true -> false): rollouts no longer stop between groups',
    });
  } else if (s0.needWaitingForConfirm && s1.needWaitingForConfirm && !s0.needFirstConfirm && s1.needFirstConfirm) {
    found.push({
      kind: 'approval-gates-removed',
      message: 'approval gates removed after the first (strategy.needFirstConfirm false -> true): only the first gate of a rollout stops',
    });
  }
  const approval = s1.approval;
  const approvedBefore = s0.approval?.revision === approval?.revision ? (s0.approval?.throughGroup ?? 0) : 0;
  if (s1.needWaitingForConfirm && approval?.revision === after.rolloutRevision && approval.throughGroup > approvedBefore) {
    found.push({
      kind: 'approved-in-change',
      message: `this change approves its own rollout through group ${approval.throughGroup} (strategy.approval): those groups start without a stop`,
    });
  }
  if (s0.pause && !s1.pause) found.push({ kind: 'pause-removed', message: 'pause removed (strategy.pause true -> false): a rollout it held continues' });
  const [d0, d1] = [progressDeadlineMs(s0) / 1000, progressDeadlineMs(s1) / 1000];
  if (d1 < d0) {
    found.push({
      kind: 'deadline-shortened',
      message: `progress deadline shortened from ${d0}s to ${d1}s (strategy.syncWaitTimeout ${s0.syncWaitTimeout} -> ${s1.syncWaitTimeout}): a slower group makes the rollout Degraded`,
    });
  }
  const raised = after.regions.flatMap((r) => {
    if (!before.regions.some((b) => b.name === r.name)) return [];
    const [u0, u1] = [kindBudgets(before.parsed.spec, r.replicas).maxUnavailable, kindBudgets(after.parsed.spec, r.replicas).maxUnavailable];
    return u1 > u0 ? [`${r.name} ${u0} -> ${u1}`] : [];
  });
  if (raised.length > 0) {
    found.push({
      kind: 'unavailable-raised',
      message: `more pods may be unavailable at once during a rollout (per region: ${raised.join(', ')}; see strategy.updateStrategy, upgradeMode, batchSize)`,
    });
  }
  return found;
}

/** StatefulSet spec fields Kubernetes refuses to update (ValidateStatefulSetUpdate) that the render writes. */
const IMMUTABLE_STATEFULSET_FIELDS = ['serviceName', 'podManagementPolicy', 'volumeClaimTemplates'] as const;

/**
 * Changes to a regional StatefulSet that the API server refuses on the existing object: the GitOps tool's apply fails
 * (and so does every later sync) until the StatefulSet is deleted with its pods and claims left in place.
 */
function immutableFieldRisks(before: RenderedExtendedDeployment, after: RenderedExtendedDeployment): Finding[] {
  return after.regions.flatMap((r) => {
    const was = before.regions.find((b) => b.name === r.name)?.workload;
    if (r.workload['kind'] !== 'StatefulSet' || was?.['kind'] !== 'StatefulSet') return [];
    const [spec0, spec1] = [was['spec'] as Record<string, unknown>, r.workload['spec'] as Record<string, unknown>];
    const changed = IMMUTABLE_STATEFULSET_FIELDS.filter((f) => JSON.stringify(spec0[f]) !== JSON.stringify(spec1[f]));
    if (changed.length === 0) return [];
    const name = (r.workload['metadata'] as { name?: string }).name ?? '';
    return [
      {
        kind: 'immutable-field-changed',
        message: `region ${r.name}: ${changed.map((f) => `spec.${f}`).join(', ')} of StatefulSet ${name} change, which Kubernetes refuses to update: every sync fails until the StatefulSet is deleted with --cascade=orphan (its pods and claims stay)`,
      },
    ];
  });
}

/**
 * Regions that start adopting a workload's pods (core/adoption): new or changed `adopt` references, also on an
 * ExtendedDeployment the change adds (the migration's pull request), since the agent then moves pods no render shows.
 */
function adoptionRisks(before: RenderedExtendedDeployment | undefined, after: RenderedExtendedDeployment): Finding[] {
  return after.parsed.spec.regions.flatMap((r) => {
    if (!r.adopt) return [];
    const was = before?.parsed.spec.regions.find((b) => b.name === r.name)?.adopt;
    if (was?.kind === r.adopt.kind && was.name === r.adopt.name) return [];
    const source = `${r.adopt.kind} ${r.adopt.name}`;
    return [
      {
        kind: 'workload-adopted',
        message: `region ${r.name} takes over the running pods of ${source} (adopt): the agent moves them without a restart and scales ${source} down to 0; delete it in Git once the adoption is done`,
      },
    ];
  });
}

/**
 * The risks of a change from `before` to `after` (both rendered from the same paths), with `regions` the plan of each
 * ExtendedDeployment of `after` in the same order: approval gates or a pause removed, the change approving its own
 * rollout, a progress deadline shortened, more pods unavailable at once, a StatefulSet field Kubernetes will not update,
 * every running pod replaced, a region or an ExtendedDeployment removed with its pods, a workload's pods adopted (also
 * by an ExtendedDeployment the change adds). ExtendedDeployments of `after` come first, in order, then those only in
 * `before`.
 */
export function risksOf(
  after: readonly RenderedExtendedDeployment[],
  before: readonly RenderedExtendedDeployment[],
  regions: readonly (readonly Pick<RegionPlan, 'name' | 'change' | 'fromReplicas' | 'update'>[])[],
): Risk[] {
  const changed = after.flatMap((ed, i) => {
    const base = before.find((b) => sameObject(b, ed));
    const tied = (f: Finding): Risk => ({ ...f, namespace: ed.ref.namespace ?? '', name: ed.ref.name ?? '' });
    if (!base) return adoptionRisks(undefined, ed).map(tied);
    const found = [...strategyRisks(base, ed), ...immutableFieldRisks(base, ed), ...adoptionRisks(base, ed)];
    const running = (regions[i] ?? []).filter((r) => (r.fromReplicas ?? 0) > 0);
    if (running.length > 0 && running.every((r) => r.change === 'rollout' && r.update !== 'in-place')) {
      const total = running.reduce((n, r) => n + (r.fromReplicas ?? 0), 0);
      found.push({
        kind: 'all-pods-replaced',
        message: `every pod is replaced: all ${pods(total)} in ${running.map((r) => r.name).join(', ')} get a new pod template`,
      });
    }
    for (const r of base.regions) {
      if (r.replicas > 0 && !ed.regions.some((x) => x.name === r.name))
        found.push({ kind: 'region-removed', message: `region ${r.name} is removed with its ${pods(r.replicas)}` });
    }
    return found.map(tied);
  });
  const removed = before
    .filter((b) => b.replicas > 0 && !after.some((a) => sameObject(a, b)))
    .map((b): Risk => ({
      kind: 'extended-deployment-removed',
      namespace: b.ref.namespace ?? '',
      name: b.ref.name ?? '',
      message: `removed with its ${pods(b.replicas)}`,
    }));
  return [...changed, ...removed];
}
