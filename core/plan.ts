import type { FieldChange } from './field-changes.js';
import type { RenderedExtendedDeployment } from './render.js';
import { partitionPods } from './rollout/partition.js';
import { sourceName } from './adoption/adoption.js';
import { risksOf, type Risk } from './risks.js';
import { sameObject } from './same-object.js';
import { specChanges } from './spec-changes.js';
import { templateUpdateMethod } from './inplace/eligibility.js';
import { renderedTemplate, startFromRender } from './simulate/from-render.js';
import { simulateRollout, type ApprovalRange, type GroupRun } from './simulate/simulate.js';
import { trafficPreview, type TrafficPreview } from './traffic/preview.js';

export type { ApprovalRange, GroupRun } from './simulate/simulate.js';
export type { FieldChange } from './field-changes.js';
export type { Risk, RiskKind } from './risks.js';
export type { TrafficPreview } from './traffic/preview.js';

/** What a change does to a region. */
export type RegionChange = 'rollout' | 'scale' | 'none' | 'new';

/** One region of a plan: where it is headed and what gets it there. */
export interface RegionPlan {
  readonly name: string;
  readonly replicas: number;
  readonly revision: string;
  /** rollout: its pods change revision; scale: only the count changes; none: nothing; new: the region is added. */
  readonly change: RegionChange;
  /** The revision its pods run before the change (absent for a new region). */
  readonly fromRevision?: string;
  /** Its replicas before the change (absent for a new region). */
  readonly fromReplicas?: number;
  /** Old pods its partition keeps when a rollout stops (spec.regions[].partition of its replicas); absent without one. */
  readonly partition?: number;
  /** For a rollout with in-place updates on: whether its pods are swapped in place or replaced, and why. */
  readonly update?: 'in-place' | 'replace';
  readonly updateReason?: string;
  /**
   * The workload whose running pods the region takes over first (`adopt`, as Kind/name), where the change adds it or
   * there is no base; the groups do not show the adoption (core/adoption: the agent moves pods, paced by no group).
   */
  readonly adopts?: string;
}

/** New-revision pods per region once a group is done. */
export interface GroupPlan {
  readonly group: number;
  readonly regions: readonly { readonly name: string; readonly updated: number; readonly old: number }[];
}

/** The plan of one ExtendedDeployment. */
export interface ExtendedDeploymentPlan {
  readonly namespace: string;
  readonly name: string;
  readonly replicas: number;
  readonly rolloutRevision: string;
  /**
   * What approvals and aborts of this rollout name (status.revision): the rollout revision, or `<revision>+<n>` when
   * the change only grows regions from zero on a render already rolled out (growth.ts).
   */
  readonly rolloutKey: string;
  readonly regions: readonly RegionPlan[];
  /**
   * The groups of the rollout the change causes, when every pod becomes ready in time; empty when nothing rolls. Every
   * group when there are at most 1,000; beyond, the first and last group of each run (`runs` has them all).
   */
  readonly groups: readonly GroupPlan[];
  /** How many groups the rollout takes. */
  readonly totalGroups: number;
  /** Every group, as runs of groups in a row that each add the same new pods per region (a group alone is a run of one). */
  readonly runs: readonly GroupRun[];
  /** Gates the rollout stops at for approval (the group each approval lets start), bounded like `groups`. */
  readonly approvals: readonly number[];
  /** Every approval, as ranges of groups in a row. */
  readonly approvalRanges: readonly ApprovalRange[];
  /**
   * Where the rollout stops short of Healthy even though every pod becomes ready in time: held by strategy.pause, or
   * Degraded because a group takes longer than its progress deadline (strategy.syncWaitTimeout). Absent otherwise.
   */
  readonly stopped?: { readonly group: number; readonly phase: 'Paused' | 'Degraded'; readonly message: string };
  /** Pods the rollout swaps in place and pods it creates (replacements). */
  readonly swapped: number;
  readonly created: number;
  /**
   * Planned against a base that has this ExtendedDeployment: what changes outside the pod template (strategy, replicas,
   * per-region settings and overrides, region order, labels), on the parsed objects with defaults applied (specChanges).
   */
  readonly specChanges?: readonly FieldChange[];
  /** With spec.strategy.traffic: the new revision's traffic after each group, and the analysis at the barriers. */
  readonly traffic?: TrafficPreview;
}

/**
 * What `edctl plan --output json` prints. The shape is a contract others read: keep it stable, only add fields.
 * Regions are in declared order. `groups` and `approvals` stay bounded for rollouts of very many groups; `runs` and
 * `approvalRanges` always describe all of them.
 */
export interface Plan {
  readonly extendedDeployments: readonly ExtendedDeploymentPlan[];
  /** Planned against a base: what deserves a second look in review (risksOf), including ExtendedDeployments the change removes. */
  readonly risks?: readonly Risk[];
}

