import pc from 'picocolors';
import type { ExtendedDeploymentStatus } from '../core/api/extended-deployment.js';
import { MOVES_CONDITION, MovesReason } from '../core/api/conditions.js';
import { PAUSED_ANNOTATION } from '../core/labels.js';
import type { ExtendedDeploymentObject } from '../core/kube/objects.js';
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

interface RegionCounts {
  readonly name: string;
  readonly desired: number;
  readonly updated: number;
  readonly old: number;
  readonly ready: number;
}

function regionCounts(status: ExtendedDeploymentStatus): RegionCounts[] {
  return (status.regions ?? []).map((r) => {
    const updated = r.updated ?? 0;
    return { name: r.name, desired: r.desired ?? 0, updated, old: Math.max(0, (r.current ?? 0) - updated), ready: r.ready ?? 0 };
  });
}

const groupText = (status: ExtendedDeploymentStatus) => (status.totalGroups ? `group ${status.currentGroup ?? 0}/${status.totalGroups}` : '');

/** The phase or gate word shown for a status: the gate when held, else the phase. */
function stateWord({ gate, status }: RolloutReading): string {
  return gate ?? status.phase ?? 'no phase';
}

/**
 * The status in one plain line, for logs (no escape codes): rollout, group, phase or gate, per region new/desired,
 * old and ready pods, and the moves. `edctl status --watch` prints it whenever it changes when stdout is not a terminal.
 */
export function statusLine(ed: ExtendedDeploymentObject): string {
  const reading = rolloutReading(ed);
  const { status } = reading;
  if (!reading.reported) return `${qualifiedName(ed)}: no status yet`;
  const head = [`${qualifiedName(ed)}:`, status.revision ? `rollout ${status.revision}` : '', groupText(status), stateWord(reading)]
    .filter((s) => s !== '')
    .join(' ');
  const parts = [head, ...regionCounts(status).map((r) => `${r.name} new ${r.updated}/${r.desired} old ${r.old} ready ${r.ready}`)];
  if (status.moves?.length) parts.push(`moves ${status.moves.map((m) => `${m.from}->${m.to} ${m.count}${returning(m)} (${m.reason})`).join(', ')}`);
  const blocked = blockedMoves(status);
  if (blocked) parts.push(`moves blocked: ${blocked}`);
  if (!reading.observed) parts.push(`status of generation ${status.observedGeneration ?? 0}, spec at ${ed.metadata?.generation ?? 0}`);
  return parts.join('; ');
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
export function bar(r: Pick<RegionCounts, 'desired' | 'updated' | 'old'>, c: Colors, width = BAR_WIDTH): string {
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

/** What to show a frame with: colours, and how the program is invoked (for the hints). */
export interface FrameOptions {
  readonly colors: Colors;
  /** `edctl` or `kubectl ed`. */
  readonly bin: string;
}

/**
 * The status as a terminal frame, redrawn in place by `edctl status --watch`: a header with rollout, group and phase or
 * gate, a bar per region with its new, old and ready pods against desired, the moves, and what to do at a gate.
 */
export function statusFrame(ed: ExtendedDeploymentObject, { colors: c, bin }: FrameOptions): string {
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
  const regions = regionCounts(status);
  const width = Math.max(0, ...regions.map((r) => r.name.length));
  const digits = Math.max(1, ...regions.map((r) => String(Math.max(r.desired, r.updated + r.old)).length));
  const pad = (n: number) => String(n).padStart(digits);
  for (const r of regions) {
    lines.push(`  ${r.name.padEnd(width)}  ${bar(r, c)}  new ${pad(r.updated)}/${pad(r.desired)}  old ${pad(r.old)}  ready ${pad(r.ready)}/${pad(r.desired)}`);
  }
  for (const m of status.moves ?? []) lines.push(`  ${c.magenta('moved')} ${m.count}${returning(m)} from ${m.from} to ${m.to} (${m.reason} since ${m.since})`);
  const blocked = blockedMoves(status);
  if (blocked) lines.push(`  ${c.red('moves blocked:')} ${blocked}`);
  if (invalid) lines.push(`  ${c.red('invalid spec:')} ${invalid.message ?? ''}`);
  else if (progressing?.message) lines.push(`  ${c.dim(progressing.message)}`);
  const target = `${ed.metadata?.name ?? ''}${ed.metadata?.namespace ? ` -n ${ed.metadata.namespace}` : ''}`;
  if (gate === 'WaitingForConfirmation') lines.push(`  next: ${bin} approve ${target}`);
  else if ((gate === 'Paused' && ed.metadata?.annotations?.[PAUSED_ANNOTATION] === 'true') || gate === 'Aborted') lines.push(`  next: ${bin} resume ${target}`);
  if (!reading.observed)
    lines.push(`  ${c.dim(`the agent has not yet seen generation ${ed.metadata?.generation ?? 0} (status is for ${status.observedGeneration ?? 0})`)}`);
  return `${lines.join('\n')}\n`;
}
