// How a plan reads: the text and markdown of `edctl plan` and `edctl diff`, one ExtendedDeployment or a whole plan.
import {
  type ApprovalRange,
  type ExtendedDeploymentPlan,
  type FieldChange,
  type GroupRun,
  type Plan,
  type RegionPlan,
  type Risk,
  type TrafficPreview,
} from '../../core/plan.js';
import { table } from '../output.js';

/**
 * `rollout`, or `rollout (in-place)` / `rollout (replace: why)` when in-place updates are on; then the old pods a
 * partition keeps, and the workload the region adopts first.
 */
export const changeText = (r: RegionPlan) => {
  const how = r.update === undefined ? r.change : r.update === 'in-place' ? `${r.change} (in-place)` : `${r.change} (replace: ${r.updateReason ?? ''})`;
  const kept = r.partition ? `${how}, keeps ${count(r.partition)} old` : how;
  return r.adopts ? `${kept}, adopts ${r.adopts} first` : kept;
};
export const qualified = (ed: { readonly namespace: string; readonly name: string }) => (ed.namespace ? `${ed.namespace}/${ed.name}` : ed.name);
export const arrow = (from: string | number | undefined, to: string | number) => (from === undefined || from === to ? String(to) : `${from} -> ${to}`);

/** A count as people read it: `1,000,000`. */
const count = (n: number) => n.toLocaleString('en-US');

/** A row of groups: `3`, `3, 4`, or `3–999,998`. */
const groupRange = (from: number, to: number) => (to === from ? count(from) : to === from + 1 ? `${count(from)}, ${count(to)}` : `${count(from)}–${count(to)}`);

/** `2, 3–1,000` for approvals before groups 2 to 1,000. */
const approvalText = (ranges: readonly ApprovalRange[]) => ranges.map((r) => groupRange(r.from, r.to)).join(', ');

/**
 * `2 groups, approval before group 2`; `pods keep their revision, 2 spec changes` when only fields outside the pod
 * template change; `no rollout` when nothing changes.
 */
export function summary(ed: Pick<ExtendedDeploymentPlan, 'totalGroups' | 'approvalRanges' | 'specChanges'>): string {
  const changes = ed.specChanges?.length ?? 0;
  if (ed.totalGroups === 0) return changes === 0 ? 'no rollout' : `pods keep their revision, ${changes} spec ${changes === 1 ? 'change' : 'changes'}`;
  const gates = ed.approvalRanges.length > 0 ? `, approval before group ${approvalText(ed.approvalRanges)}` : '';
  return `${count(ed.totalGroups)} ${ed.totalGroups === 1 ? 'group' : 'groups'}${gates}`;
}

const MAX_VALUE = 120;

