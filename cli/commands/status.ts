import type { Command } from 'commander';
import { parseControls } from '../../core/rollout/controls.js';
import type { ExtendedDeploymentObject } from '../../core/kube/objects.js';
import { rolloutReading } from '../../core/rollout/status-reading.js';
import type { createLogUpdate } from 'log-update';
import { addKubeFlags, connect, readExtendedDeployment, type Kube, type KubeFlags } from '../kube.js';
import { parseDuration } from '../duration.js';
import { data, outputOption, table, type OutputFormat } from '../output.js';
import {
  analysisWords,
  availableText,
  colorEnabled,
  colors,
  nextStep,
  outcomeOf,
  regionViews,
  statusFrame,
  statusLine,
  trafficWords,
  type ViewOptions,
} from '../status-view.js';
import { UserError } from '../user-error.js';

/** `edctl status`: where a rollout stands, as the agent last wrote it; with --watch, live. */
export function registerStatus(program: Command): void {
  const bin = program.name();
  addKubeFlags(
    program
      .command('status')
      .description('Show the rollout status of an ExtendedDeployment (phase, groups, regions, conditions); --watch follows it live')
      .argument('<name>', 'ExtendedDeployment name'),
  )
    .addOption(outputOption())
    .option('-w, --watch', 'follow the rollout: on a terminal a bar per region redrawn in place, else one line per change (Ctrl-C to stop)')
    .option('--until-done', 'with --watch (implied): exit 0 once the rollout is Healthy, 1 if it is Degraded or the spec is invalid')
    .option(
      '--timeout <duration>',
      'with --until-done (implied): exit 1 if the rollout is not done after this long, e.g. 90s, 5m, 1h (0: no limit)',
      parseDuration,
      0,
    )
    .addHelpText(
      'after',
      `
--watch follows the ExtendedDeployment with a Kubernetes watch and shows every change of its status. On a terminal
each region is a bar of its pods against desired: new revision (█), old revision (▒), missing (·), then its counts
(desired, new, old, ready, available with a countdown while pods wait out minReadySeconds, swapping), with the group,
the gate it waits at (WaitingForConfirmation, Paused, Aborted, Degraded), why (a Degraded rollout names its stuck pods
and their container state), the next step and the moves; colours unless NO_COLOR is set. Piped or in CI it prints one plain line per change instead; with -o json, the status as JSON per change (-o
yaml: a YAML document per change).

Examples:
  ${bin} status web -n shop
  ${bin} status web -n shop -o json | jq .phase
  ${bin} status web -n shop --watch
  ${bin} status web -n shop --until-done          # in CI, after the sync: wait for the rollout, fail if it degrades
  ${bin} status web -n shop --timeout 15m         # the same, and fail if it is not done within 15 minutes`,
    )
    .action(async (name: string, flags: KubeFlags & { output: OutputFormat; watch?: boolean; untilDone?: boolean; timeout: number }) => {
      const kube = await connect(flags);
      const ed = await readExtendedDeployment(kube, name);
      const untilDone = flags.untilDone === true || flags.timeout > 0;
      if (!flags.watch && !untilDone) {
        process.stdout.write(flags.output === 'text' ? statusText(ed, { bin, now: Date.now() }) : data(ed.status ?? {}, flags.output));
        return;
      }
      await watchStatus(kube, name, ed, { output: flags.output, untilDone, timeoutMs: flags.timeout, bin });
    });
}

/** How a watch shows each state of the ExtendedDeployment. */
interface WatchView {
  show(ed: ExtendedDeploymentObject): void;
  /** A passing problem (the watch restarts); shown until the next state. */
  note(message: string): void;
  end(): void;
}

/** A frame redrawn in place (log-update), coloured unless NO_COLOR is set; every second too, for the countdowns. */
function terminalView(bin: string, logUpdate: typeof createLogUpdate): WatchView {
  const draw = logUpdate(process.stdout);
  const palette = colors(colorEnabled(process.stdout));
  const frameOf = (ed: ExtendedDeploymentObject) => statusFrame(ed, { colors: palette, bin, now: Date.now() });
  let shown: ExtendedDeploymentObject | undefined;
  let frame = '';
  let note = '';
  const redraw = () => draw(note ? `${frame}${palette.yellow(note)}\n` : frame);
  const tick = setInterval(() => {
    const next = shown === undefined ? frame : frameOf(shown);
    if (next === frame) return;
    frame = next;
    redraw();
  }, 1000);
  return {
    show: (ed) => {
      shown = ed;
      const next = frameOf(ed);
      if (next === frame && note === '') return;
      frame = next;
      note = '';
      redraw();
    },
    note: (message) => {
      note = `  watch interrupted (${message}); reconnecting`;
      redraw();
    },
    end: () => {
      clearInterval(tick);
      draw.done();
    },
  };
}

