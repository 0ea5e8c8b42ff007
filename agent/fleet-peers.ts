import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { KubernetesListObject, KubernetesObject, V1Lease } from '@kubernetes/client-node';
import { API_GROUP, ED_PLURAL, VERSION } from '../core/api/identity.js';
import { dnsLabel } from '../core/api/common.js';
import type { ExtendedDeploymentObject } from '../core/kube/objects.js';
import { peerEdOf, type PeerObservation } from '../core/fleet/peer-view.js';
import { peerKubeconfigPath } from '../core/fleet/peers.js';
import { transportKubeConfig } from './runtime/api-transport.js';
import type { Clock, CancelTimer } from './runtime/clock.js';
import { ResilientInformer } from './runtime/informer.js';
import { CoordinationV1Api, CustomObjectsApi, makeApiClient } from './runtime/kube-client.js';
import { apiError } from './runtime/kube-errors.js';
import { keepAliveKubeConfig } from './runtime/keep-alive.js';
import { loadKubeConfig } from './runtime/kubeconfig.js';
import type { Logger } from './runtime/log.js';
import { slimInformer } from './runtime/slim-informer.js';

/**
 * How often a peer is probed (a GET of its agent's Lease), and how long a probe may take. A watch on a hung API
 * server (stopped, not closed) stays silent for minutes; the probe notices it within one interval plus its timeout.
 */
export const PEER_PROBE_INTERVAL_MS = 2_000;
export const PEER_PROBE_TIMEOUT_MS = 2_000;
/** How often the peer folder is read again: `edctl fleet connect` rotates tokens, the kubelet updates mounted Secrets. */
const RESCAN_INTERVAL_MS = 10_000;

/** The peer agent's Lease as last read. */
export interface PeerLease {
  /** spec.renewTime (ms since epoch); undefined when the Lease has none. */
  readonly renewTimeMs: number | undefined;
  readonly durationSeconds: number | undefined;
  readonly holder: string | undefined;
}

/** What this agent sees of one other member cluster. Read only: no agent ever writes to another cluster. */
export interface PeerView {
  readonly cluster: string;
  /** The last probe answered; undefined until the first probe ended. */
  readonly reachable: boolean | undefined;
  /** Why the last probe failed. */
  readonly error: string | undefined;
  /** The peer agent's Lease; undefined when unread or absent (a 404 is an answer: reachable, no agent). */
  readonly lease: PeerLease | undefined;
  /** The peer's ExtendedDeployments are cached (first list done). */
  readonly synced: boolean;
  /** The peer's ExtendedDeployment of that namespace and name, from the watch cache. */
  extendedDeployment(namespace: string, name: string): ExtendedDeploymentObject | undefined;
}

/** Where the peer agents' Lease is and how this agent is told of changes. */
export interface FleetPeersOptions {
  /** A folder with one `<cluster>/kubeconfig` per peer (a projected volume of the peer Secrets gives this layout). */
  readonly dir: string;
  /** The cluster this agent runs in: a folder of that name is not a peer. */
  readonly self: string;
  readonly leaseNamespace: string;
  readonly leaseName: string;
  readonly clock: Clock;
  readonly log: Logger;
  readonly userAgent: string;
  /** A peer's view changed: reachability, its Lease, or one of its ExtendedDeployments (then with its namespace and name). */
  readonly onChange: (cluster: string, ed?: { namespace: string; name: string }) => void;
}

type CachedEd = ExtendedDeploymentObject & KubernetesObject;

/** One peer: its clients, its ExtendedDeployment watch and its probe. */
class Peer implements PeerView {
  reachable: boolean | undefined;
  error: string | undefined;
  lease: PeerLease | undefined;
  private readonly informer: ResilientInformer<CachedEd>;
  private readonly leases: ReturnType<typeof makeApiClient<CoordinationV1Api>>;
  private probeTimer: CancelTimer | undefined;
  private stopped = false;

