// `edctl plan` of a render with Cluster objects: each ExtendedDeployment over its clusters (replicas per cluster and
// region, waves, release), then each member's plan as `edctl plan` prints one cluster's, wave by wave.
import type { ExtendedDeploymentPlan } from '../../core/plan.js';
import type { FleetExtendedDeploymentPlan, FleetPlan, MemberPlan, WavePlan } from '../../core/fleet/plan.js';
import { table } from '../output.js';
import { arrow, extendedDeploymentMarkdown, extendedDeploymentText, qualified, riskLines, riskMarkdown, summary } from './plan-view.js';

/** The member's plan of `ed` in its cluster's plan. */
function memberPlan(plan: FleetPlan, ed: FleetExtendedDeploymentPlan, cluster: string): ExtendedDeploymentPlan | undefined {
  return plan.clusters.find((c) => c.name === cluster)?.extendedDeployments.find((x) => x.namespace === ed.namespace && x.name === ed.name);
}

/** `Fleet prod: clusters canary-1, eu-1, us-1`, or `Clusters: ...` without a Fleet object. */
function fleetHeading(plan: FleetPlan): string {
  const names = plan.clusters.filter((c) => !c.removed).map((c) => c.name);
  return plan.fleet === undefined ? `Clusters: ${names.join(', ')}` : `Fleet ${plan.fleet}: clusters ${names.join(', ')}`;
}

/** `24 replicas over 3 clusters, release 3f9a1c0d2e -> 7b41c2aa90`; outside a fleet, that every cluster rolls at once. */
export function fleetSummary(ed: FleetExtendedDeploymentPlan, code = (text: string) => text): string {
  const over = `${arrow(ed.fromReplicas, ed.replicas)} replicas over ${ed.clusters.length} ${ed.clusters.length === 1 ? 'cluster' : 'clusters'}`;
  if (ed.release === undefined) return `${over}, not in a fleet (no spec.clusters): every cluster at once`;
  return `${over}, release ${code(arrow(ed.fromRelease, ed.release))}`;
}

/** `about 5s` of a simulated rollout. */
const about = (seconds: number) => `about ${seconds}s`;

/**
 * The cluster × region table of an ExtendedDeployment: per member its wave, replicas, replicas per region (`-` where
 * the cluster has no such region) and its rollout; `before -> after` against a base (a member new to it from 0).
 */
export function memberRows(plan: FleetPlan, ed: FleetExtendedDeploymentPlan): string[][] {
  const based = plan.risks !== undefined;
  const from = (n: number | undefined) => n ?? (based ? 0 : undefined);
  return ed.clusters.map((m) => {
    const own = memberPlan(plan, ed, m.cluster);
    const rollout = own ? summary(own) : '';
    return [
      m.cluster,
      m.wave === undefined ? '-' : arrow(m.fromWave, m.wave),
      arrow(from(m.fromReplicas), m.replicas),
      ...ed.regions.map((name) => {
        const r = m.regions.find((x) => x.name === name);
        return r ? arrow(from(r.fromReplicas), r.replicas) : '-';
      }),
      m.totalGroups > 0 ? `${rollout}, ${about(m.rolloutSeconds)}` : rollout,
    ];
  });
}

/**
 * When a wave starts: at once (wave 0), or once every cluster of the earlier waves has been Healthy at the release
 * for the soak, at about N s when every rollout goes as simulated; with the approval approveWaves asks for; never
 * when a rollout of an earlier wave stops short of Healthy.
 */
export function waveStart(ed: FleetExtendedDeploymentPlan, wave: WavePlan): string {
  const approval = wave.approval ? ' and an approval (approveWaves)' : '';
  // The gate holds only the first group of a rollout: counts apply at once.
  if (inWave(ed, wave).every((m) => m.totalGroups === 0)) return 'no rollout to hold back: counts apply at once';
  if (wave.after.length === 0) return wave.approval ? 'starts once approved (approveWaves)' : 'starts at once';
  const when = `once ${wave.after.join(', ')} ${wave.after.length === 1 ? 'has' : 'have'} been Healthy at release ${ed.release ?? ''} for ${wave.soakSeconds}s (minSuccessSeconds)${approval}`;
  if (wave.startSeconds !== undefined) return `starts ${when}: at ${about(wave.startSeconds)}`;
  const stops = ed.clusters.filter((m) => wave.after.includes(m.cluster) && m.healthySeconds === undefined).map((m) => m.cluster);
  return `never starts: the rollout of ${stops.join(', ')} stops short of Healthy (it would start ${when})`;
}

/** Members in wave order (outside a fleet, the one wave of every cluster). */
const inWave = (ed: FleetExtendedDeploymentPlan, wave: WavePlan): MemberPlan[] => wave.clusters.flatMap((c) => ed.clusters.filter((m) => m.cluster === c));

