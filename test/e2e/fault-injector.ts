// Scheduled API faults for the agent, served by api-proxy.ts. A seed gives a schedule of fault windows (which kind,
// from when to when, relative to the start); within a window, each request the kind applies to is hit with the
// window's probability, the draw and the fault's parameters (delay, cut time) coming from the same seeded generator.
// The schedule is a function of the seed alone; which requests a window hits depends on when the agent sends them,
// as in agent-kill.e2e.test.ts. The injector also counts requests per endpoint (`<VERB> <resource>`, as the agent's
// own request metric names them) so that tests can bound retries, and faults injected per kind.
//
// Kinds: `serverError` (500), `throttled` (429 with Retry-After), `conflict` (409 on writes), `slow` (forwarded late),
// `watchCut` (a watch forwarded, then its connection destroyed mid-stream), `watchGone` (a watch answered with the
// API server's 410 Gone ERROR event). Lease requests are hit only by a window that names them (the suite holds every
// Lease request at 500 for less than the renew deadline): random windows in a row can outlast the deadline, and a
// leader that loses its Lease exits, which an in-process agent cannot survive. Events are never hit, being best effort
// by design.
import { requestResource, requestVerb } from '../../agent/runtime/api-requests.js';
import { seededRandom } from './agent-process.js';
import type { ProxiedRequest, Verdict } from './api-proxy.js';

export const FAULT_KINDS = ['serverError', 'throttled', 'conflict', 'slow', 'watchCut', 'watchGone'] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

/** Seconds a throttled request is told to wait (Retry-After). */
export const RETRY_AFTER_SECONDS = 2;

export interface FaultWindow {
  readonly kind: FaultKind;
  /** ms after the injector started. */
  readonly from: number;
  readonly to: number;
  /** Share of the applicable requests hit, 0–1. */
  readonly probability: number;
  /** Hit only these endpoints (`<VERB> <resource>`); default every endpoint the kind applies to. */
  readonly endpoints?: readonly string[];
}

/** The endpoint of a request: `PUT extendeddeployments/status`, `WATCH pods`, `LIST replicasets`. */
export function endpointOf(request: Pick<ProxiedRequest, 'method' | 'path'>): string {
  const url = new URL(request.path, 'https://api');
  return `${requestVerb(request.method, url)} ${requestResource(url)}`;
}

const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE', 'DELETECOLLECTION']);

/** Whether a fault of `kind` can hit a request to `endpoint`. */
export function applies(kind: FaultKind, endpoint: string): boolean {
  const [verb = '', resource = ''] = endpoint.split(' ');
  if (resource.startsWith('events')) return false;
  switch (kind) {
    case 'watchCut':
    case 'watchGone':
      return verb === 'WATCH';
    case 'conflict':
      return WRITES.has(verb);
    default:
      return verb !== 'WATCH';
  }
}

/**
 * `count` windows over `durationMs`, each kind in turn (so every kind occurs once `count` ≥ 6), 1.5–5 s long, at
 * seeded random starts, hitting half of the requests they apply to.
 */
export function faultSchedule(seed: number, durationMs: number, count: number): FaultWindow[] {
  const random = seededRandom(seed);
  return Array.from({ length: count }, (_, i) => {
    const length = 1500 + Math.floor(random() * 3500);
    const from = Math.floor(random() * Math.max(0, durationMs - length));
    return { kind: FAULT_KINDS[i % FAULT_KINDS.length]!, from, to: from + length, probability: 0.5 };
  }).sort((a, b) => a.from - b.from);
}

/** One request as the injector saw it. */
export interface SeenRequest {
  readonly endpoint: string;
  readonly at: number;
  readonly fault?: FaultKind;
}

/** Decides the fate of each proxied request by the schedule; pass `verdict` to startApiProxy. */
export class FaultInjector {
  readonly seen: SeenRequest[] = [];
  readonly injected = new Map<FaultKind, number>(FAULT_KINDS.map((k) => [k, 0]));
  private readonly random: () => number;
  private windows: FaultWindow[];
  private startedAt: number;

  constructor(seed: number, windows: readonly FaultWindow[] = [], now = Date.now()) {
    this.random = seededRandom(seed ^ 0x5bd1e995);
    this.windows = [...windows];
    this.startedAt = now;
  }

  /** Adds windows relative to now (e.g. a saturation window at a chosen moment of a test). */
  schedule(windows: readonly FaultWindow[], now = Date.now()): void {
    const offset = now - this.startedAt;
    this.windows.push(...windows.map((w) => ({ ...w, from: w.from + offset, to: w.to + offset })));
  }

  /** Removes every window: from now on every request is forwarded. */
  clear(): void {
    this.windows = [];
  }

  readonly verdict = (request: ProxiedRequest): Verdict => {
    const endpoint = endpointOf(request);
    const t = request.at - this.startedAt;
    const window = this.windows.find(
      (w) => t >= w.from && t < w.to && applies(w.kind, endpoint) && (w.endpoints ? w.endpoints.includes(endpoint) : !endpoint.endsWith(' leases')),
    );
    const hit = window !== undefined && this.random() < window.probability;
    this.seen.push({ endpoint, at: request.at, ...(hit && { fault: window.kind }) });
    if (!hit) return 'forward';
    this.injected.set(window.kind, (this.injected.get(window.kind) ?? 0) + 1);
    switch (window.kind) {
      case 'serverError':
        return { status: 500, reason: 'InternalError' };
      case 'throttled':
        return { status: 429, reason: 'TooManyRequests', headers: { 'retry-after': String(RETRY_AFTER_SECONDS) } };
      case 'conflict':
        return { status: 409, reason: 'Conflict' };
      case 'slow':
        return { delayMs: 300 + Math.floor(this.random() * 1700) };
      case 'watchCut':
        return { cutAfterMs: 100 + Math.floor(this.random() * 2900) };
      case 'watchGone':
        return 'watchGone';
    }
  };

  /** Requests to `endpoint` that arrived in [from, to) (ms since the epoch). */
  count(endpoint: string, from: number, to: number): number {
    return this.seen.filter((r) => r.endpoint === endpoint && r.at >= from && r.at < to).length;
  }

  /** Every request per endpoint, most first: `{ "PUT extendeddeployments/status": 12, … }`. */
  totals(): Record<string, number> {
    const totals = new Map<string, number>();
    for (const r of this.seen) totals.set(r.endpoint, (totals.get(r.endpoint) ?? 0) + 1);
    return Object.fromEntries([...totals].sort((a, b) => b[1] - a[1]));
  }
}