const UNKNOWN_REVISION = 'previous';

/**
 * The plan of every rendered ExtendedDeployment. Against `before` (the same objects rendered from the base of a
 * change), only what differs rolls; without it, every region rolls from an earlier revision, which shows the
 * groups a full rollout takes. Groups come from the agent's own loop (observe, plan, act) run against a simulated
 * cluster that starts from exactly what Git applies (core/simulate), so the rollout shown is the rollout the agent
 * performs. Against `before`, each ExtendedDeployment it has also gets what changes outside the pod template
 * (specChanges), and the plan gets the change's risks (risksOf).
 */
export function planOf(rendered: readonly RenderedExtendedDeployment[], before?: readonly RenderedExtendedDeployment[]): Plan {
  return timedPlanOf(rendered, before).plan;
}

/** A plan and, per ExtendedDeployment (in the plan's order), how long its simulated rollout takes. */
export interface TimedPlan {
  readonly plan: Plan;
  /** Simulation.durationMs of each ExtendedDeployment: kept out of Plan, whose JSON is a contract, for a fleet's timeline. */
  readonly durationsMs: readonly number[];
}

/** planOf, with each simulated rollout's duration (a fleet's plan times its waves with them). */
export function timedPlanOf(rendered: readonly RenderedExtendedDeployment[], before?: readonly RenderedExtendedDeployment[]): TimedPlan {
  const durationsMs: number[] = [];
  const result: Plan = {
    extendedDeployments: rendered.map((ed): ExtendedDeploymentPlan => {
      const base = before?.find((b) => sameObject(b, ed));
      const regions = ed.regions.map((r): RegionPlan => {
        const old = before === undefined ? { revision: UNKNOWN_REVISION, replicas: r.replicas } : base?.regions.find((b) => b.name === r.name);
        const entry = ed.parsed.spec.regions.find((x) => x.name === r.name);
        const adopted = base?.parsed.spec.regions.find((x) => x.name === r.name)?.adopt;
        const adopts = entry?.adopt && (!adopted || sourceName(adopted) !== sourceName(entry.adopt)) ? { adopts: sourceName(entry.adopt) } : {};
        if (!old) return { name: r.name, replicas: r.replicas, revision: r.revision, change: 'new', ...adopts };
        const change: RegionChange = old.revision !== r.revision ? 'rollout' : old.replicas !== r.replicas ? 'scale' : 'none';
        const plan: RegionPlan = {
          name: r.name,
          replicas: r.replicas,
          revision: r.revision,
          change,
          fromRevision: old.revision,
          fromReplicas: old.replicas,
          ...(change === 'rollout' && entry?.partition !== undefined && { partition: partitionPods(entry.partition, r.replicas) }),
          ...adopts,
        };
        const oldTemplate = base?.regions.find((b) => b.name === r.name)?.workload;
        if (change !== 'rollout' || !ed.inPlace || !oldTemplate) return plan;
        const method = templateUpdateMethod(renderedTemplate(oldTemplate) ?? {}, renderedTemplate(r.workload) ?? {});
        return { ...plan, update: method.method, ...(method.method === 'replace' && { updateReason: method.reason }) };
      });
      const start = startFromRender(
        ed,
        (name) => {
          const r = regions.find((x) => x.name === name);
          return r?.fromRevision === undefined
            ? { replicas: undefined, running: {} }
            : { replicas: r.fromReplicas, running: { [r.fromRevision]: r.fromReplicas ?? 0 } };
        },
        base,
      );
      const simulation = simulateRollout(start);
      durationsMs.push(simulation.durationMs);
      const traffic = trafficPreview(ed.parsed.spec.strategy.traffic, simulation.groups, simulation.totalGroups);
      return {
        namespace: ed.ref.namespace ?? '',
        name: ed.ref.name ?? '',
        replicas: ed.replicas,
        rolloutRevision: ed.rolloutRevision,
        rolloutKey: simulation.finalStatus.revision ?? ed.rolloutRevision,
        regions,
        groups: simulation.groups,
        totalGroups: simulation.totalGroups,
        runs: simulation.runs,
        approvals: simulation.approvals,
        approvalRanges: simulation.approvalRanges,
        ...(simulation.stopped && { stopped: simulation.stopped }),
        swapped: simulation.podsSwapped,
        created: simulation.podsCreated,
        ...(base && { specChanges: specChanges(base, ed) }),
        ...(traffic && { traffic }),
      };
    }),
  };
  if (!before) return { plan: result, durationsMs };
  const risks = risksOf(
    rendered,
    before,
    result.extendedDeployments.map((ed) => ed.regions),
  );
  return { plan: { ...result, risks }, durationsMs };
}
