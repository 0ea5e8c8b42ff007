import { readFileSync } from 'node:fs';
import { evaluate } from '@marcbachmann/cel-js';
import { describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { HEALTH_SCRIPTS, healthScript } from './argocd-cm.js';
import { fixtureDirs, fixtureNames, loadFixture } from './fixtures.js';
import { fluxStatus, type FluxStatus, type HealthCheckExpr } from './flux-health.js';
import { ARGO_CASES, FLUX_CASES, FLUX_KINDS, type FluxDir } from './health-cases.js';
import { ARGO_HEALTH_STATUSES, runHealthScript } from './lua-health.js';
import { regionReading, rolloutReading } from '../core/rollout/status-reading.js';

/**
 * Argo CD has Suspended, Flux does not: a rollout that waits (paused, aborted, for approval) is InProgress there. Flux
 * reports an object without any status as Unknown (the expressions cannot evaluate `status`) and keeps waiting, as it
 * does for InProgress.
 */
const FLUX_FOR_ARGO: Record<string, readonly FluxStatus[]> = {
  Healthy: ['Current'],
  Progressing: ['InProgress', 'Unknown'],
  Suspended: ['InProgress'],
  Degraded: ['Failed'],
};

type Spec = { spec?: { healthCheckExprs?: HealthCheckExpr[] } };

/** A kind's expressions in the example Flux Kustomization: the file users copy is the one tested. */
function fluxExprs(dir: FluxDir): HealthCheckExpr {
  const { apiVersion, kind } = FLUX_KINDS[dir];
  const docs = parseAllDocuments(readFileSync('examples/gitops/flux-kustomization.yaml', 'utf8')).map((d) => d.toJS() as Spec);
  const exprs = docs.flatMap((d) => d.spec?.healthCheckExprs ?? []).find((e) => e.apiVersion === apiVersion && e.kind === kind);
  if (!exprs) throw new Error(`no healthCheckExprs for ${apiVersion} ${kind} in examples/gitops/flux-kustomization.yaml`);
  return exprs;
}

/** [folder, name, expected] for every case of one engine's table, for it.each. */
function rows<T>(cases: Readonly<Record<string, Readonly<Record<string, T>>>>): [string, string, T][] {
  return Object.entries(cases).flatMap(([dir, byName]) => Object.entries(byName).map(([name, expected]): [string, string, T] => [dir, name, expected]));
}

describe('health expectations (gitops/health-cases.ts)', () => {
  it('name every fixture file, and every expectation names a fixture file', () => {
    const files = Object.fromEntries(fixtureDirs().map((dir) => [dir, fixtureNames(dir)]));
    const expected: Record<string, string[]> = {};
    for (const [dir, name] of [...rows(ARGO_CASES), ...rows(FLUX_CASES)]) expected[dir] = [...new Set([...(expected[dir] ?? []), name])].sort();
    expect(files).toEqual(expected);
  });

  it('list, for each kind an engine covers, all of its fixtures', () => {
    for (const [dir, byName] of [...Object.entries(ARGO_CASES), ...Object.entries(FLUX_CASES)])
      expect({ dir, names: Object.keys(byName).sort() }).toEqual({ dir, names: fixtureNames(dir) });
  });

  it('give Argo CD expectations exactly for the kinds with a Lua script (ReplicaSets have a built-in check)', () => {
    expect(Object.keys(ARGO_CASES).sort()).toEqual(HEALTH_SCRIPTS.map((s) => s.kind.toLowerCase()).sort());
    expect(Object.keys(ARGO_CASES)).not.toContain('replicaset');
  });

  it('keep each fixture in the folder of its kind', () => {
    for (const dir of fixtureDirs())
      for (const name of fixtureNames(dir)) expect({ name, kind: String(loadFixture(dir, name)['kind']).toLowerCase() }).toEqual({ name, kind: dir });
  });
});

describe('Argo CD health: ExtendedDeployment', () => {
  it('covers every phase the agent writes', () => {
    const phases = new Set(fixtureNames('ExtendedDeployment').map((n) => loadFixture('ExtendedDeployment', n).status?.['phase']));
    for (const phase of ['Progressing', 'Paused', 'WaitingForConfirmation', 'Healthy', 'Degraded']) expect(phases).toContain(phase);
  });

  it.each(Object.entries(ARGO_CASES.extendeddeployment).map(([name, c]) => [name, c.status, c] as const))('%s → %s', async (name, _status, expected) => {
    const result = await runHealthScript(healthScript('ExtendedDeployment'), loadFixture('ExtendedDeployment', name));
    expect(ARGO_HEALTH_STATUSES).toContain(result.status);
    expect(result).toEqual(expected);
  });
});

describe('Argo CD health: DeployRegion', () => {
  it.each(Object.entries(ARGO_CASES.deployregion).map(([name, c]) => [name, c.status, c] as const))('%s → %s', async (name, _status, expected) => {
    expect(await runHealthScript(healthScript('DeployRegion'), loadFixture('DeployRegion', name))).toEqual(expected);
  });

  it('is never Degraded, so failing nodes cannot fail a sync in wave -1, and says which phase the region is in', async () => {
    for (const name of fixtureNames('DeployRegion')) {
      const fixture = loadFixture('DeployRegion', name);
      const result = await runHealthScript(healthScript('DeployRegion'), fixture);
      expect({ name, status: result.status }).not.toEqual({ name, status: 'Degraded' });
      const phase = fixture.status?.['phase'];
      if (typeof phase === 'string' && result.status === 'Healthy') expect(result.message.startsWith(`${phase}: `), result.message).toBe(true);
    }
    const phases = fixtureNames('DeployRegion').map((n) => loadFixture('DeployRegion', n).status?.['phase']);
    expect(phases).toEqual(expect.arrayContaining(['Degraded', 'Failed']));
  });
});

describe('the core reading (core/rollout/status-reading.ts, what edctl shows) says what the Lua checks say', () => {
  const cases = rows(ARGO_CASES).map(([dir, name, expected]) => [dir, name, expected.status, expected] as const);

  it.each(cases)('%s %s → %s', (dir, name, _status, expected) => {
    const fixture = loadFixture(dir, name);
    const reading = dir === 'deployregion' ? regionReading(fixture) : rolloutReading(fixture);
    expect({ status: reading.health, message: reading.message }).toEqual(expected);
  });
});

describe('Flux health (CEL) agrees with the Argo CD check on the same fixtures', () => {
  it.each(Object.entries(FLUX_CASES.extendeddeployment))('%s → %s', async (name, expected) => {
    const fixture = loadFixture('ExtendedDeployment', name);
    const flux = fluxStatus(fixture, fluxExprs('extendeddeployment'));
    expect(flux.status).toBe(expected);
    const argo = await runHealthScript(healthScript('ExtendedDeployment'), fixture);
    expect(FLUX_FOR_ARGO[argo.status]).toContain(flux.status);
    expect(FLUX_FOR_ARGO[rolloutReading(fixture).health]).toContain(flux.status);
  });

  it('only an object without status fails to evaluate, and Flux keeps waiting on it', () => {
    const flux = fluxStatus(loadFixture('ExtendedDeployment', 'no-status'), fluxExprs('extendeddeployment'));
    expect(flux).toEqual({ status: 'Unknown', error: expect.stringMatching(/status/) });
  });

  it('on every fixture with a status exactly one expression holds, whatever the evaluation order', () => {
    const exprs = fluxExprs('extendeddeployment');
    for (const [name, expected] of Object.entries(FLUX_CASES.extendeddeployment)) {
      const fixture = loadFixture('ExtendedDeployment', name);
      if (!fixture.status) continue;
      const holds = (expr: string | undefined) => evaluate(expr ?? 'false', fixture) === true;
      const held = { inProgress: holds(exprs.inProgress), failed: holds(exprs.failed), current: holds(exprs.current) };
      expect({ name, ...held }).toEqual({ name, inProgress: expected === 'InProgress', failed: expected === 'Failed', current: expected === 'Current' });
    }
  });
});

describe('Flux health (CEL): ReplicaSet, without fail-fast', () => {
  it.each(Object.entries(FLUX_CASES.replicaset))('%s → %s', (name, expected) => {
    expect(fluxStatus(loadFixture('ReplicaSet', name), fluxExprs('replicaset'))).toEqual({ status: expected });
  });

  it('has no `failed` expression, so no ReplicaSet can fail the Kustomization early', () => {
    const exprs = fluxExprs('replicaset');
    expect(exprs.failed).toBeUndefined();
    for (const name of fixtureNames('ReplicaSet')) expect(fluxStatus(loadFixture('ReplicaSet', name), exprs).status).not.toBe('Failed');
  });

  it('checks the observed generation itself, not only through Flux’s pre-check', () => {
    // Flux skips its pre-check when status.observedGeneration is absent, and another CEL engine may not have it at all.
    const { current } = fluxExprs('replicaset');
    expect(evaluate(current, loadFixture('ReplicaSet', 'regional-generation-not-observed'))).toBe(false);
    expect(evaluate(current, loadFixture('ReplicaSet', 'regional-not-yet-observed'))).toBe(false);
  });

  it('calls a ReplicaSet regional by its extendeddeployment.io/name label alone', () => {
    const exprs = fluxExprs('replicaset');
    const plain = loadFixture('ReplicaSet', 'plain-short-of-replicas');
    const labelled = { ...plain, metadata: { ...plain.metadata, labels: { app: 'cache', 'extendeddeployment.io/name': 'cache' } } };
    expect([fluxStatus(plain, exprs).status, fluxStatus(labelled, exprs).status]).toEqual(['InProgress', 'Current']);
  });
});

/** The Deployment entry that docs/flux.md offers for `subsetType: Deployment`: the snippet readers copy is tested. */
function docsDeploymentExprs(): HealthCheckExpr {
  const blocks = [...readFileSync('docs/flux.md', 'utf8').matchAll(/```yaml\n([\s\S]*?)```/g)].map((m) => parse(m[1] ?? '') as Spec);
  const exprs = blocks.flatMap((b) => b.spec?.healthCheckExprs ?? []).find((e) => e.apiVersion === 'apps/v1' && e.kind === 'Deployment');
  if (!exprs) throw new Error('no healthCheckExprs for apps/v1 Deployment in docs/flux.md');
  return exprs;
}

describe('Flux health (CEL): the Deployment entry in docs/flux.md', () => {
  /** A live Deployment at generation 2; `status` may set or (with undefined) drop observedGeneration. */
  const deployment = (labels: Record<string, string>, status: Record<string, number | undefined>) => ({
    metadata: { name: 'web-amd64', namespace: 'shop', generation: 2, labels },
    spec: { replicas: 4 },
    status: Object.fromEntries(Object.entries({ observedGeneration: 2, replicas: 4, ...status }).filter(([, v]) => v !== undefined)),
  });
  const regional = { app: 'web', 'extendeddeployment.io/name': 'web', 'extendeddeployment.io/region': 'amd64' };

  it.each([
    ['regional, mid-rollout with unavailable replicas', deployment(regional, { updatedReplicas: 1, availableReplicas: 2 }), 'Current'],
    ['regional, generation not observed', deployment(regional, { observedGeneration: 1, updatedReplicas: 4, availableReplicas: 4 }), 'InProgress'],
    ['regional, no observedGeneration yet', deployment(regional, { observedGeneration: undefined, replicas: 0 }), 'InProgress'],
    ['plain, old replicas still available', deployment({ app: 'web' }, { updatedReplicas: 1, availableReplicas: 4 }), 'InProgress'],
    ['plain, updated but not available', deployment({ app: 'web' }, { updatedReplicas: 4, availableReplicas: 3 }), 'InProgress'],
    ['plain, complete', deployment({ app: 'web' }, { updatedReplicas: 4, availableReplicas: 4 }), 'Current'],
  ] as const)('%s → %s', (_name, obj, expected) => {
    expect(fluxStatus(obj, docsDeploymentExprs())).toEqual({ status: expected });
  });

  it('has no `failed` expression either', () => {
    expect(docsDeploymentExprs().failed).toBeUndefined();
  });
});
