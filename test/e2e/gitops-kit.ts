// What the two GitOps suites (gitops-flux, gitops-argocd) share: the commits they deliver (renders of the examples
// with the constructs), the agent running under the install's own ServiceAccount, the order in which the engine
// applied a commit (from the API server's audit log), field ownership of what the agent owns, a sampler that records
// engine health against the ExtendedDeployments' phases, and the clean-up that leaves the lab as the other suites
// expect it.
import { cpSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { parse, parseAllDocuments, stringify } from 'yaml';
import { writeApp } from '../../constructs/synth.js';
import { API_GROUP } from '../../core/api/identity.js';
import { KEEPER_LABEL, NAME_LABEL, REGION_LABEL, REVISION_LABEL } from '../../core/labels.js';
import { examplesApp, type ExamplesInstall } from '../../examples/app.js';
import type { MultiArchWebRelease } from '../../examples/multi-arch-web.js';
import type { StrategyProps, TrafficProps } from '../../constructs/index.js';
import { AGENT_MANAGER, MANAGED_BY_LABEL } from '../../core/traffic/objects.js';
import { revisionServiceName } from '../../core/traffic/services.js';
import { repoRoot } from '../cluster/build.js';
import { gatewayApiCrdFiles, installGatewayApiCrds } from '../cluster/gateway-api.js';
import { applyServerSide, kubectl, type Manifest } from '../cluster/gitops.js';
import { auditLogPath, freePorts, kubeconfigPath, stopProcess } from '../cluster/lab.js';
import { GATEWAY_CLASS, GATEWAY_NAMESPACE, TRAEFIK, gatewayManifests, gatewayParentRef, startTraefik } from '../cluster/traefik.js';
import { waitGatewayProgrammed } from '../cluster/traffic.js';
import { AgentProcess } from './agent-process.js';
import { auditEvents, isWrite } from './audit-log.js';
import { expect } from 'vitest';
import { rawRequest, sleep, waitFor } from './helpers.js';
import { provideLocalDisks } from './local-disks.js';
import type { V1PersistentVolume } from '@kubernetes/client-node';

/** The agent's install, as rendered in dist/agent-install.k8s.yaml. */
export const AGENT_NAMESPACE = 'extended-deployment-system';
export const AGENT_SERVICE_ACCOUNT = 'extended-deployment-agent';
export const AGENT_FIELD_MANAGER = 'extendeddeployment-agent';

/** One commit of the suites: a directory with crds/ and dist/, as a repository would hold them. */
export interface Commit {
  readonly label: string;
  readonly root: string;
}

const scratch = mkdtempSync(join(tmpdir(), 'ed-gitops-'));

/** The repository's crds/ and dist/ exactly as committed. */
export function committedTree(): Commit {
  const root = join(scratch, 'committed');
  for (const sub of ['crds', 'dist']) cpSync(join(repoRoot, sub), join(root, sub), { recursive: true });
  return { label: 'committed', root };
}

/** The examples rendered with the constructs, with another release of the web service (`shop/web`), and install. */
export function webRelease(label: string, release: MultiArchWebRelease, install: ExamplesInstall = {}): Commit {
  const root = join(scratch, label);
  cpSync(join(repoRoot, 'crds'), join(root, 'crds'), { recursive: true });
  writeApp(examplesApp(release, install), join(root, 'dist'));
  return { label, root };
}

/**
 * The ExtendedDeployment of `o` made invalid for the agent, as a hand edit that skipped `npm run synth` would: its first
 * region's minReplicas above that region's count (a spec.replicas below the counts is no longer one: the agent reads it
 * as a scale-down, see core/distribution.ts).
 */
export function invalidSpec(o: Manifest): Manifest {
  if (o.kind !== 'ExtendedDeployment') return o;
  const spec = o['spec'] as { regions: { replicas?: number }[] };
  const [first, ...rest] = spec.regions;
  return { ...o, spec: { ...spec, regions: [{ ...first, minReplicas: (first?.replicas ?? 0) + 1 }, ...rest] } };
}

/** A copy of `base` with one object of dist/ changed by hand, as a bad commit that skipped `npm run synth` would. */
export function handEdited(label: string, base: Commit, file: string, edit: (o: Manifest) => Manifest): Commit {
  const root = join(scratch, label);
  cpSync(base.root, root, { recursive: true });
  const path = join(root, 'dist', file);
  const docs = parseAllDocuments(readFileSync(path, 'utf8')).map((d) => edit(d.toJS() as Manifest));
  writeFileSync(path, docs.map((d) => stringify(d)).join('---\n'));
  return { label, root };
}

/** Every object of a commit's dist/. */
export function distObjects(commit: Commit): Manifest[] {
  const dir = join(commit.root, 'dist');
  return readdirSync(dir)
    .filter((f) => f.endsWith('.yaml'))
    .sort()
    .flatMap((f) => parseAllDocuments(readFileSync(join(dir, f), 'utf8')).map((d) => d.toJS() as Manifest));
}

/** `Kind/namespace/name` (cluster-scoped: `Kind/name`), the way Flux names objects in its change sets. */
export function objectKey(o: Pick<Manifest, 'kind' | 'metadata'>): string {
  return o.metadata.namespace ? `${o.kind}/${o.metadata.namespace}/${o.metadata.name}` : `${o.kind}/${o.metadata.name}`;
}

/** The keys of the objects whose rendered text differs between two commits (what a reviewer sees change). */
export function changedObjects(from: Commit, to: Commit): Set<string> {
  const before = new Map(distObjects(from).map((o) => [objectKey(o), JSON.stringify(o)]));
  return new Set(
    distObjects(to)
      .filter((o) => before.get(objectKey(o)) !== JSON.stringify(o))
      .map(objectKey),
  );
}

// ---------------------------------------------------------------------------------------------------------------
// the agent, under the ServiceAccount and RBAC the engine synced from dist/agent-install.k8s.yaml

/** Starts the agent on every namespace, as the install's ServiceAccount (impersonated), once the engine synced its RBAC. */
export async function startAgentAsInstalled(): Promise<AgentProcess> {
  await waitFor(
    'the agent install (ServiceAccount, ClusterRoleBinding) synced by the engine',
    async () => {
      await rawRequest('GET', `/api/v1/namespaces/${AGENT_NAMESPACE}/serviceaccounts/${AGENT_SERVICE_ACCOUNT}`);
      await rawRequest('GET', `/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/${AGENT_SERVICE_ACCOUNT}`);
      return true;
    },
    { timeoutMs: 300_000, intervalMs: 1000 },
  );
  const kubeconfig = parse(readFileSync(kubeconfigPath(), 'utf8')) as { users: { user: Record<string, unknown> }[] };
  for (const u of kubeconfig.users) u.user['as'] = `system:serviceaccount:${AGENT_NAMESPACE}:${AGENT_SERVICE_ACCOUNT}`;
  const path = join(scratch, 'agent.kubeconfig');
  writeFileSync(path, stringify(kubeconfig), { mode: 0o600 });
  const agent = new AgentProcess({ kubeconfig: path, identity: 'gitops', leaseNamespace: AGENT_NAMESPACE, echo: !!process.env['AGENT_ECHO'] });
  await agent.waitForLog('became leader', 120_000);
  return agent;
}

// ---------------------------------------------------------------------------------------------------------------
// what the API server recorded

/**
 * When each object was first written (created or applied, dry runs left out) after `since`, by `resource/namespace/name`
 * (ms, from the lab's audit log, which records these writes with microseconds).
 */
function firstWrites(since: number): Map<string, number> {
  const first = new Map<string, number>();
  for (const e of auditEvents()) {
    const ref = e.objectRef;
    if (!ref?.name || ref.subresource || !['create', 'patch', 'update'].includes(e.verb ?? '') || !isWrite(e)) continue;
    if ((e.responseStatus?.code ?? 0) >= 300 || !e.stageTimestamp) continue;
    const at = Date.parse(e.stageTimestamp);
    const key = `${ref.resource}/${ref.namespace ?? ''}/${ref.name}`;
    if (at >= since && !(first.get(key)! <= at)) first.set(key, at);
  }
  return first;
}

/**
 * Asserts from the audit log that the engine wrote the project's CRDs, then every DeployRegion of the commit, then its
 * ExtendedDeployments and workloads, each group finished before the next began; returns the times for the report.
 */
export function expectApplyOrder(commit: Commit, since: number): string {
  expect(existsSync(auditLogPath()), "the lab's audit log").toBe(true);
  const writes = firstWrites(since);
  const objects = distObjects(commit);
  const of = (kinds: readonly string[]) => objects.filter((o) => kinds.includes(o.kind)).map((o) => writes.get(auditKey(o)));
  const stages = [
    { name: 'CRDs', times: PROJECT_CRDS.map((c) => writes.get(`customresourcedefinitions//${c}`)) },
    { name: 'DeployRegions', times: of(['DeployRegion']) },
    // The ExtendedDeployments and their regional workloads (the agent's own Deployment shares their wave but is none of them).
    {
      name: 'workloads',
      times: objects
        .filter((o) => o.kind === 'ExtendedDeployment' || (o.metadata['labels'] as Record<string, string> | undefined)?.[`${API_GROUP}/name`])
        .map((o) => writes.get(auditKey(o))),
    },
  ];
  for (const stage of stages)
    expect(
      stage.times.every((t) => t !== undefined),
      `every one of the ${stage.name} written by the sync`,
    ).toBe(true);
  const span = stages.map((s) => ({ name: s.name, first: Math.min(...(s.times as number[])) - since, last: Math.max(...(s.times as number[])) - since }));
  for (let i = 1; i < span.length; i++) expect(span[i - 1]!.last, `${span[i - 1]!.name} before ${span[i]!.name}`).toBeLessThan(span[i]!.first);
  return `apply order (audit log, ms after the commit): ${span.map((s) => `${s.name} ${s.first}–${s.last}`).join(', ')}`;
}

/** The audit key of a manifest (plural resource names of the kinds the suites look at). */
function auditKey(o: Manifest): string {
  const plural: Record<string, string> = {
    CustomResourceDefinition: 'customresourcedefinitions',
    DeployRegion: 'deployregions',
    ExtendedDeployment: 'extendeddeployments',
    ReplicaSet: 'replicasets',
    Deployment: 'deployments',
    StatefulSet: 'statefulsets',
  };
  return `${plural[o.kind] ?? o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`;
}

// ---------------------------------------------------------------------------------------------------------------
// cluster reads

interface Owned {
  metadata: {
    name: string;
    namespace?: string;
    generation?: number;
    annotations?: Record<string, string>;
    managedFields?: { manager: string; operation: string; subresource?: string; fieldsV1?: Record<string, unknown> }[];
  };
  spec?: { replicas?: number; template?: { spec?: { containers?: { image?: string }[] } }; minReadySeconds?: number };
  status?: Record<string, unknown>;
}

/** The regional ReplicaSets of every ExtendedDeployment (labelled with its name; keepers, which are the agent's, left out). */
export async function regionalReplicaSets(): Promise<Owned[]> {
  const list = (await rawRequest('GET', `/apis/apps/v1/replicasets?labelSelector=${encodeURIComponent(`${NAME_LABEL},!${KEEPER_LABEL}`)}`)) as {
    items: Owned[];
  };
  return list.items;
}

/** The regional StatefulSets of every ExtendedDeployment (examples/session-store.ts). */
export async function regionalStatefulSets(): Promise<Owned[]> {
  const list = (await rawRequest('GET', `/apis/apps/v1/statefulsets?labelSelector=${encodeURIComponent(NAME_LABEL)}`)) as { items: Owned[] };
  return list.items;
}

/**
 * Local disks for the claims of the examples' StatefulSets (examples/session-store.ts): the lab has no volume
 * provisioner, so the suites make the volumes an operator would, two per claim of each region's count.
 */
export function provideExampleDisks(): Promise<V1PersistentVolume[]> {
  return provideLocalDisks(distObjects(committedTree()), EXAMPLE_DISKS_PER_CLAIM);
}

/** Volumes per claim template and region: the examples' StatefulSet regions run two pods each, and no commit grows them. */
const EXAMPLE_DISKS_PER_CLAIM = 2;

/** A keeper as the API server holds it. */
export interface KeeperObject extends Owned {
  metadata: Owned['metadata'] & { uid: string; ownerReferences?: { kind: string; name: string; controller?: boolean }[] };
}

/**
 * The grey phase of the suites: web's amd64 region keeps one pod at the previous release (`amd64Partition: 1`, already
 * delivered and Healthy). Its kept pod is evicted; the agent's keeper (core/rollout/keeper.ts) makes it again at the
 * previous revision. Returns once web is Healthy with 3 new and 1 old pod on amd64 again, the old one the keeper's,
 * with the keeper as the API server holds it, for the engine's drift checks.
 */
export async function evictKeptPod(): Promise<{ keeper: KeeperObject; evicted: string }> {
  type Pod = {
    metadata: { name: string; uid: string; labels?: Record<string, string>; deletionTimestamp?: string; ownerReferences?: { name: string }[] };
    status?: { phase?: string; conditions?: { type: string; status: string }[] };
  };
  const amd64 = async () => {
    const rs = (await rawRequest('GET', '/apis/apps/v1/namespaces/shop/replicasets/web-amd64')) as {
      spec: { template: { metadata: { labels: Record<string, string> } } };
    };
    const revision = rs.spec.template.metadata.labels[REVISION_LABEL];
    const selector = encodeURIComponent(`${NAME_LABEL}=web,${REGION_LABEL}=amd64`);
    const pods = ((await rawRequest('GET', `/api/v1/namespaces/shop/pods?labelSelector=${selector}`)) as { items: Pod[] }).items;
    const live = pods.filter((p) => !p.metadata.deletionTimestamp && p.status?.phase !== 'Failed' && p.status?.phase !== 'Succeeded');
    return {
      fresh: live.filter((p) => p.metadata.labels?.[REVISION_LABEL] === revision),
      old: live.filter((p) => p.metadata.labels?.[REVISION_LABEL] !== revision),
    };
  };
  const before = await amd64();
  expect([before.fresh.length, before.old.length], 'amd64 in its grey phase: new and old pods').toEqual([3, 1]);
  const [kept] = before.old;
  const name = kept!.metadata.name;
  await rawRequest('POST', `/api/v1/namespaces/shop/pods/${name}/eviction`, {
    apiVersion: 'policy/v1',
    kind: 'Eviction',
    metadata: { name, namespace: 'shop' },
  });
  return waitFor(
    'the kept pod made again at the previous revision by the keeper, web Healthy',
    async () => {
      const now = await amd64();
      const [old] = now.old;
      const ready = old?.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');
      const web = (await extendedDeployments()).find((e) => e.key === 'shop/web');
      if (now.fresh.length !== 3 || now.old.length !== 1 || !ready || old?.metadata.uid === kept!.metadata.uid || web?.phase !== 'Healthy') return undefined;
      const keepers = (await rawRequest('GET', `/apis/apps/v1/namespaces/shop/replicasets?labelSelector=${encodeURIComponent(`${KEEPER_LABEL}=true`)}`)) as {
        items: KeeperObject[];
      };
      const [keeper] = keepers.items;
      return keeper && old?.metadata.ownerReferences?.[0]?.name === keeper.metadata.name ? { keeper, evicted: kept!.metadata.uid } : undefined;
    },
    { timeoutMs: 180_000, intervalMs: 1000, describe: amd64 },
  );
}

/** An entry of an object's metadata.managedFields, the parts read here. */
export interface ManagedFieldsEntry {
  readonly manager?: string;
  readonly operation?: string;
  readonly subresource?: string;
  readonly time?: string;
  readonly fieldsV1?: Record<string, unknown>;
}

/** The managers that own a field (`f:spec.f:replicas` style path) of an object, optionally of a subresource. */
export function fieldOwners(o: { metadata?: { managedFields?: readonly ManagedFieldsEntry[] } }, path: readonly string[], subresource?: string): string[] {
  return (o.metadata?.managedFields ?? [])
    .filter((m) => (m.subresource ?? '') === (subresource ?? ''))
    .filter((m) => {
      let node: unknown = m.fieldsV1;
      for (const p of path) node = (node as Record<string, unknown> | undefined)?.[p];
      return node !== undefined;
    })
    .map((m) => m.manager ?? '');
}

/** The ExtendedDeployments of the examples: phase, observed generation, generation. */
export async function extendedDeployments(): Promise<{ key: string; phase?: string; generation?: number; observed?: number; message?: string }[]> {
  const list = (await rawRequest('GET', `/apis/${API_GROUP}/v1beta1/extendeddeployments`)) as {
    items: {
      metadata: { name: string; namespace: string; generation?: number };
      status?: { phase?: string; observedGeneration?: number; conditions?: { type: string; message?: string }[] };
    }[];
  };
  return list.items.map((ed) => ({
    key: `${ed.metadata.namespace}/${ed.metadata.name}`,
    ...(ed.status?.phase !== undefined && { phase: ed.status.phase }),
    ...(ed.metadata.generation !== undefined && { generation: ed.metadata.generation }),
    ...(ed.status?.observedGeneration !== undefined && { observed: ed.status.observedGeneration }),
    ...(ed.status?.conditions?.find((c) => c.type === 'Progressing')?.message !== undefined && {
      message: ed.status?.conditions?.find((c) => c.type === 'Progressing')?.message,
    }),
  }));
}

/**
 * `edctl approve` for every ExtendedDeployment waiting for confirmation, as the operator of a new install does: a gated
 * example (gpu-inference) is created by groups, and its first pods wait for approval like an upgrade's.
 */
export async function approveWaiting(): Promise<void> {
  for (const ed of await extendedDeployments()) {
    if (ed.phase !== 'WaitingForConfirmation') continue;
    const [namespace, name] = ed.key.split('/');
    edctl(['approve', name ?? '', '-n', namespace ?? '']);
  }
}

/**
 * Waits until every ExtendedDeployment of the examples is Healthy at its current generation; with `approve`, passing
 * the gates of those created by groups (approveWaiting).
 */
export async function waitAllHealthy(what: string, timeoutMs = 300_000, approve = false): Promise<void> {
  await waitFor(
    what,
    async () => {
      if (approve) await approveWaiting();
      const eds = await extendedDeployments();
      return eds.length >= 4 && eds.every((e) => e.phase === 'Healthy' && e.observed === e.generation);
    },
    { timeoutMs, intervalMs: 1000, describe: extendedDeployments },
  );
}

/** `edctl approve` as a user runs it (the built CLI, the lab's admin kubeconfig). */
export function edctl(args: readonly string[]): string {
  const r = spawnSync(process.execPath, [join(repoRoot, 'lib', 'cli', 'main.js'), ...args, '--kubeconfig', kubeconfigPath()], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`edctl ${args.join(' ')} exited ${r.status}: ${r.stderr}${r.stdout}`);
  return r.stdout;
}

// ---------------------------------------------------------------------------------------------------------------
// sampling: what the engine showed against what the ExtendedDeployment was doing, once a second

/** One sample: the time, the engine's view (engine-specific fields) and the phase of `shop/web`. */
export interface Sample<T> {
  readonly at: number;
  readonly engine: T;
  readonly web?: string;
}

/** Samples `read` and the web service's phase every second until stopped; errors are recorded, never thrown. */
export class Sampler<T> {
  readonly samples: Sample<T>[] = [];
  readonly errors: string[] = [];
  private running = true;
  private readonly done: Promise<void>;

  constructor(read: () => Promise<T>) {
    this.done = (async () => {
      while (this.running) {
        // Stamped when the reads start, so a sample stamped after an instant saw nothing older than that instant.
        const at = Date.now();
        try {
          const [engine, eds] = await Promise.all([read(), extendedDeployments()]);
          const web = eds.find((e) => e.key === 'shop/web');
          this.samples.push({ at, engine, ...(web?.phase !== undefined && { web: web.phase }) });
        } catch (e) {
          this.errors.push((e as Error).message);
        }
        await sleep(1000);
      }
    })();
  }

  /** Samples taken in [from, to). */
  between(from: number, to = Infinity): Sample<T>[] {
    return this.samples.filter((s) => s.at >= from && s.at < to);
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.done;
  }

  /** Waits until a sample whose reads started after this call is in, so the last sample shows the present. */
  async catchUp(): Promise<void> {
    const now = Date.now();
    for (let i = 0; i < 100 && !this.samples.some((s) => s.at > now); i++) await sleep(100);
  }

  /** The timeline from `from` up to now (the last change included). */
  async timelineUntilNow(from: number, show: (t: T) => string): Promise<string> {
    await this.catchUp();
    return this.timeline(from, Infinity, show);
  }

  /** The samples as a timeline of changes (`+12.3 s  <engine view>  web=<phase>`), for the suite's report. */
  timeline(from: number, to: number, show: (t: T) => string): string {
    let last = '';
    const lines: string[] = [];
    for (const s of this.between(from, to)) {
      const line = `${show(s.engine)}  web=${s.web ?? '-'}`;
      if (line !== last) lines.push(`  +${((s.at - from) / 1000).toFixed(1).padStart(6)} s  ${line}`);
      last = line;
    }
    return lines.join('\n');
  }
}

// ---------------------------------------------------------------------------------------------------------------
// before and after a suite

const PROJECT_CRDS = [`deployregions.${API_GROUP}`, `extendeddeployments.${API_GROUP}`];

/**
 * Removes the project's CRDs (and with them whatever earlier suites left behind), so that the engine's first sync
 * creates them and its order can be read from the audit log. Later suites install them again (crds.ts).
 */
export async function removeProjectCrds(): Promise<void> {
  kubectl(['delete', 'crd', ...PROJECT_CRDS, '--ignore-not-found', '--wait=true', '--timeout=120s']);
}

/** Deletes what the examples created (every object of the commits' dist/), so the next suites find the lab as usual. */
export async function removeExamples(commits: readonly Commit[]): Promise<void> {
  const keys = new Set<string>();
  const docs: Manifest[] = [];
  for (const c of commits) {
    for (const o of distObjects(c)) {
      if (keys.has(objectKey(o))) continue;
      keys.add(objectKey(o));
      docs.push(o);
    }
  }
  const file = join(scratch, 'cleanup.yaml');
  writeFileSync(file, docs.map((d) => stringify(d)).join('---\n'));
  kubectl(['delete', '-f', file, '--ignore-not-found', '--wait=false']);
  const namespaces = docs.filter((d) => d.kind === 'Namespace').map((d) => d.metadata.name);
  await waitFor(
    "the examples' namespaces gone",
    async () => {
      const left = kubectl(['get', 'namespaces', '-o', 'name'])
        .split('\n')
        .map((l) => l.replace('namespace/', ''));
      return namespaces.every((n) => !left.includes(n));
    },
    { timeoutMs: 180_000, intervalMs: 2000 },
  );
}

/** Removes the scratch directory of rendered commits. */
export function removeScratch(): void {
  rmSync(scratch, { recursive: true, force: true });
}

// ---------------------------------------------------------------------------------------------------------------
// traffic mode Weighted: the agent's HTTPRoute and revision Services, which no commit holds

/**
 * web's traffic in mode Weighted: the agent's route `shop/web` attached to the lab's Gateway (startLabGateway), 25 %
 * to the new revision once group 1 is Ready, a short drain before the last group.
 */
/** The weight (of 10,000) of WEIGHTED_TRAFFIC's one step: the new release's at the gate after its first group. */
export const CANARY_WEIGHT = 2_500;

export const WEIGHTED_TRAFFIC: TrafficProps = {
  mode: 'Weighted',
  service: { port: 80, targetPort: 'http' },
  route: { parentRefs: [gatewayParentRef()], hostnames: ['shop.example.com'] },
  steps: [CANARY_WEIGHT / 100],
  drainSeconds: 2,
};

/**
 * web's strategy for a Weighted rollout that stops at a gate with two revisions weighted: a first group of one pod per
 * region (`Beta`), then groups of half a region, and one approval, after the first group. (At the barrier into the
 * last group the previous revisions are drained to weight 0 before it: with two groups that would be the gate.)
 */
export const GATE_AFTER_CANARY: StrategyProps = { rolloutStrategy: 'Beta', needWaitingForConfirm: true, needFirstConfirm: true };

/** A release of web with traffic mode Weighted, the agent installed with AgentInstall's `traffic` (its write Role). */
export function weightedRelease(label: string, version: string, strategy: StrategyProps = {}): Commit {
  return webRelease(label, { version, strategy: { ...strategy, traffic: WEIGHTED_TRAFFIC } }, { traffic: true });
}

/**
 * A real gateway for the agent's routes: the Gateway API's standard CRDs, Traefik on the host (this lab has no network
 * namespace: Traefik routes nothing here, it only accepts routes, as a gateway of a cluster does, which is what makes
 * the agent count a step as applied), the GatewayClass and the Gateway `gateways/public` its web entry point serves.
 */
export async function startLabGateway(log: (s: string) => void): Promise<void> {
  await installGatewayApiCrds(log);
  const [webPort, metricsPort] = (await freePorts(2)) as [number, number];
  await startTraefik(metricsPort, log, webPort);
  applyServerSide({ objects: gatewayManifests(webPort) });
  await waitGatewayProgrammed(120_000);
}

/** Stops Traefik and removes the Gateway, its class and the Gateway API's CRDs (the suites after these expect none). */
export async function removeLabGateway(log: (s: string) => void): Promise<void> {
  await stopProcess(TRAEFIK, log);
  kubectl(['delete', 'namespace', GATEWAY_NAMESPACE, '--ignore-not-found', '--timeout=120s']);
  kubectl(['delete', 'gatewayclass', GATEWAY_CLASS, '--ignore-not-found', '--timeout=60s']);
  kubectl(['delete', ...gatewayApiCrdFiles().flatMap((f) => ['-f', f]), '--ignore-not-found', '--timeout=120s']);
}

/** What Traefik's Gateway provider writes route status as. */
const TRAEFIK_FIELD_MANAGER = 'traefik';

/** A Service or HTTPRoute as the API server holds it. */
export interface TrafficObject {
  metadata: {
    name: string;
    uid: string;
    resourceVersion: string;
    generation?: number;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    ownerReferences?: { apiVersion: string; kind: string; name: string; uid: string; controller?: boolean }[];
    managedFields?: { manager: string; subresource?: string }[];
  };
  spec?: {
    rules?: { backendRefs?: { name: string; weight?: number }[] }[];
    selector?: Record<string, string>;
  };
  status?: { parents?: { conditions?: { type: string; status: string; observedGeneration?: number }[] }[] };
}

/** web's traffic as its status records it: the rollout revision, group, the weights by revision, the accepted generation. */
export interface WebTraffic {
  readonly uid: string;
  readonly phase?: string;
  readonly revision?: string;
  readonly currentGroup?: number;
  readonly traffic?: { revision?: string; group?: number; weights?: { revision: string; weight: number }[]; appliedGeneration?: number; message?: string };
}

export async function webTraffic(): Promise<WebTraffic> {
  const ed = (await rawRequest('GET', `/apis/${API_GROUP}/v1beta1/namespaces/shop/extendeddeployments/web`)) as {
    metadata: { uid: string };
    status?: Omit<WebTraffic, 'uid'>;
  };
  const s = ed.status ?? {};
  return {
    uid: ed.metadata.uid,
    ...(s.phase !== undefined && { phase: s.phase }),
    ...(s.revision !== undefined && { revision: s.revision }),
    ...(s.currentGroup !== undefined && { currentGroup: s.currentGroup }),
    ...(s.traffic !== undefined && { traffic: s.traffic }),
  };
}

/**
 * Every object in `shop` that is not Git's and that traffic shifting made: the HTTPRoute `web` (undefined when there is
 * none) and the Services labelled with web's name that carry a revision label (`web-<revision>`); by `Kind/ns/name`.
 */
export async function agentTrafficObjects(): Promise<Map<string, TrafficObject>> {
  const objects = new Map<string, TrafficObject>();
  const routes = (await rawRequest('GET', '/apis/gateway.networking.k8s.io/v1/namespaces/shop/httproutes')) as { items: TrafficObject[] };
  for (const r of routes.items) objects.set(`HTTPRoute/shop/${r.metadata.name}`, r);
  const selector = encodeURIComponent(`${NAME_LABEL}=web,${REVISION_LABEL}`);
  const services = (await rawRequest('GET', `/api/v1/namespaces/shop/services?labelSelector=${selector}`)) as { items: TrafficObject[] };
  for (const s of services.items) objects.set(`Service/shop/${s.metadata.name}`, s);
  return objects;
}

/** uid and resourceVersion of each object: what a prune (a new uid, or none) or any write (a new resourceVersion) changes. */
export function identities(objects: ReadonlyMap<string, TrafficObject>): Record<string, string> {
  return Object.fromEntries([...objects].map(([key, o]) => [key, `${o.metadata.uid}@${o.metadata.resourceVersion}`]));
}

/** The revisions web's regions go to (their ReplicaSets' template): the canary side of a rollout. */
export async function webTargetRevisions(): Promise<string[]> {
  const selector = encodeURIComponent(`${NAME_LABEL}=web,!${KEEPER_LABEL}`);
  const list = (await rawRequest('GET', `/apis/apps/v1/namespaces/shop/replicasets?labelSelector=${selector}`)) as {
    items: { spec?: { template?: { metadata?: { labels?: Record<string, string> } } } }[];
  };
  return list.items.map((rs) => rs.spec?.template?.metadata?.labels?.[REVISION_LABEL] ?? '').sort();
}

/**
 * Waits until web's status shows weights of its current rollout accepted (and `want`) and the agent made exactly what
 * they say: the HTTPRoute `shop/web` whose every rule's backendRefs are the status' weights, accepted by every parent
 * Gateway at the route's current generation (the one the status records), and a Service `web-<revision>` per weighted
 * revision. Then asserts that each is controlled by the ExtendedDeployment (its uid), labelled as the agent's, carries
 * no engine's tracking mark and was written by the agent alone. Returns the status, the objects and the weights by
 * revision.
 */
export async function expectAgentTraffic(
  what: string,
  want: (t: WebTraffic) => boolean,
): Promise<{ traffic: WebTraffic; objects: Map<string, TrafficObject>; weights: Record<string, number> }> {
  // One consistent reading: the status the same before and after the objects were read, and the objects what it says
  // (the agent writes the status first, then the route; it deletes the Services of revisions no longer weighted a
  // moment after the step). Never consistent within the time is the failure, with the last reading.
  const byService = (t: WebTraffic) =>
    Object.fromEntries((t.traffic?.weights ?? []).map((w) => [`Service/shop/${revisionServiceName('web', w.revision)}`, w.weight]));
  const read = async () => {
    const traffic = await webTraffic();
    const objects = await agentTrafficObjects();
    const again = await webTraffic();
    const route = objects.get('HTTPRoute/shop/web');
    const weights = byService(traffic);
    return {
      traffic,
      objects,
      applied: traffic.traffic?.revision === traffic.revision && traffic.traffic?.appliedGeneration !== undefined,
      statusStable: JSON.stringify(again) === JSON.stringify(traffic),
      routeGeneration: route?.metadata.generation,
      backends: (route?.spec?.rules ?? []).map((r) => Object.fromEntries((r.backendRefs ?? []).map((b) => [`Service/shop/${b.name}`, b.weight]))),
      accepted: (route?.status?.parents ?? []).map((p) => p.conditions?.find((c) => c.type === 'Accepted')),
      weights,
      services: [...objects.keys()].filter((k) => k.startsWith('Service/')).sort(),
    };
  };
  const reading = await waitFor(
    what,
    async () => {
      const r = await read();
      const g = r.routeGeneration;
      const consistent =
        r.applied &&
        r.statusStable &&
        want(r.traffic) &&
        g !== undefined &&
        g === r.traffic.traffic?.appliedGeneration &&
        r.backends.length > 0 &&
        r.backends.every((b) => JSON.stringify(b) === JSON.stringify(r.weights)) &&
        r.accepted.length > 0 &&
        r.accepted.every((c) => c?.status === 'True' && c.observedGeneration === g) &&
        JSON.stringify(r.services) === JSON.stringify(Object.keys(r.weights).sort());
      return consistent ? r : undefined;
    },
    { timeoutMs: 300_000, intervalMs: 1000, describe: async () => ({ ...(await read()), objects: undefined }) },
  );
  const { traffic, objects, weights } = reading;
  const byRevision = Object.fromEntries((traffic.traffic?.weights ?? []).map((w) => [w.revision, w.weight]));
  expect(Object.keys(weights).length, 'weighted revisions').toBeGreaterThan(0);
  for (const [key, o] of objects) {
    expect(o.metadata.ownerReferences, `owner of ${key}`).toEqual([
      expect.objectContaining({ apiVersion: `${API_GROUP}/v1beta1`, kind: 'ExtendedDeployment', name: 'web', uid: traffic.uid, controller: true }),
    ]);
    expect(o.metadata.labels?.[MANAGED_BY_LABEL], `managed-by of ${key}`).toBe(AGENT_MANAGER);
    const marks = [...Object.keys(o.metadata.labels ?? {}), ...Object.keys(o.metadata.annotations ?? {})].filter(
      (k) => k.startsWith('argocd.argoproj.io/') || k.startsWith('kustomize.toolkit.fluxcd.io/') || k === 'app.kubernetes.io/instance',
    );
    expect(marks, `GitOps tracking marks on ${key}`).toEqual([]);
    // Whoever ever wrote an object is among its field managers: the agent alone wrote these, the gateway only the
    // route's status; an engine's apply (argocd-controller, kustomize-controller) would be here for good.
    const managers = (sub: boolean) => [...new Set((o.metadata.managedFields ?? []).filter((m) => !!m.subresource === sub).map((m) => m.manager))];
    expect(managers(false), `field managers of ${key}`).toEqual([AGENT_FIELD_MANAGER]);
    expect(
      managers(true).filter((m) => m !== TRAEFIK_FIELD_MANAGER),
      `field managers of ${key}'s status`,
    ).toEqual([]);
  }
  return { traffic, objects, weights: byRevision };
}

/** Asserts that every weight is on one of `revisions` (web's regions' targets), 10,000 in all. */
export function expectAllWeightOn(weights: Readonly<Record<string, number>>, revisions: readonly string[], what: string): void {
  expect(
    Object.keys(weights).every((r) => revisions.includes(r)),
    `weights only for ${what}`,
  ).toBe(true);
  expect(Object.values(weights).reduce((a, b) => a + b, 0)).toBe(10_000);
}

/** Asserts the split at the gate after the canary group: `canary` of 10,000 on the new `revisions`, the rest on old ones. */
export function expectCanarySplit(weights: Readonly<Record<string, number>>, revisions: readonly string[], canary: number): void {
  const sum = (entries: [string, number][]) => entries.reduce((a, [, w]) => a + w, 0);
  const isNew = Object.entries(weights).filter(([r]) => revisions.includes(r));
  const isOld = Object.entries(weights).filter(([r]) => !revisions.includes(r));
  expect(isNew.length, 'new revisions weighted').toBeGreaterThan(0);
  expect(isOld.length, 'old revisions weighted').toBeGreaterThan(0);
  expect(sum(isNew), "the new release's weight at the gate").toBe(canary);
  expect(sum(isOld), "the old release's weight at the gate").toBe(10_000 - canary);
}
