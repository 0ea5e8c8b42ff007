// A real Flux kustomize-controller (built from its Go module, test/cluster/go/flux) syncs the committed crds/ and dist/
// into the lab with the shipped examples/gitops/flux-kustomization.yaml (only its source swapped for an
// ExternalArtifact), while the real agent runs under the install's own ServiceAccount. Then commits rendered with the
// constructs roll the web service: the Kustomization's health follows the rollout, a deadline and an invalid spec fail
// it through the ExtendedDeployment's own expressions (never through kstatus' fail-fast on a ReplicaSet), a fix gets
// through while a region's nodes are down, and Flux never fights the agent over spec.replicas. With traffic mode
// Weighted (the install with AgentInstall's `traffic`, Traefik accepting routes on the lab's Gateway), the HTTPRoute
// and revision Services the agent owns stay out of the inventory, and no reconcile applies, prunes or changes them.
import { readFileSync } from 'node:fs';
import type { V1PersistentVolume } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { removeLocalDisks } from './local-disks.js';
import { FLUX_CASES } from '../../gitops/health-cases.js';
import { fixtureFile } from '../../gitops/fixtures.js';
import { FLUX_NAMESPACE, FluxLab, applyServerSide, fluxHealth, kubectl, startFlux, stopGitops, type FluxRevision } from '../cluster/gitops.js';
import { ensureGatewayBinaries, repoRoot } from '../cluster/build.js';
import { failNodes, healNodes } from '../cluster/lab.js';
import type { AgentProcess } from './agent-process.js';
import {
  AGENT_FIELD_MANAGER,
  GATE_AFTER_CANARY,
  Sampler,
  changedObjects,
  committedTree,
  distObjects,
  edctl,
  agentTrafficObjects,
  evictKeptPod,
  expectAgentTraffic,
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
  identities,
  removeLabGateway,
  startAgentAsInstalled,
  startLabGateway,
  waitAllHealthy,
  webRelease,
  webTargetRevisions,
  expectAllWeightOn,
  expectCanarySplit,
  CANARY_WEIGHT,
  weightedRelease,
  type TrafficObject,
  type Commit,
} from './gitops-kit.js';
import { rawRequest, waitFor } from './helpers.js';

const APPS = 'extended-deployment-apps';
const CRDS = 'extended-deployment-crds';

interface Ready {
  readonly status?: string;
  readonly reason?: string;
  readonly message?: string;
  readonly revision?: string;
}

/** Both Kustomizations' Ready condition and the revision each last applied. */
interface FluxView {
  readonly apps: Ready;
  readonly crds: Ready;
}

/** The objects a Kustomization applied and would prune (`Kind/namespace/name`, from its status.inventory). */
async function inventory(name: string): Promise<string[]> {
  const k = (await rawRequest('GET', `/apis/kustomize.toolkit.fluxcd.io/v1/namespaces/${FLUX_NAMESPACE}/kustomizations/${name}`)) as {
    status?: { inventory?: { entries?: { id: string }[] } };
  };
  // An entry's id is `<namespace>_<name>_<group>_<kind>` (fluxcd/pkg/ssa ObjMetadata), names have no `_`.
  return (k.status?.inventory?.entries ?? []).map((e) => {
    const [namespace, n, , kind] = e.id.split('_');
    return namespace ? `${kind}/${namespace}/${n}` : `${kind}/${n}`;
  });
}

async function kustomization(name: string): Promise<Ready & { handled?: string }> {
  const k = (await rawRequest('GET', `/apis/kustomize.toolkit.fluxcd.io/v1/namespaces/${FLUX_NAMESPACE}/kustomizations/${name}`)) as {
    status?: {
      conditions?: { type: string; status: string; reason?: string; message?: string }[];
      lastAppliedRevision?: string;
      lastHandledReconcileAt?: string;
    };
  };
  const ready = k.status?.conditions?.find((c) => c.type === 'Ready');
  return {
    ...(ready && {
      status: ready.status,
      ...(ready.reason !== undefined && { reason: ready.reason }),
      ...(ready.message !== undefined && { message: ready.message }),
    }),
    ...(k.status?.lastAppliedRevision !== undefined && { revision: k.status.lastAppliedRevision }),
    ...(k.status?.lastHandledReconcileAt !== undefined && { handled: k.status.lastHandledReconcileAt }),
  };
}

