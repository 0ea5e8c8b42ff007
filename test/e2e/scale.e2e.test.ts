// `kubectl scale` on an ExtendedDeployment (#19): the scale subresource sets spec.replicas, which Git leaves unset here
// (the total is the regions' sum). Below the regions' fixed counts they shrink in proportion (core/distribution.ts,
// scaleDown), at rest and in the middle of a rollout held at a gate; scaled back, each region has its count again. The
// scale subresource reports the replicas and the pods' selector (what a HorizontalPodAutoscaler reads). The lab's own
// kubectl, the agent as the rendered install's ServiceAccount, the invariant watcher running.
import { expect } from 'vitest';
import { kubectl } from '../cluster/gitops.js';
import { test, waitFor } from './helpers.js';
import { apply, ED_NAME, edctl, fill, podCounts, readStatus, withRolloutEnv, type RolloutEnv } from './rollout-kit.js';
import type { RenderedExtendedDeployment } from '../../core/render.js';

/** Waits until `rendered` is Healthy with these pods per region, all at its revision, approving every gate on the way. */
async function settled(env: RolloutEnv, rendered: RenderedExtendedDeployment, counts: readonly number[], what: string): Promise<void> {
  const want = rendered.regions.map((r, i) => ({ name: r.name, updated: counts[i], old: 0 }));
  await waitFor(
    what,
    async () => {
      const status = await readStatus(env.ns);
      if (status.revision === rendered.rolloutRevision && status.phase === 'WaitingForConfirmation') await edctl(env.ns, 'approve');
      const pods = await podCounts(env.ns, rendered);
      return status.revision === rendered.rolloutRevision && status.phase === 'Healthy' && JSON.stringify(pods) === JSON.stringify(want);
    },
    { timeoutMs: 180_000, describe: async () => ({ status: await readStatus(env.ns), pods: await podCounts(env.ns, rendered) }) },
  );
}

const scale = (ns: string, replicas: number) => kubectl(['scale', `extendeddeployments.extendeddeployment.io/${ED_NAME}`, '-n', ns, `--replicas=${replicas}`]);

test('kubectl scale below the regions counts shrinks them in proportion, at rest and mid-rollout; scaled back, they have their counts again', async ({
  ns,
}) => {
  await withRolloutEnv(ns, 'scale', async (env) => {
    const options = { replicas: [4, 2, 2], strategy: { needWaitingForConfirm: true } };
    const v1 = await fill(env, { image: 'registry.example/web:1', ...options });

    // At rest: 8 → 4 is 2 + 1 + 1.
    scale(ns, 4);
    await settled(env, v1, [2, 1, 1], 'scaled to 4 at rest');
    // The status counts pods (paced writes: it follows within seconds).
    const readScale = () =>
      JSON.parse(kubectl(['get', '--raw', `/apis/extendeddeployment.io/v1beta1/namespaces/${ns}/extendeddeployments/${ED_NAME}/scale`])) as {
        spec?: { replicas?: number };
        status?: { replicas?: number; selector?: string };
      };
    const subresource = await waitFor('the scale subresource reports 4 replicas', async () => readScale().status?.replicas === 4 && readScale(), {
      describe: async () => readScale(),
    });
    expect(subresource.spec?.replicas).toBe(4);
    expect(subresource.status?.selector).toContain('app=web');
    expect((await readStatus(ns)).conditions?.find((c) => c.type === 'Valid')?.status).not.toBe('False');

    // Back to 8: every region has its count.
    scale(ns, 8);
    await settled(env, v1, [4, 2, 2], 'scaled back to 8');

    // Mid-rollout, held at the first gate: 8 → 5 is 3 + 1 + 1 (the rest to the largest fraction, 2.5 of 4), and the
    // rollout completes at those counts.
    const v2 = env.render({ image: 'registry.example/web:2', ...options });
    await apply(v2);
    await waitFor('v2 at its first gate', async () => {
      const status = await readStatus(ns);
      return status.revision === v2.rolloutRevision && status.phase === 'WaitingForConfirmation';
    });
    scale(ns, 5);
    await settled(env, v2, [3, 1, 1], 'v2 Healthy at 5');
    scale(ns, 8);
    await settled(env, v2, [4, 2, 2], 'v2 scaled back to 8');
    console.log('[scale] 8 → 4 at rest: 2+1+1; back to 8: 4+2+2; 8 → 5 at a gate of v2: 3+1+1 once Healthy; back: 4+2+2');
  });
});
