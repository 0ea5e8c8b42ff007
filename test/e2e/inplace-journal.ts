// What an in-place rollout did to pods and to the Service in front of them, from watches (test/e2e/inplace.e2e.test.ts):
// every pod ever seen (uid, name, node, images, revision label, the agent's swap state annotation, the
// InPlaceUpdateReady condition), which pods were created or removed after a given instant, and per pod the readiness
// of its endpoint in the Service's EndpointSlices (maintained by kube-controller-manager's EndpointSlice controller).
// Times are the local times events arrived.
import type { V1EndpointSlice, V1Pod } from '@kubernetes/client-node';
import { IN_PLACE_READINESS_GATE, NAME_LABEL, REGION_LABEL, REVISION_LABEL, SWAP_STATE_ANNOTATION } from '../../core/labels.js';
import { parseSwapState } from '../../core/inplace/swap-state.js';
import { listWatch } from './rollout-fixtures.js';

export type EndpointState = 'ready' | 'notReady' | 'absent';

export interface PodRecord {
  readonly uid: string;
  readonly name: string;
  readonly region: string;
  /** When the pod was first seen. */
  readonly firstSeen: number;
  node: string | undefined;
  /** Image per container, as in the spec now. */
  images: Record<string, string>;
  revision: string | undefined;
  /** Distinct swap states in order: phase and revision of the annotation, when first seen. */
  readonly states: { at: number; phase: string; revision: string }[];
  /** InPlaceUpdateReady changes in order. */
  readonly gate: { at: number; status: string }[];
  /** restartCount per container, as the status shows it now. */
  restarts: Record<string, number>;
  terminatingAt: number | undefined;
  deletedAt: number | undefined;
}

/** The times of one pod's swap toward `revision` (first seen), and what its endpoint did around them. */
export interface SwapWindow {
  readonly draining: number | undefined;
  readonly swapping: number | undefined;
  readonly done: number | undefined;
}

export class Journal {
  readonly pods = new Map<string, PodRecord>();
  /** Endpoint state changes per pod uid. */
  readonly endpoints = new Map<string, { at: number; state: EndpointState }[]>();
  private readonly slices = new Map<string, V1EndpointSlice>();
  private readonly watches: { synced: Promise<void>; stop: () => void }[] = [];

  constructor(
    readonly namespace: string,
    readonly edName: string,
    readonly service: string,
  ) {}

  /** Starts both watches; resolves once both listed. */
  async start(): Promise<void> {
    const pods = listWatch<V1Pod>(
      `/api/v1/namespaces/${this.namespace}/pods?labelSelector=${encodeURIComponent(`${NAME_LABEL}=${this.edName}`)}`,
      (type, pod, at) => this.onPod(type, pod, at),
    );
    const slices = listWatch<V1EndpointSlice>(
      `/apis/discovery.k8s.io/v1/namespaces/${this.namespace}/endpointslices?labelSelector=${encodeURIComponent(`kubernetes.io/service-name=${this.service}`)}`,
      (type, slice, at) => this.onSlice(type, slice, at),
    );
    this.watches.push(pods, slices);
    await Promise.all(this.watches.map((w) => w.synced));
  }

  stop(): void {
    for (const w of this.watches) w.stop();
  }

  /** Pods first seen at or after `since` (created: a swap creates none). */
  createdSince(since: number): PodRecord[] {
    return [...this.pods.values()].filter((p) => p.firstSeen >= since);
  }

  /** Pods that got a deletionTimestamp or vanished at or after `since`. */
  removedSince(since: number): PodRecord[] {
    return [...this.pods.values()].filter(
      (p) => (p.terminatingAt !== undefined && p.terminatingAt >= since) || (p.deletedAt !== undefined && p.deletedAt >= since),
    );
  }

  /** Live pods (not terminating, not gone). */
  live(): PodRecord[] {
    return [...this.pods.values()].filter((p) => p.terminatingAt === undefined && p.deletedAt === undefined);
  }

  window(uid: string, revision: string): SwapWindow {
    const states = this.pods.get(uid)?.states ?? [];
    const first = (phase: string) => states.find((s) => s.phase === phase && s.revision === revision)?.at;
    return { draining: first('draining'), swapping: first('swapping'), done: first('done') };
  }

  /** The pod's endpoint state as last seen at or before `at` ('absent' before the pod ever appeared in a slice). */
  endpointAt(uid: string, at: number): EndpointState {
    let state: EndpointState = 'absent';
    for (const o of this.endpoints.get(uid) ?? []) if (o.at <= at) state = o.state;
    return state;
  }

