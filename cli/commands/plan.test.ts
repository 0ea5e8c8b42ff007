// edctl plan and edctl diff on compat mode (subsetType Deployment), and on rollouts of very many groups: runs of
// equal groups print as one line, and the JSON stays bounded.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { run } from '../run.js';
import { captured, captureOutput, fixture } from '../test-support.js';

captureOutput();

const compatRegions = readFileSync('examples/compat-mode/deployregions.yaml', 'utf8');
const compat = readFileSync('examples/compat-mode/extendeddeployment.yaml', 'utf8');

/** One region of `replicas` in batches of one (zone-b takes the rest of spec.replicas, 2). */
const big = (replicas: number, strategy = '    batchSize: 1\n') =>
  compat
    .replace('  subsetType: Deployment\n', '')
    .replace('  replicas: 6\n', `  replicas: ${replicas + 2}\n`)
    .replace('      replicas: 4\n', `      replicas: ${replicas}\n`)
    .replace(/ {2}strategy:\n(?: {4}.*\n)+/, `  strategy:\n${strategy}`);

interface JsonPlan {
  readonly extendedDeployments: readonly {
    readonly groups: readonly { readonly group: number }[];
    readonly totalGroups: number;
    readonly runs: readonly { readonly from: number; readonly to: number }[];
    readonly approvals: readonly number[];
    readonly approvalRanges: readonly { readonly from: number; readonly to: number }[];
    readonly stopped?: { readonly group: number; readonly phase: string };
  }[];
}

describe('edctl plan, compat mode', () => {
  it('plans the example: groups are whole regions, one after another', async () => {
    expect(await run(['plan', '-f', 'examples/compat-mode'])).toBe(0);
    expect(captured.out.trimEnd().split('\n').slice(-3)).toEqual([
      'new pods per region after each group:',
      '  group 1: zone-a new 4 of 4, zone-b new 0 of 2',
      '  group 2: zone-a new 4 of 4, zone-b new 2 of 2',
    ]);
  });

  it('diffs a change of the example', async () => {
    const changed = fixture({ 'regions.yaml': compatRegions, 'ed.yaml': compat.replace('checkout:2.1.0', 'checkout:2.2.0') });
    expect(await run(['diff', '-f', changed, '--from', 'examples/compat-mode'])).toBe(0);
    expect(captured.out).toMatch(/^ExtendedDeployment shop\/checkout: rollout revision [0-9a-f]{10} -> [0-9a-f]{10}, replicas 6, 2 groups\n/m);
    expect(captured.out).toContain('    group 1: zone-a new 4 of 4, zone-b new 0 of 2\n    group 2: zone-a new 4 of 4, zone-b new 2 of 2\n');
  });

  it('says where the rollout stops when a region takes longer than the progress deadline', async () => {
    const slow = fixture({
      'regions.yaml': compatRegions,
      'ed.yaml': compat.replace('  replicas: 6\n', '  replicas: 102\n').replace('      replicas: 4\n', '      replicas: 100\n'),
    });
    expect(await run(['plan', '-f', slow])).toBe(0);
    expect(captured.out).toContain('rollout stops in group 1 (Degraded): group 1 did not finish within 300s');
    captured.out = '';
    expect(await run(['plan', '-f', slow, '-o', 'json'])).toBe(0);
    expect((JSON.parse(captured.out) as JsonPlan).extendedDeployments[0]?.stopped).toEqual(expect.objectContaining({ group: 1, phase: 'Degraded' }));
  });
});

