import type { RenderedExtendedDeployment } from './render.js';
import { templateUpdateMethod } from './inplace/eligibility.js';
import { simulateRollout } from './rollout/simulate.js';

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
  /** The groups of the rollout the change causes, when every pod becomes ready in time; empty when nothing rolls. */
  readonly groups: readonly GroupPlan[];
  /** Gates the rollout stops at for approval (the group each approval lets start). */
  readonly approvals: readonly number[];
  /** Pods the rollout swaps in place and pods it creates (replacements). */
  readonly swapped: number;
  readonly created: number;
}

/**
 * What `edctl plan --output json` prints. The shape is a contract others read: keep it stable, only add fields.
 * Regions are in declared order.
 */
export interface Plan {
  readonly extendedDeployments: readonly ExtendedDeploymentPlan[];
}

const UNKNOWN_REVISION = 'previous';

/**
 * The plan of every rendered ExtendedDeployment. Against `before` (the same objects rendered from the base of a
 * change), only what differs rolls; without it, every region rolls from an earlier revision, which shows the
 * groups a full rollout takes. Groups come from the planner itself, run against a simulated cluster, so the
 * rollout shown is the rollout the agent performs.
 */
export function planOf(rendered: readonly RenderedExtendedDeployment[], before?: readonly RenderedExtendedDeployment[]): Plan {
  return {
    extendedDeployments: rendered.map((ed) => {
      const base = before?.find((b) => b.ref.namespace === ed.ref.namespace && b.ref.name === ed.ref.name);
      const swappable = new Map<string, Readonly<Record<string, string>>>();
      const regions = ed.regions.map((r): RegionPlan => {
        const old = before === undefined ? { revision: UNKNOWN_REVISION, replicas: r.replicas } : base?.regions.find((b) => b.name === r.name);
        if (!old) return { name: r.name, replicas: r.replicas, revision: r.revision, change: 'new' };
        const change: RegionChange = old.revision !== r.revision ? 'rollout' : old.replicas !== r.replicas ? 'scale' : 'none';
        const plan: RegionPlan = { name: r.name, replicas: r.replicas, revision: r.revision, change, fromRevision: old.revision, fromReplicas: old.replicas };
        const oldTemplate = base?.regions.find((b) => b.name === r.name)?.workload['spec'];
        if (change !== 'rollout' || !ed.inPlace || !oldTemplate) return plan;
        const method = templateUpdateMethod(templateOf(oldTemplate), templateOf(r.workload['spec']));
        if (method.method === 'in-place') swappable.set(r.name, method.images);
        return { ...plan, update: method.method, ...(method.method === 'replace' && { updateReason: method.reason }) };
      });
      const simulation = simulateRollout(
        ed.parsed,
        ed.rolloutRevision,
        regions.map((r) => ({
          name: r.name,
          desired: r.replicas,
          targetRevision: r.revision,
          running: r.fromRevision === undefined ? { [r.revision]: 1 } : { [r.fromRevision]: r.fromReplicas ?? 0 },
          swappable: swappable.get(r.name),
        })),
      );
      return {
        namespace: ed.ref.namespace ?? '',
        name: ed.ref.name ?? '',
        replicas: ed.replicas,
        rolloutRevision: ed.rolloutRevision,
        regions,
        groups: simulation.groups,
        approvals: simulation.approvals,
        swapped: simulation.podsSwapped,
        created: simulation.podsCreated,
      };
    }),
  };
}

function templateOf(workloadSpec: unknown): Parameters<typeof templateUpdateMethod>[0] {
  return ((workloadSpec ?? {}) as { template?: Parameters<typeof templateUpdateMethod>[0] }).template ?? {};
}