  /**
   * What is wrong with one pod's swap toward `revision` as the Service saw it, or nothing: its endpoint was ready when the
   * swap began, out of the Service's ready endpoints (not ready, or absent) when its images changed and until the swap was
   * done, and ready again afterwards (and still now).
   */
  endpointProblems(uid: string, revision: string): string[] {
    const name = this.pods.get(uid)?.name ?? uid;
    const w = this.window(uid, revision);
    if (w.draining === undefined || w.swapping === undefined || w.done === undefined)
      return [`${name}: swap toward ${revision} not seen in full (${JSON.stringify(w)})`];
    const problems: string[] = [];
    const seen = this.endpoints.get(uid) ?? [];
    if (this.endpointAt(uid, w.draining) !== 'ready')
      problems.push(`${name}: endpoint ${this.endpointAt(uid, w.draining)} when the swap began (expected ready)`);
    if (this.endpointAt(uid, w.swapping) === 'ready') problems.push(`${name}: endpoint still ready when its images were swapped`);
    const during = seen.filter((o) => o.at >= w.swapping! && o.at <= w.done! && o.state === 'ready');
    if (during.length > 0) problems.push(`${name}: endpoint ready during the swap at ${during.map((o) => o.at - w.draining!).join(', ')} ms after it began`);
    const after = seen.filter((o) => o.at > w.done!);
    if (!after.some((o) => o.state === 'ready') || after[after.length - 1]?.state !== 'ready')
      problems.push(`${name}: endpoint not ready again after the swap (${JSON.stringify(after)})`);
    return problems;
  }

  /** Milliseconds each pod's endpoint was out (not ready or absent) around its swap toward `revision`. */
  outOfEndpointsMs(uid: string, revision: string): number | undefined {
    const w = this.window(uid, revision);
    const seen = this.endpoints.get(uid) ?? [];
    const out = seen.find((o) => o.at >= (w.draining ?? Number.POSITIVE_INFINITY) && o.state !== 'ready');
    const back = out && seen.find((o) => o.at > out.at && o.state === 'ready');
    return out && back ? back.at - out.at : undefined;
  }

  private onPod(type: string, pod: V1Pod, at: number): void {
    const uid = pod.metadata?.uid ?? '';
    let record = this.pods.get(uid);
    if (!record) {
      record = {
        uid,
        name: pod.metadata?.name ?? '',
        region: pod.metadata?.labels?.[REGION_LABEL] ?? '',
        firstSeen: at,
        node: undefined,
        images: {},
        revision: undefined,
        states: [],
        gate: [],
        restarts: {},
        terminatingAt: undefined,
        deletedAt: undefined,
      };
      this.pods.set(uid, record);
    }
    record.node = pod.spec?.nodeName ?? record.node;
    record.images = Object.fromEntries((pod.spec?.containers ?? []).map((c) => [c.name, c.image ?? '']));
    record.revision = pod.metadata?.labels?.[REVISION_LABEL];
    record.restarts = Object.fromEntries((pod.status?.containerStatuses ?? []).map((c) => [c.name, c.restartCount]));
    const state = parseSwapState(pod.metadata?.annotations?.[SWAP_STATE_ANNOTATION]);
    const last = record.states[record.states.length - 1];
    if (state && (last?.phase !== state.phase || last.revision !== state.revision)) record.states.push({ at, phase: state.phase, revision: state.revision });
    const gate = pod.status?.conditions?.find((c) => c.type === IN_PLACE_READINESS_GATE)?.status;
    if (gate !== undefined && record.gate[record.gate.length - 1]?.status !== gate) record.gate.push({ at, status: gate });
    if (pod.metadata?.deletionTimestamp && record.terminatingAt === undefined) record.terminatingAt = at;
    if (type === 'DELETED') record.deletedAt = at;
  }

  private onSlice(type: string, slice: V1EndpointSlice, at: number): void {
    const key = slice.metadata?.name ?? '';
    if (type === 'DELETED') this.slices.delete(key);
    else this.slices.set(key, slice);
    const now = new Map<string, EndpointState>();
    for (const s of this.slices.values()) {
      for (const e of s.endpoints ?? []) {
        const uid = e.targetRef?.uid;
        if (!uid) continue;
        const state: EndpointState = e.conditions?.ready === true ? 'ready' : 'notReady';
        if (now.get(uid) !== 'ready') now.set(uid, state);
      }
    }
    for (const uid of new Set([...now.keys(), ...this.endpoints.keys()])) {
      const state = now.get(uid) ?? 'absent';
      const list = this.endpoints.get(uid) ?? [];
      if (list[list.length - 1]?.state !== state) list.push({ at, state });
      this.endpoints.set(uid, list);
    }
  }
}