describe('edctl plan, creation', () => {
  it('a new ExtendedDeployment is created by groups (Beta: one pod per region first), and the plan shows them', async () => {
    const base = fixture({ 'regions.yaml': compatRegions });
    const created = fixture({ 'regions.yaml': compatRegions, 'ed.yaml': compat.replace('  subsetType: Deployment\n', '') });
    expect(await run(['diff', '-f', created, '--from', base])).toBe(0);
    expect(captured.out).toContain(
      [
        '  rollout, new pods per region after each group:',
        '    group 1: zone-a new 1 of 1, zone-b new 1 of 1',
        '    group 2: zone-a new 2 of 2, zone-b new 2 of 2',
        '    group 3: zone-a new 3 of 3, zone-b new 2 of 2',
        '    group 4: zone-a new 4 of 4, zone-b new 2 of 2',
      ].join('\n'),
    );
  });
  it('a count change of regions that run pods is no rollout; a region grown from 0 is created by groups, keyed <revision>+1', async () => {
    const rs = compat.replace('  subsetType: Deployment\n', '');
    const base = fixture({ 'regions.yaml': compatRegions, 'ed.yaml': rs.replace('  replicas: 6\n', '  replicas: 4\n') });
    const grown = fixture({
      'regions.yaml': compatRegions,
      'ed.yaml': rs.replace('  replicas: 6\n', '  replicas: 7\n').replace('      replicas: 4\n', '      replicas: 5\n'),
    });
    expect(await run(['plan', '-f', grown, '--from', base, '-o', 'json'])).toBe(0);
    const [ed] = (
      JSON.parse(captured.out) as { extendedDeployments: { rolloutRevision: string; rolloutKey: string; groups: { regions: { updated: number }[] }[] }[] }
    ).extendedDeployments;
    // zone-a goes 4 -> 5 at once; zone-b (0 -> 2) takes its Beta groups.
    expect(ed?.rolloutKey).toBe(`${ed?.rolloutRevision}+1`);
    expect(ed?.groups.map((g) => g.regions.map((r) => r.updated))).toEqual([
      [5, 1],
      [5, 2],
    ]);
    captured.out = '';
    const scaled = fixture({
      'regions.yaml': compatRegions,
      'ed.yaml': rs.replace('  replicas: 6\n', '  replicas: 5\n').replace('      replicas: 4\n', '      replicas: 5\n'),
    });
    expect(await run(['diff', '-f', scaled, '--from', base])).toBe(0);
    expect(captured.out).not.toContain('new pods per region after each group');
  });
});

describe('edctl plan, partitions', () => {
  it('shows the old pods each region keeps, and groups that stop short of them', async () => {
    const partitioned = compat
      .replace('  subsetType: Deployment\n', '')
      .replace('      replicas: 4\n', '      replicas: 4\n      partition: "50%"\n')
      .replace(/ {2}strategy:\n(?: {4}.*\n)+/, '  strategy:\n    batchSize: 1\n');
    expect(await run(['plan', '-f', fixture({ 'regions.yaml': compatRegions, 'ed.yaml': partitioned })])).toBe(0);
    expect(captured.out).toMatch(/zone-a +rollout, keeps 2 old +4 /);
    expect(captured.out).toContain(['  group 1: zone-a new 1 of 5, zone-b new 1 of 3', '  group 2: zone-a new 2 of 4, zone-b new 2 of 2'].join('\n'));
  });
});

describe('edctl plan, adoption', () => {
  it('names the workload a region adopts first, in text and JSON', async () => {
    const adopting = compat
      .replace('  subsetType: Deployment\n', '')
      .replace('      replicas: 4\n', '      replicas: 4\n      adopt: { kind: Deployment, name: web }\n');
    const dir = fixture({ 'regions.yaml': compatRegions, 'ed.yaml': adopting });
    expect(await run(['plan', '-f', dir])).toBe(0);
    expect(captured.out).toMatch(/zone-a +rollout, adopts Deployment\/web first +4 /);
    expect(captured.out).not.toMatch(/zone-b .*adopts/);
    captured.out = '';
    expect(await run(['plan', '-f', dir, '-o', 'json'])).toBe(0);
    const regions = (JSON.parse(captured.out) as { extendedDeployments: { regions: { name: string; adopts?: string }[] }[] }).extendedDeployments[0]?.regions;
    expect(regions?.map((r) => [r.name, r.adopts])).toEqual([
      ['zone-a', 'Deployment/web'],
      ['zone-b', undefined],
    ]);
  });
});

