// Regions defined by node-selector expressions (#19): region a is the general pool of zones a and b (`zone In`), region
// b the general pool of every other zone (`zone NotIn`), so `edctl`'s render-time check proves them disjoint. On the
// lab, the agent rolls an image change over both; the invariant watcher's placement rule checks every pod against its
// region's labels and expressions, and each DeployRegion's status counts exactly the lab's nodes the expressions select.
import type { KubernetesObject, V1Node } from '@kubernetes/client-node';
import { expect } from 'vitest';
import { nodeInRegion, type RegionSelector } from '../../core/region-selector.js';
import { clients, test, waitFor } from './helpers.js';
import { apply, fill, podCounts, readStatus, withRolloutEnv } from './rollout-kit.js';

const ZONE = 'topology.kubernetes.io/zone';
const general = { 'extendeddeployment.io/pool': 'general' };
const selectors: Record<string, RegionSelector> = {
  a: { matchLabels: general, matchExpressions: [{ key: ZONE, operator: 'In', values: ['zone-a', 'zone-b'] }] },
  b: { matchLabels: general, matchExpressions: [{ key: ZONE, operator: 'NotIn', values: ['zone-a', 'zone-b'] }] },
};

const regions = (suffix: string): KubernetesObject[] =>
  Object.entries(selectors).map(([letter, spec]) => ({
    apiVersion: 'extendeddeployment.io/v1beta1',
    kind: 'DeployRegion',
    metadata: { name: `${letter}-${suffix}` },
    spec,
  }));

test('regions by node-selector expressions: pods stay on their nodes through a rollout, and each region counts its own nodes', async ({ ns }) => {
  await withRolloutEnv(
    ns,
    'region expressions',
    async (env) => {
      const replicas = [4, 2];
      await fill(env, { image: 'registry.example/web:1', replicas });
      const v2 = env.render({ image: 'registry.example/web:2', replicas });
      await apply(v2);
      await waitFor(
        'v2 Healthy',
        async () => {
          const status = await readStatus(ns);
          return status.revision === v2.rolloutRevision && status.phase === 'Healthy';
        },
        { timeoutMs: 180_000, describe: () => readStatus(ns) },
      );
      expect(await podCounts(ns, v2)).toEqual(v2.regions.map((r, i) => ({ name: r.name, updated: replicas[i], old: 0 })));

      // Each region's status counts the nodes its expressions select, and no node is in both.
      const nodes: V1Node[] = (await clients().core.listNode()).items;
      const counts: Record<string, number> = {};
      for (const [letter, selector] of Object.entries(selectors)) {
        const name = `${letter}-${env.suffix}`;
        const expected = nodes.filter((n) => nodeInRegion(n.metadata?.labels ?? {}, selector)).length;
        expect(expected, `lab nodes in region ${letter}`).toBeGreaterThan(0);
        const status = await waitFor(`DeployRegion ${name} counts its nodes`, async () => {
          const region = await clients().objects.read<KubernetesObject & { status?: { nodes?: number; conditions?: { type: string; status: string }[] } }>({
            apiVersion: 'extendeddeployment.io/v1beta1',
            kind: 'DeployRegion',
            metadata: { name },
          });
          return region.status?.nodes === expected && region.status;
        });
        expect(status.conditions?.filter((c) => c.status === 'True' && /overlap/i.test(c.type)) ?? []).toEqual([]);
        counts[letter] = expected;
      }
      console.log(`[region-expressions] zones a+b: ${counts['a']} nodes, every other zone: ${counts['b']} nodes; v2 Healthy, every pod on its region's nodes`);
    },
    { regions },
  );
});