  constructor(
    readonly cluster: string,
    readonly kubeconfigPath: string,
    readonly mtimeMs: number,
    private readonly options: FleetPeersOptions,
  ) {
    const kc = loadKubeConfig({ kubeconfig: kubeconfigPath });
    const client = transportKubeConfig(keepAliveKubeConfig(kc), { timeoutMs: PEER_PROBE_TIMEOUT_MS, userAgent: options.userAgent, clock: options.clock });
    this.leases = makeApiClient(client, CoordinationV1Api);
    const custom = makeApiClient(
      transportKubeConfig(keepAliveKubeConfig(kc), { timeoutMs: 60_000, userAgent: options.userAgent, clock: options.clock }),
      CustomObjectsApi,
    );
    this.informer = new ResilientInformer<CachedEd>(
      kc,
      {
        resource: `${ED_PLURAL}@${cluster}`,
        path: `/apis/${API_GROUP}/${VERSION}/${ED_PLURAL}`,
        list: () =>
          custom.listCustomObjectForAllNamespaces({ group: API_GROUP, version: VERSION, plural: ED_PLURAL }) as Promise<KubernetesListObject<CachedEd>>,
      },
      {
        clock: options.clock,
        log: options.log,
        make: slimInformer,
        onEvent: (_event, ed) => {
          const { namespace, name } = ed.metadata ?? {};
          if (namespace !== undefined && name !== undefined) options.onChange(cluster, { namespace, name });
        },
      },
    );
  }

  get synced(): boolean {
    return this.informer.synced();
  }

  extendedDeployment(namespace: string, name: string): ExtendedDeploymentObject | undefined {
    return this.informer.get(name, namespace);
  }

  start(): void {
    this.informer.start();
    void this.probe();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.probeTimer?.();
    await this.informer.stop();
  }

  private async probe(): Promise<void> {
    const before = JSON.stringify([this.reachable, this.lease]);
    try {
      const lease: V1Lease = await this.leases.readNamespacedLease({ name: this.options.leaseName, namespace: this.options.leaseNamespace });
      this.set(true, undefined, leaseOf(lease));
    } catch (error) {
      const failure = apiError(error);
      // A missing Lease is an answer: the API server is up and no agent ever led there.
      if (failure.code === 404) this.set(true, undefined, undefined);
      else this.set(false, failure.message, this.lease);
    }
    if (this.stopped) return;
    if (JSON.stringify([this.reachable, this.lease]) !== before) this.options.onChange(this.cluster);
    this.probeTimer = this.options.clock.setTimer(PEER_PROBE_INTERVAL_MS, () => void this.probe());
  }

  private set(reachable: boolean, error: string | undefined, lease: PeerLease | undefined): void {
    if (reachable !== this.reachable) {
      if (reachable) this.options.log.info('peer cluster reachable', { cluster: this.cluster });
      else this.options.log.warn('peer cluster unreachable', { cluster: this.cluster, error });
    }
    this.reachable = reachable;
    this.error = error;
    this.lease = lease;
  }
}

function leaseOf(lease: V1Lease): PeerLease {
  const renew = lease.spec?.renewTime;
  const renewTimeMs = renew === undefined ? undefined : new Date(renew).getTime();
  return { renewTimeMs, durationSeconds: lease.spec?.leaseDurationSeconds, holder: lease.spec?.holderIdentity };
}

/**
 * The other member clusters of this agent's fleets, read only: per peer a watch of its ExtendedDeployments and a probe
 * of its agent's Lease, through the kubeconfigs in `dir` (written by `edctl fleet connect` as Secrets, mounted into the
 * agent's pod). A kubeconfig added, changed or removed is picked up within RESCAN_INTERVAL_MS.
 */
export class FleetPeers {
  private readonly peers = new Map<string, Peer>();
  private rescanTimer: CancelTimer | undefined;
  private stopped = false;

  constructor(private readonly options: FleetPeersOptions) {}