describe('edctl plan, many groups', () => {
  it('prints a run of equal groups as one line, in text and markdown', async () => {
    const dir = fixture({ 'regions.yaml': compatRegions, 'ed.yaml': big(1_000) });
    expect(await run(['plan', '-f', dir])).toBe(0);
    expect(captured.out).toContain('1,000 groups\n');
    expect(captured.out).toContain('  groups 3–999: zone-a +1 new each (new 3 of 1,001 → 999 of 1,001), zone-b new 2 of 2\n');
    expect(captured.out.split('\n').filter((l) => l.startsWith('  group')).length).toBeLessThan(6);
    captured.out = '';
    expect(await run(['plan', '-f', dir, '-o', 'markdown'])).toBe(0);
    expect(captured.out).toContain('  groups 3–999 (+1 each) : 2, 999\n');
  });

  it('keeps the JSON bounded: every group up to 1,000, beyond that the ends of each run, with every group in runs', async () => {
    const gated = '    batchSize: 1\n    needWaitingForConfirm: true\n';
    expect(await run(['plan', '-f', fixture({ 'regions.yaml': compatRegions, 'ed.yaml': big(1_000_000, gated) }), '-o', 'json'])).toBe(0);
    const [ed] = (JSON.parse(captured.out) as JsonPlan).extendedDeployments;
    expect(ed?.totalGroups).toBe(1_000_000);
    expect(ed?.groups.length).toBeLessThan(10);
    expect(ed?.runs.reduce((n, r) => n + r.to - r.from + 1, 0)).toBe(1_000_000);
    expect(ed?.approvalRanges).toEqual([{ from: 2, to: 1_000_000 }]);
    expect(ed?.approvals).toEqual([2, 1_000_000]);
  });
});

describe('edctl plan, traffic', () => {
  const weighted = (traffic: string) =>
    compat.replace('  subsetType: Deployment\n', '').replace(/ {2}strategy:\n(?: {4}.*\n)+/, `  strategy:\n    batchSize: 2\n${traffic}`);
  const route = '    traffic:\n      mode: Weighted\n      route:\n        parentRefs: [{ name: public, namespace: gateways }]\n';

  it('shows the weight of each group, the drain before the last, and the analysis at the barriers (text, JSON, markdown)', async () => {
    const analysis =
      '      steps: [20]\n      analysis:\n        prometheus: { address: "http://prometheus:9090" }\n' +
      '        metrics:\n          - name: error-rate\n            query: sum(rate(errors{service="{{name}}-{{revision}}"}[{{window}}]))\n            threshold: { op: "<", value: 0.05 }\n';
    const files = fixture({ 'regions.yaml': compatRegions, 'ed.yaml': weighted(route + analysis) });
    expect(await run(['plan', '-f', files])).toBe(0);
    const text = captured.out;
    // Group 2 is past the steps: 5 of 8 Ready pods are new. The last group is at 100 once the previous revisions drained.
    expect(text).toContain(
      "traffic (Weighted): new revision's weight after each group: 1: 20%, 2: 62.5%, 3: 100% (the previous revisions drain 30s at weight 0 before group 3)",
    );
    expect(text).toContain('analysis before each next group (every 30s over 2m, on failure Hold):\n  error-rate < 0.05, 3 in a row, no data: Wait');

    captured.out = '';
    expect(await run(['plan', '-f', files, '-o', 'json'])).toBe(0);
    const plan = JSON.parse(captured.out) as {
      extendedDeployments: { totalGroups: number; traffic: { mode: string; weights: { group: number; percent: number }[] } }[];
    };
    const [ed] = plan.extendedDeployments;
    expect(ed?.traffic.mode).toBe('Weighted');
    expect(ed?.traffic.weights).toHaveLength(ed!.totalGroups);
    expect(ed?.traffic.weights.at(-1)).toEqual({ group: ed!.totalGroups, percent: 100 });
    // Past the steps the weight follows the Ready pods, never below the last step.
    expect(ed!.traffic.weights.every((w, i, all) => i === 0 || w.percent >= all[i - 1]!.percent)).toBe(true);

    captured.out = '';
    expect(await run(['plan', '-f', files, '-o', 'markdown'])).toBe(0);
    expect(captured.out).toContain('```\ntraffic (Weighted)');
  });

  it('in mode Replicas the share is that of Ready pods; without traffic nothing is shown', async () => {
    expect(await run(['plan', '-f', fixture({ 'regions.yaml': compatRegions, 'ed.yaml': weighted('    traffic: { mode: Replicas }\n') })])).toBe(0);
    expect(captured.out).toMatch(/traffic \(Replicas\): new revision's share of Ready pods after each group: 1: \d/);
    expect(captured.out).not.toContain('drain');
    captured.out = '';
    expect(await run(['plan', '-f', fixture({ 'regions.yaml': compatRegions, 'ed.yaml': weighted('') })])).toBe(0);
    expect(captured.out).not.toContain('traffic');
  });
});
