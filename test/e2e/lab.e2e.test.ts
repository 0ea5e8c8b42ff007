// The lab itself: topology, scheduling, kwok's simulated kubelet (start, readiness gates, in-place image restarts).
import type { V1Pod } from '@kubernetes/client-node';
import { describe, expect } from 'vitest';
import { topologyNodes } from '../cluster/lab.js';
import { clients, condition, nodeReady, patchPod, patchPodStatus, podReady, readPod, test, testPod, waitFor } from './helpers.js';

const GPU_TOLERATION = { key: 'nvidia.com/gpu', operator: 'Equal', value: 'present', effect: 'NoSchedule' };

async function createPod(ns: string, pod: V1Pod): Promise<V1Pod> {
  return clients().core.createNamespacedPod({ namespace: ns, body: pod });
}

async function waitRunningReady(ns: string, name: string): Promise<V1Pod> {
  return waitFor(
    `pod ${ns}/${name} Running and Ready`,
    async () => {
      const p = await readPod(ns, name);
      return p.status?.phase === 'Running' && podReady(p) ? p : undefined;
    },
    { describe: () => readPod(ns, name).then((p) => p.status) },
  );
}

describe('lab topology', () => {
  test('every node of topology.yaml is registered, Ready, with its labels, taints and allocatable', async () => {
    const { core } = clients();
    const expected = topologyNodes();
    const nodes = (await core.listNode()).items;
    for (const want of expected) {
      const got = nodes.find((n) => n.metadata?.name === want.metadata.name);
      expect(got, want.metadata.name).toBeDefined();
      expect(nodeReady(got!)).toBe('True');
      for (const [k, v] of Object.entries(want.metadata.labels)) {
        expect(got!.metadata?.labels?.[k], `${want.metadata.name} label ${k}`).toBe(v);
      }
      for (const [k, v] of Object.entries(want.status.allocatable)) {
        expect(got!.status?.allocatable?.[k], `${want.metadata.name} allocatable ${k}`).toBe(v);
      }
      expect(got!.spec?.taints ?? []).toEqual(expect.arrayContaining(want.spec.taints));
    }
    const archs = new Set(nodes.map((n) => n.metadata?.labels?.['kubernetes.io/arch']));
    expect(archs).toEqual(new Set(['amd64', 'arm64']));
    expect(nodes.some((n) => n.metadata?.labels?.['extendeddeployment.io/pool'] === 'gpu')).toBe(true);
  });
});

