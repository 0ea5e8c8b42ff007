// The pieces of a fleet's plan (the clusters table, the waves, the gantt chart) on plans made by hand, then `edctl
// plan` on renders with Cluster objects: examples/fleet and a small fleet against a base (--from files).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { FleetExtendedDeploymentPlan, FleetPlan, MemberPlan, WavePlan } from '../../core/fleet/plan.js';
import type { ExtendedDeploymentPlan } from '../../core/plan.js';
import { run } from '../run.js';
import { captured, captureOutput, fixture } from '../test-support.js';
import { fleetGantt, memberRows, waveStart } from './plan-fleet.js';

captureOutput();

const member = (cluster: string, wave: number, more: Partial<MemberPlan> = {}): MemberPlan => ({
  cluster,
  wave,
  replicas: 2,
  regions: [{ name: 'amd64', replicas: 2 }],
  totalGroups: 2,
  rolloutSeconds: 10,
  ...more,
});

const wave = (n: number, clusters: string[], after: string[], more: Partial<WavePlan> = {}): WavePlan => ({
  wave: n,
  clusters,
  approval: false,
  after,
  soakSeconds: 600,
  ...more,
});

const edOf = (clusters: MemberPlan[], waves: WavePlan[], more: Partial<FleetExtendedDeploymentPlan> = {}): FleetExtendedDeploymentPlan => ({
  namespace: 'shop',
  name: 'web',
  replicas: clusters.reduce((n, m) => n + m.replicas, 0),
  release: '1111111111',
  regions: ['amd64', 'arm64'],
  clusters,
  waves,
  ...more,
});

/** A member's own plan, as far as the clusters table reads it (its summary). */
const own = (totalGroups: number): ExtendedDeploymentPlan => ({
  namespace: 'shop',
  name: 'web',
  replicas: 2,
  rolloutRevision: 'r',
  rolloutKey: 'r',
  regions: [],
  groups: [],
  totalGroups,
  runs: [],
  approvals: [],
  approvalRanges: [],
  swapped: 0,
  created: 0,
});

const planOf = (ed: FleetExtendedDeploymentPlan, based: boolean): FleetPlan => ({
  clusters: ed.clusters.map((m) => ({ name: m.cluster, extendedDeployments: [own(m.totalGroups)] })),
  extendedDeployments: [ed],
  ...(based && { risks: [] }),
});

describe('the clusters table', () => {
  it.each<[string, MemberPlan[], boolean, string[][]]>([
    [
      'replicas per cluster and region, `-` where a cluster has no such region, the rollout and its duration',
      [
        member('canary', 0),
        member('eu', 1, {
          replicas: 11,
          regions: [
            { name: 'amd64', replicas: 6 },
            { name: 'arm64', replicas: 5 },
          ],
          rolloutSeconds: 39,
        }),
      ],
      false,
      [
        ['canary', '0', '2', '2', '-', '2 groups, about 10s'],
        ['eu', '1', '11', '6', '5', '2 groups, about 39s'],
      ],
    ],
    [
      'against a base: before -> after, a member or region new to it from 0, a wave that moves',
      [
        member('canary', 0, { fromWave: 0, fromReplicas: 2, regions: [{ name: 'amd64', replicas: 2, fromReplicas: 2 }], totalGroups: 0 }),
        member('eu', 2, {
          fromWave: 1,
          replicas: 4,
          fromReplicas: 2,
          regions: [
            { name: 'amd64', replicas: 2, fromReplicas: 2 },
            { name: 'arm64', replicas: 2 },
          ],
        }),
        member('us', 1, { regions: [{ name: 'arm64', replicas: 2 }] }),
      ],
      true,
      [
        ['canary', '0', '2', '2', '-', 'no rollout'],
        ['eu', '1 -> 2', '2 -> 4', '2', '0 -> 2', '2 groups, about 10s'],
        ['us', '1', '0 -> 2', '-', '0 -> 2', '2 groups, about 10s'],
      ],
    ],
  ])('%s', (_, members, based, rows) => {
    const ed = edOf(members, []);
    expect(memberRows(planOf(ed, based), ed)).toEqual(rows);
  });
});

