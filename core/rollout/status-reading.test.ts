import { describe, expect, it } from 'vitest';
import type { DeployRegionObject, ExtendedDeploymentObject } from '../kube/objects.js';
import { regionReading, rolloutReading, type RolloutReading } from './status-reading.js';

// The fixtures in gitops/fixtures/ hold this reading to the Argo CD and Flux checks (gitops/health.test.ts); these rows
// add what only edctl reads (gate, observed, reported) and what no GitOps fixture has (a status this version cannot read).

const progressing = (reason: string, message: string) => ({ type: 'Progressing', status: 'True', reason, message });
const invalid = { type: 'Valid', status: 'False', reason: 'InvalidSpec', message: 'spec.replicas: must not be negative' };

/** The web ExtendedDeployment in shop at `generation` (none when null), with `status` as the agent wrote it (none when undefined). */
const web = (status?: Record<string, unknown>, generation: number | null = 2): ExtendedDeploymentObject => ({
  metadata: { name: 'web', namespace: 'shop', ...(generation !== null && { generation }) },
  ...(status && { status }),
});

type Expected = Pick<RolloutReading, 'health' | 'message' | 'reported' | 'observed' | 'gate'>;

const rows: readonly { name: string; ed: ExtendedDeploymentObject; expected: Expected }[] = [
  {
    name: 'no status: waiting for the agent, nothing reported',
    ed: web(),
    expected: {
      health: 'Progressing',
      message: 'Waiting for the extended-deployment agent to report status',
      reported: false,
      observed: false,
      gate: undefined,
    },
  },
  {
    name: 'a status this version cannot read is Unknown, and shows as nothing reported',
    ed: web({ observedGeneration: 2, phase: 'Rebalancing' }),
    expected: {
      health: 'Unknown',
      message: expect.stringMatching(/^The status is not one this version reads: /),
      reported: false,
      observed: false,
      gate: undefined,
    },
  },
  {
    name: 'a status of an older generation is Progressing, whatever its phase',
    ed: web({ observedGeneration: 1, phase: 'Healthy' }),
    expected: { health: 'Progressing', message: 'Waiting for the agent to observe generation 2', reported: true, observed: false, gate: undefined },
  },
  {
    name: 'a status without observedGeneration is not observed',
    ed: web({ phase: 'Healthy' }),
    expected: { health: 'Progressing', message: 'Waiting for the agent to observe generation 2', reported: true, observed: false, gate: undefined },
  },
  {
    name: 'an object without generation counts as generation 0',
    ed: web({ observedGeneration: 0, phase: 'Healthy' }, null),
    expected: { health: 'Healthy', message: 'Healthy', reported: true, observed: true, gate: undefined },
  },
  {
    name: 'observed, without a phase yet',
    ed: web({ observedGeneration: 2 }),
    expected: { health: 'Progressing', message: 'Waiting for the agent to report a rollout phase', reported: false, observed: true, gate: undefined },
  },
  {
    name: 'Valid=False is Degraded before any phase',
    ed: web({ observedGeneration: 2, phase: 'Healthy', conditions: [invalid] }),
    expected: { health: 'Degraded', message: 'Invalid spec: spec.replicas: must not be negative', reported: true, observed: true, gate: undefined },
  },
  {
    name: 'Progressing, with the Progressing message and the overview',
    ed: web({
      observedGeneration: 2,
      phase: 'Progressing',
      overview: '[Normal]amd: 2/4',
      conditions: [progressing('GroupProgressing', 'group 1 of 2 in progress')],
    }),
    expected: { health: 'Progressing', message: 'group 1 of 2 in progress ([Normal]amd: 2/4)', reported: true, observed: true, gate: undefined },
  },
  {
    name: 'waiting for approval is Suspended, held at its gate, and says how to approve',
    ed: web({
      observedGeneration: 2,
      phase: 'WaitingForConfirmation',
      conditions: [progressing('WaitingForConfirmation', 'group 1 is done; group 2 waits for approval')],
    }),
    expected: {
      health: 'Suspended',
      message: 'group 1 is done; group 2 waits for approval; approve with: edctl approve web -n shop',
      reported: true,
      observed: true,
      gate: 'WaitingForConfirmation',
    },
  },
  {
    name: 'paused is Suspended',
    ed: web({ observedGeneration: 2, phase: 'Paused', conditions: [progressing('Paused', 'paused by edctl pause in group 1')] }),
    expected: { health: 'Suspended', message: 'paused by edctl pause in group 1', reported: true, observed: true, gate: 'Paused' },
  },
  {
    name: 'aborted is phase Paused told apart by its reason',
    ed: web({ observedGeneration: 2, phase: 'Paused', conditions: [progressing('Aborted', 'rollout aborted in group 1')] }),
    expected: { health: 'Suspended', message: 'rollout aborted in group 1', reported: true, observed: true, gate: 'Aborted' },
  },
  {
    name: 'Degraded past the deadline, the phase as message when the condition has none',
    ed: web({ observedGeneration: 2, phase: 'Degraded' }),
    expected: { health: 'Degraded', message: 'Degraded', reported: true, observed: true, gate: 'Degraded' },
  },
  {
    name: 'Healthy',
    ed: web({
      observedGeneration: 2,
      phase: 'Healthy',
      conditions: [{ ...progressing('RolloutComplete', 'every region runs its rendered revision'), status: 'False' }],
    }),
    expected: { health: 'Healthy', message: 'every region runs its rendered revision', reported: true, observed: true, gate: undefined },
  },
  {
    name: 'fields a newer agent writes (in the status, a region, a move, a condition) are left out, not unreadable',
    ed: web({
      observedGeneration: 2,
      phase: 'Healthy',
      grayReplicas: 3,
      regions: [{ name: 'a', desired: 3, partition: 1 }],
      moves: [{ from: 'a', to: 'b', count: 1, reason: 'Fault', since: '2026-01-01T00:00:00Z', wave: 2 }],
      conditions: [{ ...progressing('RolloutComplete', 'every region runs its rendered revision'), status: 'False', severity: 'Info' }],
    }),
    expected: { health: 'Healthy', message: 'every region runs its rendered revision', reported: true, observed: true, gate: undefined },
  },
];