/** One plain line per change (logs, CI): no escape codes. */
function lineView(format: (ed: ExtendedDeploymentObject) => string): WatchView {
  let last = '';
  return {
    show: (ed) => {
      const next = format(ed);
      if (next !== last) process.stdout.write(next.endsWith('\n') ? next : `${next}\n`);
      last = next;
    },
    note: (message) => process.stderr.write(`watch interrupted (${message}); reconnecting\n`),
    end: () => undefined,
  };
}

/**
 * Follows the ExtendedDeployment until Ctrl-C (exit 0), or with `untilDone` until its rollout is Healthy (0) or cannot
 * finish without help (a UserError: exit 1). Shows only changes.
 */
async function watchStatus(
  kube: Kube,
  name: string,
  first: ExtendedDeploymentObject,
  options: { output: OutputFormat; untilDone: boolean; timeoutMs: number; bin: string },
): Promise<void> {
  // Imported when a watch starts (as the Kubernetes client is, see connect), not with every edctl command.
  const [{ watchExtendedDeployment }, { createLogUpdate }] = await Promise.all([import('../ed-watch.js'), import('log-update')]);
  const view =
    options.output === 'json'
      ? lineView((ed) => JSON.stringify(ed.status ?? {}))
      : options.output === 'yaml'
        ? lineView((ed) => `---\n${data(ed.status ?? {}, 'yaml')}`)
        : process.stdout.isTTY
          ? terminalView(options.bin, createLogUpdate)
          : lineView((ed) => statusLine(ed, { bin: options.bin, now: Date.now() }));
  await new Promise<void>((resolve, reject) => {
    let stopWatch: (() => Promise<void>) | undefined;
    let finished = false;
    let timer: NodeJS.Timeout | undefined;
    let last = first;
    const finish = (error?: UserError) => {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      // Removed only after this signal's other listeners ran (hence `on`, not `once`, which removes a listener before
      // calling it): signal-exit (log-update's cursor restore) re-raises a signal nobody else listens to, which would
      // end the process with 130 instead of 0.
      setImmediate(() => {
        process.off('SIGINT', onSignal);
        process.off('SIGTERM', onSignal);
      });
      view.end();
      void (stopWatch?.() ?? Promise.resolve()).then(() => (error ? reject(error) : resolve()));
    };
    const onSignal = () => finish();
    const onChange = (ed: ExtendedDeploymentObject) => {
      if (finished) return;
      last = ed;
      view.show(ed);
      if (!options.untilDone) return;
      const outcome = outcomeOf(ed);
      if (outcome?.done === 'healthy') finish();
      else if (outcome?.done === 'failed') finish(new UserError([`ExtendedDeployment ${kube.namespace}/${name}: ${outcome.why}`]));
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
    if (options.timeoutMs > 0) {
      timer = setTimeout(() => {
        const { health, message } = rolloutReading(last);
        finish(new UserError([`ExtendedDeployment ${kube.namespace}/${name}: not done after ${options.timeoutMs / 1000}s (${health}: ${message})`]));
      }, options.timeoutMs);
    }
    onChange(first);
    if (finished) return;
    stopWatch = watchExtendedDeployment(kube, name, {
      onChange,
      onDelete: () => finish(new UserError([`ExtendedDeployment ${kube.namespace}/${name} was deleted`])),
      onRetry: (message) => view.note(message),
    });
  });
}

/**
 * The status for people: phase and group, controls, the next step when someone must act, a table of the regions (the
 * counts of the watch, see regionWords), and the conditions.
 */
export function statusText(ed: ExtendedDeploymentObject, { bin, now }: ViewOptions): string {
  const reading = rolloutReading(ed);
  const { status, reported, observed, invalid, progressing } = reading;
  const name = `${ed.metadata?.namespace ? `${ed.metadata.namespace}/` : ''}${ed.metadata?.name ?? ''}`;
  const lines: string[] = [`ExtendedDeployment ${name}`];
  if (!reported) {
    lines.push('No status yet: is the agent running?');
    return `${lines.join('\n')}\n`;
  }
  const group = status.totalGroups ? `, group ${status.currentGroup ?? 0}/${status.totalGroups}` : '';
  lines.push(`Phase:     ${status.phase ?? '(none)'}${group}`);
  if (invalid) lines.push(`Invalid:   ${invalid.message ?? ''}`);
  if (status.revision) lines.push(`Revision:  ${status.revision}`);
  if (progressing?.message) lines.push(`Message:   ${progressing.message}`);
  const fleet = fleetText(ed);
  if (fleet) lines.push(`Fleet:     ${fleet}`);
  const traffic = trafficWords(status);
  if (traffic) lines.push(`Traffic:   ${traffic}`);
  const analysis = analysisWords(status);
  if (analysis) lines.push(`Analysis:  ${analysis}`);
  const controls = controlsText(ed.metadata?.annotations ?? {}, status.revision, status.rolloutStartTime);
  if (controls) lines.push(`Controls:  ${controls}`);
  const next = nextStep(ed, reading, bin);
  if (next) lines.push(`Next:      ${next}`);
  if (!observed)
    lines.push(`Note:      the agent has not yet seen generation ${ed.metadata?.generation ?? 0} (status is for ${status.observedGeneration ?? 0})`);
  const regions = regionViews(status, now);
  if (regions.length > 0) {
    // SWAPPING only while in-place swaps are under way: most rollouts never swap.
    const swaps = regions.some((r) => r.swapping > 0);
    lines.push(
      '',
      table(
        ['REGION', 'DESIRED', 'NEW', 'OLD', 'READY', 'AVAILABLE', ...(swaps ? ['SWAPPING'] : []), 'REVISION'],
        regions.map((r) => [r.name, r.desired, r.updated, r.old, r.ready, availableText(r), ...(swaps ? [r.swapping] : []), r.revision ?? '']),
      ),
    );
  }
  const conditions = status.conditions ?? [];
  if (conditions.length > 0) {
    lines.push(
      '',
      table(
        ['CONDITION', 'STATUS', 'REASON', 'MESSAGE'],
        conditions.map((c) => [c.type, c.status, c.reason ?? '', c.message ?? '']),
      ),
    );
  }
  return `${lines.join('\n')}\n`;
}

/** The controls as the agent reads them (core's parseControls), so the view never disagrees with what the agent does. */
function controlsText(annotations: Readonly<Record<string, string>>, revision: string | undefined, started: string | undefined): string {
  const controls = parseControls(annotations, revision ?? '', started);
  const parts: string[] = [];
  if (controls.paused) parts.push('paused');
  if (revision !== undefined && controls.aborted) parts.push('aborted');
  if (revision !== undefined && controls.approvedThrough !== undefined) parts.push(`approved through group ${controls.approvedThrough}`);
  return parts.join(', ');
}

/**
 * A fleet member's place, gate and handover: `prod: member eu-1, wave 1; release 3f9a1c0d2e (completed 0000000000);
 * gate Waiting (Soaking); handover: keeps 6 of share 4 for d`.
 */
function fleetText(ed: ExtendedDeploymentObject): string | undefined {
  const fleet = (ed.spec as { fleet?: { name?: unknown; cluster?: unknown; wave?: unknown; release?: unknown } } | undefined)?.fleet;
  if (fleet === undefined) return undefined;
  type Shown = { release?: unknown; share?: unknown; gate?: { state?: unknown; reason?: unknown }; handover?: { replicas?: unknown; waitingFor?: unknown } };
  const status = (ed.status as { fleet?: Shown } | undefined)?.fleet;
  const text = (v: unknown) => (typeof v === 'string' || typeof v === 'number' ? String(v) : '?');
  const completed = typeof status?.release === 'string' ? ` (completed ${status.release})` : '';
  const gate =
    status?.gate?.state === undefined ? '' : `; gate ${text(status.gate.state)}${status.gate.reason === undefined ? '' : ` (${text(status.gate.reason)})`}`;
  const waitingFor = Array.isArray(status?.handover?.waitingFor) ? status.handover.waitingFor.map(text).join(', ') : '?';
  const handover = status?.handover === undefined ? '' : `; handover: keeps ${text(status.share)} of share ${text(status.handover.replicas)} for ${waitingFor}`;
  return `${text(fleet.name)}: member ${text(fleet.cluster)}, wave ${text(fleet.wave)}; release ${text(fleet.release)}${completed}${gate}${handover}`;
}
