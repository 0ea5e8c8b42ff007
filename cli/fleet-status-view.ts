// What `edctl fleet status` prints, as pure functions (the command, which reads every member, is commands/fleet.ts):
// one row per member cluster of an ExtendedDeployment's fleet, from each member's own object.
import type { ExtendedDeploymentObject } from '../core/kube/objects.js';
import { table } from './output.js';

/** One member as `edctl fleet status` read it: its ExtendedDeployment, or why it could not be read. */
export interface MemberRead {
  readonly cluster: string;
  readonly ed?: ExtendedDeploymentObject | undefined;
  readonly error?: string | undefined;
}

/** One member's row, as `-o json` prints it. */
export interface MemberRow {
  readonly cluster: string;
  readonly wave?: number | undefined;
  /** Its rendered share (spec.replicas). */
  readonly share?: number | undefined;
  /** The replicas it runs now: its recorded share (larger during a handover) plus failover additions. */
  readonly runs?: number | undefined;
  readonly available?: number | undefined;
  /** The release it was rendered with (spec.fleet.release). */
  readonly release?: string | undefined;
  /** The release it completed (status.fleet.release). */
  readonly completed?: string | undefined;
  readonly phase?: string | undefined;
  readonly groups?: string | undefined;
  readonly gate?: string | undefined;
  /** Handover, failover additions, a status behind its spec, or why the member could not be read. */
  readonly notes: readonly string[];
}

/** The whole report: the fleet, the release the members render, and a row per member. */
export interface FleetStatusReport {
  readonly fleet: string | undefined;
  readonly namespace: string;
  readonly name: string;
  /** The releases the members render: one once every member synced the same render. */
  readonly releases: readonly string[];
  readonly members: readonly MemberRow[];
}

interface FleetFields {
  readonly spec?: { readonly replicas?: unknown; readonly fleet?: { readonly name?: unknown; readonly wave?: unknown; readonly release?: unknown } };
  readonly metadata?: { readonly generation?: unknown };
  readonly status?: {
    readonly observedGeneration?: unknown;
    readonly phase?: unknown;
    readonly groups?: unknown;
    readonly regions?: unknown;
    readonly fleet?: {
      readonly release?: unknown;
      readonly share?: unknown;
      readonly gate?: { readonly state?: unknown; readonly reason?: unknown };
      readonly handover?: { readonly replicas?: unknown; readonly waitingFor?: unknown };
      readonly additions?: unknown;
    };
  };
}

const text = (v: unknown) => (typeof v === 'string' ? v : undefined);
const int = (v: unknown) => (typeof v === 'number' && Number.isInteger(v) ? v : undefined);

/** A member's row from its object (read unvalidated: a field of the wrong type shows as absent). */
export function memberRow(read: MemberRead): MemberRow {
  if (read.ed === undefined) return { cluster: read.cluster, notes: [read.error ?? 'not read'] };
  const ed = read.ed as FleetFields;
  const status = ed.status ?? {};
  const fleet = status.fleet ?? {};
  const share = int(ed.spec?.replicas);
  const additions = (Array.isArray(fleet.additions) ? (fleet.additions as { cluster?: unknown; replicas?: unknown }[]) : []).filter(
    (a) => (int(a.replicas) ?? 0) > 0,
  );
  const added = additions.reduce((sum, a) => sum + (int(a.replicas) ?? 0), 0);
  const recorded = int(fleet.share) ?? share;
  const regions = Array.isArray(status.regions) ? (status.regions as { available?: unknown }[]) : [];
  const notes: string[] = [];
  const generation = int(ed.metadata?.generation);
  if (generation !== undefined && int(status.observedGeneration) !== generation) notes.push(`status behind the spec (generation ${generation})`);
  if (fleet.handover !== undefined) {
    const waitingFor = Array.isArray(fleet.handover.waitingFor) ? fleet.handover.waitingFor.filter((c) => typeof c === 'string').join(', ') : '?';
    notes.push(`handover: keeps ${recorded ?? '?'}, waiting for ${waitingFor}`);
  }
  for (const a of additions) notes.push(`+${int(a.replicas)} for ${text(a.cluster) ?? '?'} (failover)`);
  const gate = text(fleet.gate?.state);
  const reason = text(fleet.gate?.reason);
  return {
    cluster: read.cluster,
    wave: int(ed.spec?.fleet?.wave),
    share,
    runs: recorded === undefined ? undefined : recorded + added,
    available: regions.length === 0 ? undefined : regions.reduce((sum, r) => sum + (int(r.available) ?? 0), 0),
    release: text(ed.spec?.fleet?.release),
    completed: text(fleet.release),
    phase: text(status.phase),
    groups: text(status.groups),
    gate: gate === undefined ? undefined : reason === undefined ? gate : `${gate} (${reason})`,
    notes,
  };
}

/** The report over every member read. */
export function fleetStatusReport(namespace: string, name: string, reads: readonly MemberRead[]): FleetStatusReport {
  const fleet = reads.map((r) => text((r.ed as FleetFields | undefined)?.spec?.fleet?.name)).find((n) => n !== undefined);
  const members = reads.map(memberRow);
  const releases = [...new Set(members.map((m) => m.release).filter((r) => r !== undefined))].sort();
  return { fleet, namespace, name, releases, members };
}

/** The report as text: a heading, the release (or the releases still being synced), and the table. */
export function fleetStatusText(report: FleetStatusReport): string {
  const heading = `Fleet ${report.fleet ?? '?'}: ExtendedDeployment ${report.namespace}/${report.name}`;
  const release =
    report.releases.length === 1
      ? `Release ${report.releases[0]} in every member read`
      : `Releases ${report.releases.join(', ') || '(none)'}: the members render different releases (a sync is on its way)`;
  const dash = (v: string | number | undefined) => (v === undefined ? '-' : String(v));
  const rows = report.members.map((m) => [
    m.cluster,
    dash(m.wave),
    dash(m.share),
    dash(m.runs),
    dash(m.available),
    m.completed === undefined ? '-' : m.completed === m.release ? `${m.completed} ✓` : m.completed,
    dash(m.phase),
    dash(m.groups),
    dash(m.gate),
    m.notes.join('; '),
  ]);
  return `${heading}\n${release}\n\n${table(['CLUSTER', 'WAVE', 'SHARE', 'RUNS', 'AVAILABLE', 'COMPLETED', 'PHASE', 'GROUPS', 'GATE', 'NOTES'], rows)}\n`;
}