/** The fleet plan for people: per ExtendedDeployment, its clusters × regions, then each wave and its members' plans. */
export function fleetPlanText(plan: FleetPlan): string {
  const risks = riskLines(plan.risks ?? []);
  const lead = risks.length > 0 ? `${risks.join('\n')}\n\n` : '';
  const blocks = plan.extendedDeployments.map((ed) => {
    const lines = [
      `ExtendedDeployment ${qualified(ed)}: ${fleetSummary(ed)}`,
      table(['CLUSTER', 'WAVE', 'REPLICAS', ...ed.regions, 'ROLLOUT'], memberRows(plan, ed)),
    ];
    for (const wave of ed.waves) {
      const members = inWave(ed, wave);
      if (ed.release !== undefined) lines.push(`wave ${wave.wave}: ${wave.clusters.join(', ')}, ${waveStart(ed, wave)}`);
      for (const m of members) {
        const own = memberPlan(plan, ed, m.cluster);
        if (!own) continue;
        // The member's heading under its wave, its block under its heading.
        const [first = '', ...rest] = extendedDeploymentText(own, `cluster ${m.cluster}`).flatMap((l) => l.split('\n'));
        lines.push(`  ${first}`, ...rest.map((l) => `    ${l}`.trimEnd()));
      }
    }
    return [...lines, ''].join('\n');
  });
  const removed = plan.clusters.filter((c) => c.removed).map((c) => `cluster ${c.name}: no longer in the render, nothing of it is planned\n`);
  const body = blocks.length > 0 ? blocks.join('\n') : 'No ExtendedDeployments.\n';
  return `${lead}${fleetHeading(plan)}\n\n${body}${removed.length > 0 ? `\n${removed.join('')}` : ''}`;
}

/**
 * The waves as a mermaid gantt chart, in seconds after the sync: per wave a section, per member a bar for its
 * simulated rollout and, where a later wave waits for it, one for its soak. A member without groups has no rollout
 * bar (its counts apply at once); one that never starts, no bar.
 */
export function fleetGantt(ed: FleetExtendedDeploymentPlan): string[] {
  const last = ed.waves.length - 1;
  const lines = [
    '```mermaid',
    'gantt',
    `  title ${qualified(ed)}: waves of release ${ed.release ?? ''}, seconds after the sync`,
    '  dateFormat X',
    '  axisFormat %s',
  ];
  for (const wave of ed.waves) {
    lines.push(`  section wave ${wave.wave}${wave.approval ? ' (approval)' : ''}`);
    for (const m of inWave(ed, wave)) {
      if (m.startSeconds !== undefined && m.totalGroups > 0) lines.push(`  ${m.cluster} rollout : ${m.startSeconds}, ${m.startSeconds + m.rolloutSeconds}`);
      if (m.healthySeconds !== undefined && wave.wave < last) lines.push(`  ${m.cluster} soak : ${m.healthySeconds}, ${m.healthySeconds + wave.soakSeconds}`);
    }
  }
  lines.push('```');
  return lines;
}

/** The fleet plan as a pull-request comment: per ExtendedDeployment, the clusters table, the waves and their gantt chart, each member's plan. */
export function fleetPlanMarkdown(plan: FleetPlan): string {
  const lead = plan.risks === undefined ? '' : `${riskMarkdown(plan.risks)}\n`;
  const heading = plan.fleet === undefined ? '## Clusters' : `## Fleet \`${plan.fleet}\``;
  const names = plan.clusters.filter((c) => !c.removed).map((c) => c.name);
  const sections = plan.extendedDeployments.map((ed) => {
    const head = ['Cluster', 'Wave', 'Replicas', ...ed.regions, 'Rollout'];
    const lines = [
      `### ExtendedDeployment \`${qualified(ed)}\``,
      '',
      `${fleetSummary(ed, (text) => `\`${text}\``)}.`,
      '',
      `| ${head.join(' | ')} |`,
      `|${head.map(() => '---|').join('')}`,
      ...memberRows(plan, ed).map((r) => `| ${r.join(' | ')} |`),
    ];
    if (ed.release !== undefined) {
      lines.push('', ...ed.waves.map((w) => `- **Wave ${w.wave}** (${w.clusters.join(', ')}): ${waveStart(ed, w)}.`), '', ...fleetGantt(ed));
    }
    for (const wave of ed.waves) {
      for (const m of inWave(ed, wave)) {
        const own = memberPlan(plan, ed, m.cluster);
        const title = `#### Cluster \`${m.cluster}\`${m.wave === undefined ? '' : `, wave ${m.wave}`}`;
        if (own) lines.push('', ...extendedDeploymentMarkdown(own, title));
      }
    }
    return `${lines.join('\n')}\n`;
  });
  const removed = plan.clusters.filter((c) => c.removed).map((c) => `- Cluster \`${c.name}\` is no longer in the render: nothing of it is planned.`);
  const body = sections.length > 0 ? sections.join('\n') : 'No ExtendedDeployments.\n';
  return `${lead}${heading}: clusters ${names.join(', ')}\n\n${body}${removed.length > 0 ? `\n${removed.join('\n')}\n` : ''}`;
}
