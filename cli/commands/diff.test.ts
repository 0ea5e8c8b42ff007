// edctl diff and plan on changes outside the pod template, the risk summary they lead with, and diff --exit-code.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { run } from '../run.js';
import { captured, captureOutput, fixture, regions, sample } from '../test-support.js';

captureOutput();

/** The upstream sample with its strategy's `needWaitingForConfirm: false` line replaced by `strategy`. */
const withStrategy = (strategy: string) => fixture({ 'regions.yaml': regions, 'sample.yaml': sample.replace('    needWaitingForConfirm: false\n', strategy) });
const gated = withStrategy('    needWaitingForConfirm: true\n    syncWaitTimeout: 900\n');
const ungated = withStrategy('    syncWaitTimeout: 5\n');

describe('a strategy-only change', () => {
  it('diff lists the fields and leads with the risks, never "no change"', async () => {
    expect(await run(['diff', '-f', ungated, '--from', gated])).toBe(0);
    expect(captured.out.split('\n')).toEqual([
      'risks:',
      '  default/extendeddeployment-sample: approval gates removed (strategy.needWaitingForConfirm true -> false): rollouts no longer stop between groups',
      '  default/extendeddeployment-sample: progress deadline shortened from 900s to 5s (strategy.syncWaitTimeout 900 -> 5): a slower group makes the rollout Degraded',
      '',
      expect.stringMatching(
        /^ExtendedDeployment default\/extendeddeployment-sample: rollout revision [0-9a-f]{10}, replicas 2, pods keep their revision, 2 spec changes$/,
      ),
      '  spec.strategy.needWaitingForConfirm: true -> false',
      '  spec.strategy.syncWaitTimeout: 900 -> 5',
      '  region region1: none, replicas 1',
      '  region region2: none, replicas 1',
      '',
    ]);
  });

  it('plan lists the fields, and its markdown leads with the risk summary', async () => {
    expect(await run(['plan', '-f', ungated, '--from', gated])).toBe(0);
    expect(captured.out).toMatch(/^risks:\n {2}default\/extendeddeployment-sample: approval gates removed/);
    expect(captured.out).toContain(', pods keep their revision, 2 spec changes\n');
    expect(captured.out).toContain('spec changes:\n  spec.strategy.needWaitingForConfirm: true -> false\n  spec.strategy.syncWaitTimeout: 900 -> 5\n');
    captured.out = '';
    expect(await run(['plan', '-f', ungated, '--from', gated, '-o', 'markdown'])).toBe(0);
    expect(captured.out.split('\n').slice(0, 5)).toEqual([
      '**Risks:**',
      '',
      '- **`default/extendeddeployment-sample`**: approval gates removed (strategy.needWaitingForConfirm true -> false): rollouts no longer stop between groups',
      '- **`default/extendeddeployment-sample`**: progress deadline shortened from 900s to 5s (strategy.syncWaitTimeout 900 -> 5): a slower group makes the rollout Degraded',
      '',
    ]);
    expect(captured.out).toContain('Spec changes:\n\n- `spec.strategy.needWaitingForConfirm: true -> false`\n');
  });

  it('says in markdown that no risk was found, and prints no risks without a base', async () => {
    expect(await run(['plan', '-f', gated, '--from', ungated, '-o', 'markdown'])).toBe(0);
    expect(captured.out).toMatch(/^\*\*Risks:\*\* none found\.\n\n### ExtendedDeployment/);
    captured.out = '';
    expect(await run(['plan', '-f', gated, '-o', 'markdown'])).toBe(0);
    expect(captured.out).toMatch(/^### ExtendedDeployment/);
  });

  it('adds specChanges and risks to the JSON of diff and plan', async () => {
    expect(await run(['diff', '-f', ungated, '--from', gated, '-o', 'json'])).toBe(0);
    const diff = JSON.parse(captured.out) as { extendedDeployments: { change: string; specChanges: unknown[] }[]; risks: { kind: string }[] };
    expect(diff.extendedDeployments.map((e) => [e.change, e.specChanges.length])).toEqual([['changed', 2]]);
    expect(diff.risks.map((r) => r.kind)).toEqual(['approval-gates-removed', 'deadline-shortened']);
    captured.out = '';
    expect(await run(['plan', '-f', ungated, '--from', gated, '-o', 'json'])).toBe(0);
    const plan = JSON.parse(captured.out) as { extendedDeployments: { specChanges: unknown[] }[]; risks: { kind: string; message: string }[] };
    expect(plan.extendedDeployments[0]?.specChanges).toHaveLength(2);
    expect(plan.risks).toEqual(diff.risks);
  });
});

describe('edctl diff --exit-code', () => {
  it.each([
    ['something differs', ungated, gated, 1],
    ['only a field outside the pod template differs', withStrategy('    pause: true\n'), 'examples/upstream-sample', 1],
    ['nothing differs', gated, gated, 0],
  ])('%s: exits %i, quietly', async (_, after, before, code) => {
    expect(await run(['diff', '-f', after, '--from', before, '--exit-code'])).toBe(code);
    expect(captured.err).toBe('');
    expect(captured.out).not.toBe('');
  });

  it('sees a DeployRegion change also without an ExtendedDeployment, and counts it as a difference', async () => {
    const moved = fixture({ 'regions.yaml': regions.replace('extendeddeployment.io/region: region2', 'extendeddeployment.io/region: zone-9') });
    const base = fixture({ 'regions.yaml': regions });
    expect(await run(['diff', '-f', moved, '--from', base, '--exit-code'])).toBe(1);
    expect(captured.out).toBe(
      'DeployRegion region2: changed\n  spec.matchLabels["extendeddeployment.io/region"]: region2 -> zone-9\n\nNo ExtendedDeployments.\n',
    );
  });

  it('exits 0 without --exit-code, whatever differs', async () => {
    expect(await run(['diff', '-f', ungated, '--from', gated])).toBe(0);
  });

  it('is documented in the help', async () => {
    expect(await run(['diff', '--help'])).toBe(0);
    expect(captured.out).toContain('--exit-code');
  });
});

describe('edctl diff of a fleet render', () => {
  const example = (name: string) => readFileSync(`examples/fleet/${name}`, 'utf8');
  const before = fixture({ 'fleet.yaml': example('fleet.yaml'), 'regions.yaml': example('regions.yaml'), 'web.yaml': example('web.yaml') });
  const after = fixture({
    'fleet.yaml': example('fleet.yaml'),
    'regions.yaml': example('regions.yaml'),
    'web.yaml': example('web.yaml').replaceAll('1.4.0', '1.4.1').replace('replicas: 24', 'replicas: 30'),
  });

  it('diffs each member cluster against the same member before, under its name', async () => {
    expect(await run(['diff', '-f', after, '--from', before])).toBe(0);
    const clusters = captured.out.split('\n').filter((l) => l.startsWith('Cluster '));
    expect(clusters).toEqual(['Cluster canary-1:', 'Cluster eu-1:', 'Cluster us-1:']);
    expect(captured.out).toContain('  ExtendedDeployment shop/web: rollout revision ');
    expect(captured.out).toContain('    spec.replicas: 11 -> 14\n');
  });

  it('gives JSON per cluster, and --exit-code sees a change in any member', async () => {
    expect(await run(['diff', '-f', after, '--from', before, '-o', 'json'])).toBe(0);
    const { clusters } = JSON.parse(captured.out) as { clusters: { cluster: string; diff: { extendedDeployments: { replicas: number }[] } }[] };
    expect(clusters.map((c) => [c.cluster, c.diff.extendedDeployments[0]?.replicas])).toEqual([
      ['canary-1', 2],
      ['eu-1', 14],
      ['us-1', 14],
    ]);
    expect(await run(['diff', '-f', before, '--from', before, '--exit-code'])).toBe(0);
    expect(await run(['diff', '-f', after, '--from', before, '--exit-code'])).toBe(1);
  });
});