describe('the waves', () => {
  const canary = member('canary', 0, { startSeconds: 0, healthySeconds: 10 });
  const eu = member('eu', 1, { startSeconds: 610, healthySeconds: 640 });
  it.each<[string, MemberPlan[], WavePlan, string]>([
    ['wave 0 starts at once', [canary], wave(0, ['canary'], [], { startSeconds: 0 }), 'starts at once'],
    ['wave 0 with an approval', [canary], wave(0, ['canary'], [], { startSeconds: 0, approval: true }), 'starts once approved (approveWaves)'],
    [
      'a later wave after the soak of every earlier cluster',
      [canary, eu],
      wave(1, ['eu'], ['canary'], { startSeconds: 610 }),
      'starts once canary has been Healthy at release 1111111111 for 600s (minSuccessSeconds): at about 610s',
    ],
    [
      'with an approval',
      [canary, eu, member('us', 2)],
      wave(2, ['us'], ['canary', 'eu'], { startSeconds: 1240, approval: true }),
      'starts once canary, eu have been Healthy at release 1111111111 for 600s (minSuccessSeconds) and an approval (approveWaves): at about 1240s',
    ],
    [
      'never, when a rollout of an earlier wave stops',
      [member('canary', 0, { startSeconds: 0 }), member('eu', 1)],
      wave(1, ['eu'], ['canary']),
      'never starts: the rollout of canary stops short of Healthy (it would start once canary has been Healthy at release 1111111111 for 600s (minSuccessSeconds))',
    ],
    [
      'a wave of count changes only is not held back',
      [canary, member('eu', 1, { totalGroups: 0 })],
      wave(1, ['eu'], ['canary'], { startSeconds: 610 }),
      'no rollout to hold back: counts apply at once',
    ],
  ])('%s', (_, members, w, text) => {
    expect(waveStart(edOf(members, [w]), w)).toBe(text);
  });
});

describe('the gantt chart of the waves', () => {
  const head = ['```mermaid', 'gantt', '  title shop/web: waves of release 1111111111, seconds after the sync', '  dateFormat X', '  axisFormat %s'];
  it.each<[string, FleetExtendedDeploymentPlan, string[]]>([
    [
      'a rollout bar per member and wave, a soak bar where a later wave waits, none after the last',
      edOf(
        [
          member('canary', 0, { startSeconds: 0, healthySeconds: 10 }),
          member('eu', 1, { startSeconds: 610, healthySeconds: 650, rolloutSeconds: 40 }),
          member('us', 1, { startSeconds: 610, healthySeconds: 640, rolloutSeconds: 30 }),
        ],
        [wave(0, ['canary'], [], { startSeconds: 0 }), wave(1, ['eu', 'us'], ['canary'], { startSeconds: 610, approval: true })],
      ),
      [
        '  section wave 0',
        '  canary rollout : 0, 10',
        '  canary soak : 10, 610',
        '  section wave 1 (approval)',
        '  eu rollout : 610, 650',
        '  us rollout : 610, 640',
        '```',
      ],
    ],
    [
      'a member without groups has only its soak; one that never starts, no bar',
      edOf(
        [
          member('canary', 0, { startSeconds: 0, healthySeconds: 2, totalGroups: 0, rolloutSeconds: 2 }),
          member('eu', 1, { startSeconds: 602 }),
          member('us', 2),
        ],
        [wave(0, ['canary'], [], { startSeconds: 0 }), wave(1, ['eu'], ['canary'], { startSeconds: 602 }), wave(2, ['us'], ['canary', 'eu'])],
      ),
      ['  section wave 0', '  canary soak : 2, 602', '  section wave 1', '  eu rollout : 602, 612', '  section wave 2', '```'],
    ],
  ])('%s', (_, ed, bars) => {
    expect(fleetGantt(ed)).toEqual([...head, ...bars]);
  });
});

const fleetFiles = Object.fromEntries(['fleet.yaml', 'regions.yaml', 'web.yaml'].map((f) => [f, readFileSync(`examples/fleet/${f}`, 'utf8')]));
const web = fleetFiles['web.yaml'] ?? '';

/** The example with web.yaml changed. */
const changed = (edit: (text: string) => string) => fixture({ ...fleetFiles, 'web.yaml': edit(web) });

interface JsonFleetPlan {
  readonly fleet?: string;
  readonly clusters: readonly { readonly name: string; readonly extendedDeployments: readonly { readonly totalGroups: number }[] }[];
  readonly extendedDeployments: readonly {
    readonly release?: string;
    readonly fromRelease?: string;
    readonly replicas: number;
    readonly fromReplicas?: number;
    readonly clusters: readonly {
      readonly cluster: string;
      readonly wave?: number;
      readonly replicas: number;
      readonly fromReplicas?: number;
      readonly startSeconds?: number;
    }[];
    readonly waves: readonly { readonly wave: number; readonly clusters: readonly string[]; readonly startSeconds?: number; readonly approval: boolean }[];
  }[];
}

