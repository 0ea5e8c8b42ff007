// A real Argo CD (application-controller and repo-server built from the argo-cd module, test/cluster/go/argocd) syncs
// the committed crds/ and dist/ from a local git repository with the shipped examples/gitops/argocd-application.yaml
// (only its repoURL swapped) and the project's health checks installed in argocd-cm as docs/argocd.md says, while the
// real agent runs under the install's own ServiceAccount. Commits rendered with the constructs then roll the web
// service: the health Argo CD shows follows the rollout (Progressing, Suspended at the approval gate, Healthy,
// Degraded past the deadline), a fix reaches wave 0 while a region's nodes are down, self-heal reverts a hand edit
// but never the agent's replica counts, and Argo CD never goes OutOfSync because of the agent, with the default diff
// and with server-side diff. With traffic mode Weighted (the install with AgentInstall's `traffic`, Traefik accepting
// routes on the lab's Gateway), the HTTPRoute and revision Services the agent owns are never drift: not managed, never
// OutOfSync, untouched by hard refreshes with either diff, through a rollout of a new image. Nothing but Git ever
// removes a field from an object Argo CD manages (server-side diff would take it for drift: field-removals.ts). Argo
// CD's own health code runs every fixture of gitops/fixtures/ as the unit tests expect.
import { readFileSync } from 'node:fs';
import type { V1PersistentVolume } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { removeLocalDisks } from './local-disks.js';
import { API_GROUP } from '../../core/api/identity.js';
import { GROUP_RECORD_ANNOTATION } from '../../core/labels.js';
import { fixtureFile } from '../../gitops/fixtures.js';
import { ARGO_CASES } from '../../gitops/health-cases.js';
import { ensureGatewayBinaries, repoRoot } from '../cluster/build.js';
import { ARGOCD_NAMESPACE, ArgocdLab, applyServerSide, argocdHealth, kubectl, startArgocd, stopGitops } from '../cluster/gitops.js';
import { failNodes, healNodes } from '../cluster/lab.js';
import type { AgentProcess } from './agent-process.js';
import {
  AGENT_FIELD_MANAGER,
  GATE_AFTER_CANARY,
  Sampler,
  approveWaiting,
  committedTree,
  distObjects,
  edctl,
  expectApplyOrder,
  extendedDeployments,
  fieldOwners,
  handEdited,
  invalidSpec,
  objectKey,
  regionalReplicaSets,
  provideExampleDisks,
  regionalStatefulSets,
  removeExamples,
  removeProjectCrds,
  removeScratch,
  evictKeptPod,
  agentTrafficObjects,
  expectAgentTraffic,
  identities,
  removeLabGateway,
  startAgentAsInstalled,
  startLabGateway,
  webTargetRevisions,
  expectAllWeightOn,
  expectCanarySplit,
  CANARY_WEIGHT,
  weightedRelease,
  waitAllHealthy,
  webRelease,
  type Commit,
} from './gitops-kit.js';
import { rawRequest, waitFor } from './helpers.js';
import { watchFieldRemovals, type FieldRemoval, type FieldRemovalWatch, type Watched } from './field-removals.js';

const APP = ArgocdLab.exampleApplication().metadata.name;
const ARGOCD_MANAGER = 'argocd-controller';

interface ResourceHealth {
  readonly status?: string;
  readonly message?: string;
}

/** What the Application shows: sync and health, the last operation, history, and the health of two of its resources. */
interface AppView {
  readonly sync?: string;
  readonly revision?: string;
  readonly health?: string;
  readonly operation?: string;
  readonly operationRevision?: string;
  /** The revision of each history entry. */
  readonly history: readonly string[];
  readonly web?: ResourceHealth;
  readonly arm64Region?: ResourceHealth;
}

interface Application {
  metadata?: { annotations?: Record<string, string> };
  status?: {
    reconciledAt?: string;
    sync?: { status?: string; revision?: string; revisions?: string[] };
    health?: { status?: string };
    operationState?: {
      phase?: string;
      syncResult?: {
        revision?: string;
        revisions?: string[];
        resources?: { kind: string; name: string; namespace?: string; syncPhase?: string; status?: string }[];
      };
    };
    history?: { id?: number; revision?: string; revisions?: string[] }[];
    resources?: {
      group?: string;
      kind: string;
      name: string;
      namespace?: string;
      status?: string;
      requiresPruning?: boolean;
      health?: ResourceHealth;
    }[];
  };
}

async function application(): Promise<Application> {
  return (await rawRequest('GET', `/apis/argoproj.io/v1alpha1/namespaces/${ARGOCD_NAMESPACE}/applications/${APP}`)) as Application;
}