/** A value in one line: plain strings as they are, everything else as compact JSON, long values shortened. */
function valueText(value: unknown): string {
  const text = typeof value === 'string' && /^[^\s"]+$/.test(value) ? value : JSON.stringify(value);
  return text.length > MAX_VALUE ? `${text.slice(0, MAX_VALUE - 1)}…` : text;
}

/** `path: a -> b`, `path: + added`, `path: - removed`. */
export function changeLine(c: FieldChange): string {
  if (c.from === undefined) return `${c.path}: + ${valueText(c.to)}`;
  if (c.to === undefined) return `${c.path}: - ${valueText(c.from)}`;
  return `${c.path}: ${valueText(c.from)} -> ${valueText(c.to)}`;
}

/** A risk, and in a fleet's plan the clusters it is found in. */
type PlacedRisk = Risk & { readonly clusters?: readonly string[] };

/** `shop/web`, or in a fleet's plan `shop/web in eu-1, us-1`. */
const riskSubject = (r: PlacedRisk) => (r.clusters ? `${qualified(r)} in ${r.clusters.join(', ')}` : qualified(r));

/** `risks:` and a line per risk, `  shop/web: approval gates removed (...)`; nothing when there are none. */
export function riskLines(risks: readonly PlacedRisk[]): string[] {
  return risks.length === 0 ? [] : ['risks:', ...risks.map((r) => `  ${riskSubject(r)}: ${r.message}`)];
}

/** `rollout stops in group 1 (Degraded): group 1 did not finish within 300s; the rollout stopped`. */
export const stoppedLine = (stopped: NonNullable<ExtendedDeploymentPlan['stopped']>) =>
  `rollout stops in group ${count(stopped.group)} (${stopped.phase}): ${stopped.message}`;

/** Runs of at least this many groups print as one line; shorter ones group by group. */
const COLLAPSED_RUN = 3;

/** `amd64 2/4`: new pods over pods in the region once the group is done. */
/** `amd64 new 2 of 6`: a fraction would read as ready/desired, and its total counts old pods too. */
const pods = (r: { readonly name: string; readonly updated: number; readonly old: number }) =>
  `${r.name} new ${count(r.updated)} of ${count(r.updated + r.old)}`;

/** The groups of a run one by one. */
function groupsOf(run: GroupRun): { group: number; regions: { name: string; updated: number; old: number }[] }[] {
  return Array.from({ length: run.to - run.from + 1 }, (_, k) => ({
    group: run.from + k,
    regions: run.regions.map((r) => ({ name: r.name, updated: r.updated + k * r.stepUpdated, old: r.old + k * r.stepOld })),
  }));
}

/**
 * One line per group, `  group 1: amd64 2/4, arm64 1/2` (new pods over pods per region once it is done), and one per
 * run of groups that each add the same: `  groups 3–999,998: amd64 +1 each (3/1,000,001 → 999,998/1,000,001), arm64 2/2`.
 */
export function groupLines(runs: readonly GroupRun[]): string[] {
  return runs.flatMap((run) => {
    if (run.to - run.from + 1 < COLLAPSED_RUN) return groupsOf(run).map((g) => `  group ${count(g.group)}: ${g.regions.map(pods).join(', ')}`);
    const n = run.to - run.from;
    const parts = run.regions.map((r) => {
      if (r.stepUpdated === 0 && r.stepOld === 0) return pods(r);
      const end = { updated: r.updated + n * r.stepUpdated, old: r.old + n * r.stepOld };
      return `${r.name} ${r.stepUpdated >= 0 ? '+' : ''}${count(r.stepUpdated)} new each (new ${count(r.updated)} of ${count(r.updated + r.old)} → ${count(end.updated)} of ${count(end.updated + end.old)})`;
    });
    return [`  groups ${groupRange(run.from, run.to)}: ${parts.join(', ')}`];
  });
}

/**
 * `traffic (Weighted): new revision's weight after each group: 1: 25%, 2: 50%, 3: 100% (the previous revisions drain 30s
 * at weight 0 before group 3)` and the analysis at each barrier, one line per metric.
 */
export function trafficLines(traffic: TrafficPreview | undefined): string[] {
  if (traffic === undefined || traffic.weights.length === 0) return [];
  const weights = traffic.weights.map((w) => `${count(w.group)}: ${w.percent}%`).join(', ');
  const last = traffic.weights[traffic.weights.length - 1]?.group;
  const drain =
    traffic.drainSeconds === undefined || last === undefined
      ? ''
      : ` (the previous revisions drain ${traffic.drainSeconds}s at weight 0 before group ${count(last)})`;
  const what = traffic.mode === 'Weighted' ? "new revision's weight" : "new revision's share of Ready pods";
  const analysis = traffic.analysis;
  return [
    `traffic (${traffic.mode}): ${what} after each group: ${weights}${drain}`,
    ...(analysis
      ? [
          `analysis before each next group (every ${analysis.intervalSeconds}s over ${analysis.window}, on failure ${analysis.onFailure}):`,
          ...analysis.metrics.map((m) => `  ${m.name} ${m.condition}, ${m.consecutiveSuccesses} in a row, no data: ${m.noData}`),
        ]
      : []),
  ];
}

/** The plan for people: one block per ExtendedDeployment. */
export function planText(plan: Plan): string {
  const risks = riskLines(plan.risks ?? []);
  const lead = risks.length > 0 ? `${risks.join('\n')}\n\n` : '';
  if (plan.extendedDeployments.length === 0) return `${lead}No ExtendedDeployments.\n`;
  return lead + plan.extendedDeployments.map((ed) => [...extendedDeploymentText(ed), ''].join('\n')).join('\n');
}

/**
 * One ExtendedDeployment's block of the text plan: `heading: N replicas, rollout revision R, summary`, its regions,
 * groups, where it stops and its spec changes (a fleet's plan prints one per member under its own heading).
 */
export function extendedDeploymentText(ed: ExtendedDeploymentPlan, heading = `ExtendedDeployment ${qualified(ed)}`): string[] {
  const rows = ed.regions.map((r) => [r.name, changeText(r), arrow(r.fromReplicas, r.replicas), arrow(r.fromRevision, r.revision)]);
  const groups = groupLines(ed.runs);
  return [
    `${heading}: ${ed.replicas} replicas, rollout revision ${ed.rolloutRevision}, ${summary(ed)}`,
    table(['REGION', 'CHANGE', 'REPLICAS', 'REVISION'], rows),
    ...(groups.length > 0 ? ['new pods per region after each group:', ...groups] : []),
    ...trafficLines(ed.traffic),
    ...(ed.stopped ? [stoppedLine(ed.stopped)] : []),
    ...((ed.specChanges ?? []).length > 0 ? ['spec changes:', ...(ed.specChanges ?? []).map((c) => `  ${changeLine(c)}`)] : []),
  ];
}

/**
 * A region's bars in the gantt chart: one per group that moves it, `group 2 (3/4) : 1, 2`, and one per run of groups
 * that each move it alike, `groups 3–999 (+1 each) : 2, 999`.
 */
function ganttBars(runs: readonly GroupRun[], region: string): string[] {
  let before: number | undefined;
  return runs.flatMap((run) => {
    const i = run.regions.findIndex((r) => r.name === region);
    const r = run.regions[i];
    if (!r) return [];
    if (run.to - run.from + 1 >= COLLAPSED_RUN) {
      const moved = r.updated !== before;
      before = r.updated + (run.to - run.from) * r.stepUpdated;
      if (r.stepUpdated !== 0) return [`  groups ${run.from}–${run.to} (${r.stepUpdated >= 0 ? '+' : ''}${r.stepUpdated} each) : ${run.from - 1}, ${run.to}`];
      return moved ? [`  group ${run.from} (${r.updated}/${r.updated + r.old}) : ${run.from - 1}, ${run.from}`] : [];
    }
    return groupsOf(run).flatMap((g) => {
      const x = g.regions[i];
      const moved = x !== undefined && x.updated !== before;
      before = x?.updated;
      return moved ? [`  group ${g.group} (${x.updated}/${x.updated + x.old}) : ${g.group - 1}, ${g.group}`] : [];
    });
  });
}

/** The plan as a pull-request comment: a table and a mermaid gantt chart of the groups per ExtendedDeployment. */
export function planMarkdown(plan: Plan): string {
  const lead = plan.risks === undefined ? '' : `${riskMarkdown(plan.risks)}\n`;
  if (plan.extendedDeployments.length === 0) return `${lead}No ExtendedDeployments.\n`;
  return lead + plan.extendedDeployments.map((ed) => `${extendedDeploymentMarkdown(ed).join('\n')}\n`).join('\n');
}

/** One ExtendedDeployment's section of the markdown plan, under `heading` (a fleet's plan has one per member). */
export function extendedDeploymentMarkdown(ed: ExtendedDeploymentPlan, heading = `### ExtendedDeployment \`${qualified(ed)}\``): string[] {
  const lines = [
    heading,
    '',
    `Rollout \`${ed.rolloutRevision}\`: ${ed.replicas} replicas, ${summary(ed)}.`,
    '',
    '| Region | Change | Replicas | Revision |',
    '|---|---|---|---|',
    ...ed.regions.map((r) => `| ${r.name} | ${changeText(r)} | ${arrow(r.fromReplicas, r.replicas)} | \`${arrow(r.fromRevision, r.revision)}\` |`),
  ];
  if ((ed.specChanges ?? []).length > 0) lines.push('', 'Spec changes:', '', ...(ed.specChanges ?? []).map((c) => `- \`${changeLine(c)}\``));
  if (ed.totalGroups > 0) {
    lines.push('', '```mermaid', 'gantt', `  title ${qualified(ed)}: new pods per region after each group`, '  dateFormat X', '  axisFormat %s');
    for (const region of ed.regions.filter((r) => r.change === 'rollout' || r.change === 'new')) {
      const bars = ganttBars(ed.runs, region.name);
      if (bars.length > 0) lines.push(`  section ${region.name}`, ...bars);
    }
    lines.push('```');
  }
  const traffic = trafficLines(ed.traffic);
  if (traffic.length > 0) lines.push('', '```', ...traffic, '```');
  if (ed.stopped) lines.push('', `**${stoppedLine(ed.stopped)}**`);
  if (ed.approvals.length > 0) {
    lines.push('', `To approve from Git, set \`strategy.approval: {revision: ${ed.rolloutKey}, throughGroup: N}\`; or run \`edctl approve ${ed.name}\`.`);
  }
  return lines;
}

/** The summary a pull-request comment leads with: every risk of the change, or that none was found. */
export function riskMarkdown(risks: readonly PlacedRisk[]): string {
  if (risks.length === 0) return '**Risks:** none found.\n';
  const where = (r: PlacedRisk) => (r.clusters ? ` in ${r.clusters.join(', ')}` : '');
  return ['**Risks:**', '', ...risks.map((r) => `- **\`${qualified(r)}\`**${where(r)}: ${r.message}`), ''].join('\n');
}
