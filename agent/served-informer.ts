import type { KubernetesObject } from '@kubernetes/client-node';
import type { CancelTimer, Clock } from './runtime/clock.js';
import type { RunningInformer } from './runtime/informer.js';
import type { GroupDiscoveryApi } from './runtime/kube-client.js';
import { apiError, isNotFound } from './runtime/kube-errors.js';
import type { Logger } from './runtime/log.js';

/** How often an informer of an optional API asks again whether the API server serves it (a CRD installed later). */
export const SERVED_RECHECK_MS = 60_000;

/**
 * Whether the API server serves `plural` in `group`/`version` (discovery: `GET /apis/{group}/{version}`). A group
 * version that is not served answers 404: false. Any other failure throws (unknown).
 */
export async function resourceServed(discovery: Pick<GroupDiscoveryApi, 'getAPIResources'>, group: string, version: string, plural: string): Promise<boolean> {
  try {
    const list = await discovery.getAPIResources({ group, version });
    return (list.resources ?? []).some((r) => r.name === plural);
  } catch (error) {
    if (isNotFound(error)) return false;
    throw error;
  }
}

/**
 * The informer of a resource that a cluster may not serve (a CRD such as the Gateway API's HTTPRoute): it asks
 * discovery at start and every `recheckMs`, runs the informer `make` builds while the resource is served, and stops
 * it when it no longer is (the CRD was deleted: its watch would only fail). Meanwhile it reads as an empty cache.
 *
 * Not waited for at start (agent/informers.ts puts it in AgentInformers.besides): a cluster without the CRD, or an
 * agent not allowed to read it, still rolls out everything else.
 */
export class ServedInformer<T extends KubernetesObject> implements RunningInformer<T> {
  private inner: RunningInformer<T> | undefined;
  private innerRunning = false;
  private servedNow = false;
  private answered = false;
  private running = false;
  private timer: CancelTimer | undefined;
  private checking: Promise<void> | undefined;

  constructor(
    private readonly options: {
      readonly resource: string;
      /** Whether the resource is served now; throws when that cannot be told (the last answer stands). */
      readonly served: () => Promise<boolean>;
      /** Builds the informer (once, at the first time the resource is served). */
      readonly make: () => RunningInformer<T>;
      readonly clock: Clock;
      readonly log: Logger;
      readonly recheckMs?: number;
    },
  ) {}

  get resource(): string {
    return this.options.resource;
  }

  /** Whether the resource is served and its cache complete: only then does an empty cache mean "no such object". */
  served(): boolean {
    return this.servedNow && this.innerRunning && (this.inner?.synced() ?? false);
  }

  /** Whether discovery answered (or failed) once, and a served resource's cache is complete. */
  synced(): boolean {
    return this.answered && (!this.servedNow || (this.inner?.synced() ?? false));
  }

  stuck(): string | undefined {
    return this.innerRunning ? this.inner?.stuck() : undefined;
  }

  forbidden(): 'list' | 'watch' | undefined {
    return this.innerRunning ? this.inner?.forbidden() : undefined;
  }

  list(namespace?: string): readonly T[] {
    return this.servedNow && this.inner ? this.inner.list(namespace) : [];
  }

  get(name: string, namespace?: string): T | undefined {
    return this.servedNow ? this.inner?.get(name, namespace) : undefined;
  }

  byIndex(value: string): readonly T[] {
    return this.servedNow && this.inner ? this.inner.byIndex(value) : [];
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.checking = this.check();
  }

  /** Asks discovery again now (tests; start does it, then every recheckMs). */
  async recheck(): Promise<void> {
    await this.checking;
    this.timer?.();
    this.checking = this.check();
    await this.checking;
  }

  async stop(): Promise<void> {
    this.running = false;
    this.timer?.();
    this.timer = undefined;
    // A discovery request still in flight changes nothing once it answers (check looks at `running`).
    if (this.innerRunning) {
      this.innerRunning = false;
      await this.inner?.stop();
    }
  }

  private async check(): Promise<void> {
    this.timer = undefined;
    const { resource, log } = this.options;
    let served: boolean | undefined;
    try {
      served = await this.options.served();
    } catch (error) {
      log.warn('could not tell whether the API server serves a resource; asking again later', { resource, error: apiError(error).message });
    }
    if (!this.running) return;
    this.answered = true;
    if (served !== undefined && served !== this.servedNow) {
      this.servedNow = served;
      log.info(served ? 'resource served: watching it' : 'resource no longer served: not watching it', { resource });
    }
    if (this.servedNow && !this.innerRunning) {
      this.inner ??= this.options.make();
      this.innerRunning = true;
      this.inner.start();
    } else if (!this.servedNow && this.innerRunning) {
      this.innerRunning = false;
      await this.inner?.stop();
    }
    if (this.running) this.timer = this.options.clock.setTimer(this.options.recheckMs ?? SERVED_RECHECK_MS, () => void (this.checking = this.check()));
  }
}