const view = async (): Promise<AppView> => {
  const s = (await application()).status;
  const resource = (kind: string, name: string) => s?.resources?.find((r) => r.kind === kind && r.name === name)?.health;
  const web = resource('ExtendedDeployment', 'web');
  const arm64Region = resource('DeployRegion', 'arm64');
  return {
    ...(s?.sync?.status !== undefined && { sync: s.sync.status }),
    // Two sources (crds, dist) of one repository: every revision is the same commit.
    ...((s?.sync?.revisions?.[0] ?? s?.sync?.revision) !== undefined && { revision: s?.sync?.revisions?.[0] ?? s?.sync?.revision }),
    ...(s?.health?.status !== undefined && { health: s.health.status }),
    ...(s?.operationState?.phase !== undefined && { operation: s.operationState.phase }),
    ...((s?.operationState?.syncResult?.revisions?.[0] ?? s?.operationState?.syncResult?.revision) !== undefined && {
      operationRevision: s?.operationState?.syncResult?.revisions?.[0] ?? s?.operationState?.syncResult?.revision,
    }),
    history: (s?.history ?? []).map((h) => h.revisions?.[0] ?? h.revision ?? ''),
    ...(web && { web }),
    ...(arm64Region && { arm64Region }),
  };
};
const show = (v: AppView) => `app ${v.sync ?? '-'}/${v.health ?? '-'} op=${v.operation ?? '-'} ED web=${v.web?.status ?? '-'}`;

/** An automated sync the controller started: when (log times have whole seconds), to which revision, and of what. */
interface AutomatedSync {
  readonly at: number;
  readonly revision: string;
  /** The resources a self-heal syncs (`Kind/name`, those it found OutOfSync); empty for a sync of the whole app. */
  readonly resources: readonly string[];
}

/**
 * The automated syncs, from the controller's log: each start is logged once with the app's namespace (taken) and once
 * as an Event, then the operation it initialized, which names the resources of a self-heal.
 */
