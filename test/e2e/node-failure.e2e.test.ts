// lab:fail-nodes / lab:heal-nodes: a node whose simulated kubelet stops heartbeating is marked NotReady and tainted
// by the real node-lifecycle controller; healing brings it and its pods back.
import type { V1Node } from '@kubernetes/client-node';
import { afterAll, describe, expect } from 'vitest';
import { failNodes, healNodes } from '../cluster/lab.js';
import { clients, condition, nodeReady, podReady, readPod, sleep, test, testPod, waitFor } from './helpers.js';

const NODE = 'arm64-c-2';
const UNREACHABLE = 'node.kubernetes.io/unreachable';
const quiet = () => {};

async function readNode(name: string): Promise<V1Node> {
  return clients().core.readNode({ name });
}

describe('node failure and recovery', () => {
  afterAll(async () => {
    await healNodes(`kubernetes.io/hostname=${NODE}`, quiet);
  });

  test('fail-nodes: Ready=Unknown, unreachable taint, Lease stops; pods NotReady. heal-nodes: all back', async ({ ns }) => {
    const { core, coord } = clients();
    await core.createNamespacedPod({ namespace: ns, body: testPod('victim', { nodeSelector: { 'kubernetes.io/hostname': NODE } }) });
    await waitFor('victim Running and Ready', async () => podReady(await readPod(ns, 'victim')));

    const t0 = Date.now();
    const failed = await failNodes(`kubernetes.io/hostname=${NODE}`, quiet);
    expect(failed).toEqual([NODE]);

    const down = await waitFor(
      `${NODE} Ready=Unknown with the ${UNREACHABLE} taint`,
      async () => {
        const n = await readNode(NODE);
        return nodeReady(n) === 'Unknown' && (n.spec?.taints ?? []).some((t) => t.key === UNREACHABLE) ? n : undefined;
      },
      { timeoutMs: 120_000, describe: () => readNode(NODE).then((n) => ({ taints: n.spec?.taints, conditions: n.status?.conditions })) },
    );
    console.log(`figure: ${NODE} Ready=Unknown + ${UNREACHABLE} taint ${((Date.now() - t0) / 1000).toFixed(1)} s after lab:fail-nodes`);
    expect(condition(down as never, 'Ready')?.reason).toBe('NodeStatusUnknown');

    // the simulated kubelet is dead: its Lease is no longer renewed
    const lease1 = await coord.readNamespacedLease({ name: NODE, namespace: 'kube-node-lease' });
    await sleep(4000);
    const lease2 = await coord.readNamespacedLease({ name: NODE, namespace: 'kube-node-lease' });
    expect(String(lease2.spec?.renewTime)).toBe(String(lease1.spec?.renewTime));

    // the node controller marks the node's pods not Ready
    await waitFor('victim Ready=False', async () => !podReady(await readPod(ns, 'victim')), { timeoutMs: 60_000 });

    // other nodes are unaffected
    expect(nodeReady(await readNode('arm64-c-1'))).toBe('True');

    const t1 = Date.now();
    expect(await healNodes(`kubernetes.io/hostname=${NODE}`, quiet)).toEqual([NODE]);
    await waitFor(
      `${NODE} Ready=True without the ${UNREACHABLE} taint`,
      async () => {
        const n = await readNode(NODE);
        return nodeReady(n) === 'True' && !(n.spec?.taints ?? []).some((t) => t.key === UNREACHABLE);
      },
      { timeoutMs: 120_000, describe: () => readNode(NODE).then((n) => ({ taints: n.spec?.taints, conditions: n.status?.conditions })) },
    );
    console.log(`figure: ${NODE} Ready again ${((Date.now() - t1) / 1000).toFixed(1)} s after lab:heal-nodes`);
    // the pod was not evicted yet (default unreachable toleration is 300 s) and becomes Ready again
    await waitFor('victim Ready again', async () => podReady(await readPod(ns, 'victim')), { timeoutMs: 60_000 });
  });
});
