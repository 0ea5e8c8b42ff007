// What the pod cache keeps of a pod (slimPod): everything the agent reads of it, so that it plans the same.
import type { V1Pod } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { IN_PLACE_READINESS_GATE, NAME_LABEL, POD_DELETION_COST_ANNOTATION, REGION_LABEL, REVISION_LABEL } from '../core/labels.js';
import { initTrouble, podState } from '../core/observe/observe.js';
import { slimPod } from './informers.js';
import { retainedBytes } from '../core/heap-test-support.js';

/** A pod as the API server sends it: defaults, volumes, tolerations, IPs, statuses, managedFields. */
function fullPod(o: { gated?: boolean; init?: 'running' | 'waiting' } = {}): V1Pod {
  const container = (name: string, image: string) => ({
    name,
    image,
    imagePullPolicy: 'IfNotPresent',
    resources: { requests: { cpu: '100m', memory: '64Mi' } },
    env: [{ name: 'MODE', value: 'prod' }],
    ports: [{ containerPort: 8080, protocol: 'TCP' }],
    terminationMessagePath: '/dev/termination-log',
    terminationMessagePolicy: 'File',
    volumeMounts: [{ name: 'kube-api-access-x', mountPath: '/var/run/secrets/kubernetes.io/serviceaccount', readOnly: true }],
  });
  const running = { running: { startedAt: new Date('2026-01-01T10:00:00Z') } };
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: 'web-amd-x1',
      namespace: 'shop',
      uid: 'u1',
      resourceVersion: '42',
      creationTimestamp: new Date('2026-01-01T09:59:00Z'),
      labels: { app: 'web', [NAME_LABEL]: 'web', [REGION_LABEL]: 'amd', [REVISION_LABEL]: 'r1' },
      annotations: { [POD_DELETION_COST_ANNOTATION]: '-100' },
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-amd', uid: 'rs', controller: true }],
      managedFields: [{ manager: 'kube-controller-manager', operation: 'Update', fieldsV1: { 'f:metadata': {} } }],
    },
    spec: {
      containers: [container('app', 'web:2'), container('sidecar', 'proxy:1')],
      ...(o.init && { initContainers: [container('migrate', 'web-migrate:2')] }),
      nodeName: 'node-1',
      readinessGates: o.gated ? [{ conditionType: IN_PLACE_READINESS_GATE }] : [{ conditionType: 'example.com/other' }],
      volumes: [{ name: 'kube-api-access-x', projected: { sources: [{ serviceAccountToken: { path: 'token', expirationSeconds: 3607 } }] } }],
      tolerations: [{ key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 }],
      dnsPolicy: 'ClusterFirst',
      restartPolicy: 'Always',
      schedulerName: 'default-scheduler',
      securityContext: {},
      serviceAccountName: 'default',
      terminationGracePeriodSeconds: 30,
    },
    status: {
      phase: 'Running',
      hostIP: '10.0.0.1',
      podIP: '10.244.0.7',
      podIPs: [{ ip: '10.244.0.7' }],
      qosClass: 'Burstable',
      startTime: new Date('2026-01-01T09:59:01Z'),
      conditions: [
        { type: 'PodReadyToStartContainers', status: 'True', lastTransitionTime: new Date('2026-01-01T09:59:01Z') },
        { type: 'Initialized', status: 'True', lastTransitionTime: new Date('2026-01-01T09:59:00Z') },
        { type: 'PodScheduled', status: 'True', lastTransitionTime: new Date('2026-01-01T09:59:00Z') },
        { type: 'ContainersReady', status: 'True', lastTransitionTime: new Date('2026-01-01T10:00:01Z') },
        { type: 'Ready', status: 'True', lastTransitionTime: new Date('2026-01-01T10:00:01Z') },
        { type: IN_PLACE_READINESS_GATE, status: 'True', lastTransitionTime: new Date('2026-01-01T10:00:00Z') },
      ],
      containerStatuses: [
        { name: 'app', image: 'web:2', imageID: 'sha256:a', containerID: 'containerd://a', restartCount: 1, ready: true, started: true, state: running },
        {
          name: 'sidecar',
          image: 'proxy:1',
          imageID: 'sha256:b',
          containerID: 'containerd://b',
          restartCount: 0,
          ready: false,
          state: { waiting: { reason: 'CrashLoopBackOff', message: 'back-off 10s' } },
          lastState: { terminated: { exitCode: 1, reason: 'Error' } },
        },
      ],
      ...(o.init && {
        initContainerStatuses: [
          {
            name: 'migrate',
            image: 'web-migrate:2',
            imageID: 'sha256:c',
            restartCount: 0,
            ready: false,
            state: o.init === 'running' ? running : { waiting: { reason: 'ImagePullBackOff', message: 'no such image' } },
          },
        ],
      }),
    },
  };
}

