// The lab's realistic kwok timings: the generated stage file is current, and its jq delay expressions (evaluated with
// the jq CLI when the machine has one; kwok evaluates them with gojq) compute what the table's TypeScript model says.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import {
  JQ_DELAYS,
  KUBELET_CONDITION,
  REALISTIC_STAGES_PATH,
  REALISTIC_TIMINGS as T,
  imageMB,
  podStartSeconds,
  readySeconds,
  realisticStagesYaml,
  restartSeconds,
  stopSeconds,
  type ModelContainer,
} from '../cluster/realistic-timings.js';

const hasJq = spawnSync('jq', ['--version']).status === 0;

/** Evaluates a delay expression on a pod with jq: the delay in ms, and the wall-clock window it was computed in. */
function delayMs(expression: string, pod: unknown): { ms: number; before: number; after: number } {
  const before = Date.now();
  const r = spawnSync('jq', ['-r', expression], { input: JSON.stringify(pod), encoding: 'utf8' });
  const after = Date.now();
  if (r.status !== 0) throw new Error(`jq failed: ${r.stderr}`);
  const out = r.stdout.trim();
  expect(out).toMatch(/^[0-9]+ms$/);
  return { ms: Number(out.slice(0, -2)), before, after };
}

function kubelet(reason: string, at: number) {
  return { type: KUBELET_CONDITION, status: 'True', reason, message: `at=${at} (test)` };
}

/** A delay measured from `at` lies between `at + seconds - after` and `at + seconds - before` (jq's now is in between). */
function expectUntil(d: { ms: number; before: number; after: number }, at: number, seconds: number): void {
  const due = at + seconds * 1000;
  expect(d.ms).toBeGreaterThanOrEqual(Math.max(0, Math.floor(due - d.after)) - 1);
  expect(d.ms).toBeLessThanOrEqual(Math.max(0, Math.ceil(due - d.before)) + 1);
}

describe('the table model', () => {
  it('reads the image size from the reference, else the default', () => {
    expect(imageMB('registry.example/bench-800mb:2')).toBe(800);
    expect(imageMB('registry.example/web:2-50mb')).toBe(50);
    expect(imageMB('registry.example/web:2')).toBe(T.defaultImageMB);
  });

  it('pulls at the table throughput: 800 MB take 10-20 s plus overhead, 50 MB under 2.5 s', () => {
    expect(restartSeconds(['x-800mb:1'], 'min')).toBeCloseTo(0.3 + 10 + 0.2);
    expect(restartSeconds(['x-800mb:1'], 'max')).toBeCloseTo(1 + 20 + 0.6);
    expect(restartSeconds(['x-50mb:1'], 'max')).toBeCloseTo(1 + 1.25 + 0.6);
  });

  it('keeps a pod start without pulls inside the 5 s start-up SLO', () => {
    const withoutPull = podStartSeconds([{ image: 'x-0mb:1' }], 'max') - T.pullOverheadSeconds.max + T.kubeletReactionSeconds.max;
    expect(withoutPull).toBeLessThan(5);
  });

  it('waits for the first readiness probe that passes after the app is ready', () => {
    expect(readySeconds([{ image: 'a' }], 'min')).toBeCloseTo(T.statusWriteSeconds.min);
    expect(readySeconds([{ image: 'a', readinessProbe: {} }], 'min')).toBeCloseTo(T.statusWriteSeconds.min + 10);
    expect(readySeconds([{ image: 'a', readinessProbe: { periodSeconds: 1 } }], 'min')).toBeCloseTo(T.statusWriteSeconds.min + 2);
    expect(readySeconds([{ image: 'a', readinessProbe: { initialDelaySeconds: 5 } }], 'max')).toBeCloseTo(T.statusWriteSeconds.max + 5);
  });

  it('stops a container within the grace period', () => {
    expect(stopSeconds(0, 'max')).toBeCloseTo(T.kubeletReactionSeconds.max);
    expect(stopSeconds(undefined, 'max')).toBeCloseTo(T.kubeletReactionSeconds.max + T.containerStopSeconds.max);
  });
});

