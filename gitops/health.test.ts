import { readFileSync } from 'node:fs';
import { evaluate } from '@marcbachmann/cel-js';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { healthScript } from './argocd-cm.js';
import { fixtureNames, loadFixture } from './fixtures.js';
import { fluxStatus, type FluxStatus, type HealthCheckExpr } from './flux-health.js';
import { ARGO_HEALTH_STATUSES, runHealthScript } from './lua-health.js';

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

const overview = '([Normal]amd64: 6/6; arm64: 4/4)';
/** Every ExtendedDeployment fixture: what Argo CD shows and what Flux computes. */
const ED_CASES: Record<string, { status: string; message: string; flux: FluxStatus }> = {
  'no-status': { status: 'Progressing', message: 'Waiting for the extended-deployment agent to report status', flux: 'Unknown' },
  'no-observed-generation': { status: 'Progressing', message: 'Waiting for the agent to observe generation 3', flux: 'InProgress' },
  'generation-not-observed': { status: 'Progressing', message: 'Waiting for the agent to observe generation 4', flux: 'InProgress' },
  'waiting-for-sync': { status: 'Progressing', message: `waiting for the sync: workload web-arm64 is not at revision 7d793037a0 ${overview}`, flux: 'InProgress' },
  progressing: { status: 'Progressing', message: `group 2 of 3 in progress ${overview}`, flux: 'InProgress' },
  'waiting-for-confirmation': {
    status: 'Suspended',
    message: `group 1 is done; group 2 waits for approval ${overview}; approve with: edctl approve web -n shop`,
    flux: 'InProgress',
  },
  paused: { status: 'Suspended', message: `paused by edctl pause in group 2 ${overview}`, flux: 'InProgress' },
  aborted: { status: 'Suspended', message: `rollout aborted in group 2; it holds until Git changes or it is resumed ${overview}`, flux: 'InProgress' },
  degraded: { status: 'Degraded', message: 'group 2 did not finish within 300s; the rollout stopped ([Normal]amd64: 6/6; arm64: 3/4)', flux: 'Failed' },
  'invalid-spec': { status: 'Degraded', message: 'Invalid spec: spec.regions: integer replicas add up to 12, more than spec.replicas (10)', flux: 'Failed' },
  'invalid-from-the-start': { status: 'Degraded', message: 'Invalid spec: spec.regions[1].name: DeployRegion "arm64" not found (known: amd64)', flux: 'Failed' },
  healthy: { status: 'Healthy', message: `every region runs its rendered revision ${overview}`, flux: 'Current' },
};

/** Every DeployRegion fixture: what Argo CD shows. */
const REGION_CASES: Record<string, { status: string; message: string }> = {
  'no-status': { status: 'Healthy', message: 'No node health reported for this region yet' },
  'generation-not-observed': { status: 'Progressing', message: 'Waiting for the agent to observe generation 2' },
  healthy: { status: 'Healthy', message: 'Healthy: 4 of 4 nodes ready' },
  degraded: { status: 'Degraded', message: 'Degraded: 3 of 4 nodes ready' },
  failed: { status: 'Degraded', message: 'Failed: 0 of 4 nodes ready' },
};

/** The ExtendedDeployment expressions of the example Flux Kustomization: the file users copy is the one tested. */
function fluxExprs(): HealthCheckExpr {
  const docs = parseAllDocuments(readFileSync('examples/gitops/flux-kustomization.yaml', 'utf8')).map((d) => d.toJS() as { spec?: { healthCheckExprs?: HealthCheckExpr[] } });
  const exprs = docs.flatMap((d) => d.spec?.healthCheckExprs ?? []).find((e) => e.kind === 'ExtendedDeployment');
  if (!exprs) throw new Error('no healthCheckExprs for ExtendedDeployment in examples/gitops/flux-kustomization.yaml');
  return exprs;
}

describe('Argo CD health: ExtendedDeployment', () => {
  it('has an expectation for every fixture and a fixture for every expectation', () => {
    expect(fixtureNames('ExtendedDeployment')).toEqual(Object.keys(ED_CASES).sort());
  });

  it('covers every phase the agent writes', () => {
    const phases = new Set(fixtureNames('ExtendedDeployment').map((n) => loadFixture('ExtendedDeployment', n).status?.['phase']));
    for (const phase of ['Progressing', 'Paused', 'WaitingForConfirmation', 'Healthy', 'Degraded']) expect(phases).toContain(phase);
  });

  it.each(Object.entries(ED_CASES).map(([name, c]) => [name, c.status, c] as const))('%s → %s', async (name, _status, expected) => {
    const result = await runHealthScript(healthScript('ExtendedDeployment'), loadFixture('ExtendedDeployment', name));
    expect(ARGO_HEALTH_STATUSES).toContain(result.status);
    expect(result).toEqual({ status: expected.status, message: expected.message });
  });
});

describe('Argo CD health: DeployRegion', () => {
  it('has an expectation for every fixture and a fixture for every expectation', () => {
    expect(fixtureNames('DeployRegion')).toEqual(Object.keys(REGION_CASES).sort());
  });

  it.each(Object.entries(REGION_CASES).map(([name, c]) => [name, c.status, c] as const))('%s → %s', async (name, _status, expected) => {
    expect(await runHealthScript(healthScript('DeployRegion'), loadFixture('DeployRegion', name))).toEqual(expected);
  });
});

describe('Flux health (CEL) agrees with the Argo CD check on the same fixtures', () => {
  it.each(Object.entries(ED_CASES).map(([name, c]) => [name, c.flux, c] as const))('%s → %s', async (name, _flux, expected) => {
    const fixture = loadFixture('ExtendedDeployment', name);
    const flux = fluxStatus(fixture, fluxExprs());
    expect(flux.status).toBe(expected.flux);
    const argo = await runHealthScript(healthScript('ExtendedDeployment'), fixture);
    expect(FLUX_FOR_ARGO[argo.status]).toContain(flux.status);
  });

  it('only an object without status fails to evaluate, and Flux keeps waiting on it', () => {
    const flux = fluxStatus(loadFixture('ExtendedDeployment', 'no-status'), fluxExprs());
    expect(flux).toEqual({ status: 'Unknown', error: expect.stringMatching(/status/) });
  });

  it('on every fixture with a status exactly one expression holds, whatever the evaluation order', () => {
    const exprs = fluxExprs();
    for (const [name, expected] of Object.entries(ED_CASES)) {
      const fixture = loadFixture('ExtendedDeployment', name);
      if (!fixture.status) continue;
      const holds = (expr: string | undefined) => evaluate(expr ?? 'false', fixture) === true;
      const held = { inProgress: holds(exprs.inProgress), failed: holds(exprs.failed), current: holds(exprs.current) };
      expect({ name, ...held }).toEqual({ name, inProgress: expected.flux === 'InProgress', failed: expected.flux === 'Failed', current: expected.flux === 'Current' });
    }
  });
});