function automatedSyncs(argocd: ArgocdLab): AutomatedSync[] {
  const syncs: { at: number; revision: string; resources?: string[] }[] = [];
  for (const line of readFileSync(argocd.controllerLog, 'utf8').split('\n')) {
    if (line.includes('Initiated automated sync to') && line.includes('"app-namespace"')) {
      const l = JSON.parse(line) as { time: string; msg: string };
      syncs.push({ at: Date.parse(l.time), revision: /'([0-9a-f]+)/.exec(l.msg)?.[1] ?? '' });
    } else if (line.includes('Initialized new operation') && syncs.length > 0 && syncs.at(-1)!.resources === undefined) {
      const msg = (JSON.parse(line) as { msg: string }).msg;
      syncs.at(-1)!.resources = [...msg.matchAll(/SyncOperationResource\{Group:[^,]*,Kind:([^,]*),Name:([^,]*),/g)].map((m) => `${m[1]}/${m[2]}`);
    }
  }
  return syncs.map((s) => ({ ...s, resources: s.resources ?? [] }));
}

const showSync = (s: AutomatedSync) =>
  `${new Date(s.at).toISOString()} ${s.revision.slice(0, 12)} ${s.resources.length === 0 ? 'whole app' : `self-heal of ${s.resources.join(', ')}`}`;

describe('Argo CD syncs crds/ and dist/ with the shipped Application and health checks', () => {
  let argocd: ArgocdLab;
  let agent: AgentProcess | undefined;
  let sampler: Sampler<AppView> | undefined;
  let disks: V1PersistentVolume[] = [];
  const commits: { commit: Commit; sha: string; at: number; syncedAt?: number }[] = [];
  const report: string[] = [];
  let removals: FieldRemovalWatch | undefined;
  /** Windows in which OutOfSync is expected for a reason other than a commit (a hand edit that self-heal reverts). */
  const handEdits: [number, number][] = [];
  let gateway = false;

  /** Commits a tree on main, asks Argo CD to look now, and waits until it synced that commit. */
  async function deliver(commit: Commit): Promise<number> {
    const at = Date.now();
    const sha = argocd.commit(commit.root, commit.label);
    const entry: (typeof commits)[number] = { commit, sha, at };
    commits.push(entry);
    argocd.refresh(APP);
    await waitFor(
      `Argo CD synced ${commit.label} (${sha.slice(0, 12)})`,
      async () => {
        const v = await view();
        return v.sync === 'Synced' && v.revision === sha && v.operation === 'Succeeded' && v.operationRevision === sha;
      },
      { timeoutMs: 300_000, intervalMs: 500, describe: view },
    );
    entry.syncedAt = Date.now();
    return at;
  }

  async function webHealth(want: string, timeoutMs = 300_000): Promise<ResourceHealth> {
    return waitFor(
      `ED shop/web ${want} in Argo CD`,
      async () => {
        const web = (await view()).web;
        return web?.status === want ? web : undefined;
      },
      { timeoutMs, intervalMs: 500, describe: view },
    );
  }

  beforeAll(async () => {
    await removeProjectCrds();
    argocd = await startArgocd({}, (s) => console.error(s));
    // Every object Argo CD manages of the kinds the agent or edctl write: its tracking annotation names the object
    // itself (a Deployment's ReplicaSets inherit the Deployment's, which Argo CD does not take for theirs).
    const tracked = (o: Watched) =>
      o.metadata?.annotations?.['argocd.argoproj.io/tracking-id'] ===
      `${APP}:${(o.apiVersion ?? '').split('/').slice(0, -1).join('/')}/${o.kind}:${o.metadata?.namespace}/${o.metadata?.name}`;
    const kinds = ['/apis/apps/v1/replicasets', '/apis/apps/v1/deployments', '/apis/apps/v1/statefulsets', `/apis/${API_GROUP}/v1beta1/extendeddeployments`];
    removals = await watchFieldRemovals(kinds, tracked, ARGOCD_MANAGER);
    // Traefik for the mode Weighted test, built here on a cold cache (minutes; test/cluster/README.md), not in the test.
    await ensureGatewayBinaries('traefik', (s) => console.error(s));
    disks = await provideExampleDisks();
  }, 45 * 60_000);

  afterAll(async () => {
    removals?.stop();
    await sampler?.stop();
    if (report.length > 0) console.error(`\nArgo CD report\n${report.join('\n')}`);
    await healNodes('kubernetes.io/arch=arm64').catch(() => undefined);
    // The example Application has no resources finalizer: deleting it leaves the objects, which the suite removes.
    kubectl(['delete', 'applications', '--all', '-n', ARGOCD_NAMESPACE, '--ignore-not-found', '--timeout=60s']);
    await agent?.stop();
    await stopGitops('argocd');
    await removeExamples([committedTree(), ...commits.map((c) => c.commit)]);
    await removeLocalDisks(disks);
    if (gateway) await removeLabGateway((s) => console.error(s));
    removeScratch();
  }, 300_000);

  test("Argo CD's own health code gives every fixture the status and message the unit tests expect", async () => {
    const cm = `${repoRoot}/gitops/argocd/argocd-cm-resource-customizations.yaml`;
    const cases = Object.entries(ARGO_CASES).flatMap(([dir, byName]) => Object.entries(byName).map(([name, want]) => ({ file: fixtureFile(dir, name), want })));
    const got = await argocdHealth(
      cm,
      cases.map((c) => c.file),
    );
    expect(got.map((g) => ({ file: g.file, status: g.status, message: g.message, error: g.error }))).toEqual(
      cases.map((c) => ({ file: c.file, status: c.want.status, message: c.want.message, error: undefined })),
    );
  }, 600_000);

  test('syncs CRDs (wave -2), then DeployRegions (-1), then workloads (0); every object of dist/ exists; Synced and Healthy', async () => {
    const v1 = committedTree();
    const since = Date.now();
    const sha = argocd.commit(v1.root, v1.label);
    commits.push({ commit: v1, sha, at: since });
    applyServerSide({ objects: [ArgocdLab.exampleApplication()] });
    sampler = new Sampler(view);
    agent = await startAgentAsInstalled();
    // The gated example (gpu-inference) is created by groups: its first pods wait for approval, as a new install's do.
    await waitFor(
      'the Application Synced and Healthy at the first commit',
      async () => {
        await approveWaiting();
        const v = await view();
        return v.sync === 'Synced' && v.revision === sha && v.health === 'Healthy';
      },
      { timeoutMs: 300_000, intervalMs: 1000, describe: view },
    );
    commits[0]!.syncedAt = Date.now();
    await waitAllHealthy('every example Healthy', 300_000, true);

    kubectl(['get', '-f', `${v1.root}/dist`, '-o', 'name']);
    report.push(expectApplyOrder(v1, since));
  }, 900_000);

  test('health follows a live rollout: Progressing, Suspended at the approval gate until edctl approve, then Healthy', async () => {
    const start = await deliver(webRelease('v2-gated', { version: '1.5.0', strategy: { needWaitingForConfirm: true } }));
    const gate = await webHealth('Suspended');
    expect(gate.message).toContain('waits for approval');
    expect(gate.message).toContain('approve with: edctl approve web -n shop');
    expect((await extendedDeployments()).find((e) => e.key === 'shop/web')?.phase).toBe('WaitingForConfirmation');
    await new Promise((r) => setTimeout(r, 5000));
    expect((await view()).web?.status, 'still Suspended: nothing moves without approval').toBe('Suspended');
    const approvedAt = Date.now();
    edctl(['approve', 'web', '-n', 'shop']);
    await webHealth('Healthy');
    await waitAllHealthy('web Healthy after the approval');
    await waitFor('the Application Healthy', async () => (await view()).health === 'Healthy', { timeoutMs: 120_000, intervalMs: 500, describe: view });
    // Group 1 can be done before Argo CD writes its health down; group 2, after the approval, is seen Progressing.
    await sampler!.catchUp();
    const seen = (from: number, to = Infinity) => sampler!.between(from, to).map((s) => s.engine.web?.status);
    // Argo CD writes resource health down a moment after it changes: after the approval, Suspended may linger in a
    // sample or two, but once it is gone it never comes back.
    expect(seen(start, approvedAt)).toContain('Suspended');
    expect(seen(start)).toContain('Progressing');
    const after = seen(approvedAt);
    expect(after.slice(after.findIndex((h) => h !== 'Suspended'))).not.toContain('Suspended');
    expect(after.at(-1)).toBe('Healthy');
    report.push(`timeline of the gated rollout (v2):\n${await sampler!.timelineUntilNow(start, show)}`);
  }, 600_000);

  test('a group past its deadline is Degraded in Argo CD; the Application stays Synced', async () => {
    const start = await deliver(webRelease('v3-broken', { version: 'broken-1', strategy: { syncWaitTimeout: 20 } }));
    const degraded = await webHealth('Degraded');
    expect(degraded.message).toContain('did not finish within 20s');
    await waitFor('the Application Degraded', async () => (await view()).health === 'Degraded', { timeoutMs: 60_000, intervalMs: 500, describe: view });
    expect((await view()).sync).toBe('Synced');
    report.push(`timeline of the broken release (v3):\n${await sampler!.timelineUntilNow(start, show)}`);
  }, 600_000);

  test('outage: with the arm64 nodes down, the region is Healthy in Argo CD with its trouble in the message, and the fix reaches wave 0', async () => {
    await failNodes('kubernetes.io/arch=arm64');
    try {
      const region = await waitFor(
        'DeployRegion arm64 shows its nodes down in Argo CD',
        async () => {
          const r = (await view()).arm64Region;
          return r?.message?.match(/^(Failed|Degraded):/) ? r : undefined;
        },
        { timeoutMs: 120_000, intervalMs: 1000, describe: view },
      );
      expect(region.status).toBe('Healthy');
      await deliver(webRelease('v4-fix', { version: '1.5.1' }));
      const web = (await regionalReplicaSets()).filter((rs) => rs.metadata.namespace === 'shop');
      expect(web.map((rs) => rs.spec?.template?.spec?.containers?.[0]?.image)).toEqual([
        'registry.example.com/shop/web:1.5.1',
        'registry.example.com/shop/web:1.5.1-arm64',
      ]);
    } finally {
      await healNodes('kubernetes.io/arch=arm64');
    }
    await waitAllHealthy('every example Healthy after the nodes healed');
    await waitFor('the Application Healthy', async () => (await view()).health === 'Healthy', { timeoutMs: 120_000, intervalMs: 1000, describe: view });
  }, 600_000);

  test("an invalid spec is Degraded with the agent's reason; the next good commit recovers", async () => {
    const good = commits.at(-1)!.commit;
    await deliver(handEdited('v5-invalid', good, 'multi-arch-web.k8s.yaml', invalidSpec));
    const invalid = await webHealth('Degraded');
    expect(invalid.message).toMatch(/^Invalid spec: /);
    await deliver(webRelease('v6-good', { version: '1.5.2' }));
    await webHealth('Healthy');
    await waitAllHealthy('web Healthy again');
  }, 600_000);

  test('no fight over spec.replicas: the agent alone owns it, Argo CD never went OutOfSync between commits, one sync per commit', async () => {
    for (const rs of await regionalReplicaSets()) {
      // Nobody owns a count that never left the API server's default of 1 (the agent writes only what differs).
      const owners = fieldOwners(rs, ['f:spec', 'f:replicas']);
      expect(owners, `spec.replicas of ${rs.metadata.namespace}/${rs.metadata.name}`).toEqual(
        rs.spec?.replicas === 1 && owners.length === 0 ? [] : [AGENT_FIELD_MANAGER],
      );
      expect(fieldOwners(rs, ['f:spec', 'f:template'])).toEqual([ARGOCD_MANAGER]);
    }
    // StatefulSet regions (examples/session-store.ts): the count and the rolling update's partition are the agent's,
    // each under a manager of its own; the template and the claims are Git's.
    const statefulSets = await regionalStatefulSets();
    expect(statefulSets.map((s) => `${s.metadata.namespace}/${s.metadata.name}`)).toEqual(['sessions/sessions-zone-a', 'sessions/sessions-zone-b']);
    for (const sts of statefulSets) {
      expect(fieldOwners(sts, ['f:spec', 'f:replicas']), `spec.replicas of ${sts.metadata.name}`).toEqual([AGENT_FIELD_MANAGER]);
      expect(fieldOwners(sts, ['f:spec', 'f:updateStrategy', 'f:rollingUpdate', 'f:partition'])).toEqual([`${AGENT_FIELD_MANAGER}-partition`]);
      expect(fieldOwners(sts, ['f:spec', 'f:template'])).toEqual([ARGOCD_MANAGER]);
      expect(fieldOwners(sts, ['f:spec', 'f:volumeClaimTemplates'])).toEqual([ARGOCD_MANAGER]);
    }
    const web = (await rawRequest('GET', '/apis/extendeddeployment.io/v1beta1/namespaces/shop/extendeddeployments/web')) as Parameters<typeof fieldOwners>[0];
    expect(fieldOwners(web, ['f:status'], 'status')).toEqual([AGENT_FIELD_MANAGER]);

    const drift = outOfSyncBetweenCommits();
    expect(drift, 'samples OutOfSync after a commit had synced and before the next').toEqual([]);
    // Every sync is a commit's: its revision is in the history, and no automated sync started while no commit was
    // being delivered (a self-heal of a commit just made, while Argo CD still resolved main to the one before, is part
    // of that delivery; one the agent's writes caused would start later).
    const v = await view();
    expect(new Set(v.history)).toEqual(new Set(commits.map((c) => c.sha)));
    const syncs = automatedSyncs(argocd);
    const outside = syncs.filter((s) => !inDelivery(s, commits));
    expect(outside.map(showSync), "automated syncs outside a commit's delivery").toEqual([]);
    report.push(
      `drift (default diff): ${commits.length} commits, ${v.history.length} history entries, ${syncs.length} automated syncs ` +
        `(${new Set(syncs.map((s) => s.revision)).size} revisions), ${drift.length} OutOfSync samples between commits`,
    );
  }, 120_000);

  /** Samples that were not Synced while no commit was pending (after a commit synced, before the next one). */
  function outOfSyncBetweenCommits(): string[] {
    const bad: string[] = [];
    commits.forEach((c, i) => {
      const until = commits[i + 1]?.at ?? Date.now();
      for (const s of sampler!.between(c.syncedAt ?? until, until)) {
        if (handEdits.some(([from, to]) => s.at >= from && s.at <= to)) continue;
        if (s.engine.sync !== 'Synced') bad.push(`${new Date(s.at).toISOString()} after ${c.commit.label}: ${show(s.engine)}`);
      }
    });
    return bad;
  }

  /**
   * The automated syncs since the `since`th are the deliveries of the commits after the `commitsBefore`th: one sync of
   * the whole app to each, and no self-heal after a commit's delivery. Argo CD self-heals at once (no backoff before a
   * first attempt) whenever a comparison finds a resource OutOfSync after a successful sync; one started within a
   * delivery (a comparison right after the commit's own sync, its cache behind that sync's writes) is part of it, as
   * in the first test; one after it would be drift, the agent's or anyone's. The message lists every sync and what it
   * synced.
   */
  function expectOneSyncPerCommit(since: number, commitsBefore: number, what: string): void {
    const delivered = commits.slice(commitsBefore);
    const syncs = automatedSyncs(argocd).slice(since);
    const listing = syncs.map(showSync).join('\n') || 'none';
    const whole = syncs.filter((s) => s.resources.length === 0).map((s) => s.revision);
    expect(whole, `${what}: syncs of the whole app, one per commit\n${listing}`).toEqual(delivered.map((c) => c.sha));
    expect(syncs.filter((s) => !inDelivery(s, delivered)).map(showSync), `${what}: syncs after a commit's delivery\n${listing}`).toEqual([]);
  }

  /** Whether a sync started while one of `delivered` was delivered: from its commit (log times have whole seconds) to 2 s after it synced. */
  function inDelivery(sync: AutomatedSync, delivered: readonly (typeof commits)[number][]): boolean {
    return delivered.some((c) => sync.at >= c.at - 1000 && sync.at <= (c.syncedAt ?? Infinity) + 2000);
  }

  test("self-heal: a hand edit of a rendered field is reverted, the agent's replica counts stay", async () => {
    const rendered = distObjects(commits.at(-1)!.commit).find((o) => objectKey(o) === 'ReplicaSet/shop/web-amd64')!;
    const renderedMinReady = (rendered['spec'] as { minReadySeconds: number }).minReadySeconds;
    const before = (await regionalReplicaSets()).find((rs) => rs.metadata.namespace === 'shop' && rs.metadata.name === 'web-amd64')!;
    const from = Date.now();
    kubectl(['patch', 'replicaset', 'web-amd64', '-n', 'shop', '--type=merge', '-p', JSON.stringify({ spec: { minReadySeconds: renderedMinReady + 37 } })]);
    argocd.refresh(APP);
    const after = await waitFor(
      'self-heal reverted minReadySeconds',
      async () => {
        const rs = (await regionalReplicaSets()).find((r) => r.metadata.namespace === 'shop' && r.metadata.name === 'web-amd64');
        return rs?.spec?.minReadySeconds === renderedMinReady ? rs : undefined;
      },
      { timeoutMs: 120_000, intervalMs: 500 },
    );
    await waitFor('the Application Synced again', async () => (await view()).sync === 'Synced', { timeoutMs: 60_000, intervalMs: 500, describe: view });
    handEdits.push([from, Date.now()]);
    expect(after.spec?.replicas).toBe(before.spec?.replicas);
    expect(fieldOwners(after, ['f:spec', 'f:replicas'])).toEqual([AGENT_FIELD_MANAGER]);
  }, 300_000);

  test('server-side diff: the next commit syncs once and nothing the agent writes shows as a difference', async () => {
    argocd = await startArgocd({ serverSideDiff: true }, (s) => console.error(s));
    const syncsBefore = automatedSyncs(argocd).length;
    const historyBefore = (await view()).history.length;
    const commitsBefore = commits.length;
    const start = await deliver(webRelease('v7-ssd', { version: '1.5.3' }));
    await webHealth('Healthy');
    await waitAllHealthy('web Healthy at 1.5.3');
    // Several comparisons after the rollout (refresh forces one; the controller resyncs every 30 s).
    for (let i = 0; i < 3; i++) {
      argocd.refresh(APP);
      await new Promise((r) => setTimeout(r, 5000));
    }
    const drift = outOfSyncBetweenCommits().filter((d) => d.includes('v7-ssd'));
    expect(drift).toEqual([]);
    expect(commits.length).toBe(commitsBefore + 1);
    expect((await view()).history.length).toBe(historyBefore + 1);
    expectOneSyncPerCommit(syncsBefore, commitsBefore, 'server-side diff (v7)');
    report.push(`drift (server-side diff): 1 commit, ${drift.length} OutOfSync samples after it synced`);
    report.push(`timeline of the release with server-side diff (v7):\n${await sampler!.timelineUntilNow(start, show)}`);
  }, 600_000);

  test('a grey phase: the keeper the agent makes for an evicted kept pod is no drift; the commit syncs once', async () => {
    const syncsBefore = automatedSyncs(argocd).length;
    const historyBefore = (await view()).history.length;
    const commitsBefore = commits.length;
    await deliver(webRelease('v8-grey', { version: '1.5.4', amd64Partition: 1 }));
    await webHealth('Healthy');
    await waitAllHealthy('web Healthy in its grey phase at 1.5.4');
    const { keeper } = await evictKeptPod();
    expect(keeper.metadata.ownerReferences?.[0]).toMatchObject({ kind: 'ExtendedDeployment', name: 'web', controller: true });
    // The regional ReplicaSet made a new pod for the evicted one; it sheds it for the keeper's outside any group, and
    // that scale empties the group record rather than removing it (core/rollout/group-record.ts).
    const shed = await waitFor(
      'web-amd64 back at 3 replicas, its group record empty',
      async () => {
        const rs = (await regionalReplicaSets()).find((r) => r.metadata.namespace === 'shop' && r.metadata.name === 'web-amd64');
        return rs?.spec?.replicas === 3 && rs.metadata.annotations?.[GROUP_RECORD_ANNOTATION] === '' ? rs : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 500 },
    );
    expect(fieldOwners(shed, ['f:metadata', 'f:annotations', `f:${GROUP_RECORD_ANNOTATION}`])).toEqual([AGENT_FIELD_MANAGER]);
    for (let i = 0; i < 3; i++) {
      argocd.refresh(APP);
      await new Promise((r) => setTimeout(r, 5000));
    }
    const drift = outOfSyncBetweenCommits().filter((d) => d.includes('v8-grey'));
    expect(drift).toEqual([]);
    expect((await view()).history.length).toBe(historyBefore + 1);
    expectOneSyncPerCommit(syncsBefore, commitsBefore, 'grey phase (v8)');
    await webHealth('Healthy');
    report.push(`grey phase (v8): keeper ${keeper.metadata.name} made the evicted kept pod again; ${drift.length} OutOfSync samples, 1 sync`);
  }, 600_000);

  /**
   * A hard refresh (what `argocd app get --hard-refresh` asks: manifests generated again, no cache, then a comparison
   * with the cluster), and the wait until the controller has done it: the annotation gone and a comparison at or
   * after the request (reconciledAt has whole seconds).
   */
  async function hardRefresh(): Promise<void> {
    const at = Math.floor(Date.now() / 1000) * 1000;
    kubectl(['annotate', 'application', APP, '-n', ARGOCD_NAMESPACE, '--overwrite', 'argocd.argoproj.io/refresh=hard']);
    await waitFor(
      'Argo CD compared again after a hard refresh',
      async () => {
        const a = await application();
        return a.metadata?.annotations?.['argocd.argoproj.io/refresh'] === undefined && Date.parse(a.status?.reconciledAt ?? '') >= at;
      },
      { timeoutMs: 120_000, intervalMs: 500, describe: view },
    );
  }

  /**
   * Argo CD's comparison of the last commit with the cluster, as `argocd app diff` and the UI show it (the controller's
   * status: the app's sync status and each managed resource's): Synced at the commit, every resource Synced and none to
   * prune, exactly the objects of the commit's crds/ and dist/ managed (no HTTPRoute and no agent Service among them:
   * were the route in dist/, it would be one; were the agent's objects tracked, they would show here, OutOfSync or to
   * prune), and the health not Degraded. Returns the resource count.
   */
  async function expectNoDrift(what: string, agentObjects: ReadonlyMap<string, unknown>): Promise<number> {
    const { commit, sha } = commits.at(-1)!;
    const s = (await application()).status;
    expect(s?.sync?.status, `${what}: the Application's sync status`).toBe('Synced');
    expect(s?.sync?.revisions?.[0] ?? s?.sync?.revision, `${what}: the revision compared`).toBe(sha);
    expect(s?.health?.status, `${what}: the Application's health`).not.toBe('Degraded');
    const resources = s?.resources ?? [];
    const key = (r: (typeof resources)[number]) => (r.namespace ? `${r.kind}/${r.namespace}/${r.name}` : `${r.kind}/${r.name}`);
    expect(
      resources.filter((r) => r.status !== 'Synced' || r.requiresPruning).map((r) => `${key(r)} ${r.status}${r.requiresPruning ? ' (prune)' : ''}`),
      `${what}: resources OutOfSync or to prune`,
    ).toEqual([]);
    expect(
      resources.filter((r) => r.kind === 'HTTPRoute' || agentObjects.has(key(r))).map(key),
      `${what}: the agent's route and Services among Argo CD's resources`,
    ).toEqual([]);
    const dist = distObjects(commit);
    expect(dist.filter((o) => o.kind === 'HTTPRoute' || agentObjects.has(objectKey(o))).map(objectKey), `${what}: the agent's objects in dist/`).toEqual([]);
    expect(new Set(resources.filter((r) => r.kind !== 'CustomResourceDefinition').map(key)), `${what}: the resources Argo CD manages`).toEqual(
      new Set(dist.map(objectKey)),
    );
    return resources.length;
  }

  test("traffic mode Weighted: the agent's HTTPRoute and revision Services are no drift through a rollout of a new image, after hard refreshes, with either diff", async () => {
    const log = (s: string) => console.error(s);
    // The platform's gateway, before the commits: the Gateway API's CRDs, Traefik, the Gateway the route attaches to.
    await startLabGateway(log);
    gateway = true;
    const syncsBefore = automatedSyncs(argocd).length;
    const historyBefore = (await view()).history.length;
    const commitsBefore = commits.length;

    // Mode Weighted and the agent's traffic Role, one commit; web rolls to 1.6.0 and the agent routes it.
    await deliver(weightedRelease('w1-weighted', '1.6.0'));
    await waitAllHealthy('web Healthy at 1.6.0 in mode Weighted');
    const w1 = await expectAgentTraffic('web at 1.6.0, its route accepted', (t) => t.phase === 'Healthy');
    expectAllWeightOn(w1.weights, await webTargetRevisions(), '1.6.0');
    await hardRefresh();
    await expectNoDrift('mode Weighted at 1.6.0', w1.objects);
    expect(identities(await agentTrafficObjects()), "the agent's objects after the hard refresh").toEqual(identities(w1.objects));

    // A new image through Git, behind the approval gate: group 1 Ready, 25 % on 1.6.1 in the accepted route.
    const start = await deliver(weightedRelease('w2-weighted', '1.6.1', GATE_AFTER_CANARY));
    await webHealth('Suspended');
    const gate = await expectAgentTraffic(
      'group 1 of 1.6.1 weighted and accepted at the gate',
      (t) => t.phase === 'WaitingForConfirmation' && t.traffic?.group === 1,
    );
    const targets2 = await webTargetRevisions();
    expectCanarySplit(gate.weights, targets2, CANARY_WEIGHT);
    await hardRefresh();
    expect((await view()).health, 'the Application at the gate').toBe('Suspended');
    await expectNoDrift('at the gate', gate.objects);
    expect(identities(await agentTrafficObjects()), "the agent's objects at the gate after the hard refresh").toEqual(identities(gate.objects));

    edctl(['approve', 'web', '-n', 'shop']);
    await webHealth('Healthy');
    await waitAllHealthy('web Healthy at 1.6.1');
    const done = await expectAgentTraffic('1.6.1 carries all the weight', (t) => t.phase === 'Healthy');
    expectAllWeightOn(done.weights, targets2, '1.6.1');
    const route = done.objects.get('HTTPRoute/shop/web')!;
    expect(route.metadata.uid, 'the route updated in place through the rollout').toBe(w1.objects.get('HTTPRoute/shop/web')!.metadata.uid);
    expect(route.metadata.generation, 'the route written at each step').toBeGreaterThan(gate.objects.get('HTTPRoute/shop/web')!.metadata.generation ?? 0);
    await hardRefresh();
    const diff = (a: ArgocdLab) => (a.state.serverSideDiff ? 'server-side diff' : 'default diff');
    const firstDiff = diff(argocd);
    const managed = await expectNoDrift(`after the rollout (${firstDiff})`, done.objects);
    await waitFor('the Application Healthy', async () => (await view()).health === 'Healthy', { timeoutMs: 120_000, intervalMs: 500, describe: view });

    // The same comparison with the other diff (the suite runs server-side diff from its v7 commit on).
    argocd = await startArgocd({ serverSideDiff: !argocd.state.serverSideDiff }, log);
    await hardRefresh();
    await expectNoDrift(`after the rollout (${diff(argocd)})`, done.objects);
    expect(identities(await agentTrafficObjects()), "the agent's objects after both engines' comparisons").toEqual(identities(done.objects));

    // Never OutOfSync while the agent wrote its route and Services, one sync per commit, none of the agent's making.
    const drift = outOfSyncBetweenCommits().filter((d) => d.includes('w1-weighted') || d.includes('w2-weighted'));
    expect(drift, 'samples OutOfSync after a Weighted commit had synced').toEqual([]);
    expect((await view()).history.length).toBe(historyBefore + 2);
    expectOneSyncPerCommit(syncsBefore, commitsBefore, 'mode Weighted (w1, w2)');
    report.push(
      `mode Weighted: route generation ${route.metadata.generation}, ${done.objects.size - 1} revision Service(s) at 1.6.1 ` +
        `(${gate.objects.size - 1} at the gate, 1.6.1 at ${CANARY_WEIGHT / 100} %); ${managed} resources managed, none OutOfSync, ` +
        `${drift.length} OutOfSync samples, 2 syncs for 2 commits; hard refreshes with ${firstDiff}, then with ${diff(argocd)}`,
    );
    report.push(`timeline of the Weighted release (w2):\n${await sampler!.timelineUntilNow(start, show)}`);
  }, 900_000);

  test('nothing but Git removed a field from an object Argo CD manages, over every commit, eviction and hand edit above', () => {
    const seen = removals!;
    const show = (r: FieldRemoval) => `${new Date(r.at).toISOString()} ${r.object} rv ${r.resourceVersion}: ${r.field} removed by ${r.writers.join(', ')}`;
    expect(seen.removals.map(show), 'fields Argo CD does not own that left an object it manages').toEqual([]);
    // Not vacuous: the watches compared the versions of the regional workloads and of the ExtendedDeployments.
    const compared = Object.fromEntries([...seen.compared].sort());
    expect(compared['ReplicaSet'] ?? 0, 'ReplicaSet versions compared').toBeGreaterThan(commits.length * 10);
    expect(compared['StatefulSet'] ?? 0, 'StatefulSet versions compared').toBeGreaterThan(0);
    expect(compared['ExtendedDeployment'] ?? 0, 'ExtendedDeployment versions compared').toBeGreaterThanOrEqual(commits.length);
    report.push(`field removals: versions of managed objects compared with the one before ${JSON.stringify(compared)}, ${seen.removals.length} removals`);
  });
});
