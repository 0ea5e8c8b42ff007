import type { RenderedExtendedDeployment } from './render.js';
import { templateUpdateMethod } from './inplace/eligibility.js';
import { renderedTemplate, startFromRender } from './simulate/from-render.js';
import { simulateRollout, type ApprovalRange, type GroupRun } from './simulate/simulate.js';

export type { ApprovalRange, GroupRun } from './simulate/simulate.js';

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
  /** For a rollout with in-place updates on: whether its pods are swapped in place or replaced, and why. */
  readonly update?: 'in-place' | 'replace';
  readonly updateReason?: string;
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
}

/**
 * What `edctl plan --output json` prints. The shape is a contract others read: keep it stable, only add fields.
 * Regions are in declared order. `groups` and `approvals` stay bounded for rollouts of very many groups; `runs` and
 * `approvalRanges` always describe all of them.
 */
export interface Plan {
  readonly extendedDeployments: readonly ExtendedDeploymentPlan[];
}

const UNKNOWN_REVISION = 'previous';

/**
 * The plan of every rendered ExtendedDeployment. Against `before` (the same objects rendered from the base of a
 * change), only what differs rolls; without it, every region rolls from an earlier revision, which shows the
 * groups a full rollout takes. Groups come from the agent's own loop (observe, plan, act) run against a simulated
 * cluster that starts from exactly what Git applies (core/simulate), so the rollout shown is the rollout the agent
 * performs.
 */
export function planOf(rendered: readonly RenderedExtendedDeployment[], before?: readonly RenderedExtendedDeployment[]): Plan {
  return {
    extendedDeployments: rendered.map((ed) => {
      const base = before?.find((b) => b.ref.namespace === ed.ref.namespace && b.ref.name === ed.ref.name);
      const regions = ed.regions.map((r): RegionPlan => {
        const old = before === undefined ? { revision: UNKNOWN_REVISION, replicas: r.replicas } : base?.regions.find((b) => b.name === r.name);
        if (!old) return { name: r.name, replicas: r.replicas, revision: r.revision, change: 'new' };
        const change: RegionChange = old.revision !== r.revision ? 'rollout' : old.replicas !== r.replicas ? 'scale' : 'none';
        const plan: RegionPlan = { name: r.name, replicas: r.replicas, revision: r.revision, change, fromRevision: old.revision, fromReplicas: old.replicas };
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
      return {
        namespace: ed.ref.namespace ?? '',
        name: ed.ref.name ?? '',
        replicas: ed.replicas,
        rolloutRevision: ed.rolloutRevision,
        regions,
        groups: simulation.groups,
        totalGroups: simulation.totalGroups,
        runs: simulation.runs,
        approvals: simulation.approvals,
        approvalRanges: simulation.approvalRanges,
        ...(simulation.stopped && { stopped: simulation.stopped }),
        swapped: simulation.podsSwapped,
        created: simulation.podsCreated,
      };
    }),
  };
}
