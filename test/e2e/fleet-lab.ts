// The member clusters of a fleet for e2e suites: one full lab per cluster next to the single lab (test/cluster/fleet.ts),
// started if not running, and stopped afterwards only if this suite started them (LAB_KEEP=1 keeps them).
import { AppsV1Api, CoreV1Api, CustomObjectsApi, KubeConfig } from '@kubernetes/client-node';
import { downFleet, fleetLabRssBytes, upFleet, type FleetLab } from '../cluster/fleet.js';

/** A running member cluster: its lab and admin clients. */
export interface FleetMember extends FleetLab {
  readonly kc: KubeConfig;
  readonly core: CoreV1Api;
  readonly apps: AppsV1Api;
  readonly custom: CustomObjectsApi;
}

export interface Fleet {
  readonly members: readonly FleetMember[];
  /** Stops the clusters this call started (none when they were running before, or with LAB_KEEP). */
  stop(): Promise<void>;
}

/** Admin clients of a kubeconfig file. */
export function adminClients(kubeconfig: string): Pick<FleetMember, 'kc' | 'core' | 'apps' | 'custom'> {
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfig);
  return { kc, core: kc.makeApiClient(CoreV1Api), apps: kc.makeApiClient(AppsV1Api), custom: kc.makeApiClient(CustomObjectsApi) };
}

/** Starts (or reuses) one lab per named cluster, in parallel. */
export async function startFleet(names: readonly string[], log: (s: string) => void = (s) => console.error(s)): Promise<Fleet> {
  const labs = await upFleet(names, log);
  const started = labs.filter((lab) => lab.started).map((lab) => lab.name);
  return {
    members: labs.map(({ started: _started, ...lab }) => ({ ...lab, ...adminClients(lab.kubeconfig) })),
    stop: async () => {
      if (started.length > 0 && !process.env.LAB_KEEP) await downFleet(log, started);
    },
  };
}

/** The resident memory of each member's processes (etcd, kube-apiserver, kcm, scheduler, kwok), in bytes. */
export function fleetMemory(fleet: Fleet): { name: string; rssBytes: number }[] {
  return fleet.members.map((m) => ({ name: m.name, rssBytes: fleetLabRssBytes(m.name) }));
}