async function plan(args: string[]): Promise<string> {
  captured.out = '';
  expect(await run(['plan', ...args])).toBe(0);
  return captured.out;
}

describe('edctl plan of a fleet', () => {
  it('plans examples/fleet cluster by cluster: the clusters table, then wave by wave each member as one cluster plans', async () => {
    const text = await plan(['-f', 'examples/fleet']);
    expect(text).toMatch(/^Fleet prod: clusters canary-1, eu-1, us-1\n\nExtendedDeployment shop\/web: 24 replicas over 3 clusters, release [0-9a-f]{10}\n/);
    expect(text).toMatch(/CLUSTER +WAVE +REPLICAS +amd64 +arm64 +ROLLOUT\ncanary-1 +0 +2 +2 +- +2 groups, about \d+s\neu-1 +1 +11 +6 +5 +6 groups/);
    expect(text).toContain('wave 0: canary-1, starts at once\n  cluster canary-1: 2 replicas, rollout revision ');
    expect(text).toMatch(
      /wave 1: eu-1, us-1, starts once canary-1 has been Healthy at release [0-9a-f]{10} for 600s \(minSuccessSeconds\): at about \d+s\n {2}cluster eu-1: 11 replicas/,
    );
    expect(text).toContain('    new pods per region after each group:\n      group 1: amd64 new 1 of 3\n');
    // Deterministic: the same input prints the same plan, in every format.
    for (const format of ['text', 'json', 'markdown'])
      expect(await plan(['-f', 'examples/fleet', '-o', format])).toBe(await plan(['-f', 'examples/fleet', '-o', format]));
  });

  it('a template change rolls wave by wave: the release changes, the later wave starts after the soak', async () => {
    const dir = changed((t) => t.replaceAll('web:1.4.0', 'web:1.4.1'));
    const json = JSON.parse(await plan(['-f', dir, '--from', 'examples/fleet', '-o', 'json'])) as JsonFleetPlan;
    const [ed] = json.extendedDeployments;
    expect(json.fleet).toBe('prod');
    expect(ed?.release).toMatch(/^[0-9a-f]{10}$/);
    expect(ed?.fromRelease).toMatch(/^[0-9a-f]{10}$/);
    expect(ed?.release).not.toBe(ed?.fromRelease);
    expect(json.clusters.map((c) => [c.name, c.extendedDeployments[0]?.totalGroups])).toEqual([
      ['canary-1', 2],
      ['eu-1', 6],
      ['us-1', 6],
    ]);
    const canary = ed?.clusters[0];
    const wave1 = ed?.waves[1];
    expect(ed?.waves.map((w) => w.clusters)).toEqual([['canary-1'], ['eu-1', 'us-1']]);
    expect(wave1?.startSeconds).toBeGreaterThan(600);
    expect(ed?.clusters.map((m) => m.startSeconds)).toEqual([0, wave1?.startSeconds, wave1?.startSeconds]);
    expect(canary?.startSeconds).toBe(0);

    const md = await plan(['-f', dir, '--from', 'examples/fleet', '-o', 'markdown']);
    expect(md).toMatch(/^\*\*Risks:\*\*\n\n- \*\*`shop\/web`\*\* in canary-1: every pod is replaced/);
    expect(md).toContain('## Fleet `prod`: clusters canary-1, eu-1, us-1\n\n### ExtendedDeployment `shop/web`\n\n24 replicas over 3 clusters, release `');
    expect(md).toContain('| Cluster | Wave | Replicas | amd64 | arm64 | Rollout |\n|---|---|---|---|---|---|\n| canary-1 | 0 | 2 | 2 | - | 2 groups, about ');
    expect(md).toMatch(
      new RegExp(
        `  section wave 0\\n  canary-1 rollout : 0, (\\d+)\\n  canary-1 soak : \\1, ${String(wave1?.startSeconds)}\\n  section wave 1\\n  eu-1 rollout : ${String(wave1?.startSeconds)}, \\d+\\n`,
      ),
    );
    expect(md).toContain('#### Cluster `eu-1`, wave 1\n\nRollout `');
    // spec.fleet (release, members) shows once, in the fleet's lines, not as every member's spec change.
    expect(md).not.toContain('spec.fleet.release');
  });

  it('counts that change show per cluster and region, before -> after; a wave of count changes is not held back', async () => {
    const base = changed((t) => t);
    const dir = changed((t) => t.replace('replicas: 24', 'replicas: 30'));
    const text = await plan(['-f', dir, '--from', base]);
    expect(text).toMatch(/ExtendedDeployment shop\/web: 24 -> 30 replicas over 3 clusters, release [0-9a-f]{10} -> [0-9a-f]{10}\n/);
    expect(text).toMatch(/\ncanary-1 +0 +2 +2 +- +no rollout\neu-1 +1 +11 -> 14 +6 -> 7 +5 -> 7 +pods keep their revision, 1 spec change\n/);
    expect(text).toContain('wave 1: eu-1, us-1, no rollout to hold back: counts apply at once\n');
  });

  it('a count and a template change over three waves, the last approved', async () => {
    const base = changed((t) => t);
    const dir = changed((t) =>
      t
        .replace('replicas: 24', 'replicas: 30')
        .replaceAll('web:1.4.0', 'web:1.4.1')
        .replace('waves: [[canary-1], [eu-1, us-1]]', 'waves: [[canary-1], [eu-1], [us-1]]\n      approveWaves: [2]'),
    );
    const json = JSON.parse(await plan(['-f', dir, '--from', base, '-o', 'json'])) as JsonFleetPlan;
    const [ed] = json.extendedDeployments;
    expect(ed?.clusters.map((m) => [m.cluster, m.wave, m.fromReplicas, m.replicas])).toEqual([
      ['canary-1', 0, 2, 2],
      ['eu-1', 1, 11, 14],
      ['us-1', 2, 11, 14],
    ]);
    expect(ed?.waves.map((w) => w.approval)).toEqual([false, false, true]);
    const starts = ed?.waves.map((w) => w.startSeconds ?? -1) ?? [];
    expect(starts[0]).toBe(0);
    expect(starts[2]).toBeGreaterThan((starts[1] ?? 0) + 600);
    const text = await plan(['-f', dir, '--from', base]);
    expect(text).toMatch(
      /wave 2: us-1, starts once canary-1, eu-1 have been Healthy at release [0-9a-f]{10} for 600s \(minSuccessSeconds\) and an approval \(approveWaves\): at about \d+s\n/,
    );
  });

  it('an ExtendedDeployment without spec.clusters goes to every cluster at once: no waves, each cluster planned', async () => {
    const api = [
      'apiVersion: extendeddeployment.io/v1beta1',
      'kind: ExtendedDeployment',
      'metadata: {name: api, namespace: shop}',
      'spec:',
      '  replicas: 4',
      '  selector: {matchLabels: {app: api}}',
      '  template: {metadata: {labels: {app: api}}, spec: {containers: [{name: api, image: shop/api:1}]}}',
      '  regions: [{name: amd64}]',
      '',
    ].join('\n');
    const text = await plan(['-f', fixture({ ...fleetFiles, 'api.yaml': api })]);
    expect(text).toMatch(/ExtendedDeployment shop\/api: 12 replicas over 3 clusters, not in a fleet \(no spec.clusters\): every cluster at once\n/);
    expect(text).toMatch(/\ncanary-1 +- +4 +4 +4 groups, about \d+s\n/);
    expect(text.slice(text.indexOf('shop/api'), text.indexOf('ExtendedDeployment shop/web'))).not.toContain('wave ');
  });

  it('--from files with Cluster objects against -f files without them is an error, not a plan of one cluster against several', async () => {
    expect(await run(['plan', '-f', 'examples/upstream-sample', '--from', 'examples/fleet'])).toBe(1);
    expect(captured.err).toBe("error: --from examples/fleet: lays out per cluster (Cluster objects), but -f does not: plan each cluster's files\n");
  });

  it('bad input: every problem at once with its object and path, exit 1, no stack trace', async () => {
    const dir = changed((t) =>
      t.replace('- name: eu-1\n', '- name: eu-9\n').replace('waves: [[canary-1], [eu-1, us-1]]', 'waves: [[canary-1], [eu-1, us-1, ap-1]]'),
    );
    expect(await run(['plan', '-f', dir])).toBe(1);
    expect(captured.err).toContain('ExtendedDeployment shop/web: spec.clusters[1].name: "eu-9" names no Cluster of this render');
    expect(captured.err).toContain('spec.strategy.fleet.waves[1][2]: "ap-1" is not a cluster of spec.clusters');
    expect(captured.err).not.toMatch(/\n\s+at /);
    captured.err = '';
    expect(await run(['plan', '-f', 'examples/fleet', '--from', dir])).toBe(1);
    expect(captured.err).toMatch(/^error: in --from .*spec\.clusters\[1\]\.name/m);
  });
});
