import pc from 'picocolors';
import type { ExtendedDeploymentStatus } from '../core/api/extended-deployment.js';
import { MOVES_CONDITION, MovesReason, ProgressingReason } from '../core/api/conditions.js';
import { PAUSED_ANNOTATION } from '../core/labels.js';
import type { ExtendedDeploymentObject } from '../core/kube/objects.js';
import { FORCED_EXIT_WORDS } from '../core/rollout/forced-exit.js';
import { rolloutReading, type RolloutReading } from '../core/rollout/status-reading.js';

/** Colour functions (picocolors'); all of them return their input unchanged when colour is off. */
export type Colors = ReturnType<typeof pc.createColors>;

/**
 * Whether to colour `stream`: only a terminal, and never when NO_COLOR is set to anything but the empty string
 * (https://no-color.org).
 */
export function colorEnabled(stream: { readonly isTTY?: boolean }, env: Readonly<Record<string, string | undefined>> = process.env): boolean {
  return stream.isTTY === true && (env['NO_COLOR'] === undefined || env['NO_COLOR'] === '');
}

/** Colours on or off. */
export function colors(enabled: boolean): Colors {
  return pc.createColors(enabled);
}

/** How a watch with --until-done ends: the rollout is Healthy, it cannot finish without help (why), or not yet. */
export type Outcome = { readonly done: 'healthy' } | { readonly done: 'failed'; readonly why: string } | undefined;

/**
 * Whether a rollout is over, as `edctl status --until-done` decides it: Healthy is done, Degraded (an invalid spec, a
 * missed deadline) cannot finish without help. The health is read for the current generation only.
 */
export function outcomeOf(ed: ExtendedDeploymentObject): Outcome {
  const { health, invalid, progressing, status } = rolloutReading(ed);
  if (health === 'Healthy') return { done: 'healthy' };
  if (health !== 'Degraded') return undefined;
  if (invalid) return { done: 'failed', why: `invalid spec: ${invalid.message ?? invalid.reason ?? ''}` };
  return {
    done: 'failed',
    why: `rollout ${status.revision ?? ''} is Degraded in group ${status.currentGroup ?? 0}: ${progressing?.message ?? progressing?.reason ?? ''}`,
  };
}

const qualifiedName = (ed: ExtendedDeploymentObject) => `${ed.metadata?.namespace ? `${ed.metadata.namespace}/` : ''}${ed.metadata?.name ?? ''}`;

/** What every view of a status needs besides the object: how the program is invoked (for the next step), and the time. */
export interface ViewOptions {
  /** `edctl` or `kubectl ed`. */
  readonly bin: string;
  /** Now (ms), for the countdowns. */
  readonly now: number;
}

/** A region as every view shows it: its pods by revision against desired, Ready and available, and what is under way. */
export interface RegionView {
  readonly name: string;
  readonly desired: number;
  /** Pods at the region's target revision. */
  readonly updated: number;
  /** Pods at any other revision. */
  readonly old: number;
  readonly ready: number;
  readonly available: number;
  /** Ready pods still waiting out minReadySeconds, and the seconds until the last of them is available (0: due). */
  readonly pending?: { readonly pods: number; readonly seconds: number };
  /** Pods in the middle of an in-place swap. */
  readonly swapping: number;
  /** The revision the region is headed for. */
  readonly revision: string | undefined;
}

/** The regions of a status as the views show them, the countdowns taken at `now`. */
export function regionViews(status: ExtendedDeploymentStatus, now: number): RegionView[] {
  return (status.regions ?? []).map((r) => {
    const updated = r.updated ?? 0;
    const ready = r.ready ?? 0;
    const available = r.available ?? 0;
    const at = r.availableAt === undefined ? NaN : Date.parse(r.availableAt);
    const pending = Number.isNaN(at) || ready <= available ? undefined : { pods: ready - available, seconds: Math.max(0, Math.ceil((at - now) / 1000)) };
    return {
      name: r.name,
      desired: r.desired ?? 0,
      updated,
      old: Math.max(0, (r.current ?? 0) - updated),
      ready,
      available,
      ...(pending && { pending }),
      swapping: r.swapping ?? 0,
      revision: r.revision,
    };
  });
}