const view = async (): Promise<FluxView> => ({ apps: await kustomization(APPS), crds: await kustomization(CRDS) });
const show = (v: FluxView) => `apps Ready=${v.apps.status ?? '-'}/${v.apps.reason ?? '-'}`;

/** One "server-side apply completed" line of kustomize-controller: which Kustomization, and what happened per object. */
interface ApplyRecord {
  readonly at: number;
  readonly kustomization: string;
  readonly revision: string;
  readonly output: Readonly<Record<string, string>>;
}

/** kustomize-controller's apply results since `since` (its JSON log: one line per apply with every object's action). */
function applies(flux: FluxLab, since: number): ApplyRecord[] {
  return readFileSync(flux.logFile, 'utf8')
    .split('\n')
    .filter((l) => l.includes('server-side apply completed'))
    .map((l) => JSON.parse(l) as { ts?: string; name?: string; revision?: string; output?: Record<string, string> })
    .map((l) => ({ at: Date.parse(l.ts ?? ''), kustomization: l.name ?? '', revision: l.revision ?? '', output: l.output ?? {} }))
    .filter((r) => r.at >= since);
}

/** The objects an apply changed (anything but `unchanged`). */
const touched = (r: ApplyRecord) =>
  Object.entries(r.output)
    .filter(([, action]) => action !== 'unchanged')
    .map(([key]) => key);