describe('rolloutReading', () => {
  it.each(rows)('$name', ({ ed, expected }) => {
    const { health, message, reported, observed, gate } = rolloutReading(ed);
    expect({ health, message, reported, observed, gate }).toEqual(expected);
  });

  it('hands over the conditions edctl shows: Valid=False and Progressing', () => {
    const reading = rolloutReading(web({ observedGeneration: 2, phase: 'Progressing', conditions: [progressing('Scaling', 'converging'), invalid] }));
    expect([reading.progressing?.reason, reading.invalid?.reason]).toEqual(['Scaling', 'InvalidSpec']);
  });
});

describe('regionReading', () => {
  const arm64 = (status?: Record<string, unknown>): DeployRegionObject => ({ metadata: { name: 'arm64', generation: 1 }, ...(status && { status }) });

  it.each([
    {
      name: 'no status is Healthy: the region is usable before the agent reports',
      region: arm64(),
      expected: { health: 'Healthy', message: 'No node health reported for this region yet' },
    },
    {
      name: 'an older generation is Progressing',
      region: { ...arm64({ observedGeneration: 1, phase: 'Healthy' }), metadata: { name: 'arm64', generation: 2 } },
      expected: { health: 'Progressing', message: 'Waiting for the agent to observe generation 2' },
    },
    {
      name: 'without node counts, the phase alone',
      region: arm64({ observedGeneration: 1, phase: 'Healthy' }),
      expected: { health: 'Healthy', message: 'Healthy' },
    },
    {
      name: 'Failed nodes are still Healthy, with the trouble in the message',
      region: arm64({ observedGeneration: 1, phase: 'Failed', nodes: 4, readyNodes: 0 }),
      expected: { health: 'Healthy', message: 'Failed: 0 of 4 nodes ready (shown as Healthy so that syncs go on; see kubectl describe deployregion arm64)' },
    },
    {
      name: 'fields a newer agent writes are left out',
      region: arm64({ observedGeneration: 1, phase: 'Healthy', zones: 3 }),
      expected: { health: 'Healthy', message: 'Healthy' },
    },
    {
      name: 'a status this version cannot read is Unknown',
      region: arm64({ phase: 'Flooded' }),
      expected: { health: 'Unknown', message: expect.stringMatching(/^The status is not one this version reads: /) },
    },
  ])('$name', ({ region, expected }) => {
    expect(regionReading(region)).toEqual(expected);
  });
});