/** `5 (1 more in 12s)`: the available pods, and those still waiting out minReadySeconds. */
export function availableText(r: Pick<RegionView, 'available' | 'pending'>, pad: (n: number) => string = String): string {
  if (!r.pending) return pad(r.available);
  return `${pad(r.available)} (${r.pending.pods} more ${r.pending.seconds > 0 ? `in ${r.pending.seconds}s` : 'due now'})`;
}

/**
 * A region's counts in words, the same in every view: `desired 6  new 2  old 4  ready 6  available 5 (1 more in 12s)
 * swapping 1` (each number named, none a fraction: during a surge there are more pods than desired). `pad` aligns the
 * numbers of several regions.
 */
export function regionWords(r: RegionView, pad: (n: number) => string = String): string[] {
  return [
    `desired ${pad(r.desired)}`,
    `new ${pad(r.updated)}`,
    `old ${pad(r.old)}`,
    `ready ${pad(r.ready)}`,
    `available ${availableText(r, pad)}`,
    ...(r.swapping > 0 ? [`swapping ${r.swapping}`] : []),
  ];
}

const groupText = (status: ExtendedDeploymentStatus) => (status.totalGroups ? `group ${status.currentGroup ?? 0}/${status.totalGroups}` : '');

/** The phase or gate word shown for a status: the gate when held, else the phase. */
function stateWord({ gate, status }: RolloutReading): string {
  return gate ?? status.phase ?? 'no phase';
}

/** Whether Git pauses the rollout (`strategy.pause: true`), read from the unvalidated spec. */
function pausedInGit(ed: ExtendedDeploymentObject): boolean {
  const strategy = (ed.spec as { strategy?: { pause?: unknown } } | undefined)?.strategy;
  return strategy?.pause === true;
}

/**
 * What to do next when a rollout waits for someone or cannot go on: approve at a confirmation gate; resume after
 * `edctl pause` (or set `strategy.pause` back in Git); resume or change Git after an abort; after a missed deadline fix
 * and push, keep what runs Ready (the forced exit, when the message names its counts), or resume to retry; fix the spec
 * when it is invalid; look at the sync while the workloads lag behind. Undefined when the rollout needs nobody.
 */
export function nextStep(ed: ExtendedDeploymentObject, reading: RolloutReading, bin: string): string | undefined {
  const target = `${ed.metadata?.name ?? ''}${ed.metadata?.namespace ? ` -n ${ed.metadata.namespace}` : ''}`;
  if (reading.invalid) return `fix the fields named above in Git (${bin} validate shows every problem), then let Argo CD or Flux sync`;
  if (!reading.reported || !reading.observed) return undefined;
  switch (reading.gate) {
    case 'WaitingForConfirmation':
      return `${bin} approve ${target}`;
    case 'Paused': {
      const byEdctl = ed.metadata?.annotations?.[PAUSED_ANNOTATION] === 'true';
      const git = 'set strategy.pause to false in Git';
      if (byEdctl) return `${bin} resume ${target}${pausedInGit(ed) ? `, and ${git}` : ''}`;
      return pausedInGit(ed) ? git : undefined;
    }
    case 'Aborted':
      return `${bin} resume ${target}, or change Git (a new revision starts a new rollout)`;
    case 'Degraded': {
      const forced = reading.progressing?.message?.includes(FORCED_EXIT_WORDS) ? ', set the counts named above in Git to keep what runs Ready' : '';
      return `fix the cause in Git and push (a new revision starts a new rollout)${forced}, or ${bin} resume ${target} to retry the group`;
    }
    case undefined:
      return reading.progressing?.reason === ProgressingReason.WaitingForSync
        ? 'check the sync in Argo CD or Flux: every regional workload must carry the rendered revision'
        : undefined;
  }
}