  /** The peers found, by cluster name. */
  clusters(): string[] {
    return [...this.peers.keys()].sort();
  }

  view(cluster: string): PeerView | undefined {
    return this.peers.get(cluster);
  }

  start(): void {
    this.rescan();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.rescanTimer?.();
    await Promise.all([...this.peers.values()].map((p) => p.stop()));
    this.peers.clear();
  }

  private rescan(): void {
    const found = peerKubeconfigs(this.options.dir, this.options.self);
    for (const [cluster, peer] of this.peers) {
      const now = found.get(cluster);
      if (now === undefined || now.mtimeMs !== peer.mtimeMs) {
        this.peers.delete(cluster);
        void peer.stop();
        this.options.onChange(cluster);
      }
    }
    for (const [cluster, file] of found) {
      if (this.peers.has(cluster)) continue;
      try {
        const peer = new Peer(cluster, file.path, file.mtimeMs, this.options);
        this.peers.set(cluster, peer);
        peer.start();
      } catch (error) {
        this.options.log.error('peer kubeconfig not usable', { cluster, file: file.path, error: error instanceof Error ? error.message : String(error) });
      }
    }
    if (!this.stopped) this.rescanTimer = this.options.clock.setTimer(RESCAN_INTERVAL_MS, () => this.rescan());
  }
}

/** `<dir>/<cluster>/kubeconfig` for every folder named like a cluster (a DNS label) but `self`. */
export function peerKubeconfigs(dir: string, self: string): Map<string, { path: string; mtimeMs: number }> {
  const found = new Map<string, { path: string; mtimeMs: number }>();
  if (!existsSync(dir)) return found;
  for (const cluster of readdirSync(dir).sort()) {
    if (cluster === self || !dnsLabel.safeParse(cluster).success) continue;
    const path = join(dir, peerKubeconfigPath(cluster));
    if (existsSync(path)) found.set(cluster, { path, mtimeMs: statSync(path).mtimeMs });
  }
  return found;
}

/** How the reconciler reads the fleet: the agent's cluster name and its peers (undefined outside a fleet). */
export interface FleetAccess {
  readonly clusterName: string | undefined;
  readonly peers: Pick<FleetPeers, 'view'> | undefined;
  /** --peer-kubeconfigs, for messages. */
  readonly peerDir: string | undefined;
}

/**
 * What this agent sees now of every other member of an ExtendedDeployment's fleet, for core's gate. A peer whose
 * probe or list has not ended yet is reachable with nothing read (the gate waits for it without recording it
 * unreachable); a member without a kubeconfig is unreachable, saying why.
 */
export function observePeers(
  access: FleetAccess | undefined,
  members: readonly { readonly cluster: string }[],
  self: string,
  namespace: string,
  name: string,
): PeerObservation[] {
  return members
    .filter((m) => m.cluster !== self)
    .map(({ cluster }): PeerObservation => {
      const view = access?.peers?.view(cluster);
      if (view === undefined) {
        const why = access?.peerDir === undefined ? 'this agent reads no peers (--peer-kubeconfigs)' : `no ${cluster}/kubeconfig in ${access.peerDir}`;
        return { cluster, reachable: false, error: why };
      }
      if (view.reachable === false) return { cluster, reachable: false, error: view.error ?? 'unreachable' };
      const lease =
        view.lease?.renewTimeMs !== undefined && view.lease.durationSeconds !== undefined
          ? { lease: { renewTime: view.lease.renewTimeMs, durationSeconds: view.lease.durationSeconds } }
          : {};
      if (view.reachable === undefined || !view.synced) return { cluster, reachable: true, error: 'not read yet', ...lease };
      const ed = view.extendedDeployment(namespace, name);
      if (ed === undefined) return { cluster, reachable: true, error: `it has no ExtendedDeployment ${namespace}/${name}`, ...lease };
      return { cluster, reachable: true, ed: peerEdOf(ed), ...lease };
    });
}