describe('slimPod', () => {
  it('keeps everything the agent reads of a pod: it is seen the same, init containers too', () => {
    for (const init of [undefined, 'running', 'waiting'] as const) {
      const full = fullPod(init ? { init } : {});
      const slim = slimPod(structuredClone(full));
      expect({ ...podState(slim), resourceVersion: 'same' }).toEqual({ ...podState(full), resourceVersion: 'same' });
      expect(initTrouble(slim)).toBe(initTrouble(full));
    }
    expect(initTrouble(slimPod(fullPod({ init: 'waiting' })))).toBe('Init:ImagePullBackOff (no such image)');
  });

  it('drops what the agent never reads: volumes, tolerations, container details, IPs, other conditions, managedFields', () => {
    const slim = slimPod(fullPod());
    expect(slim.metadata?.managedFields).toBeUndefined();
    expect(slim.metadata?.annotations).toEqual({ [POD_DELETION_COST_ANNOTATION]: '-100' });
    expect(Object.keys(slim.spec ?? {}).sort()).toEqual(['containers', 'nodeName', 'readinessGates']);
    expect(slim.spec?.containers).toEqual([
      { name: 'app', image: 'web:2' },
      { name: 'sidecar', image: 'proxy:1' },
    ]);
    expect(Object.keys(slim.status ?? {}).sort()).toEqual(['conditions', 'containerStatuses', 'phase']);
    expect(slim.status?.containerStatuses?.[1]).not.toHaveProperty('lastState');
    expect(slim.status?.containerStatuses?.map((s) => Object.keys(s).sort())).toEqual([
      ['containerID', 'name', 'ready', 'restartCount', 'state'],
      ['containerID', 'name', 'ready', 'restartCount', 'state'],
    ]);
    expect(slim.status?.conditions?.map((c) => c.type)).toEqual(['PodScheduled', 'Ready', IN_PLACE_READINESS_GATE]);
    expect(JSON.stringify(slim).length).toBeLessThan(JSON.stringify(fullPod()).length / 2);
  });

  it('keeps one copy of what sibling pods repeat: namespace, labels, owner, image, node, condition words', () => {
    const long = (what: string) => `${what}-${'x'.repeat(4000)}`;
    const sibling = fullPod();
    sibling.metadata = {
      ...sibling.metadata,
      namespace: long('ns'),
      generateName: long('web-amd-'),
      labels: { ...sibling.metadata?.labels, app: long('app') },
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: long('web-amd'), uid: long('uid'), controller: true }],
    };
    sibling.spec = { ...sibling.spec!, nodeName: long('node'), containers: [{ name: long('app'), image: long('registry.example/web') }] };
    sibling.status = {
      ...sibling.status,
      phase: long('Running'),
      conditions: [{ type: 'PodScheduled', status: long('False'), reason: long('Unschedulable'), lastTransitionTime: new Date() }],
      containerStatuses: [{ name: long('app'), image: '', imageID: '', restartCount: 0, ready: true }],
    };
    const text = JSON.stringify(sibling);
    // As a watch delivers them: each parsed from its own text, so each has copies of its own of every string.
    const pods = (n: number) => Array.from({ length: n }, (_, i) => JSON.parse(text.replace('"web-amd-x1"', `"web-amd-${i}"`)) as V1Pod);
    const whole = retainedBytes(() => pods(500));
    const slim = retainedBytes(() => pods(500).map(slimPod));
    // 12 long strings of 4 KB per pod: 24 MB over 500 pods, whole; under 2 MB, so every one of them is shared.
    expect(whole).toBeGreaterThan(20_000_000);
    expect(slim).toBeLessThan(2_000_000);
  });

  it("reads a pod without the fields its type requires (a bookmark's: containers null) without failing", () => {
    const bookmark = { kind: 'Pod', apiVersion: 'v1', metadata: { resourceVersion: '9' }, spec: { containers: null }, status: {} } as unknown as V1Pod;
    expect(slimPod(bookmark)).toEqual({ kind: 'Pod', apiVersion: 'v1', metadata: { resourceVersion: '9' }, spec: { containers: [] }, status: {} });
  });

  it('keeps a pod with the in-place readiness gate whole but for managedFields: a swap compares its whole spec', () => {
    const full = fullPod({ gated: true });
    const slim = slimPod(structuredClone(full));
    const { managedFields: _managed, ...metadata } = full.metadata!;
    expect(slim).toEqual({ ...full, metadata });
  });
});