/**
 * The status in one plain line, for logs (no escape codes): rollout, group, phase or gate, each region's counts (as
 * {@link regionWords}), the moves, and when the rollout is held or invalid why and what to do next. `edctl status
 * --watch` prints it whenever it changes when stdout is not a terminal.
 */
export function statusLine(ed: ExtendedDeploymentObject, { bin, now }: ViewOptions): string {
  const reading = rolloutReading(ed);
  const { status } = reading;
  if (!reading.reported) return `${qualifiedName(ed)}: no status yet`;
  const head = [`${qualifiedName(ed)}:`, status.revision ? `rollout ${status.revision}` : '', groupText(status), stateWord(reading)]
    .filter((s) => s !== '')
    .join(' ');
  const parts = [head, ...regionViews(status, now).map((r) => [r.name, ...regionWords(r)].join(' '))];
  if (status.moves?.length) parts.push(`moves ${status.moves.map((m) => `${m.from}->${m.to} ${m.count}${returning(m)} (${m.reason})`).join(', ')}`);
  const blocked = blockedMoves(status);
  if (blocked) parts.push(`moves blocked: ${blocked}`);
  parts.push(...[trafficWords(status), analysisWords(status)].filter((w) => w !== undefined));
  if (reading.invalid) parts.push(`invalid spec: ${reading.invalid.message ?? ''}`);
  else if (reading.gate && reading.progressing?.message) parts.push(reading.progressing.message);
  if (!reading.observed) parts.push(`status of generation ${status.observedGeneration ?? 0}, spec at ${ed.metadata?.generation ?? 0}`);
  const next = nextStep(ed, reading, bin);
  if (next) parts.push(`next: ${next}`);
  return parts.join('; ');
}

/** The live weights of mode Weighted: `weights new 25%, old 75% (route generation 3 accepted)`; undefined without. */
export function trafficWords(status: ExtendedDeploymentStatus): string | undefined {
  const traffic = status.traffic;
  if (traffic?.weights === undefined || traffic.weights.length === 0) return undefined;
  const weights = traffic.weights.map((w) => `${w.revision} ${w.weight / 100}%`).join(', ');
  const state = traffic.appliedGeneration !== undefined ? `route generation ${traffic.appliedGeneration} accepted` : (traffic.message ?? 'not yet accepted');
  const extra = [...(traffic.shiftedBack ? ['shifted back'] : []), ...(traffic.draining ?? []).map((d) => `${d.revision} draining since ${d.since}`)];
  return `weights ${weights} (${[state, ...extra].join('; ')})`;
}

/**
 * The analysis of the current barrier and each metric's last sample: `analysis of group 1: Running; error-rate 1/3 in
 * a row, last 0.01 Success at 10:00:30Z`; undefined without.
 */
export function analysisWords(status: ExtendedDeploymentStatus): string | undefined {
  const analysis = status.analysis;
  if (analysis?.outcome === undefined) return undefined;
  const metrics = (analysis.metrics ?? []).map((m) => {
    const last = m.samples?.at(-1);
    const value = last === undefined ? 'no sample yet' : `last ${last.value ?? '(none)'} ${last.verdict} at ${last.time.replace(/\.\d{3}Z$/, 'Z').slice(11)}`;
    return `${m.name} ${m.outcome === 'Running' || m.outcome === 'WaitingForData' ? `${m.consecutiveSuccesses} in a row` : m.outcome}, ${value}`;
  });
  return [`analysis of group ${analysis.group ?? '?'}: ${analysis.outcome}`, ...metrics].join('; ');
}

type Move = NonNullable<ExtendedDeploymentStatus['moves']>[number];
const returning = (m: Move) => (m.returning ? ` (+${m.returning} returning)` : '');

/** Why replicas that should move cannot (no room anywhere, every region looks failed), from the Moves condition. */
function blockedMoves(status: ExtendedDeploymentStatus): string | undefined {
  const moves = status.conditions?.find((c) => c.type === MOVES_CONDITION);
  return moves?.reason === MovesReason.NoRoom || moves?.reason === MovesReason.AllRegionsFailed ? moves.message : undefined;
}