describe('kwok-realistic.yaml', () => {
  it('is what the generator makes of kwok.yaml and the table (regenerate: npx tsx test/cluster/realistic-timings.ts)', () => {
    expect(readFileSync(REALISTIC_STAGES_PATH, 'utf8')).toBe(realisticStagesYaml());
  });

  it('has every kwok.yaml stage plus lab-pod-create and lab-container-start, each pod stage with table delays', () => {
    interface StageDoc {
      kind: string;
      metadata: { name: string };
      spec: {
        resourceRef: { kind: string };
        delay?: { durationFrom?: { jq?: { expression?: unknown } }; jitterDurationFrom?: { jq?: { expression?: unknown } } };
      };
    }
    const docs = parseAllDocuments(readFileSync(REALISTIC_STAGES_PATH, 'utf8')).map((d) => (Array.isArray(d) ? undefined : (d.toJS() as StageDoc)));
    const stages = docs.filter((d): d is StageDoc => d?.kind === 'Stage');
    expect(stages.map((s) => s.metadata.name)).toEqual([
      'lab-node-initialize',
      'lab-node-heartbeat',
      'lab-pod-create',
      'lab-pod-start',
      'lab-container-restart',
      'lab-container-start',
      'lab-container-crash',
      'lab-containers-ready',
      'lab-pod-ready-sync',
      'lab-pod-delete',
      'lab-pod-delete-graceful',
    ]);
    // kwok.yaml's own, verbatim: the graceful delete already waits for the pod's deletionTimestamp.
    const verbatim = new Set(['lab-container-crash', 'lab-pod-ready-sync', 'lab-pod-delete-graceful']);
    for (const s of stages.filter((x) => x.spec.resourceRef.kind === 'Pod' && !verbatim.has(x.metadata.name))) {
      expect(s.spec.delay?.durationFrom?.jq?.expression, s.metadata.name).toBeTypeOf('string');
      expect(s.spec.delay?.jitterDurationFrom?.jq?.expression, s.metadata.name).toBeTypeOf('string');
    }
  });
});

describe.skipIf(!hasJq)('the jq delay expressions (jq CLI)', () => {
  const containers: ModelContainer[] = [{ image: 'registry.example/bench-800mb:2' }, { image: 'registry.example/sidecar:1' }];

  it('lab-pod-start: ContainerCreating moment + sandbox + pulls + starts, for both bounds', () => {
    const at = Date.now() - 3000;
    const pod = { spec: { containers }, status: { conditions: [{ type: 'Ready', status: 'False' }, kubelet('ContainerCreating', at)] } };
    for (const b of ['min', 'max'] as const) expectUntil(delayMs(JQ_DELAYS.podStart(b), pod), at, podStartSeconds(containers, b));
  });

  it('lab-pod-start without the moment: the whole time from now', () => {
    const pod = { spec: { containers }, status: {} };
    const d = delayMs(JQ_DELAYS.podStart('min'), pod);
    expectUntil(d, d.before, podStartSeconds(containers, 'min'));
  });

  it('lab-container-start: Pulling moment + pulls of the waiting containers only', () => {
    const at = Date.now() - 1000;
    const pod = {
      spec: { containers },
      status: {
        conditions: [kubelet('Pulling', at)],
        containerStatuses: [
          { name: 'app', image: 'registry.example/bench-800mb:2', state: { waiting: { reason: 'ContainerCreating' } } },
          { name: 'sidecar', image: 'registry.example/sidecar:1', state: { running: {} } },
        ],
      },
    };
    for (const b of ['min', 'max'] as const) expectUntil(delayMs(JQ_DELAYS.containerStart(b), pod), at, restartSeconds(['registry.example/bench-800mb:2'], b));
  });

  it('lab-containers-ready: Started moment + readiness, by the probes of the pod', () => {
    const at = Date.now();
    for (const cs of [
      [{ image: 'a' }],
      [{ image: 'a', readinessProbe: {} }],
      [
        { image: 'a', readinessProbe: { periodSeconds: 3 } },
        { image: 'b', readinessProbe: { initialDelaySeconds: 7, periodSeconds: 5 } },
      ],
    ] satisfies ModelContainer[][]) {
      const pod = { spec: { containers: cs }, status: { conditions: [kubelet('Pulling', at - 60_000), kubelet('Started', at)] } };
      for (const b of ['min', 'max'] as const) expectUntil(delayMs(JQ_DELAYS.containersReady(b), pod), at, readySeconds(cs, b));
    }
  });

  it('a moment long past gives no delay', () => {
    const pod = { spec: { containers }, status: { conditions: [kubelet('ContainerCreating', Date.now() - 600_000)] } };
    expect(delayMs(JQ_DELAYS.podStart('max'), pod).ms).toBe(0);
  });

  it('stop and pod-create: relative delays, the stop capped by terminationGracePeriodSeconds', () => {
    expect(delayMs(JQ_DELAYS.stop('max'), { spec: { terminationGracePeriodSeconds: 0 } }).ms).toBe(stopSeconds(0, 'max') * 1000);
    expect(delayMs(JQ_DELAYS.stop('min'), { spec: {} }).ms).toBe(Math.floor(stopSeconds(undefined, 'min') * 1000));
    expect(delayMs(JQ_DELAYS.podCreate('max'), {}).ms).toBe(T.kubeletReactionSeconds.max * 1000);
  });
});
