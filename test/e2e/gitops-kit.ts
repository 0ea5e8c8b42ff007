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
import { examplesApp } from '../../examples/app.js';
import type { MultiArchWebRelease } from '../../examples/multi-arch-web.js';
import { repoRoot } from '../cluster/build.js';
import { kubectl, type Manifest } from '../cluster/gitops.js';
import { auditLogPath, kubeconfigPath } from '../cluster/lab.js';
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

/** The examples rendered with the constructs, with another release of the web service (`shop/web`). */
export function webRelease(label: string, release: MultiArchWebRelease): Commit {
  const root = join(scratch, label);
  cpSync(join(repoRoot, 'crds'), join(root, 'crds'), { recursive: true });
  writeApp(examplesApp(release), join(root, 'dist'));
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

/** The managers that own a field (`f:spec.f:replicas` style path) of an object, optionally of a subresource. */
export function fieldOwners(o: Owned, path: readonly string[], subresource?: string): string[] {
  return (o.metadata.managedFields ?? [])
    .filter((m) => (m.subresource ?? '') === (subresource ?? ''))
    .filter((m) => {
      let node: unknown = m.fieldsV1;
      for (const p of path) node = (node as Record<string, unknown> | undefined)?.[p];
      return node !== undefined;
    })
    .map((m) => m.manager);
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