describe('scheduling on kwok nodes', () => {
  test('a pod becomes Running and Ready on a matching node, with IPs and container IDs', async ({ ns }) => {
    await createPod(ns, testPod('arm', { nodeSelector: { 'kubernetes.io/arch': 'arm64' } }));
    const pod = await waitRunningReady(ns, 'arm');
    expect(pod.spec?.nodeName).toMatch(/^arm64-c-/);
    expect(pod.status?.hostIP).toBeTruthy();
    expect(pod.status?.podIP).toBeTruthy();
    const cs = pod.status?.containerStatuses?.[0];
    expect(cs?.ready).toBe(true);
    expect(cs?.restartCount).toBe(0);
    expect(cs?.containerID).toMatch(/^containerd:\/\/[0-9a-f]{64}$/);
    expect(cs?.imageID).toMatch(/@sha256:[0-9a-f]{64}$/);
    expect(condition(pod as never, 'ContainersReady')?.status).toBe('True');
    expect(condition(pod as never, 'PodScheduled')?.status).toBe('True');
  });

  test('only pods tolerating the GPU taint land on GPU nodes; GPU requests fit only there', async ({ ns }) => {
    const { apps, core } = clients();
    // Eight amd64 pods without the toleration: none may land on the tainted (amd64) GPU nodes.
    await apps.createNamespacedReplicaSet({
      namespace: ns,
      body: {
        metadata: { name: 'plain' },
        spec: {
          replicas: 8,
          selector: { matchLabels: { app: 'plain' } },
          template: {
            metadata: { labels: { app: 'plain' } },
            spec: { ...testPod('x').spec!, nodeSelector: { 'kubernetes.io/arch': 'amd64' } },
          },
        },
      },
    });
    await createPod(
      ns,
      testPod('trainer', {
        tolerations: [GPU_TOLERATION],
        containers: [{ name: 'app', image: 'registry.example/train:1', resources: { limits: { 'nvidia.com/gpu': '1' } } }],
      }),
    );
    const plain = await waitFor('8 plain pods Running and Ready', async () => {
      const pods = (await core.listNamespacedPod({ namespace: ns, labelSelector: 'app=plain' })).items;
      return pods.length === 8 && pods.every((p) => p.status?.phase === 'Running' && podReady(p)) ? pods : undefined;
    });
    // Several pools have untainted amd64 nodes; any of them will do, none of the tainted ones may be used.
    const untaintedAmd64 = topologyNodes()
      .filter((n) => n.metadata.labels['kubernetes.io/arch'] === 'amd64' && n.spec.taints.length === 0)
      .map((n) => n.metadata.name);
    for (const p of plain) expect(untaintedAmd64).toContain(p.spec?.nodeName);
    const trainer = await waitRunningReady(ns, 'trainer');
    expect(trainer.spec?.nodeName).toMatch(/^gpu-/);

    // A GPU request without the toleration cannot be placed anywhere.
    await createPod(
      ns,
      testPod('no-toleration', {
        containers: [{ name: 'app', image: 'registry.example/train:1', resources: { limits: { 'nvidia.com/gpu': '1' } } }],
      }),
    );
    const stuck = await waitFor('PodScheduled=False/Unschedulable', async () => {
      const p = await readPod(ns, 'no-toleration');
      const c = condition(p, 'PodScheduled');
      return c?.status === 'False' && c.reason === 'Unschedulable' ? p : undefined;
    });
    expect(stuck.spec?.nodeName).toBeFalsy();
  });

  test('a capacity shortage leaves pods Pending with PodScheduled=False, reason Unschedulable', async ({ ns }) => {
    // Each arm64 node has 4 cpu: three 3-cpu pods cannot all fit on the two arm64 nodes.
    for (const i of [1, 2, 3]) {
      await createPod(
        ns,
        testPod(`big-${i}`, {
          nodeSelector: { 'kubernetes.io/arch': 'arm64' },
          containers: [{ name: 'app', image: 'registry.example/app:1', resources: { requests: { cpu: '3' } } }],
        }),
      );
    }
    const { core } = clients();
    const pods = await waitFor('two pods Running and one Unschedulable', async () => {
      const list = (await core.listNamespacedPod({ namespace: ns })).items;
      const running = list.filter((p) => p.status?.phase === 'Running' && podReady(p));
      const unschedulable = list.filter((p) => {
        const c = condition(p, 'PodScheduled');
        return c?.status === 'False' && c.reason === 'Unschedulable';
      });
      return running.length === 2 && unschedulable.length === 1 ? { running, unschedulable } : undefined;
    });
    expect(new Set(pods.running.map((p) => p.spec?.nodeName)).size).toBe(2);
    const msg = condition(pods.unschedulable[0] as never, 'PodScheduled') as { message?: string } | undefined;
    expect(msg?.message).toMatch(/Insufficient cpu/);
  });
});