/** Cells of a region's bar. */
export const BAR_WIDTH = 24;

/**
 * A bar of `width` cells for a region: new-revision pods (█), old pods (▒), and the pods missing to desired (·). The
 * scale is desired pods, or the pods that exist when a surge makes them more.
 */
export function bar(r: Pick<RegionView, 'desired' | 'updated' | 'old'>, c: Colors, width = BAR_WIDTH): string {
  const total = Math.max(r.desired, r.updated + r.old, 1);
  const updated = Math.round((r.updated / total) * width);
  const old = Math.round(((r.updated + r.old) / total) * width) - updated;
  return `${c.green('█'.repeat(updated))}${c.yellow('▒'.repeat(old))}${c.dim('·'.repeat(width - updated - old))}`;
}

function colouredState(reading: RolloutReading, c: Colors): string {
  const word = stateWord(reading);
  if (word === 'Healthy') return c.green(word);
  if (word === 'Degraded' || word === 'Aborted') return c.red(word);
  if (word === 'WaitingForConfirmation' || word === 'Paused') return c.yellow(word);
  return c.cyan(word);
}

/** What to show a frame with: colours besides the {@link ViewOptions}. */
export interface FrameOptions extends ViewOptions {
  readonly colors: Colors;
}

/**
 * The status as a terminal frame, redrawn in place by `edctl status --watch`: a header with rollout, group and phase or
 * gate, a bar per region with its counts (as {@link regionWords}, numbers aligned), the moves, the Progressing message
 * (red when Degraded: it names the pods that hold the rollout), and the next step when someone must act.
 */
export function statusFrame(ed: ExtendedDeploymentObject, { colors: c, bin, now }: FrameOptions): string {
  const reading = rolloutReading(ed);
  const { status, invalid, progressing, gate } = reading;
  const name = qualifiedName(ed);
  const lines: string[] = [];
  if (!reading.reported) {
    lines.push(`${c.bold(`ExtendedDeployment ${name}`)}  ${c.dim('no status yet: is the agent running?')}`);
    return `${lines.join('\n')}\n`;
  }
  const head = [c.bold(`ExtendedDeployment ${name}`), status.revision ? `rollout ${status.revision}` : '', groupText(status), colouredState(reading, c)];
  lines.push(head.filter((s) => s !== '').join('  '));
  const regions = regionViews(status, now);
  const width = Math.max(0, ...regions.map((r) => r.name.length));
  const digits = Math.max(1, ...regions.map((r) => String(Math.max(r.desired, r.updated + r.old, r.ready)).length));
  const pad = (n: number) => String(n).padStart(digits);
  for (const r of regions) lines.push(`  ${r.name.padEnd(width)}  ${bar(r, c)}  ${regionWords(r, pad).join('  ')}`);
  for (const m of status.moves ?? []) lines.push(`  ${c.magenta('moved')} ${m.count}${returning(m)} from ${m.from} to ${m.to} (${m.reason} since ${m.since})`);
  const blocked = blockedMoves(status);
  if (blocked) lines.push(`  ${c.red('moves blocked:')} ${blocked}`);
  const traffic = trafficWords(status);
  if (traffic) lines.push(`  ${c.cyan('traffic')} ${traffic}`);
  const analysis = analysisWords(status);
  if (analysis) lines.push(`  ${status.analysis?.outcome === 'Failed' ? c.red(analysis) : analysis}`);
  if (invalid) lines.push(`  ${c.red('invalid spec:')} ${invalid.message ?? ''}`);
  else if (progressing?.message) lines.push(`  ${gate === 'Degraded' ? c.red(progressing.message) : c.dim(progressing.message)}`);
  const next = nextStep(ed, reading, bin);
  if (next) lines.push(`  next: ${next}`);
  if (!reading.observed)
    lines.push(`  ${c.dim(`the agent has not yet seen generation ${ed.metadata?.generation ?? 0} (status is for ${status.observedGeneration ?? 0})`)}`);
  return `${lines.join('\n')}\n`;
}
