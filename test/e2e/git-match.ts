// "The cluster matches Git": the end-of-test check of the reliability suite. Once a rollout is over, what runs must be
// exactly what Git rendered: the ExtendedDeployment is the rendered one (same rollout revision), its status is Healthy
// for that revision and describes the current generation, every region's workload is at the region's rendered revision
// with the rendered replica count, and every pod of every region is live, at that revision, and there are exactly as
// many as the region's count, but for the old pods a partition keeps (at most that many, beside the new ones; the
// region's keeper may make some of them, and its count is then part of the region's). (With replicas moved away by a shortage or a fault the counts differ from Git by design:
// compare once no move is active.) gitDifferences is pure (unit-tested in test/unit/git-match.test.ts); waitMatchesGit reads
// the invariant watcher's picture until it matches or the time is up.
import type { RenderedExtendedDeployment } from '../../core/render.js';
import { partitionPods } from '../../core/rollout/partition.js';
import { isPodTerminal } from '../../core/rollout/pod-activity.js';
import type { InvariantWatch, Sample } from './invariants.js';

/** What Git rendered, reduced to what the comparison reads. */
export interface GitTarget {
  readonly rolloutRevision: string;
  readonly regions: readonly { readonly name: string; readonly replicas: number; readonly revision: string; readonly partition: number }[];
}

/** A rendered ExtendedDeployment as a GitTarget. */
export function gitTarget(rendered: RenderedExtendedDeployment): GitTarget {
  const entries = (rendered.manifest as { spec?: { regions?: { name: string; partition?: number | string }[] } }).spec?.regions ?? [];
  return {
    rolloutRevision: rendered.rolloutRevision,
    regions: rendered.regions.map((r) => ({
      name: r.name,
      replicas: r.replicas,
      revision: r.revision,
      partition: partitionPods(entries.find((e) => e.name === r.name)?.partition, r.replicas),
    })),
  };
}

/** Every way the picture differs from Git; empty when the cluster matches it. */
export function gitDifferences(sample: Sample, target: GitTarget): string[] {
  const out: string[] = [];
  const ed = sample.ed;
  if (!ed) return [sample.unparsed ?? 'the ExtendedDeployment is missing'];
  if (ed.rolloutRevision !== target.rolloutRevision)
    out.push(`ExtendedDeployment at rollout revision ${ed.rolloutRevision}, Git rendered ${target.rolloutRevision}`);
  const s = ed.status;
  if (s.phase !== 'Healthy' || s.revision !== target.rolloutRevision)
    out.push(`status ${s.phase ?? '-'} for rollout ${s.revision ?? '-'}, not Healthy for ${target.rolloutRevision}`);
  if (ed.generation === undefined || s.observedGeneration !== ed.generation)
    out.push(`status.observedGeneration ${s.observedGeneration ?? '-'} ≠ metadata.generation ${ed.generation ?? '-'}`);
  for (const region of target.regions) {
    const workload = sample.workloads.find((w) => w.region === region.name);
    if (!workload) {
      out.push(`${region.name}: no workload`);
    } else {
      if (workload.revision !== region.revision)
        out.push(`${region.name}: workload template at revision ${workload.revision ?? '-'}, Git rendered ${region.revision}`);
      // A keeper (core/rollout/keeper.ts) makes some of the old pods a partition keeps: the regional workload runs the rest.
      const keeper = workload.keeperReplicas ?? 0;
      if (workload.replicas + keeper !== region.replicas || keeper > region.partition) {
        const kept = keeper > 0 ? ` and its keeper ${keeper}` : '';
        out.push(`${region.name}: workload spec.replicas ${workload.replicas}${kept}, Git wants ${region.replicas}`);
      }
    }
    // Pods that stopped for good (Failed, Succeeded) run nothing and wait for PodGC: the agent counts them nowhere
    // (core/rollout/pod-activity.ts), and neither does this comparison.
    const pods = sample.pods.filter((p) => p.region === region.name && !isPodTerminal(p));
    const terminating = pods.filter((p) => p.terminating).length;
    const stale = pods.filter((p) => !p.terminating && p.revision !== region.revision).length;
    const current = pods.filter((p) => !p.terminating && p.revision === region.revision);
    const notReady = current.filter((p) => !p.ready).length;
    if (current.length + stale !== region.replicas || stale > region.partition || terminating > 0 || notReady > 0) {
      const kept = region.partition > 0 ? ` (its partition keeps up to ${region.partition} at the previous one)` : '';
      out.push(
        `${region.name}: ${current.length} pods at ${region.revision} (${notReady} not Ready), ${stale} at other revisions, ${terminating} terminating; Git wants ${region.replicas} Ready at ${region.revision}${kept}`,
      );
    }
  }
  const known = new Set(target.regions.map((r) => r.name));
  const strays = sample.pods.filter((p) => !known.has(p.region));
  if (strays.length > 0) out.push(`${strays.length} pods of regions Git does not render (${[...new Set(strays.map((p) => p.region))].join(', ')})`);
  return out;
}

/**
 * Waits until the watcher's picture matches Git; returns the differences left when `timeoutMs` ran out (empty when it
 * matched), for the test to assert on and print.
 */
export async function waitMatchesGit(watch: InvariantWatch, rendered: RenderedExtendedDeployment, timeoutMs = 60_000): Promise<string[]> {
  const target = gitTarget(rendered);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const differences = gitDifferences(watch.latest(), target);
    if (differences.length === 0 || Date.now() > deadline) return differences;
    await new Promise((r) => setTimeout(r, 250));
  }
}