describe('Flux kustomize-controller syncs crds/ and dist/ with the shipped Kustomizations', () => {
  let flux: FluxLab;
  let agent: AgentProcess | undefined;
  let sampler: Sampler<FluxView> | undefined;
  let disks: V1PersistentVolume[] = [];
  const commits: Commit[] = [];
  const published: { commit: Commit; at: number; revision: FluxRevision }[] = [];
  const report: string[] = [];
  let gateway = false;

  /** Publishes a commit as the source's next revision; returns when. */
  function publish(commit: Commit): number {
    const at = Date.now();
    const revision = flux.publish(commit.root, commit.label);
    commits.push(commit);
    published.push({ commit, at, revision });
    return at;
  }

  /** The apply of the last published revision by the apps Kustomization, once it happened (health checks may still run). */
  async function waitApplied(): Promise<ApplyRecord> {
    // Since the publication: a lab kept from an earlier run has applied the same tree, under the same revision, before.
    const last = published.at(-1)!;
    const { revision } = last.revision;
    return waitFor(`${APPS} applied ${revision}`, async () => applies(flux, last.at).find((r) => r.kustomization === APPS && r.revision === revision), {
      timeoutMs: 180_000,
      intervalMs: 500,
      describe: () => kustomization(APPS),
    });
  }

  /** Publishes a commit and waits until the apps Kustomization has applied it. */
  async function deliver(commit: Commit): Promise<number> {
    const at = publish(commit);
    await waitApplied();
    return at;
  }

  /** What `flux reconcile` does: asks for a reconcile now and waits until the controller handled it. */
  async function forceReconcile(name = APPS): Promise<void> {
    const token = new Date().toISOString();
    kubectl(['annotate', 'kustomization', name, '-n', FLUX_NAMESPACE, '--overwrite', `reconcile.fluxcd.io/requestedAt=${token}`]);
    await waitFor(`${name} handled the reconcile request ${token}`, async () => (await kustomization(name)).handled === token, {
      timeoutMs: 180_000,
      intervalMs: 500,
    });
  }

  /** The first apply of each published revision changed exactly the objects whose render changed since the one before. */
  function expectEachApplyChangedItsDiff(): number {
    for (let i = 1; i < published.length; i++) {
      const { commit, at, revision } = published[i]!;
      const first = applies(flux, at).find((r) => r.kustomization === APPS && r.revision === revision.revision);
      expect(first, `an apply of ${commit.label}`).toBeDefined();
      expect(new Set(touched(first!)), `objects configured by ${commit.label}`).toEqual(changedObjects(published[i - 1]!.commit, commit));
    }
    return published.length - 1;
  }

  async function waitReady(what: string, timeoutMs = 300_000): Promise<void> {
    await waitFor(what, async () => (await kustomization(APPS)).status === 'True', { timeoutMs, intervalMs: 1000, describe: view });
  }

  beforeAll(async () => {
    await removeProjectCrds();
    flux = await startFlux((s) => console.error(s));
    // Traefik for the mode Weighted test, built here on a cold cache (minutes; test/cluster/README.md), not in the test.
    await ensureGatewayBinaries('traefik', (s) => console.error(s));
    disks = await provideExampleDisks();
  }, 45 * 60_000);

  afterAll(async () => {
    await sampler?.stop();
    if (report.length > 0) console.error(`\nFlux report\n${report.join('\n')}`);
    await healNodes('kubernetes.io/arch=arm64').catch(() => undefined);
    // Deleting the Kustomizations lets Flux garbage-collect what it applied (prune: true), as it would in a cluster.
    kubectl(['delete', 'kustomizations', '--all', '-n', FLUX_NAMESPACE, '--ignore-not-found', '--timeout=120s']);
    await agent?.stop();
    await stopGitops('flux');
    await removeExamples([committedTree(), ...commits]);
    await removeLocalDisks(disks);
    if (gateway) await removeLabGateway((s) => console.error(s));
    removeScratch();
  }, 300_000);

  test("Flux's own CEL health path gives every fixture the status the unit tests expect", async () => {
    const kustomizations = `${repoRoot}/examples/gitops/flux-kustomization.yaml`;
    const cases = Object.entries(FLUX_CASES).flatMap(([dir, byName]) => Object.entries(byName).map(([name, want]) => ({ file: fixtureFile(dir, name), want })));
    const got = await fluxHealth(
      kustomizations,
      cases.map((c) => c.file),
    );
    // Flux reports an expression it cannot evaluate (no status yet) as Unknown with the error, and keeps polling.
    expect(got.map((g) => ({ file: g.file, status: g.status, evaluated: g.error === undefined }))).toEqual(
      cases.map((c) => ({ file: c.file, status: c.want, evaluated: c.want !== 'Unknown' })),
    );
  }, 600_000);

  test('syncs CRDs, then DeployRegions, then workloads; every object of dist/ exists; both Kustomizations Ready', async () => {
    const v1 = committedTree();
    const since = publish(v1);
    applyServerSide({ objects: FluxLab.exampleKustomizations() });
    await waitApplied();
    sampler = new Sampler(view);
    agent = await startAgentAsInstalled();
    // The gated example (gpu-inference) is created by groups: its first pods wait for approval, as a new install's do.
    await waitAllHealthy('every example Healthy', 300_000, true);
    await waitReady(`${APPS} Ready`);
    expect((await kustomization(CRDS)).status).toBe('True');

    kubectl(['get', '-f', `${v1.root}/dist`, '-o', 'name']);
    report.push(expectApplyOrder(v1, since));
  }, 600_000);

  test('health follows a live rollout: InProgress through the approval gate (Flux has no Suspended), Ready after edctl approve', async () => {
    const v2 = webRelease('v2-gated', { version: '1.5.0', strategy: { needWaitingForConfirm: true } });
    const start = await deliver(v2);
    await waitFor('web waits for approval', async () => (await extendedDeployments()).find((e) => e.key === 'shop/web')?.phase === 'WaitingForConfirmation', {
      timeoutMs: 180_000,
      intervalMs: 500,
      describe: extendedDeployments,
    });
    // Flux handles a reconcile request only after the running health check ends, which at a gate is the
    // Kustomization's timeout; a new revision cancels it (CancelHealthCheckOnNewRevision). The same tree under a new
    // revision is a reconcile in the middle of the rollout: the agent's replica counts are no drift.
    const gateReconcile = Date.now();
    await deliver({ ...v2, label: 'v2-again' });
    const atGate = applies(flux, gateReconcile).filter((r) => r.kustomization === APPS);
    expect(atGate.length).toBeGreaterThan(0);
    for (const r of atGate) expect(touched(r), 'objects a reconcile at the gate changed').toEqual([]);
    expect((await extendedDeployments()).find((e) => e.key === 'shop/web')?.phase).toBe('WaitingForConfirmation');
    // The health check of v2 was canceled for v2-again (Ready=False, HealthCheckCanceled); v2-again's waits again.
    await waitFor(
      'the Kustomization waits at the gate',
      async () => {
        const k = await kustomization(APPS);
        return k.status === 'Unknown' && k.reason === 'Progressing' ? k : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 500, describe: view },
    );

    edctl(['approve', 'web', '-n', 'shop']);
    await waitAllHealthy('web Healthy after the approval');
    await waitReady(`${APPS} Ready after the rollout`);
    const samples = sampler!.between(start);
    const progressing = samples.filter((s) => s.web === 'Progressing' || s.web === 'WaitingForConfirmation');
    expect(progressing.length).toBeGreaterThan(0);
    for (const s of progressing) expect(s.engine.apps.status, `Kustomization while web was ${s.web}`).not.toBe('True');
    report.push(`timeline of the gated rollout (v2):\n${await sampler!.timelineUntilNow(start, show)}`);
  }, 600_000);

  test('no fight over spec.replicas: the agent alone owns it; only the objects changed in Git are configured, forced reconciles change nothing', async () => {
    for (const rs of await regionalReplicaSets()) {
      // Nobody owns a count that never left the API server's default of 1 (the agent writes only what differs).
      const owners = fieldOwners(rs, ['f:spec', 'f:replicas']);
      expect(owners, `spec.replicas of ${rs.metadata.namespace}/${rs.metadata.name}`).toEqual(
        rs.spec?.replicas === 1 && owners.length === 0 ? [] : [AGENT_FIELD_MANAGER],
      );
      expect(fieldOwners(rs, ['f:spec', 'f:template'])).toEqual(['kustomize-controller']);
    }
    // StatefulSet regions (examples/session-store.ts): the count and the rolling update's partition are the agent's,
    // each under a manager of its own; the template and the claims are Git's.
    const statefulSets = await regionalStatefulSets();
    expect(statefulSets.map((s) => `${s.metadata.namespace}/${s.metadata.name}`)).toEqual(['sessions/sessions-zone-a', 'sessions/sessions-zone-b']);
    for (const sts of statefulSets) {
      expect(fieldOwners(sts, ['f:spec', 'f:replicas']), `spec.replicas of ${sts.metadata.name}`).toEqual([AGENT_FIELD_MANAGER]);
      expect(fieldOwners(sts, ['f:spec', 'f:updateStrategy', 'f:rollingUpdate', 'f:partition'])).toEqual([`${AGENT_FIELD_MANAGER}-partition`]);
      expect(fieldOwners(sts, ['f:spec', 'f:template'])).toEqual(['kustomize-controller']);
      expect(fieldOwners(sts, ['f:spec', 'f:volumeClaimTemplates'])).toEqual(['kustomize-controller']);
    }
    const web = (await rawRequest('GET', '/apis/extendeddeployment.io/v1beta1/namespaces/shop/extendeddeployments/web')) as Parameters<typeof fieldOwners>[0];
    expect(fieldOwners(web, ['f:status'], 'status')).toEqual([AGENT_FIELD_MANAGER]);

    expectEachApplyChangedItsDiff();
    const since = Date.now();
    await forceReconcile();
    await forceReconcile();
    const after = applies(flux, since).filter((r) => r.kustomization === APPS);
    expect(after.length).toBeGreaterThanOrEqual(2);
    for (const r of after) {
      expect(touched(r)).toEqual([]);
      expect(Object.keys(r.output).length).toBe(distObjects(published.at(-1)!.commit).length);
    }
    report.push(`drift: ${after.length} forced reconciles after the rollouts, ${after.reduce((n, r) => n + touched(r).length, 0)} objects changed`);
  }, 600_000);

  test('a group past its deadline fails the Kustomization through the ExtendedDeployment, not kstatus on its ReplicaSet', async () => {
    const v3 = webRelease('v3-broken', { version: 'broken-1', strategy: { syncWaitTimeout: 20 } });
    const start = await deliver(v3);
    await waitFor('the Kustomization failed', async () => (await kustomization(APPS)).status === 'False', {
      timeoutMs: 300_000,
      intervalMs: 1000,
      describe: view,
    });
    const failed = await kustomization(APPS);
    expect(failed.reason).toBe('HealthCheckFailed');
    expect(failed.message).toContain('ExtendedDeployment/shop/web');
    expect(failed.message).not.toContain('ReplicaSet');
    expect((await extendedDeployments()).find((e) => e.key === 'shop/web')?.phase).toBe('Degraded');
    // Before the deadline the web pods crash-looped: the Kustomization waited, its health check did not fail on the
    // ReplicaSets (a health check canceled by the new revision is Ready=False too, with its own reason).
    const beforeDegraded = sampler!.between(start).filter((s) => s.web !== 'Degraded');
    expect(beforeDegraded.some((s) => s.web === 'Progressing')).toBe(true);
    for (const s of beforeDegraded) expect(s.engine.apps.reason, 'Kustomization before the deadline').not.toBe('HealthCheckFailed');
    report.push(`timeline of the broken release (v3):\n${await sampler!.timelineUntilNow(start, show)}`);
  }, 600_000);

  test('outage: with the arm64 nodes down, the fix still reaches the workloads', async () => {
    await failNodes('kubernetes.io/arch=arm64');
    try {
      await waitFor(
        'DeployRegion arm64 reports its nodes down',
        async () =>
          ['Failed', 'Degraded'].includes(
            ((await rawRequest('GET', '/apis/extendeddeployment.io/v1beta1/deployregions/arm64')) as { status?: { phase?: string } }).status?.phase ?? '',
          ),
        { timeoutMs: 120_000, intervalMs: 1000 },
      );
      const v4 = webRelease('v4-fix', { version: '1.5.1' });
      await deliver(v4);
      await waitFor(
        'both regional ReplicaSets of web at 1.5.1',
        async () => {
          const web = (await regionalReplicaSets()).filter((rs) => rs.metadata.namespace === 'shop');
          return web.length === 2 && web.every((rs) => rs.spec?.template?.spec?.containers?.[0]?.image?.includes(':1.5.1'));
        },
        { timeoutMs: 120_000, intervalMs: 1000 },
      );
    } finally {
      await healNodes('kubernetes.io/arch=arm64');
    }
    await waitAllHealthy('every example Healthy after the nodes healed');
    await waitReady(`${APPS} Ready after the fix`);
  }, 600_000);

  test("an invalid spec fails the Kustomization through the ExtendedDeployment's failed expression; the next good commit recovers", async () => {
    const good = published.at(-1)!.commit;
    const invalid = handEdited('v5-invalid', good, 'multi-arch-web.k8s.yaml', invalidSpec);
    await deliver(invalid);
    await waitFor('the Kustomization failed on the invalid spec', async () => (await kustomization(APPS)).status === 'False', {
      timeoutMs: 300_000,
      intervalMs: 1000,
      describe: view,
    });
    const failed = await kustomization(APPS);
    expect(failed.reason).toBe('HealthCheckFailed');
    expect(failed.message).toContain('ExtendedDeployment/shop/web');
    const web = (await rawRequest('GET', '/apis/extendeddeployment.io/v1beta1/namespaces/shop/extendeddeployments/web')) as {
      status?: { conditions?: { type: string; status: string }[] };
    };
    expect(web.status?.conditions?.find((c) => c.type === 'Valid')?.status).toBe('False');
    await deliver(webRelease('v6-good', { version: '1.5.2' }));
    await waitAllHealthy('web Healthy again');
    await waitReady(`${APPS} Ready again`);
  }, 600_000);

  test("self-heal: a hand edit of a rendered field is reverted by the next reconcile, the agent's replica counts stay", async () => {
    const before = (await regionalReplicaSets()).find((rs) => rs.metadata.namespace === 'shop' && rs.metadata.name === 'web-amd64')!;
    const rendered = distObjects(published.at(-1)!.commit).find((o) => objectKey(o) === 'ReplicaSet/shop/web-amd64')!;
    const renderedMinReady = (rendered['spec'] as { minReadySeconds: number }).minReadySeconds;
    kubectl(['patch', 'replicaset', 'web-amd64', '-n', 'shop', '--type=merge', '-p', JSON.stringify({ spec: { minReadySeconds: renderedMinReady + 37 } })]);
    const since = Date.now();
    await forceReconcile();
    const reverted = applies(flux, since).find((r) => r.kustomization === APPS);
    expect(reverted?.output['ReplicaSet/shop/web-amd64']).toBe('configured');
    const after = (await regionalReplicaSets()).find((rs) => rs.metadata.namespace === 'shop' && rs.metadata.name === 'web-amd64')!;
    expect(after.spec?.minReadySeconds).toBe(renderedMinReady);
    expect(after.spec?.replicas).toBe(before.spec?.replicas);
    expect(fieldOwners(after, ['f:spec', 'f:replicas'])).toEqual([AGENT_FIELD_MANAGER]);
  }, 300_000);

  test('a grey phase: the keeper the agent makes for an evicted kept pod is no drift: Flux neither applies nor prunes it', async () => {
    await deliver(webRelease('v7-grey', { version: '1.5.3', amd64Partition: 1 }));
    await waitAllHealthy('web Healthy in its grey phase at 1.5.3');
    await waitReady(`${APPS} Ready in the grey phase`);
    const { keeper } = await evictKeptPod();
    const since = Date.now();
    await forceReconcile();
    const after = applies(flux, since).filter((r) => r.kustomization === APPS);
    expect(after.length).toBeGreaterThanOrEqual(1);
    for (const r of after) {
      expect(touched(r)).toEqual([]);
      expect(Object.keys(r.output)).not.toContain(`ReplicaSet/shop/${keeper.metadata.name}`);
    }
    const still = (await rawRequest('GET', `/apis/apps/v1/namespaces/shop/replicasets/${keeper.metadata.name}`)) as { metadata: { uid: string } };
    expect(still.metadata.uid).toBe(keeper.metadata.uid);
    await waitReady(`${APPS} Ready after the eviction`);
    report.push(`grey phase (v7): keeper ${keeper.metadata.name} made the evicted kept pod again; a forced reconcile changed nothing and pruned nothing`);
  }, 600_000);

  test('every commit, the broken, the outage fix, the invalid and the grey one included, configured exactly the objects its render changed', () => {
    const checked = expectEachApplyChangedItsDiff();
    expect(checked).toBeGreaterThanOrEqual(7);
    report.push(`drift: each of ${checked} commits after the first configured exactly the objects its render changed`);
  });

  /**
   * What Flux holds against the agent's traffic objects: the apps Kustomization's inventory (what it applied, and would
   * prune once gone from Git) is exactly the last commit's dist/, which has no HTTPRoute and none of the agent's
   * Services. Were the route in dist/, it would be in the inventory; were the agent's objects in it, Flux would prune
   * them when a revision drops them.
   */
  async function expectNotInventoried(what: string, agentObjects: ReadonlyMap<string, TrafficObject>): Promise<number> {
    const dist = distObjects(published.at(-1)!.commit);
    const held = await inventory(APPS);
    expect(
      held.filter((k) => k.startsWith('HTTPRoute/') || agentObjects.has(k)),
      `${what}: the agent's objects in ${APPS}' inventory`,
    ).toEqual([]);
    expect(dist.filter((o) => o.kind === 'HTTPRoute' || agentObjects.has(objectKey(o))).map(objectKey), `${what}: the agent's objects in dist/`).toEqual([]);
    expect(new Set(held), `${what}: ${APPS}' inventory`).toEqual(new Set(dist.map(objectKey)));
    return held.length;
  }

  /**
   * A forced reconcile (`flux reconcile kustomization`) applies the last commit again: it changes nothing, applies none
   * of the agent's objects, and leaves them as they were (same uid: not pruned and made again; same resourceVersion: not
   * written), the Kustomization Ready at the same revision.
   */
  async function expectReconcileLeavesAgentObjects(what: string, agentObjects: ReadonlyMap<string, TrafficObject>): Promise<void> {
    const { revision } = published.at(-1)!.revision;
    const since = Date.now();
    await forceReconcile();
    const after = applies(flux, since).filter((r) => r.kustomization === APPS);
    expect(after.length, `${what}: applies of the forced reconcile`).toBeGreaterThanOrEqual(1);
    for (const r of after) {
      expect(r.revision).toBe(revision);
      expect(touched(r), `${what}: objects a forced reconcile changed`).toEqual([]);
      expect(
        Object.keys(r.output).filter((k) => k.startsWith('HTTPRoute/') || agentObjects.has(k)),
        `${what}: the agent's objects applied`,
      ).toEqual([]);
    }
    expect(identities(await agentTrafficObjects()), `${what}: the agent's route and Services after the forced reconcile`).toEqual(identities(agentObjects));
    const k = await kustomization(APPS);
    expect([k.status, k.revision], `${what}: ${APPS} after the forced reconcile`).toEqual(['True', revision]);
  }

  /** Waits until the apps Kustomization is Ready at the last published revision (applied and healthy). */
  async function waitReadyAtLast(what: string): Promise<void> {
    const { revision } = published.at(-1)!.revision;
    await waitFor(
      what,
      async () => {
        const k = await kustomization(APPS);
        return k.status === 'True' && k.revision === revision;
      },
      { timeoutMs: 300_000, intervalMs: 1000, describe: view },
    );
  }

  test("traffic mode Weighted: Flux neither applies, inventories, prunes nor changes the agent's HTTPRoute and revision Services through a rollout of a new image", async () => {
    const log = (s: string) => console.error(s);
    // The platform's gateway, before the commits: the Gateway API's CRDs, Traefik, the Gateway the route attaches to.
    await startLabGateway(log);
    gateway = true;

    // Mode Weighted and the agent's traffic Role, one commit; web rolls to 1.6.0 and the agent routes it.
    await deliver(weightedRelease('w1-weighted', '1.6.0'));
    await waitAllHealthy('web Healthy at 1.6.0 in mode Weighted');
    await waitReadyAtLast(`${APPS} Ready at w1-weighted`);
    const w1 = await expectAgentTraffic('web at 1.6.0, its route accepted', (t) => t.phase === 'Healthy');
    expectAllWeightOn(w1.weights, await webTargetRevisions(), '1.6.0');
    await expectNotInventoried('mode Weighted at 1.6.0', w1.objects);
    await expectReconcileLeavesAgentObjects('mode Weighted at 1.6.0', w1.objects);

    // A new image through Git, behind the approval gate: group 1 Ready, 25 % on 1.6.1 in the accepted route.
    const w2 = weightedRelease('w2-weighted', '1.6.1', GATE_AFTER_CANARY);
    const start = await deliver(w2);
    const gate = await expectAgentTraffic(
      'group 1 of 1.6.1 weighted and accepted at the gate',
      (t) => t.phase === 'WaitingForConfirmation' && t.traffic?.group === 1,
    );
    const targets2 = await webTargetRevisions();
    expectCanarySplit(gate.weights, targets2, CANARY_WEIGHT);
    // At the gate a reconcile request waits for the running health check; the same tree as a new revision is the
    // reconcile (it cancels the health check, CancelHealthCheckOnNewRevision): with two revisions' Services live.
    const atGate = Date.now();
    await deliver({ ...w2, label: 'w2-again' });
    const gateApplies = applies(flux, atGate).filter((r) => r.kustomization === APPS);
    expect(gateApplies.length).toBeGreaterThan(0);
    for (const r of gateApplies) {
      expect(touched(r), 'objects a reconcile at the gate changed').toEqual([]);
      expect(
        Object.keys(r.output).filter((k) => k.startsWith('HTTPRoute/') || gate.objects.has(k)),
        "the agent's objects applied at the gate",
      ).toEqual([]);
    }
    expect(identities(await agentTrafficObjects()), "the agent's route and Services after the reconcile at the gate").toEqual(identities(gate.objects));
    await expectNotInventoried('at the gate', gate.objects);

    edctl(['approve', 'web', '-n', 'shop']);
    await waitAllHealthy('web Healthy at 1.6.1');
    await waitReadyAtLast(`${APPS} Ready at w2 after the rollout`);
    const done = await expectAgentTraffic('1.6.1 carries all the weight', (t) => t.phase === 'Healthy');
    expectAllWeightOn(done.weights, targets2, '1.6.1');
    const route = done.objects.get('HTTPRoute/shop/web')!;
    expect(route.metadata.uid, 'the route updated in place through the rollout').toBe(w1.objects.get('HTTPRoute/shop/web')!.metadata.uid);
    expect(route.metadata.generation, 'the route written at each step').toBeGreaterThan(gate.objects.get('HTTPRoute/shop/web')!.metadata.generation ?? 0);
    const held = await expectNotInventoried('after the rollout', done.objects);
    await expectReconcileLeavesAgentObjects('after the rollout', done.objects);
    expectEachApplyChangedItsDiff();

    // The Kustomization was never Ready while web rolled (its health is the ExtendedDeployment's), and Ready after.
    const samples = sampler!.between(start);
    for (const s of samples.filter((x) => x.web === 'Progressing' || x.web === 'WaitingForConfirmation'))
      expect(s.engine.apps.status, `Kustomization while web was ${s.web}`).not.toBe('True');
    report.push(
      `mode Weighted: route generation ${route.metadata.generation}, ${done.objects.size - 1} revision Service(s) at 1.6.1 ` +
        `(${gate.objects.size - 1} at the gate, 1.6.1 at ${CANARY_WEIGHT / 100} %); inventory of ${held} objects without them; ` +
        'forced reconciles and the reconcile at the gate changed, applied and pruned none of them',
    );
    report.push(`timeline of the Weighted release (w2):\n${await sampler!.timelineUntilNow(start, show)}`);
  }, 900_000);
});