describe('kwok kubelet simulation', () => {
  test('Ready follows readiness gates: False until every gate condition is True, and back', async ({ ns }) => {
    await createPod(ns, testPod('gated', { readinessGates: [{ conditionType: 'example.com/gate-a' }, { conditionType: 'example.com/gate-b' }] }));
    const running = await waitFor('gated pod Running with ContainersReady', async () => {
      const p = await readPod(ns, 'gated');
      return p.status?.phase === 'Running' && condition(p, 'ContainersReady')?.status === 'True' ? p : undefined;
    });
    expect(condition(running as never, 'Ready')?.status).toBe('False');
    // kwok must never write the gate conditions itself
    expect(condition(running as never, 'example.com/gate-a')).toBeUndefined();

    const now = new Date().toISOString();
    await patchPodStatus(ns, 'gated', { status: { conditions: [{ type: 'example.com/gate-a', status: 'True', lastTransitionTime: now }] } });
    // one gate is not enough; give kwok time to (wrongly) flip Ready, then check it did not
    await new Promise((r) => setTimeout(r, 3000));
    expect(condition((await readPod(ns, 'gated')) as never, 'Ready')?.status).toBe('False');

    await patchPodStatus(ns, 'gated', { status: { conditions: [{ type: 'example.com/gate-b', status: 'True', lastTransitionTime: now }] } });
    await waitFor('Ready=True once both gates are True', async () => podReady(await readPod(ns, 'gated')));

    await patchPodStatus(ns, 'gated', { status: { conditions: [{ type: 'example.com/gate-a', status: 'False', lastTransitionTime: now }] } });
    await waitFor('Ready=False after a gate turns False', async () => !podReady(await readPod(ns, 'gated')));
  });

  test('changing a running container image restarts that container in place', async ({ ns }) => {
    await createPod(
      ns,
      testPod('swap', {
        containers: [
          { name: 'app', image: 'registry.example/app:1' },
          { name: 'sidecar', image: 'registry.example/sidecar:1' },
        ],
      }),
    );
    const before = await waitRunningReady(ns, 'swap');
    const oldApp = before.status!.containerStatuses!.find((c) => c.name === 'app')!;
    const oldSidecar = before.status!.containerStatuses!.find((c) => c.name === 'sidecar')!;

    await patchPod(ns, 'swap', { spec: { containers: [{ name: 'app', image: 'registry.example/app:2' }] } });

    const after = await waitFor(
      'app container restarted with the new image and pod Ready again',
      async () => {
        const p = await readPod(ns, 'swap');
        const app = p.status?.containerStatuses?.find((c) => c.name === 'app');
        return app?.image === 'registry.example/app:2' && app.ready && podReady(p) ? p : undefined;
      },
      { describe: () => readPod(ns, 'swap').then((p) => p.status) },
    );

    const app = after.status!.containerStatuses!.find((c) => c.name === 'app')!;
    const sidecar = after.status!.containerStatuses!.find((c) => c.name === 'sidecar')!;
    expect(after.metadata?.uid).toBe(before.metadata?.uid); // same pod, not a replacement
    expect(after.spec?.nodeName).toBe(before.spec?.nodeName);
    expect(app.restartCount).toBe(oldApp.restartCount + 1);
    expect(app.containerID).toMatch(/^containerd:\/\//);
    expect(app.containerID).not.toBe(oldApp.containerID);
    expect(app.imageID).not.toBe(oldApp.imageID);
    expect(app.lastState?.terminated?.containerID).toBe(oldApp.containerID);
    // the other container is untouched
    expect(sidecar.restartCount).toBe(oldSidecar.restartCount);
    expect(sidecar.containerID).toBe(oldSidecar.containerID);
    expect(sidecar.imageID).toBe(oldSidecar.imageID);

    // and a second swap counts again
    await patchPod(ns, 'swap', { spec: { containers: [{ name: 'app', image: 'registry.example/app:3' }] } });
    const again = await waitFor('second restart', async () => {
      const p = await readPod(ns, 'swap');
      const c = p.status?.containerStatuses?.find((x) => x.name === 'app');
      return c?.image === 'registry.example/app:3' && podReady(p) ? c : undefined;
    });
    expect(again.restartCount).toBe(oldApp.restartCount + 2);
  });

  test('an image swap on a gated pod keeps Ready False until the gate is True', async ({ ns }) => {
    await createPod(ns, testPod('gated-swap', { readinessGates: [{ conditionType: 'InPlaceUpdateReady' }] }));
    await waitFor('ContainersReady', async () => condition((await readPod(ns, 'gated-swap')) as never, 'ContainersReady')?.status === 'True');
    const now = new Date().toISOString();
    await patchPodStatus(ns, 'gated-swap', { status: { conditions: [{ type: 'InPlaceUpdateReady', status: 'True', lastTransitionTime: now }] } });
    const before = await waitRunningReady(ns, 'gated-swap');
    // what an in-place swap does: gate False, then image
    await patchPodStatus(ns, 'gated-swap', { status: { conditions: [{ type: 'InPlaceUpdateReady', status: 'False', lastTransitionTime: now }] } });
    await patchPod(ns, 'gated-swap', { spec: { containers: [{ name: 'app', image: 'registry.example/app:2' }] } });
    const restarted = await waitFor('container restarted and ready, pod not Ready (gate False)', async () => {
      const p = await readPod(ns, 'gated-swap');
      const c = p.status?.containerStatuses?.[0];
      return c?.image === 'registry.example/app:2' && c.ready && condition(p, 'ContainersReady')?.status === 'True' ? p : undefined;
    });
    expect(podReady(restarted)).toBe(false);
    expect(restarted.status?.containerStatuses?.[0]?.restartCount).toBe((before.status?.containerStatuses?.[0]?.restartCount ?? 0) + 1);
    await patchPodStatus(ns, 'gated-swap', {
      status: { conditions: [{ type: 'InPlaceUpdateReady', status: 'True', lastTransitionTime: new Date().toISOString() }] },
    });
    await waitFor('Ready after the gate is True again', async () => podReady(await readPod(ns, 'gated-swap')));
  });

  test('an image marked ":broken" never runs: a swap to it crash-loops (never ready), a swap away restarts it ready', async ({ ns }) => {
    await createPod(
      ns,
      testPod('crash', {
        containers: [
          { name: 'app', image: 'registry.example/app:1' },
          { name: 'sidecar', image: 'registry.example/sidecar:1' },
        ],
      }),
    );
    const before = await waitRunningReady(ns, 'crash');
    const oldApp = before.status!.containerStatuses!.find((c) => c.name === 'app')!;
    const stale =
      "the lab's kwok runs without the lab-container-crash stage: restart the lab (npm run lab:down && npm run lab:up) to load test/cluster/kwok.yaml";

    await patchPod(ns, 'crash', { spec: { containers: [{ name: 'app', image: 'registry.example/app:broken-2' }] } });
    const crashed = await waitFor(
      `app container in CrashLoopBackOff (${stale})`,
      async () => {
        const p = await readPod(ns, 'crash');
        const app = p.status?.containerStatuses?.find((c) => c.name === 'app');
        if (app?.image === 'registry.example/app:broken-2' && app.ready) throw new Error(stale);
        return app?.image === 'registry.example/app:broken-2' && app.state?.waiting?.reason === 'CrashLoopBackOff' ? p : undefined;
      },
      { timeoutMs: 20_000, describe: () => readPod(ns, 'crash').then((p) => p.status) },
    );
    const app = crashed.status!.containerStatuses!.find((c) => c.name === 'app')!;
    expect(crashed.metadata?.uid).toBe(before.metadata?.uid);
    expect(app.restartCount).toBe(oldApp.restartCount + 1);
    expect(app.containerID).not.toBe(oldApp.containerID);
    expect([app.ready, app.started, app.state?.running]).toEqual([false, false, undefined]);
    expect(app.lastState?.terminated?.exitCode).toBe(1);
    expect(crashed.status?.containerStatuses?.find((c) => c.name === 'sidecar')?.containerID).toBe(
      before.status!.containerStatuses!.find((c) => c.name === 'sidecar')!.containerID,
    );
    // it stays that way: the ready stages never pick a crash-looping pod
    await new Promise((r) => setTimeout(r, 6000));
    const later = await readPod(ns, 'crash');
    expect(later.status?.containerStatuses?.find((c) => c.name === 'app')?.state?.waiting?.reason).toBe('CrashLoopBackOff');
    expect([condition(later as never, 'ContainersReady')?.status, podReady(later)]).toEqual(['False', false]);

    // a pod created with a broken image crash-loops from the start
    await createPod(ns, testPod('crash-new', { containers: [{ name: 'app', image: 'registry.example/app:broken-1' }] }));
    const fresh = await waitFor('new pod Running with its container in CrashLoopBackOff', async () => {
      const p = await readPod(ns, 'crash-new');
      return p.status?.phase === 'Running' && p.status.containerStatuses?.[0]?.state?.waiting?.reason === 'CrashLoopBackOff' ? p : undefined;
    });
    expect(podReady(fresh)).toBe(false);

    // swapping away from the broken image restarts the container normally
    await patchPod(ns, 'crash', { spec: { containers: [{ name: 'app', image: 'registry.example/app:3' }] } });
    const healed = await waitFor('app running the good image, pod Ready', async () => {
      const p = await readPod(ns, 'crash');
      const c = p.status?.containerStatuses?.find((x) => x.name === 'app');
      return c?.image === 'registry.example/app:3' && c.ready && c.state?.running && podReady(p) ? c : undefined;
    });
    expect(healed.restartCount).toBe(oldApp.restartCount + 2);
  });

  test('deleting a pod removes it (kwok acts as the kubelet confirming termination)', async ({ ns }) => {
    await createPod(ns, { ...testPod('gone'), spec: { ...testPod('gone').spec!, terminationGracePeriodSeconds: 30 } });
    await waitRunningReady(ns, 'gone');
    await clients().core.deleteNamespacedPod({ name: 'gone', namespace: ns });
    await waitFor('pod deleted', async () => {
      try {
        await readPod(ns, 'gone');
        return false;
      } catch (e) {
        return (e as { code?: number }).code === 404;
      }
    });
  });
});
